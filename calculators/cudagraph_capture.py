"""Which batch sizes vLLM captures CUDA graphs for, as its options set them.

Three spellings reach the same two settings of vLLM's compilation config:

- `--max-cudagraph-capture-size N` (`max_cudagraph_capture_size`): the default capture pattern
  (`calculators.vllm_overheads.captured_cuda_graphs`) up to N instead of min(2 x max_num_seqs, 512);
- `--cuda-graph-sizes` (the scheduler option of 0.9-0.11, later an alias): one value is such a
  largest size, several values are the capture list itself;
- `-O` / `--compilation-config` JSON: its `cudagraph_capture_sizes` (the list),
  `max_cudagraph_capture_size` and `cudagraph_mode` (vLLM's CUDAGraphMode: NONE, PIECEWISE, FULL,
  FULL_DECODE_ONLY, FULL_AND_PIECEWISE; which graphs each size gets,
  `vllm_overheads.captured_cuda_graphs`). Its other keys are named in the plan's notes as not read,
  never dropped without a word; a bare optimization level (`-O3`) is refused, as the graph modes
  each level implies are not modelled.

`--enforce-eager` captures nothing whatever these say (`vllm_overheads.cuda_graph_bytes`).

Which release has which (vllm/engine/arg_utils.py and vllm/config of the sdists): --cuda-graph-sizes
first in 0.9.0 (not in 0.8.5); the compilation config's `cudagraph_mode` first in 0.10.1
(vllm/config/__init__.py of 0.10.1.1; not in 0.10.0, which captures PIECEWISE graphs); and
--max-cudagraph-capture-size and the compilation config's `max_cudagraph_capture_size` first in
0.11.1 (not in 0.11.0). An option a release lacks is refused as its argument parser refuses it; a
compilation-config key it lacks, which its `CompilationConfig` (a dataclass pydantic's TypeAdapter
reads, extra keys ignored) drops, is named as not read and not applied.
"""

import re
from dataclasses import dataclass, replace
from typing import Any

from infermeter.calculators.errors import InputError
from infermeter.calculators.json_text import json_loads
from infermeter.calculators.limits import MAX_TOKENS

CAPTURE_KEYS = ("cudagraph_capture_sizes", "max_cudagraph_capture_size", "cudagraph_mode")
CUDAGRAPH_MODES = ("NONE", "PIECEWISE", "FULL", "FULL_DECODE_ONLY", "FULL_AND_PIECEWISE")
_SEPARATORS = re.compile(r"[\s,]+")
CUDA_GRAPH_SIZES_OPTION_SINCE = (0, 9)
MAX_CAPTURE_SIZE_OPTION_SINCE = (0, 11, 1)
CUDAGRAPH_MODE_KEY_SINCE = (0, 10, 1)


@dataclass(frozen=True)
class CaptureSizes:
    """The capture settings the options give (None: vLLM's default)."""

    sizes: tuple[int, ...] | None  # the capture list itself
    max_size: int | None  # the default pattern's largest size
    unread_keys: tuple[str, ...] = ()  # compilation-config keys the plan does not read
    mode: str | None = None  # cudagraph_mode; None: the release's default
    # Whether `sizes` is --compilation-config's cudagraph_capture_sizes, which vLLM before 0.11.1
    # does not cut at max_num_batched_tokens (`vllm_overheads.CAPTURE_SIZES_CUT_SINCE`).
    compiled: bool = False


def _size(name: str, value: Any) -> int:
    if isinstance(value, bool) or not isinstance(value, int) or not 1 <= value <= MAX_TOKENS:
        shown = repr(value)[:60]
        raise InputError(f"{name}: expected batch sizes from 1 to {MAX_TOKENS}, got {shown}")
    return value


def _sizes(name: str, values: Any) -> tuple[int, ...]:
    if not isinstance(values, list) or not values:
        raise InputError(f"{name}: expected a non-empty list of batch sizes, got {values!r:.60}")
    return tuple(sorted({_size(name, value) for value in values}))


def parse_cuda_graph_sizes(text: str) -> tuple[int, ...]:
    """`--cuda-graph-sizes` as vLLM takes it: integers separated by spaces or commas."""
    words = [word for word in _SEPARATORS.split(text.strip()) if word]
    if not words or not all(word.isdigit() and len(word) <= 9 for word in words):
        raise InputError(f"cuda_graph_sizes: expected integers such as '256' or '1 2 4 8', "
                         f"got {text[:60]!r}")  # fmt: skip
    return tuple(_size("cuda_graph_sizes", int(word)) for word in words)


def parse_compilation_config(text: str) -> CaptureSizes:
    """The capture settings of a `--compilation-config` / `-O` JSON object."""
    stripped = text.strip()
    if stripped.isdigit():
        raise InputError(
            f"compilation_config: the optimization level -O{stripped} is not modelled; give the "
            "JSON form, e.g. '{\"cudagraph_capture_sizes\": [1, 2, 4, 8]}'"
        )
    try:
        config = json_loads(stripped)
    except ValueError:
        raise InputError(
            f"compilation_config: expected a JSON object, got {stripped[:60]!r}"
        ) from None
    if not isinstance(config, dict):
        raise InputError(f"compilation_config: expected a JSON object, got {stripped[:60]!r}")
    sizes = config.get("cudagraph_capture_sizes")
    largest = config.get("max_cudagraph_capture_size")
    mode = config.get("cudagraph_mode")
    if mode is not None and (not isinstance(mode, str) or mode.upper() not in CUDAGRAPH_MODES):
        raise InputError(
            f"compilation_config.cudagraph_mode: expected one of {', '.join(CUDAGRAPH_MODES)}, "
            f"got {str(mode)[:60]!r}"
        )
    return CaptureSizes(
        sizes=None
        if sizes is None
        else _sizes("compilation_config.cudagraph_capture_sizes", sizes),
        max_size=None
        if largest is None
        else _size("compilation_config.max_cudagraph_capture_size", largest),
        unread_keys=tuple(sorted(str(key) for key in config if key not in CAPTURE_KEYS)),
        mode=None if mode is None else mode.upper(),
    )


def _at_release(
    release: tuple[int, ...],
    max_size: int | None,
    cuda_graph_sizes: str | None,
    compiled: CaptureSizes,
) -> CaptureSizes:
    """Refuse the options `release` lacks; drop the compilation-config key it ignores (above)."""
    if max_size is not None and release < MAX_CAPTURE_SIZE_OPTION_SINCE:
        raise InputError(
            "max_cudagraph_capture_size: vLLM has --max-cudagraph-capture-size from 0.11.1, not "
            f"in {'.'.join(map(str, release))}; --cuda-graph-sizes N sets the largest size before"
        )
    if cuda_graph_sizes is not None and release < CUDA_GRAPH_SIZES_OPTION_SINCE:
        raise InputError(
            "cuda_graph_sizes: vLLM has --cuda-graph-sizes from 0.9, not in "
            f"{'.'.join(map(str, release))}; -O '{{\"cudagraph_capture_sizes\": [...]}}' lists them"
        )
    dropped = {
        "max_cudagraph_capture_size": compiled.max_size is not None
        and release < MAX_CAPTURE_SIZE_OPTION_SINCE,
        "cudagraph_mode": compiled.mode is not None and release < CUDAGRAPH_MODE_KEY_SINCE,
    }
    unread = tuple(sorted({*compiled.unread_keys, *(key for key, gone in dropped.items() if gone)}))
    return replace(
        compiled,
        max_size=None if dropped["max_cudagraph_capture_size"] else compiled.max_size,
        mode=None if dropped["cudagraph_mode"] else compiled.mode,
        unread_keys=unread,
    )


def capture_sizes(
    max_cudagraph_capture_size: int | None,
    cuda_graph_sizes: str | None,
    compilation_config: str | None,
    release: tuple[int, ...] = MAX_CAPTURE_SIZE_OPTION_SINCE,
) -> CaptureSizes:
    """The capture settings of the three options together, as vLLM `release` (to its patch)
    reads them; two that disagree are refused."""
    compiled = (
        parse_compilation_config(compilation_config)
        if compilation_config is not None
        else CaptureSizes(None, None)
    )
    compiled = _at_release(release, max_cudagraph_capture_size, cuda_graph_sizes, compiled)
    lists: dict[str, tuple[int, ...]] = {}
    maxima: dict[str, int] = {}
    if compiled.sizes is not None:
        lists["compilation_config.cudagraph_capture_sizes"] = compiled.sizes
    if compiled.max_size is not None:
        maxima["compilation_config.max_cudagraph_capture_size"] = compiled.max_size
    if max_cudagraph_capture_size is not None:
        maxima["max_cudagraph_capture_size"] = _size(
            "max_cudagraph_capture_size", max_cudagraph_capture_size
        )
    if cuda_graph_sizes is not None:
        given = parse_cuda_graph_sizes(cuda_graph_sizes)
        if len(given) == 1:
            maxima["cuda_graph_sizes"] = given[0]
        else:
            lists["cuda_graph_sizes"] = tuple(sorted(set(given)))
    if len(set(lists.values())) > 1:
        raise InputError(f"{' and '.join(lists)}: two different capture lists; give one")
    sizes = next(iter(lists.values()), None)
    largest = {*maxima.values(), *((max(sizes),) if sizes else ())}
    if len(largest) > 1:
        named = [*maxima, *lists]
        raise InputError(
            f"{' and '.join(named)}: disagree on the largest capture size ({sorted(largest)})"
        )
    return CaptureSizes(
        sizes=sizes,
        max_size=None if sizes is not None else next(iter(maxima.values()), None),
        unread_keys=compiled.unread_keys,
        mode=compiled.mode,
        compiled=compiled.sizes is not None,
    )
