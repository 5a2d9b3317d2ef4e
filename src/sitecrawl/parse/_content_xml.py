"""trafilatura's extracted tree (its XML) as HTML for html-to-markdown (pure).

:func:`main_html` maps trafilatura's elements (``head``, ``list``, ``item``, ``quote``,
``code``, ``hi``, ``ref``, ``row``, ``cell``, ``lb``) to HTML: ordered lists stay ordered and
quotes stay quotes (trafilatura's own HTML and Markdown writers lose one or the other), a code
block becomes ``<pre><code class="language-x">``, inline code stays inline.
:func:`put_images` turns the image markers the extraction kept back into images.
"""

from __future__ import annotations

import re
from html import escape

from lxml import etree

#: A class naming a code block's language: ``language-py``, ``lang-py``, ``highlight-py``,
#: ``highlight-source-py`` (GitHub), ``brush:py`` (SyntaxHighlighter).
LANGUAGE_CLASS = re.compile(
    r"(?:^|\s)(?:language-|lang-|highlight-source-|highlight-|brush:\s*)([A-Za-z0-9_+#.-]+)"
)
#: An image's place in the text while trafilatura chooses (printable: it drops the others).
MARKER = re.compile("\u27e6([0-9]+)\u27e7")
_CODE_BLOCK = re.compile(r"(<pre>.*?</pre>)", re.DOTALL)
#: Where a trafilatura ``<code>`` sits when it is a word in running text, not a block.
_INLINE_PARENTS = frozenset({"p", "hi", "ref", "cell", "head", "item", "del"})
_HI_TAGS = {"#b": "strong", "#i": "em", "#u": "u", "#t": "code", "#sub": "sub", "#sup": "sup"}
_XML_TAGS = {
    "list": "ul",
    "item": "li",
    "quote": "blockquote",
    "lb": "br",
    "row": "tr",
    "del": "del",
    "p": "p",
    "table": "table",
    "div": "div",
}


def put_images(html: str, images: list[tuple[str, str, str]]) -> str:
    """``html`` with each image marker that survived the extraction turned back into its
    ``<img>``; markers inside code blocks are dropped."""
    if not images:
        return html

    def image(found: re.Match[str]) -> str:
        src, alt, title = images[int(found.group(1))]
        titled = f' title="{escape(title)}"' if title else ""
        return f'<img src="{escape(src)}" alt="{escape(alt)}"{titled}>'

    parts = _CODE_BLOCK.split(html)
    for at in range(0, len(parts), 2):  # the odd parts are code blocks
        parts[at] = MARKER.sub(image, parts[at])
    return "".join(MARKER.sub("", part) if at % 2 else part for at, part in enumerate(parts))


def code_text(pre: etree._Element) -> str:
    """The block's text as displayed: ``<br>`` (trafilatura's ``<lb>``) as a line break,
    markup (highlighter spans) flattened."""
    parts: list[str] = [pre.text or ""]
    for element in pre.iterdescendants():
        if element.tag in ("br", "lb"):
            parts.append("\n")
        elif element.text:
            parts.append(element.text)
        if element.tail:
            parts.append(element.tail)
    return "".join(parts)


def main_html(body: etree._Element) -> str:
    """trafilatura's extracted body (its XML) as HTML, ready for the converter."""
    root = etree.Element("body")
    root.text = body.text
    root.extend(_convert(child) for child in body)
    return etree.tostring(root, encoding="unicode", method="html")


def _convert(node: etree._Element) -> etree._Element:
    tag = node.tag if isinstance(node.tag, str) else ""
    if tag == "code":
        return _convert_code(node)
    if tag == "graphic":
        src = node.get("src") or ""
        if not src.startswith(("http://", "https://")):
            return _text_only(node)
        out = etree.Element("img", src=src, alt=node.get("alt") or "")
        if node.get("title"):
            out.set("title", node.get("title") or "")
        out.tail = node.tail
        return out
    out = etree.Element(_html_tag(node, tag))
    if tag == "ref":
        target = node.get("target")
        if target:
            out.set("href", target)
    out.text = node.text
    out.tail = node.tail
    out.extend(_convert(child) for child in node)
    return out


def _html_tag(node: etree._Element, tag: str) -> str:
    rend = node.get("rend") or ""
    if tag == "head":
        level = rend[1:] if rend[:1] == "h" and rend[1:] in ("1", "2", "3", "4", "5", "6") else "2"
        return f"h{level}"
    if tag == "list":
        return "ol" if rend == "ol" else "ul"
    if tag == "hi":
        return _HI_TAGS.get(rend, "span")
    if tag == "cell":
        return "th" if node.get("role") == "head" else "td"
    if tag == "ref":
        return "a" if node.get("target") else "span"
    return _XML_TAGS.get(tag, "span")


def _convert_code(node: etree._Element) -> etree._Element:
    text = code_text(node)
    if not text.strip():
        return _text_only(node)
    language = node.get("lang") or next(
        (
            match.group(1)
            for inner in node.iter("code")
            for match in [LANGUAGE_CLASS.search(inner.get("class") or "")]
            if match
        ),
        None,
    )
    parent = node.getparent()
    inline = (
        not language
        and "\n" not in text.strip()
        and parent is not None
        and parent.tag in _INLINE_PARENTS
    )
    if inline:
        out = etree.Element("code")
        out.text = text
    else:
        out = etree.Element("pre")
        code = etree.SubElement(out, "code")
        code.text = text.strip("\n") + "\n"
        if language:
            code.set("class", f"language-{language}")
    out.tail = node.tail
    return out


def _text_only(node: etree._Element) -> etree._Element:
    out = etree.Element("span")
    out.text = "".join(str(text) for text in node.itertext())
    out.tail = node.tail
    return out
