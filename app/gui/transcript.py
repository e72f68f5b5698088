"""The chat transcript as HTML, one message at a time.

Each answer's Markdown is rendered in a document of its own and only Qt's balanced HTML of it
goes into the transcript, so whatever a model writes (a code block it never closes, raw HTML,
stray tags, a lone `*`) ends with its message: the Sources line under it and later turns are
never read as its Markdown. Raw HTML is shown as text (Markdown without HTML). Citations — the
one pattern, engine.citations.CITATION — are linked after rendering, in the rendered text, so
they are links anywhere: in a paragraph, a list, a table, an unclosed code block."""

from __future__ import annotations

import html
import re

from PySide6.QtCore import QCoreApplication
from PySide6.QtGui import QTextCharFormat, QTextCursor, QTextDocument

from engine.citations import CITATION, NUMBER, shown_sources

MARKDOWN = QTextDocument.MarkdownDialectGitHub | QTextDocument.MarkdownNoHTML
_BODY = re.compile(r"<body[^>]*>\n?(.*)</body>", re.S)
_FIRST_PARAGRAPH = re.compile(r"^<p( [^>]*)?>")


def _utf16(text: str, index: int) -> int:
    """A Python index into `text` as Qt counts it (UTF-16 units: an emoji is two)."""
    return len(text[:index].encode("utf-16-le")) // 2


def _citation_spans(text: str):
    """(start, end, number) of each link in `text`: `[n]` is one link, `[1, 2]` one per number."""
    for match in CITATION.finditer(text):
        numbers = match.group(1)
        if numbers.isdigit():
            yield match.start(), match.end(), numbers
            continue
        for n in NUMBER.finditer(numbers):
            yield match.start(1) + n.start(), match.start(1) + n.end(), n.group()


def link_citations(document: QTextDocument, message: int) -> None:
    """Every citation in `document` a link the window opens: `cite:{message}/{n}`."""
    cursor = QTextCursor(document)
    block = document.begin()
    while block.isValid():
        text = block.text()
        for start, end, n in _citation_spans(text):
            cursor.setPosition(block.position() + _utf16(text, start))
            cursor.setPosition(block.position() + _utf16(text, end), QTextCursor.KeepAnchor)
            link = QTextCharFormat()
            link.setAnchor(True)
            link.setAnchorHref(f"cite:{message}/{n}")
            link.setFontUnderline(True)
            cursor.mergeCharFormat(link)
        block = block.next()


def answer_document(text: str, message: int) -> QTextDocument:
    """An answer's Markdown on its own, citations linked."""
    document = QTextDocument()
    document.setMarkdown(text, MARKDOWN)
    link_citations(document, message)
    return document


def body_html(document: QTextDocument) -> str:
    """A document's blocks as HTML, without its <html>, <head> and <body>."""
    found = _BODY.search(document.toHtml())
    return found.group(1) if found else ""


def _labelled(label: str, body: str) -> str:
    """`label` in bold before the message: in its first paragraph, or above a code block, a
    list or a heading it begins with."""
    bold = f"<b>{html.escape(label)}:</b> "
    first = _FIRST_PARAGRAPH.match(body)
    if first:
        return body[: first.end()] + bold + body[first.end() :]
    return f"<p>{bold}</p>{body}"


def user_html(text: str, you: str) -> str:
    """The user's question, as typed: no Markdown, no HTML."""
    return f"<p><b>{html.escape(you)}:</b> " + html.escape(text.strip()).replace("\n", "<br />") + "</p>"


def shown_page_label(source) -> str:
    """The page a citation opens in the interface language: "p. 3", "第 3 页"; "~3" where the
    pages were made up for a format without pages."""
    page = f"~{source.page}" if source.synthetic_pages else str(source.page)
    return QCoreApplication.translate("Pages", "p. %1").replace("%1", page)


def shown_label(source) -> str:
    """"[1] Title, p. 3" in the interface language."""
    return f"[{source.n}] {source.name}, {shown_page_label(source)}"


def sources_html(sources, message: int, label: str) -> str:
    """The line under an answer: each shown source a link to its cited page."""
    links = " · ".join(
        f'<a href="cite:{message}/{s.n}">[{s.n}] {html.escape(html.unescape(s.name))}, {html.escape(shown_page_label(s))}</a>'
        for s in shown_sources(sources)
    )
    return f"<p><i>{html.escape(label)}:</i> {links}</p>" if links else ""


def reasoning_html(message: dict, index: int) -> str:
    """A thinking model's reasoning above its answer: "Thinking…" while it thinks, then a
    collapsed "▸ Thought for 12 s" link that shows it (as plain text: it is never Markdown)."""
    reasoning = message.get("reasoning", "")
    if not reasoning.strip():
        return ""
    if message.get("pending") and not message["text"]:
        words = len(reasoning.split())
        label = QCoreApplication.translate("Transcript", "Thinking… (%1 words)").replace("%1", str(words))
        return f'<p style="color:#777"><i>{html.escape(label)}</i></p>'
    seconds = message.get("thinking_ms", 0) / 1000
    if seconds:
        label = QCoreApplication.translate("Transcript", "Thought for %1 s").replace("%1", f"{seconds:.0f}")
    else:
        label = QCoreApplication.translate("Transcript", "Thoughts")
    shown = message.get("show_reasoning")
    link = f'<p><a href="think:{index}" style="color:#777">{"▾" if shown else "▸"} {html.escape(label)}</a></p>'
    if not shown:
        return link
    body = html.escape(reasoning.strip()).replace("\n", "<br />")
    return link + f'<p style="color:#666; margin-left:16px">{body}</p>'


def answer_html(message: dict, index: int, sources_label: str) -> str:
    """An answer with its Sources line (once it is written), a thinking model's reasoning collapsed above it."""
    pending = message.get("pending")
    if pending and not message["text"] and message.get("waiting"):
        return f"<p><b>DocDesk:</b> <i>{html.escape(message['waiting'])}</i></p>"
    thought = reasoning_html(message, index)
    text = message["text"] or ("…" if pending else "")
    out = thought + _labelled("DocDesk", body_html(answer_document(text, index)))
    if not pending:
        if message.get("whole"):
            note = QCoreApplication.translate("Transcript", "The selected documents fit: the model read them whole.")
            out += f'<p style="color:#777"><i>{html.escape(note)}</i></p>'
        out += sources_html(message.get("sources", []), index, sources_label)
    return out


class TranscriptRenderer:
    """Each message's HTML, kept until the message changes: while an answer streams in, only
    that answer is rendered again."""

    def __init__(self, you: str, sources: str) -> None:
        self.you, self.sources = you, sources
        self._cache: dict[int, tuple[tuple, str]] = {}

    def message_html(self, message: dict, index: int) -> str:
        sources = tuple((s.n, s.name, s.page_label, s.cited) for s in message.get("sources", []))
        thought = (len(message.get("reasoning", "")), message.get("show_reasoning"), message.get("thinking_ms"))
        state = (bool(message.get("pending")), message.get("waiting"), message.get("whole"))
        key = (message["role"], message["text"], *state, thought, sources)
        cached = self._cache.get(index)
        if cached and cached[0] == key:
            return cached[1]
        if message["role"] == "user":
            rendered = user_html(message["text"], self.you)
        else:
            rendered = answer_html(message, index, self.sources)
        self._cache[index] = (key, rendered)
        return rendered
