"""How many tokens a typical MCP ``search_documents`` answer costs the model.

Ingests three papers from the shared corpus into an embedded PostgreSQL in a
temp directory, runs five queries through the real MCP tool, and prints the
size of the text block, of ``structuredContent`` and of the whole result in
tokens, approximated as characters / 4.

    .venv/bin/python -m bench.mcp_size [--reranker local|none]
"""

from __future__ import annotations

import argparse
import asyncio
import json
import shutil
import statistics
import tempfile
from pathlib import Path

from service.mcp import tools
from service.mcp.caller import Caller
from service.records import Principal
from service.runtime import open_runtime
from service.services import users
from service.services.ingest import ingest_file
from service.settings import Settings
from service.storage.db import connection
from service.storage.embedded_pg import start_embedded_postgres
from tests.support.paths import CORPUS_DIR

FILES = ["papers/tracemonkey.pdf", "papers/naacl06-shinyama.pdf", "papers/TAMReview.pdf"]
QUERIES = [
    "how does trace compilation handle type-unstable loops",
    "unsupervised relation discovery from news articles",
    "what evaluation metric was used",
    "technology acceptance model perceived usefulness",
    "nested trace trees",
]


async def measure(reranker: str, top_k: int) -> dict[str, list[int]]:
    scratch = Path(tempfile.mkdtemp(prefix="shortlist-mcp-size-"))
    server = start_embedded_postgres(scratch / "pg", database="postgres")
    sizes: dict[str, list[int]] = {"text": [], "structured": [], "whole": []}
    try:
        settings = Settings.model_validate(
            {"database_url": server.url, "data_dir": scratch, "search": {"reranker": reranker}}
        )
        async with open_runtime(settings) as runtime:
            async with connection(runtime.pool) as conn:
                created = await users.create_user(conn, "bench")
            for name in FILES:
                await ingest_file(runtime, created.project, CORPUS_DIR / name)
            principal = Principal(created.user.id, created.user.name, created.user.id)
            caller = Caller(runtime, principal)
            for query in QUERIES:
                result = await tools.search_documents(caller, query, top_k=top_k)
                text = "".join(getattr(block, "text", "") for block in result.content)
                whole = result.model_dump_json(by_alias=True, exclude_none=True)
                sizes["text"].append(len(text) // 4)
                sizes["structured"].append(
                    len(json.dumps(result.structured_content, ensure_ascii=False)) // 4
                )
                sizes["whole"].append(len(whole) // 4)
    finally:
        server.stop()
        shutil.rmtree(scratch, ignore_errors=True)
    return sizes


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--reranker", choices=["local", "none"], default="local")
    parser.add_argument("--top-k", type=int, default=8)
    args = parser.parse_args()
    sizes = asyncio.run(measure(args.reranker, args.top_k))
    print(f"search_documents, top_k={args.top_k}, reranker {args.reranker}, {len(QUERIES)} queries")
    print("| part | min | mean | max |\n| --- | ---: | ---: | ---: |")
    for label, values in (
        ("text block (what the model reads)", sizes["text"]),
        ("structuredContent", sizes["structured"]),
        ("whole result", sizes["whole"]),
    ):
        print(f"| {label} | {min(values):,} | {statistics.mean(values):,.0f} | {max(values):,} |")


if __name__ == "__main__":
    main()
