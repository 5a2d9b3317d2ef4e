"""The C extension; everything else about the package is in pyproject.toml.

``sitecrawl._speedups`` holds two hot loops (the word count and plain-path link joins),
``sitecrawl.parse._scan`` the markup cost estimate read before each parse (``_markup.py``),
``sitecrawl.parse._marks`` the marks of structured data in a page's text (``_markup.py``), and
``sitecrawl.parse._minhash`` a page's near-duplicate signature (``_signature.py``), and
``sitecrawl.parse._links`` the walk that reads a page's links from selectolax's Lexbor tree
(``_linkscan.py``). They are optional: without a C compiler the install goes on and sitecrawl
uses their Python twins (``_words.py``, ``_urls._join_plain``, ``_markup.markup_cost_py``,
``structured_marks_py`` and ``_linkscan.scan_links_py``): fewer pages/s.
"""

from setuptools import Extension, setup

setup(
    ext_modules=[
        Extension("sitecrawl._speedups", ["src/sitecrawl/_speedups.c"], optional=True),
        Extension("sitecrawl.parse._scan", ["src/sitecrawl/parse/_scan.c"], optional=True),
        Extension("sitecrawl.parse._marks", ["src/sitecrawl/parse/_marks.c"], optional=True),
        Extension("sitecrawl.parse._minhash", ["src/sitecrawl/parse/_minhash.c"], optional=True),
        Extension("sitecrawl.parse._links", ["src/sitecrawl/parse/_links.c"], optional=True),
    ]
)
