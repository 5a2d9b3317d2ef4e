"""``-o DIR/``: one Markdown file a page, at a path mirroring its URL, with YAML front matter.

Where a page goes (:func:`markdown_path`, pure)::

    https://example.org/                      DIR/index.md
    https://example.org/docs/                 DIR/docs/index.md
    https://example.org/docs/guide.html       DIR/docs/guide.md      (.html .htm .php ... cut)
    https://example.org/list?page=2&s=a       DIR/list_page=2_s=a_1f0c9a2e.md
    https://cdn.example.org/a                 DIR/cdn.example.org/a.md  (another host)

The path's segments are percent-decoded, then made safe: ``.``, ``..`` and empty segments are
dropped (no URL leads out of ``DIR``), ``/ \\ : * ? " < > |`` and control characters become
``_``, a leading dot ``_`` (no hidden file, none named like a temporary file), and a segment
over 100 characters is cut and given 8 hex digits of its SHA-256. A query string is kept, made
safe the same way, with 8 hex digits of its SHA-256 (so ``?a&b`` and ``?a_b`` stay distinct).
Pages of the crawl's start host (``base_url``; else the first page's) go at the top, other
hosts' under a folder named by host (a port as ``_8080``). Two URLs whose files would be the
same (``/a`` and ``/a.html``; ``/About`` and ``/about`` on a case-insensitive disk) are told
apart: the second file's name gets 8 hex digits of its URL's SHA-256. A redirect to a page
already written is not written twice (the page's own record replaces a redirect's file). A
page whose folder a symbolic link leads out of ``DIR``, or whose file a file or folder is in
the way of (``/a.md/x`` beside ``/a``), is skipped (logged, counted in
:attr:`MarkdownFiles.refused`).

Each file: front matter (``url``, ``title``, ``description``, ``fetched_at``; strings in YAML's
double quotes, :func:`yaml_string`), a blank line, the Markdown. ``url`` is where the content
is (a redirect's end), ``description`` the meta description, ``fetched_at`` the record's
``fetched_at`` when it has one, else the time the crawl handed the page over (UTC; a moment
after its response). Pages without Markdown (failures, non-HTML bodies, a crawl without
``--markdown``) and failed pages are not written.

Each file is written to ``.NAME.sitecrawl-tmp-PID`` beside it and renamed over ``NAME``: a
file is whole or absent, an earlier run's file stays until the new one replaces it. The files
are written by a thread of the sink's own, so that a slow disk (creating a file can take
milliseconds) does not hold up the crawl's event loop; at most :data:`WRITE_QUEUE` wait, and
:meth:`MarkdownFiles.close` waits for them. A failure to write (a full disk) is raised at the
next page or at the close, naming the folder. The
folder is made at the first page; a run refused before crawling does not touch it. Files of
pages a later crawl no longer finds are left as they are.
"""

from __future__ import annotations

import contextlib
import hashlib
import logging
import os
import queue
import re
import threading
from datetime import UTC, datetime
from urllib.parse import unquote, urlsplit

from ._atomic import TEMP_MARK, located
from ._page_outputs import PageOutput, Record, content_url, field, host_of

log = logging.getLogger("sitecrawl")

#: Extensions cut from a page's last segment (``guide.html`` -> ``guide.md``).
PAGE_EXTENSIONS = (".html", ".htm", ".xhtml", ".shtml", ".php", ".asp", ".aspx", ".jsp", ".md")
MAX_SEGMENT = 100
#: Files waiting for the writer thread (then the crawl waits): a few MB of Markdown at most.
WRITE_QUEUE = 64
_UNSAFE = re.compile(r'[\x00-\x1f\x7f/\\:*?"<>|]')
_QUERY_UNSAFE = re.compile(r"[^A-Za-z0-9._=,+-]+")
#: What YAML's double-quoted scalars must escape: ``"``, ``\\``, and every character outside
#: its printable set, with the line breaks YAML 1.1 reads (U+0085, U+2028, U+2029) and BOM.
_YAML_ESCAPE = re.compile('["\\\\\x00-\x1f\x7f-\x9f\u2028\u2029\ufeff\ufffe\uffff\ud800-\udfff]')
_YAML_NAMED = {'"': '\\"', "\\": "\\\\", "\n": "\\n", "\t": "\\t", "\r": "\\r"}


def _digest(text: str) -> str:
    return hashlib.sha256(text.encode("utf-8", "surrogatepass")).hexdigest()[:8]


def safe_segment(text: str) -> str:
    """One path segment as a safe file name (see the module); empty for ``.`` and ``..``."""
    if text in (".", ".."):
        return ""
    safe = _UNSAFE.sub("_", text).rstrip(" .") or ("_" if text else "")
    if safe.startswith("."):
        safe = "_" + safe[1:]
    if len(safe) > MAX_SEGMENT:
        safe = f"{safe[: MAX_SEGMENT - 9]}-{_digest(text)}"
    return safe


def markdown_path(url: str, home: str | None = None) -> str:
    """The file of ``url`` in the folder, relative, ``/``-separated (see the module). ``home``
    is the host (and port) whose pages go at the top; another host's go in its folder."""
    parts = urlsplit(url)
    raw = parts.path.split("/")
    folders = [safe_segment(unquote(item)) for item in raw[:-1]]
    segments = [item for item in folders if item]
    last = unquote(raw[-1])
    if last.lower().endswith(PAGE_EXTENSIONS):
        last = last[: last.rindex(".")]
    name = safe_segment(last) or "index"
    if parts.query:
        query = _QUERY_UNSAFE.sub("_", unquote(parts.query)).strip("_")[:60]
        name = (
            f"{name}_{query}_{_digest(parts.query)}" if query else f"{name}_{_digest(parts.query)}"
        )
    host = host_of(url)
    if home is not None and host != home:
        segments.insert(0, safe_segment(host.replace(":", "_")))
    return "/".join([*segments, f"{name}.md"])


def yaml_string(text: str) -> str:
    """``text`` as a YAML double-quoted scalar that every YAML reader (1.1 and 1.2) reads back
    exactly."""
    return '"' + _YAML_ESCAPE.sub(_yaml_escape, text) + '"'


def _yaml_escape(match: re.Match[str]) -> str:
    char = match.group()
    named = _YAML_NAMED.get(char)
    if named is not None:
        return named
    code = ord(char)
    return f"\\x{code:02x}" if code < 0x100 else f"\\u{code:04x}"


def front_matter(values: dict[str, str | None]) -> str:
    """YAML front matter: ``---``, one ``key: "value"`` a line (None: ``null``), ``---``."""
    lines = ["---"]
    for key, value in values.items():
        lines.append(f"{key}: {'null' if value is None else yaml_string(value)}")
    lines.append("---")
    return "\n".join(lines) + "\n"


def markdown_document(page: Record, fetched_at: str) -> str:
    """A page's file: its front matter, a blank line, its Markdown."""
    title, description = field(page, "title"), field(page, "meta_description")
    head = front_matter(
        {
            "url": content_url(page),
            "title": None if title is None else str(title),
            "description": None if description is None else str(description),
            "fetched_at": str(field(page, "fetched_at") or fetched_at),
        }
    )
    body = str(field(page, "markdown") or "").strip("\n")
    return f"{head}\n{body}\n" if body else head


def now_utc() -> str:
    """The time now, UTC, to the second: ``2026-12-03T14:05:09Z``."""
    return datetime.now(UTC).strftime("%Y-%m-%dT%H:%M:%SZ")


class MarkdownFiles(PageOutput):
    """Pages into one ``.md`` file each under the folder ``path`` (see the module)."""

    def __init__(self, path: str, *, base_url: str | None = None) -> None:
        super().__init__(path)
        self.root = os.path.realpath(path)
        self.home = host_of(base_url) if base_url else None
        self.written = 0
        #: Pages not written: a symbolic link led out of the folder, or a file or folder was
        #: in the way (``/a.md/`` beside ``/a``).
        self.refused = 0
        self._taken: dict[int, int] = {}  # file (casefolded) -> the URL it holds (hashes)
        self._urls: dict[int, bool] = {}  # content URL written -> was it the page's own record
        if os.path.exists(self.root) and not os.path.isdir(self.root):
            raise NotADirectoryError(20, "Not a directory", path)
        self._queue: queue.Queue[tuple[str, str] | None] = queue.Queue(WRITE_QUEUE)
        self._writer: threading.Thread | None = None
        self._failure: BaseException | None = None

    def write_record(self, page: Record) -> None:
        if field(page, "error") is not None or field(page, "markdown") is None:
            return
        url = content_url(page)
        url_hash, direct = hash(url), field(page, "url") == url
        if url_hash in self._urls and (self._urls[url_hash] or not direct):
            return  # written: the page itself, or a redirect to it and this is one too
        if self.home is None:
            self.home = host_of(url)
        relative = markdown_path(url, self.home)
        taken = self._taken.setdefault(hash(relative.casefold()), url_hash)
        if taken != url_hash:
            stem = relative.removesuffix(".md")
            relative = f"{stem}-{_digest(url)}.md"
            self._taken[hash(relative.casefold())] = url_hash
        self._urls[url_hash] = direct
        self._check()
        if self._writer is None:
            self._writer = threading.Thread(target=self._drain, name="sitecrawl-md", daemon=True)
            self._writer.start()
        self._queue.put((relative, markdown_document(page, now_utc())))

    def _drain(self) -> None:
        """The writer thread: each queued file written, until None; after a failure (a full
        disk), the rest dropped and the failure kept for :meth:`_check`."""
        while (item := self._queue.get()) is not None:
            if self._failure is None:
                try:
                    self._write(*item)
                except BaseException as exc:  # raised in the crawl's thread by _check
                    self._failure = exc

    def _check(self) -> None:
        """Raise what the writer thread failed with (``OSError`` naming the folder)."""
        if self._failure is not None:
            failure, self._failure = self._failure, None
            if isinstance(failure, OSError):
                raise located(failure, self.path) from failure
            raise failure

    def _stop(self) -> None:
        if self._writer is not None:
            self._queue.put(None)
            self._writer.join()
            self._writer = None

    def _write(self, relative: str, text: str) -> None:
        target = os.path.join(self.root, *relative.split("/"))
        folder, name = os.path.split(target)
        try:
            os.makedirs(folder, exist_ok=True)
        except (FileExistsError, NotADirectoryError):  # a file where a folder would go
            return self._refuse(relative, "a file is in the way")
        real = os.path.realpath(folder)
        if real != self.root and not real.startswith(self.root + os.sep):
            return self._refuse(relative, "a symbolic link leads out of the folder")
        if os.path.isdir(os.path.join(real, name)):
            return self._refuse(relative, "a folder is in the way")
        temp = os.path.join(real, f".{name}{TEMP_MARK}{os.getpid()}")
        try:
            with open(temp, "w", encoding="utf-8", newline="\n") as out:
                out.write(text)
            os.replace(temp, os.path.join(real, name))
        except BaseException:
            with contextlib.suppress(OSError):
                os.unlink(temp)
            raise
        self.written += 1

    def _refuse(self, relative: str, why: str) -> None:
        self.refused += 1
        log.warning("not written: %s in %s (%s)", relative, self.path, why)

    def close(self) -> None:
        """Wait for the files queued to be written."""
        self._stop()
        self._check()

    def discard(self) -> None:
        """Stop writing (the files queued are written first); the files written are whole and
        stay, each having replaced its earlier copy whole."""
        self._stop()
        self._failure = None
