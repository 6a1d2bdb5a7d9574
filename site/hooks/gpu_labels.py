"""A deployment's GPUs as a reader reads them: `2 × NVIDIA H100 SXM5 80GB`, the catalog's name,
linked to the GPU's page with the catalog id in the link's title (a GPU the catalog lacks keeps
its id). Ids stay where a machine reads them: URLs, data attributes, JSON and the search index.
`names` maps catalog ids to names (`names_of` makes it from the catalog)."""

from collections.abc import Mapping

from catalog_pages import esc

from infermeter.registry.models import GpuEntry


def names_of(gpus: Mapping[str, GpuEntry]) -> dict[str, str]:
    """Catalog id → the GPU's name."""
    return {gpu_id: gpu.name for gpu_id, gpu in gpus.items()}


def gpu_name(gpu_id: str, names: Mapping[str, str] | None) -> str:
    """The GPU's catalog name, else its id (plain text, not escaped)."""
    return (names or {}).get(gpu_id, gpu_id)


def gpus_text(count: object, gpu_id: str, names: Mapping[str, str] | None) -> str:
    """`2 × NVIDIA H100 SXM5 80GB`, escaped (the count and the name never run together)."""
    return f"{esc(count)} × {esc(gpu_name(gpu_id, names))}"


def gpus_link(count: object, gpu_id: str, names: Mapping[str, str] | None, base: str) -> str:
    """`gpus_text` linked to the GPU's page (`base` is the relative URL of the site's root),
    the catalog id in the link's title."""
    text = gpus_text(count, gpu_id, names)
    return f'<a href="{base}gpus/{esc(gpu_id)}/" title="{esc(gpu_id)}">{text}</a>'
