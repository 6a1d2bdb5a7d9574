"""`infermeter calc vram`: the vLLM memory plan of a model on a GPU (`api.vram_report`)."""

import click

import infermeter.calculators.api as api
from infermeter.bench.cli.calc_options import (
    calc_command,
    library_errors,
    print_json,
)
from infermeter.bench.cli.calc_tables import format_vram
from infermeter.bench.cli.oneline import UsageLine
from infermeter.bench.cli.parsed_options import from_options
from infermeter.calculators.gpu_traits import UNKNOWN_GPU
from infermeter.calculators.inputs import VRAM
from infermeter.calculators.limits import gib_to_bytes
from infermeter.registry.catalog import gpu_links, gpu_traits
from infermeter.registry.lookup import gpu_memory_bytes, model_arch, resolve_gpu


@calc_command("vram", VRAM, engine=True)
def vram_command(
    model: str,
    gpu: str | None,
    gpu_memory_gib: float | None,
    tensor_parallel_size: int,
    pipeline_parallel_size: int,
    max_model_len: int | None,
    engine: api.EngineRequest,
    context: int | None,
    concurrency: int,
    as_json: bool,
) -> None:
    """The vLLM memory plan of a model on a GPU: weights, KV cache, concurrency, headroom.

    Figures are per GPU. A plan that does not fit is an answer (fits: false, with vLLM's own
    error text), not an error.

    \b
    Example:
      infermeter calc vram --model llama-3.1-70b-instruct --gpu h100-sxm -tp 4 --max-model-len 32768
    """
    if (gpu is None) == (gpu_memory_gib is None):
        raise UsageLine("give exactly one of --gpu ID or --gpu-memory-gib N")
    with library_errors():
        arch = model_arch(model)
        if gpu is not None:
            entry = resolve_gpu(gpu)
            memory, traits = gpu_memory_bytes(entry), gpu_traits(entry)
        else:
            memory = gib_to_bytes("--gpu-memory-gib", gpu_memory_gib or 0)
            traits = UNKNOWN_GPU
        request = from_options(
            api.VramRequest,
            arch=arch,
            engine=engine,
            gpu_traits=traits,
            gpu_memory_bytes=memory,
            gpu_specs=None
            if gpu is None
            else (entry.memory_bandwidth_gb_s, entry.tflops_dense.model_dump()),
            gpu_links=() if gpu is None else gpu_links(entry),
        )
        report = api.vram_report(request)
    payload = api.vram_payload(request, report)
    if as_json:
        print_json(payload)
        return
    click.echo(format_vram(request, report, payload))
