"""``sitecrawl diff STATE`` (the last two crawls of a state file), ``diff OLD NEW`` (the
current crawls of two files), ``--from N --to M``: what changed, most severe first; ``-o``
writes one row per change; ``--fail-on KINDS`` makes the exit code 1 when such changes exist,
``--junit FILE`` says which as JUnit XML; ``--report FILE`` writes them as an HTML page."""

from __future__ import annotations

import argparse
import shlex
import sys
from collections.abc import Iterator
from contextlib import ExitStack
from typing import TYPE_CHECKING, Any

from ._common import EXIT_OK, UsageError, run_async
from ._ends import machine_failure

if TYPE_CHECKING:
    from .._diff import Change, ChangeSet

EXIT_CHANGED = 1
#: Pages linking to a new broken URL a listing names (a row keeps up to 20).
SHOWN = 5


def add_command(commands: Any) -> None:
    diff = commands.add_parser("diff", help="what changed between two crawls")
    diff.add_argument("states", nargs="+", metavar="STATE", help="a state file, or OLD NEW")
    diff.add_argument("--from", dest="old", type=int, metavar="N", help="the older crawl's number")
    diff.add_argument("--to", dest="new", type=int, metavar="M", help="the newer crawl's number")
    diff.add_argument(
        "-o",
        "--output",
        action="append",
        default=[],
        metavar="FILE",
        help="write one row per change (url, kind, field, old, new, severity) to FILE"
        " (.csv, .jsonl, .json; - for JSONL on stdout); repeatable",
    )
    diff.add_argument(
        "--fail-on",
        metavar="KINDS",
        default=None,
        help="exit 1 when changes of these kinds exist (comma-separated, or 'any', 'none';"
        " default: new-broken,status)",
    )
    diff.add_argument("--junit", metavar="FILE", help="also write a JUnit XML report to FILE")
    diff.add_argument(
        "--report", metavar="FILE", help="also write the changes as an HTML page to FILE"
    )
    diff.add_argument(
        "--force",
        action="store_true",
        help="compare OLD and NEW even when they are crawls of two different sites",
    )
    diff.add_argument("-q", "--quiet", action="store_true", help="no listing, no summary")
    diff.set_defaults(handler=_execute)


def fail_kinds(text: str | None) -> frozenset[str]:
    from .._diff import DEFAULT_FAIL_ON, KINDS

    if text is None:
        return frozenset(DEFAULT_FAIL_ON)
    if text.strip() == "any":
        return frozenset(KINDS)
    if text.strip() == "none":
        return frozenset()
    kinds = frozenset(kind.strip() for kind in text.split(",") if kind.strip())
    unknown = sorted(kinds - set(KINDS))
    if unknown:
        raise UsageError(f"--fail-on: unknown kind {unknown[0]!r} (kinds: {', '.join(KINDS)})")
    return kinds


def _execute(args: argparse.Namespace) -> int:
    from ..sinks import check_outputs
    from ._outputs import check_writable

    if len(args.states) > 2:
        raise UsageError("diff takes one state file, or two (OLD NEW)")
    if len(args.states) == 2 and (args.old is not None or args.new is not None):
        raise UsageError("--from and --to pick crawls of one state file")
    failing = fail_kinds(args.fail_on)
    check_outputs(args.output)
    if args.report:
        check_writable(args.report)
    found = run_async(_diff(args))
    code = _write(found, args)
    failed = [change for change in found.changes if change.kind in failing]
    if args.junit:
        _junit(args.junit, found.changes, failing)
    if args.report:
        _report(args.report, found)
    return EXIT_CHANGED if failed else code


async def _diff(args: argparse.Namespace) -> ChangeSet:
    from .._diff import ChangeSet
    from .._diff_crawls import between, compare
    from ..frontier import SqliteFrontier

    async with SqliteFrontier(args.states[0], create=False) as first:
        if len(args.states) == 2:
            async with SqliteFrontier(args.states[1], create=False) as second:
                if not args.force:
                    _same_site(args.states, first.base_url, second.base_url)
                return ChangeSet(
                    changes=compare(first, first.crawl, second, second.crawl),
                    since=f"{args.states[0]} (crawl {first.crawl})",
                    until=f"{args.states[1]} (crawl {second.crawl})",
                    command=shlex.join(args.states),
                    base_url=second.base_url,
                )
        numbers = [crawl["id"] for crawl in first.crawls()]
        new = numbers[-1] if args.new is None else args.new
        if args.old is not None:
            old = args.old
        elif new in numbers and numbers.index(new) > 0:
            old = numbers[numbers.index(new) - 1]
        else:
            raise UsageError(f"{args.states[0]} holds no crawl before crawl {new}")
        for number in (old, new):
            if number not in numbers:
                kept = ", ".join(map(str, numbers))
                raise UsageError(f"{args.states[0]} holds no crawl {number} (kept: {kept})")
        return between(first, args.states[0], old, new)


def _same_site(paths: list[str], old: str | None, new: str | None) -> None:
    """Refuse (exit 2) to compare crawls of two sites: every page would be removed and
    added."""
    from .._urls import split_host

    hosts = [split_host(url).lower() if url and "://" in url else url for url in (old, new)]
    if hosts[0] != hosts[1]:
        raise UsageError(
            f"{paths[0]} is a crawl of {old} and {paths[1]} of {new}: two different sites"
            " (--force compares them anyway)"
        )


def _write(found: ChangeSet, args: argparse.Namespace) -> int:
    from .._terminal import printable
    from ..sinks import TableSpec, open_writer

    table = TableSpec(
        "diff",
        (
            ("url", "str"),
            ("kind", "str"),
            ("field", "str"),
            ("old", "json"),
            ("new", "json"),
            ("severity", "str"),
            ("linking_pages", "int"),
            ("linking_links", "int"),
            ("linked_from", "strs"),
        ),
    )
    with ExitStack() as stack:
        writers = []
        for path in args.output:
            try:
                writer = open_writer(path, table)
            except OSError as exc:
                raise UsageError(f"cannot write {path}: {exc.strerror or exc}") from None
            stack.callback(writer.discard)
            writers.append(writer)
        for change in found.changes:
            row = change.to_dict()
            for writer in writers:
                writer.write(row)
        for writer in writers:
            writer.close()
        stack.pop_all()
    if not args.quiet:
        counts = found.counts()
        summary = ", ".join(f"{kind}: {n:,}" for kind, n in counts.items()) or "no changes"
        print(f"{found.described}: {summary}", file=sys.stderr)
        if "-" not in args.output:
            for line in _lines(found.changes):
                print(printable(line))
    return EXIT_OK


def print_changes(path: str, old: int, new: int) -> None:
    """Print what changed from crawl ``old`` to crawl ``new`` of state file ``path`` (the
    summary on stderr, one line per change on stdout): ``crawl --diff``."""
    args = argparse.Namespace(
        states=[path],
        old=old,
        new=new,
        output=[],
        quiet=False,
        fail_on=None,
        junit=None,
        force=False,
    )
    _write(run_async(_diff(args)), args)


def _lines(changes: list[Change]) -> Iterator[str]:
    for change in changes:
        head = f"{change.severity:7} {change.kind:16} {change.url}"
        if change.kind == "added":
            yield f"{head} ({change.new})"
        elif change.kind == "removed":
            yield head
        elif change.kind == "new-broken":
            answer = f"{change.old} -> {change.new}" if change.old is not None else change.new
            yield f"{head} ({answer}){_linked_from(change)}"
        else:
            yield f"{head}: {change.old!r} -> {change.new!r}"


def _linked_from(change: Change) -> str:
    """``, linked from 3 pages (5 links): A B C`` (the first few, then how many more)."""
    pages = change.linking_pages or 0
    if not pages:
        return ", linked from no page"
    shown = change.linked_from[:SHOWN]
    links = change.linking_links or 0
    counted = "" if links == pages else f" ({links:,} links)"
    text = f", linked from {pages:,} page{'s' * (pages != 1)}{counted}: " + " ".join(shown)
    if pages > len(shown):
        text += f" and {pages - len(shown):,} more"
    return text


def _report(path: str, found: ChangeSet) -> None:
    from ..report import render_changes
    from ..sinks import open_replacing

    try:
        with open_replacing(path, "w", encoding="utf-8") as out:
            out.write(render_changes(found))
    except OSError as exc:
        if machine_failure(exc):
            raise
        raise UsageError(f"cannot write {path}: {exc.strerror or exc}") from None


def _junit(path: str, changes: list[Change], failing: frozenset[str]) -> None:
    from xml.etree import ElementTree as ET

    from ..sinks import open_replacing

    failures = [change for change in changes if change.kind in failing]
    suite = ET.Element(
        "testsuite",
        name="sitecrawl diff",
        tests=str(len(changes) or 1),
        failures=str(len(failures)),
    )
    if not changes:
        ET.SubElement(suite, "testcase", classname="diff", name="no changes")
    for change in changes:
        case = ET.SubElement(suite, "testcase", classname=change.kind, name=change.url)
        if change.kind in failing:
            failure = ET.SubElement(
                case, "failure", type=change.kind, message=f"{change.old!r} -> {change.new!r}"
            )
            failure.text = (
                f"{change.url}: {change.kind} {change.field}: {change.old!r} -> {change.new!r}"
            )
    document = ET.tostring(suite, encoding="utf-8", xml_declaration=True)
    try:
        with open_replacing(path, "wb") as out:
            out.write(document)
    except OSError as exc:
        if machine_failure(exc):
            raise
        raise UsageError(f"cannot write {path}: {exc.strerror or exc}") from None
