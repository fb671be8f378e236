"""Which errors a function can raise, read from the source: the call graph, walked statically.

For the API reference's check (``tests/integration/test_openapi.py``): every error a route
handler can raise must be among the ones its operation documents. The walk is deliberately
simple and errs on the side of finding too little, never too much:

- an error is *raisable* in a function when the function constructs it (``raise X(…)``,
  or ``X(…)`` handed to a helper that raises it), X being a class with an int ``status``
  and a str ``code``;
- a call is followed when its target can be named: a function of the same module, one
  imported by name, ``module.function`` for an imported module, ``self.method`` within a
  class, or ``anything.method`` when exactly one class of the analysed packages defines a
  method of that name.

Only ``service`` and ``retrieval`` are read (``extract`` runs in the worker, not the request).
"""

from __future__ import annotations

import ast
import importlib
from collections import defaultdict
from dataclasses import dataclass, field
from functools import cache
from pathlib import Path

from tests.support.paths import REPO_DIR

PACKAGES = ("service", "retrieval")


@dataclass
class _Function:
    module: str
    qualname: str
    node: ast.FunctionDef | ast.AsyncFunctionDef
    owner: str | None = None
    """The class whose method this is."""


@dataclass
class _Module:
    name: str
    imports: dict[str, str] = field(default_factory=dict)
    """Local name -> dotted target (a module, or ``module.attribute``)."""
    functions: dict[str, _Function] = field(default_factory=dict)
    """Qualified name within the module -> function."""
    attributes: dict[str, dict[str, str]] = field(default_factory=dict)
    """Class -> attribute -> the dotted name of its type, as ``__init__`` sets it."""


def _module_name(path: Path) -> str:
    parts = list(path.relative_to(REPO_DIR).with_suffix("").parts)
    if parts[-1] == "__init__":
        parts.pop()
    return ".".join(parts)


def _read(path: Path) -> _Module:
    name = _module_name(path)
    tree = ast.parse(path.read_text(encoding="utf-8"))
    module = _Module(name)
    package = name if path.name == "__init__.py" else name.rpartition(".")[0]
    for node in ast.walk(tree):
        if isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                base = ".".join(package.split(".")[: len(package.split(".")) - node.level + 1])
                base = f"{base}.{node.module}" if node.module else base
            for alias in node.names:
                module.imports[alias.asname or alias.name] = f"{base}.{alias.name}"
        elif isinstance(node, ast.Import):
            for alias in node.names:
                module.imports[alias.asname or alias.name.split(".")[0]] = alias.name
    for node in tree.body:
        if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef):
            module.functions[node.name] = _Function(name, node.name, node)
        elif isinstance(node, ast.ClassDef):
            for item in node.body:
                if isinstance(item, ast.FunctionDef | ast.AsyncFunctionDef):
                    qualname = f"{node.name}.{item.name}"
                    module.functions[qualname] = _Function(name, qualname, item, owner=node.name)
                    if item.name == "__init__":
                        module.attributes[node.name] = _attribute_types(module, item)
    return module


def _qualified(module: _Module, name: str) -> str:
    if name in module.imports:
        return module.imports[name]
    return f"{module.name}.{name}"


def _annotation(node: ast.expr | None) -> str | None:
    if isinstance(node, ast.Constant) and isinstance(node.value, str):  # postponed annotation
        node = ast.parse(node.value, mode="eval").body
    return _dotted(node) if node is not None else None


def _attribute_types(
    module: _Module, init: ast.FunctionDef | ast.AsyncFunctionDef
) -> dict[str, str]:
    """``self.x = x`` (``x: T`` a parameter) and ``self.x = T(…)`` in an ``__init__``."""
    arguments = [*init.args.args, *init.args.kwonlyargs]
    parameters = {arg.arg: _annotation(arg.annotation) for arg in arguments}
    found: dict[str, str] = {}
    for node in ast.walk(init):
        if not isinstance(node, ast.Assign) or len(node.targets) != 1:
            continue
        target = _dotted(node.targets[0])
        if target is None or not target.startswith("self."):
            continue
        value = node.value
        kind: str | None = None
        if isinstance(value, ast.Name):
            kind = parameters.get(value.id)
        elif isinstance(value, ast.Call):
            kind = _dotted(value.func)
        if kind is not None:
            found[target.removeprefix("self.")] = _qualified(module, kind)
    return found


@cache
def _modules() -> dict[str, _Module]:
    found: dict[str, _Module] = {}
    for package in PACKAGES:
        for path in sorted((REPO_DIR / package).rglob("*.py")):
            module = _read(path)
            found[module.name] = module
    return found


@cache
def _methods_by_name() -> dict[str, list[_Function]]:
    methods: dict[str, list[_Function]] = defaultdict(list)
    for module in _modules().values():
        for function in module.functions.values():
            # Decorated methods (route handlers, properties) are not called by name.
            if function.owner is not None and not function.node.decorator_list:
                methods[function.node.name].append(function)
    return methods


def _dotted(node: ast.expr) -> str | None:
    if isinstance(node, ast.Name):
        return node.id
    if isinstance(node, ast.Attribute):
        base = _dotted(node.value)
        return f"{base}.{node.attr}" if base else None
    return None


def _error_class(target: str) -> type[Exception] | None:
    module_name, _, attribute = target.rpartition(".")
    if not module_name:
        return None
    try:
        value = getattr(importlib.import_module(module_name), attribute, None)
    except ImportError:
        return None
    documented = isinstance(getattr(value, "status", None), int) and isinstance(
        getattr(value, "code", None), str
    )
    if isinstance(value, type) and issubclass(value, Exception) and documented:
        return value
    return None


def _typed_call(module: _Module, function: _Function, callee: str) -> str | None:
    """``parameter.attribute.method`` where the parameter is annotated with a class whose
    ``__init__`` says what the attribute is (``runtime.search_limiter.check``)."""
    parts = callee.split(".")
    if len(parts) != 3:
        return None
    arguments = [*function.node.args.args, *function.node.args.kwonlyargs]
    annotation = next((_annotation(a.annotation) for a in arguments if a.arg == parts[0]), None)
    if annotation is None:
        return None
    owner = _qualified(module, annotation)
    owner_module, _, owner_class = owner.rpartition(".")
    attributes = _modules().get(owner_module, _Module(owner_module)).attributes.get(owner_class, {})
    kind = attributes.get(parts[1])
    return f"{kind}.{parts[2]}" if kind else None


def _resolve(module: _Module, function: _Function, callee: str) -> list[str]:
    """The dotted targets a call may reach: ``module.qualname`` strings."""
    typed = _typed_call(module, function, callee)
    if typed is not None:
        return [typed]
    head, _, rest = callee.partition(".")
    if not rest:
        if head in module.functions:
            return [f"{module.name}.{head}"]
        if head in module.imports:
            return [module.imports[head]]
        return []
    if head in ("self", "cls") and function.owner is not None and "." not in rest:
        return [f"{module.name}.{function.owner}.{rest}"]
    if head in module.imports:
        target = module.imports[head]
        return [f"{target}.{rest}"]  # module.function, or Class.method
    method = callee.rpartition(".")[2]
    candidates = _methods_by_name().get(method, [])
    if len(candidates) == 1:
        only = candidates[0]
        return [f"{only.module}.{only.qualname}"]
    return []


def _locate(target: str) -> _Function | None:
    modules = _modules()
    parts = target.split(".")
    for cut in range(len(parts) - 1, 0, -1):
        module = modules.get(".".join(parts[:cut]))
        if module is not None:
            return module.functions.get(".".join(parts[cut:]))
    return None


def raisable(target: str) -> set[type[Exception]]:
    """Error classes the function ``module.qualname`` can raise, through what it calls."""
    seen: set[str] = set()
    found: set[type[Exception]] = set()
    stack = [target]
    while stack:
        current = stack.pop()
        if current in seen:
            continue
        seen.add(current)
        error = _error_class(current)
        if error is not None:
            found.add(error)
            continue
        function = _locate(current)
        if function is None:
            continue
        module = _modules()[function.module]
        body = ast.Module(body=function.node.body, type_ignores=[])  # not the decorators
        for node in ast.walk(body):
            if isinstance(node, ast.Call):
                callee = _dotted(node.func)
                if callee is not None:
                    stack.extend(_resolve(module, function, callee))
    return found
