"""Small server-side SVG bar charts. Labels are escaped; no data reaches an attribute unescaped.

A bar's label is its range, with its unit on a second line (``100-250`` / ``ms``); a label
wider than its bar's slot is squeezed into it (``textLength``), so neighbours never run
together."""

from __future__ import annotations

import math
from collections import Counter
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from html import escape

from .._models import Page

_WIDTH = 320
_HEIGHT = 175
_TOP = 18
_BOTTOM = 34
_SIDE = 8

#: ``(upper bound, range, unit)`` of each bar.
MS_BUCKETS: tuple[tuple[float, str, str], ...] = (
    (100, "<100", "ms"),
    (250, "100-250", "ms"),
    (500, "250-500", "ms"),
    (1000, "0.5-1", "s"),
    (2000, "1-2", "s"),
    (5000, "2-5", "s"),
    (math.inf, "≥5", "s"),
)
SIZE_BUCKETS: tuple[tuple[float, str, str], ...] = (
    (10 * 1024, "<10", "KB"),
    (50 * 1024, "10-50", "KB"),
    (100 * 1024, "50-100", "KB"),
    (500 * 1024, "100-500", "KB"),
    (1024 * 1024, "0.5-1", "MB"),
    (5 * 1024 * 1024, "1-5", "MB"),
    (math.inf, "≥5", "MB"),
)
MAX_DEPTH_BARS = 15
#: The width of a label's character, at most (the charts' 11 px text), in viewBox units.
_CHAR_WIDTH = 7.0


@dataclass(frozen=True, slots=True)
class Bar:
    label: str
    value: int
    css: str = "bar"
    tip: str = ""
    unit: str = ""
    """A second line under the label."""


def pages(n: int) -> str:
    return f"{n:,} page{'s' * (n != 1)}"


def status_bars(pages_: Iterable[Page]) -> list[Bar]:
    counts = Counter(page.status for page in pages_)
    bars = [
        Bar(str(status), n, f"bar s-{status // 100}xx", f"HTTP {status}: {pages(n)}")
        for status, n in sorted((s, n) for s, n in counts.items() if s is not None)
    ]
    if counts[None]:
        bars.append(Bar("none", counts[None], "bar s-err", f"No response: {pages(counts[None])}"))
    return bars


def depth_bars(pages_: Iterable[Page]) -> list[Bar]:
    counts = Counter(min(page.depth, MAX_DEPTH_BARS) for page in pages_)
    if not counts:
        return []
    bars = []
    for depth in range(max(counts) + 1):
        label = f"{depth}+" if depth == MAX_DEPTH_BARS else str(depth)
        bars.append(Bar(label, counts[depth], tip=f"Depth {label}: {pages(counts[depth])}"))
    return bars


def bucket_bars(values: Iterable[float], buckets: Sequence[tuple[float, str, str]]) -> list[Bar]:
    counts = [0] * len(buckets)
    for value in values:
        for index, (upper, _label, _unit) in enumerate(buckets):
            if value < upper:
                counts[index] += 1
                break
    return [
        Bar(label, n, tip=f"{label} {unit}: {pages(n)}", unit=unit)
        for (_upper, label, unit), n in zip(buckets, counts, strict=True)
    ]


def _label(text: str, x: float, y: float, slot: float, css: str = "") -> str:
    """A label centred on ``x``, squeezed into its slot when it would be wider."""
    fit = slot * 0.8
    attrs = f' class="{css}"' if css else ""
    if len(text) * _CHAR_WIDTH > fit:
        attrs += f' textLength="{fit:.1f}" lengthAdjust="spacingAndGlyphs"'
    return f'<text{attrs} x="{x:.1f}" y="{y:.1f}" text-anchor="middle">{escape(text)}</text>'


def bar_chart(title: str, bars: Sequence[Bar]) -> str:
    """An accessible SVG bar chart; an empty one says so."""
    label = escape(title)
    if not bars or not any(bar.value for bar in bars):
        return (
            f'<svg viewBox="0 0 {_WIDTH} {_HEIGHT}" role="img" aria-label="{label}: no data">'
            f'<text x="{_WIDTH / 2}" y="{_HEIGHT / 2}" text-anchor="middle">No data</text></svg>'
        )
    peak = max(bar.value for bar in bars)
    plot_h = _HEIGHT - _TOP - _BOTTOM
    slot = (_WIDTH - 2 * _SIDE) / len(bars)
    width = max(2.0, slot * 0.72)
    parts = [f'<svg viewBox="0 0 {_WIDTH} {_HEIGHT}" role="img" aria-label="{label}">']
    base_y = _TOP + plot_h
    for index, bar in enumerate(bars):
        h = max(3.0, plot_h * bar.value / peak) if bar.value else 0.0  # a 1 stays visible
        x = _SIDE + index * slot + (slot - width) / 2
        cx = x + width / 2
        parts.append(
            f"<g><title>{escape(bar.tip or f'{bar.label}: {bar.value:,}')}</title>"
            f'<rect class="{escape(bar.css)}" x="{x:.1f}" y="{base_y - h:.1f}" '
            f'width="{width:.1f}" height="{h:.1f}" rx="3"/>'
            + _label(_short(bar.value), cx, base_y - h - 4, slot, "v")
            + _label(bar.label, cx, base_y + 14, slot)
            + (_label(bar.unit, cx, base_y + 27, slot) if bar.unit else "")
            + "</g>"
        )
    parts.append(
        f'<line class="axis" x1="{_SIDE}" x2="{_WIDTH - _SIDE}" y1="{base_y}" y2="{base_y}"/></svg>'
    )
    return "".join(parts)


def _short(n: int) -> str:
    if n >= 1_000_000:
        return f"{n / 1_000_000:.1f}M"
    if n >= 10_000:
        return f"{n / 1000:.0f}k"
    return f"{n:,}"
