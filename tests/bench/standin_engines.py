"""STAND-INS for the OpenAI-compatible servers other than vLLM (none of them runs a model).

Each is the bench tests' fake OpenAI server (streaming completions) plus the endpoints through
which the real engine says who it is, with the field names and values its own source uses:
- `StandinSglang`: `/get_server_info` (and `/server_info`): server arguments + `version`;
  `/v1/models` cards `owned_by: "sglang"` with `root` and `max_model_len`
  (sglang python/sglang/srt/entrypoints/http_server.py, openai/protocol.py);
- `StandinTgi`: `/info` (text-generation-inference router/src/lib.rs `Info`);
- `StandinLlamaCpp`: `/props` with `build_info`, `model_path`, `default_generation_settings`,
  `/health` `{"status": "ok"}`, cards `owned_by: "llamacpp"`, header `Server: llama.cpp`
  (llama.cpp tools/server);
- `StandinTrtllm`: `/version` `{"version"}` (as vLLM's) and cards `owned_by: "tensorrt_llm"`
  (TensorRT-LLM tensorrt_llm/serve/openai_server.py, openai_protocol.py `ModelCard`);
- `StandinVllmCard`: vLLM's `/version` and its cards (`owned_by: "vllm"`, `root`,
  `max_model_len`).
"""

from __future__ import annotations

import time
from typing import Any

from aiohttp import web
from fake_openai_server import FakeOpenAIServer, FakeServerConfig


class _Standin(FakeOpenAIServer):
    owned_by = "standin"
    extra_card: dict[str, Any] = {}  # noqa: RUF012 (read only)

    def __init__(self, model: str = "fake/model", **config: Any) -> None:
        # 30 ms per token: a pace a GPU can keep, so a result passes the registry's physics.
        timing = {"ttft_s": 0.005, "itl_s": 0.03, "version": None} | config
        super().__init__(FakeServerConfig(model=model, **timing))

    def card(self) -> dict[str, Any]:
        return {
            "id": self.config.model,
            "object": "model",
            "created": int(time.time()),
            "owned_by": self.owned_by,
            **self.extra_card,
        }

    async def _models(self, request: web.Request) -> web.Response:
        return web.json_response({"object": "list", "data": [self.card()]})


class StandinVllmCard(_Standin):
    owned_by = "vllm"
    version = "0.11.0"

    def card(self) -> dict[str, Any]:
        return {**super().card(), "root": self.config.model, "parent": None,
                "max_model_len": 8192, "permission": []}  # fmt: skip

    def __init__(self, model: str, **config: Any) -> None:
        super().__init__(model, **config)
        self.config.version = self.version  # answered at /version, as the engine does


class StandinSglang(_Standin):
    owned_by = "sglang"
    version = "0.5.4"

    def __init__(self, model: str, model_path: str, **config: Any) -> None:
        super().__init__(model, **config)
        self.model_path = model_path

    def card(self) -> dict[str, Any]:
        return {**super().card(), "root": self.model_path, "parent": None,
                "max_model_len": 32768}  # fmt: skip

    def add_routes(self, app: web.Application) -> None:
        super().add_routes(app)
        app.router.add_get("/get_server_info", self._server_info)
        app.router.add_get("/server_info", self._server_info)
        app.router.add_get("/get_model_info", self._model_info)

    async def _server_info(self, request: web.Request) -> web.Response:
        return web.json_response(
            {
                "model_path": self.model_path,
                "tokenizer_path": self.model_path,
                "served_model_name": self.config.model,
                "context_length": 32768,
                "tp_size": 1,
                "dp_size": 1,
                "mem_fraction_static": 0.88,
                "max_total_num_tokens": 412_000,
                "max_req_input_len": 32762,
                "internal_states": [{"last_gen_throughput": 0.0}],
                "version": self.version,
            }
        )

    async def _model_info(self, request: web.Request) -> web.Response:
        return web.json_response(
            {
                "model_path": self.model_path,
                "tokenizer_path": self.model_path,
                "is_generation": True,
            }
        )


class StandinTgi(_Standin):
    version = "3.3.6"

    def card(self) -> dict[str, Any]:
        return {**super().card(), "owned_by": self.config.model}  # TGI names the model

    def add_routes(self, app: web.Application) -> None:
        super().add_routes(app)
        app.router.add_get("/info", self._info)

    async def _info(self, request: web.Request) -> web.Response:
        return web.json_response(
            {
                "model_id": self.config.model,
                "model_sha": "0e9e39f249a16976918f6564b8830bc894c89659",
                "model_pipeline_tag": "text-generation",
                "max_concurrent_requests": 128,
                "max_best_of": 2,
                "max_stop_sequences": 4,
                "max_input_tokens": 8191,
                "max_total_tokens": 8192,
                "validation_workers": 2,
                "max_client_batch_size": 4,
                "router": "text-generation-router",
                "version": self.version,
                "sha": "7f5f2a4c0bd0f7c8c8d5a0e1b2c3d4e5f6a7b8c9",
                "docker_label": "sha-7f5f2a4",
            }
        )


class StandinLlamaCpp(_Standin):
    owned_by = "llamacpp"
    build_info = "b6200-5f1c2a3b"

    def __init__(self, model: str, model_path: str, **config: Any) -> None:
        super().__init__(model, **config)
        self.model_path = model_path

    def card(self) -> dict[str, Any]:
        return {**super().card(), "meta": {"vocab_type": 2, "n_vocab": 128256,
                "n_ctx_train": 131072, "n_embd": 4096, "n_params": 8030261248,
                "size": 4920734208}}  # fmt: skip

    def add_routes(self, app: web.Application) -> None:
        super().add_routes(app)
        app.router.add_get("/props", self._props)

    async def _models(self, request: web.Request) -> web.Response:
        return web.json_response(
            {"object": "list", "data": [self.card()]}, headers={"Server": "llama.cpp"}
        )

    async def _health(self, request: web.Request) -> web.Response:
        return web.json_response({"status": "ok"}, headers={"Server": "llama.cpp"})

    async def _props(self, request: web.Request) -> web.Response:
        return web.json_response(
            {
                "default_generation_settings": {"n_ctx": 4096, "params": {"top_k": 40}},
                "total_slots": 4,
                "model_path": self.model_path,
                "modalities": {"vision": False, "audio": False},
                "chat_template": "{{ messages }}",
                "bos_token": "<|begin_of_text|>",
                "eos_token": "<|eot_id|>",
                "build_info": self.build_info,
            },
            headers={"Server": "llama.cpp"},
        )


class StandinTrtllm(_Standin):
    owned_by = "tensorrt_llm"
    version = "1.0.0"

    def __init__(self, model: str, **config: Any) -> None:
        super().__init__(model, **config)
        self.config.version = self.version  # answered at /version, as the engine does
