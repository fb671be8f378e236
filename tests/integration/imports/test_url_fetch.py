"""The URL fetcher against real sockets: refused URLs, redirects checked hop by hop, content
types, size and time limits, and the connection going to the address checked (the address
rule itself, one row per spelling: tests/unit/service/services/test_url_addresses.py)."""

from __future__ import annotations

import gzip
import ipaddress
import re
import threading
import zlib
from collections.abc import Iterator

import pytest

from service.errors import (
    UrlNotAllowed,
    UrlTooLarge,
    UrlUnreachable,
    UrlUnsupportedEncoding,
    UrlUnsupportedType,
)
from service.services.url_addresses import IPAddress
from service.services.url_fetch import FetchPolicy, check_url, fetch
from tests.support.compression import (
    MB,
    gzip_of_zeros,
    gzip_that_decodes_to_nothing,
    nested_gzip_bomb,
)
from tests.support.web_server import Reply, WebServer

pytestmark = pytest.mark.anyio

PUBLIC_ONLY = FetchPolicy(
    allow_http=False,
    allow_private_networks=False,
    max_redirects=3,
    timeout_seconds=5.0,
    max_bytes=1_000_000,
)
"""The defaults: what a hosted service runs with."""

LOCAL_TESTING = PUBLIC_ONLY._replace(allow_http=True, allow_private_networks=True)
"""What a self-hoster (and these tests) can allow: plain HTTP to their own machines."""

MARKDOWN = Reply(200, {"Content-Type": "text/markdown; charset=utf-8"}, b"# Notes\n\nGlaciers.\n")


@pytest.fixture
def site() -> Iterator[WebServer]:
    server = WebServer({"/notes.md": MARKDOWN})
    try:
        yield server
    finally:
        server.close()


@pytest.mark.parametrize(
    "url",
    [
        "http://example.com/a.pdf",  # https only by default
        "ftp://example.com/a.pdf",
        "file:///etc/passwd",
        "https://user:secret@example.com/a.pdf",
        "https:///a.pdf",
        "https://exa mple.com/a.pdf",
        "https://example.com:99999/a.pdf",
        "https://169.254.169.254/latest/meta-data/",
        "https://[::ffff:127.0.0.1]/",
        "https://[::ffff:7f00:1]/",
        "https://[::7f00:1]/",  # IPv4-compatible spellings of 127.0.0.1 (#24)
        "https://[::127.0.0.1]/",
        "https://[::ffff:0:7f00:1]/",  # IPv4-translated
        "https://[64:ff9b:1::7f00:1]/",  # local-use NAT64
        "https://127.0.0.1/",
        "https://0x7f.1/",  # an obfuscated 127.0.0.1 does not resolve to anything else
        "https://" + "a" * 2100 + ".com/",
    ],
)
async def test_refused_addresses_are_refused_before_any_connection(url: str) -> None:
    def no_resolver(host: str, port: int) -> list[IPAddress]:
        if host == "0x7f.1":
            return [ipaddress.ip_address("127.0.0.1")]  # what libc makes of it
        raise AssertionError(f"resolved {host}: the URL should have been refused before")

    with pytest.raises(UrlNotAllowed):
        await check_url(url, PUBLIC_ONLY, no_resolver)


async def test_a_host_with_any_private_answer_is_refused() -> None:
    def split_horizon(host: str, port: int) -> list[IPAddress]:
        return [ipaddress.ip_address("93.184.215.14"), ipaddress.ip_address("10.0.0.5")]

    with pytest.raises(UrlNotAllowed, match=re.escape("10.0.0.5")):
        await check_url("https://docs.example.com/a.pdf", PUBLIC_ONLY, split_horizon)


async def test_an_unknown_host_is_unreachable() -> None:
    with pytest.raises(UrlUnreachable):
        await check_url("https://no-such-host.invalid/a.pdf", PUBLIC_ONLY)


async def test_a_refused_address_never_gets_a_connection(site: WebServer) -> None:
    with pytest.raises(UrlNotAllowed):
        await fetch(f"{site.url}/notes.md", PUBLIC_ONLY._replace(allow_http=True))
    assert site.connections == 0


async def test_the_connection_goes_to_the_address_checked_with_the_host_in_the_header(
    site: WebServer,
) -> None:
    answers = iter(["127.0.0.1", "10.255.255.1"])  # a rebinding DNS: a second answer differs

    def rebinding(host: str, port: int) -> list[IPAddress]:
        return [ipaddress.ip_address(next(answers))]

    fetched = await fetch(f"http://docs.internal:{site.port}/notes.md", LOCAL_TESTING, rebinding)
    assert fetched.data == MARKDOWN.body
    assert fetched.content_type == "text/markdown"
    assert site.requests == [("/notes.md", f"docs.internal:{site.port}")]


async def test_a_redirect_to_cloud_metadata_is_refused_at_that_hop(site: WebServer) -> None:
    site.routes["/moved"] = Reply(302, {"Location": "http://169.254.169.254/latest/meta-data/"})
    with pytest.raises(UrlNotAllowed, match=re.escape("169.254.169.254")):
        await fetch(f"{site.url}/moved", LOCAL_TESTING)
    assert [path for path, _ in site.requests] == ["/moved"]


async def test_redirects_are_followed_by_hand_up_to_the_limit(site: WebServer) -> None:
    site.routes["/a"] = Reply(301, {"Location": "/b"})
    site.routes["/b"] = Reply(307, {"Location": f"{site.url}/notes.md"})
    fetched = await fetch(f"{site.url}/a", LOCAL_TESTING)
    assert fetched.data == MARKDOWN.body
    assert fetched.final_url == f"{site.url}/notes.md"
    site.routes["/loop"] = Reply(302, {"Location": "/loop"})
    with pytest.raises(UrlUnreachable, match="redirected more than 3 times"):
        await fetch(f"{site.url}/loop", LOCAL_TESTING)
    assert sum(path == "/loop" for path, _ in site.requests) == 4


@pytest.mark.parametrize(
    "content_type",
    ["image/svg+xml", "image/gif", "application/x-msdownload", "application/zip", ""],
)
async def test_an_unsupported_content_type_is_refused_before_the_body(
    site: WebServer, content_type: str
) -> None:
    headers = {"Content-Type": content_type} if content_type else {}
    site.routes["/file"] = Reply(200, headers, b"\x89PNG...." * 1000)
    with pytest.raises(UrlUnsupportedType):
        await fetch(f"{site.url}/file", LOCAL_TESTING)


async def test_a_generic_content_type_is_accepted_with_a_supported_extension(
    site: WebServer,
) -> None:
    site.routes["/paper.pdf"] = Reply(200, {"Content-Type": "application/octet-stream"}, b"%PDF-")
    assert (await fetch(f"{site.url}/paper.pdf", LOCAL_TESTING)).data == b"%PDF-"


async def test_an_over_size_body_is_refused_by_its_length_and_while_streaming(
    site: WebServer,
) -> None:
    big = b"a" * 1_000_001
    site.routes["/declared.txt"] = Reply(200, {"Content-Type": "text/plain"}, big)
    site.routes["/streamed.txt"] = Reply(200, {"Content-Type": "text/plain"}, big, stream=True)
    with pytest.raises(UrlTooLarge):
        await fetch(f"{site.url}/declared.txt", LOCAL_TESTING)
    with pytest.raises(UrlTooLarge):
        await fetch(f"{site.url}/streamed.txt", LOCAL_TESTING)


async def test_a_slow_body_hits_the_whole_fetch_deadline(site: WebServer) -> None:
    site.routes["/slow.txt"] = Reply(
        200, {"Content-Type": "text/plain"}, b"x" * 100, trickle_seconds=0.05
    )
    with pytest.raises(UrlUnreachable, match="within 1 seconds"):
        await fetch(f"{site.url}/slow.txt", LOCAL_TESTING._replace(timeout_seconds=1.0))


async def test_an_error_status_is_not_a_document(site: WebServer) -> None:
    with pytest.raises(UrlUnreachable, match="HTTP 404"):
        await fetch(f"{site.url}/missing.pdf", LOCAL_TESTING)


TEXT = b"# Notes\n\nGlaciers retreat; the firn compacts.\n" * 50


async def test_the_fetch_asks_for_the_document_uncompressed(site: WebServer) -> None:
    await fetch(f"{site.url}/notes.md", LOCAL_TESTING)
    assert site.headers[0]["accept-encoding"] == "identity"


@pytest.mark.parametrize(
    ("encoding", "body"),
    [
        ("gzip, gzip", nested_gzip_bomb()),  # 590 bytes that decode to 256 MiB
        ("gzip,deflate", gzip.compress(zlib.compress(TEXT))),
        ("identity, gzip, x-gzip", gzip.compress(gzip.compress(TEXT))),
        ("br", b"\x0b\x02\x80hello\x03"),
        ("zstd", b"(\xb5/\xfd"),
        ("compress", b"\x1f\x9d"),
        ("chunked", TEXT),
    ],
    ids=["gzip-gzip-bomb", "gzip-deflate", "gzip-x-gzip", "br", "zstd", "compress", "chunked"],
)
async def test_nested_or_unknown_content_encodings_are_refused_before_the_body(
    site: WebServer, encoding: str, body: bytes
) -> None:
    site.routes["/packed.md"] = Reply(
        200, {"Content-Type": "text/markdown", "Content-Encoding": encoding}, body
    )
    with pytest.raises(UrlUnsupportedEncoding) as refused:
        await fetch(f"{site.url}/packed.md", LOCAL_TESTING)
    assert refused.value.code == "url_unsupported_encoding"
    assert "gzip and deflate" in refused.value.message or "more than once" in refused.value.message


@pytest.mark.parametrize(
    ("encoding", "body"),
    [
        ("gzip", gzip.compress(TEXT)),
        ("x-gzip", gzip.compress(TEXT)),
        ("gzip", gzip.compress(TEXT[:100]) + gzip.compress(TEXT[100:])),  # two members
        ("deflate", zlib.compress(TEXT)),
        ("deflate", zlib.compress(TEXT)[2:-4]),  # raw deflate, as some servers send it
        ("identity", TEXT),
        ("", TEXT),
    ],
    ids=["gzip", "x-gzip", "gzip-members", "deflate", "raw-deflate", "identity", "none"],
)
async def test_one_gzip_or_deflate_coding_is_decoded(
    site: WebServer, encoding: str, body: bytes
) -> None:
    headers = {"Content-Type": "text/markdown"}
    if encoding:
        headers["Content-Encoding"] = encoding
    site.routes["/packed.md"] = Reply(200, headers, body, stream=True)
    assert (await fetch(f"{site.url}/packed.md", LOCAL_TESTING)).data == TEXT


async def test_a_gzip_bomb_is_cut_at_the_size_limit_once_decoded(site: WebServer) -> None:
    bomb = gzip_of_zeros(64 * MB)  # 64 KB on the wire
    site.routes["/bomb.md"] = Reply(
        200, {"Content-Type": "text/markdown", "Content-Encoding": "gzip"}, bomb
    )
    with pytest.raises(UrlTooLarge, match="once decompressed"):
        await fetch(f"{site.url}/bomb.md", LOCAL_TESTING)


async def test_a_compressed_stream_that_never_decodes_a_byte_is_cut_at_the_limit(
    site: WebServer,
) -> None:
    site.routes["/nothing.md"] = Reply(
        200,
        {"Content-Type": "text/markdown", "Content-Encoding": "gzip"},
        gzip_that_decodes_to_nothing(2 * MB),
        stream=True,
    )
    with pytest.raises(UrlTooLarge):
        await fetch(f"{site.url}/nothing.md", LOCAL_TESTING)


async def test_a_resolver_that_never_answers_hits_the_deadline() -> None:
    answer = threading.Event()

    def stuck(host: str, port: int) -> list[IPAddress]:
        answer.wait(30)
        return [ipaddress.ip_address("93.184.215.14")]

    quick = PUBLIC_ONLY._replace(timeout_seconds=0.5)
    try:
        with pytest.raises(UrlUnreachable, match=re.escape("did not resolve within 0.5 seconds")):
            await check_url("https://slow.example/a.pdf", quick, stuck)
        with pytest.raises(UrlUnreachable, match=re.escape("within 0.5 seconds")):
            await fetch("https://slow.example/a.pdf", quick, stuck)
    finally:
        answer.set()
