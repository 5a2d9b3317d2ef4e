"""Where the Markdown goes, end to end on a real blog on loopback (:mod:`markdown_site`):
``crawl -o DIR/`` (one .md a page, front matter), ``-o llms.txt`` / ``-o llms-full.txt``,
``export -t chunks`` (never inside a code block or a table row), ``export -o DIR/`` from a
state file, a refused run leaving the outputs as they were, and ``sitecrawl markdown``
(robots.txt obeyed)."""

from __future__ import annotations

import json
import os
import re
import signal
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
import yaml
from aiohttp import web

from conftest import ServeFn
from markdown_site import ARTICLES, BOILERPLATE, CONTENT_WORDS, Blog
from servers import ServerThread, checkout_env, site_app
from sitecrawl._cli import main
from sitecrawl.parse import count_tokens
from sitecrawl.sinks import TEMP_MARK


def front_matter(path: Path) -> tuple[dict[str, Any], str]:
    text = path.read_text(encoding="utf-8")
    assert text.startswith("---\n")
    head, _, body = text[4:].partition("\n---\n")
    return yaml.safe_load(head), body


def md_files(folder: Path) -> list[str]:
    return sorted(str(path.relative_to(folder)) for path in folder.rglob("*") if path.is_file())


def test_crawl_writes_one_markdown_file_per_page_and_the_llms_files(
    serve: ServeFn, tmp_path: Path
) -> None:
    blog = serve(Blog().app())
    out, llms, full = tmp_path / "site", tmp_path / "llms.txt", tmp_path / "llms-full.txt"
    state = tmp_path / "blog.db"
    argv = ["crawl", blog.url + "/", "--state", str(state), "-q"]
    # no --markdown: the outputs ask for it
    assert main([*argv, "-o", f"{out}/", "-o", str(llms), "-o", str(full)]) == 0

    posts = [f"blog/post-{n}.md" for n in range(1, ARTICLES + 1)]
    assert md_files(out) == sorted(["index.md", *posts])  # the 404s are not written
    meta, body = front_matter(out / "blog" / "post-2.md")
    assert meta["url"] == blog.url + "/blog/post-2.html"
    assert meta["title"] == "Ledger 2"
    assert meta["description"] is None
    assert re.fullmatch(r"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ", meta["fetched_at"])
    assert CONTENT_WORDS in body and "# Harbour ledger 2" in body
    assert "```python\nfor entry in ledger:" in body
    assert not any(text in body for text in BOILERPLATE)

    text = llms.read_text()
    assert text.startswith("# Home\n\n## Pages\n\n- [Home](" + blog.url + "/)\n\n## Blog\n\n")
    entries = re.findall(r"^- \[(.*?)\]\((.*?)\)$", text, re.MULTILINE)
    assert entries == [("Home", blog.url + "/")] + [
        (f"Ledger {n}", f"{blog.url}/blog/post-{n}.html") for n in range(1, ARTICLES + 1)
    ]

    whole = full.read_text()
    assert whole.startswith("# Home\n\n---\n\n# Home\n\nURL: " + blog.url + "/\n")
    at = [whole.index(f"URL: {url}\n") for _, url in entries]
    assert at == sorted(at)  # the pages in llms.txt's order
    post = f"{blog.url}/blog/post-2.html"
    assert f"\n---\n\n# Ledger 2\n\nURL: {post}\n\n# Harbour ledger 2\n\nArticle 2" in whole
    assert CONTENT_WORDS in whole[at[2] : at[3]]
    assert whole.count("\n---\n") == len(entries)  # one rule before each page

    # the same from the state file
    again = tmp_path / "again"
    assert (
        main(["export", str(state), "-o", f"{again}/", "-o", str(tmp_path / "x" / "llms.txt")]) == 2
    )
    assert not again.exists()  # a path that cannot be written: nothing at all written
    assert main(["export", str(state), "-o", f"{again}/", "-q"]) == 0
    assert md_files(again) == md_files(out)
    assert (
        front_matter(again / "blog" / "post-1.md")[1] == front_matter(out / "blog" / "post-1.md")[1]
    )


def test_export_chunks_never_cuts_a_code_block_or_a_table_row(
    serve: ServeFn, tmp_path: Path
) -> None:
    blog = serve(Blog().app())
    state = tmp_path / "blog.db"
    assert main(["crawl", blog.url + "/", "--markdown", "--state", str(state), "-q"]) == 0
    out = tmp_path / "chunks.jsonl"
    assert main(["export", str(state), "-t", "chunks", "--chunk-tokens", "30", "-o", str(out)]) == 0
    rows = [json.loads(line) for line in out.read_text().splitlines()]
    assert {row["url"] for row in rows} == {blog.url + "/"} | {
        f"{blog.url}/blog/post-{n}.html" for n in range(1, ARTICLES + 1)
    }
    post = [row for row in rows if row["url"] == blog.url + "/blog/post-1.html"]
    assert [row["chunk"] for row in post] == list(range(len(post)))
    assert len(post) > 4  # cut small
    assert all(row["title"] == "Ledger 1" for row in post)
    assert all(row["tokens"] == count_tokens(row["text"]) for row in rows)
    code = [row for row in post if "```" in row["text"]]
    assert len(code) == 1
    assert "for entry in ledger:\n    print(entry.ship, entry.date)\n```" in code[0]["text"]
    assert code[0]["headings"] == ["Harbour ledger 1", "Reading the entries"]
    table_rows = [line for row in post for line in row["text"].splitlines() if line.startswith("|")]
    assert any("Aurora" in line for line in table_rows)
    assert all(line.rstrip().endswith("|") for line in table_rows)  # whole rows only
    # the default budget keeps a short article whole in a few chunks
    default = tmp_path / "default.jsonl"
    assert main(["export", str(state), "-t", "chunks", "-o", str(default), "-q"]) == 0
    assert all(json.loads(line)["tokens"] <= 512 for line in default.read_text().splitlines())


def test_chunk_tokens_goes_with_the_chunks_table(tmp_path: Path, capsys: Any) -> None:
    assert main(["export", str(tmp_path / "x.db"), "--chunk-tokens", "10"]) == 2
    assert "--chunk-tokens goes with -t chunks" in capsys.readouterr().err
    assert main(["export", str(tmp_path / "x.db"), "-t", "links", "-o", f"{tmp_path}/d/"]) == 2
    assert "unknown output format" in capsys.readouterr().err


def test_a_refused_run_leaves_the_outputs_as_they_were(serve: ServeFn, tmp_path: Path) -> None:
    blog, other = serve(Blog().app()), serve(Blog().app())
    state = tmp_path / "blog.db"
    assert main(["crawl", blog.url + "/", "--state", str(state), "-q"]) == 0
    out, llms = tmp_path / "site", tmp_path / "llms.txt"
    out.mkdir()
    (out / "index.md").write_text("kept\n")
    llms.write_text("kept\n")
    # the state file is another site's: refused before any output is opened
    code = main(["crawl", other.url + "/", "--state", str(state), "-o", f"{out}/", "-o", str(llms)])
    assert code == 2
    assert md_files(out) == ["index.md"] and (out / "index.md").read_text() == "kept\n"
    assert llms.read_text() == "kept\n"
    assert sorted(path.name for path in tmp_path.iterdir()) == ["blog.db", "llms.txt", "site"]
    # a file where the folder would be: refused before the crawl
    (tmp_path / "file").write_text("x")
    fresh = tmp_path / "fresh.db"
    code = main(["crawl", blog.url + "/", "--state", str(fresh), "-o", f"{tmp_path / 'file'}/"])
    assert code == 2 and not fresh.exists()


def robots_site() -> web.Application:
    async def robots(request: web.Request) -> web.Response:
        return web.Response(text="User-agent: *\nDisallow: /private/\n")

    async def article(request: web.Request) -> web.Response:
        body = Blog().body("/blog/post-1.html")
        return web.Response(text=body, content_type="text/html")

    async def data(request: web.Request) -> web.Response:
        return web.Response(text="a,b\n1,2\n", content_type="text/csv")

    app = web.Application()
    app.router.add_get("/robots.txt", robots)
    app.router.add_get("/data.csv", data)
    app.router.add_get("/{tail:.*}", article)
    return app


def test_the_markdown_command_prints_the_markdown_politely(
    serve: ServeFn, capsys: pytest.CaptureFixture[str]
) -> None:
    site = serve(robots_site())
    assert main(["markdown", site.url + "/blog/post-1.html"]) == 0
    printed = capsys.readouterr().out
    assert printed.startswith("# Harbour ledger 1\n")
    assert CONTENT_WORDS in printed and "Accept all cookies" not in printed
    assert f"]({site.url}/blog/scans.html)" in printed  # links absolute

    assert main(["markdown", "--scope", "full", site.url + "/a.html"]) == 0
    assert "Accept all cookies" in capsys.readouterr().out

    urls = [site.url + "/one.html", site.url + "/private/secret.html", site.url + "/data.csv"]
    assert main(["markdown", *urls, site.url + "/two.html"]) == 1
    captured = capsys.readouterr()
    assert "/private/" not in "".join(site.traffic.paths)  # robots.txt obeyed
    assert captured.err.splitlines() == [
        f"sitecrawl: error: {urls[1]}: blocked by robots.txt (blocked_robots)",
        f"sitecrawl: error: {urls[2]}: not an HTML page (text/csv): no Markdown",
    ]
    documents = captured.out.split("---\nurl: ")[1:]
    assert [doc.split("\n", 1)[0] for doc in documents] == [
        json.dumps(site.url + "/one.html"),
        json.dumps(site.url + "/two.html"),
    ]
    assert all(CONTENT_WORDS in doc for doc in documents)


@pytest.mark.parametrize("url", ["not a url", "ftp://example.org/", "http://"])
def test_the_markdown_command_refuses_a_bad_url(url: str, capsys: Any) -> None:
    assert main(["markdown", url]) == 2
    err = capsys.readouterr().err
    assert err.startswith("sitecrawl: error: ") and len(err.splitlines()) == 1


def test_the_markdown_command_says_why_a_fetch_failed(capsys: Any) -> None:
    assert main(["markdown", "http://127.0.0.1:9/page.html", "--retries", "0"]) == 1
    captured = capsys.readouterr()
    assert captured.out == ""
    assert captured.err.startswith("sitecrawl: error: http://127.0.0.1:9/page.html: ")
    assert "(connect)" in captured.err


def crawl_process(site: ServerThread, folder: Path, *outputs: str) -> subprocess.Popen[str]:
    argv = ["crawl", site.url, "--no-state", "-c", "2", "-o", "-"]
    return subprocess.Popen(
        [
            sys.executable,
            "-m",
            "sitecrawl",
            *argv,
            *(arg for out in outputs for arg in ("-o", out)),
        ],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        env=checkout_env(),
        cwd=folder,
    )


def wait_for_pages(process: subprocess.Popen[str], count: int) -> None:
    assert process.stdout is not None
    for _ in range(count):
        assert process.stdout.readline(), f"crawl ended early: {process.communicate()[1]}"


@pytest.mark.parametrize("stop", [signal.SIGKILL, signal.SIGINT], ids=["kill-9", "ctrl-c"])
def test_a_stopped_crawl_leaves_every_output_whole(
    stop: signal.Signals, serve: ServeFn, tmp_path: Path
) -> None:
    site = serve(site_app(80, delay=0.05))
    out = tmp_path / "site"
    out.mkdir()
    (out / "index.md").write_text("before\n")
    for name in ("llms.txt", "llms-full.txt"):
        (tmp_path / name).write_text("before\n")
    process = crawl_process(site, tmp_path, "site/", "llms.txt", "llms-full.txt")
    wait_for_pages(process, 10)
    process.send_signal(stop)
    process.communicate(timeout=60)
    files = list(out.rglob("*.md"))
    # killed: those the writer thread had not written yet are not there
    assert len(files) >= (2 if stop == signal.SIGKILL else 10)
    for path in files:  # each file whole: its front matter and its Markdown
        if path.read_text() != "before\n":
            meta, body = front_matter(path)
            assert meta["url"].startswith(site.url) and "Main text of page" in body
    llms, full = (tmp_path / "llms.txt").read_text(), (tmp_path / "llms-full.txt").read_text()
    if stop == signal.SIGKILL:  # never completed: as they were
        assert (process.returncode, llms, full) == (-signal.SIGKILL, "before\n", "before\n")
    else:  # the pages so far, whole
        assert process.returncode == 130
        assert llms.startswith("# Title 0\n\n> d0\n\n## Pages\n\n- [Title 0](")
        assert full.startswith("# Title 0\n\n> d0\n\n---\n\n# Title 0\n\nURL: ")
        listed = re.findall(r"^- \[.*?\]\((.*?)\)", llms, re.MULTILINE)
        assert listed == sorted(listed) and len(listed) >= 10
        assert re.findall(r"^URL: (.*)$", full, re.MULTILINE) == listed
        assert not [name for name in os.listdir(tmp_path) if TEMP_MARK in name]


BLOCKED = """
import sys
sys.modules["trafilatura"] = None  # as if the markdown extra were not installed
from sitecrawl._cli import main
sys.exit(main(sys.argv[1:]))
"""


@pytest.mark.parametrize("output", ["site/", "llms-full.txt"])
def test_markdown_outputs_without_the_extra_are_refused_before_the_crawl(
    output: str, tmp_path: Path
) -> None:
    argv = ["crawl", "http://127.0.0.1:9/", "--state", "s.db", "-o", output]
    done = subprocess.run(
        [sys.executable, "-c", BLOCKED, *argv],
        capture_output=True,
        text=True,
        timeout=60,
        cwd=tmp_path,
        env=checkout_env(),
    )
    assert done.returncode == 2, done.stderr
    assert len(done.stderr.splitlines()) == 1
    assert "pip install 'sitecrawl[markdown]'" in done.stderr
    assert list(tmp_path.iterdir()) == []  # no state file, no output


def test_the_help_says_which_outputs_turn_markdown_on(capsys: Any) -> None:
    with pytest.raises(SystemExit):
        main(["crawl", "--help"])
    help_text = " ".join(capsys.readouterr().out.split()).replace("- ", "-")  # wrapped
    assert "DIR/ (one Markdown file a page), llms.txt or llms-full.txt" in help_text
    assert "DIR/ and llms-full.txt turn --markdown on" in help_text
