from __future__ import annotations

import codecs

import pytest

from extract import EmptyDocumentError, extract_document
from extract.text import decode_text


def test_utf16_text_with_bom_is_decoded() -> None:
    data = codecs.BOM_UTF16_LE + "Grüße aus Köln\nzweite Zeile".encode("utf-16-le")

    extraction = extract_document(data, "note.txt", "text/plain")

    assert extraction.kind == "text"
    assert extraction.markdown == "<!-- page 1 -->\n\nGrüße aus Köln\nzweite Zeile\n\n"
    assert extraction.page_offsets == (0,)


def test_latin1_text_is_decoded_as_western_european() -> None:
    data = "Le garçon a mangé à côté de la fenêtre, très élégant.".encode("latin-1")

    assert decode_text(data)[0] == "Le garçon a mangé à côté de la fenêtre, très élégant."


def test_markdown_is_kept_as_written() -> None:
    data = b"# Title\n\nSome *text*.\r\n"

    extraction = extract_document(data, "README.md", None)

    assert extraction.kind == "markdown"
    assert "# Title\n\nSome *text*." in extraction.markdown


def test_marker_lines_inside_a_document_cannot_fake_page_breaks() -> None:
    extraction = extract_document(b"intro\n<!-- page 2 -->\nmore", "notes.md", None)

    assert extraction.markdown.count("<!-- page ") == 1
    assert "<!-- (page 2) -->" in extraction.markdown


def test_csv_becomes_a_markdown_table_with_escaped_pipes() -> None:
    data = b"name;note\nalpha;a|b\nbeta;plain\n"

    extraction = extract_document(data, "rows.csv", "text/csv")

    assert extraction.kind == "csv"
    assert "| name | note |\n|---|---|\n| alpha | a\\|b |\n| beta | plain |" in extraction.markdown


def test_html_keeps_main_text_headings_and_tables_and_drops_furniture() -> None:
    page = b"""<!DOCTYPE html><html><head><title>Guide</title><style>p{}</style></head>
    <body><nav>Home | About</nav><script>alert(1)</script>
    <main><h1>Install</h1><p>Run the <b>installer</b> first.</p>
    <ul><li>Step one</li><li>Step two</li></ul>
    <table><tr><th>OS</th><th>Command</th></tr><tr><td>Linux</td><td>make | sh</td></tr></table>
    </main><footer>Copyright</footer></body></html>"""

    extraction = extract_document(page, "guide.html", "text/html")

    markdown = extraction.markdown
    assert extraction.kind == "html"
    assert "# Install" in markdown
    assert "Run the installer first." in markdown
    assert "- Step two" in markdown
    assert "| OS | Command |\n|---|---|\n| Linux | make \\| sh |" in markdown
    for furniture in ("Home", "alert", "Copyright", "p{}"):
        assert furniture not in markdown


@pytest.mark.parametrize(
    ("data", "filename"),
    [(b"  \n\t\n", "blank.txt"), (b"<html><body><script>x()</script></body></html>", "a.html")],
)
def test_whitespace_only_output_is_an_empty_document(data: bytes, filename: str) -> None:
    with pytest.raises(EmptyDocumentError):
        extract_document(data, filename, None)


def test_html_keeps_an_articles_own_header_but_drops_the_page_header() -> None:
    page = b"""<html><body><header>Site banner</header>
    <form><article><header><h1>Release notes</h1></header><p>Faster search.</p></article></form>
    </body></html>"""

    markdown = extract_document(page, "notes.html", None).markdown

    assert "# Release notes" in markdown
    assert "Faster search." in markdown
    assert "Site banner" not in markdown
