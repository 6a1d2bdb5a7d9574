"""What a result may say about a server it did not launch (`bench run --endpoint`).

- `endpoint_is_local`: whether the endpoint's host is this machine, so that this machine's
  GPUs, CPU and memory are the server's (otherwise only the client's host is described, and no
  GPU telemetry is read unless `--gpu-indices` names GPUs on purpose).
- `engine_of`: the engine's name and version: `--engine`/`--engine-version` when given, else
  what the server says about itself (`bench.launch.engines.identify_server`); a server that says
  nothing is asked to be named.
- `answer_problem`: why an endpoint answers nothing at all (naming an engine would not help), so
  that its engine's routes are not asked one by one, and `engine_of` refuses it.
- `match_served_model`: the catalog entry claimed against the weights the server says it
  serves. The same repository passes; another catalog model's repository is refused (the
  result would be filed under the wrong model); an unknown repository (a quantized or
  fine-tuned variant) is recorded as the repository served, with a note; a local path or
  a server that does not say is trusted, with a note.
"""

from __future__ import annotations

import http.client
import ipaddress
import socket
import urllib.parse
from collections.abc import Iterable

from infermeter.bench.client.client import refuse_unanswered
from infermeter.bench.client.transport import url_port
from infermeter.bench.errors import BenchConfigError, EndpointError
from infermeter.bench.launch.engines import ServerFacts
from infermeter.bench.result.model_entry import HF_REPOSITORY_ID


def endpoint_is_local(url: str) -> bool:
    """True when the endpoint's host is a loopback address or this machine's own name."""
    host = urllib.parse.urlsplit(url).hostname or ""
    if host in ("localhost", socket.gethostname(), socket.getfqdn()):
        return True
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:
        return False


def answer_problem(url: str, timeout_s: float = 5.0) -> str | None:
    """Why `url` gives no HTTP answer to `GET /v1/models` (any status is an answer): nothing
    accepts a connection, what does sends nothing within `timeout_s` (a stuck proxy, a service
    that waits for its client to speak first) or no HTTP; None when it answers. Straight to the
    host, as the benchmark's requests go (no proxy from the environment)."""
    parts = urllib.parse.urlsplit(url)
    try:
        port = url_port(parts)
    except ValueError:
        return f"{parts.netloc!r} has no valid port"
    secure = parts.scheme == "https"
    kind = http.client.HTTPSConnection if secure else http.client.HTTPConnection
    connection = kind(parts.hostname or "", port, timeout=timeout_s)
    try:
        connection.request("GET", parts.path.rstrip("/") + "/v1/models")
        connection.getresponse().close()
    except TimeoutError:
        return f"it took the connection but sent no answer within {timeout_s:g} s"
    except http.client.HTTPException:
        return "it answered, but not in HTTP"
    except OSError as error:
        return error.strerror or str(error) or type(error).__name__
    finally:
        connection.close()
    return None


def engine_of(
    facts: ServerFacts | None,
    engine: str | None,
    engine_version: str | None,
    url: str,
    unanswered: str | None = None,
) -> tuple[str, str, list[str]]:
    """(name, version, notes) of the engine at `url` for the result file; `unanswered` is why
    the server answers nothing (`answer_problem`), refused once the options are known good."""
    if (engine is None) != (engine_version is None):
        raise BenchConfigError("--engine and --engine-version go together", "--engine")
    refuse_unanswered(url, unanswered)
    if engine is not None and engine_version is not None:
        notes = []
        if facts is not None and (facts.engine, facts.version) != (engine, engine_version):
            notes.append(
                f"note: {url} says it is {facts.engine} {facts.version or '(no version)'}; the "
                f"result says {engine} {engine_version} as given with --engine"
            )
        return engine, engine_version, notes
    if facts is None:
        raise EndpointError(
            f"{url} does not say which engine it is (no vLLM or TensorRT-LLM /version, SGLang "
            "/server_info, TGI /info or llama.cpp /props); pass --engine NAME --engine-version V",
            "--output",
        )
    if facts.version is None:
        raise EndpointError(
            f"{url} is {facts.engine} but does not say its version; pass --engine "
            f"{facts.engine} --engine-version V",
            "--output",
        )
    return facts.engine, facts.version, []


def served_repository(facts: ServerFacts | None) -> str | None:
    """The Hugging Face repository the server says it serves, when it names one."""
    if facts is None:
        return None
    for name in (facts.model_source, facts.served_model):
        if name is not None and HF_REPOSITORY_ID.match(name):
            return name
    return None


def match_served_model(
    facts: ServerFacts | None,
    model_id: str,
    catalog_repo: str,
    catalog: Iterable[tuple[str, str]],
    url: str,
) -> tuple[str, list[str]]:
    """The repository to record for `model_id` (catalog repository `catalog_repo`) and notes;
    `catalog` holds every (id, repository) of the model catalog. Raises BenchConfigError when
    the server serves another catalog model."""
    if facts is None:
        return catalog_repo, [
            f"note: {url} does not say which weights it serves; the result trusts --model-id "
            f"{model_id}"
        ]
    repository = served_repository(facts)
    if repository is None:
        shown = facts.model_source or facts.served_model or "nothing"
        return catalog_repo, [
            f"note: {url} serves {shown!r}, not a Hugging Face repository; the result trusts "
            f"--model-id {model_id} ({catalog_repo})"
        ]
    if repository.lower() == catalog_repo.lower():
        return repository, []
    others = [entry for entry, repo in catalog if repo.lower() == repository.lower()]
    if others:
        raise BenchConfigError(
            f"{model_id} is {catalog_repo}, but {url} serves {repository}, which is the "
            f"catalog's {others[0]}; pass --model-id {others[0]}",
            "--model-id",
        )
    return repository, [
        f"note: {url} serves {repository}, not the catalog's {catalog_repo} for {model_id} (a "
        f"quantized or fine-tuned variant?); the result records {repository} as the weights"
    ]
