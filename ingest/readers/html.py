"""HTML: visible text only (no scripts, styles or markup), block elements as paragraphs.

Real pages are often malformed; the parser follows the browser where it matters for
text: `</head>` is optional (body content ends the head), an `<svg>` or `<math>` left open
ends at the next HTML block tag. Any other skipped element whose end tag is missing (it
ends with the element that holds it, or with the page) would hide the text after it: the
page is then read again without that element's start tag, and a warning says so.
"""

from __future__ import annotations

import re
from collections import Counter
from html.parser import HTMLParser
from pathlib import Path

from ingest.readers.registry import ReadRequest, register_reader
from ingest.readers.text import decode, text_to_result
from ingest.records import ReadResult

_HIDDEN = {"script", "style", "noscript", "template", "svg", "math", "head", "iframe", "object"}
_RAW_TEXT = {"script", "style"}  # html.parser reads their content as raw text, not tags
_FOREIGN = {"svg", "math"}
# HTML start tags that end an open <svg> or <math> (the HTML standard's "breakout" tags).
_BREAKOUT = {
    "b", "big", "blockquote", "body", "br", "center", "code", "dd", "div", "dl", "dt", "em",
    "embed", "h1", "h2", "h3", "h4", "h5", "h6", "head", "hr", "i", "img", "li", "listing",
    "menu", "meta", "nobr", "ol", "p", "pre", "ruby", "s", "small", "span", "strong",
    "strike", "sub", "sup", "table", "tt", "u", "ul", "var",
}  # fmt: skip
_HEAD_CONTENT = {"title", "meta", "link", "style", "script", "noscript", "base", "template"}
_VOID = {"area", "base", "br", "col", "embed", "hr", "img", "input", "link", "meta", "param", "source", "track", "wbr"}
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
_MAX_PASSES = 4  # readings of one page while unclosed elements are taken out
# Where the code of an unclosed <script> or <style> most likely ends: the next tag.
_NEXT_TAG = re.compile(r"<(?:/?[a-zA-Z][a-zA-Z0-9-]*[\s/>]|!)")


class _Stack(list):
    """Element names with counts, so membership and finding the last one stay cheap on
    pages built to nest or leave open thousands of elements."""

    def __init__(self) -> None:
        super().__init__()
        self.counts: Counter[str] = Counter()

    def push(self, item) -> None:
        self.append(item)
        self.counts[_name(item)] += 1

    def truncate(self, keep: int) -> None:
        for item in self[keep:]:
            self.counts[_name(item)] -= 1
        del self[keep:]

    def last_index(self, tag: str) -> int:
        """Index of the last `tag`, -1 if none (the walk from the top costs what it then ends)."""
        if self.counts[tag] <= 0:
            return -1
        index = len(self) - 1
        while _name(self[index]) != tag:
            index -= 1
        return index


def _name(item) -> str:
    return item if isinstance(item, str) else item[0]


class _VisibleText(HTMLParser):
    def __init__(self, markup: str) -> None:
        super().__init__(convert_charrefs=True)
        self.parts: list[str] = []
        self.title = ""
        self.warnings: list[str] = []
        self._open = _Stack()  # visible elements started and not yet ended
        # Skipped elements started and not yet ended: (tag, len(_open) at its start, start, end of its tag).
        self._hidden = _Stack()
        self._unclosed: list[tuple[str, int, int]] = []  # skipped elements whose end tag was missing
        self._in_title = False
        self._title_done = False
        self._line_starts = [0] + [m.end() for m in re.finditer("\n", markup)]

    def _offset(self) -> int:
        line, column = self.getpos()
        return self._line_starts[line - 1] + column

    def _cut(self, keep: int, where: str = "") -> None:
        """End the skipped elements above the first `keep`, whose end tags are missing: an
        <svg> or <math> ended by HTML (`where`) with a warning, others to be read again."""
        for tag, _, start, end in self._hidden[keep:]:
            if where:
                self.warnings.append(f"an unclosed <{tag}> was taken to end at {where}")
            elif tag != "head":  # </head> is optional in HTML
                self._unclosed.append((tag, start, end))
        self._hidden.truncate(keep)

    def _implicit_ends(self, tag: str) -> None:
        if not self._hidden:
            return
        if tag == "body":  # nothing skipped can hold the body
            self._cut(0)
        elif self._hidden[-1][0] in _FOREIGN and tag in _BREAKOUT:
            keep = len(self._hidden)
            while keep and self._hidden[keep - 1][0] in _FOREIGN:
                keep -= 1
            self._cut(keep, f"<{tag}>")
        elif self._hidden[-1][0] == "head" and tag not in _HEAD_CONTENT:
            self._hidden.truncate(len(self._hidden) - 1)  # body content ends the head

    def handle_starttag(self, tag: str, attrs) -> None:
        self._in_title = False  # a title holds no tags: one left open ends here
        self._implicit_ends(tag)
        if tag in _HIDDEN:
            start = self._offset()
            self._hidden.push((tag, len(self._open), start, start + len(self.get_starttag_text() or "")))
        elif tag == "title":
            self._in_title = not self._title_done and len(self._hidden) == self._hidden.counts["head"]
        elif self._hidden:
            return
        else:
            if tag not in _VOID:
                self._open.push(tag)
            if tag in _BLOCKS:
                self.parts.append("\n\n")
            elif tag in ("td", "th"):
                self.parts.append(" | ")

    def handle_endtag(self, tag: str) -> None:
        if tag == "title":
            self._title_done = self._title_done or self._in_title
            self._in_title = False
            return
        index = self._hidden.last_index(tag)
        if index >= 0:
            self._cut(index + 1)
            self._hidden.truncate(index)
            return
        index = self._open.last_index(tag)
        if index < 0:
            return  # an end tag inside skipped content, or one that never started
        keep = len(self._hidden)
        while keep and self._hidden[keep - 1][1] > index:
            keep -= 1
        self._cut(keep)  # skipped elements inside the one that ends here end with it
        self._open.truncate(index)
        if not self._hidden and tag in _BLOCKS:
            self.parts.append("\n\n")

    def handle_data(self, data: str) -> None:
        if self._in_title:
            self.title += data
            return
        if self._hidden and self._hidden[-1][0] == "head" and data.strip():
            self._hidden.truncate(len(self._hidden) - 1)  # text in the head means the body has begun
        if not self._hidden:
            self.parts.append(data)

    def unclosed(self) -> list[tuple[str, int, int]]:
        """Skipped elements whose end tag is missing, in page order: (tag, start, end of
        their start tag). Call after close()."""
        self._cut(0)
        return sorted(self._unclosed, key=lambda item: item[1])


def _without(markup: str, unclosed: list[tuple[str, int, int]]) -> str:
    """`markup` without the start tags of `unclosed` and the code of an unclosed script or
    style. With no end tag after an unclosed <script>, every later <script> is unclosed too:
    they all go in one reading."""
    cuts = [(start, end) for tag, start, end in unclosed if tag not in _RAW_TEXT]
    for tag in _RAW_TEXT:
        first = min((start for name, start, _ in unclosed if name == tag), default=-1)
        if first >= 0:
            for match in re.compile(rf"<{tag}\b[^>]*>", re.IGNORECASE).finditer(markup, first):
                found = _NEXT_TAG.search(markup, match.end())
                cuts.append((match.start(), found.start() if found else len(markup)))
    pieces: list[str] = []
    kept_from = 0
    for start, end in sorted(cuts):
        if start >= kept_from:  # not inside code already taken out
            pieces.append(markup[kept_from:start])
            kept_from = end
    pieces.append(markup[kept_from:])
    return "".join(pieces)


def html_to_text(markup: str) -> tuple[str, str, list[str]]:
    """Visible text, title, and warnings about markup that had to be guessed at."""
    warnings: list[str] = []
    for attempt in range(1, _MAX_PASSES + 1):
        parser = _VisibleText(markup)
        parser.feed(markup)
        parser.close()
        warnings += parser.warnings
        unclosed = parser.unclosed()
        names = ", ".join(dict.fromkeys(f"<{tag}>" for tag, *_ in unclosed))
        if unclosed and attempt == _MAX_PASSES:
            warnings.append(f"unclosed {names} (end tag missing): text after it may be lost")
        if not unclosed or attempt == _MAX_PASSES:
            break
        warnings.append(f"unclosed {names} (end tag missing): the text after it is kept")
        markup = _without(markup, unclosed)
    # Source line breaks inside a paragraph are layout, not structure.
    paragraphs = ("".join(parser.parts)).split("\n\n")
    text = "\n\n".join(" ".join(p.split()) for p in paragraphs if p.strip())
    return text, " ".join(parser.title.split()), list(dict.fromkeys(warnings))


@register_reader("html")
def open_html(request: ReadRequest) -> ReadResult:
    return read_html(request.path, request.data)


def read_html(path: Path, data: bytes | None = None) -> ReadResult:
    decoded = decode(path.read_bytes() if data is None else data)
    text, title, warnings = html_to_text(decoded.text)
    return text_to_result(text, "html", title, decoded.warnings + warnings)
