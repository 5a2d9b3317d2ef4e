from __future__ import annotations

import csv
import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from conftest import ServeFn
from servers import ServerThread, checkout_env, expected_paths, site_app
from sitecrawl._cli import main
from sitecrawl.sinks import CSV_COLUMNS

ROOT = Path(__file__).resolve().parents[1]


@pytest.fixture(autouse=True)
def _in_tmp_dir(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """``crawl`` writes ./<host>.sitecrawl.db: keep it out of the checkout."""
    monkeypatch.chdir(tmp_path)


def test_crawl_writes_jsonl_csv_and_json(
    site: ServerThread, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    out = [tmp_path / "pages.jsonl", tmp_path / "pages.csv", tmp_path / "pages.json"]
    outputs = [arg for path in out for arg in ("-o", str(path))]
    code = main(["crawl", site.url, "-c", "4", *outputs])
    assert code == 0
    records = [json.loads(line) for line in out[0].read_text(encoding="utf-8").splitlines()]
    assert {r["url"].removeprefix(site.url) or "/" for r in records} == expected_paths(60)
    assert json.loads(out[2].read_text(encoding="utf-8")) == sorted(
        json.loads(out[2].read_text(encoding="utf-8")), key=lambda r: records.index(r)
    )
    with out[1].open(encoding="utf-8", newline="") as handle:
        rows = list(csv.DictReader(handle))
    assert list(rows[0])[:5] == [
        "page_url",
        "h1",
        "first_paragraph",
        "outgoing_link_urls",
        "image_urls",
    ]
    assert tuple(rows[0]) == CSV_COLUMNS
    by_url = {r["url"]: r for r in records}
    assert len(rows) == len(records)
    for row in rows:  # the CSV round-trips to the same data as the JSONL
        record = by_url[row["page_url"]]
        assert row["h1"] == record["h1"]
        assert row["title"] == record["title"]
        assert row["outgoing_link_urls"].split("\n") == record["outgoing_links"]
        assert row["image_urls"].split("\n") == record["image_urls"]
        assert int(row["status"]) == record["status"]
        assert row["error"] == ""
    summary = capsys.readouterr().err
    assert "60 pages" in summary and "200: 60" in summary


def test_stdout_streams_jsonl(site: ServerThread, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["crawl", site.url, "-n", "5", "-o", "-", "-q"]) == 0
    captured = capsys.readouterr()
    lines = captured.out.splitlines()
    assert len(lines) == 5
    assert all(json.loads(line)["status"] == 200 for line in lines)
    assert captured.err == ""


def test_max_depth_flag(site: ServerThread, tmp_path: Path) -> None:
    out = tmp_path / "p.jsonl"
    assert main(["crawl", site.url, "-d", "1", "-o", str(out), "-q"]) == 0
    depths = [json.loads(line)["depth"] for line in out.read_text().splitlines()]
    assert sorted(depths) == [0, 1, 1]


@pytest.mark.parametrize(
    ("argv", "message"),
    [
        (["crawl", "ftp://example.com/"], "unsupported URL scheme"),
        (["crawl", "http://"], "invalid URL"),
        (["crawl", "http://127.0.0.1/", "-c", "0"], "must be at least 1"),
        (["crawl", "http://127.0.0.1/", "-n", "many"], "not a whole number"),
        (["crawl", "http://127.0.0.1/", "--timeout", "-1"], "must be positive"),
        (["crawl", "http://127.0.0.1/", "-o", "out.xml"], "unknown output format"),
        (["crawl", "http://127.0.0.1/", "-o", "/no/such/dir/out.csv"], "cannot write output"),
        (["crawl"], "required"),
        (["fly"], "invalid choice"),
    ],
)
def test_bad_usage_exits_2_with_one_line(
    argv: list[str], message: str, capsys: pytest.CaptureFixture[str]
) -> None:
    assert main(argv) == 2
    err = capsys.readouterr().err
    assert message in err
    assert err.count("\n") == 1
    assert "Traceback" not in err


def test_unreachable_base_url_is_fatal_without_traceback(
    unused_tcp_port: int, capsys: pytest.CaptureFixture[str]
) -> None:
    assert main(["crawl", f"http://127.0.0.1:{unused_tcp_port}/"]) == 1
    err = capsys.readouterr().err
    assert "could not crawl" in err and "connection refused" in err
    assert "Traceback" not in err


def test_404_base_url_is_fatal(site: ServerThread, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["crawl", site.url + "/nope", "-q"]) == 1
    assert "HTTP 404" in capsys.readouterr().err


def test_subprocess_smoke(site: ServerThread, tmp_path: Path) -> None:
    out = tmp_path / "pages.csv"
    result = subprocess.run(
        [sys.executable, "-m", "sitecrawl", "crawl", site.url, "-o", str(out)],
        capture_output=True,
        text=True,
        timeout=60,
        cwd=tmp_path,
        env=checkout_env(),
    )
    assert result.returncode == 0, result.stderr
    assert "60 pages" in result.stderr
    with out.open(encoding="utf-8", newline="") as handle:
        assert len(list(csv.reader(handle))) == 61


def test_main_py_course_entry_point(site: ServerThread, tmp_path: Path) -> None:
    result = subprocess.run(
        [sys.executable, str(ROOT / "main.py"), site.url, "3", "10"],
        capture_output=True,
        text=True,
        timeout=60,
        cwd=tmp_path,
        env=checkout_env(),
    )
    assert result.returncode == 0, result.stderr
    lines = result.stdout.splitlines()
    assert lines[0] == f"starting crawl of: {site.url}"
    assert sum(line.startswith("200 ") for line in lines) == 10
    report = list(csv.reader((tmp_path / "report.csv").read_text(encoding="utf-8").splitlines()))
    assert report[0][:5] == [
        "page_url",
        "h1",
        "first_paragraph",
        "outgoing_link_urls",
        "image_urls",
    ]
    assert len(report) == 11


def test_main_py_usage_errors(tmp_path: Path) -> None:
    for argv, message in [
        ([], "no website provided"),
        (["a", "1", "2", "3"], "too many arguments provided"),
        (["http://127.0.0.1/", "zero"], "must be a positive whole number"),
    ]:
        result = subprocess.run(
            [sys.executable, str(ROOT / "main.py"), *argv],
            capture_output=True,
            text=True,
            timeout=30,
            cwd=tmp_path,
            env=checkout_env(),
        )
        assert result.returncode == 2
        assert message in result.stderr
        assert "Traceback" not in result.stderr


def test_help_lists_the_crawl_options(capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit) as info:
        main(["crawl", "--help"])
    assert info.value.code == 0
    out = capsys.readouterr().out
    for flag in [
        "--concurrency",
        "--max-pages",
        "--max-depth",
        "--output",
        "--subdomains",
        "--user-agent",
        "--timeout",
        "--quiet",
    ]:
        assert flag in out


def test_ctrl_c_stops_cleanly_and_keeps_what_was_crawled(serve: ServeFn, tmp_path: Path) -> None:
    server = serve(site_app(400, delay=0.05))
    out = tmp_path / "pages.jsonl"
    proc = subprocess.Popen(
        [sys.executable, "-m", "sitecrawl", "crawl", server.url, "-c", "2", "-o", str(out)],
        stderr=subprocess.PIPE,
        text=True,
        env=checkout_env(),
        start_new_session=True,
    )
    deadline = time.monotonic() + 30
    while len(server.traffic.pages) < 10 and time.monotonic() < deadline:
        time.sleep(0.05)
    os.killpg(proc.pid, signal.SIGINT)  # as a terminal's Ctrl-C: the parser process gets it too
    _, err = proc.communicate(timeout=30)
    assert proc.returncode == 130, err
    assert "Traceback" not in err
    records = [json.loads(line) for line in out.read_text(encoding="utf-8").splitlines()]
    assert 10 <= len(records) < 400
    # every request the server answered is in the output: nothing in flight was lost
    assert len(records) == len(server.traffic.pages)
