"""Render the README's configuration table from :class:`~service.settings.Settings`.

``python -m service.settings_doc`` prints the table; ``--write README.md``
replaces the block between the ``settings-table`` markers. ``tests/test_docs.py``
fails when the README's table and the settings disagree.
"""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any

from pydantic import AliasChoices, BaseModel
from pydantic.fields import FieldInfo

from service.settings import Settings

START = "<!-- settings-table:start -->"
END = "<!-- settings-table:end -->"


def _env_name(name: str, field: FieldInfo, group: str | None) -> str:
    alias = field.validation_alias
    if isinstance(alias, AliasChoices) and isinstance(alias.choices[0], str):
        return alias.choices[0]
    if group:
        return f"SHORTLIST_{group.upper()}__{name.upper()}"
    return f"SHORTLIST_{name.upper()}"


def _default(field: FieldInfo) -> str:
    if field.default_factory is not None:
        try:
            value: Any = field.default_factory()  # type: ignore[call-arg]
        except TypeError:
            return "(computed)"
        if isinstance(value, BaseModel):
            return ""
        if isinstance(value, Path):
            return "user data dir"
    else:
        value = field.default
    if value is None:
        return "unset"
    if isinstance(value, list):
        return ", ".join(str(item) for item in value)
    return str(value)


def rows() -> list[tuple[str, str, str]]:
    """(environment variable, default, description) for every setting."""
    found: list[tuple[str, str, str]] = []
    for name, field in Settings.model_fields.items():
        annotation = field.annotation
        if isinstance(annotation, type) and issubclass(annotation, BaseModel):
            for sub_name, sub_field in annotation.model_fields.items():
                found.append(
                    (
                        _env_name(sub_name, sub_field, name),
                        _default(sub_field),
                        sub_field.description or "",
                    )
                )
        else:
            found.append((_env_name(name, field, None), _default(field), field.description or ""))
    return found


def table() -> str:
    lines = ["| Variable | Default | What it does |", "| --- | --- | --- |"]
    for env, default, description in rows():
        shown = f"`{default}`" if default else ""
        escaped = description.replace("|", r"\|")
        lines.append(f"| `{env}` | {shown} | {escaped} |")
    return "\n".join(lines)


def replace_block(text: str, block: str) -> str:
    head, _, rest = text.partition(START)
    _, _, tail = rest.partition(END)
    return f"{head}{START}\n{block}\n{END}{tail}"


def main(argv: list[str]) -> int:
    if argv[:1] == ["--write"] and len(argv) == 2:
        path = Path(argv[1])
        path.write_text(replace_block(path.read_text(encoding="utf-8"), table()), encoding="utf-8")
        return 0
    print(table())
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
