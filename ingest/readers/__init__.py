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
from .csv_table import read_csv
from .docx import read_docx
from .html import read_html
from .pdf import PdfStream
from .pptx import read_pptx
from .text import TextStream
from .xlsx import read_xlsx

__all__ = ["DocumentStream", "finish_result", "open_document", "read_document"]


class DocumentStream(Protocol):
    format: str
    title: str
    synthetic_pages: bool

    def pages(self) -> Iterator[Page]: ...

    @property
    def warnings(self) -> list[str]: ...


class _Whole:
    """A format read in one go (HTML, DOCX, PPTX, XLSX, CSV are fast) behind the stream interface."""

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
    if fmt in _WHOLE_READERS:
        return _Whole(_WHOLE_READERS[fmt](path, data))
    if fmt == "csv":
        table = read_csv(path, data)
        return _Whole(table) if table is not None else TextStream(data, "text")  # not tabular after all
    if fmt in ("epub", "odt", "ods", "odp", "image"):
        return _open_lazily(fmt, path, data)
    return TextStream(data, "markdown" if path.suffix.lower() in (".md", ".markdown") else "text")


_WHOLE_READERS = {"docx": read_docx, "html": read_html, "pptx": read_pptx, "xlsx": read_xlsx}


def _open_lazily(fmt: str, path: Path, data: bytes) -> DocumentStream:
    """Readers whose modules are imported only when such a file comes (and which are written
    beside this one: importing them here keeps `ingest.readers` importable without them)."""
    if fmt == "epub":
        from .epub import read_epub

        return _Whole(read_epub(path, data))
    if fmt == "image":
        from .image import ImageStream

        return ImageStream(path, data)
    from .odf import read_odf

    return _Whole(read_odf(path, data, fmt))


def finish_result(stream: DocumentStream, pages: list[Page], path: Path) -> ReadResult:
    """The ReadResult of a fully consumed stream; refuses documents with no text at all."""
    if not any(page.text.strip() for page in pages):
        if hasattr(stream, "no_text_error"):  # PDFs and images say why: no text layer, nothing for OCR
            raise stream.no_text_error()
        raise EmptyDocument("no text in the file")
    title = stream.title or _first_line_title(stream.format, pages) or path.stem
    return ReadResult(stream.format, pages, title, stream.synthetic_pages, list(stream.warnings))


def read_document(path: Path, password: str | None = None) -> ReadResult:
    stream = open_document(path, password)
    return finish_result(stream, list(stream.pages()), path)


def _first_line_title(fmt: str, pages: list[Page]) -> str:
    if fmt in ("pdf", "docx", "pptx", "xlsx", "csv", "ods", "odp", "epub", "image"):
        # first lines of PDFs are often running heads, of sheets "Sheet: ..." or a header row;
        # their readers found what title there is, else the file name is the safer title
        return ""
    first = pages[0].text.strip().split("\n", 1)[0].strip()
    return first if 3 <= len(first) <= 120 else ""
