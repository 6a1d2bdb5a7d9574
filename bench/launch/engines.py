"""Which OpenAI-compatible server answers at an endpoint, as the server itself says.

`identify_server` asks the endpoints each engine serves about itself, and reads the fields their
own source defines (checked against each project's code):
- **vLLM**: `GET /version` → `{"version"}`; `/v1/models` cards say `owned_by: "vllm"` and carry
  `root` (the weights' repository or path) and `max_model_len`.
- **SGLang**: `GET /get_server_info` (`/server_info` in newer releases) → its server arguments
  (`model_path`, `served_model_name`, `context_length`, …) and `version`; cards say
  `owned_by: "sglang"`.
- **Text Generation Inference**: `GET /info` → `model_id`, `model_sha`, `max_total_tokens`,
  `version` (and `router: "text-generation-router"` in newer releases).
- **llama.cpp server**: `GET /props` → `build_info` (`b<build>-<commit>`), `model_path`,
  `default_generation_settings.n_ctx`; cards say `owned_by: "llamacpp"`; responses carry the
  header `Server: llama.cpp`.
- **TensorRT-LLM** (`trtllm-serve`): `GET /version` → `{"version"}` like vLLM's, told apart by its
  cards' `owned_by: "tensorrt_llm"`.
A server none of these describe is unknown (None): the caller asks for `--engine NAME
--engine-version V`. Nothing here raises; an endpoint that does not answer is skipped.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from infermeter.bench.client.small_get import small_get
from infermeter.calculators.json_text import json_loads

ENGINES = ("vllm", "sglang", "tgi", "llama.cpp", "tensorrt-llm")


@dataclass(frozen=True)
class ServerFacts:
    """What a server says about itself; None where it does not say."""

    engine: str
    version: str | None
    served_model: str | None = None
    model_source: str | None = None
    max_model_len: int | None = None
    read_from: tuple[str, ...] = ()


@dataclass(frozen=True)
class _Answer:
    body: Any
    server_header: str | None


def _get(url: str, timeout_s: float) -> _Answer | None:
    answer = small_get(url, timeout_s)
    if answer is None:
        return None
    try:
        body = json_loads(answer.body)
    except ValueError:
        body = None
    return _Answer(body, answer.server_header)


def _text(value: Any) -> str | None:
    return str(value) if isinstance(value, str | int | float) and str(value) else None


def _int(value: Any) -> int | None:
    return value if isinstance(value, int) and not isinstance(value, bool) and value > 0 else None


def _first_card(answer: _Answer | None) -> dict[str, Any]:
    if answer is None or not isinstance(answer.body, dict):
        return {}
    data = answer.body.get("data")
    if isinstance(data, list) and data and isinstance(data[0], dict):
        return data[0]
    return {}


@dataclass(frozen=True)
class _Probe:
    """The endpoint's root and what its `/v1/models` said, handed to each engine's check."""

    root: str
    timeout_s: float
    card: dict[str, Any]
    models: _Answer | None

    def json_object(self, path: str) -> dict[str, Any] | None:
        """The JSON object the route answers, or None (no answer, not JSON, not an object)."""
        answer = _get(self.root + path, self.timeout_s)
        body = answer.body if answer is not None else None
        return body if isinstance(body, dict) else None


def identify_server(url: str, timeout_s: float = 5.0) -> ServerFacts | None:
    """The engine at `url` and what it reports (see the module docstring), or None."""
    root = url.rstrip("/")
    models = _get(root + "/v1/models", timeout_s)
    card = _first_card(models)
    served = _text(card.get("id"))
    probe = _Probe(root, timeout_s, card, models)
    for identify in (_sglang, _tgi, _llama_cpp, _version_route):
        facts = identify(probe)
        if facts is not None:
            read_from = ("/v1/models", *facts.read_from) if card else facts.read_from
            return ServerFacts(
                engine=facts.engine,
                version=facts.version,
                served_model=facts.served_model or served,
                model_source=facts.model_source or _text(card.get("root")) or None,
                max_model_len=facts.max_model_len or _int(card.get("max_model_len")),
                read_from=read_from,
            )
    return None


def _sglang(probe: _Probe) -> ServerFacts | None:
    for path in ("/server_info", "/get_server_info"):
        body = probe.json_object(path)
        if body is not None and "model_path" in body and "version" in body:
            served = body.get("served_model_name")
            return ServerFacts(
                engine="sglang",
                version=_text(body.get("version")),
                served_model=_text(served),
                model_source=_text(body.get("model_path")),
                max_model_len=_int(body.get("context_length")),
                read_from=(path,),
            )
    return None


def _tgi(probe: _Probe) -> ServerFacts | None:
    body = probe.json_object("/info")
    if body is None or "model_id" not in body or "version" not in body:
        return None
    if body.get("router") != "text-generation-router" and "max_total_tokens" not in body:
        return None
    return ServerFacts(
        engine="tgi",
        version=_text(body.get("version")),
        served_model=_text(body.get("model_id")),
        model_source=_text(body.get("model_id")),
        max_model_len=_int(body.get("max_total_tokens")),
        read_from=("/info",),
    )


def _llama_cpp(probe: _Probe) -> ServerFacts | None:
    body = probe.json_object("/props")
    said = probe.card.get("owned_by") == "llamacpp" or (
        probe.models is not None and (probe.models.server_header or "").startswith("llama.cpp")
    )
    if body is None or not ("build_info" in body or said):
        return None
    settings = body.get("default_generation_settings")
    context = settings.get("n_ctx") if isinstance(settings, dict) else None
    return ServerFacts(
        engine="llama.cpp",
        version=_text(body.get("build_info")),
        model_source=_text(body.get("model_path")),
        max_model_len=_int(context),
        read_from=("/props",),
    )


def _version_route(probe: _Probe) -> ServerFacts | None:
    body = probe.json_object("/version")
    if body is None or _text(body.get("version")) is None:
        return None
    owner = probe.card.get("owned_by")
    if owner == "tensorrt_llm":
        engine = "tensorrt-llm"
    elif owner in (None, "vllm"):
        engine = "vllm"
    else:
        return None  # a /version of some other server
    return ServerFacts(engine=engine, version=_text(body.get("version")), read_from=("/version",))
