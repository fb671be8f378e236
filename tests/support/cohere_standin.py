"""A local HTTP server that speaks Cohere's ``POST /v2/rerank`` wire format.

The real ``cohere`` SDK talks real HTTP to it, so tests exercise our client,
the SDK and the network path together, and only the model is replaced: scores
are deterministic token overlap between query and document. A test can switch
the server into a failure mode and read back every request it received.

Modes: ``"ok"``, ``"500"``, ``"429"`` (with ``Retry-After``), ``"garbage"``
(a 200 whose body is not JSON), ``"stall"`` (sleep before answering) and
``"flaky"`` (HTTP 503 for the first ``failures`` calls, then ok).

Run by hand: ``python -m tests.support.cohere_standin --port 8089``.
"""

from __future__ import annotations

import argparse
import contextlib
import json
import re
import threading
import uuid
from dataclasses import dataclass, field
from http import HTTPStatus
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from types import TracebackType
from typing import Any

MODES = ("ok", "500", "429", "garbage", "stall", "flaky")

_WORD = re.compile(r"\w+")


def relevance(query: str, document: str) -> float:
    """Share of the query's distinct words that occur in the document, in [0, 1]."""
    query_words = set(_WORD.findall(query.lower()))
    if not query_words:
        return 0.0
    return len(query_words & set(_WORD.findall(document.lower()))) / len(query_words)


@dataclass(frozen=True)
class RecordedRequest:
    """One request as the stand-in received it."""

    method: str
    path: str
    headers: dict[str, str]
    """Header names in lower case."""
    body: Any
    """The decoded JSON body, or ``None`` when it was not JSON."""


@dataclass
class _State:
    mode: str = "ok"
    stall_seconds: float = 30.0
    retry_after: float = 0.0
    failures: int = 2
    failures_served: int = 0
    requests: list[RecordedRequest] = field(default_factory=list)


class CohereStandin:
    """The server. Start it with ``with CohereStandin() as standin:`` or :meth:`start`."""

    def __init__(self, host: str = "127.0.0.1", port: int = 0) -> None:
        self._state = _State()
        self._lock = threading.Lock()
        self._stopping = threading.Event()
        self._server = ThreadingHTTPServer((host, port), _make_handler(self))
        self._server.daemon_threads = True
        self._thread: threading.Thread | None = None

    @property
    def url(self) -> str:
        """Base URL to hand the SDK (``base_url=``)."""
        host, port = self._server.server_address[:2]
        return f"http://{host!s}:{port}"

    @property
    def port(self) -> int:
        return int(self._server.server_address[1])

    def set_mode(
        self,
        mode: str,
        *,
        stall_seconds: float | None = None,
        retry_after: float | None = None,
        failures: int | None = None,
    ) -> None:
        """Switch behaviour for the following requests (also resets the flaky counter)."""
        if mode not in MODES:
            raise ValueError(f"unknown mode {mode!r}; choose one of {', '.join(MODES)}")
        with self._lock:
            self._state.mode = mode
            self._state.failures_served = 0
            if stall_seconds is not None:
                self._state.stall_seconds = stall_seconds
            if retry_after is not None:
                self._state.retry_after = retry_after
            if failures is not None:
                self._state.failures = failures

    @property
    def requests(self) -> list[RecordedRequest]:
        """Every request received so far, oldest first (a copy)."""
        with self._lock:
            return list(self._state.requests)

    @property
    def calls(self) -> int:
        with self._lock:
            return len(self._state.requests)

    def start(self) -> CohereStandin:
        self._thread = threading.Thread(
            target=self._server.serve_forever,
            kwargs={"poll_interval": 0.05},  # so stop() returns quickly
            name="cohere-standin",
            daemon=True,
        )
        self._thread.start()
        return self

    def stop(self) -> None:
        self._stopping.set()  # wakes stalled handlers
        self._server.shutdown()
        self._server.server_close()
        if self._thread is not None:
            self._thread.join(timeout=5)

    def __enter__(self) -> CohereStandin:
        return self.start()

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        traceback: TracebackType | None,
    ) -> None:
        self.stop()

    def _record(self, request: RecordedRequest) -> tuple[str, _State]:
        """Store the request; return the mode that applies to it and a state snapshot."""
        with self._lock:
            state = self._state
            state.requests.append(request)
            mode = state.mode
            if mode == "flaky":
                if state.failures_served < state.failures:
                    state.failures_served += 1
                    mode = "503"
                else:
                    mode = "ok"
            snapshot = _State(
                mode=mode,
                stall_seconds=state.stall_seconds,
                retry_after=state.retry_after,
                failures=state.failures,
            )
            return mode, snapshot


def start_cohere_standin() -> CohereStandin:
    """A started stand-in; call ``stop()`` when done (or use it as a context manager)."""
    return CohereStandin().start()


def _rerank_reply(body: Any) -> dict[str, Any]:
    query = str(body.get("query", ""))
    documents = [str(document) for document in body.get("documents", [])]
    scored = sorted(
        ((index, relevance(query, document)) for index, document in enumerate(documents)),
        key=lambda pair: (-pair[1], pair[0]),
    )
    top_n = body.get("top_n")
    if isinstance(top_n, int):
        scored = scored[:top_n]
    return {
        "id": str(uuid.uuid4()),
        "results": [{"index": index, "relevance_score": score} for index, score in scored],
        "meta": {"api_version": {"version": "2"}, "billed_units": {"search_units": 1}},
    }


def _make_handler(standin: CohereStandin) -> type[BaseHTTPRequestHandler]:
    class Handler(BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1"

        def do_POST(self) -> None:
            length = int(self.headers.get("Content-Length") or 0)
            raw = self.rfile.read(length)
            try:
                body: Any = json.loads(raw)
            except ValueError:
                body = None
            mode, state = standin._record(
                RecordedRequest(
                    method="POST",
                    path=self.path,
                    headers={name.lower(): value for name, value in self.headers.items()},
                    body=body,
                )
            )
            # A client that timed out has gone away; there is nobody to answer.
            with contextlib.suppress(BrokenPipeError, ConnectionResetError):
                self._answer(mode, state, body)

        def _answer(self, mode: str, state: _State, body: Any) -> None:
            if self.path.rstrip("/") != "/v2/rerank":
                self._send_json(HTTPStatus.NOT_FOUND, {"message": f"no route {self.path}"})
                return
            if not isinstance(body, dict):
                self._send_json(HTTPStatus.BAD_REQUEST, {"message": "body must be a JSON object"})
                return
            if mode == "stall":
                standin._stopping.wait(state.stall_seconds)
                mode = "ok"
            if mode == "ok":
                self._send_json(HTTPStatus.OK, _rerank_reply(body))
            elif mode == "500":
                self._send_json(HTTPStatus.INTERNAL_SERVER_ERROR, {"message": "internal error"})
            elif mode == "503":
                self._send_json(HTTPStatus.SERVICE_UNAVAILABLE, {"message": "try again"})
            elif mode == "429":
                self._send_json(
                    HTTPStatus.TOO_MANY_REQUESTS,
                    {"message": "too many requests"},
                    extra_headers={"Retry-After": f"{state.retry_after:g}"},
                )
            elif mode == "garbage":
                self._send_bytes(HTTPStatus.OK, b'{"results": [{"index": 0, "relev')

        def _send_json(
            self,
            status: HTTPStatus,
            payload: dict[str, Any],
            extra_headers: dict[str, str] | None = None,
        ) -> None:
            self._send_bytes(status, json.dumps(payload).encode(), extra_headers)

        def _send_bytes(
            self, status: HTTPStatus, data: bytes, extra_headers: dict[str, str] | None = None
        ) -> None:
            self.send_response(status)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(data)))
            for name, value in (extra_headers or {}).items():
                self.send_header(name, value)
            self.end_headers()
            self.wfile.write(data)

        def log_message(self, format: str, *args: Any) -> None:
            """Silence the per-request log lines."""

    return Handler


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    parser.add_argument("--host", default="127.0.0.1")
    parser.add_argument("--port", type=int, default=8089)
    parser.add_argument("--mode", choices=MODES, default="ok")
    args = parser.parse_args(argv)
    standin = CohereStandin(args.host, args.port)
    standin.set_mode(args.mode)
    print(f"Cohere stand-in on {standin.url} (mode {args.mode}); Ctrl-C stops it", flush=True)
    try:
        standin._server.serve_forever()
    except KeyboardInterrupt:
        pass
    finally:
        standin._server.server_close()


if __name__ == "__main__":
    main()
