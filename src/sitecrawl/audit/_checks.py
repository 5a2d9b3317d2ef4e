"""The checks of a crawl's issues table: each one's stable dotted name and severity. Pure data.

A name never changes once released (CI pipelines name them in ``check --fail-on``); what each
means and how to fix it is the one table in ``docs/checks.md``, which a test holds to this list.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Any, Literal, TypeAlias

Severity: TypeAlias = Literal["error", "warning", "notice"]
#: One finding, before it is an issues row: ``(check, url, message, detail)``.
Finding: TypeAlias = tuple[str, str, str, dict[str, Any]]
#: The severities, worst first.
SEVERITIES: tuple[Severity, ...] = ("error", "warning", "notice")


@dataclass(frozen=True, slots=True)
class Check:
    """One check: its name (``family.what``), its severity and a line for people."""

    name: str
    severity: Severity
    summary: str

    @property
    def family(self) -> str:
        return self.name.partition(".")[0]


#: Every check, by name, in the order the report and docs/checks.md list them.
CHECKS: dict[str, Check] = {
    check.name: check
    for check in (
        Check("link.broken", "error", "a link target answers 4xx/5xx or not at all"),
        Check("link.redirect", "notice", "a URL redirects once before it answers"),
        Check("redirect.chain", "warning", "a URL redirects two or more times"),
        Check("title.missing", "error", "a page has no title"),
        Check("title.duplicate", "warning", "several pages share one title"),
        Check("h1.missing", "warning", "a page has no h1"),
        Check("h1.duplicate", "notice", "several pages share one h1"),
        Check("meta_description.missing", "warning", "a page has no meta description"),
        Check("meta_description.duplicate", "warning", "several pages share a description"),
        Check("page.slow", "warning", "a page answers slower than the threshold"),
        Check("page.noindex", "notice", "a page tells search engines not to index it"),
        Check("page.canonicalised", "notice", "a page's canonical is another URL"),
        Check("image.missing_alt", "warning", "an image has no alt text"),
        Check("exact_duplicate", "warning", "another page has the same main content"),
        Check("near_duplicate", "warning", "another page's main content is nearly the same"),
        Check("hreflang.invalid_code", "error", "an hreflang value is no language(-region)"),
        Check("hreflang.conflict", "error", "one language points at several URLs"),
        Check("hreflang.no_return", "error", "an alternate does not link back"),
        Check("hreflang.target_not_200", "error", "an alternate answers other than 200"),
        Check("hreflang.target_noindex", "error", "an alternate is noindex"),
        Check("hreflang.target_canonicalised", "error", "an alternate's canonical is elsewhere"),
        Check("hreflang.no_self_reference", "warning", "a page's hreflang omits the page"),
        Check("hreflang.no_x_default", "notice", "a page's hreflang has no x-default"),
        Check("sitemap.broken", "error", "a sitemap URL answers 4xx/5xx or not at all"),
        Check("sitemap.redirect", "warning", "a sitemap URL redirects"),
        Check("sitemap.non_indexable", "warning", "a sitemap URL is noindex"),
        Check("sitemap.canonicalised", "warning", "a sitemap URL's canonical is elsewhere"),
        Check("sitemap.blocked", "error", "robots.txt disallows a sitemap URL"),
        Check("sitemap.missing", "warning", "an indexable page is in no sitemap"),
        Check("sitemap.orphan", "warning", "a sitemap URL no crawled page links to"),
        Check("structured_data.invalid_json", "error", "a JSON-LD block is not JSON"),
        Check("structured_data.unknown_type", "error", "a type schema.org does not have"),
        Check("structured_data.unknown_property", "warning", "a property the item's types lack"),
        Check("structured_data.missing_required", "error", "a rich result's required property"),
        Check(
            "structured_data.missing_recommended", "warning", "a rich result's recommended property"
        ),
    )
}


#: The family of the accessibility checks: ``a11y.<rule>`` for each axe-core rule a rendered
#: page breaks (``--a11y``), named by axe, not listed in :data:`CHECKS`; the severity is the
#: violation's impact's (:data:`A11Y_SEVERITY`).
A11Y = "a11y"
#: axe-core's impact -> the row's severity: what blocks or seriously hinders some visitors is
#: an error, what hinders them a warning, the rest a notice.
A11Y_SEVERITY: dict[str, Severity] = {
    "critical": "error",
    "serious": "error",
    "moderate": "warning",
    "minor": "notice",
}
_A11Y_RULE = re.compile(r"a11y\.[a-z0-9-]+")


def is_a11y(name: str) -> bool:
    """Whether ``name`` is an accessibility check, ``a11y.<rule>``."""
    return _A11Y_RULE.fullmatch(name) is not None


def check_names(text: str) -> tuple[str, ...]:
    """The checks ``text`` names, comma-separated: a check (``title.missing``) or a family
    (``hreflang``: every ``hreflang.*`` check; ``a11y``: every ``a11y.<rule>``, and one such
    rule by its name). Raises ValueError naming an unknown one."""
    names: list[str] = []
    for part in text.split(","):
        name = part.strip()
        if not name:
            continue
        if name == A11Y or is_a11y(name):
            names += [name] if name not in names else []
            continue
        found = [n for n in CHECKS if n == name or n.startswith(name + ".")]
        if not found:
            families = sorted({check.family for check in CHECKS.values()} | {A11Y})
            raise ValueError(
                f"unknown check {name!r}: name one of docs/checks.md, or a family"
                f" ({', '.join(families)})"
            )
        names += [n for n in found if n not in names]
    if not names:
        raise ValueError("no check named")
    return tuple(names)


@dataclass(frozen=True, slots=True)
class IssueRow:
    """One finding: the page (or link target) ``url``, the ``check`` that found it, its
    ``severity``, a ``message`` for people and a ``detail`` object for code."""

    url: str
    check: str
    severity: Severity
    message: str
    detail: dict[str, Any] = field(default_factory=dict)

    def to_dict(self) -> dict[str, Any]:
        return {
            "url": self.url,
            "check": self.check,
            "severity": self.severity,
            "message": self.message,
            "detail": self.detail,
        }


def severity_at_least(severity: str, floor: Severity) -> bool:
    """Whether ``severity`` is ``floor`` or worse."""
    return SEVERITIES.index(severity) <= SEVERITIES.index(floor)
