"""The polite fetch stack (``_stack.py``) and its one redirect loop, ``PoliteClient.follow``,
against real servers: each caller's policy (scope or none, hops, bytes), a check before every
hop, a chain continued with another method, and robots.txt and sitemaps fetched through it."""

from __future__ import annotations

from aiohttp import web

from conftest import ServeFn
from servers import ServerThread, html
from sitecrawl import (
    AsyncCrawler,
    BlockedByRobots,
    CrawlConfig,
    Politeness,
    RedirectLoop,
    RedirectOutOfScope,
    TooManyRedirects,
)
from sitecrawl.audit import LinkChecker
from sitecrawl.control import CrawlScope
from sitecrawl.fetch import FetchStack, FollowPolicy, RedirectTrail, Response

RULES = "User-agent: *\nDisallow: /private\n"
BIG = 100_000


def redirect_app(robots_at: str | None = None) -> web.Application:
    """``/hop/N`` redirects to ``/hop/N-1`` down to ``/hop/0`` (RULES as text); ``/away?to=URL``
    redirects there; ``/loop`` to itself; ``/big`` is BIG bytes of text; ``/nohead`` refuses
    HEAD (405); ``/robots.txt`` is RULES, or a redirect to ``robots_at``. A sitemap at
    ``/private/sitemap.xml`` lists ``/listed``; ``/sitemap.xml`` redirects to it."""

    async def hop(request: web.Request) -> web.StreamResponse:
        n = int(request.match_info["n"])
        if n == 0:
            return web.Response(text=RULES, content_type="text/plain")
        raise web.HTTPFound(f"/hop/{n - 1}")

    async def away(request: web.Request) -> web.StreamResponse:
        raise web.HTTPFound(request.query["to"])

    async def loop(request: web.Request) -> web.StreamResponse:
        raise web.HTTPFound("/loop")

    async def big(request: web.Request) -> web.Response:
        return web.Response(text="x" * BIG, content_type="text/plain")

    async def nohead(request: web.Request) -> web.Response:
        return web.Response(status=405 if request.method == "HEAD" else 200, text="ok")

    async def page(request: web.Request) -> web.Response:
        return html("<h1>page</h1>")

    async def robots_txt(request: web.Request) -> web.StreamResponse:
        if robots_at is not None:
            raise web.HTTPMovedPermanently(robots_at)
        return web.Response(text=RULES, content_type="text/plain")

    async def sitemap(request: web.Request) -> web.StreamResponse:
        raise web.HTTPFound("/private/sitemap.xml")

    async def private_sitemap(request: web.Request) -> web.Response:
        body = (
            '<urlset xmlns="http://www.sitemaps.org/schemas/sitemap/0.9">'
            f"<url><loc>http://{request.host}/listed</loc></url></urlset>"
        )
        return web.Response(text=body, content_type="application/xml")

    app = web.Application()
    app.router.add_get("/hop/{n}", hop)
    app.router.add_get("/away", away)
    app.router.add_get("/loop", loop)
    app.router.add_get("/big", big)
    app.router.add_route("*", "/nohead", nohead)
    app.router.add_get("/", page)
    app.router.add_get("/listed", page)
    app.router.add_get("/robots.txt", robots_txt)
    app.router.add_get("/sitemap.xml", sitemap)
    app.router.add_get("/private/sitemap.xml", private_sitemap)
    return app


def stack_for(server: ServerThread, *, obey_robots: bool = False) -> tuple[FetchStack, CrawlScope]:
    config = CrawlConfig(
        base_url=server.url, politeness=Politeness(retries=0, obey_robots=obey_robots)
    )
    scope = CrawlScope([server.url + "/"], "site")
    return FetchStack(config), scope


async def test_follow_goes_as_far_as_its_policy(serve: ServeFn) -> None:
    server, other = serve(redirect_app()), serve(redirect_app())
    stack, scope = stack_for(server)
    async with stack:
        client = stack.client
        three = FollowPolicy(scope=scope, max_redirects=3, max_bytes=10)
        trail = RedirectTrail(server.url + "/hop/3", three)
        result = await client.follow(trail)
        assert isinstance(result, Response) and result.status == 200 and trail.attempts == 1
        assert result.body == RULES.encode()[:10] and result.truncated  # any type, capped
        assert [url for url, _ in trail.hops] == [server.url + f"/hop/{n}" for n in (3, 2, 1)]

        trail = RedirectTrail(server.url + "/hop/4", three)
        result = await client.follow(trail)
        assert isinstance(result, TooManyRedirects) and result.status == 302
        assert trail.current == server.url + "/hop/1" and len(trail.hops) == 3

        loop = await client.follow(RedirectTrail(server.url + "/loop", three))
        assert isinstance(loop, TooManyRedirects)  # a loop, found before the hop is requested
        assert server.traffic.paths.count("/loop") == 1

        out = RedirectTrail(f"{server.url}/away?to={other.url}/big", three)
        result = await client.follow(out)
        assert isinstance(result, RedirectOutOfScope) and not other.traffic.paths
        anywhere = FollowPolicy(scope=None, max_redirects=3)
        result = await client.follow(RedirectTrail(out.current, anywhere))
        assert isinstance(result, Response) and other.traffic.paths == ["/big"]
        assert result.body is None  # max_bytes None: HTML bodies only


async def test_follow_checks_every_hop_before_requesting_it(serve: ServeFn) -> None:
    server = serve(redirect_app())
    stack, scope = stack_for(server)
    checked: list[str] = []

    async def check(url: str) -> None:
        checked.append(url)
        if url.endswith("/hop/1"):
            raise BlockedByRobots("blocked by robots.txt", url=url)

    async with stack:
        trail = RedirectTrail(server.url + "/hop/3", FollowPolicy(scope=scope, max_redirects=5))
        result = await stack.client.follow(trail, check=check)
    assert isinstance(result, BlockedByRobots) and trail.attempts == 0
    assert checked == [server.url + f"/hop/{n}" for n in (3, 2, 1)]
    assert server.traffic.paths == ["/hop/3", "/hop/2"]  # the refused hop was not requested


async def test_follow_goes_on_from_where_it_stopped(serve: ServeFn) -> None:
    """The link checker's HEAD, then GET where HEAD was refused: the second call on the
    same trail continues it (the hops before are not requested again)."""
    server = serve(redirect_app())
    stack, _ = stack_for(server)
    async with stack:
        trail = RedirectTrail(server.url + "/away?to=/nohead", FollowPolicy(None, 5, 1))
        first = await stack.client.follow(trail, method="HEAD")
        assert isinstance(first, Response) and first.status == 405
        second = await stack.client.follow(trail, method="GET")
        assert isinstance(second, Response) and second.status == 200
    assert trail.hops == [(server.url + "/away?to=/nohead", 302)]
    assert server.traffic.paths == ["/away?to=/nohead", "/nohead", "/nohead"]


async def test_robots_txt_is_fetched_under_its_own_policy(serve: ServeFn) -> None:
    """robots.txt redirects are followed to any host, five hops at most; past that the file
    is "unavailable" (allow all), and its host's slot is told its Crawl-delay."""
    elsewhere = serve(redirect_app())
    for robots_at, disallowed in [
        (f"{elsewhere.url}/robots.txt", True),  # another host
        ("/hop/4", True),  # five hops
        ("/hop/5", False),  # six
    ]:
        server = serve(redirect_app(robots_at=robots_at))
        stack, _ = stack_for(server, obey_robots=True)
        async with stack:
            assert stack.robots is not None
            rules = await stack.robots.rules(server.url + "/private/x")
        assert rules.allowed(server.url + "/private/x") is not disallowed, robots_at


async def test_a_sitemap_redirect_into_a_disallowed_path_is_not_followed(
    serve: ServeFn,
) -> None:
    """Sitemaps are fetched as pages are: robots.txt is asked before every hop."""
    server = serve(redirect_app())
    config = CrawlConfig(base_url=server.url + "/", politeness=Politeness(retries=0))
    async with AsyncCrawler(config.base_url, config=config) as crawler:
        await crawler.crawl()
    assert "/sitemap.xml" in server.traffic.paths
    assert "/private/sitemap.xml" not in server.traffic.paths
    assert "/listed" not in server.traffic.paths


async def test_the_link_checker_follows_through_the_stack(serve: ServeFn) -> None:
    """HEAD first; GET from the hop that refused HEAD; a chain gone nowhere is not asked
    again with GET; robots.txt asked before each in-scope hop."""
    server = serve(redirect_app())
    config = CrawlConfig(base_url=server.url, politeness=Politeness(retries=0))
    scope = CrawlScope([server.url + "/"], "site")
    urls = [f"{server.url}/away?to=/nohead", f"{server.url}/loop", f"{server.url}/hop/1"]
    urls.append(f"{server.url}/away?to=/private/x")
    async with LinkChecker(config, scope) as checker:
        found = await checker.check(urls)
    nohead, loop, hop, private = (found[url] for url in urls)
    assert (nohead.status, nohead.method, nohead.error, len(nohead.hops)) == (200, "GET", None, 1)
    assert (loop.error_kind, loop.method) == (RedirectLoop.kind, "HEAD")
    assert (hop.status, hop.method, hop.final_url) == (200, "HEAD", f"{server.url}/hop/0")
    assert (private.error_kind, private.attempts) == (BlockedByRobots.kind, 0)
    paths = server.traffic.paths
    assert paths.count("/loop") == 1 and paths.count("/nohead") == 2
    assert "/private/x" not in paths
