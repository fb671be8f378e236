"""Every query the service runs by name exists in sql/queries.sql, and every query there is run."""

from __future__ import annotations

import ast
from pathlib import Path

import sql

SERVICE_DIR = Path(__file__).resolve().parents[3] / "service"
RUNNERS = frozenset({"fetch_one", "fetch_all", "execute"})


def _calls_and_strings() -> tuple[list[tuple[str, str]], set[str]]:
    named: list[tuple[str, str]] = []
    strings: set[str] = set()
    for path in sorted(SERVICE_DIR.rglob("*.py")):
        tree = ast.parse(path.read_text(encoding="utf-8"))
        for node in ast.walk(tree):
            if isinstance(node, ast.Constant) and isinstance(node.value, str):
                strings.add(node.value)
            if not isinstance(node, ast.Call) or len(node.args) < 2:
                continue
            func = node.func
            called = func.id if isinstance(func, ast.Name) else getattr(func, "attr", "")
            name = node.args[1]
            if called in RUNNERS and isinstance(name, ast.Constant):
                named.append((f"{path.relative_to(SERVICE_DIR)}:{node.lineno}", str(name.value)))
    return named, strings


def test_every_query_run_by_name_is_defined() -> None:
    named, _ = _calls_and_strings()
    assert len(named) > 30
    assert [(where, name) for where, name in named if name not in sql.queries] == []


def test_every_defined_query_is_run_somewhere() -> None:
    _, strings = _calls_and_strings()
    assert sorted(set(sql.queries) - strings) == []
