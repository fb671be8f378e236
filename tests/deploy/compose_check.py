"""Static checks of the deployment files: compose.yaml, .env.example and the Dockerfile.

Run by ``scripts/check-deploy`` (``python -m tests.deploy.compose_check``) and by
``tests/deploy/test_deploy_files.py``. Each check returns a list of problems,
one sentence each; an empty list means the file is fine. What is checked:

- the compose file parses, and interpolates with the values of ``.env.example``,
  which must define every variable the compose file reads and nothing else;
- with the ``compose-spec`` package installed, the interpolated file is
  validated against the Compose Specification (unknown keys, wrong types);
- every image that is pulled is pinned to a tag other than ``latest``;
- every ``depends_on`` names a service and a valid condition; a service waited
  for with ``service_healthy`` has a health check (its own, or the Dockerfile's
  when it is built here); one waited for with ``service_completed_successfully``
  does not restart;
- named volumes are declared and used; no service sets ``container_name``
  (that would forbid ``--scale``);
- the Dockerfile builds on a pinned slim Python 3.11, runs as a non-root user,
  exposes 8000, has a health check on ``/api/health/ready`` and the ``shortlist``
  entry point; ``.dockerignore`` keeps every file it copies in the context;
- every service that runs ``serve`` is health-checked on its readiness route,
  ``/api/health/ready`` (its own check, or the Dockerfile's when it is built here).
"""

from __future__ import annotations

import argparse
import importlib
import json
import re
import sys
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import yaml

from tests.deploy.interpolation import InterpolationError, interpolate, variables_in

REPO_DIR = Path(__file__).resolve().parents[2]
CONDITIONS = {"service_started", "service_healthy", "service_completed_successfully"}


def read_env_file(path: Path) -> dict[str, str]:
    """``NAME=value`` lines of a dotenv file (comments and blank lines skipped)."""
    values: dict[str, str] = {}
    for number, raw in enumerate(path.read_text(encoding="utf-8").splitlines(), start=1):
        line = raw.strip()
        if not line or line.startswith("#"):
            continue
        name, sep, value = line.partition("=")
        if not sep or not re.fullmatch(r"[A-Za-z_][A-Za-z0-9_]*", name.strip()):
            raise ValueError(f"{path.name}:{number}: not a NAME=value line: {raw!r}")
        values[name.strip()] = value.strip().strip("'\"")
    return values


def referenced_variables(node: Any) -> set[str]:
    """Every ``$VAR``/``${VAR…}`` the compose file reads, anywhere in its values."""
    if isinstance(node, str):
        return variables_in(node)
    if isinstance(node, list):
        return set().union(*(referenced_variables(item) for item in node)) if node else set()
    if isinstance(node, dict):
        return (
            set().union(*(referenced_variables(item) for item in node.values())) if node else set()
        )
    return set()


def load_compose(compose_text: str, env: Mapping[str, str]) -> dict[str, Any]:
    """The compose file parsed, YAML merge keys applied, and interpolated from ``env``."""
    raw = yaml.safe_load(compose_text)
    if not isinstance(raw, dict):
        raise ValueError("compose.yaml is not a mapping")
    interpolated: dict[str, Any] = interpolate(raw, env)
    return interpolated


def check_env_file(compose_text: str, env: Mapping[str, str]) -> list[str]:
    """``.env.example`` defines exactly the variables compose.yaml reads."""
    used = referenced_variables(yaml.safe_load(compose_text))
    problems = [
        f".env.example does not define {name}, which compose.yaml reads."
        for name in sorted(used - env.keys())
    ]
    problems += [
        f".env.example defines {name}, which compose.yaml never reads."
        for name in sorted(env.keys() - used)
    ]
    return problems


def check_compose(compose: Mapping[str, Any], dockerfile_text: str | None = None) -> list[str]:
    """Structural rules of an interpolated compose file (see the module docstring)."""
    services = compose.get("services")
    if not isinstance(services, dict) or not services:
        return ["compose.yaml defines no services."]
    problems: list[str] = []
    declared_volumes = set((compose.get("volumes") or {}).keys())
    used_volumes: set[str] = set()
    for name, service in services.items():
        problems += _check_image(name, service)
        problems += _check_readiness(name, service, dockerfile_text)
        problems += _check_depends_on(name, service, services, dockerfile_text)
        if "container_name" in service:
            problems.append(f"Service {name} sets container_name, so it cannot be scaled.")
        for mount in service.get("volumes") or []:
            source = _volume_source(mount)
            if source is not None:
                used_volumes.add(source)
                if source not in declared_volumes:
                    problems.append(
                        f"Service {name} mounts volume {source}, which is not declared."
                    )
    problems += [
        f"Volume {volume} is declared but no service mounts it."
        for volume in sorted(declared_volumes - used_volumes)
    ]
    return problems


def _check_image(name: str, service: Mapping[str, Any]) -> list[str]:
    image = service.get("image")
    if "build" in service:
        return [] if image is None or isinstance(image, str) else [f"Service {name}: bad image."]
    if not isinstance(image, str) or not image:
        return [f"Service {name} has neither an image nor a build."]
    reference = image.split("@", 1)[0]
    tag = reference.rsplit(":", 1)[1] if ":" in reference.rsplit("/", 1)[-1] else None
    if "@" not in image and (tag is None or tag == "latest"):
        return [f"Service {name} pulls {image!r}: pin a version tag (not latest)."]
    return []


def _check_depends_on(
    name: str,
    service: Mapping[str, Any],
    services: Mapping[str, Any],
    dockerfile_text: str | None,
) -> list[str]:
    depends = service.get("depends_on") or {}
    if isinstance(depends, list):
        depends = {other: {"condition": "service_started"} for other in depends}
    problems: list[str] = []
    for other, spec in depends.items():
        condition = (spec or {}).get("condition", "service_started")
        if other not in services:
            problems.append(f"Service {name} depends on {other}, which is not a service.")
            continue
        if condition not in CONDITIONS:
            problems.append(
                f"Service {name} waits for {other} with unknown condition {condition!r}."
            )
        target = services[other]
        if condition == "service_healthy" and not _has_healthcheck(target, dockerfile_text):
            problems.append(
                f"Service {name} waits for {other} to be healthy, but it has no health check."
            )
        if condition == "service_completed_successfully" and target.get("restart", "no") != "no":
            problems.append(f"Service {name} waits for {other} to complete, but {other} restarts.")
    return problems


READINESS_PATH = "/api/health/ready"


def _check_readiness(
    name: str, service: Mapping[str, Any], dockerfile_text: str | None
) -> list[str]:
    """A service running ``serve`` is health-checked on readiness, not the full report."""
    command = service.get("command") or []
    if "serve" not in (command if isinstance(command, list) else str(command).split()):
        return []
    check = service.get("healthcheck")
    if isinstance(check, dict) and not check.get("disable", False):
        test = check.get("test") or []
        text = " ".join(test) if isinstance(test, list) else str(test)
    elif "build" in service and dockerfile_text is not None:
        text = " ".join(
            rest
            for kind, rest in _dockerfile_instructions(dockerfile_text)
            if kind == "HEALTHCHECK"
        )
    else:
        text = ""
    if READINESS_PATH not in text:
        return [f"Service {name} runs serve but is not health-checked on {READINESS_PATH}."]
    return []


def _has_healthcheck(service: Mapping[str, Any], dockerfile_text: str | None) -> bool:
    check = service.get("healthcheck")
    if isinstance(check, dict):
        return not check.get("disable", False) and bool(check.get("test"))
    built_here = "build" in service and dockerfile_text is not None
    return built_here and "HEALTHCHECK" in (dockerfile_text or "")


def _volume_source(mount: Any) -> str | None:
    """The named volume a mount uses; None for bind mounts and anonymous volumes."""
    if isinstance(mount, dict):
        source = mount.get("source") if mount.get("type", "volume") == "volume" else None
    else:
        parts = str(mount).split(":")
        source = parts[0] if len(parts) > 1 else None
    if not source or source.startswith((".", "/", "~", "$")):
        return None
    return str(source)


def check_spec(compose: Mapping[str, Any]) -> list[str] | None:
    """Problems the Compose Specification finds; None when ``compose-spec`` is not installed."""
    try:
        compose_spec = importlib.import_module("compose_spec")
    except ImportError:
        return None
    try:
        compose_spec.PyCompose.from_json(json.dumps(compose)).validate()
    except ValueError as exc:
        return [f"compose.yaml breaks the Compose Specification: {exc}"]
    return []


def check_dockerfile(text: str) -> list[str]:
    """The image's promises: pinned slim Python 3.11, non-root, port 8000, health, entry point."""
    problems: list[str] = []
    instructions = _dockerfile_instructions(text)
    args = {
        key: value
        for kind, rest in instructions
        if kind == "ARG" and "=" in rest
        for key, value in [rest.split("=", 1)]
    }
    bases = [rest.split()[0] for kind, rest in instructions if kind == "FROM"]
    resolved = [re.sub(r"\$\{(\w+)\}", lambda m: args.get(m.group(1), ""), base) for base in bases]
    if not resolved or not all(
        re.fullmatch(r"python:3\.11(\.\d+)?-slim(-\w+)?", base) for base in resolved
    ):
        problems.append(f"Every stage should build on python:3.11-slim (found {resolved}).")
    users = [rest for kind, rest in instructions if kind == "USER"]
    if not users or users[-1].split(":")[0] in ("root", "0"):
        problems.append("The image must end with a USER that is not root.")
    if not any(kind == "EXPOSE" and "8000" in rest.split() for kind, rest in instructions):
        problems.append("The image must EXPOSE 8000.")
    health = [rest for kind, rest in instructions if kind == "HEALTHCHECK"]
    if not health or READINESS_PATH not in health[-1]:
        problems.append(f"The image needs a HEALTHCHECK on {READINESS_PATH}.")
    entry = [rest for kind, rest in instructions if kind == "ENTRYPOINT"]
    if not entry or entry[-1] != '["shortlist"]':
        problems.append('The image\'s ENTRYPOINT must be ["shortlist"].')
    commands = [rest for kind, rest in instructions if kind == "CMD"]
    if not commands or "serve" not in commands[-1]:
        problems.append("The image's default CMD must be serve.")
    return problems


def check_dockerignore(dockerignore_text: str, dockerfile_text: str) -> list[str]:
    """Every file the Dockerfile COPYs from the build context is in the context.

    The .dockerignore excludes everything (``*``) and lists what goes back in with ``!``.
    """
    patterns = [
        line.strip()
        for line in dockerignore_text.splitlines()
        if line.strip() and not line.startswith("#")
    ]
    if "*" not in patterns:
        return []
    included = {pattern[1:].rstrip("/") for pattern in patterns if pattern.startswith("!")}
    problems: list[str] = []
    for kind, rest in _dockerfile_instructions(dockerfile_text):
        arguments = rest.split()
        if kind != "COPY" or any(arg.startswith("--from") for arg in arguments):
            continue
        sources = [arg for arg in arguments[:-1] if not arg.startswith("--")]
        problems += [
            f"The Dockerfile copies {source}, which .dockerignore leaves out of the context."
            for source in sources
            if source.rstrip("/") not in included
        ]
    return problems


def _dockerfile_instructions(text: str) -> list[tuple[str, str]]:
    """(INSTRUCTION, arguments) pairs, continuation lines joined, comments dropped."""
    logical: list[str] = []
    current = ""
    for line in text.splitlines():
        stripped = line.strip()
        if not current and (not stripped or stripped.startswith("#")):
            continue
        if stripped.startswith("#"):
            continue
        if stripped.endswith("\\"):
            current += stripped[:-1] + " "
            continue
        logical.append(current + stripped)
        current = ""
    if current:
        logical.append(current)
    pairs: list[tuple[str, str]] = []
    for line in logical:
        kind, _, rest = line.partition(" ")
        pairs.append((kind.upper(), rest.strip()))
    return pairs


def run_checks(repo: Path = REPO_DIR) -> tuple[list[str], list[str]]:
    """(problems, notes) for the repository's deployment files."""
    compose_text = (repo / "compose.yaml").read_text(encoding="utf-8")
    env = read_env_file(repo / ".env.example")
    dockerfile_text = (repo / "Dockerfile").read_text(encoding="utf-8")
    notes: list[str] = []
    problems = check_env_file(compose_text, env)
    try:
        compose = load_compose(compose_text, env)
    except (InterpolationError, ValueError, yaml.YAMLError) as exc:
        return [*problems, f"compose.yaml: {exc}"], notes
    problems += check_compose(compose, dockerfile_text)
    spec = check_spec(compose)
    if spec is None:
        notes.append("compose-spec is not installed: Compose Specification validation skipped.")
    else:
        problems += spec
    problems += check_dockerfile(dockerfile_text)
    dockerignore_text = (repo / ".dockerignore").read_text(encoding="utf-8")
    problems += check_dockerignore(dockerignore_text, dockerfile_text)
    return problems, notes


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    parser.add_argument("--repo", type=Path, default=REPO_DIR, help="Repository root.")
    options = parser.parse_args(argv)
    problems, notes = run_checks(options.repo)
    for note in notes:
        print(f"note: {note}")
    for problem in problems:
        print(f"error: {problem}", file=sys.stderr)
    if not problems:
        print("compose.yaml, .env.example and Dockerfile: ok")
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())
