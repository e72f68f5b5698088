"""Readers turn a file into pages of normalized text, picked by content (not by name).

`open_document` gives a stream whose pages can be consumed while later pages are still
being extracted; `read_document` is the same, collected.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Protocol

from ..errors import EmptyDocument
from ..records import Page, ReadResult
from ..sniff import detect_format
from .docx import read_docx
from .html import read_html
from .pdf import PdfStream
from .text import TextStream

__all__ = ["DocumentStream", "finish_result", "open_document", "read_document"]


class DocumentStream(Protocol):
    format: str
    title: str
    synthetic_pages: bool

    def pages(self) -> Iterator[Page]: ...

    @property
    def warnings(self) -> list[str]: ...


class _Whole:
    """A format read in one go (text, HTML, DOCX are fast) behind the stream interface."""

    def __init__(self, result: ReadResult) -> None:
        self._result = result
        self.format = result.format
        self.title = result.title
        self.synthetic_pages = result.synthetic_pages
        self.warnings = result.warnings

    def pages(self) -> Iterator[Page]:
        yield from self._result.pages


def open_document(path: Path, password: str | None = None, data: bytes | None = None) -> DocumentStream:
    """Read `data`, the bytes of the file `path` (read from it when not given): the caller that
    hashed those bytes knows the text comes from exactly them."""
    data = path.read_bytes() if data is None else data
    fmt = detect_format(path, data)
    if fmt == "pdf":
        return PdfStream(path, password, data)
    if fmt == "docx":
        return _Whole(read_docx(path, data))
    if fmt == "html":
        return _Whole(read_html(path, data))
    return TextStream(data, "markdown" if path.suffix.lower() in (".md", ".markdown") else "text")


def finish_result(stream: DocumentStream, pages: list[Page], path: Path) -> ReadResult:
    """The ReadResult of a fully consumed stream; refuses documents with no text at all."""
    if not any(page.text.strip() for page in pages):
        if isinstance(stream, PdfStream):
            raise stream.no_text_error()
        raise EmptyDocument("no text in the file")
    title = stream.title or _first_line_title(stream.format, pages) or path.stem
    return ReadResult(stream.format, pages, title, stream.synthetic_pages, list(stream.warnings))


def read_document(path: Path, password: str | None = None) -> ReadResult:
    stream = open_document(path, password)
    return finish_result(stream, list(stream.pages()), path)


def _first_line_title(fmt: str, pages: list[Page]) -> str:
    if fmt in ("pdf", "docx"):
        return ""  # first lines of PDFs are often running heads; the file name is the safer title
    first = pages[0].text.strip().split("\n", 1)[0].strip()
    return first if 3 <= len(first) <= 120 else ""
