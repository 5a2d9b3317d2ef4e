"""The C extension for the tests that hold it to its Python twins.

``sitecrawl._speedups`` is optional (an install without a C compiler goes on without it), so a
test that needs it skips when it was not built; CI sets ``SITECRAWL_REQUIRE_SPEEDUPS=1``, and
there a missing extension fails the test instead.
"""

from __future__ import annotations

import os

import pytest


def require_speedups() -> None:
    """Skip the calling test when ``sitecrawl._speedups`` was not built (fail it under
    ``SITECRAWL_REQUIRE_SPEEDUPS=1``)."""
    try:
        import sitecrawl._speedups  # noqa: F401
    except ImportError as exc:
        if os.environ.get("SITECRAWL_REQUIRE_SPEEDUPS") == "1":
            pytest.fail(f"SITECRAWL_REQUIRE_SPEEDUPS=1 but sitecrawl._speedups is missing: {exc}")
        pytest.skip("sitecrawl._speedups was not built (installed without a C compiler)")
