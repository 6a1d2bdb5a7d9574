"""Whether the model splits over the GPUs a launched vLLM is given, checked before it loads.

vLLM refuses, minutes into its start, a tensor parallel size that does not divide the model's
attention heads (or neither divides nor is a multiple of its KV heads), and more pipeline
stages than the model has layers. Where the model's architecture is known here, `bench run`
(and `bench plan matrix`, whose entries are `bench run`s) refuses them at once, naming the
option: the architecture comes from the model catalog (`--model-id`, or the catalog entry
whose Hugging Face repository `--model` names), else from the config.json vLLM would read (the
model's folder or the Hugging Face cache). A model known nowhere, or of an architecture the
calculators do not model, is left to vLLM.
"""

from __future__ import annotations

from infermeter.bench.errors import BenchConfigError
from infermeter.bench.plan.options import RunOptions
from infermeter.bench.result.deployment_plan import serving_options
from infermeter.bench.result.model_entry import catalog_entry_for, find_config, read_config
from infermeter.calculators.errors import CalculatorError
from infermeter.calculators.model_arch import ModelArch
from infermeter.calculators.vllm_settings import check_tensor_parallel


def parallel_sizes(options: RunOptions) -> tuple[int | None, int]:
    """The run's tensor parallel size (None: not given) and pipeline parallel size (1), as
    options or as `--vllm-arg --pipeline-parallel-size N`."""
    found = serving_options(options.vllm_args)
    pipeline = found.get("pipeline-parallel-size")
    given = int(pipeline) if isinstance(pipeline, str) and pipeline.isdigit() else None
    return options.tensor_parallel_size, options.pipeline_parallel_size or given or 1


def _known_arch(options: RunOptions) -> ModelArch | None:
    from infermeter.calculators.config_reader import parse_config
    from infermeter.registry.catalog import load_models

    models = load_models()
    config = None
    if options.model_id is not None and options.model_id in models:
        config = dict(models[options.model_id].config)
    elif options.model is not None:
        entry = catalog_entry_for(options.model, models)
        if entry is not None:
            config = dict(entry.config)
        else:
            path = find_config(options.model)
            if path is not None:
                try:
                    config = read_config(path)
                except BenchConfigError:
                    return None  # vLLM reports an unreadable config itself
    if config is None:
        return None
    try:
        return parse_config(config)
    except CalculatorError:
        return None


def check_parallel_fit(options: RunOptions) -> None:
    """BenchConfigError when the known model cannot split over the run's tensor × pipeline
    parallel GPUs (module docstring); nothing when the model is not known here."""
    tensor, pipeline = parallel_sizes(options)
    if (tensor or 1) == 1 and pipeline == 1:
        return
    arch = _known_arch(options)
    if arch is None:
        return
    model = options.model_id or options.model
    if tensor is not None:
        try:
            check_tensor_parallel(arch, tensor)
        except CalculatorError as error:
            detail = str(error).removeprefix("tensor_parallel_size: ")
            raise BenchConfigError(f"{detail} ({model})", "--tensor-parallel-size") from None
    if pipeline > arch.num_layers:
        raise BenchConfigError(
            f"{pipeline} stages for the {arch.num_layers} layers of {model}; every stage needs "
            "at least one layer",
            "--pipeline-parallel-size",
        )
