"""Malformed MCP arguments answered in words a model can act on, never as a crash.

The SDK answers a bad ``prompts/get`` with JSON-RPC code 0 or -32603 and logs a
traceback (missing, blank or unexpected arguments, an unknown prompt), or with a
bare "Invalid request parameters" (an argument that is not a string); it answers
a tool call whose arguments miss the tool's schema with pydantic's validation
text. Here:

- ``prompts/get`` is checked before the SDK sees it (:class:`ArgumentShapeCheck`,
  a server middleware): any of the above is JSON-RPC -32602 (invalid params) with a
  message naming the prompt's arguments, and nothing is logged as an error; the same
  middleware answers a ``tools/call`` whose arguments are not an object with -32602;
- a tool call whose arguments fail validation is an ``isError`` result with code
  ``invalid_request`` naming each wrong argument and what the tool takes
  (:func:`invalid_arguments`). Values are never echoed back: they are the caller's
  data, and may be huge.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

from mcp.shared.exceptions import MCPError
from mcp_types import INVALID_PARAMS

from service.errors import InvalidRequest

if TYPE_CHECKING:
    from mcp.server.context import CallNext, HandlerResult, ServerRequestContext
    from mcp.server.mcpserver import MCPServer
    from pydantic import ValidationError

#: JSON Schema types, as a model reads them in a message.
_TYPE_WORDS = {
    "string": "a string",
    "integer": "an integer",
    "number": "a number",
    "boolean": "true or false",
    "array": "a list",
    "object": "an object",
}


def invalid_arguments(tool: str, exc: ValidationError, schema: Mapping[str, Any]) -> InvalidRequest:
    """What was wrong with a tool call's arguments, and what the tool takes."""
    problems = []
    for error in exc.errors(include_input=False, include_url=False):
        field = ".".join(str(part) for part in error["loc"]) or "arguments"
        if error["type"] == "missing":
            problems.append(f"{field!r} is required")
        elif error["type"] == "extra_forbidden":
            problems.append(f"{field!r} is not an argument of {tool}")
        else:
            problems.append(f"{field!r}: {error['msg'][:1].lower()}{error['msg'][1:]}")
    return InvalidRequest(
        f"Invalid arguments for {tool}: {'; '.join(problems)}. {tool} takes {_signature(schema)}."
    )


def _signature(schema: Mapping[str, Any]) -> str:
    required = set(schema.get("required", ()))
    parts = []
    for name, spec in schema.get("properties", {}).items():
        kinds = [
            _TYPE_WORDS.get(str(option.get("type")), "a value")
            for option in spec.get("anyOf", [spec])
            if option.get("type") != "null"
        ]
        kind = " or ".join(dict.fromkeys(kinds)) or "a value"
        parts.append(f"{name} ({kind}{', required' if name in required else ''})")
    return ", ".join(parts) or "no arguments"


class ArgumentShapeCheck:
    """Server middleware refusing a malformed ``prompts/get`` (or ``tools/call`` arguments
    that are not an object) with an actionable -32602."""

    def __init__(self, server: MCPServer[Any]) -> None:
        self.server = server

    async def __call__(
        self, ctx: ServerRequestContext[Any, Any], call_next: CallNext
    ) -> HandlerResult:
        if ctx.method == "prompts/get" and ctx.request_id is not None:
            await self.check(ctx.params)
        elif ctx.method == "tools/call" and ctx.request_id is not None:
            arguments = (ctx.params or {}).get("arguments")
            if arguments is not None and not isinstance(arguments, Mapping):
                raise MCPError(
                    INVALID_PARAMS,
                    "The arguments of a tool call are one JSON object of named arguments.",
                )
        return await call_next(ctx)

    async def check(self, params: Mapping[str, Any] | None) -> None:
        prompts = {prompt.name: prompt for prompt in await self.server.list_prompts()}
        available = ", ".join(sorted(prompts))
        name = (params or {}).get("name")
        if not isinstance(name, str) or name not in prompts:
            raise MCPError(INVALID_PARAMS, f"No such prompt; the prompts are: {available}.")
        declared = {argument.name: argument for argument in prompts[name].arguments or []}
        takes = ", ".join(
            f"{argument.name} ({'required' if argument.required else 'optional'}: "
            f"{argument.description or 'text'})"
            for argument in declared.values()
        )
        arguments = (params or {}).get("arguments") or {}
        if not isinstance(arguments, Mapping):
            raise MCPError(
                INVALID_PARAMS, f"Prompt arguments are an object of strings; {name} takes {takes}."
            )
        for key, value in arguments.items():
            if key not in declared:
                raise MCPError(
                    INVALID_PARAMS, f"{name} has no argument {str(key)[:100]!r}; it takes {takes}."
                )
            if not isinstance(value, str):
                raise MCPError(
                    INVALID_PARAMS,
                    f"Prompt arguments are strings; give {key!r} as text. {name} takes {takes}.",
                )
        for argument in declared.values():
            value = arguments.get(argument.name)
            if argument.required and (value is None or not value.strip()):
                raise MCPError(
                    INVALID_PARAMS,
                    f"{name} needs the argument {argument.name!r} ({argument.description}).",
                )
