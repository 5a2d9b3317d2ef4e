"""Which library reads the crawl's PDFs: CPU time a PDF and text quality, pypdfium2 vs
pdfminer.six vs pypdf (issue 31, ``bench/RESULTS.md`` section 22).

The PDFs are real: HTML printed by headless Chromium (``page.pdf()``, tests/pdf_docs.py) with
links in it: a one-page report, a 10-page and a 100-page document of real prose (Debian's
license texts, 11 pt on A4 with 2 cm margins: ~480 words a page), and a dense 100-page one
(no margins: ~780 words a page). Each library reads every page's text and every link
annotation's URI (what the crawler needs); pypdfium2 through sitecrawl's own reader
(``sitecrawl.parse.read_pdf``).

Quality is the word-level F1 of the text read against the text a reader sees in the HTML it
was printed from (Chromium's ``innerText``): words are runs of ``\\w`` lower-cased, counted as
bags (precision = words in common / words read, recall = words in common / words in the
HTML); and the links found against the ``<a href>`` count. CPU is ``time.process_time()`` of
one read (this process: every library runs in it), the median of ``--rounds`` interleaved
rounds (the order of the libraries rotates each round).

    python bench/pdf_bench.py --rounds 3 [--out /tmp/pdf-bench] [--only pypdfium2 pypdf]
"""

from __future__ import annotations

import argparse
import io
import json
import re
import statistics
import sys
import time
from collections import Counter
from collections.abc import Callable
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path[:0] = [str(ROOT / "src"), str(ROOT / "tests")]

BASE = "https://bench.example/docs/"
Reader = Callable[[bytes, str], tuple[list[str], list[str]]]


def read_pdfium(data: bytes, url: str) -> tuple[list[str], list[str]]:
    from sitecrawl.parse import read_pdf

    pdf = read_pdf(data, url)
    pages = re.split(r"<!-- page \d+ -->", pdf.markdown)[1:]
    return pages, [target for target, _, _, _ in pdf.links]


def read_pypdf(data: bytes, url: str) -> tuple[list[str], list[str]]:
    from pypdf import PdfReader

    reader = PdfReader(io.BytesIO(data))
    pages, links = [], []
    for page in reader.pages:
        pages.append(page.extract_text() or "")
        for ref in page.get("/Annots") or []:
            annot = ref.get_object()
            action = annot.get("/A")
            if annot.get("/Subtype") == "/Link" and action is not None:
                uri = action.get_object().get("/URI")
                if uri is not None:
                    links.append(str(uri))
    return pages, links


def read_pdfminer(data: bytes, url: str) -> tuple[list[str], list[str]]:
    from pdfminer.converter import TextConverter
    from pdfminer.layout import LAParams
    from pdfminer.pdfinterp import PDFPageInterpreter, PDFResourceManager
    from pdfminer.pdfpage import PDFPage
    from pdfminer.pdftypes import resolve1

    manager = PDFResourceManager()
    pages, links = [], []
    for page in PDFPage.get_pages(io.BytesIO(data)):
        out = io.StringIO()
        device = TextConverter(manager, out, laparams=LAParams())
        PDFPageInterpreter(manager, device).process_page(page)
        device.close()
        pages.append(out.getvalue())
        for annot in resolve1(page.annots) or []:
            annot = resolve1(annot)
            action = resolve1(annot.get("A")) if isinstance(annot, dict) else None
            if isinstance(action, dict) and "URI" in action:
                uri = resolve1(action["URI"])
                links.append(uri.decode("latin-1") if isinstance(uri, bytes) else str(uri))
    return pages, links


READERS: dict[str, Reader] = {
    "pypdfium2": read_pdfium,
    "pdfminer.six": read_pdfminer,
    "pypdf": read_pypdf,
}


def words(text: str) -> Counter[str]:
    return Counter(re.findall(r"\w+", text.lower()))


def f1(read: str, reference: str) -> tuple[float, float, float]:
    got, want = words(read), words(reference)
    common = sum((got & want).values())
    precision = common / max(sum(got.values()), 1)
    recall = common / max(sum(want.values()), 1)
    return precision, recall, 2 * precision * recall / max(precision + recall, 1e-9)


def make_docs(out: Path) -> dict[str, dict[str, object]]:
    """Print the documents (once: kept in ``out``); name -> {pdf, text, links, pages}."""
    index = out / "index.json"
    if index.exists():
        return dict(json.loads(index.read_text()))
    from playwright.sync_api import Browser

    from pdf_docs import long_html, print_pdf, printer, report_html

    out.mkdir(parents=True, exist_ok=True)
    margins = {"top": "2cm", "bottom": "2cm", "left": "2cm", "right": "2cm"}
    links = {"/about.html": "About us", "/gone.html": "A gone page", "https://else.test/": "Else"}
    sources = {
        "report-1p": (report_html(links), {}),
        "doc-10p": (long_html(5_600, link_every=8), margins),
        "book-100p": (long_html(59_500), margins),
        "dense-100p": (long_html(78_000), {}),
    }
    docs: dict[str, dict[str, object]] = {}
    with printer() as browser:
        assert isinstance(browser, Browser)
        for name, (source, margin) in sources.items():
            tab = browser.new_page()
            tab.set_content(source.replace("<head>", f'<head><base href="{BASE}">', 1))
            text = str(tab.evaluate("document.body.innerText"))
            hrefs = int(tab.evaluate("document.querySelectorAll('a[href]').length"))
            tab.close()
            data = print_pdf(browser, source=source, base=BASE, margin=margin)
            import pypdfium2

            pages = len(pypdfium2.PdfDocument(data))
            (out / f"{name}.pdf").write_bytes(data)
            (out / f"{name}.txt").write_text(text, encoding="utf-8")
            docs[name] = {"pdf": f"{name}.pdf", "text": f"{name}.txt", "links": hrefs}
            docs[name]["pages"] = pages
            docs[name]["bytes"] = len(data)
            docs[name]["words"] = sum(words(text).values())
    index.write_text(json.dumps(docs, indent=1))
    return docs


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--out", type=Path, default=Path("/tmp/pdf-bench"))
    parser.add_argument("--only", nargs="*", choices=list(READERS), default=list(READERS))
    args = parser.parse_args()
    docs = make_docs(args.out)
    cpu: dict[tuple[str, str], list[float]] = {}
    quality: dict[tuple[str, str], tuple[float, float, float, int]] = {}
    names = list(args.only)
    for round_ in range(args.rounds):
        order = names[round_ % len(names) :] + names[: round_ % len(names)]
        for doc, meta in docs.items():
            data = (args.out / str(meta["pdf"])).read_bytes()
            reference = (args.out / str(meta["text"])).read_text(encoding="utf-8")
            for lib in order:
                started = time.process_time()
                pages, links = READERS[lib](data, BASE + doc + ".pdf")
                cpu.setdefault((lib, doc), []).append(time.process_time() - started)
                if round_ == 0:
                    quality[lib, doc] = (*f1("\n".join(pages), reference), len(links))
                    assert len(pages) == meta["pages"], (lib, doc, len(pages))
        print(f"round {round_ + 1} done", file=sys.stderr)
    print(
        "| document | pages | words | links | library | CPU a read (median) | CPU a page |"
        " precision | recall | F1 | links found |"
    )
    print("|---|---:|---:|---:|---|---:|---:|---:|---:|---:|---:|")
    for doc, meta in docs.items():
        for lib in names:
            median = statistics.median(cpu[lib, doc])
            p, r, f, found = quality[lib, doc]
            pages = int(str(meta["pages"]))
            print(
                f"| {doc} | {pages} | {meta['words']:,} | {meta['links']} | {lib} |"
                f" {median * 1000:,.0f} ms | {median * 1000 / pages:.1f} ms |"
                f" {p:.4f} | {r:.4f} | {f:.4f} | {found} |"
            )


if __name__ == "__main__":
    main()
