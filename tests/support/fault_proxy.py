"""An HTTP forwarder in front of the S3 server that fails the requests a test picks.

Presigned URLs are signed for the host a client sends to, so the service signs
them for the proxy (``storage.s3_public_endpoint_url``); the proxy forwards each
request byte for byte, ``Host`` header included, so the store checks the very
signature the client was given. A request the test wants to fail has its body
read in full (as a real server would before answering) and gets ``503``.

    with FaultProxy(upstream, fail=lambda seen: seen.attempt == 1 and "partNumber=2" in seen.target) as proxy:
        ...  # presign against proxy.url
    proxy.seen  # every request, in order
"""

from __future__ import annotations

import http.client
import threading
from collections.abc import Callable
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import NamedTuple
from urllib.parse import urlsplit

_HOP_BY_HOP = frozenset({"connection", "keep-alive", "transfer-encoding", "proxy-connection"})


class Seen(NamedTuple):
    method: str
    target: str
    """Path and query string."""
    attempt: int
    """1 for the first request with this method and target, 2 for the next…"""
    failed: bool


class FaultProxy:
    def __init__(self, upstream: str, *, fail: Callable[[Seen], bool]) -> None:
        self.upstream = urlsplit(upstream)
        self.fail = fail
        self.seen: list[Seen] = []
        self._lock = threading.Lock()
        self._server = ThreadingHTTPServer(("127.0.0.1", 0), self._handler_class())
        self._server.daemon_threads = True
        self.url = f"http://127.0.0.1:{self._server.server_address[1]}"

    def __enter__(self) -> FaultProxy:
        threading.Thread(target=self._server.serve_forever, daemon=True).start()
        return self

    def __exit__(self, *_: object) -> None:
        self._server.shutdown()
        self._server.server_close()

    def attempts(self, method: str, fragment: str) -> int:
        """How many requests of ``method`` had ``fragment`` in their target."""
        return sum(1 for seen in self.seen if seen.method == method and fragment in seen.target)

    def _record(self, method: str, target: str) -> Seen:
        with self._lock:
            attempt = 1 + sum(1 for s in self.seen if (s.method, s.target) == (method, target))
            probe = Seen(method, target, attempt, failed=False)
            seen = probe._replace(failed=self.fail(probe))
            self.seen.append(seen)
            return seen

    def _handler_class(self) -> type[BaseHTTPRequestHandler]:
        proxy = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def log_message(self, format: str, *args: object) -> None:
                pass

            def _forward(self) -> None:
                length = int(self.headers.get("Content-Length") or 0)
                body = self.rfile.read(length) if length else b""
                seen = proxy._record(self.command, self.path)
                if seen.failed:
                    headers = [("Content-Type", "text/plain")]
                    if origin := self.headers.get("Origin"):
                        # As S3 does on errors, so a browser can read the status.
                        headers += [("Access-Control-Allow-Origin", origin), ("Vary", "Origin")]
                    self._answer(503, headers, b"injected fault")
                    return
                upstream = http.client.HTTPConnection(
                    proxy.upstream.hostname or "127.0.0.1", proxy.upstream.port, timeout=60
                )
                try:
                    upstream.putrequest(
                        self.command, self.path, skip_host=True, skip_accept_encoding=True
                    )
                    for name, value in self.headers.items():
                        if name.lower() not in _HOP_BY_HOP:
                            upstream.putheader(name, value)
                    upstream.endheaders(body)
                    response = upstream.getresponse()
                    data = response.read()
                    headers = [
                        (name, value)
                        for name, value in response.getheaders()
                        if name.lower() not in _HOP_BY_HOP | {"content-length"}
                    ]
                    self._answer(response.status, headers, data)
                finally:
                    upstream.close()

            def _answer(self, status: int, headers: list[tuple[str, str]], body: bytes) -> None:
                self.send_response(status)
                for name, value in headers:
                    self.send_header(name, value)
                self.send_header("Content-Length", str(len(body)))
                self.end_headers()
                if self.command != "HEAD":
                    self.wfile.write(body)

            # http.server dispatches on these names.
            do_GET = do_PUT = do_POST = do_HEAD = do_DELETE = do_OPTIONS = _forward  # noqa: N815

        return Handler
