"""The robots gate: the one place a URL is checked against robots.txt before it is requested,
by a page job (each hop of a page), the sitemaps, a render's requests and the link check."""

from __future__ import annotations

from collections.abc import Callable

from .._exceptions import BlockedByRobots
from ._robots import RobotsCache

#: The error of a URL robots.txt disallows.
BLOCKED = "blocked by robots.txt"


class RobotsGate:
    """robots.txt, asked before a request: ``robots`` None (``--ignore-robots``) lets every
    URL through; ``only(url)``, when given, says which URLs robots.txt is asked for (the
    link check asks it for the crawl's scope only: elsewhere a visitor follows a link)."""

    def __init__(
        self, robots: RobotsCache | None, *, only: Callable[[str], bool] | None = None
    ) -> None:
        self.robots = robots
        self._only = only

    def only(self, holds: Callable[[str], bool]) -> RobotsGate:
        """The same robots.txt, asked for the URLs ``holds`` says yes to only."""
        return RobotsGate(self.robots, only=holds)

    async def allowed(self, url: str) -> bool:
        """True when robots.txt lets us fetch ``url``; raises :class:`RobotsUnreachable` when
        the host's robots.txt is unreachable (disallow for now), or the host's own failure
        when the host could not be reached at all (:meth:`RobotsRules.refusal`)."""
        robots = self.robots
        if robots is None or (self._only is not None and not self._only(url)):
            return True
        rules = robots.cached(url) or await robots.rules(url)
        if rules.reason is not None:
            raise rules.refusal(url)
        return rules.allowed(url)

    async def check(self, url: str) -> None:
        """Raise :class:`BlockedByRobots` unless robots.txt lets us fetch ``url`` (a
        :data:`~sitecrawl.fetch._pagejob.HopCheck`, awaited before each hop)."""
        if not await self.allowed(url):
            raise BlockedByRobots(BLOCKED, url=url)
