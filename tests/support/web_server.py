"""A loopback HTTP server that plays a web site (URL imports, hostile pages), and counts who came."""

from __future__ import annotations

import contextlib
import threading
import time
from collections.abc import Callable
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import NamedTuple


class Reply(NamedTuple):
    status: int = 200
    headers: dict[str, str] = {}
    body: bytes = b""
    trickle_seconds: float = 0.0
    """Send the body one byte at a time, this long apart (a slow server)."""
    stream: bool = False
    """Send the body without a Content-Length (chunked), as a streaming server does."""


Route = Callable[[str, dict[str, str]], Reply]


class WebServer:
    """Serves ``routes[path]`` on 127.0.0.1; records each request's path and Host header (and
    in ``headers``, every header of each request)."""

    def __init__(self, routes: dict[str, Reply | Route]) -> None:
        self.routes = routes
        self.requests: list[tuple[str, str]] = []
        self.headers: list[dict[str, str]] = []
        self.connections = 0
        server = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def setup(self) -> None:
                server.connections += 1
                super().setup()

            def do_GET(self) -> None:
                headers = {key.lower(): value for key, value in self.headers.items()}
                server.requests.append((self.path, headers.get("host", "")))
                server.headers.append(headers)
                route = server.routes.get(self.path.split("?", 1)[0])
                reply = (
                    Reply(404, {"Content-Type": "text/plain"}, b"no")
                    if route is None
                    else route
                    if isinstance(route, Reply)
                    else route(self.path, headers)
                )
                self.send_response(reply.status)
                for key, value in reply.headers.items():
                    self.send_header(key, value)
                if reply.stream:
                    self.send_header("Transfer-Encoding", "chunked")
                else:
                    self.send_header("Content-Length", str(len(reply.body)))
                self.send_header("Connection", "close")
                self.end_headers()
                with contextlib.suppress(BrokenPipeError, ConnectionResetError):
                    self._send_body(reply)

            def _send_body(self, reply: Reply) -> None:
                if reply.stream:
                    step = 64 * 1024
                    for start in range(0, len(reply.body), step):
                        chunk = reply.body[start : start + step]
                        self.wfile.write(f"{len(chunk):x}\r\n".encode() + chunk + b"\r\n")
                    self.wfile.write(b"0\r\n\r\n")
                elif reply.trickle_seconds:
                    for byte in reply.body:
                        self.wfile.write(bytes([byte]))
                        self.wfile.flush()
                        time.sleep(reply.trickle_seconds)
                else:
                    self.wfile.write(reply.body)

            def log_message(self, *args: object) -> None:
                pass

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.server.daemon_threads = True
        self.port = self.server.server_address[1]
        self.url = f"http://127.0.0.1:{self.port}"
        threading.Thread(target=self.server.serve_forever, daemon=True).start()

    def close(self) -> None:
        self.server.shutdown()
        self.server.server_close()
