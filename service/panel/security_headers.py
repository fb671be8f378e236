"""Security headers of the panel's page and assets, the CSP first.

The page loads nothing but its own files (no inline script or style, no CDN).
It talks to the API on its own origin and uploads straight to the blob store,
so ``connect-src`` also names the store's origin: the public URL of the
service for the built-in store (the same origin unless the page is reached
under another name) and the S3 endpoint browsers are given presigned URLs for.
"""

from __future__ import annotations

from typing import TYPE_CHECKING
from urllib.parse import urlsplit

if TYPE_CHECKING:
    from service.settings import Settings


def security_headers(settings: Settings) -> dict[str, str]:
    """Headers every panel response carries."""
    return {
        "Content-Security-Policy": content_security_policy(settings),
        "X-Content-Type-Options": "nosniff",
        "X-Frame-Options": "DENY",
        "Referrer-Policy": "no-referrer",
        "Permissions-Policy": "camera=(), microphone=(), geolocation=()",
    }


def content_security_policy(settings: Settings) -> str:
    connect = " ".join(["'self'", *blob_store_origins(settings)])
    return "; ".join(
        [
            "default-src 'self'",
            "script-src 'self'",
            "style-src 'self'",
            "img-src 'self' data:",
            f"connect-src {connect}",
            "object-src 'none'",
            "base-uri 'none'",
            "form-action 'self'",
            "frame-ancestors 'none'",
        ]
    )


def blob_store_origins(settings: Settings) -> list[str]:
    """Origins the browser uploads to, besides the page's own."""
    storage = settings.storage
    if settings.storage_backend == "local":
        return _unique([_origin(settings.public_url)])
    endpoint = storage.s3_public_endpoint_url or storage.s3_endpoint_url
    bucket = storage.s3_bucket or ""
    if endpoint:
        origins = [_origin(endpoint)]
        if storage.s3_addressing_style != "path" and bucket:
            parts = urlsplit(endpoint)
            origins.append(f"{parts.scheme}://{bucket}.{parts.netloc}")
        return _unique(origins)
    region = storage.s3_region
    hosts = ["s3.amazonaws.com", f"s3.{region}.amazonaws.com"]
    if bucket:
        hosts += [f"{bucket}.s3.amazonaws.com", f"{bucket}.s3.{region}.amazonaws.com"]
    return _unique([f"https://{host}" for host in hosts])


def _origin(url: str) -> str:
    parts = urlsplit(url)
    return f"{parts.scheme}://{parts.netloc}"


def _unique(values: list[str]) -> list[str]:
    return list(dict.fromkeys(values))
