"""The default-project rule every door applies (REST client, CLI, MCP): one function."""

from __future__ import annotations

import pytest

from service.errors import InvalidRequest, ProjectNotFound
from service.services.projects import default_project


def named(*names: str) -> list[dict[str, str]]:
    return [{"name": name} for name in names]


def test_the_only_project_is_the_default_whatever_its_name() -> None:
    assert default_project(named("papers"), lambda p: p["name"]) == {"name": "papers"}


def test_among_several_the_project_named_default_is_chosen_ignoring_case() -> None:
    assert default_project(named("papers", " Default "), lambda p: p["name"]) == {
        "name": " Default "
    }


def test_several_projects_and_none_named_default_asks_which_one() -> None:
    with pytest.raises(InvalidRequest, match="'papers', 'notes'") as raised:
        default_project(named("papers", "notes"), lambda p: p["name"])
    assert raised.value.details == {"field": "project"}


def test_no_project_at_all_is_project_not_found() -> None:
    with pytest.raises(ProjectNotFound):
        default_project(named(), lambda p: p["name"])
