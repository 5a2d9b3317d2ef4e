"""What a rendered page gives besides its DOM: a screenshot (``--screenshot``: a PNG of the
viewport or the full page, and a JPEG thumbnail a quarter of the viewport's size for the
report) and its accessibility violations (``--a11y``: axe-core, shipped in ``data/axe.min.js``,
run in the page). Read from the page once its DOM is read, within the render's budget.

A violation is ``{"rule", "impact", "help", "help_url", "nodes", "selectors"}``: axe's rule id
and impact (``critical``, ``serious``, ``moderate``, ``minor``), its one-line help and page,
how many elements break it and the CSS selectors of the first :data:`SELECTORS_KEPT`.
"""

from __future__ import annotations

import base64
from functools import cache
from importlib.resources import files
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from playwright.async_api import Page

    from .._config_render import Screenshot

#: The selectors a violation keeps (``nodes`` counts them all).
SELECTORS_KEPT = 10
#: The thumbnail's scale of the viewport, and its JPEG quality.
THUMB_SCALE = 0.25
THUMB_QUALITY = 60

_RUN_AXE = """async () => {
  const result = await axe.run(document, {resultTypes: ["violations"]});
  return result.violations.map(v => ({
    rule: v.id, impact: v.impact, help: v.help, help_url: v.helpUrl, nodes: v.nodes.length,
    selectors: v.nodes.slice(0, KEPT).map(n => n.target.map(String).join(" ")),
  }));
}""".replace("KEPT", str(SELECTORS_KEPT))


@cache
def axe_source() -> str:
    """axe-core's JavaScript, as shipped in the package."""
    return files(__package__).joinpath("data", "axe.min.js").read_text(encoding="utf-8")


async def screenshot(page: Page, mode: Screenshot) -> tuple[bytes, bytes]:
    """The page's PNG (``viewport`` or ``full``) and a JPEG thumbnail of its viewport."""
    png = await page.screenshot(type="png", full_page=mode == "full")
    size = page.viewport_size or {"width": 1280, "height": 720}
    session = await page.context.new_cdp_session(page)
    try:
        shot = await session.send(
            "Page.captureScreenshot",
            {
                "format": "jpeg",
                "quality": THUMB_QUALITY,
                "clip": {"x": 0, "y": 0, **size, "scale": THUMB_SCALE},
            },
        )
    finally:
        await session.detach()
    return png, base64.b64decode(shot["data"])


async def violations(page: Page) -> list[dict[str, Any]]:
    """axe-core's violations of the page as it is (see the module docstring)."""
    if not await page.evaluate("typeof axe === 'object'"):
        await page.evaluate(axe_source())
    found: list[dict[str, Any]] = await page.evaluate(_RUN_AXE)
    return found
