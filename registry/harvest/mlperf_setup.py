"""The engine of an MLPerf submission whose `Software` names none, read from its build setup.

AMD-stack submissions of v6.0 (AMD, GigaComputing, MiTAC, ORACLE) state only `PyTorch …, ROCm
…` (or nothing) as their software, yet their own build scripts say what serves the model:
`closed/<submitter>/setup/<benchmark>/*.config` each set `VLLM_URL` to the vLLM repository
their `build_docker.sh` builds vLLM from. A row is taken as a vLLM run only when every such
configuration of its benchmark's setup folder builds vLLM, and none names another engine (SGLang,
TensorRT-LLM); the version stays `unstated` (the configurations build different revisions and
the submission does not say which configuration ran). Anything else: no engine, and the row is
skipped as before. MangoBoost's submissions state only `ROCm …` (v6.0) or
`PyTorch …, aiter …` (AMD_MangoBoost, v5.1 open division); their
`<division>/<submitter>/src/<benchmark>/README.md` (v6.0; `code/<benchmark>/README.md` in v5.1)
runs the benchmark in MangoBoost's LLMBoost serving container (`llmboost/mb-llmboost:<tag>`;
v5.1's `mb-llmboost-inference:<tag>`, built on it), read as LLMBoost of an unstated release.
Where neither says, the system description (`<division>/<submitter>/systems/<system>.json`) may
name one engine with its release in `other_software_stack` (RedHat's v4.1 L40S `"vllm":
"0.5.1"`, its v6.0 llm-d H200 `"vllm": "0.14.1"`, whose `framework` names only `LLM-D v0.5.0`,
llm-d serving with vLLM).
"""

import json
import re
from typing import Any

from infermeter.registry.harvest.mlperf_location import submission_root, system_folder
from infermeter.registry.harvest.mlperf_names import benchmark_family, parse_engine
from infermeter.registry.harvest.tree import SourceTree

_VLLM_URL = re.compile(
    r'^export VLLM_URL="(https://github\.com/(?:vllm-project|rocm)/vllm(?:\.git)?)"$',
    re.M | re.I,
)
_OTHER_ENGINE = re.compile(r"^export (?:SGLANG|TRTLLM|TENSORRT_LLM)_URL=", re.M | re.I)
_LLMBOOST_IMAGE = re.compile(r"\b(?:llmboost/)?mb-llmboost(?:-inference)?:[\w.-]+")
"""MangoBoost's README pulls and runs its LLMBoost serving container (v6.0: `ROCm 6.10.5` is
all its Software states)."""


def setup_root(row: dict[str, Any]) -> str:
    """`closed/AMD/setup` of a row located at `closed/AMD/results/…`."""
    return f"{submission_root(row)}/setup"


def setup_configs(row: dict[str, Any], listed: list[str]) -> list[str]:
    """The `*.config` files of the row's benchmark folder under its submission's setup
    (`setup/llama2-70b-99/` serves llama2-70b-99.9 too: the folder's benchmark family)."""
    root, family = setup_root(row), benchmark_family(str(row["Model"]))
    found = []
    for path in listed:
        parts = path.removeprefix(root + "/").split("/")
        is_config = len(parts) == 2 and parts[1].endswith(".config")
        if is_config and benchmark_family(parts[0]) == family:
            found.append(path)
    return sorted(found)


def readme_paths(row: dict[str, Any]) -> list[str]:
    """How the submission ran the benchmark: `closed/MangoBoost/src/llama2-70b-99/README.md`
    (v6.0), `open/AMD_MangoBoost/code/llama2-70b-99.9/README.md` (v5.1)."""
    root = submission_root(row)
    return [f"{root}/{folder}/{row['Model']}/README.md" for folder in ("src", "code")]


def _engine_from_readme(path: str, text: str) -> tuple[str, str, str] | None:
    image = _LLMBOOST_IMAGE.search(text)
    if image is None:
        return None
    where = f"{path}: the benchmark is served from MangoBoost's LLMBoost container {image[0]}"
    return "llmboost", "unstated", where


def system_description_path(row: dict[str, Any]) -> str:
    """`closed/RedHat/systems/L40S-RedHat-OpenShift.json` of a row located at
    `closed/RedHat/results/L40S-RedHat-OpenShift/…`."""
    return f"{submission_root(row)}/systems/{system_folder(row)}.json"


def _engine_from_system(path: str, text: str | None) -> tuple[str, str, str] | None:
    """The one engine with a release that the description's `other_software_stack` names."""
    try:
        stack = json.loads(text or "").get("other_software_stack")
    except (ValueError, AttributeError):
        return None
    if not isinstance(stack, dict):
        return None
    named = {
        engine
        for key, value in stack.items()
        if isinstance(value, str)
        and (engine := parse_engine(f"{key} {value}")) is not None
        and not engine[1].startswith("unstated")
    }
    if len(named) != 1:
        return None
    name, version, component = named.pop()
    return name, version, f"{path}: other_software_stack names {component}"


def engine_from_setup(configs: dict[str, str | None]) -> tuple[str, str, str] | None:
    """(engine, version, where it was read) when every configuration builds vLLM, or when the
    submission's README serves the benchmark from MangoBoost's LLMBoost container, or else when
    the system description names one engine with its release; else None."""
    systems = {path: text for path, text in configs.items() if "/systems/" in path}
    configs = {path: text for path, text in configs.items() if path not in systems}
    found = _engine_from_build(configs) if configs else None
    for path, text in systems.items():
        found = found or _engine_from_system(path, text)
    return found


def _engine_from_build(configs: dict[str, str | None]) -> tuple[str, str, str] | None:
    readmes = {path: text for path, text in configs.items() if path.endswith("/README.md")}
    if readmes:
        found = (_engine_from_readme(path, text) for path, text in readmes.items() if text)
        return next((engine for engine in found if engine is not None), None)
    texts = {path: text for path, text in configs.items() if text is not None}
    if not texts or any(_OTHER_ENGINE.search(text) for text in texts.values()):
        return None
    urls = {_VLLM_URL.search(text) for text in texts.values()}
    if None in urls:
        return None
    folder = next(iter(texts)).rsplit("/", 1)[0]
    repositories = sorted({match.group(1) for match in urls if match is not None})
    where = (
        f"{folder}/*.config: every configuration builds vLLM from {', '.join(repositories)} "
        "(VLLM_URL); the submission does not say which configuration, so which vLLM release ran"
    )
    return "vllm", "unstated", where


def read_setups(tree: SourceTree, rows: list[dict[str, Any]]) -> list[dict[str, str | None]]:
    """For each row, the setup configurations that could name its engine (empty where its
    `Software` is not asked), read in one go."""
    asks = [parse_engine(str(row.get("Software", ""))) is None for row in rows]
    roots = sorted({setup_root(row) for row, ask in zip(rows, asks, strict=True) if ask})
    listed = tree.files_under(roots) if roots else []
    configs = [
        setup_configs(row, listed) if ask else [] for row, ask in zip(rows, asks, strict=True)
    ]
    readmes = [
        readme_paths(row) if ask and not paths else []
        for row, ask, paths in zip(rows, asks, configs, strict=True)
    ]
    systems = [
        system_description_path(row) if ask else None for row, ask in zip(rows, asks, strict=True)
    ]
    wanted = {path for paths in (*configs, *readmes) for path in paths} | {
        path for path in systems if path
    }
    texts = tree.read_many(sorted(wanted))
    return [
        {path: texts[path] for path in (readme or paths)}
        | ({system: texts[system]} if system else {})
        for paths, readme, system in zip(configs, readmes, systems, strict=True)
    ]


CODE_BACKENDS = ("tensorrt", "vllm", "sglang")
"""The backend folders an NVIDIA-harness submission keeps its implementation of a benchmark in
(`closed/NVIDIA/code/gpt-oss-120b/tensorrt/`, `closed/NVIDIA/code/qwen3-vl-235b-a22b/vllm/`)."""


def code_root(row: dict[str, Any]) -> str:
    """`closed/NVIDIA/code/qwen3-vl-235b-a22b` of a row of that benchmark."""
    return f"{submission_root(row)}/code/{row['Model']}"


def read_code_backends(tree: SourceTree, rows: list[dict[str, Any]]) -> list[frozenset[str]]:
    """For each row, the backend folders of its benchmark's code in its submission."""
    roots = sorted({code_root(row) for row in rows})
    listed = tree.files_under(roots) if roots else []
    found: dict[str, set[str]] = {}
    for path in listed:
        root, _, rest = path.partition("/code/")
        benchmark, _, inner = rest.partition("/")
        backend = inner.split("/", 1)[0]
        if backend in CODE_BACKENDS and "/" in inner:
            found.setdefault(f"{root}/code/{benchmark}", set()).add(backend)
    return [frozenset(found.get(code_root(row), ())) for row in rows]


def engine_of_backend(
    engine: tuple[str, str, str] | None, backends: frozenset[str], root: str
) -> tuple[str, str, str] | None:
    """The engine `Software` names, unless it names TensorRT(-LLM) for the whole submission while
    the benchmark's only implementation in its code is a vLLM backend (NVIDIA-stack Qwen3-VL rows
    of v6.0: `code/qwen3-vl-235b-a22b/vllm/`, vLLM with Dynamo): then vLLM of an unstated
    release."""
    if engine is None or engine[0] != "tensorrt-llm" or backends != {"vllm"}:
        return engine
    where = (
        f"{root}/vllm: the submission's only implementation of this benchmark is its vLLM "
        f"backend ('{engine[2]}' names the submission's TensorRT stack as a whole)"
    )
    return "vllm", "unstated", where


_BENCHMARK_BUILDS = {"qwen3-vl-235b-a22b": re.compile(r"^vLLM[ -]CentML:\S*-q3vl-\S*$", re.I)}
"""A vLLM build that NVIDIA-stack submissions tag for one benchmark: `vLLM CentML:mlperf-inf-
mm-q3vl-v6.1` ('mm-q3vl': the multimodal Qwen3-VL benchmark), listed beside the TensorRT-LLM
that serves their other benchmarks."""


def engine_of_build_tag(
    engine: tuple[str, str, str] | None, row: dict[str, Any]
) -> tuple[str, str, str] | None:
    """The engine, unless it is the submission's TensorRT-LLM while `Software` also names a
    vLLM build tagged for this very benchmark and no code was read to say more (v6.1's
    NVIDIA-stack Qwen3-VL rows; in v6.0 their code's only backend said the same,
    `engine_of_backend`): then that vLLM build, of an unstated release."""
    tagged = _BENCHMARK_BUILDS.get(str(row.get("Model")))
    if engine is None or engine[0] != "tensorrt-llm" or tagged is None:
        return engine
    components = [part.strip() for part in re.split(r"[,;]| \+ ", str(row.get("Software")))]
    build = next((part for part in components if tagged.match(part)), None)
    if build is None:
        return engine
    return "vllm", "unstated", f"{build}: the vLLM build the submission tags for this benchmark"
