"""Compose-file variable interpolation, as the Compose Specification defines it.

``docker compose config`` does this for us where the compose plugin is
installed; CI has only the Docker client, so the deployment check interpolates
the parsed YAML itself with the values of ``.env.example``. Supported forms:
``$VAR``, ``${VAR}``, ``${VAR:-default}``, ``${VAR-default}``, ``${VAR:?message}``,
``${VAR?message}``, ``${VAR:+replacement}``, ``${VAR+replacement}`` and ``$$``
(a literal ``$``). Defaults are themselves interpolated.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import Any

_NAME = r"[A-Za-z_][A-Za-z0-9_]*"
_PLAIN = re.compile(rf"\$({_NAME})")


class InterpolationError(ValueError):
    """A ``${VAR:?…}`` whose variable is unset, or a malformed ``${…}``."""


def variables_in(text: str) -> set[str]:
    """Every variable name ``text`` refers to, whether or not it has a default."""
    found: set[str] = set()
    _substitute(text, {}, found, strict=False)
    return found


def interpolate(value: Any, env: Mapping[str, str]) -> Any:
    """``value`` (parsed YAML) with every string interpolated from ``env``; keys are left alone."""
    if isinstance(value, str):
        return _substitute(value, env, set(), strict=True)
    if isinstance(value, list):
        return [interpolate(item, env) for item in value]
    if isinstance(value, dict):
        return {key: interpolate(item, env) for key, item in value.items()}
    return value


def _substitute(text: str, env: Mapping[str, str], seen: set[str], *, strict: bool) -> str:
    out: list[str] = []
    index = 0
    while index < len(text):
        char = text[index]
        if char != "$":
            out.append(char)
            index += 1
            continue
        following = text[index + 1 : index + 2]
        if following == "$":
            out.append("$")
            index += 2
        elif following == "{":
            end = _closing_brace(text, index + 2)
            out.append(_braced(text[index + 2 : end], env, seen, strict=strict))
            index = end + 1
        elif plain := _PLAIN.match(text, index):
            seen.add(plain.group(1))
            out.append(env.get(plain.group(1), ""))
            index = plain.end()
        else:
            out.append("$")
            index += 1
    return "".join(out)


def _closing_brace(text: str, start: int) -> int:
    depth = 1
    for position in range(start, len(text)):
        if text[position] == "{":
            depth += 1
        elif text[position] == "}":
            depth -= 1
            if depth == 0:
                return position
    raise InterpolationError(f"Unclosed '${{' in {text!r}.")


_BRACED = re.compile(rf"({_NAME})(?:(:?[-?+])(.*))?", re.DOTALL)


def _braced(body: str, env: Mapping[str, str], seen: set[str], *, strict: bool) -> str:
    match = _BRACED.fullmatch(body)
    if match is None:
        raise InterpolationError(f"Invalid interpolation '${{{body}}}'.")
    name, operator, argument = match.group(1), match.group(2), match.group(3) or ""
    seen.add(name)
    value = env.get(name)
    unset_or_empty = value is None or value == ""
    missing = unset_or_empty if operator and operator.startswith(":") else value is None
    if operator in (":-", "-"):
        return _substitute(argument, env, seen, strict=strict) if missing else str(value)
    if operator in (":+", "+"):
        return "" if missing else _substitute(argument, env, seen, strict=strict)
    if operator in (":?", "?"):
        if missing and strict:
            raise InterpolationError(f"{name}: {argument or 'required variable is missing'}")
        return value or ""
    return value or ""
