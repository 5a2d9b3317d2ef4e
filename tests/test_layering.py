"""The package layout holds: imports run one way (no cycle between modules, none between
packages), no module reaches into another package's private module (it imports that package's
public face), each package's face serves what it lists, and no module passes 500 lines.

Imports are read from the source (``ast``), at run time only: those under ``if TYPE_CHECKING:``
are left out, those inside functions count (a lazy import is still an arrow)."""

from __future__ import annotations

import ast
import importlib
from collections import defaultdict
from collections.abc import Iterator
from pathlib import Path

import pytest

SRC = Path(__file__).resolve().parent.parent / "src"
PACKAGE = SRC / "sitecrawl"
MAX_LINES = 500


def _modules() -> dict[str, Path]:
    found = {}
    for path in sorted(PACKAGE.rglob("*.py")):
        name = ".".join(path.relative_to(SRC).with_suffix("").parts)
        found[name.removesuffix(".__init__")] = path
    return found


MODULES = _modules()


def _is_package(module: str) -> bool:
    return MODULES[module].name == "__init__.py"


def _runtime_imports(module: str) -> Iterator[tuple[str, list[str], int]]:
    """(imported module, names, line) of each run-time import of ``module``."""
    tree = ast.parse(MODULES[module].read_text(encoding="utf-8"))
    skipped: set[int] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.If) and "TYPE_CHECKING" in ast.unparse(node.test):
            for child in node.body:
                skipped.update(id(inner) for inner in ast.walk(child))
    base = module if _is_package(module) else module.rpartition(".")[0]
    for node in ast.walk(tree):
        if id(node) in skipped:
            continue
        if isinstance(node, ast.Import):
            for alias in node.names:
                yield alias.name, [], node.lineno
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                parts = base.split(".")[: len(base.split(".")) - node.level + 1]
                target = ".".join([*parts, *([node.module] if node.module else [])])
            else:
                target = node.module or ""
            yield target, [alias.name for alias in node.names], node.lineno


def _targets(module: str) -> Iterator[tuple[str, int]]:
    """The sitecrawl modules ``module`` imports at run time (a name that is a module counts
    as that module), with the line."""
    for target, names, line in _runtime_imports(module):
        if not target.startswith("sitecrawl"):
            continue
        submodules = [f"{target}.{name}" for name in names if f"{target}.{name}" in MODULES]
        for found in submodules or [target]:
            if found in MODULES and found != module:
                yield found, line


def _package_of(module: str) -> str:
    """The layer a module belongs to: its sub-package, or the top-level module itself."""
    parts = module.split(".")
    return parts[1] if len(parts) > 1 else "sitecrawl"


def _private_target(importer: str, target: str) -> bool:
    """Whether ``target`` is a private module of a sub-package ``importer`` is outside of."""
    parts = target.split(".")
    for depth in range(2, len(parts)):
        package, leaf = ".".join(parts[:depth]), parts[depth]
        if (
            _is_package(package)
            and leaf.startswith("_")
            and not (importer == package or importer.startswith(package + "."))
        ):
            return True
    return False


def _cycles(edges: dict[str, set[str]]) -> list[list[str]]:
    """Strongly connected components of more than one node (Tarjan)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    found: list[list[str]] = []

    def visit(node: str) -> None:
        index[node] = low[node] = len(index)
        stack.append(node)
        on_stack.add(node)
        for other in sorted(edges.get(node, ())):
            if other not in index:
                visit(other)
                low[node] = min(low[node], low[other])
            elif other in on_stack:
                low[node] = min(low[node], index[other])
        if low[node] == index[node]:
            component = []
            while True:
                other = stack.pop()
                on_stack.discard(other)
                component.append(other)
                if other == node:
                    break
            if len(component) > 1:
                found.append(sorted(component))

    for node in sorted(edges):
        if node not in index:
            visit(node)
    return found


def _face_target(target: str, names: list[str]) -> list[str]:
    """The modules a package face serves ``names`` from (its ``_LAZY`` table), so that an
    import through a face is an arrow to where the code lives."""
    face = importlib.import_module(target)
    table: dict[str, str] = getattr(face, "_LAZY", {})
    return [
        importlib.util.resolve_name(table[name], target) for name in names if name in table
    ] or [target]


def test_no_module_imports_another_packages_private_module() -> None:
    found = [
        f"{module}:{line} imports {target}"
        for module in MODULES
        if module != "sitecrawl"  # the public surface serves names from where they live
        for target, line in _targets(module)
        if _private_target(module, target)
    ]
    assert not found, "import the package's public face instead:\n" + "\n".join(found)


def test_no_import_cycle_between_modules() -> None:
    edges = {module: {target for target, _ in _targets(module)} for module in MODULES}
    assert not _cycles(edges)


def test_no_import_cycle_between_packages() -> None:
    edges: dict[str, set[str]] = defaultdict(set)
    for module in MODULES:
        if module == "sitecrawl":
            continue
        for target, names, _ in _runtime_imports(module):
            if not target.startswith("sitecrawl.") or target not in MODULES:
                continue
            real = _face_target(target, names) if _is_package(target) else [target]
            for where in real:
                if where in MODULES and _package_of(where) != _package_of(module):
                    edges[_package_of(module)].add(_package_of(where))
    assert not _cycles(edges)


@pytest.mark.parametrize("module", sorted(m for m in MODULES if _is_package(m)))
def test_each_face_serves_what_it_lists(module: str) -> None:
    face = importlib.import_module(module)
    for name in getattr(face, "__all__", ()):
        assert getattr(face, name) is not None, name


def test_no_module_over_500_lines() -> None:
    long = {
        name: lines
        for name, path in MODULES.items()
        if (lines := len(path.read_text(encoding="utf-8").splitlines())) > MAX_LINES
    }
    assert not long


def test_the_checks_can_fail() -> None:
    assert _cycles({"a": {"b"}, "b": {"a"}, "c": {"a"}}) == [["a", "b"]]
    assert _private_target("sitecrawl._crawler", "sitecrawl.parse._pool")
    assert not _private_target("sitecrawl.parse._child", "sitecrawl.parse._pool")
    assert not _private_target("sitecrawl._crawler", "sitecrawl.parse")
