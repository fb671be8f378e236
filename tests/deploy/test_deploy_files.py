"""The shipped compose.yaml, .env.example and Dockerfile pass the deployment checks,
and the checks catch the mistakes they exist for."""

from __future__ import annotations

import importlib.util
from pathlib import Path
from typing import Any

import pytest
import yaml

from tests.deploy.compose_check import (
    REPO_DIR,
    check_compose,
    check_dockerfile,
    check_dockerignore,
    check_env_file,
    check_spec,
    load_compose,
    read_env_file,
    run_checks,
)
from tests.deploy.interpolation import InterpolationError, interpolate, variables_in

COMPOSE_TEXT = (REPO_DIR / "compose.yaml").read_text(encoding="utf-8")
DOCKERFILE_TEXT = (REPO_DIR / "Dockerfile").read_text(encoding="utf-8")
ENV = read_env_file(REPO_DIR / ".env.example")
HAS_COMPOSE_SPEC = importlib.util.find_spec("compose_spec") is not None


def shipped_compose() -> dict[str, Any]:
    return load_compose(COMPOSE_TEXT, ENV)


def test_the_shipped_deployment_files_pass_every_check() -> None:
    problems, _notes = run_checks(REPO_DIR)
    assert problems == []


def test_the_compose_file_runs_an_api_a_scalable_worker_postgres_and_minio() -> None:
    services = shipped_compose()["services"]
    assert {"db", "minio", "minio-init", "web", "worker"} <= services.keys()
    assert (
        services["web"]["command"][:1] == ["serve"] and "--no-worker" in services["web"]["command"]
    )
    assert services["worker"]["command"] == ["worker"]
    assert "ports" not in services["worker"] and "container_name" not in services["worker"]
    assert services["web"]["depends_on"]["db"]["condition"] == "service_healthy"
    assert (
        services["web"]["depends_on"]["minio-init"]["condition"] == "service_completed_successfully"
    )


def test_the_service_signs_presigned_urls_for_the_published_s3_endpoint() -> None:
    web_env = shipped_compose()["services"]["web"]["environment"]
    assert web_env["SHORTLIST_STORAGE__S3_ENDPOINT_URL"] == "http://minio:9000"
    assert web_env["SHORTLIST_STORAGE__S3_PUBLIC_ENDPOINT_URL"] == ENV["S3_PUBLIC_ENDPOINT_URL"]
    assert web_env["DATABASE_URL"].startswith("postgresql://")
    assert "@db:5432/" in web_env["DATABASE_URL"]


def test_every_secret_in_the_env_example_is_a_placeholder_to_replace() -> None:
    for name in ("POSTGRES_PASSWORD", "MINIO_ROOT_PASSWORD", "SHORTLIST_SIGNING_SECRET"):
        assert "change-me" in ENV[name], name
    assert "openssl rand -hex 32" in (REPO_DIR / ".env.example").read_text(encoding="utf-8")


def test_a_variable_missing_from_the_env_example_is_reported() -> None:
    env = {key: value for key, value in ENV.items() if key != "S3_BUCKET"}
    assert check_env_file(COMPOSE_TEXT, env) == [
        ".env.example does not define S3_BUCKET, which compose.yaml reads."
    ]


def test_a_variable_the_compose_file_never_reads_is_reported() -> None:
    problems = check_env_file(COMPOSE_TEXT, {**ENV, "UNUSED_THING": "1"})
    assert problems == [".env.example defines UNUSED_THING, which compose.yaml never reads."]


@pytest.mark.parametrize("image", ["minio/minio", "minio/minio:latest"])
def test_an_unpinned_image_is_reported(image: str) -> None:
    compose = shipped_compose()
    compose["services"]["minio"]["image"] = image
    assert check_compose(compose, DOCKERFILE_TEXT) == [
        f"Service minio pulls {image!r}: pin a version tag (not latest)."
    ]


def test_waiting_for_health_of_a_service_without_a_health_check_is_reported() -> None:
    compose = shipped_compose()
    del compose["services"]["db"]["healthcheck"]
    assert check_compose(compose, DOCKERFILE_TEXT) == [
        "Service web waits for db to be healthy, but it has no health check.",
        "Service worker waits for db to be healthy, but it has no health check.",
    ]


def test_a_service_built_here_counts_the_dockerfile_health_check() -> None:
    compose = shipped_compose()
    del compose["services"]["web"]["healthcheck"]
    compose["services"]["worker"]["depends_on"]["web"] = {"condition": "service_healthy"}
    assert check_compose(compose, DOCKERFILE_TEXT) == []
    without = DOCKERFILE_TEXT.replace("HEALTHCHECK", "# no health check")
    assert check_compose(compose, without) == [
        "Service web runs serve but is not health-checked on /api/health/ready.",
        "Service worker waits for web to be healthy, but it has no health check.",
    ]


def test_an_unknown_dependency_or_condition_is_reported() -> None:
    compose = shipped_compose()
    compose["services"]["web"]["depends_on"] = {
        "database": {"condition": "service_healthy"},
        "minio-init": {"condition": "service_finished"},
    }
    assert check_compose(compose, DOCKERFILE_TEXT) == [
        "Service web depends on database, which is not a service.",
        "Service web waits for minio-init with unknown condition 'service_finished'.",
    ]


def test_an_undeclared_volume_and_a_fixed_container_name_are_reported() -> None:
    compose = shipped_compose()
    compose["services"]["worker"]["volumes"] = ["scratch:/tmp/scratch"]
    compose["services"]["worker"]["container_name"] = "shortlist-worker"
    assert check_compose(compose, DOCKERFILE_TEXT) == [
        "Service worker sets container_name, so it cannot be scaled.",
        "Service worker mounts volume scratch, which is not declared.",
    ]


def test_a_dockerfile_that_runs_as_root_on_a_full_image_is_reported() -> None:
    text = DOCKERFILE_TEXT.replace("-slim-bookworm", "").replace(
        "USER shortlist:shortlist", "USER root"
    )
    problems = check_dockerfile(text)
    assert problems == [
        "Every stage should build on python:3.11-slim (found ['python:3.11', 'python:3.11']).",
        "The image must end with a USER that is not root.",
    ]


def test_a_file_the_dockerfile_copies_but_dockerignore_leaves_out_is_reported() -> None:
    dockerignore = (REPO_DIR / ".dockerignore").read_text(encoding="utf-8")
    assert check_dockerignore(dockerignore, DOCKERFILE_TEXT) == []
    without_sql = dockerignore.replace("!sql/\n", "")
    assert check_dockerignore(without_sql, DOCKERFILE_TEXT) == [
        "The Dockerfile copies sql, which .dockerignore leaves out of the context."
    ]


@pytest.mark.skipif(not HAS_COMPOSE_SPEC, reason="compose-spec is not installed")
def test_a_key_the_compose_specification_does_not_know_is_reported() -> None:
    compose = shipped_compose()
    compose["services"]["db"]["healthcheck"]["tset"] = compose["services"]["db"]["healthcheck"].pop(
        "test"
    )
    problems = check_spec(compose)
    assert problems is not None and len(problems) == 1
    assert "tset" in problems[0]


@pytest.mark.parametrize(
    ("text", "env", "expected"),
    [
        ("${A}", {"A": "1"}, "1"),
        ("$A/x", {"A": "1"}, "1/x"),
        ("${A:-fallback}", {"A": ""}, "fallback"),
        ("${A-fallback}", {"A": ""}, ""),
        ("${A:-${B}}", {"B": "2"}, "2"),
        ("${A:+set}", {"A": "1"}, "set"),
        ("$${A}", {"A": "1"}, "${A}"),
        ("pg_isready -U $$POSTGRES_USER", {}, "pg_isready -U $POSTGRES_USER"),
    ],
)
def test_interpolation_follows_the_compose_specification(
    text: str, env: dict[str, str], expected: str
) -> None:
    assert interpolate(text, env) == expected


def test_a_required_variable_that_is_unset_stops_interpolation() -> None:
    with pytest.raises(InterpolationError, match="A: set A"):
        interpolate({"x": ["${A:?set A}"]}, {})


def test_escaped_dollars_are_not_counted_as_variables() -> None:
    assert variables_in("$${NOT_A_VAR} ${REAL:-x} $ALSO") == {"REAL", "ALSO"}


def test_the_env_reader_refuses_a_line_that_is_not_name_equals_value(tmp_path: Path) -> None:
    path = tmp_path / ".env"
    path.write_text("# comment\nGOOD=1\nexport BAD\n", encoding="utf-8")
    with pytest.raises(ValueError, match=r"\.env:3"):
        read_env_file(path)


def test_the_shipped_compose_file_is_plain_yaml_with_one_shared_environment() -> None:
    raw = yaml.safe_load(COMPOSE_TEXT)
    assert raw["services"]["web"]["environment"] == raw["services"]["worker"]["environment"]


def test_a_serving_service_not_checked_on_readiness_is_reported() -> None:
    compose = shipped_compose()
    compose["services"]["web"]["healthcheck"] = {
        "test": ["CMD", "python", "-c", "print('http://127.0.0.1:8000/api/health')"]
    }
    problems = check_compose(compose, DOCKERFILE_TEXT)

    assert any(
        "web runs serve but is not health-checked on /api/health/ready" in p for p in problems
    )
    assert any(
        "/api/health/ready" in p
        for p in check_dockerfile(DOCKERFILE_TEXT.replace("/api/health/ready", "/api/health"))
    )
