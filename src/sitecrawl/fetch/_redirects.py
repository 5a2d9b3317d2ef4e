"""One request's redirects, hop by hop (:class:`RedirectTrail`): where each leads is checked
before anyone requests it."""

from __future__ import annotations

from typing import TYPE_CHECKING

from .._exceptions import RedirectLoop, RedirectOutOfScope, TooManyRedirects
from .._urls import join

if TYPE_CHECKING:
    from ._fetcher import FollowPolicy


class RedirectTrail:
    """One request's redirects, hop by hop, under ``policy``: :meth:`follow` checks where a
    redirect leads before anyone requests it, and raises when it leaves the policy's scope
    (or http/https; any host when the scope is None), loops, or makes more than
    ``max_redirects`` hops."""

    __slots__ = ("_max", "_scope", "_visited", "attempts", "current", "hops", "policy")

    def __init__(self, url: str, policy: FollowPolicy) -> None:
        self.policy = policy
        self.current = url
        #: ``(url, status)`` of every redirect followed so far.
        self.hops: list[tuple[str, int]] = []
        #: Requests made for :attr:`current` (retries included), set by whoever fetches it.
        self.attempts = 0
        self._visited = {url}
        self._scope = policy.scope
        self._max = policy.max_redirects

    def follow(self, status: int, location: str, *, set_cookie: bool = False) -> str:
        """Move to where the redirect from :attr:`current` leads; return that URL.
        ``set_cookie``: the redirect set a cookie, so the URLs visited before may answer
        otherwise now (a consent or login page sending back where it came from); only
        ``max_redirects`` bounds a chain that keeps setting cookies."""
        current = self.current
        if set_cookie:
            self._visited = {current}
        target = join(current, location)
        if target is None or (self._scope is not None and not self._scope.contains(target)):
            raise RedirectOutOfScope(
                f"redirect out of scope: {location}", url=current, status=status, location=location
            )
        if target in self._visited:
            raise RedirectLoop(f"redirect loop at {target}", url=current, status=status)
        if len(self.hops) >= self._max:
            raise TooManyRedirects(f"more than {self._max} redirects", url=current, status=status)
        self.hops.append((current, status))
        self._visited.add(target)
        self.current = target
        return target
