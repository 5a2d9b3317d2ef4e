"""chunks: a page's Markdown cut at headings, then paragraphs, never inside a code block or a
table row; count_tokens, the approximation the cuts are measured with."""

from __future__ import annotations

import pytest

from sitecrawl.parse._chunks import Chunk, chunks, count_tokens

WORDS = "The crawler keeps every page it fetched in its state file for the next run."


def paragraph(n: int) -> str:
    return " ".join([WORDS] * n)


def test_count_tokens_by_kind_of_run() -> None:
    assert count_tokens("") == 0
    assert count_tokens("hello world") == 2  # up to 7 ASCII letters a token
    assert count_tokens("internationalization") == 3  # 20 letters: ceil(20 / 7)
    assert count_tokens("12345678") == 3  # digits in threes
    assert count_tokens("a.b, c!") == 6  # each punctuation mark one
    assert count_tokens("Привет") == 3  # other letters two a token
    assert count_tokens("日本語") == 3  # unspaced scripts one a letter


def test_headings_start_chunks_and_give_the_heading_path() -> None:
    md = (
        "# Guide\n\nIntro text.\n\n## Install\n\nRun the installer.\n\n### Linux\n\n"
        "Use the package.\n\n## Use\n\nStart it.\n"
    )
    got = chunks(md)
    assert [(c.headings, c.text) for c in got] == [
        (("Guide",), "# Guide\n\nIntro text."),
        (("Guide", "Install"), "## Install\n\nRun the installer."),
        (("Guide", "Install", "Linux"), "### Linux\n\nUse the package."),
        (("Guide", "Use"), "## Use\n\nStart it."),
    ]
    assert all(c.tokens == count_tokens(c.text) for c in got)


def test_text_before_the_first_heading_has_an_empty_path_and_empty_sections_vanish() -> None:
    md = "Lead paragraph.\n\n# Title\n\n## Part\n\nBody.\n"
    assert chunks(md) == [
        Chunk((), "Lead paragraph.", count_tokens("Lead paragraph.")),
        Chunk(("Title", "Part"), "## Part\n\nBody.", count_tokens("## Part\n\nBody.")),
    ]


def test_a_long_section_is_cut_between_paragraphs_within_the_budget() -> None:
    paragraphs = [paragraph(3) for _ in range(6)]
    md = "## Notes\n\n" + "\n\n".join(paragraphs)
    budget = count_tokens(paragraphs[0]) * 2 + 10
    got = chunks(md, max_tokens=budget)
    assert len(got) > 1
    assert all(c.tokens <= budget for c in got)
    assert all(c.headings == ("Notes",) for c in got)
    # every paragraph whole in one chunk, in order
    body = [part for c in got for part in c.text.split("\n\n") if not part.startswith("#")]
    assert body == paragraphs


def test_a_long_paragraph_is_cut_between_sentences_then_words() -> None:
    md = paragraph(20)
    got = chunks(md, max_tokens=40)
    assert all(c.tokens <= 40 for c in got)
    assert all(c.text.endswith(".") for c in got)
    assert " ".join(c.text for c in got) == md
    one_sentence = " ".join(["word"] * 100)
    pieces = chunks(one_sentence, max_tokens=10)
    assert all(c.tokens <= 10 for c in pieces)
    assert " ".join(c.text for c in pieces) == one_sentence


def test_a_code_block_is_never_cut_even_with_blank_lines_inside() -> None:
    code = "```python\n" + "\n\n".join(f"x{i} = compute({i})" for i in range(60)) + "\n```"
    md = f"## Code\n\n{paragraph(2)}\n\n{code}\n\n{paragraph(2)}\n"
    got = chunks(md, max_tokens=50)
    holding = [c for c in got if "```python" in c.text]
    assert len(holding) == 1
    assert code in holding[0].text
    assert holding[0].tokens > 50  # the only way past the budget: one block that is
    assert all(c.text.count("```") % 2 == 0 for c in got)


def test_an_indented_fence_in_a_list_is_a_code_block_too() -> None:
    code = "   ```sh\n   make\n\n   make install\n   ```"
    got = chunks(f"1. Build it:\n\n{code}\n", max_tokens=5)
    assert any(code in c.text for c in got)
    assert all(c.text.count("```") % 2 == 0 for c in got)


def test_a_table_is_cut_between_rows_each_piece_with_the_header() -> None:
    head = "| Option | Meaning |\n| --- | --- |"
    rows = [f"| opt{i} | what option {i} does to the crawl |" for i in range(30)]
    md = "## Options\n\n" + head + "\n" + "\n".join(rows)
    got = chunks(md, max_tokens=80)
    assert len(got) > 2
    seen: list[str] = []
    for chunk in got:
        lines = chunk.text.split("\n")
        table = lines[lines.index("| Option | Meaning |") :]
        assert table[:2] == head.split("\n")
        seen.extend(table[2:])
        assert chunk.tokens <= 80
    assert seen == rows


def test_max_tokens_must_be_positive() -> None:
    with pytest.raises(ValueError, match="max_tokens"):
        chunks("text", max_tokens=0)


def test_empty_markdown_has_no_chunks() -> None:
    assert chunks("") == []
    assert chunks("# Only a title\n") == []


def test_a_heading_is_not_a_chunk_of_its_own() -> None:
    big = paragraph(4)
    got = chunks(f"## Setup\n\n{big}\n", max_tokens=count_tokens(big))
    assert [c.text for c in got] == [big]
    assert got[0].headings == ("Setup",)
