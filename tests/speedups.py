"""The C extensions for the tests that hold them to their Python twins.

``sitecrawl._speedups`` and ``sitecrawl.parse._scan`` are optional (an install without
a C compiler goes on without them), so a test that needs one skips when it was not built; CI sets
``SITECRAWL_REQUIRE_SPEEDUPS=1``, and there a missing extension fails the test instead.
"""

from __future__ import annotations

import importlib
import os

import pytest


def require_speedups(module: str = "sitecrawl._speedups") -> None:
    """Skip the calling test when the C extension ``module`` was not built (fail it under
    ``SITECRAWL_REQUIRE_SPEEDUPS=1``)."""
    try:
        importlib.import_module(module)
    except ImportError as exc:
        if os.environ.get("SITECRAWL_REQUIRE_SPEEDUPS") == "1":
            pytest.fail(f"SITECRAWL_REQUIRE_SPEEDUPS=1 but {module} is missing: {exc}")
        pytest.skip(f"{module} was not built (installed without a C compiler)")
