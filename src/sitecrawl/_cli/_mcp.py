"""``sitecrawl mcp``: serve the MCP tools for agents (``crawl``, ``markdown``, ``check``,
``extract``, ``diff``: :mod:`sitecrawl.serve`) on stdio, for an MCP client that starts it.
Needs the ``serve`` extra; stdout carries only the protocol (messages go to stderr)."""

from __future__ import annotations

import argparse
from typing import Any

from ._common import EXIT_OK, UsageError, run_async


def add_command(commands: Any) -> None:
    mcp = commands.add_parser(
        "mcp",
        help="serve the MCP tools for agents (crawl, markdown, check, extract, diff) on stdio",
    )
    mcp.add_argument(
        "--root",
        metavar="DIR",
        help="the diff tool reads state files only under DIR (default: any path)",
    )
    mcp.set_defaults(handler=_execute)


def _execute(args: argparse.Namespace) -> int:
    from .._exceptions import MissingExtra

    try:
        from ..serve import mcp_server

        server = mcp_server(root=args.root)
    except (ImportError, MissingExtra):
        raise UsageError(
            "sitecrawl mcp needs the serve extra: pip install 'sitecrawl[serve]'"
        ) from None
    run_async(server.run_stdio_async())
    return EXIT_OK
