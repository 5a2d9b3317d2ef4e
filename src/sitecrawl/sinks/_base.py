"""The sink contract: where finished pages go, one at a time, as they complete."""

from __future__ import annotations

from abc import ABC, abstractmethod
from types import TracebackType

from .._models import Page


class Sink(ABC):
    """Receives pages in completion order. Use as a context manager; ``close`` flushes."""

    def __enter__(self) -> Sink:
        return self

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        self.close()

    @abstractmethod
    def write(self, page: Page) -> None: ...

    @abstractmethod
    def close(self) -> None: ...
