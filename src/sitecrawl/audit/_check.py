"""What ``sitecrawl check`` found, and its two renderings: text and JUnit XML. Pure, no I/O.

:func:`check_outcome` joins a crawl's page records with the targets checked apart from the
crawl (:class:`~sitecrawl.audit._linkcheck.TargetStatus`) and runs the audit on them: broken links
grouped by target with their referrers, redirected links as warnings with their chain, and one
:class:`CheckedTarget` per distinct link target whose state is known (a JUnit test case each).

The JUnit XML follows the Ant JUnit format that CI systems read (Jenkins, GitLab, GitHub
actions): one ``<testsuite>`` with ``<properties>``, a ``<testcase>`` per checked target
(``classname`` internal or external, ``name`` the URL), a ``<failure>`` for each broken one
(and each redirected one with ``--fail-on-redirect``), warnings in ``<system-out>``.
"""

from __future__ import annotations

import re
import xml.etree.ElementTree as ET
from collections import Counter
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from datetime import datetime
from typing import TypeAlias

from .._exceptions import RedirectOutOfScope
from .._models import Page
from .._terminal import printable
from ._checks import IssueRow
from ._findings import BrokenLink, RedirectChain, Referrer, is_broken, page_key
from ._linkcheck import TargetStatus
from ._site import InternalTest
from ._targets import tally_targets

#: Why a link target was not checked, as the summary says it.
EXTERNAL = "external (no --external)"
BEYOND_LIMITS = "beyond the crawl's limits"
TIME_LIMIT = "cut by --max-time"
INTERRUPTED = "cut by Ctrl-C"


@dataclass(frozen=True, slots=True)
class SkippedTarget:
    """A link target the check was to ask and did not: it was stopped (``reason``)."""

    url: str
    internal: bool
    reason: str


@dataclass(frozen=True, slots=True)
class CheckedTarget:
    """One distinct link target whose answer is known (crawled, or checked apart)."""

    url: str
    internal: bool
    status: int | None
    error: str | None
    seconds: float


@dataclass(frozen=True, slots=True, kw_only=True)
class CheckOutcome:
    base_url: str
    broken: tuple[BrokenLink, ...]
    redirects: tuple[RedirectChain, ...]
    checked: tuple[CheckedTarget, ...]
    unchecked: int
    fail_on_redirect: bool = False
    #: ``(reason, count)`` of the targets not checked, most first; their sum is ``unchecked``.
    unchecked_why: tuple[tuple[str, int], ...] = ()
    skipped: tuple[SkippedTarget, ...] = ()
    #: The issues ``--fail-on`` and ``--fail-on-severity`` fail on (docs/checks.md).
    issues: tuple[IssueRow, ...] = ()

    @property
    def failed(self) -> bool:
        return (
            bool(self.broken)
            or (self.fail_on_redirect and bool(self.redirects))
            or bool(self.issues)
        )


def check_outcome(
    pages: Sequence[Page],
    base_url: str,
    checked: Mapping[str, TargetStatus],
    *,
    fail_on_redirect: bool = False,
    skipped: Mapping[str, str] | None = None,
    crawl_cut: str | None = None,
    progress: Callable[[int, int], None] | None = None,
) -> CheckOutcome:
    """``skipped``: target URL -> why the check did not get to it (it was stopped);
    ``crawl_cut``: why the crawl stopped early (:data:`TIME_LIMIT`, :data:`INTERRUPTED`),
    said of the site's pages it did not reach; ``progress(pages done, pages)`` is called as
    the links are read (:func:`~sitecrawl.audit._targets.tally_targets`).

    One pass over the links (:mod:`sitecrawl.audit._targets`): memory beyond the pages
    themselves grows with the distinct targets and the pages linking to broken or redirected
    ones, not with the links."""
    skipped = skipped or {}
    crawled: dict[str, Page] = {}
    for page in pages:
        crawled.setdefault(page_key(page.url), page)
    redirected = _redirected(pages, checked)
    broken_answers: dict[str, Answer] = {}

    def wanted(key: str, url: str) -> bool:
        found = _answer(key, url, checked, crawled)
        if found is not None and is_broken(*found):
            broken_answers[key] = found
            return True
        return key in redirected

    first_url, referred = tally_targets(pages, crawled, wanted, progress=progress)
    internal = InternalTest(base_url, crawled)
    broken: list[BrokenLink] = []
    redirects: list[RedirectChain] = []
    targets: list[CheckedTarget] = []
    unchecked: dict[str, str] = {}
    cut: list[SkippedTarget] = []
    for key, url in first_url.items():
        inside = internal(url)
        if (answer := broken_answers.get(key)) is not None:
            refs = referred[key]
            broken.append(
                BrokenLink(url, answer[0], answer[1], inside, refs.first, refs.pages, refs.links)
            )
        elif (chain := redirected.get(key)) is not None:
            refs = referred[key]
            redirects.append(
                RedirectChain(*chain, referrers=refs.first, pages=refs.pages, links=refs.links)
            )
        found = checked.get(url)
        target_page = crawled.get(key)
        if found is not None:
            targets.append(CheckedTarget(url, inside, found.status, found.error, 0.0))
        elif target_page is not None:
            seconds = (target_page.response_time_ms or 0.0) / 1000
            targets.append(
                CheckedTarget(url, inside, target_page.status, target_page.error, seconds)
            )
        elif (why := skipped.get(url)) is not None:
            unchecked[key] = why
            cut.append(SkippedTarget(url, inside, why))
        else:
            unchecked[key] = (crawl_cut or BEYOND_LIMITS) if inside else EXTERNAL
    why_counts = Counter(unchecked.values())
    return CheckOutcome(
        base_url=base_url,
        broken=tuple(sorted(broken, key=lambda b: (-b.pages, b.target_url))),
        redirects=tuple(sorted(redirects, key=lambda r: r.url)),
        checked=tuple(targets),
        unchecked=len(unchecked),
        fail_on_redirect=fail_on_redirect,
        unchecked_why=tuple(sorted(why_counts.items(), key=lambda item: (-item[1], item[0]))),
        skipped=tuple(cut),
    )


#: What a link target answered: ``(status, error, error_kind)``.
Answer: TypeAlias = tuple[int | None, str | None, str | None]
#: A redirect as the check reports it: ``(url, hops, final_url, final_status)``.
_Chain: TypeAlias = tuple[str, tuple[tuple[str, int], ...], str | None, int | None]


def _answer(
    key: str, url: str, checked: Mapping[str, TargetStatus], crawled: Mapping[str, Page]
) -> Answer | None:
    """What ``url`` answered: checked apart from the crawl, else crawled (None: neither)."""
    if (found := checked.get(url)) is not None:
        return found.status, found.error, found.error_kind
    if (page := crawled.get(key)) is not None:
        return page.status, page.error, page.error_kind
    return None


def _redirected(pages: Sequence[Page], checked: Mapping[str, TargetStatus]) -> dict[str, _Chain]:
    """Each redirected URL's chain by key: crawled pages that redirected (a redirect that
    left the site ends there, unfollowed), then targets checked apart that did."""
    chains: dict[str, _Chain] = {}
    for page in pages:
        if page.error_kind == RedirectOutOfScope.kind and page.status is not None:
            hops = (*page.redirects, (page.final_url or page.url, page.status))
            chains[page_key(page.url)] = (page.url, tuple(hops), page.location, None)
        elif page.redirects:
            chains[page_key(page.url)] = (
                page.url,
                tuple(page.redirects),
                page.final_url,
                page.status,
            )
    for url, status in checked.items():
        if status.hops and not status.broken:
            chains.setdefault(page_key(url), (url, status.hops, status.final_url, status.status))
    return chains


# -- text -----------------------------------------------------------------------------------


def _plural(n: int, noun: str) -> str:
    return f"{n:,} {noun}{'s' * (n != 1)}"


def referred_by(pages: int, links: int) -> str:
    """``<- 3 pages (5 links)``: how referrers are counted, distinct pages first."""
    counted = "" if links == pages else f" ({_plural(links, 'link')})"
    return f"<- {_plural(pages, 'page')}{counted}"


def _referrer_lines(
    referrers: tuple[Referrer, ...], pages: int, export: str | None = None
) -> list[str]:
    lines = []
    for ref in referrers:
        text = "" if ref.anchor_text is None else f' "{ref.anchor_text}"'
        lines.append(f"    from {ref.source_url}{text} [{ref.kind}]")
    if (more := pages - len(referrers)) > 0:
        lines.append(f"    and {more:,} more" + (f": {export}" if export else ""))
    return lines


def _chain(link: RedirectChain) -> str:
    steps = [f"{url} ({status})" for url, status in link.hops]
    steps.append(f"{link.final_url or '?'} ({link.final_status or 'not followed'})")
    return " -> ".join(steps)


def format_text(outcome: CheckOutcome, *, export: str | None = None) -> str:
    """The human report: each broken target once, with how many pages link to it and the
    first few of them, then the redirects. ``export``: the command that lists every link
    (said after "and N more"). Crawled text is made :func:`~sitecrawl._terminal.printable`
    (one line per entry, no escapes)."""
    lines: list[str] = []
    for broken in outcome.broken:
        scope = "internal" if broken.internal else "external"
        lines.append(
            f"BROKEN {broken.target_url}  {broken.reason}  ({scope})"
            f"  {referred_by(broken.pages, broken.links)}"
        )
        lines += _referrer_lines(broken.referrers, broken.pages, export)
    label = "REDIRECT" if outcome.fail_on_redirect else "warning: redirect"
    for link in outcome.redirects:
        lines.append(f"{label} {link.url}  {_chain(link)}  {referred_by(link.pages, link.links)}")
        lines += _referrer_lines(link.referrers, link.pages, export)
    for issue in outcome.issues:
        lines.append(f"ISSUE {issue.severity} {issue.check} {issue.url}  {issue.message}")
    lines.append(summary_line(outcome))
    return "\n".join(printable(line) for line in lines) + "\n"


def summary_line(outcome: CheckOutcome) -> str:
    n = len(outcome.checked)
    line = (
        f"{_plural(n, 'link target')} checked: {len(outcome.broken):,} broken,"
        f" {len(outcome.redirects):,} redirected"
    )
    if outcome.unchecked:
        why = ", ".join(f"{count:,} {reason}" for reason, count in outcome.unchecked_why)
        line += f"; {outcome.unchecked:,} not checked: {why}"
    if outcome.issues:
        line += f"; {_plural(len(outcome.issues), 'failing issue')}"
    return line


# -- JUnit XML ------------------------------------------------------------------------------

# Characters XML 1.0 cannot carry at all (control characters but tab, LF, CR; lone surrogates).
_NOT_XML = re.compile("[\x00-\x08\x0b\x0c\x0e-\x1f\ud800-\udfff\ufffe\uffff]")


def _xml_text(text: str) -> str:
    return _NOT_XML.sub("\ufffd", text)


def _junit_lines(referrers: tuple[Referrer, ...], pages: int, links: int) -> list[str]:
    lines = [line.strip() for line in _referrer_lines(referrers, pages)]
    return [f"linked from {_plural(pages, 'page')} ({_plural(links, 'link')})", *lines]


def junit_xml(
    outcome: CheckOutcome, *, timestamp: datetime, hostname: str, seconds: float
) -> bytes:
    """The outcome as a JUnit XML document (UTF-8)."""
    broken = {page_key(b.target_url): b for b in outcome.broken}
    redirected = {page_key(r.url): r for r in outcome.redirects}
    failures = 0
    suite = ET.Element("testsuite")
    properties = ET.SubElement(suite, "properties")
    ET.SubElement(properties, "property", name="base_url", value=_xml_text(outcome.base_url))
    ET.SubElement(
        properties, "property", name="fail_on_redirect", value=str(outcome.fail_on_redirect)
    )
    warnings: list[str] = []
    for target in outcome.checked:
        case = _testcase(suite, target.url, target.internal, target.seconds)
        key = page_key(target.url)
        if (found := broken.get(key)) is not None:
            failures += 1
            failure = ET.SubElement(case, "failure", message=_xml_text(found.reason), type="broken")
            failure.text = _xml_text(
                "\n".join(_junit_lines(found.referrers, found.pages, found.links))
            )
        elif (link := redirected.get(key)) is not None:
            refs = _junit_lines(link.referrers, link.pages, link.links)
            text = "\n".join([f"redirects: {_chain(link)}", *refs])
            if outcome.fail_on_redirect:
                failures += 1
                failure = ET.SubElement(case, "failure", message="redirected", type="redirect")
                failure.text = _xml_text(text)
            else:
                warnings.append(f"warning: {link.url} {text}")
    for issue in outcome.issues:  # a failing test case each, classed by its check
        case = ET.SubElement(
            suite, "testcase", name=_xml_text(issue.url), classname=issue.check, time="0.000"
        )
        failure = ET.SubElement(case, "failure", message=_xml_text(issue.message), type="issue")
        failure.text = issue.severity
        failures += 1
    for skipped in outcome.skipped:
        case = _testcase(suite, skipped.url, skipped.internal, 0.0)
        ET.SubElement(case, "skipped", message=skipped.reason)
    for reason, count in outcome.unchecked_why:
        ET.SubElement(properties, "property", name=f"not_checked: {reason}", value=str(count))
    ET.SubElement(suite, "system-out").text = _xml_text("\n".join(warnings))
    ET.SubElement(suite, "system-err").text = ""
    suite.attrib.update(
        {
            "name": "sitecrawl check",
            "timestamp": timestamp.strftime("%Y-%m-%dT%H:%M:%S"),
            "hostname": hostname or "localhost",
            "tests": str(len(outcome.checked) + len(outcome.skipped) + len(outcome.issues)),
            "failures": str(failures),
            "errors": "0",
            "skipped": str(len(outcome.skipped)),
            "time": f"{seconds:.3f}",
        }
    )
    ET.indent(suite)
    document: bytes = ET.tostring(suite, encoding="utf-8", xml_declaration=True)
    return document + b"\n"


def _testcase(suite: ET.Element, url: str, internal: bool, seconds: float) -> ET.Element:
    """One target's ``<testcase>``: named by its URL, classed internal or external."""
    return ET.SubElement(
        suite,
        "testcase",
        name=_xml_text(url),
        classname="internal" if internal else "external",
        time=f"{seconds:.3f}",
    )
