"""The deployment identity a run knows before it starts (`plan_deployment`): the GPU's and the
model's catalog ids, GPU count and parallel sizes, and the identity-relevant `vllm serve`
options (`serving_options`) of a launched vLLM's arguments or of an endpoint's
`--server-command`.
"""

from __future__ import annotations

import shlex
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import TypeVar, get_args

from infermeter.bench.errors import BenchConfigError
from infermeter.bench.launch.engines import ServerFacts
from infermeter.bench.launch.multinode import (
    NodeSplit,
    declared_split,
)
from infermeter.bench.launch.served import match_served_model, served_repository
from infermeter.bench.launch.server import ServerConfig
from infermeter.bench.result.deployment import Deployment
from infermeter.bench.result.model_entry import catalog_entry_for, proposed_id, repository_of
from infermeter.bench.session.config import Notify, SessionConfig
from infermeter.bench.telemetry.host import catalog_gpu_id
from infermeter.bench.telemetry.nvml import GpuInventory
from infermeter.calculators.kv_cache import KV_CACHE_DTYPES, KvCacheDtype
from infermeter.calculators.parallel import ParallelLayout
from infermeter.registry.builder import unchecked
from infermeter.registry.models import (
    EngineIdentity,
    GpuIdentity,
    ModelIdentity,
    ServingSettings,
)
from infermeter.registry.models.common import CPU_DEVICE_ID
from infermeter.registry.models.identity import Dtype
from infermeter.registry.secrets import redact

NumberT = TypeVar("NumberT", int, float)

_DTYPES = {name: name for name in get_args(Dtype)} | {"half": "float16", "float": "float32"}
"""vLLM's --dtype names of the registry's dtypes (its aliases too)."""
_KV_DTYPES = frozenset(get_args(KvCacheDtype))


_SHORT_OPTIONS = {
    "-tp": "tensor-parallel-size",
    "-pp": "pipeline-parallel-size",
    "-dp": "data-parallel-size",
}


# What `bench run` passes to a vLLM it launches by options of its own; in a --server-command
# they are read like the rest.
_LAUNCH_OPTIONS = frozenset(
    {"max-model-len", "gpu-memory-utilization", "max-num-seqs", "kv-cache-dtype", "quantization"}
)


def serving_options(
    arguments: Sequence[str], also: frozenset[str] = frozenset()
) -> dict[str, str | bool]:
    """The identity-relevant `vllm serve` options among extra arguments (`--name value`,
    `--name=value`, `--flag`, `--no-flag`, and vLLM's short `-tp`, `-pp`, `-dp`), and the
    valued options named in `also`."""
    tokens = [token for argument in arguments for token in shlex.split(argument)]
    found: dict[str, str | bool] = {}
    flags = {"enable-prefix-caching", "enable-chunked-prefill"}
    valued = {"pipeline-parallel-size", "max-num-batched-tokens", "dtype", "revision"}
    valued |= {"load-format"}
    valued |= {"tensor-parallel-size", "data-parallel-size"} | also
    for index, token in enumerate(tokens):
        short, has_value, value = token.partition("=")
        if short in _SHORT_OPTIONS:
            token = "--" + _SHORT_OPTIONS[short] + (f"={value}" if has_value else "")
        if not token.startswith("--"):
            continue
        name, has_value, value = token[2:].partition("=")
        if name in flags:
            found[name] = True
        elif name.startswith("no-") and name[3:] in flags:
            found[name[3:]] = False
        elif name in valued:
            if not has_value and index + 1 < len(tokens):
                value = tokens[index + 1]
            found[name] = value
    return found


# Options that are no property of the deployment (where it listens, how it is reached), or
# are stated by identity fields of their own: left out of `other_options`.
_NOT_OTHER = frozenset(
    {"host", "port", "api-key", "hf-token", "model", "served-model-name"}
    | {"distributed-executor-backend"}
    | {"enable-prefix-caching", "enable-chunked-prefill", "no-enable-prefix-caching"}
    | {"no-enable-chunked-prefill", "pipeline-parallel-size", "max-num-batched-tokens"}
    | {"dtype", "revision", "tensor-parallel-size", "data-parallel-size", "load-format"}
    | _LAUNCH_OPTIONS
)


def other_options(arguments: Sequence[str]) -> str | None:
    """Every `vllm serve` option among `arguments` that no identity field states, shell-joined
    in the order given (`-O0 --block-size 32`), so two runs that differ in any option differ in
    their identity; None when there is none. Words before the first option (`vllm serve
    MODEL`) are skipped; a word after an option is its value."""
    tokens = [token for argument in arguments for token in shlex.split(argument)]
    kept: list[str] = []
    skipping = False
    for token in tokens:
        if not token.startswith("-"):
            if not skipping and kept:
                kept.append(token)
            continue
        name = _SHORT_OPTIONS.get(token.partition("=")[0], token.lstrip("-").partition("=")[0])
        skipping = name in _NOT_OTHER
        if not skipping:
            kept.append(token)
    return redact(shlex.join(kept)) if kept else None  # no secret of an option we do not know


def launched_gpu_count(server: ServerConfig) -> int:
    """GPUs a launched vLLM uses: tensor × pipeline × data parallel sizes."""
    options = serving_options(server.extra_args)
    tensor = server.tensor_parallel_size or _int_option(options, "tensor-parallel-size") or 1
    pipeline = server.pipeline_parallel_size or _int_option(options, "pipeline-parallel-size") or 1
    data = _int_option(options, "data-parallel-size") or 1
    return ParallelLayout(tensor, pipeline, data).gpus


def _number_option(
    options: dict[str, str | bool],
    name: str,
    source: str,
    kind: Callable[[str], NumberT],
    expected: str,
) -> NumberT | None:
    """The `--name` of vLLM's serving options read as `kind`; None when not given as a value."""
    value = options.get(name)
    if not isinstance(value, str):
        return None
    try:
        return kind(value)
    except ValueError:
        raise BenchConfigError(f"--{name} {value!r} is not {expected}", source) from None


def _int_option(
    options: dict[str, str | bool], name: str, source: str = "--vllm-arg"
) -> int | None:
    return _number_option(options, name, source, int, "a whole number")


def _float_option(options: dict[str, str | bool], name: str, source: str) -> float | None:
    return _number_option(options, name, source, float, "a number")


def _resolve_gpu(config: SessionConfig, inventory: GpuInventory | None, notify: Notify) -> str:
    from infermeter.registry.lookup import UnknownIdError, resolve_gpu

    detected = catalog_gpu_id(inventory.gpus[0].name) if inventory else None
    gpu_id = config.options.gpu_id or detected
    if gpu_id is None:
        if inventory is not None:
            raise BenchConfigError(
                f"NVML names the GPU {inventory.gpus[0].name!r}, which maps to no catalog id; "
                "pass the GPU's catalog id, e.g. --gpu h100-sxm",
                "--gpu",
            )
        raise BenchConfigError(
            "no NVIDIA GPU was detected; pass the GPU's catalog id, e.g. --gpu h100-sxm, or "
            "--gpu cpu for an engine that runs on the CPU",
            "--gpu",
        )
    if gpu_id == CPU_DEVICE_ID:
        if inventory is not None:
            notify(
                f"note: NVML sees {inventory.gpus[0].name!r}; the result says the engine ran on "
                "the CPU, as given with --gpu cpu"
            )
        return gpu_id
    given = config.options.gpu_id
    if given and detected and detected != given:
        assert inventory is not None
        notify(
            f"note: NVML names the GPU {inventory.gpus[0].name!r} ({detected}); "
            f"the result says {given} as given with --gpu"
        )
    try:
        resolve_gpu(gpu_id)
    except UnknownIdError as error:
        raise BenchConfigError(str(error), "--gpu") from None
    return gpu_id


def _resolve_model(model: str | None, model_id: str | None) -> tuple[str, str]:
    from infermeter.registry.catalog import load_models
    from infermeter.registry.lookup import UnknownIdError, resolve_model

    models = load_models()
    if model_id is not None:
        try:
            resolve_model(model_id)
        except UnknownIdError as error:
            raise BenchConfigError(str(error), "--model-id") from None
        entry = models[model_id]
    elif model is None:
        raise BenchConfigError(
            "the result file needs the model's catalog id, e.g. --model-id llama-3.1-8b-instruct",
            "--model-id",
        )
    else:
        found = catalog_entry_for(model or "", models)
        if found is None:
            raise BenchConfigError(
                f"{model!r} is not a Hugging Face repository of the model catalog; pass the "
                "model's catalog id, e.g. --model-id llama-3.1-8b-instruct",
                "--model-id",
            )
        entry = found
    hf_repo = entry.hf_repo
    if model and model.count("/") == 1 and not Path(model).exists():
        hf_repo = model  # the repository the weights actually came from
    return entry.id, hf_repo


def endpoint_model(config: SessionConfig, facts: ServerFacts | None) -> str | None:
    """The model an endpoint serves, as the result names it: the Hugging Face repository the
    server states, else --model, else the folder it serves when that lies on this host."""
    named = served_repository(facts) or config.run.model
    folder = facts.served_model if facts is not None else None
    if named is None and folder is not None and Path(folder, "config.json").is_file():
        return folder
    return named


def _catalog_ids() -> set[str]:
    from infermeter.registry.catalog import load_models

    return set(load_models())


def plan_deployment(
    config: SessionConfig,
    inventory: GpuInventory | None,
    notify: Notify,
    facts: ServerFacts | None = None,
    split: NodeSplit | None = None,
) -> Deployment:
    """The deployment identity known before the run (engine version filled in later); with
    --endpoint, `facts` are what the server says about itself (see `bench.launch.served`); `split`
    says how a multi-node vLLM spreads over its Ray cluster's nodes (`bench.launch.multinode`), and
    with --endpoint, `--nodes` says how many hosts its server spans."""
    server = config.server
    server_command = config.options.server_command
    declared = (server_command,) if server is None and server_command else ()
    arguments, also = (server.extra_args, frozenset()) if server else (declared, _LAUNCH_OPTIONS)
    options = serving_options(arguments, also)
    source = "--vllm-arg" if server else "--server-command"
    tensor, pipeline, data, gpu_count = _parallel(config, options, source)
    if split is None and server is None and config.options.nodes is not None:
        split = declared_split(gpu_count, config.options.nodes)
    gpu_id = _resolve_gpu(config, inventory, notify)
    model_id, hf_repo = _model_ids(config, facts, notify)
    from infermeter.registry.lookup import resolve_gpu

    dtype = options.get("dtype")
    kv_dtype = server.kv_cache_dtype if server else options.get("kv-cache-dtype")
    max_model_len = _max_model_len(config, facts, options, source, notify)
    return Deployment(
        gpu=unchecked(
            GpuIdentity,
            id=gpu_id,
            count=gpu_count,
            form_factor=CPU_DEVICE_ID
            if gpu_id == CPU_DEVICE_ID
            else resolve_gpu(gpu_id).form_factor,
            nodes=split.nodes if split else None,
            gpus_per_node=split.gpus_per_node if split else None,
        ),
        engine=unchecked(EngineIdentity, name="vllm", version="unknown"),
        model=unchecked(
            ModelIdentity,
            id=model_id,
            hf_repo=hf_repo,
            revision=_text(options.get("revision")),
            quantization=_text(server.quantization if server else options.get("quantization")),
            dtype=_DTYPES.get(dtype) if isinstance(dtype, str) else None,
            kv_cache_dtype=_known_kv_cache_dtype(kv_dtype, notify),
        ),
        serving=_serving(config, options, arguments, (tensor, pipeline, data), max_model_len),
    )


def _known_kv_cache_dtype(kv_dtype: object, notify: Notify) -> str | None:
    """The KV cache dtype the server was given, when a result may state it (`KvCacheDtype`);
    else None, with a note, so a name the memory plan lacks is not left out unsaid."""
    if kv_dtype is None or kv_dtype in _KV_DTYPES:
        return kv_dtype if isinstance(kv_dtype, str) else None
    notify(
        f"note: --kv-cache-dtype {kv_dtype} is no KV cache dtype the memory plan knows "
        f"({', '.join(KV_CACHE_DTYPES)}); the result leaves kv_cache_dtype unstated"
    )
    return None


def _serving(
    config: SessionConfig,
    options: dict[str, str | bool],
    arguments: Sequence[str],
    sizes: tuple[int | None, int | None, int | None],
    max_model_len: int | None,
) -> ServingSettings:
    """The serving settings: a launched vLLM's, else what its --server-command states (`options`,
    read from `arguments`); built unchecked, since `registry.builder` checks the whole result once
    and names what it refuses."""
    server = config.server
    source = "--vllm-arg" if server else "--server-command"
    tensor, pipeline, data = sizes
    return unchecked(
        ServingSettings,
        tensor_parallel_size=tensor,
        pipeline_parallel_size=pipeline,
        data_parallel_size=data,
        max_model_len=max_model_len,
        gpu_memory_utilization=(
            server.gpu_memory_utilization
            if server
            else _float_option(options, "gpu-memory-utilization", source)
        ),
        max_num_seqs=(
            server.max_num_seqs if server else _int_option(options, "max-num-seqs", source)
        ),
        max_num_batched_tokens=_int_option(options, "max-num-batched-tokens", source),
        enable_prefix_caching=_flag(options.get("enable-prefix-caching")),
        enable_chunked_prefill=_flag(options.get("enable-chunked-prefill")),
        load_format=_text((server.load_format if server else None) or options.get("load-format")),
        other_options=other_options(arguments),
    )


def _parallel(
    config: SessionConfig, options: dict[str, str | bool], source: str
) -> tuple[int | None, int | None, int | None, int]:
    """Tensor, pipeline and data parallel sizes (given, or read from the server's options),
    and the GPUs they use."""
    server = config.server
    tensor = server.tensor_parallel_size if server else config.options.tensor_parallel_size
    tensor = tensor or _int_option(options, "tensor-parallel-size", source)
    given_pipeline = (
        server.pipeline_parallel_size if server else config.options.pipeline_parallel_size
    )
    pipeline = given_pipeline or _int_option(options, "pipeline-parallel-size", source)
    data = _int_option(options, "data-parallel-size", source)
    if server is not None:
        gpu_count = launched_gpu_count(server)
    elif tensor:
        gpu_count = tensor * (pipeline or 1)
    else:
        indices = config.options.gpu_indices
        gpu_count = len(indices) if indices else pipeline or 1
    return tensor, pipeline, data, gpu_count


def _model_ids(config: SessionConfig, facts: ServerFacts | None, notify: Notify) -> tuple[str, str]:
    """The model's catalog id and the repository its weights came from; a model not in the
    catalog gets an id proposed from its repository."""
    server = config.server
    requested = server.model if server else endpoint_model(config, facts)
    try:
        model_id, hf_repo = _resolve_model(requested, config.options.model_id)
    except BenchConfigError:
        # Any model vLLM serves, from the Hub or a folder with a config.json (launched, or an
        # endpoint's on this host): the catalog entry it needs is proposed after the run.
        launched = server is not None or (requested is not None and Path(requested).is_dir())
        repository = repository_of(requested) if requested and launched else None
        if config.options.model_id is not None or repository is None:
            raise
        model_id, hf_repo = proposed_id(repository), repository
        notify(f"note: {requested} is not in the model catalog; measuring it anyway")
    if server is None and model_id in _catalog_ids():
        from infermeter.registry.catalog import load_models

        catalog = [(entry.id, entry.hf_repo) for entry in load_models().values()]
        catalog_repo = dict(catalog)[model_id]
        hf_repo, notes = match_served_model(
            facts, model_id, catalog_repo, catalog, config.run.endpoint
        )
        for note in notes:
            notify(note)
    return model_id, hf_repo


def _max_model_len(
    config: SessionConfig,
    facts: ServerFacts | None,
    options: dict[str, str | bool],
    source: str,
    notify: Notify,
) -> int | None:
    """The context length served: a launched vLLM's, else the server's, else its command's."""
    server = config.server
    max_model_len = server.max_model_len if server else facts.max_model_len if facts else None
    declared_len = _int_option(options, "max-model-len", source)
    if server is None and declared_len is not None:
        if max_model_len is not None and max_model_len != declared_len:
            notify(
                f"note: the server says max_model_len {max_model_len}, --server-command "
                f"{declared_len}; the result keeps the server's"
            )
        max_model_len = max_model_len or declared_len
    return max_model_len


def _text(value: object) -> str | None:
    """A valued option's text; None for a flag or an option not given."""
    return value if isinstance(value, str) else None


def _flag(value: object) -> bool | None:
    """A flag's `--name` (True) or `--no-name` (False); None when not given."""
    return value if isinstance(value, bool) else None
