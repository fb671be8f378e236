"""Every package that declares ``__all__`` exports exactly its public members.

In the spirit of httpx's ``tests/test_exported_members.py``: each name in
``__all__`` exists (so ``from package import *`` works), and every public object
of ours that the module holds is listed. Names imported from the standard
library or third parties (``Literal``, ``NamedTuple``…) are not members.
"""

from __future__ import annotations

import importlib
import re
import types
from pathlib import Path

import pytest

REPO_DIR = Path(__file__).resolve().parent.parent
PACKAGES = ("service", "extract", "retrieval", "sql")
_DECLARES_ALL = re.compile(r"^__all__\s*[:=]", re.MULTILINE)
NOT_MEMBERS = frozenset({"annotations", "TYPE_CHECKING"})


def _modules_declaring_all() -> list[str]:
    found = []
    for package in PACKAGES:
        for path in sorted((REPO_DIR / package).rglob("*.py")):
            if _DECLARES_ALL.search(path.read_text(encoding="utf-8")):
                parts = path.relative_to(REPO_DIR).with_suffix("").parts
                found.append(".".join(parts[:-1] if parts[-1] == "__init__" else parts))
    return found


MODULES = _modules_declaring_all()


def test_the_packages_that_matter_declare_all() -> None:
    assert {"extract", "retrieval", "retrieval.rerankers", "sql"} <= set(MODULES)


@pytest.mark.parametrize("name", MODULES)
def test_every_name_in_all_exists_and_star_import_works(name: str) -> None:
    module = importlib.import_module(name)
    exported = module.__all__
    assert len(exported) == len(set(exported)), "a name is listed twice"
    assert [member for member in exported if not hasattr(module, member)] == []
    namespace: dict[str, object] = {}
    exec(f"from {name} import *", namespace)
    assert set(exported) <= set(namespace)


@pytest.mark.parametrize("name", MODULES)
def test_every_public_member_is_listed_in_all(name: str) -> None:
    module = importlib.import_module(name)
    unlisted = [
        member
        for member, value in vars(module).items()
        if not member.startswith("_")
        and member not in NOT_MEMBERS
        and member not in module.__all__
        and not isinstance(value, types.ModuleType)
        # Defined here (constants carry no module and count as defined here); names a
        # module imports from its siblings are theirs to list.
        and str(getattr(value, "__module__", name)) == name
    ]
    assert unlisted == [], f"add these to {name}.__all__ (or make them private)"
