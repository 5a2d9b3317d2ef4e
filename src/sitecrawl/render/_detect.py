"""Which pages to render, and what JavaScript changed. Pure: bytes and values in, values out.

``auto`` mode decides page by page from what the HTTP path already has (the body's bytes,
the parser's word count and links), so a static page costs a few ``bytes.find``:

- a page without ``<script`` is never rendered;
- a page with at least :data:`RICH_WORDS` words and :data:`RICH_LINKS` same-site links is
  content, not a shell: no further look;
- otherwise a *shell signal* asks for a render: an empty application root
  (``<div id="root"></div>``, ``app``, ``__next``, ``__nuxt``, ``<app-root>``), a
  ``<noscript>`` that mentions JavaScript, or a thin page (fewer than :data:`THIN_WORDS`
  words and no same-site link); a framework marker (``data-reactroot``, ``ng-version``,
  ``__NEXT_DATA__``, ``data-server-rendered``, ``data-v-app``) asks for one as a sample.

Rendered pages teach their URL *template* (:func:`template_of`: the path with digit runs
and ids folded): once :data:`SAMPLES` pages of a template were rendered, the template renders
every page (even those with no signal) when any of them *gained* (:func:`gained`: at least
one new same-site link, or :data:`MORE_WORDS` more words and a quarter more), and none of them
(signals or not) otherwise.
"""

from __future__ import annotations

import re
from typing import TYPE_CHECKING, Any

from .._models import RENDER_COMPARED

if TYPE_CHECKING:
    from ..parse import Extracted

#: A page with at least this many words and :data:`RICH_LINKS` same-site links is content.
RICH_WORDS = 150
RICH_LINKS = 3
#: Fewer words than this and no same-site link: a thin page (a shell, or a redirect page).
THIN_WORDS = 20
#: Rendered pages of a template before it is decided.
SAMPLES = 3
#: Words a render must add (and a quarter more than the raw HTML's) to count as a gain.
MORE_WORDS = 20

_ROOT_IDS = (b"root", b"app", b"__next", b"__nuxt", b"svelte")
_ROOT_MARKERS = (
    *(
        marker
        for name in _ROOT_IDS
        for marker in (b'id="' + name + b'"', b"id='" + name + b"'", b"id=" + name + b">")
    ),
    b"<app-root",
)
_FRAMEWORK_MARKERS = (
    b"data-reactroot",
    b"ng-version",
    b"__NEXT_DATA__",
    b"data-server-rendered",
    b"data-v-app",
)
_SPACE = b" \t\r\n"


_TAG = re.compile(rb"<[^>]*>")


def _empty_after(body: bytes, at: int) -> bool:
    """The element whose opening tag holds offset ``at`` is empty or near-empty: up to the
    first ``</div`` (or in the next 300 bytes), under 40 bytes of text once tags are
    removed (a loading message), and no link."""
    end = body.find(b">", at)
    if end < 0:
        return False
    rest = body[end + 1 : end + 301]
    close = rest.find(b"</div")
    inside = rest if close < 0 else rest[:close]
    return b"<a " not in inside and len(_TAG.sub(b"", inside).strip()) < 40


def shell_signal(body: bytes, word_count: int | None, site_links: int) -> str | None:
    """Why the page looks like an application shell (``empty root``, ``noscript``,
    ``thin page``, ``framework``), or None. ``site_links``: its ``a`` links to its own
    host."""
    if b"<script" not in body and b"<SCRIPT" not in body:
        return None
    words = word_count or 0
    if words >= RICH_WORDS and site_links >= RICH_LINKS:
        return None
    for marker in _ROOT_MARKERS:
        at = body.find(marker)
        if at >= 0 and _empty_after(body, at):
            return "empty root"
    at = body.find(b"<noscript")
    if at >= 0 and b"javascript" in body[at : at + 600].lower():
        return "noscript"
    if words < THIN_WORDS and site_links == 0:
        return "thin page"
    if any(marker in body for marker in _FRAMEWORK_MARKERS):
        return "framework"
    return None


def site_links(page_url: str, links: list[str], enough: int | None = None) -> int:
    """How many of ``links`` go to ``page_url``'s own origin (counting stops at ``enough``)."""
    slash = page_url.find("/", page_url.find("://") + 3)
    origin = page_url if slash < 0 else page_url[: slash + 1]
    count = 0
    for link in links:
        if link.startswith(origin):
            count += 1
            if count == enough:
                break
    return count


_ID = re.compile(
    r"^(?:(?=[a-f]*[0-9])[0-9a-f]{8,}|[0-9a-f-]{32,36}|(?=[A-Za-z_]*[0-9])[A-Za-z0-9_]{16,})$"
)
_DIGITS = re.compile(r"[0-9]+")


def template_of(url: str) -> str:
    """The URL's template: host and path, each segment an id (8+ hex digits, a UUID, a
    token of 16+ letters, digits and ``_`` with a digit) folded to ``:id`` and digit runs to
    ``#``; no query.
    ``https://a.test/item/123?x=1`` -> ``a.test/item/#``."""
    rest = url.split("://", 1)[-1]
    cut = min((i for i in (rest.find("?"), rest.find("#")) if i >= 0), default=len(rest))
    rest = rest[:cut]
    segments = rest.split("/")
    return "/".join(
        [segments[0]]
        + [":id" if _ID.match(segment) else _DIGITS.sub("#", segment) for segment in segments[1:]]
    )


def gained(raw: Extracted, rendered: Extracted, page_url: str) -> bool:
    """Rendering found more: a same-site ``a`` link the raw HTML lacks, or at least
    :data:`MORE_WORDS` more words and a quarter more."""
    have = set(raw.outgoing_links)
    new = [link for link in rendered.outgoing_links if link not in have]
    if site_links(page_url, new):
        return True
    before, after = raw.word_count or 0, rendered.word_count or 0
    return after >= before + MORE_WORDS and after >= before * 1.25


class TemplateLearner:
    """Per URL template: undecided until :data:`SAMPLES` rendered pages were seen, then
    render all (a sample gained) or none. ``decisions`` maps decided templates to it."""

    def __init__(self, samples: int = SAMPLES) -> None:
        self.samples = samples
        self.decisions: dict[str, bool] = {}
        self._seen: dict[str, list[bool]] = {}

    def decision(self, template: str) -> bool | None:
        return self.decisions.get(template)

    def observe(self, template: str, gain: bool) -> None:
        """A rendered page of ``template``: did rendering gain?"""
        if template in self.decisions:
            return
        seen = self._seen.setdefault(template, [])
        seen.append(gain)
        if gain or len(seen) >= self.samples:
            self.decisions[template] = any(seen)
            del self._seen[template]


class AutoPolicy:
    """``auto`` mode's decision for each page: why to render it, or None."""

    def __init__(self, learner: TemplateLearner | None = None) -> None:
        self.learner = learner or TemplateLearner()

    def why(self, url: str, body: bytes, data: Extracted) -> tuple[str | None, str]:
        """``(reason or None, template)``: ``template`` when the page's template renders
        all, a shell signal while it is undecided, None otherwise (and always None for a
        page without scripts: nothing could change it)."""
        if b"<script" not in body and b"<SCRIPT" not in body:
            return None, ""
        words = data.word_count or 0
        links = site_links(url, data.outgoing_links, RICH_LINKS if words >= RICH_WORDS else 1)
        signal = shell_signal(body, words, links)
        decisions = self.learner.decisions
        if signal is None and not decisions:  # a static site's page: no template to look up
            return None, ""
        template = template_of(url)
        decided = decisions.get(template)
        if decided is not None:
            return ("template" if decided else None), template
        return signal, template


#: The values compared between the raw HTML and the rendered DOM: the name ``js_changed``
#: gives a difference -> the parsed value (the record's fields marked ``rendered``).
COMPARED = RENDER_COMPARED


def changes(raw: Extracted, rendered: Extracted) -> tuple[list[str], list[str], dict[str, Any]]:
    """``(js_links, js_changed, html_values)``: the ``a`` targets the rendered DOM adds, the
    names of the fields whose values differ, and the raw HTML's value of each (``links``:
    the targets the rendered DOM lacks)."""
    have = set(raw.outgoing_links)
    added = [link for link in rendered.outgoing_links if link not in have]
    shown = set(rendered.outgoing_links)
    removed = [link for link in raw.outgoing_links if link not in shown]
    changed: list[str] = []
    values: dict[str, Any] = {}
    for name, attribute in COMPARED.items():
        before = getattr(raw, attribute)
        if before != getattr(rendered, attribute):
            changed.append(name)
            values[name] = before
    if added or removed:
        changed.append("links")
        values["links"] = removed
    return added, changed, values
