"""HTML: visible text only (no scripts, styles or markup), block elements as paragraphs."""

from __future__ import annotations

from html.parser import HTMLParser
from pathlib import Path

from ..records import ReadResult
from .text import decode_bytes, text_to_result

_HIDDEN = {"script", "style", "noscript", "template", "svg", "head", "iframe", "object"}
_BLOCKS = {
    "p",
    "div",
    "section",
    "article",
    "header",
    "footer",
    "li",
    "ul",
    "ol",
    "table",
    "tr",
    "h1",
    "h2",
    "h3",
    "h4",
    "h5",
    "h6",
    "pre",
    "blockquote",
    "br",
    "hr",
    "dd",
    "dt",
    "main",
    "nav",
}


class _VisibleText(HTMLParser):
    def __init__(self) -> None:
        super().__init__(convert_charrefs=True)
        self.parts: list[str] = []
        self.title = ""
        self._hidden_depth = 0
        self._in_title = False

    def handle_starttag(self, tag: str, attrs) -> None:
        if tag == "title":
            self._in_title = True
        elif tag in _HIDDEN:
            self._hidden_depth += 1
        elif tag in _BLOCKS:
            self.parts.append("\n\n")
        elif tag in ("td", "th"):
            self.parts.append(" | ")

    def handle_endtag(self, tag: str) -> None:
        if tag == "title":
            self._in_title = False
        elif tag in _HIDDEN:
            self._hidden_depth = max(0, self._hidden_depth - 1)
        elif tag in _BLOCKS:
            self.parts.append("\n\n")

    def handle_data(self, data: str) -> None:
        if self._in_title:
            self.title += data
        elif not self._hidden_depth:
            self.parts.append(data)


def html_to_text(markup: str) -> tuple[str, str]:
    parser = _VisibleText()
    parser.feed(markup)
    parser.close()
    # Source line breaks inside a paragraph are layout, not structure.
    paragraphs = ("".join(parser.parts)).split("\n\n")
    text = "\n\n".join(" ".join(p.split()) for p in paragraphs if p.strip())
    return text, " ".join(parser.title.split())


def read_html(path: Path) -> ReadResult:
    markup, _ = decode_bytes(path.read_bytes())
    text, title = html_to_text(markup)
    return text_to_result(text, "html", title)
