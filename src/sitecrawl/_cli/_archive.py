"""A crawl's web archive outputs (``-o FILE.warc.gz``, ``.warc``, ``.wacz``): their options."""

from __future__ import annotations

import argparse
import re
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

from ._common import UsageError

if TYPE_CHECKING:
    from .._config import CrawlConfig

_UNITS = {"": 1, "k": 10**3, "m": 10**6, "g": 10**9, "t": 10**12}


def size(text: str) -> int:
    """``--warc-max-size``: bytes, or with a unit: ``500M``, ``1G`` (powers of 1000)."""
    match = re.fullmatch(r"\s*(\d+(?:\.\d+)?)\s*([kKmMgGtT]?)[bB]?\s*", text)
    if match is None or float(match[1]) * _UNITS[match[2].lower()] < 1:
        raise argparse.ArgumentTypeError(f"a size in bytes (1000000, 500M, 1G), not {text!r}")
    return int(float(match[1]) * _UNITS[match[2].lower()])


def add_archive_options(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--warc-max-size",
        type=size,
        default=10**9,
        metavar="SIZE",
        help="start a new numbered WARC file once one holds SIZE bytes (default 1G)",
    )
    parser.add_argument(
        "--archive-cookies",
        action="store_true",
        help="keep the Set-Cookie headers of responses in -o .warc.gz/.wacz (default: dropped)",
    )


def archive_options(args: argparse.Namespace, config: CrawlConfig) -> dict[str, Any]:
    """What the archive outputs are opened with (:func:`sitecrawl.sinks.archive_sink`)."""
    return {
        "config": config,
        "max_size": args.warc_max_size,
        "keep_cookies": args.archive_cookies,
        # a crawl with a state file may resume or repeat one whose captures are archived
        "refer_back": not args.no_state,
    }


def check_archives(paths: Sequence[str], *, redis: bool = False) -> None:
    """A :class:`UsageError` now, before a state file is made or a request sent, for an
    archive output without warcio (naming the extra), or in a crawl in Redis (not yet)."""
    from .._exceptions import MissingExtra
    from ..sinks import import_warcio, is_archive

    for path in paths:
        if not is_archive(path):
            continue
        if redis:
            raise UsageError(f"-o {path}: web archives are not written by a crawl in Redis yet")
        try:
            import_warcio()
        except MissingExtra as exc:
            raise UsageError(f"cannot write output: {exc} ({path})") from None
