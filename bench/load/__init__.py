"""Nothing lost under load: a bounded loopback load test of the real service.

Run from the repository root against a real PostgreSQL (a scratch database is
created on that server and dropped afterwards)::

    DATABASE_URL=postgresql://postgres@127.0.0.1:5432/test \\
        .venv/bin/python -m bench.load --clients 32 --seconds 60

What it does, with the real ``shortlist`` command in subprocesses:

1. ``shortlist serve --no-worker`` on 127.0.0.1 (an ephemeral port) and
   ``--workers`` × ``shortlist worker``, sharing one data directory (the local
   blob store) or, with ``--s3``, a SeaweedFS S3 server on loopback;
2. ``shortlist user create --json`` for a few users; each client makes its own
   project through the REST API;
3. ``--clients`` concurrent clients, for ``--seconds``, each looping a weighted
   mix of searches, reads (document list, metadata, text), uploads through the
   three-step flow (grant → PUT or presigned POST to the store → register) of
   generated Markdown, text and small PDF files carrying a distinctive word,
   and deletes of their own documents; every request is timed and has a
   timeout, and each client stops by itself at the deadline or its request cap;
4. a bounded settle window, then the audit: every accepted upload the test did
   not delete must be ``ready`` or ``error`` with a reason (still ``pending`` or
   ``processing`` = lost), and each ready document's stored Markdown (read back
   through ``GET /api/documents/{id}/text``, and its ``content_hash`` in the
   database) must hash to the same sha256 as a fresh in-process
   ``extract.extract_document`` of the bytes that were uploaded. Every answer
   must be the one a correct service gives (no 5xx, no unexpected 4xx, no
   connection dropped), and no service process may log a traceback.

Prints Markdown tables; exits 1 when any check fails. Rate limits are switched
off: this measures capacity and durability, not abuse protection. The load
generator runs on the same cores as the server, so the figures are a floor for
a dedicated machine.
"""

from __future__ import annotations

import sys
from pathlib import Path

REPO_DIR = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(REPO_DIR))

from bench.load.options import LoadOptions  # noqa: E402
from bench.load.report import LoadReport, format_report  # noqa: E402
from bench.load.runner import run  # noqa: E402

__all__ = ["LoadOptions", "LoadReport", "format_report", "run"]
