"""URL joining, normalization and the dedupe key. Pure functions over strings.

Every URL sitecrawl keeps has been through the WHATWG parser (ada-url), so it is in canonical
form: scheme and host lowercased, default port dropped, dot segments resolved, percent-encoding
normalized. On such an ``href`` the key and the host are plain string slicing, which is
what keeps per-link work cheap on the hot path.
"""

from __future__ import annotations

import re
from collections.abc import Iterable

import ada_url

from ._exceptions import InvalidURL

_WEB_SCHEMES = ("http://", "https://")
#: A reference's scheme as the URL parser reads it (no whitespace, which it would strip first).
_SCHEME = re.compile(r"([A-Za-z][A-Za-z0-9+.-]*):")
# "mailto:x", "ftp://x" name a scheme; "localhost:8080/x" is a host and a port.
_HAS_SCHEME = re.compile(r"^[A-Za-z][A-Za-z0-9+.-]*:(?!\d)")


def parse_base_url(url: str) -> str:
    """Return the canonical href of a crawl's start URL, or raise :class:`InvalidURL`.

    A URL typed without a scheme (``example.com/docs``) is taken as ``https://``.
    """
    text = url.strip()
    if not text:
        raise InvalidURL("empty URL", url=url)
    if not _HAS_SCHEME.match(text):
        text = "https://" + text
    try:
        href: str = ada_url.URL(text).href
    except ValueError:
        raise InvalidURL(f"invalid URL: {url!r}", url=url) from None
    if not href.startswith(_WEB_SCHEMES):
        raise InvalidURL(f"unsupported URL scheme (only http and https): {url!r}", url=url)
    host = split_host(href)
    if not host:
        raise InvalidURL(f"URL has no host: {url!r}", url=url)
    return strip_fragment(href)


def join(base: str, href: str) -> str | None:
    """Resolve ``href`` against ``base`` per WHATWG; None if invalid or not http(s).

    The fragment is dropped: ``page#a`` and ``page#b`` are the same resource.
    """
    try:
        url: str = ada_url.join_url(base, href)
    except ValueError:
        return None
    if not url.startswith(_WEB_SCHEMES):
        return None
    return strip_fragment(url)


def strip_fragment(href: str) -> str:
    cut = href.find("#")
    return href if cut < 0 else href[:cut]


def split_host(href: str) -> str:
    """The ``host[:port]`` of a canonical http(s) href, without userinfo."""
    start = href.index("://") + 3
    end = href.find("/", start)
    authority = href[start:] if end < 0 else href[start:end]
    at = authority.rfind("@")
    return authority if at < 0 else authority[at + 1 :]


def url_key(href: str) -> str:
    """The dedupe key of a canonical http(s) href: :func:`normalize_url` without re-parsing.

    Two URLs with the same key are one page, whatever their scheme.
    """
    start = href.index("://") + 3
    hash_at = href.find("#", start)
    if hash_at >= 0:
        href = href[:hash_at]
    slash = href.find("/", start)
    if slash < 0:
        return href[start:]
    authority = href[start:slash]
    at = authority.rfind("@")
    if at >= 0:
        authority = authority[at + 1 :]
    rest = href[slash:]
    query_at = rest.find("?")
    if query_at < 0:
        return authority + rest.rstrip("/")
    return authority + rest[:query_at].rstrip("/") + rest[query_at:]


def normalize_url(url: str) -> str:
    """Normalize a URL into the key that identifies a page (the course's ``normalize_url``).

    Scheme, fragment, default port and trailing slash are dropped; the host is lowercased;
    the path's case and the query string are kept::

        >>> normalize_url("https://Blog.Boot.dev/path/")
        'blog.boot.dev/path'
        >>> normalize_url("http://x.com/a?b=1#c")
        'x.com/a?b=1'

    Raises :class:`InvalidURL` for text that is not an http(s) URL.
    """
    return url_key(parse_base_url(url))


def base_directory(base: str) -> str:
    """A canonical href up to and including the last ``/`` of its path (query and fragment
    excluded)."""
    base = strip_fragment(base)
    query_at = base.find("?")
    return base[: base.rfind("/", 0, query_at if query_at >= 0 else len(base)) + 1]


#: Characters the WHATWG URL parser copies into an http(s) URL's path unchanged (none is in
#: the path percent-encode set), minus those that end or reshape a path or start a scheme:
#: ``%`` (escapes), ``\`` (a slash), ``?``, ``#``, ``:``.
_PLAIN_PATH = re.compile(r"[A-Za-z0-9\-._~!$&'()*+,;=@/]+")


def _join_plain(raw: str, directory: str, origin: str) -> str | None:
    """:func:`join` of a plain path reference by string operations; None for any other.

    ``raw`` is plain when it is only ``_PLAIN_PATH`` characters and path-relative
    (``a/b.html``), path-absolute (``/a/b.html``, not ``//host``), or absolute on the base's
    own origin (``http://host:8080/a``). The parser has nothing to act on in such a reference
    (no scheme or authority of its own, no query, fragment, whitespace, backslash or escape,
    no character it would encode), so the result is the origin, then the base's directory
    path (for a relative reference) and ``raw``'s path verbatim, with dot segments resolved
    by the standard's rules: ``..`` removes the segment before it but never the root, ``.``
    is removed, and a last ``.`` or ``..`` leaves a trailing ``/``. ``directory`` and
    ``origin`` are cut from a canonical href, which the parser would reproduce unchanged.
    """
    if _PLAIN_PATH.fullmatch(raw):
        if raw[0] != "/":
            url = directory + raw
        elif raw[1:2] != "/":
            url = origin + raw
        else:
            return None  # "//host/a" names its own authority
    elif (
        raw.startswith(origin)
        and raw[len(origin) : len(origin) + 1] == "/"
        and _PLAIN_PATH.fullmatch(raw, len(origin))
    ):
        url = raw
    else:
        return None
    if "/." not in url:
        return url
    # Dot segments (or a segment such as ".well-known", which stays as it is).
    path = url[len(origin) :]
    if path.endswith(("/.", "/..")):
        path += "/"  # a last "." or ".." resolves as if a "/" followed it
    segments: list[str] = []
    for segment in path[1:].split("/"):
        if segment == "..":
            if segments:
                segments.pop()
        elif segment != ".":
            segments.append(segment)
    return origin + "/" + "/".join(segments)


try:  # the same function in C, when it was built
    from ._speedups import join_plain as _join_plain_fast
except ImportError:
    _join_plain_fast = _join_plain


def _memo_key(raw: str, directory: str, origin: str) -> tuple[str, str] | None:
    """The memo key of a reference, or None when its resolution depends on the whole base:
    empty, ``?query``, ``#fragment``, leading whitespace, or a scheme-like prefix
    (``http:x`` is relative to an http base)."""
    if raw.startswith(_WEB_SCHEMES):
        return ("", raw)
    first = raw[:1]
    if first <= " " or first in "?#":
        return None
    colon = raw.find(":")
    if colon >= 0 and not 0 <= raw.find("/") < colon:
        return None
    if first == "/" and raw[1:2] not in "/\\":
        return (origin, raw)
    return (directory, raw)


class JoinCache:
    """:func:`join` over one crawl: plain path references by string operations, the others
    through a bounded memo. ``base`` must be a canonical href.

    A plain reference (:func:`_join_plain`: ``page-2.html``, ``../../css/site.css``, ``/a/b``,
    or an absolute URL on the base's own origin; most links) is resolved without the parser
    and not stored. Resolving any other reference that is not empty and starts with neither
    ``?``, ``#`` nor whitespace depends on the base only through its directory (scheme,
    authority and path up to the last ``/``), so ``(directory, href)`` is an exact memo key;
    an absolute http(s) reference does not depend on the base at all and a path-absolute one
    (``/x``) only on its origin, so those are keyed wider. Sites repeat the same external
    links on many pages, which makes many of those joins dictionary hits.
    """

    __slots__ = ("_max", "_memo")

    def __init__(self, max_entries: int = 100_000) -> None:
        self._memo: dict[tuple[str, str], str | None] = {}
        self._max = max_entries

    def join_each(self, base: str, hrefs: Iterable[str]) -> list[str | None]:
        """:func:`join` of each reference against ``base``, in order, memoized."""
        memo = self._memo
        join_plain = _join_plain_fast
        if len(memo) > self._max:
            memo.clear()
        base_only = strip_fragment(base)
        directory = base_directory(base)
        origin = directory[: directory.find("/", directory.index("://") + 3)]
        out: list[str | None] = []
        for raw in hrefs:
            url = join_plain(raw, directory, origin)
            if url is None and (cut := raw.find("#")) >= 0 and (cut == 0 or raw[cut - 1] > " "):
                # The fragment changes nothing before it, and join() drops it: "#top" is
                # the base itself, "page.html#s2" is "page.html". (Not after a space, which
                # the parser keeps there but would strip from the end of a cut reference.)
                raw = raw[:cut]
                url = join_plain(raw, directory, origin) if raw else base_only
            if (
                url is None
                and (scheme := _SCHEME.match(raw))
                and scheme.group(1).lower() not in ("http", "https")
            ):
                out.append(None)  # mailto:, tel:, javascript:, ftp:... whatever the base
                continue
            if url is None:
                memo_key = _memo_key(raw, directory, origin)
                if memo_key is None:
                    url = join(base, raw)
                else:
                    try:
                        url = memo[memo_key]
                    except KeyError:
                        url = memo[memo_key] = join(base, raw)
            out.append(url)
        return out
