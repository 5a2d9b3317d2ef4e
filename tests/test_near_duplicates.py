"""Near-duplicate content: the signature's C loop and its Python twin agree, the MinHash
estimate follows the shingles' Jaccard similarity, the LSH clusters exact and near duplicates
and leaves distinct pages out; crawled into SQLite and Redis, ``export -t near_duplicates``,
the issues rows and the report's clusters say the same."""

from __future__ import annotations

import json
import random
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from conftest import ServeFn
from redis_server import shared_server
from seo_site import long_text, seo_app
from servers import ServerThread
from sitecrawl._cli import main
from sitecrawl.audit import lsh_shape, near_duplicates
from sitecrawl.parse import NPERM, content_signature, similarity
from sitecrawl.parse._child import parse_body
from sitecrawl.parse._signature import MIN_TOKENS, signature_py, similarity_py
from speedups import require_speedups


@pytest.fixture(autouse=True)
def _in_tmp_dir(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[None]:
    monkeypatch.chdir(tmp_path)
    yield


def words(n: int, seed: int) -> list[str]:
    rng = random.Random(seed)
    vocabulary = [f"w{i}" for i in range(3000)] + ["Ünïcode", "ÄBC", "日本語"]
    return [rng.choice(vocabulary) for _ in range(n)]


def shingles(tokens: list[str]) -> set[tuple[str, ...]]:
    return {tuple(tokens[i : i + 5]) for i in range(len(tokens) - 4)}


def test_the_compiled_signature_and_its_python_twin_agree() -> None:
    require_speedups("sitecrawl.parse._minhash")
    from sitecrawl.parse._minhash import signature
    from sitecrawl.parse._minhash import similarity as compiled_similarity

    texts = ["", "a", "one, two; three!", " ".join(words(9, 1)), " ".join(words(10, 2))]
    texts += [" ".join(words(n, n)) + " MiXeD-Case punct.!? \u00a0 end" for n in (11, 300, 2000)]
    texts.append("x" * 5000 + " y" * 20)
    for text in texts:
        utf8 = text.encode("utf-8", "surrogatepass")
        assert signature(utf8) == signature_py(utf8), text[:40]
    a = signature(" ".join(words(400, 5)).encode())[1]
    b = signature(" ".join(words(400, 6)).encode())[1]
    assert a is not None and b is not None
    assert compiled_similarity(a, b) == similarity_py(a, b) < 0.1
    assert compiled_similarity(a, a) == similarity_py(a, a) == 1.0
    with pytest.raises(ValueError, match="512 bytes"):
        compiled_similarity(a, b"short")


def test_case_and_punctuation_are_not_content_and_short_texts_are_not_signed() -> None:
    text = " ".join(words(50, 3))
    assert content_signature(text) == content_signature(f"# {text.upper()}!\n\n*")
    assert content_signature(" ".join(words(MIN_TOKENS - 1, 4))) == (None, None)
    content_hash, minhash = content_signature(text)
    assert content_hash is not None and len(content_hash) == 16
    assert minhash is not None and len(minhash) == 4 * NPERM


@pytest.mark.parametrize("changed", [1, 5, 15, 40])
def test_the_estimate_follows_the_jaccard_similarity(changed: int) -> None:
    base = words(600, 7)
    edited = list(base)
    for i in range(0, 600, 600 // changed):
        edited[i] = "edited"
    true = len(shingles(base) & shingles(edited)) / len(shingles(base) | shingles(edited))
    a, b = content_signature(" ".join(base))[1], content_signature(" ".join(edited))[1]
    assert a is not None and b is not None
    assert abs(similarity(a, b) - true) < 0.1  # 128 minima: a standard error of 0.03 or less


def signed(url: str, text: str) -> tuple[str, str, bytes]:
    content_hash, minhash = content_signature(text)
    assert content_hash is not None and minhash is not None
    return url, content_hash, minhash


def test_exact_and_near_duplicates_cluster_and_distinct_pages_do_not() -> None:
    one, two = words(400, 10), words(400, 11)
    near = list(one)
    near[200] = "edited"
    pages = [
        signed("https://s/b", " ".join(one)),
        signed("https://s/a", " ".join(one)),
        signed("https://s/c", " ".join(near)),
        signed("https://s/d", " ".join(two)),
        signed("https://s/e", " ".join(words(400, 12))),
    ]
    rows = {row.url.removeprefix("https://s/"): row for row in near_duplicates(pages)}
    assert set(rows) == {"a", "b", "c"}
    assert {row.cluster for row in rows.values()} == {1}
    assert {row.size for row in rows.values()} == {3}
    assert (rows["a"].similar_to, rows["a"].similarity, rows["a"].exact) == (
        "https://s/b",
        1.0,
        True,
    )
    assert rows["b"].similar_to == "https://s/a" and rows["b"].exact
    assert rows["c"].similar_to in ("https://s/a", "https://s/b") and not rows["c"].exact
    assert 0.9 <= rows["c"].similarity < 1.0
    # A threshold above their similarity keeps only the exact pair.
    strict = near_duplicates(pages, threshold=1.0)
    assert {row.url for row in strict} == {"https://s/a", "https://s/b"}


def test_the_lsh_finds_pairs_at_the_threshold() -> None:
    for threshold in (0.5, 0.8, 0.9, 0.95):
        bands, rows = lsh_shape(threshold)
        assert bands * rows <= NPERM
        assert 1 - (1 - threshold**rows) ** bands >= 0.995


def test_a_template_shared_by_many_pages_costs_no_quadratic_time() -> None:
    base = words(300, 20)
    pages = []
    for i in range(3000):
        text = list(base)
        text[i % 300] = f"page{i}"  # each page one word of its own: all near one another
        pages.append(signed(f"https://s/{i:05}", " ".join(text)))
    started = time.process_time()
    rows = near_duplicates(pages)
    assert time.process_time() - started < 5
    assert len(rows) == 3000 and len({row.cluster for row in rows}) == 1


def jsonl(path: str) -> list[dict[str, Any]]:
    return [json.loads(line) for line in Path(path).read_text(encoding="utf-8").splitlines()]


def assert_the_planted_clusters(rows: list[dict[str, Any]], site: ServerThread) -> None:
    found = {row["url"].removeprefix(site.url): row for row in rows}
    assert set(found) == {"/dup/exact1", "/dup/exact2", "/dup/near1", "/dup/near2"}
    exact, near = found["/dup/exact1"], found["/dup/near1"]
    assert exact["similar_to"] == site.url + "/dup/exact2" and exact["similarity"] == 1.0
    assert near["similar_to"] == site.url + "/dup/near2" and 0.9 <= near["similarity"] < 1.0
    assert found["/dup/exact2"]["cluster_id"] == exact["cluster_id"] != near["cluster_id"]
    assert found["/dup/near2"]["cluster_id"] == near["cluster_id"]


def test_a_crawl_in_sqlite_exports_its_clusters_issues_and_report(serve: ServeFn) -> None:
    site = serve(seo_app())
    assert main(["crawl", site.url, "--state", "s.db", "-q", "--near-duplicates"]) == 0
    outs = ["-o", "nd.jsonl", "-o", "nd.csv", "-o", "nd.parquet"]
    assert main(["export", "s.db", "-t", "near_duplicates", "-q", *outs]) == 0
    assert_the_planted_clusters(jsonl("nd.jsonl"), site)
    import pyarrow.parquet as pq

    table = pq.read_table("nd.parquet")
    assert table.schema.field("cluster_id").type == "int64"
    assert sorted(table.column("url").to_pylist()) == sorted(r["url"] for r in jsonl("nd.jsonl"))
    assert main(["export", "s.db", "-t", "issues", "-q", "-o", "i.jsonl"]) == 0
    issues = {(r["check"], r["url"].removeprefix(site.url)) for r in jsonl("i.jsonl")}
    dup = {pair for pair in issues if pair[0].endswith("_duplicate")}
    assert dup == {
        ("exact_duplicate", "/dup/exact1"),
        ("exact_duplicate", "/dup/exact2"),
        ("near_duplicate", "/dup/near1"),
        ("near_duplicate", "/dup/near2"),
    }
    assert main(["report", "s.db", "-o", "r.html", "-q"]) == 0
    report = Path("r.html").read_text(encoding="utf-8")
    assert "Duplicate content" in report and site.url + "/dup/near2" in report


def test_a_crawl_in_redis_gives_the_same_clusters(serve: ServeFn) -> None:
    server = shared_server()
    site = serve(seo_app())
    source = ["--redis", server.url, "--crawl-id", "nd"]
    assert main(["crawl", site.url, *source, "--fresh", "-q", "--near-duplicates"]) == 0
    assert main(["export", *source, "-t", "near_duplicates", "-q", "-o", "r.jsonl"]) == 0
    assert_the_planted_clusters(jsonl("r.jsonl"), site)


def test_the_threshold_is_the_crawl_s(serve: ServeFn) -> None:
    site = serve(seo_app())
    argv = ["crawl", site.url, "--state", "t.db", "-q", "--near-duplicates"]
    assert main([*argv, "--near-dup-threshold", "0.99"]) == 0
    assert main(["export", "t.db", "-t", "near_duplicates", "-q", "-o", "t.jsonl"]) == 0
    assert {row["url"].removeprefix(site.url) for row in jsonl("t.jsonl")} == {
        "/dup/exact1",
        "/dup/exact2",
    }


def test_without_the_setting_nothing_is_signed(serve: ServeFn) -> None:
    site = serve(seo_app())
    assert main(["crawl", site.url, "--state", "n.db", "-q"]) == 0
    assert main(["export", "n.db", "-t", "near_duplicates", "-q", "-o", "n.jsonl"]) == 0
    assert jsonl("n.jsonl") == []


def test_a_bad_threshold_is_a_one_line_usage_error(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["crawl", "http://127.0.0.1:9/", "--near-dup-threshold", "1.5"]) == 2
    err = capsys.readouterr().err
    assert "fraction" in err and len(err.strip().splitlines()) == 1


def test_parser_processes_are_told_the_setting(serve: ServeFn) -> None:
    import io

    from sitecrawl.parse._child import read_setup, setup_frame

    for flag in (True, False):
        frame = setup_frame(False, None, near_duplicates=flag)
        assert read_setup(io.BytesIO(frame)) == (False, None, None, False, flag, False)
    # With an extraction rule every page is parsed in a parser process.
    site = serve(seo_app())
    argv = ["crawl", site.url, "--near-duplicates", "-x", "t=css:title", "-q", "--state", "x.db"]
    assert main(argv) == 0
    assert main(["export", "x.db", "-t", "near_duplicates", "-q", "-o", "x.jsonl"]) == 0
    assert_the_planted_clusters(jsonl("x.jsonl"), site)


def test_with_markdown_the_markdown_is_signed() -> None:
    text = long_text(5)
    body = f"<html><body><nav>menu</nav><article><h1>T</h1><p>{text}</p></article></body></html>"
    data = parse_body(body.encode(), "utf-8", "https://s/", markdown="main", near_duplicates=True)
    markdown = data.fields["markdown"]
    assert text in markdown
    assert (data.fields["content_hash"], data.fields["content_minhash"]) == content_signature(
        markdown
    )
    plain = parse_body(body.encode(), "utf-8", "https://s/", near_duplicates=True)
    assert plain.fields["content_hash"] is not None and "markdown" not in plain.fields
