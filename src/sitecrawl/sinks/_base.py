"""The sink contract: where finished pages go, one at a time, as they complete."""

from __future__ import annotations

import asyncio
from abc import ABC, abstractmethod
from types import TracebackType

from .._models import Page


class Sink(ABC):
    """Receives pages in completion order (:meth:`write`, the one method a crawl calls). Use
    as a context manager; ``close`` flushes.

    A sink that writes an output (``-o PATH``: registered by its suffix in
    :data:`~sitecrawl.sinks.SINKS`, the one place) is made as ``factory(path, extract=rules)``
    and keeps its ``path``; ``close`` puts the output in place whole (a temporary file, then
    a rename: :mod:`._atomic`), :meth:`discard` drops it and leaves the path as it was, and
    :attr:`unconverted` counts values written as null per column (none by default)."""

    #: The output this sink writes ("" when none).
    path: str = ""

    def __enter__(self) -> Sink:
        return self

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        """Closed (the output put in place) when the block ends normally or is interrupted
        (Ctrl-C: what was crawled is kept); discarded when it raises an error."""
        if exc is None or isinstance(exc, KeyboardInterrupt | asyncio.CancelledError):
            self.close()
        else:
            self.discard()

    @abstractmethod
    def write(self, page: Page) -> None: ...

    @abstractmethod
    def close(self) -> None: ...

    def discard(self) -> None:
        """Drop what was written, the output left as it was. Default: a sink that cannot drop
        what it wrote closes (its resources are released all the same)."""
        self.close()

    @property
    def unconverted(self) -> dict[str, int]:
        """Column -> values written as null: not of the column's type. Default: none."""
        return {}
