"""``python -m bench.load``: run the load test and exit with its status."""

from __future__ import annotations

import sys

from bench.load.runner import main

if __name__ == "__main__":
    sys.exit(main())
