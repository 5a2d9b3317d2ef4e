"""The curated public surface: each package's ``__all__`` sorted and complete, every name
served from where it lives, and the optional dependencies left unimported until used."""

from __future__ import annotations

import ast
import importlib
import inspect
import subprocess
import sys
from pathlib import Path
from types import ModuleType

import pytest

import sitecrawl
import sitecrawl.audit
import sitecrawl.control
import sitecrawl.fetch
import sitecrawl.frontier
import sitecrawl.parse
import sitecrawl.render
import sitecrawl.report
import sitecrawl.serve
import sitecrawl.sinks
import sitecrawl.throttle
from servers import checkout_env

PROMISED = {
    "AsyncCrawler",
    "CrawlRun",
    "crawl_site_async",
    "extract_page_data",
    "normalize_url",
    "get_h1_from_html",
    "get_first_paragraph_from_html",
    "get_urls_from_html",
    "get_images_from_html",
    "SitecrawlError",
}
PACKAGES = [
    sitecrawl,
    sitecrawl.audit,
    sitecrawl.control,
    sitecrawl.fetch,
    sitecrawl.frontier,
    sitecrawl.parse,
    sitecrawl.render,
    sitecrawl.report,
    sitecrawl.serve,
    sitecrawl.sinks,
    sitecrawl.throttle,
]
SUBPACKAGES = PACKAGES[1:]


def reexports(package: ModuleType) -> dict[str, str]:
    """Name -> absolute module of every ``from .x import name`` in the package's
    ``__init__``: at its top level, or under ``if TYPE_CHECKING:`` (names served lazily), or
    in its stub ``__init__.pyi`` (a face's names, each written once there)."""
    stub = Path(inspect.getfile(package)).with_suffix(".pyi")
    tree = ast.parse(stub.read_text() if stub.exists() else inspect.getsource(package))
    statements: list[ast.stmt] = []
    for node in tree.body:
        if isinstance(node, ast.If) and ast.unparse(node.test) == "TYPE_CHECKING":
            statements += node.body
        else:
            statements.append(node)
    found: dict[str, str] = {}
    for node in statements:
        if isinstance(node, ast.ImportFrom) and node.level == 1:
            module = f"{package.__name__}.{node.module}"
            found.update({alias.asname or alias.name: module for alias in node.names})
    return found


def ruff_order(name: str) -> tuple[int, str]:
    """The order ruff's RUF022 keeps ``__all__`` in: SCREAMING_CASE constants, then
    CamelCase classes, then everything else."""
    if len(name) > 1 and name.isupper():
        return 0, name
    return (1 if name[:1].isupper() else 2), name


def test_the_promised_names_are_public() -> None:
    assert set(sitecrawl.__all__) >= PROMISED


@pytest.mark.parametrize("package", SUBPACKAGES, ids=lambda p: p.__name__)
def test_subpackage_all_is_sorted(package: ModuleType) -> None:
    assert package.__all__ == sorted(package.__all__, key=ruff_order)


@pytest.mark.parametrize("package", PACKAGES, ids=lambda p: p.__name__)
def test_all_is_complete_and_every_name_comes_from_where_it_lives(package: ModuleType) -> None:
    """``__all__`` lists exactly what the package re-exports from its private modules, and
    each name resolves (lazily or not) to the object its module defines."""
    found = reexports(package)
    assert set(package.__all__) == set(found)
    for name, module in found.items():
        value = getattr(package, name)
        assert value is getattr(importlib.import_module(module), name), name
        if inspect.isclass(value) or inspect.isfunction(value):
            assert value.__module__ == module, f"{name} is defined in {value.__module__}"


def test_the_lazy_table_is_what_type_checkers_see() -> None:
    """``sitecrawl.__all__`` is derived from ``_LAZY``: the table must name, for every
    import that type checkers read, the same module."""
    lazy = {name: f"sitecrawl{module}" for name, module in sitecrawl._LAZY.items()}
    assert {**lazy, "__version__": "sitecrawl._version"} == reexports(sitecrawl)
    assert set(dir(sitecrawl)) >= set(sitecrawl.__all__)


def test_every_error_derives_from_one_root() -> None:
    errors = [
        value
        for name in sitecrawl.__all__
        if isinstance(value := getattr(sitecrawl, name), type) and issubclass(value, Exception)
    ]
    assert len(errors) > 10
    assert all(issubclass(error, sitecrawl.SitecrawlError) for error in errors)


def loaded(statement: str, *packages: str) -> set[str]:
    """Which of ``packages`` a fresh interpreter has imported after ``statement``."""
    code = f"import sys\n{statement}\nprint(' '.join(sorted(sys.modules)))"
    out = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, env=checkout_env(), check=True
    ).stdout
    return {name for name in out.split() if name.partition(".")[0] in packages}


@pytest.mark.parametrize(
    "statement",
    [
        "import sitecrawl",
        "import sitecrawl._cli",
        "from sitecrawl import AsyncCrawler, crawl_site_async, extract_page_data",
        "import sitecrawl.frontier, sitecrawl.sinks, sitecrawl.report",
        "from sitecrawl import page_markdown",
        "from sitecrawl._cli import _crawl, _check, _export, _report, _status, _worker",
        "import sitecrawl.serve",
    ],
)
def test_optional_dependencies_are_imported_only_where_used(statement: str) -> None:
    """As click's tests/test_imports.py: redis (the [redis] extra), pyarrow (the [parquet]
    extra), trafilatura and html_to_markdown (the [markdown] extra) are imported by the code
    that uses them, not by importing sitecrawl."""
    extras = ("redis", "pyarrow", "trafilatura", "html_to_markdown", "starlette", "uvicorn")
    assert loaded(statement, *extras) == set()


def test_importing_sitecrawl_does_not_import_aiohttp() -> None:
    """``sitecrawl --help`` stays fast: the package and its CLI load no HTTP stack."""
    assert loaded("import sitecrawl, sitecrawl._cli", "aiohttp") == set()
