"""The C extension; everything else about the package is in pyproject.toml.

``sitecrawl._speedups`` holds two hot loops (the word count and plain-path link joins). It is
optional: without a C compiler the install goes on and sitecrawl uses their Python twins
(``_words.py``, ``_urls._join_plain``): ~15-20 % fewer pages/s.
"""

from setuptools import Extension, setup

setup(
    ext_modules=[
        Extension("sitecrawl._speedups", ["src/sitecrawl/_speedups.c"], optional=True),
    ]
)
