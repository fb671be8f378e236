"""Fetch a document from a web address without letting the address reach inside.

A URL import makes the service itself open a connection, so every step an attacker could
steer is checked (server-side request forgery):

- the scheme is ``https`` (``http`` only with ``fetch.allow_http``), with no user info;
- the host is resolved once and **every** address it resolves to must be one the service
  may reach (:func:`service.services.url_addresses.address_refusal`: public, or the
  self-hoster's own networks with ``fetch.allow_private_networks``; an IPv6 spelling of an
  IPv4 address is judged by the IPv4 address);
- the connection goes to the address that was checked (the request names the host only in
  ``Host`` and TLS SNI, and the certificate is verified for the host), so a second DNS answer
  cannot swap in another address; no proxy from the environment is used;
- redirects are followed by hand, each hop checked again, at most ``fetch.max_redirects``;
- the response must declare a supported content type (or a generic one with a supported file
  extension), and its body is counted as it arrives and abandoned past the size limit, on
  the wire and once decoded (:mod:`service.services.url_body`: the fetch asks for
  ``identity``, and decodes one gzip or deflate coding at most, capped by the limit);
- one deadline, ``fetch.timeout_seconds``, covers the whole fetch, the DNS lookup included;
- the fetch runs on its own event loop in a worker thread, never on the caller's.

:func:`check_url` does every check that needs no connection; the import route runs it before
the document exists, so a refused address never costs a connection.
"""

from __future__ import annotations

import asyncio
import concurrent.futures
import contextlib
import ipaddress
import socket
import threading
from collections.abc import Callable, Sequence
from typing import NamedTuple, TypeVar
from urllib.parse import urljoin, urlsplit, urlunsplit

import httpx

from extract.detect import (
    ALLOWED_CONTENT_TYPES,
    EXTENSION_KINDS,
    GENERIC_CONTENT_TYPES,
    declared_kind,
)
from service.errors import UrlNotAllowed, UrlUnreachable, UrlUnsupportedType
from service.services.url_addresses import IPAddress, address_refusal
from service.services.url_body import ACCEPT_ENCODING, read_body

Resolver = Callable[[str, int], Sequence[IPAddress]]
_T = TypeVar("_T")

REDIRECT_STATUSES = frozenset({301, 302, 303, 307, 308})
MAX_URL_LENGTH = 2048
_GRACE_SECONDS = 1.0
"""How long past the deadline the caller waits for the fetch's thread to say so itself."""


class FetchPolicy(NamedTuple):
    """What a fetch may do; built from ``Settings.fetch`` and the upload size limit."""

    allow_http: bool
    allow_private_networks: bool
    max_redirects: int
    timeout_seconds: float
    max_bytes: int


class Target(NamedTuple):
    """A checked URL: where to connect, and what to call it on the wire."""

    url: str
    host: str
    port: int
    addresses: tuple[IPAddress, ...]


class Fetched(NamedTuple):
    data: bytes
    content_type: str
    final_url: str


def system_resolver(host: str, port: int) -> list[IPAddress]:
    """Every address ``host`` resolves to (may block: call it in a thread)."""
    infos = socket.getaddrinfo(host, port, type=socket.SOCK_STREAM)
    return list(
        dict.fromkeys(ipaddress.ip_address(str(info[4][0]).split("%", 1)[0]) for info in infos)
    )


def parse_url(url: str, policy: FetchPolicy) -> tuple[str, str, int]:
    """(scheme, host, port) of an acceptable URL, or :class:`UrlNotAllowed`."""
    if len(url) > MAX_URL_LENGTH:
        raise UrlNotAllowed(f"The address is longer than {MAX_URL_LENGTH} characters.")
    if any(ord(char) < 0x21 for char in url):
        raise UrlNotAllowed("The address contains spaces or control characters.")
    try:
        parts = urlsplit(url)
        port = parts.port
    except ValueError as exc:
        raise UrlNotAllowed(f"The address is not a valid URL: {exc}.") from exc
    scheme = parts.scheme.lower()
    allowed = ("https", "http") if policy.allow_http else ("https",)
    if scheme not in allowed:
        raise UrlNotAllowed(
            "Only https:// addresses can be imported."
            if not policy.allow_http
            else "Only http:// and https:// addresses can be imported."
        )
    if parts.username is not None or parts.password is not None:
        raise UrlNotAllowed("The address may not carry a user name or password.")
    host = (parts.hostname or "").rstrip(".")
    if not host:
        raise UrlNotAllowed("The address has no host.")
    return scheme, host, port or (443 if scheme == "https" else 80)


async def check_url(url: str, policy: FetchPolicy, resolve: Resolver = system_resolver) -> Target:
    """Every check of ``url`` that needs no connection: scheme, host, and each address."""
    _, host, port = parse_url(url, policy)
    try:
        literal: IPAddress | None = ipaddress.ip_address(host.strip("[]"))
    except ValueError:
        literal = None
    if literal is not None:
        addresses: Sequence[IPAddress] = [literal]
    else:
        try:
            addresses = await _in_daemon_thread(
                f"resolve {host}", policy.timeout_seconds, lambda: resolve(host, port)
            )
        except TimeoutError as exc:  # before OSError, of which it is one
            raise UrlUnreachable(
                f"The host {host!r} did not resolve within {policy.timeout_seconds:g} seconds."
            ) from exc
        except (OSError, UnicodeError) as exc:
            raise UrlUnreachable(f"The host {host!r} could not be found.") from exc
        if not addresses:
            raise UrlUnreachable(f"The host {host!r} has no address.")
    for address in addresses:
        why = address_refusal(address, allow_private=policy.allow_private_networks)
        if why is not None:
            raise UrlNotAllowed(
                f"{host!r} resolves to {address}, {why}; Shortlist does not fetch from there."
            )
    return Target(url=url, host=host, port=port, addresses=tuple(addresses))


async def _in_daemon_thread(name: str, seconds: float, call: Callable[[], _T]) -> _T:
    """``call()`` in a daemon thread of its own, given up (not stopped) after ``seconds``:
    :class:`TimeoutError`.

    Neither a DNS lookup nor a fetch's thread can be stopped from outside, so nothing waits
    for the thread: not an executor (an event loop's shutdown waits for its threads) nor
    anyio's worker threads (the interpreter's exit does). A fetch's thread ends at its own
    deadline anyway; a lookup, when the system's resolver gives up."""
    outcome: concurrent.futures.Future[_T] = concurrent.futures.Future()

    def run() -> None:
        try:
            result = call()
        except BaseException as exc:
            with contextlib.suppress(concurrent.futures.InvalidStateError):
                outcome.set_exception(exc)
        else:
            with contextlib.suppress(concurrent.futures.InvalidStateError):
                outcome.set_result(result)

    threading.Thread(target=run, name=name, daemon=True).start()
    return await asyncio.wait_for(asyncio.wrap_future(outcome), seconds)


async def fetch(url: str, policy: FetchPolicy, resolve: Resolver = system_resolver) -> Fetched:
    """The body of ``url`` after every check in the module docstring, within one deadline.

    The fetch runs on an event loop of its own in a thread of its own, so neither the network
    nor decoding the body ever holds up the caller's loop (under ``shortlist serve``, the
    API's). The thread keeps the deadline itself; the caller gives up on it
    :data:`_GRACE_SECONDS` later, should it not.
    """
    try:
        return await _in_daemon_thread(
            f"fetch {url[:80]}",
            policy.timeout_seconds + _GRACE_SECONDS,
            lambda: asyncio.run(_fetch_within_deadline(url, policy, resolve)),
        )
    except TimeoutError as exc:
        raise _deadline_passed(policy) from exc


def _deadline_passed(policy: FetchPolicy) -> UrlUnreachable:
    return UrlUnreachable(
        f"The address did not answer in full within {policy.timeout_seconds:g} seconds."
    )


async def _fetch_within_deadline(url: str, policy: FetchPolicy, resolve: Resolver) -> Fetched:
    try:
        async with asyncio.timeout(policy.timeout_seconds):
            return await _fetch(url, policy, resolve)
    except TimeoutError as exc:
        raise _deadline_passed(policy) from exc


async def _fetch(url: str, policy: FetchPolicy, resolve: Resolver) -> Fetched:
    per_step = httpx.Timeout(policy.timeout_seconds)
    async with httpx.AsyncClient(trust_env=False, follow_redirects=False, timeout=per_step) as http:
        current = url
        for _hop in range(policy.max_redirects + 1):
            target = await check_url(current, policy, resolve)
            request = _request_to_checked_address(http, target)
            try:
                response = await http.send(request, stream=True)
            except httpx.HTTPError as exc:
                raise UrlUnreachable(f"Could not fetch {target.host!r}: {exc}.") from exc
            try:
                if response.status_code in REDIRECT_STATUSES:
                    location = response.headers.get("location")
                    if not location:
                        raise UrlUnreachable("The address redirected without saying where to.")
                    current = urljoin(current, location)
                    continue
                if response.status_code != 200:
                    raise UrlUnreachable(
                        f"The address answered HTTP {response.status_code}, not the document."
                    )
                content_type = _supported_content_type(response, current)
                data = await read_body(
                    response.aiter_raw(),
                    content_encoding=response.headers.get("content-encoding"),
                    content_length=response.headers.get("content-length"),
                    limit=policy.max_bytes,
                )
                return Fetched(data=data, content_type=content_type, final_url=current)
            finally:
                await response.aclose()
        raise UrlUnreachable(f"The address redirected more than {policy.max_redirects} times.")


def _request_to_checked_address(http: httpx.AsyncClient, target: Target) -> httpx.Request:
    """A request to the checked address that names the host only in Host and TLS SNI."""
    parts = urlsplit(target.url)
    address = target.addresses[0]
    netloc = f"[{address}]" if address.version == 6 else str(address)
    default_port = 443 if parts.scheme.lower() == "https" else 80
    if target.port != default_port:
        netloc = f"{netloc}:{target.port}"
    host_header = target.host if target.port == default_port else f"{target.host}:{target.port}"
    wire_url = urlunsplit((parts.scheme.lower(), netloc, parts.path or "/", parts.query, ""))
    return http.build_request(
        "GET",
        wire_url,
        headers={
            "Host": host_header,
            "Accept": ", ".join(ALLOWED_CONTENT_TYPES),
            "Accept-Encoding": ACCEPT_ENCODING,
        },
        extensions={"sni_hostname": target.host},
    )


def _supported_content_type(response: httpx.Response, url: str) -> str:
    declared: str = response.headers.get("content-type", "")
    media_type = declared.split(";", 1)[0].strip().lower()
    if media_type in ALLOWED_CONTENT_TYPES:
        return media_type
    name = urlsplit(url).path.rsplit("/", 1)[-1]
    if media_type in GENERIC_CONTENT_TYPES and declared_kind(name, None) is not None:
        return media_type or "application/octet-stream"
    kinds = ", ".join(sorted(EXTENSION_KINDS))
    raise UrlUnsupportedType(
        f"The address serves {media_type or 'no content type'}, not a supported document ({kinds})."
    )
