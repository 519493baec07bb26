"""The import structure of sklmn, checked by static analysis of its sources.

The layers and what each may import are described in ``docs/architecture.md``.
Imports are read with :mod:`ast` (nothing is imported): those executed when a
module is imported (module level, class bodies, ``if``/``try`` blocks) are told
apart from the deferred ones inside functions.
"""

from __future__ import annotations

import ast
import pathlib
from dataclasses import dataclass

import sklmn

ROOT = pathlib.Path(sklmn.__file__).parent
COMPAT = "sklmn.utils._compat"


@dataclass(frozen=True)
class Import:
    importer: str  # dotted module name of the importing file
    module: str  # absolute dotted name of the imported module
    name: str | None  # the name of ``from module import name``, else None
    deferred: bool  # inside a function: runs when called, not on import
    line: int

    def __str__(self) -> str:
        what = self.module if self.name is None else f"{self.module}.{self.name}"
        kind = " (deferred)" if self.deferred else ""
        return f"{self.importer}:{self.line} imports {what}{kind}"


def _module_name(path: pathlib.Path) -> str:
    parts = list(path.relative_to(ROOT.parent).with_suffix("").parts)
    if parts[-1] == "__init__":
        parts.pop()
    return ".".join(parts)


FILES = {_module_name(p): p for p in sorted(ROOT.rglob("*.py"))}


DYNAMIC = "<computed name>"


def _is_dynamic_import(func: ast.AST) -> bool:
    """``importlib.import_module``, ``import_module`` or ``__import__``."""
    if isinstance(func, ast.Name):
        return func.id in ("__import__", "import_module")
    return isinstance(func, ast.Attribute) and func.attr in (
        "import_module",
        "__import__",
    )


def _imports_of(name: str, path: pathlib.Path) -> list[Import]:
    package = name.split(".")
    if path.name != "__init__.py":
        package.pop()
    found = []

    def visit(node: ast.AST, deferred: bool) -> None:
        for child in ast.iter_child_nodes(node):
            if isinstance(child, ast.Import):
                for alias in child.names:
                    found.append(Import(name, alias.name, None, deferred, child.lineno))
            elif isinstance(child, ast.ImportFrom):
                if child.level:
                    base = package[: len(package) - child.level + 1]
                    module = ".".join(base + ([child.module] if child.module else []))
                else:
                    module = child.module
                for alias in child.names:
                    found.append(
                        Import(name, module, alias.name, deferred, child.lineno)
                    )
            elif isinstance(child, ast.Call) and _is_dynamic_import(child.func):
                # importlib.import_module("sklmn.x") / __import__("sklmn.x"):
                # a literal name is an import like any other; a computed one
                # is listed as DYNAMIC (allowed only where listed below)
                arg = child.args[0] if child.args else None
                literal = isinstance(arg, ast.Constant) and isinstance(arg.value, str)
                module = arg.value if literal else DYNAMIC
                if literal and module.startswith("."):
                    level = len(module) - len(module.lstrip("."))
                    base = package[: len(package) - level + 1]
                    module = ".".join(base + [module.lstrip(".")])
                found.append(Import(name, module, None, deferred, child.lineno))
            inner = isinstance(
                child, ast.FunctionDef | ast.AsyncFunctionDef | ast.Lambda
            )
            visit(child, deferred or inner)

    visit(ast.parse(path.read_text(encoding="utf-8")), False)
    return found


IMPORTS = [imp for name, path in FILES.items() for imp in _imports_of(name, path)]


def _sklmn_target(imp: Import) -> str | None:
    """The sklmn module an import loads (a submodule when it names one)."""
    if not imp.module.startswith("sklmn"):
        return None
    if imp.name is not None and f"{imp.module}.{imp.name}" in FILES:
        return f"{imp.module}.{imp.name}"
    return imp.module if imp.module in FILES else None


def _in(module: str, package: str) -> bool:
    return module == package or module.startswith(package + ".")


def _is_private_sklearn(imp: Import) -> bool:
    if not _in(imp.module, "sklearn"):
        return False
    parts = imp.module.split(".") + ([imp.name] if imp.name else [])
    return any(part.startswith("_") for part in parts)


def _cycles(deferred: bool) -> list[list[str]]:
    """Strongly connected components (more than one module) of the graph."""
    graph: dict[str, set[str]] = {name: set() for name in FILES}
    for imp in IMPORTS:
        target = _sklmn_target(imp)
        if target and target != imp.importer and (deferred or not imp.deferred):
            graph[imp.importer].add(target)
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    components = []

    def connect(v: str) -> None:  # Tarjan
        index[v] = low[v] = len(index)
        stack.append(v)
        for w in graph[v]:
            if w not in index:
                connect(w)
                low[v] = min(low[v], low[w])
            elif w in stack:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            component = []
            while True:
                w = stack.pop()
                component.append(w)
                if w == v:
                    break
            if len(component) > 1:
                components.append(sorted(component))

    for name in graph:
        if name not in index:
            connect(name)
    return components


def test_sources_found():
    assert "sklmn.nn._base" in FILES and COMPAT in FILES
    assert any(imp.deferred for imp in IMPORTS)


def test_nn_imports_no_scikit_learn():
    bad = [
        str(imp)
        for imp in IMPORTS
        if _in(imp.importer, "sklmn.nn") and _in(imp.module, "sklearn")
    ]
    assert not bad, "\n".join(bad)


def test_nn_imports_no_other_sklmn_package():
    # the lowest layer: every other package may build on it
    bad = [
        str(imp)
        for imp in IMPORTS
        if _in(imp.importer, "sklmn.nn")
        and _in(imp.module, "sklmn")
        and not _in(imp.module, "sklmn.nn")
    ]
    assert not bad, "\n".join(bad)


def test_pretraining_imports_no_private_estimators_module():
    bad = []
    for imp in IMPORTS:
        if not _in(imp.importer, "sklmn.pretraining"):
            continue
        target = _sklmn_target(imp) or imp.module
        private = target.startswith("sklmn.estimators._") or (
            target == "sklmn.estimators" and (imp.name or "").startswith("_")
        )
        if private:
            bad.append(str(imp))
    assert not bad, "\n".join(bad)


def test_training_layer_imports_neither_estimators_nor_pretraining():
    # sklmn._training sits below both packages that build nets with it
    bad = [
        str(imp)
        for imp in IMPORTS
        if _in(imp.importer, "sklmn._training")
        and any(
            _in(_sklmn_target(imp) or imp.module, package)
            for package in ("sklmn.estimators", "sklmn.pretraining")
        )
    ]
    assert not bad, "\n".join(bad)


def test_library_has_no_deferred_sklmn_import():
    # a deferred import of an sklmn module hides a layering problem; the
    # benchmarks (an application on top of the library) may defer theirs
    bad = [
        str(imp)
        for imp in IMPORTS
        if imp.deferred
        and _sklmn_target(imp)
        and not _in(imp.importer, "sklmn.benchmarks")
        and imp.importer != "sklmn.utils.estimator_checks"
    ]
    assert not bad, "\n".join(bad)


def test_no_import_cycle_at_module_level():
    assert _cycles(deferred=False) == []


def test_no_import_cycle_counting_deferred_imports():
    assert _cycles(deferred=True) == []


def test_only_compat_imports_private_scikit_learn_names():
    users = {imp.importer for imp in IMPORTS if _is_private_sklearn(imp)}
    bad = [str(imp) for imp in IMPORTS if _is_private_sklearn(imp)]
    assert users == {COMPAT}, "\n".join(i for i in bad if COMPAT not in i)


def test_dynamic_imports_are_seen():
    tree = ast.parse(
        "import importlib\n"
        "importlib.import_module('sklmn.estimators')\n"
        "def f():\n    __import__('sklmn.laes')\n"
    )
    calls = [n for n in ast.walk(tree) if isinstance(n, ast.Call)]
    assert all(_is_dynamic_import(c.func) for c in calls)


def test_persistence_imports_nothing_above_it():
    # the packages register their classes (sklmn.utils._registry); persistence
    # reads the registry and never imports them, statically or through
    # importlib / __import__
    above = (
        "sklmn.estimators",
        "sklmn.laes",
        "sklmn.pretraining",
        "sklmn.preprocessing",
        "sklmn.benchmarks",
    )
    bad = [
        str(imp)
        for imp in IMPORTS
        if imp.importer == "sklmn.persistence"
        and any(_in(_sklmn_target(imp) or imp.module, p) for p in above)
    ]
    assert not bad, "\n".join(bad)


def test_computed_imports_only_where_listed():
    # a computed module name hides what is imported: only the loader of
    # classes the caller names in ``trusted=`` (third-party code) uses one
    users = {imp.importer for imp in IMPORTS if imp.module == DYNAMIC}
    assert users <= {"sklmn.persistence"}, users
