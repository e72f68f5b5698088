"""OpenDocument text, spreadsheets and presentations (ODT, ODS, ODP), read from content.xml.

content.xml is parsed while it is decompressed (a pull parser); each paragraph, table row or
slide is turned into text when it ends and then freed, so a large file costs its text, not
its tree, and a sheet that repeats an empty row a million times costs one row.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from pathlib import Path

from lxml import etree

from ingest.errors import DamagedDocument, EmptyDocument, EncryptedDocument, IngestError
from ingest.normalize import normalize_text
from ingest.readers.budget import text_budget
from ingest.readers.registry import ReadRequest, register_reader
from ingest.readers.sheet_pages import Row, SheetWriter
from ingest.readers.text import paginate
from ingest.readers.zip_package import ZipPackage
from ingest.readers.zipguard import OPENDOCUMENT
from ingest.records import Page, ReadResult

_NS = {
    "office": "urn:oasis:names:tc:opendocument:xmlns:office:1.0",
    "text": "urn:oasis:names:tc:opendocument:xmlns:text:1.0",
    "table": "urn:oasis:names:tc:opendocument:xmlns:table:1.0",
    "draw": "urn:oasis:names:tc:opendocument:xmlns:drawing:1.0",
    "presentation": "urn:oasis:names:tc:opendocument:xmlns:presentation:1.0",
    "svg": "urn:oasis:names:tc:opendocument:xmlns:svg-compatible:1.0",
    "dc": "http://purl.org/dc/elements/1.1/",
    "manifest": "urn:oasis:names:tc:opendocument:xmlns:manifest:1.0",
}


def _q(name: str) -> str:
    prefix, local = name.split(":")
    return f"{{{_NS[prefix]}}}{local}"


P, H, SPACE, TAB, LINE_BREAK = _q("text:p"), _q("text:h"), _q("text:s"), _q("text:tab"), _q("text:line-break")
SOFT_PAGE_BREAK, NOTE_BODY = _q("text:soft-page-break"), _q("text:note-body")
LIST, LIST_ITEM, LIST_HEADER = _q("text:list"), _q("text:list-item"), _q("text:list-header")
TABLE, ROW, CELL = _q("table:table"), _q("table:table-row"), _q("table:table-cell")
COVERED = _q("table:covered-table-cell")
SLIDE, NOTES = _q("draw:page"), _q("presentation:notes")
# Not the document's text: footnote numbers (the note itself is kept), comments, deleted text
# kept for change tracking, image descriptions.
_SKIPPED = {_q(n) for n in ("text:note-citation", "office:annotation", "text:tracked-changes", "svg:title", "svg:desc")}
_SPACES = re.compile(r"[ \t\r\n]+")  # ODF collapses whitespace in text like HTML does
MAX_SPACES = 100  # <text:s text:c="..."/> is a count; a hostile one must not cost memory
MAX_ROW_REPEATS = 1000  # a non-empty row repeated more often is kept this many times
MAX_COLUMNS = 1024  # cells further right are left out: rows are handed on as lists this wide at most


def _count(value: str | None, cap: int) -> int:
    try:
        return max(1, min(int(value or 1), cap))
    except ValueError:
        return 1


def _walk(element, parts: list[str]) -> None:
    if element.text:
        parts.append(_SPACES.sub(" ", element.text))
    for child in element:
        tag = child.tag
        if tag == SPACE:
            parts.append(" " * _count(child.get(_q("text:c")), MAX_SPACES))
        elif tag == TAB:
            parts.append("\t")
        elif tag == LINE_BREAK:
            parts.append("\n")
        elif tag == SOFT_PAGE_BREAK:
            parts.append("\f")
        elif tag == NOTE_BODY:
            parts.append(f" ({inline_text(child).strip()})")
        elif tag in (P, H):  # paragraphs inside a paragraph: text boxes, captions, notes
            parts.append(" ")
            _walk(child, parts)
            parts.append(" ")
        elif isinstance(tag, str) and tag not in _SKIPPED:
            _walk(child, parts)  # spans, links, fields; comments, PIs and entities have no text of their own
        if child.tail:
            parts.append(_SPACES.sub(" ", child.tail))


def inline_text(element) -> str:
    """The text of a paragraph (or cell) with spaces, tabs, line breaks and soft page breaks ("\\f")."""
    parts: list[str] = []
    _walk(element, parts)
    return "".join(parts).strip(" ")


def _bullet(depth: int) -> str:
    """A list item's mark, repeated once per level: leading spaces do not survive normalize_text."""
    return "- " * depth


def _row_text(row) -> str:
    cells = (" ".join(inline_text(cell).replace("\f", "").split()) for cell in row if cell.tag == CELL)
    return " | ".join(c for c in cells if c)


def _free(element) -> None:
    """Drop what was parsed up to `element`: it and its earlier siblings are text by now."""
    element.clear(keep_tail=False)
    parent = element.getparent()
    while parent is not None and element.getprevious() is not None:
        del parent[0]


class _Reader:
    """Called by `_parse` for each outermost unit (paragraph, row, slide) as it ends."""

    units: frozenset[str] = frozenset()
    synthetic = True

    def __init__(self, budget: int) -> None:
        self.budget = budget  # characters this file may give (budget.py): reading stops past it
        self.first_heading = ""
        self.warnings: list[str] = []
        self.produced = 0
        self.lists = 0  # depth of text:list elements open around the current unit

    def start(self, element) -> None:
        """An element that started outside every unit."""

    def unit(self, element) -> None: ...

    def outside(self, element) -> None:
        """An element that ended outside every unit."""

    def pages(self) -> list[Page]:
        raise NotImplementedError


def _parse(package: ZipPackage, reader: _Reader) -> None:
    parser = etree.XMLPullParser(
        events=("start", "end"), resolve_entities=False, no_network=True, huge_tree=False, load_dtd=False
    )
    depth = 0  # units open: a unit inside another one (a paragraph in a table cell) is part of it
    try:
        for chunk in package.chunks("content.xml"):
            parser.feed(chunk)
            for event, element in parser.read_events():
                inside = element.tag in reader.units
                if event == "start":
                    depth += inside
                    reader.lists += element.tag == LIST
                    if not depth:
                        reader.start(element)
                    continue
                reader.lists -= element.tag == LIST
                depth -= inside
                if depth:
                    continue
                reader.unit(element) if inside else reader.outside(element)
                if inside or element.tag in (LIST, LIST_ITEM, TABLE):
                    _free(element)
            if reader.produced > reader.budget:
                return  # past the file's budget: reading on costs time and memory for nothing
        parser.close()
    except etree.XMLSyntaxError as exc:
        raise DamagedDocument(f"damaged OpenDocument file: content.xml is not well-formed XML ({exc})") from exc


class _TextReader(_Reader):
    """ODT: headings, paragraphs, list items and table rows in order; pages at soft page breaks
    (where the word processor last laid out a page end) when the file has them."""

    units = frozenset({P, H, ROW, _q("text:tracked-changes")})

    def __init__(self, budget: int) -> None:
        super().__init__(budget)
        self.parts: list[str] = []

    def _add(self, text: str) -> None:
        self.parts.append(text)
        self.produced += len(text)

    def unit(self, element) -> None:
        if element.tag == ROW:
            self._add(_row_text(element))
        elif element.tag in (P, H):
            text = inline_text(element)
            if element.tag == H and not self.first_heading and text.strip():
                self.first_heading = " ".join(text.replace("\f", "").split())
            parent = element.getparent()
            if parent is not None and parent.tag in (LIST_ITEM, LIST_HEADER):
                text = _bullet(self.lists if parent.tag == LIST_ITEM else 0) + text.lstrip("\f")
            self._add(text)

    def outside(self, element) -> None:
        if element.tag == SOFT_PAGE_BREAK:
            self._add("\f")

    def pages(self) -> list[Page]:
        text = "\n\n".join(self.parts)
        if "\f" not in text:
            return paginate(normalize_text(text))
        self.synthetic = False
        pieces = [normalize_text(piece) for piece in text.split("\f")]
        while len(pieces) > 1 and not pieces[-1]:
            pieces.pop()  # a break at the very end opens no page
        return [Page(n, piece) for n, piece in enumerate(pieces, 1)]


def _cell_value(cell) -> str:
    """The typed value where there is one (the number, not how it is formatted), else the text."""
    kind = cell.get(_q("office:value-type"))
    value = None
    if kind in ("float", "percentage", "currency"):
        value = cell.get(_q("office:value"))
        if value and kind == "currency" and cell.get(_q("office:currency")):
            value = f"{value} {cell.get(_q('office:currency'))}"
    elif kind == "date":
        value = cell.get(_q("office:date-value"))
    elif kind == "boolean":
        value = cell.get(_q("office:boolean-value"))
    return value or " ".join(inline_text(cell).split())


class _SheetReader(_Reader):
    """ODS: each sheet's rows go to the SheetWriter XLSX and CSV use ("header: value" lines, a
    sheet a page or, when long, pages naming their rows). Rows are kept sparse (filled cells
    only) and a repeated row once with its count, so repeated empty rows and cells cost nothing."""

    units = frozenset({ROW})

    def __init__(self, budget: int) -> None:
        super().__init__(budget)
        self.writer = SheetWriter(max_chars=budget)
        self._sheet = ""
        self._row = 0  # rows of the sheet seen, repeated ones included
        self._rows: list[tuple[int, int, dict[int, str]]] = []  # (first row number, repeats, filled cells)

    def start(self, element) -> None:
        if element.tag == TABLE:
            self._sheet = element.get(_q("table:name"), "") or f"Sheet {len(self.writer.pages) + 1}"
            self._row, self._rows = 0, []

    def _warn(self, warning: str) -> None:
        if warning not in self.warnings:
            self.warnings.append(warning)

    def _cells(self, row) -> dict[int, str]:
        cells: dict[int, str] = {}
        column = 0
        for cell in row:
            if cell.tag not in (CELL, COVERED):
                continue
            repeats = _count(cell.get(_q("table:number-columns-repeated")), 1 << 30)
            value = _cell_value(cell) if cell.tag == CELL else ""
            if value:
                if column + repeats > MAX_COLUMNS:
                    self._warn(f"sheet {self._sheet}: cells right of column {MAX_COLUMNS} are left out")
                cells.update((c, value) for c in range(column, min(column + repeats, MAX_COLUMNS)))
            column += repeats
        return cells

    def unit(self, element) -> None:
        repeats = _count(element.get(_q("table:number-rows-repeated")), 1 << 30)
        cells = self._cells(element)
        if cells:
            if repeats > MAX_ROW_REPEATS:
                self._warn(f"sheet {self._sheet}: a row repeated {repeats} times is kept {MAX_ROW_REPEATS} times")
            self._rows.append((self._row + 1, min(repeats, MAX_ROW_REPEATS), cells))
            self.produced += sum(map(len, cells.values())) * min(repeats, MAX_ROW_REPEATS)
        self._row += repeats

    def _dense(self) -> Iterator[Row]:
        for first, repeats, cells in self._rows:
            for k in range(repeats):
                yield first + k, cells  # sparse: the writer names the filled cells only

    def outside(self, element) -> None:
        if element.tag == TABLE and not self.writer.full:
            self.writer.add_sheet(self._sheet, self._dense())
            self._rows = []

    def pages(self) -> list[Page]:
        if self._rows:  # reading stopped inside a sheet (the document's size limit)
            self.writer.add_sheet(self._sheet, self._dense())
        return self.writer.pages


class _SlideReader(_Reader):
    """ODP: a slide per page, the text of its shapes in order, then its speaker notes."""

    units = frozenset({SLIDE})
    synthetic = False

    def __init__(self, budget: int) -> None:
        super().__init__(budget)
        self.slides: list[str] = []

    def unit(self, element) -> None:
        shown: list[str] = []
        notes: list[str] = []
        for child in element:
            if child.tag == NOTES:
                _paragraphs(child, notes, 0)
            elif not self.first_heading and child.get(_q("presentation:class")) == "title":
                self.first_heading = " ".join(inline_text(child).split())
                _paragraphs(child, shown, 0)
            else:
                _paragraphs(child, shown, 0)
        text = "\n\n".join(shown) + ("\n\nNotes:\n" + "\n\n".join(notes) if notes else "")
        self.slides.append(normalize_text(text))
        self.produced += len(text)

    def pages(self) -> list[Page]:
        return [Page(n, text) for n, text in enumerate(self.slides, 1)]


def _paragraphs(element, out: list[str], lists: int) -> None:
    """The paragraphs, list items and table rows inside a shape, in order."""
    for child in element:
        if child.tag in (P, H):
            text = " ".join(inline_text(child).replace("\f", "").split())
            if text:
                out.append(_bullet(lists if element.tag == LIST_ITEM else 0) + text)
        elif child.tag == ROW:
            out.append(_row_text(child))
        elif isinstance(child.tag, str) and child.tag not in _SKIPPED:
            _paragraphs(child, out, lists + (child.tag == LIST))


_READERS = {"odt": _TextReader, "ods": _SheetReader, "odp": _SlideReader}


def _refuse_password(package: ZipPackage) -> None:
    if not package.has("META-INF/manifest.xml"):
        return
    for entry in package.xml("META-INF/manifest.xml").iter(_q("manifest:file-entry")):
        encrypted = entry.find(_q("manifest:encryption-data")) is not None
        if encrypted and entry.get(_q("manifest:full-path")) == "content.xml":
            raise EncryptedDocument(
                "password-protected OpenDocument file: DocDesk cannot open it (save a copy without one)"
            )


def _meta_title(package: ZipPackage) -> str:
    if not package.has("meta.xml"):
        return ""
    try:
        return " ".join((package.xml("meta.xml").findtext(f".//{_q('dc:title')}") or "").split())
    except DamagedDocument:
        return ""  # a broken meta.xml costs the title, not the text


@register_reader("odt", "ods", "odp")
def open_odf(request: ReadRequest) -> ReadResult:
    return read_odf(request.path, request.data, request.format)


def read_odf(path: Path, data: bytes, kind: str) -> ReadResult:
    """`kind` is "odt", "ods" or "odp" (what the container's mimetype said)."""
    package = ZipPackage(data, OPENDOCUMENT)
    _refuse_password(package)
    if not package.has("content.xml"):
        raise DamagedDocument("damaged OpenDocument file: content.xml (the document's text) is missing")
    reader = _READERS[kind](text_budget(len(data)))
    try:
        _parse(package, reader)
        pages = reader.pages()
    except IngestError:
        raise
    except Exception as exc:  # a structure no reader expects
        raise DamagedDocument(f"damaged OpenDocument file: {type(exc).__name__}: {exc}") from exc
    if not any(page.text for page in pages):
        raise EmptyDocument("no text in the file")
    title = _meta_title(package) or reader.first_heading
    warnings = reader.warnings + getattr(getattr(reader, "writer", None), "warnings", [])
    return ReadResult(kind, pages, title=title, synthetic_pages=reader.synthetic, warnings=warnings)
