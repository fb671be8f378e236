"""HTML: the page's main text as Markdown (headings, lists, tables, code).

Scripts, styles, navigation and other page furniture are dropped. When the
page marks its content with ``<main>`` or a single ``<article>``, only that is kept.
"""

from __future__ import annotations

from bs4 import BeautifulSoup
from bs4.element import Comment, Doctype, NavigableString, ProcessingInstruction, Tag

from extract.markdown import assemble_pages, markdown_table
from extract.text import decode_text
from extract.types import Extraction

_DROPPED = (
    "script", "style", "noscript", "template", "nav", "aside", "button", "svg", "iframe",
    "object", "head", "select",
)  # fmt: skip
_PAGE_FURNITURE = ("header", "footer")
"""Dropped when they frame the page, kept inside ``<main>``/``<article>`` (an article's title)."""
_HEADINGS = {f"h{level}": level for level in range(1, 7)}
_PARAGRAPHS = frozenset({"p", "blockquote", "dt", "dd", "figcaption", "caption", "address"})


def _inline_text(tag: Tag) -> str:
    return " ".join(tag.get_text(" ").split())


def _table_rows(table: Tag) -> list[list[str]]:
    rows: list[list[str]] = []
    for row in table.find_all("tr"):
        if row.find_parent("table") is not table:
            continue  # a nested table's row
        cells = [_inline_text(cell) for cell in row.find_all(["th", "td"], recursive=False)]
        if any(cells):
            rows.append(cells)
    return rows


class _Renderer:
    """Walks the DOM once, emitting Markdown blocks in document order."""

    def __init__(self) -> None:
        self.blocks: list[str] = []
        self._loose: list[str] = []

    def flush(self) -> None:
        """Close the paragraph of loose text collected so far."""
        text = " ".join(" ".join(self._loose).split())
        if text:
            self.blocks.append(text)
        self._loose = []

    def _emit(self, block: str) -> None:
        self.flush()
        if block.strip():
            self.blocks.append(block)

    def render(self, node: Tag) -> None:
        for child in node.children:
            if isinstance(child, Comment | Doctype | ProcessingInstruction):
                continue
            if isinstance(child, NavigableString):
                self._loose.append(str(child))
                continue
            if not isinstance(child, Tag):
                continue
            name = child.name
            if name in _HEADINGS:
                text = _inline_text(child)
                if text:
                    self._emit("#" * _HEADINGS[name] + " " + text)
            elif name in _PARAGRAPHS:
                self._emit(_inline_text(child))
            elif name == "li":
                self._emit("- " + _inline_text(child))
            elif name == "pre":
                self._emit("```\n" + child.get_text().strip("\n") + "\n```")
            elif name == "table":
                self._emit(markdown_table(_table_rows(child)))
            elif name == "br":
                self.flush()
            else:
                self.render(child)
        if node.name in {"div", "section", "article", "main", "body", "ul", "ol", "td"}:
            self.flush()


def _content_root(soup: BeautifulSoup) -> Tag:
    main = soup.find("main")
    if isinstance(main, Tag):
        return main
    articles = soup.find_all("article")
    if len(articles) == 1 and isinstance(articles[0], Tag):
        return articles[0]
    body = soup.find("body")
    return body if isinstance(body, Tag) else soup


def html_to_markdown(text: str) -> str:
    """Markdown for an HTML string (the title becomes a level-1 heading if the body has none)."""
    soup = BeautifulSoup(text, "lxml")
    title = soup.title.get_text(" ", strip=True) if soup.title else ""
    for tag in soup.find_all(_DROPPED):
        tag.decompose()
    for tag in soup.find_all(_PAGE_FURNITURE):
        if tag.find_parent(["main", "article"]) is None:
            tag.decompose()
    renderer = _Renderer()
    renderer.render(_content_root(soup))
    renderer.flush()
    blocks = renderer.blocks
    if title and blocks and not any(block.startswith("# ") for block in blocks):
        blocks.insert(0, "# " + " ".join(title.split()))
    return "\n\n".join(blocks)


def extract_html(data: bytes) -> Extraction:
    """An HTML page as one page of Markdown."""
    text, _ = decode_text(data)
    return assemble_pages([html_to_markdown(text)], "html")
