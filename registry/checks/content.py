"""Content: a valid result against its own id, its place in the registry, and the catalogs."""

from collections.abc import Iterable

from infermeter.calculators.suggest import unknown_name
from infermeter.registry.checks import Finding
from infermeter.registry.models import GpuEntry, MeasuredSource, ModelEntry, Result
from infermeter.registry.models.common import CPU_DEVICE_ID
from infermeter.registry.store import RESULTS_DIR, content_id, dumps_result, result_path


def identity_findings(file: str, result: Result) -> list[Finding]:
    """The id is the one minted from the content."""
    expected = content_id(result)
    if result.id == expected:
        return []
    message = (
        f"{result.id} is not the content id of this file, {expected} (the first 12 hex digits "
        "of the SHA-256 of its canonical JSON without `id`)"
    )
    return [Finding(file, "id", message, "identity")]


def placement_findings(
    file: str, text: str, result: Result, parts_below_results: tuple[str, ...]
) -> list[Finding]:
    """A file in `registry/results/` sits where its content says and is written canonically."""
    findings = []
    expected = result_path(result)
    actual = RESULTS_DIR.joinpath(*parts_below_results)
    if actual != expected:
        if len(parts_below_results) != 3:
            message = f"not at {RESULTS_DIR}/<gpu>/<model>/<date>-<id>.json; its content "
        else:
            message = "path disagrees with the content, which "
        findings.append(Finding(file, "", message + f"belongs at {expected}", "placement"))
    if text != dumps_result(result):
        message = (
            "not written canonically (keys sorted, indent 2, null fields left out, "
            "a trailing newline): write it with registry.store.write_result"
        )
        findings.append(Finding(file, "", message, "placement"))
    return findings


def _unknown(kind: str, wanted: str, known: Iterable[str]) -> str:
    return unknown_name(f"{kind} id", wanted, known, among="registry/catalogs/")


def reference_findings(
    file: str, result: Result, gpus: dict[str, GpuEntry], models: dict[str, ModelEntry]
) -> list[Finding]:
    """The GPU and model exist in the catalogs, and agree with what the catalogs say of them."""
    findings = []
    identity = result.identity
    gpu = gpus.get(identity.gpu.id)
    if identity.gpu.id == CPU_DEVICE_ID:
        pass  # no GPU: nothing in the GPU catalog to agree with
    elif gpu is None:
        message = _unknown("GPU", identity.gpu.id, gpus)
        findings.append(Finding(file, "identity.gpu.id", message, "references"))
    elif gpu.form_factor != identity.gpu.form_factor:
        message = (
            f"{identity.gpu.form_factor!r} disagrees with the GPU catalog, where "
            f"{gpu.id} is {gpu.form_factor!r}"
        )
        findings.append(Finding(file, "identity.gpu.form_factor", message, "references"))
    elif (capped := _power_capped_finding(file, result, gpu)) is not None:
        findings.append(capped)
    if identity.model.id not in models:
        message = _unknown("model", identity.model.id, models)
        findings.append(Finding(file, "identity.model.id", message, "references"))
    source = result.source
    if (
        isinstance(source, MeasuredSource)
        and source.host.form_factor is not None
        and source.host.form_factor != identity.gpu.form_factor
    ):
        message = (
            f"{source.host.form_factor!r} disagrees with identity.gpu.form_factor "
            f"{identity.gpu.form_factor!r}"
        )
        findings.append(Finding(file, "source.host.form_factor", message, "references"))
    return findings


def _power_capped_finding(file: str, result: Result, gpu: GpuEntry) -> Finding | None:
    """An MLPerf run of the power category (MaxQ: the submitter set the boards' power limit)
    filed under a GPU as sold, whose throughput it is not: it belongs under the catalog entry
    of the part at that limit (a `source_names` entry with `power_limit_w`)."""
    mlperf = getattr(result.source, "mlperf", None)
    url = str(getattr(result.source, "url", ""))
    if mlperf is None or ("MaxQ" not in mlperf.system and "_MaxQ/" not in url):
        return None
    if any(alias.power_limit_w is not None for alias in gpu.source_names):
        return None
    message = (
        f"MLPerf system {mlperf.system!r} ran power-capped (MaxQ), but {gpu.id} is the part at "
        "its stock power: file it under the GPU catalog entry that names the part at the "
        "submission's power limit (source_names power_limit_w)"
    )
    return Finding(file, "identity.gpu.id", message, "references")


def results_relative_parts(parts: tuple[str, ...]) -> tuple[str, ...] | None:
    """The path parts below the last `registry/results` folder, or None outside such a tree."""
    for index in range(len(parts) - 2, 0, -1):
        if parts[index] == "results" and parts[index - 1] == "registry":
            return parts[index + 1 :]
    return None
