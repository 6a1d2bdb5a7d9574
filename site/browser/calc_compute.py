"""The calculator pages' compute step: checked field values and the catalogs (plain data) in,
the payload of `infermeter calc <kind> --json` out (`compute`), through `calculators.api`.

Part of the calculators archive the browser imports (see `calc_api`): the stdlib,
`calculators` and the other calc_* hooks only.
"""

from collections.abc import Callable, Mapping
from typing import Any

import infermeter.calculators.api as api
from infermeter.calculators.config_reader import config_from_text, parse_config
from infermeter.calculators.errors import CalculatorError
from infermeter.calculators.fields import FieldError, left_out_errors, parse_field, query_text
from infermeter.calculators.fit import GpuOption
from infermeter.calculators.gpu_traits import UNKNOWN_GPU, GpuTraits
from infermeter.calculators.inputs import FIELDS
from infermeter.calculators.interconnect import Link
from infermeter.calculators.limits import gib_to_bytes
from infermeter.calculators.model_arch import ModelArch
from infermeter.calculators.perf_api import PERF_REQUEST_FIELDS, PerfRequest, perf
from infermeter.calculators.predict import Deployment, Gpu, generation_of
from infermeter.calculators.suggest import unknown_name

Catalog = Mapping[str, Any]


def _unknown(field: str, kind: str, wanted: str, known: list[str]) -> FieldError:
    return FieldError(field, f"{field}: {unknown_name(f'{kind} id', wanted, known)}")


def _arch(values: Mapping[str, Any], catalog: Catalog) -> tuple[str, ModelArch]:
    """The model to plan: a pasted config.json, else a catalog id."""
    if values.get("config"):
        try:
            return "config.json", parse_config(config_from_text(values["config"]))
        except CalculatorError as error:
            raise FieldError("config", f"config: {error}") from None
    model = values.get("model")
    if not model:
        raise FieldError("model", "model: required (or paste a config.json)")
    models = catalog["models"]
    if model not in models:
        raise _unknown("model", "model", model, list(models))
    return model, parse_config(models[model]["config"])


def _vram(values: Mapping[str, Any], catalog: Catalog) -> dict[str, Any]:
    model, arch = _arch(values, catalog)
    gpu_id = values["gpu"]
    if values["gpu_memory_gib"] is not None:
        try:
            memory = gib_to_bytes("gpu_memory_gib", values["gpu_memory_gib"])
        except CalculatorError as error:
            raise FieldError("gpu_memory_gib", str(error)) from None
        gpu_id = None
    elif gpu_id:
        if gpu_id not in catalog["gpus"]:
            raise _unknown("gpu", "GPU", gpu_id, list(catalog["gpus"]))
        memory = catalog["gpus"][gpu_id]["memory_bytes"]
    else:
        raise FieldError("gpu", "gpu: give a GPU id or its memory in GiB")
    request = api.VramRequest(
        model=model,
        arch=arch,
        gpu=gpu_id,
        gpu_traits=UNKNOWN_GPU
        if gpu_id is None
        else GpuTraits.from_dict(catalog["gpus"][gpu_id]["traits"]),
        gpu_memory_bytes=memory,
        tensor_parallel_size=values["tensor_parallel_size"] or 1,
        pipeline_parallel_size=values["pipeline_parallel_size"] or 1,
        max_model_len=values["max_model_len"],
        engine=api.EngineRequest.from_fields(values),
        context=values["context"],
        concurrency=values["concurrency"] or 1,
        gpu_specs=None
        if gpu_id is None
        else (
            catalog["gpus"][gpu_id]["memory_bandwidth_gb_s"],
            catalog["gpus"][gpu_id]["tflops_dense"],
        ),
        gpu_links=()
        if gpu_id is None
        else tuple(Link(**link) for link in catalog["gpus"][gpu_id].get("interconnect_links", [])),
    )
    return api.vram(request)


def _catalog_prices(gpu_id: str | None, catalog: Catalog) -> dict[str, dict[str, Any]] | None:
    """The GPU's cheapest catalog price per tier, as the payload names a price used."""
    if not gpu_id:
        return None
    if gpu_id not in catalog["gpus"]:
        raise _unknown("gpu", "GPU", gpu_id, list(catalog["gpus"]))
    gpu = catalog["gpus"][gpu_id]
    return {
        tier: {
            "id": gpu["price_sources"][tier]["id"],
            "usd_per_gpu_hour": usd,
            "as_of": gpu["price_sources"][tier]["as_of"],
            "source_url": gpu["price_sources"][tier]["source_url"],
        }
        for tier, usd in gpu["prices"].items()
    }


def _cost(values: Mapping[str, Any], catalog: Catalog) -> dict[str, Any]:
    request = api.CostRequest(
        gpu=values["gpu"] or None,
        tier=values["tier"] or "on_demand",
        price_per_hour=values["price_per_hour"],
        interruptible_price_per_hour=values["interruptible_price_per_hour"],
        reserved_price_per_hour=values["reserved_price_per_hour"],
        serverless_price_per_hour=values["serverless_price_per_hour"],
        tokens_per_second=values["tokens_per_second"],
        accepted_tokens_per_second=values["accepted_tokens_per_second"],
        gpu_count=values["gpu_count"] or 1,
        utilization=values["utilization"] if values["utilization"] is not None else 1.0,
        retry_rate=values["retry_rate"] or 0.0,
        overhead_per_hour=values["overhead_per_hour"] or 0.0,
        api_price_per_million=values["api_price_per_million"],
        monthly_tokens=values["monthly_tokens"],
        scale_to_zero=values["scale_to_zero"],
        tokens_per_second_basis=values["tokens_per_second_basis"],
        tokens_per_second_gpu=values["tokens_per_second_gpu"] or None,
        tokens_per_second_gpu_count=values["tokens_per_second_gpu_count"],
    )
    return api.cost(request, _catalog_prices(request.gpu, catalog))


def gpu_options(catalog: Catalog, tier: str, gpu_ids: list[str] | None) -> list[GpuOption]:
    """Catalog GPUs as fit candidates at their cheapest `tier` price (as `registry.lookup`)."""
    gpus = catalog["gpus"]
    options = []
    for gpu_id in gpu_ids if gpu_ids else sorted(gpus):
        if gpu_id not in gpus:
            raise _unknown("gpu", "GPU", gpu_id, list(gpus))
        gpu = gpus[gpu_id]
        options.append(
            GpuOption(
                gpu_id,
                gpu["name"],
                gpu["memory_bytes"],
                gpu["memory_gb"],
                gpu["prices"].get(tier),
                GpuTraits.from_dict(gpu["traits"]),
            )
        )
    return options


def _fit(values: Mapping[str, Any], catalog: Catalog) -> dict[str, Any]:
    model, arch = _arch(values, catalog)
    ids = list(values["gpu"] or ())
    request = api.FitRequest(
        model=model,
        arch=arch,
        context=values["context"],
        concurrency=values["concurrency"] or 1,
        engine=api.EngineRequest.from_fields(values),
        tier=values["tier"] or "on_demand",
        rank_by=values["rank_by"] or "price",
    )
    return api.fit(request, gpu_options(catalog, request.tier, ids or None))


def catalog_gpu(gpu_id: str, entry: Mapping[str, Any]) -> Gpu:
    """A GPU of the calculators' catalog (`assets/catalog.json`) as the predictor reads it."""
    return Gpu(
        id=gpu_id,
        generation=generation_of(entry["architecture"]),
        memory_bytes=entry["memory_bytes"],
        memory_bandwidth_gb_s=entry["memory_bandwidth_gb_s"],
        tflops_dense=entry["tflops_dense"],
        links=tuple(Link(**link) for link in entry.get("interconnect_links", [])),
        traits=GpuTraits.from_dict(entry["traits"]),
    )


def _perf(values: Mapping[str, Any], catalog: Catalog) -> dict[str, Any]:
    model, arch = _arch(values, catalog)
    gpu_id = values["gpu"]
    if gpu_id not in catalog["gpus"]:
        raise _unknown("gpu", "GPU", gpu_id or "", list(catalog["gpus"]))
    gpu = catalog_gpu(gpu_id, catalog["gpus"][gpu_id])
    kv = values["kv_cache_dtype"]
    deployment = Deployment(
        arch=arch,
        gpu=gpu,
        quantization=values["quantization"] or None,
        kv_cache_dtype=None if kv in (None, "auto") else kv,
        tensor_parallel_size=values["tensor_parallel_size"] or 1,
        pipeline_parallel_size=values["pipeline_parallel_size"] or 1,
        data_parallel_size=values["data_parallel_size"] or 1,
        engine=values["engine"] or "vllm",
    )
    request = PerfRequest(
        model=model,
        deployment=deployment,
        **{name: values[name] for name in PERF_REQUEST_FIELDS},
    )
    prices = _catalog_prices(gpu_id, catalog) or {}
    return perf(request, prices.get("on_demand"))


COMPUTE: dict[str, Callable[[Mapping[str, Any], Catalog], dict[str, Any]]] = {
    "vram": _vram,
    "cost": _cost,
    "fit": _fit,
    "perf": _perf,
}


def compute(kind: str, query: Mapping[str, str], catalog: Catalog) -> dict[str, Any]:
    """Check every field, then compute. Returns {"errors": {field: message}} or the payload."""
    values: dict[str, Any] = {}
    errors: dict[str, str] = left_out_errors(FIELDS[kind], query)
    texts = query_text(FIELDS[kind], query)
    for field in FIELDS[kind]:
        try:
            values[field.name] = parse_field(field, texts[field.name])
        except FieldError as error:
            errors.setdefault(error.field, error.message)
    if errors:
        return {"errors": errors}
    try:
        return {"payload": COMPUTE[kind](values, catalog)}
    except FieldError as error:
        return {"errors": {error.field: error.message}}
    except CalculatorError as error:
        message = str(error)
        option = message.split(":", 1)[0].strip()
        known = {field.name for field in FIELDS[kind]}
        return {"errors": {option if option in known else "": message}}
