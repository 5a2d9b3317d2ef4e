"""A crawl's web archive outputs (``-o FILE.warc.gz``, ``.warc``, ``.wacz``): their options."""

from __future__ import annotations

import argparse
import os
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
        "refer_back": not getattr(args, "no_state", True),
    }


def worker_name() -> str:
    """This worker's name in its archive's file names: host and process id."""
    host = re.sub(r"[^A-Za-z0-9.]+", "-", os.uname().nodename).strip("-") or "host"
    return f"{host}-{os.getpid()}"


def worker_path(path: str, name: str) -> str:
    """``site.warc.gz`` -> ``site-NAME.warc.gz``: a worker's own series of segments."""
    lower = path.lower()
    suffix = ".warc.gz" if lower.endswith(".warc.gz") else ".warc"
    return f"{path[: len(path) - len(suffix)]}-{name}{path[len(path) - len(suffix) :]}"


def worker_outputs(paths: Sequence[str], name: str) -> list[str]:
    """A Redis worker's outputs: its web archives named by the worker (:func:`worker_path`)."""
    from ..sinks import is_archive

    return [worker_path(path, name) if is_archive(path) else path for path in paths]


def check_assets(assets: bool, paths: Sequence[str], command: str = "crawl") -> None:
    """A :class:`UsageError` for ``--archive-assets`` (``assets``) without an archive among
    the outputs ``paths``: the requisites are fetched for an archive only, so the option
    would be ignored."""
    from ..sinks import is_archive

    if not assets or any(is_archive(path) for path in paths):
        return
    where = "add -o FILE.warc.gz (or .warc, .wacz)"
    if command != "crawl":
        where = f"{command} writes none (sitecrawl crawl -o FILE.warc.gz does)"
    raise UsageError(f"--archive-assets fetches each page's requisites into a web archive: {where}")


def check_archives(paths: Sequence[str], *, redis: bool = False) -> None:
    """A :class:`UsageError` now, before a state file is made or a request sent, for an
    archive output without warcio (naming the extra), or a WACZ of a crawl in Redis (each
    worker writes its WARC segments; ``export --warc`` gathers them into one WACZ)."""
    from .._exceptions import MissingExtra
    from ..sinks import is_archive

    for path in paths:
        if not is_archive(path):
            continue
        if redis and path.lower().endswith(".wacz"):
            raise UsageError(
                f"-o {path}: a crawl in Redis writes WARC (-o site.warc.gz, a series per"
                " worker); gather it with: sitecrawl export --redis URL --crawl-id ID"
                " --warc site.warc.gz -o site.wacz"
            )
        from ..sinks import import_warcio  # (its module: only a crawl that archives)

        try:
            import_warcio()
        except MissingExtra as exc:
            raise UsageError(f"cannot write output: {exc} ({path})") from None
