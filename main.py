"""The course's entry point: ``python main.py URL [max_concurrency] [max_pages]``.

Prints ``starting crawl of: URL``, crawls, prints one line per page (crawled text made
printable: no control character reaches the terminal) and writes ``report.csv``. Exits 1 when
the start page could not be crawled, as ``sitecrawl crawl`` does.
The full command line is ``sitecrawl crawl --help``.
"""

import asyncio
import sys

from sitecrawl import SitecrawlError, crawl_site_async, printable
from sitecrawl.sinks import CsvSink

USAGE = "usage: python main.py URL [max_concurrency] [max_pages]"


def _positive(text: str, name: str) -> int:
    if not text.isdigit() or int(text) < 1:
        print(f"{name} must be a positive whole number, got {text!r}\n{USAGE}", file=sys.stderr)
        sys.exit(2)
    return int(text)


def main() -> int:
    args = sys.argv[1:]
    if not args:
        print(f"no website provided\n{USAGE}", file=sys.stderr)
        return 2
    if len(args) > 3:
        print(f"too many arguments provided\n{USAGE}", file=sys.stderr)
        return 2
    url = args[0]
    max_concurrency = _positive(args[1], "max_concurrency") if len(args) > 1 else 8
    max_pages = _positive(args[2], "max_pages") if len(args) > 2 else 100
    print(f"starting crawl of: {printable(url)}")
    failed_start = []
    try:
        with CsvSink("report.csv") as report:

            def on_page(page):  # one line per page, and into the report as it completes
                text = page.error or page.title or ""
                print(printable(f"{page.status or '---'} {page.url} {text}"))
                report.write(page)
                if page.depth == 0 and page.error is not None:
                    failed_start.append(page)

            page_data = asyncio.run(
                crawl_site_async(url, max_concurrency, max_pages, on_page=on_page)
            )
    except SitecrawlError as exc:
        print(printable(f"error: {exc}"), file=sys.stderr)
        return 2
    except KeyboardInterrupt:
        print("interrupted; report.csv holds the pages crawled so far", file=sys.stderr)
        return 130
    if failed_start and len(page_data) == 1:  # as the CLI: the start page alone, and it failed
        page = failed_start[0]
        print(printable(f"error: could not crawl {page.url}: {page.error}"), file=sys.stderr)
        return 1
    print(f"crawled {len(page_data)} pages; wrote report.csv")
    return 0


if __name__ == "__main__":
    sys.exit(main())
