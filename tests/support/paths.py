"""Where the read-only shared material lives.

CI clones the repository into a fresh folder with a copy of ``shared/`` beside
it, so the default is ``<repo>/../shared``; ``SHORTLIST_SHARED_DIR`` overrides.
"""

from __future__ import annotations

import os
from pathlib import Path

REPO_DIR = Path(__file__).resolve().parents[2]
SHARED_DIR = Path(os.environ.get("SHORTLIST_SHARED_DIR", REPO_DIR.parent / "shared")).resolve()
CORPUS_DIR = SHARED_DIR / "corpus"
SCIFACT_DIR = SHARED_DIR / "ir" / "scifact"
