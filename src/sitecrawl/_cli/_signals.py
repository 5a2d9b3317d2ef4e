"""Stop signals for the whole CLI process: Ctrl-C (SIGINT) and SIGTERM (what ``docker stop``,
systemd and CI runners send) mean the same.

:func:`handled` installs one handler for both at the CLI's entry, before its heavy imports.
Inside :func:`deferred` (start-up, a crawl's set-up, putting outputs in place) a signal is
recorded, not raised: nothing stops half-way through an import or a rename, and the signal
is acted on when the block ends (``KeyboardInterrupt``) or, in a crawl, when its event loop's
handlers take over (:func:`sitecrawl._cli._common.ctrl_c_stops`, which stop the crawl
gracefully). Elsewhere a signal raises ``KeyboardInterrupt``, as Ctrl-C does by default.

An interrupted command exits with 128 + the first signal's number: 130 for Ctrl-C, 143 for
SIGTERM (:func:`exit_code`).
"""

from __future__ import annotations

import signal
from collections.abc import Iterator
from contextlib import contextmanager
from types import FrameType
from typing import Any

STOP_SIGNALS = (signal.SIGINT, signal.SIGTERM)


class _State:
    def __init__(self) -> None:
        self.received: list[int] = []  # every stop signal of this run, in order
        self.pending: list[int] = []  # recorded while deferred, not yet acted on
        self.defer = 0  # depth of deferred() blocks


_state = _State()


def _on_signal(signum: int, frame: FrameType | None) -> None:
    _state.received.append(signum)
    if _state.defer:
        _state.pending.append(signum)
        return
    raise KeyboardInterrupt


def install() -> bool:
    """(Re)install the handler of both stop signals (after an event loop's own handlers).
    False, and nothing done, outside the main thread."""
    try:
        for signum in STOP_SIGNALS:
            signal.signal(signum, _on_signal)
    except ValueError:  # not the main thread: signals are not ours to handle
        return False
    return True


@contextmanager
def handled(*, then_ignore: bool = False) -> Iterator[None]:
    """One CLI run: a fresh record and the handler installed; at the end, the previous
    handlers back (tests run the CLI in-process), or with ``then_ignore`` the stop signals
    ignored (the process only exits: Python's teardown would reset them to "terminate")."""
    global _state
    previous: dict[int, Any] = {signum: signal.getsignal(signum) for signum in STOP_SIGNALS}
    saved, _state = _state, _State()
    if not install():
        _state = saved
        yield
        return
    try:
        yield
    finally:
        for signum, handler in previous.items():
            signal.signal(signum, signal.SIG_IGN if then_ignore else handler)
        _state = saved


@contextmanager
def deferred() -> Iterator[None]:
    """Record stop signals instead of raising them; raise ``KeyboardInterrupt`` at the end of
    the block if one arrived and was not taken (:func:`take_pending`)."""
    _state.defer += 1
    try:
        yield
    finally:
        _state.defer -= 1
    if not _state.defer and _state.pending:
        _state.pending.clear()
        raise KeyboardInterrupt


def take_pending() -> list[int]:
    """The signals recorded and not yet acted on; the caller acts on them."""
    pending, _state.pending = _state.pending, []
    return pending


def received() -> list[int]:
    """Every stop signal of this run so far."""
    return list(_state.received)


def record(signum: int) -> None:
    """Count a signal an event loop's handler received."""
    _state.received.append(signum)


def exit_code() -> int:
    """128 + the first stop signal's number (130 when none was received: Ctrl-C's)."""
    return 128 + (_state.received[0] if _state.received else signal.SIGINT)


def name(signum: int) -> str:
    return "Ctrl-C" if signum == signal.SIGINT else signal.Signals(signum).name
