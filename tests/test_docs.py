"""The README stays true: every setting and every REST route is documented."""

from __future__ import annotations

import re
from pathlib import Path

from service.settings_doc import END, START, table
from tests.support.paths import REPO_DIR

README = (REPO_DIR / "README.md").read_text(encoding="utf-8")


def test_readme_configuration_table_matches_the_settings() -> None:
    block = README.split(START, 1)[1].split(END, 1)[0].strip()

    assert block == table(), (
        "regenerate with: .venv/bin/python -m service.settings_doc --write README.md"
    )


def test_every_rest_route_is_in_the_readme(tmp_path: Path) -> None:
    from service.app import create_app
    from tests.conftest import make_settings

    app = create_app(make_settings("postgresql://unused/none", tmp_path))
    paths = {
        re.sub(r"\{(\w+):\w+\}", r"{\1}", route.path)
        for route in app.routes
        if route.path.startswith("/api/")
    }
    documented = set(re.findall(r"`(?:GET|POST|PUT|DELETE|PATCH) (/api/[^`\s?]*)", README))

    assert paths - documented == set(), "document these routes in the README's REST table"


def test_every_error_code_is_in_docs_errors() -> None:
    import importlib
    import inspect

    documented = (REPO_DIR / "docs" / "errors.md").read_text(encoding="utf-8")
    modules = [
        "service.errors",
        "service.services.filenames",
        "service.panel.errors",
        "service.storage.embedded_pg.errors",
        "service.storage.blobs.errors",
        "extract.errors",
        "retrieval.errors",
    ]
    missing = []
    for name in modules:
        module = importlib.import_module(name)
        for _, cls in inspect.getmembers(module, inspect.isclass):
            code = getattr(cls, "code", None)
            ours = cls.__module__ == name and issubclass(cls, Exception)
            if ours and isinstance(code, str) and f"`{code}`" not in documented:
                missing.append(f"{name}.{cls.__name__} ({code})")

    assert missing == [], "add these to docs/errors.md"
