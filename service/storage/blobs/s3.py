"""The blob store for any S3-compatible service (AWS S3, MinIO, Cloudflare R2, SeaweedFS).

Browsers upload with a presigned POST whose policy pins the exact key, the
declared ``Content-Type`` and ``content-length-range`` 1..max_size, so the store
itself refuses anything else. Downloads are presigned GETs that make the store
answer with the type and ``Content-Disposition`` the service chose (overriding the
type the object was uploaded with). S3 cannot be told to add other response
headers (``Content-Security-Policy``, ``nosniff``); its presigned links point at
the store's own origin, never the service's.

Large files go multipart: the service starts the upload (fixing key and
``Content-Type``) and presigns one ``UploadPart`` URL per part with its exact
``Content-Length`` signed in, so the store refuses a part of another size,
number, key or upload, and any part after expiry. A failed part is sent again on
its own. The service joins the parts only after listing them and finding every
planned part at its planned size.
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from datetime import UTC, datetime, timedelta
from typing import TYPE_CHECKING, Literal

import boto3.session
from botocore.config import Config
from botocore.exceptions import (
    BotoCoreError,
    ClientError,
    HTTPClientError,
    NoCredentialsError,
)
from botocore.exceptions import ConnectionError as BotoConnectionError

from service.storage.blobs.base import BlobInfo, UploadGrant, UploadPartGrant, check_grant_limits
from service.storage.blobs.disposition import Disposition, content_disposition
from service.storage.blobs.errors import (
    BlobNotFound,
    BlobStoreError,
    BlobStoreUnavailable,
    BucketNotFound,
    MissingUploadParts,
)
from service.storage.blobs.keys import validate_key
from service.storage.blobs.multipart import plan_parts

if TYPE_CHECKING:
    from mypy_boto3_s3 import S3Client
    from mypy_boto3_s3.type_defs import CORSRuleTypeDef

AddressingStyle = Literal["path", "virtual", "auto"]

_MISSING_CODES = frozenset({"404", "NoSuchKey", "NotFound"})
_NO_SUCH_UPLOAD = "NoSuchUpload"
_MISSING_BUCKET_CODES = frozenset({"NoSuchBucket"})
_REFUSED_CODES = frozenset(
    {"403", "AccessDenied", "InvalidAccessKeyId", "SignatureDoesNotMatch", "ExpiredToken"}
)


class S3BlobStore:
    """Files in one bucket of an S3-compatible store."""

    name = "s3"

    def __init__(
        self,
        *,
        bucket: str,
        endpoint_url: str | None = None,
        region: str = "us-east-1",
        access_key_id: str | None = None,
        secret_access_key: str | None = None,
        addressing_style: AddressingStyle = "path",
        presign_endpoint_url: str | None = None,
        connect_timeout: float = 3.0,
        read_timeout: float = 30.0,
        max_attempts: int = 3,
    ) -> None:
        """Args:
        bucket: The bucket holding every blob.
        endpoint_url: The S3 API the service talks to; None means AWS.
        region: Signing region (MinIO/SeaweedFS accept ``us-east-1``; R2 wants ``auto``).
        access_key_id: With ``secret_access_key``; None uses boto3's default chain.
        secret_access_key: See ``access_key_id``.
        addressing_style: ``path`` (``host/bucket/key``, what MinIO and SeaweedFS
            need) or ``virtual`` (``bucket.host/key``).
        presign_endpoint_url: The address browsers use, when it differs from
            ``endpoint_url`` (a container network name, say). Defaults to it.
        connect_timeout: Seconds to wait for a connection.
        read_timeout: Seconds to wait for a response.
        max_attempts: Total attempts per call, first one included (standard retry mode).
        """
        self.bucket = bucket
        self.endpoint_url = endpoint_url
        session = boto3.session.Session(
            aws_access_key_id=access_key_id,
            aws_secret_access_key=secret_access_key,
            region_name=region,
        )
        config = Config(
            region_name=region,
            signature_version="s3v4",
            s3={"addressing_style": addressing_style},
            connect_timeout=connect_timeout,
            read_timeout=read_timeout,
            retries={"max_attempts": max_attempts, "mode": "standard"},
        )
        self._client: S3Client = session.client("s3", endpoint_url=endpoint_url, config=config)
        self._presigner: S3Client = (
            session.client("s3", endpoint_url=presign_endpoint_url, config=config)
            if presign_endpoint_url and presign_endpoint_url != endpoint_url
            else self._client
        )

    # -- BlobStore -----------------------------------------------------------------

    def presign_upload(
        self, key: str, *, content_type: str, max_size: int, expires_in: int
    ) -> UploadGrant:
        validate_key(key)
        check_grant_limits(max_size=max_size, expires_in=expires_in)
        expires_at = datetime.now(UTC) + timedelta(seconds=expires_in)
        with self._translate_errors("presign an upload for", key):
            post = self._presigner.generate_presigned_post(
                Bucket=self.bucket,
                Key=key,
                Fields={"Content-Type": content_type},
                Conditions=[
                    {"Content-Type": content_type},
                    ["content-length-range", 1, max_size],
                ],
                ExpiresIn=expires_in,
            )
        return UploadGrant(
            method="POST",
            url=post["url"],
            fields={name: str(value) for name, value in post["fields"].items()},
            headers={},
            expires_at=expires_at,
        )

    def head(self, key: str) -> BlobInfo | None:
        validate_key(key)
        try:
            with self._translate_errors("look up", key):
                response = self._client.head_object(Bucket=self.bucket, Key=key)
        except BlobNotFound:
            return None
        return BlobInfo(size=response["ContentLength"], content_type=response.get("ContentType"))

    def read(self, key: str) -> bytes:
        validate_key(key)
        with self._translate_errors("read", key):
            response = self._client.get_object(Bucket=self.bucket, Key=key)
            return response["Body"].read()

    def write(self, key: str, data: bytes, content_type: str) -> None:
        validate_key(key)
        with self._translate_errors("write", key):
            self._client.put_object(
                Bucket=self.bucket, Key=key, Body=data, ContentType=content_type
            )

    def delete(self, key: str) -> None:
        validate_key(key)
        with self._translate_errors("delete", key):
            self._client.delete_object(Bucket=self.bucket, Key=key)

    def download_url(
        self,
        key: str,
        *,
        filename: str,
        content_type: str,
        disposition: Disposition,
        expires_in: int,
    ) -> str:
        validate_key(key)
        with self._translate_errors("presign a download for", key):
            return self._presigner.generate_presigned_url(
                "get_object",
                Params={
                    "Bucket": self.bucket,
                    "Key": key,
                    "ResponseContentDisposition": content_disposition(disposition, filename),
                    "ResponseContentType": content_type,
                },
                ExpiresIn=expires_in,
            )

    def check(self) -> None:
        with self._translate_errors("reach the bucket", None):
            self._client.head_bucket(Bucket=self.bucket)

    # -- MultipartBlobStore ----------------------------------------------------------

    def presign_multipart_upload(
        self, key: str, *, content_type: str, size: int, part_size: int, expires_in: int
    ) -> UploadGrant:
        validate_key(key)
        check_grant_limits(max_size=size, expires_in=expires_in)
        expires_at = datetime.now(UTC) + timedelta(seconds=expires_in)
        with self._translate_errors("start a multipart upload to", key):
            multipart_id = self._client.create_multipart_upload(
                Bucket=self.bucket, Key=key, ContentType=content_type
            )["UploadId"]
        with self._translate_errors("presign the parts of", key):
            parts = tuple(
                UploadPartGrant(
                    number=part.number,
                    offset=part.offset,
                    size=part.size,
                    url=self._presigner.generate_presigned_url(
                        "upload_part",
                        Params={
                            "Bucket": self.bucket,
                            "Key": key,
                            "UploadId": multipart_id,
                            "PartNumber": part.number,
                            "ContentLength": part.size,
                        },
                        ExpiresIn=expires_in,
                    ),
                )
                for part in plan_parts(size, part_size)
            )
        return UploadGrant(
            method="MULTIPART",
            url=None,
            fields={},
            headers={},
            expires_at=expires_at,
            parts=parts,
            multipart_id=multipart_id,
        )

    def complete_multipart_upload(
        self, key: str, multipart_id: str, *, size: int, part_size: int
    ) -> None:
        validate_key(key)
        stored = self._list_parts(key, multipart_id)
        if stored is None:
            return  # already joined (or aborted: the caller's HEAD tells which)
        missing = [
            part.number
            for part in plan_parts(size, part_size)
            if part.number not in stored or stored[part.number][1] != part.size
        ]
        if missing:
            raise MissingUploadParts(missing)
        # No such upload any more: joined meanwhile by a concurrent call.
        with self._translate_errors("join the parts of", key), _unless_no_such_upload():
            self._client.complete_multipart_upload(
                Bucket=self.bucket,
                Key=key,
                UploadId=multipart_id,
                MultipartUpload={
                    "Parts": [
                        {"PartNumber": number, "ETag": etag}
                        for number, (etag, _) in sorted(stored.items())
                    ]
                },
            )

    def abort_multipart_upload(self, key: str, multipart_id: str) -> None:
        validate_key(key)
        with self._translate_errors("abort the multipart upload to", key), _unless_no_such_upload():
            self._client.abort_multipart_upload(Bucket=self.bucket, Key=key, UploadId=multipart_id)

    def _list_parts(self, key: str, multipart_id: str) -> dict[int, tuple[str, int]] | None:
        """{part number: (ETag, size)} of the stored parts, the latest upload of each
        number winning; None when the store knows no such unfinished upload."""
        stored: dict[int, tuple[str, int]] = {}
        with self._translate_errors("list the parts of", key):
            try:
                pages = self._client.get_paginator("list_parts").paginate(
                    Bucket=self.bucket, Key=key, UploadId=multipart_id
                )
                for page in pages:
                    for part in page.get("Parts", []):
                        stored[part["PartNumber"]] = (part["ETag"], part["Size"])
            except ClientError as exc:
                if _error_code(exc) == _NO_SUCH_UPLOAD:
                    return None
                raise
        return stored

    # -- setup -----------------------------------------------------------------------

    def ensure_bucket(self) -> None:
        """Create the bucket if it does not exist (development and tests)."""
        try:
            self.check()
        except BucketNotFound:
            pass
        else:
            return
        region = self._client.meta.region_name
        with self._translate_errors("create the bucket", None):
            try:
                if region in (None, "us-east-1"):
                    self._client.create_bucket(Bucket=self.bucket)
                else:
                    self._client.create_bucket(
                        Bucket=self.bucket,
                        CreateBucketConfiguration={"LocationConstraint": region},  # type: ignore[typeddict-item]
                    )
            except self._client.exceptions.BucketAlreadyOwnedByYou:
                pass

    def configure_cors(self, allowed_origins: Sequence[str], *, max_age: int = 3600) -> None:
        """Let browsers on ``allowed_origins`` POST uploads, PUT upload parts and GET
        downloads (dev and self-hosted setups; on AWS or R2 this is usually done once, by
        the operator).

        Replaces the bucket's CORS rules.
        """
        rule: CORSRuleTypeDef = {
            "AllowedOrigins": list(allowed_origins),
            "AllowedMethods": ["GET", "HEAD", "POST", "PUT"],
            "AllowedHeaders": ["*"],
            "ExposeHeaders": ["ETag", "Content-Length", "Content-Range"],
            "MaxAgeSeconds": max_age,
        }
        with self._translate_errors("set the CORS rules of", None):
            self._client.put_bucket_cors(
                Bucket=self.bucket, CORSConfiguration={"CORSRules": [rule]}
            )

    # -- error translation -----------------------------------------------------------

    @contextmanager
    def _translate_errors(self, action: str, key: str | None) -> Iterator[None]:
        """Turn botocore's errors into BlobStoreError subclasses, once, here."""
        where = f"{key!r} in bucket {self.bucket!r}" if key else f"bucket {self.bucket!r}"
        endpoint = self.endpoint_url or "AWS S3"
        try:
            yield
        except (BotoConnectionError, HTTPClientError) as exc:
            raise BlobStoreUnavailable(
                f"The S3 endpoint {endpoint} cannot be reached ({exc}); try again shortly."
            ) from exc
        except NoCredentialsError as exc:
            raise BlobStoreUnavailable("No S3 credentials are configured.") from exc
        except ClientError as exc:
            code = _error_code(exc)
            status = int(exc.response.get("ResponseMetadata", {}).get("HTTPStatusCode", 0))
            if code in _MISSING_BUCKET_CODES or (code in _MISSING_CODES and key is None):
                raise BucketNotFound(f"The bucket {self.bucket!r} does not exist.") from exc
            if code in _MISSING_CODES:
                raise BlobNotFound(f"No file is stored under {key!r}.") from exc
            if code in _REFUSED_CODES:
                raise BlobStoreUnavailable(
                    f"S3 refused to {action} {where} ({code}): check the credentials."
                ) from exc
            if status >= 500:
                raise BlobStoreUnavailable(
                    f"S3 failed to {action} {where} ({code}); try again shortly."
                ) from exc
            raise BlobStoreError(f"S3 refused to {action} {where} ({code}).") from exc
        except BotoCoreError as exc:
            raise BlobStoreError(f"Could not {action} {where}: {exc}") from exc


def _error_code(exc: ClientError) -> str:
    return str(exc.response.get("Error", {}).get("Code", ""))


@contextmanager
def _unless_no_such_upload() -> Iterator[None]:
    """Swallow S3's NoSuchUpload: the multipart upload was already joined or aborted."""
    try:
        yield
    except ClientError as exc:
        if _error_code(exc) != _NO_SUCH_UPLOAD:
            raise
