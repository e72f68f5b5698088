"""Rows of a table (an Excel sheet, a CSV file) as citable text: one `header: value` line per
filled cell, a blank line between rows, and pages of about 3,000 characters cut at row ends.

A retrieved passage then carries its column names with it ("Region: North", "Growth: 12%"),
which a bare "North | 12%" row would lose once it is cut away from the header row.

Rows may come sparse ({column: text} of the filled cells, as the XLSX reader gives them) or
dense (a list, as CSV gives them); either way a row costs its filled cells, not its width: a
row with a cell in A and one in XFD names two columns, not 16,384. Columns past MAX_COLUMNS
(Excel's XFD) and cells past MAX_CELL_CHARS are cut, and a table stops at the writer's
character budget, each with a warning.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Iterator, Mapping, Sequence
from itertools import chain, islice

from ingest.chunking import MAX_DOCUMENT_CHARS
from ingest.normalize import normalize_text
from ingest.readers.text import SYNTHETIC_PAGE_CHARS
from ingest.records import Page

# (row number as the user sees it, its cells as text: a list with "" for empty, or {column: text})
Row = tuple[int, Sequence[str] | Mapping[int, str]]
Cells = dict[int, str]  # 0-based column -> text of the filled cells, in column order

MAX_COLUMNS = 16_384  # Excel's last column, XFD: cells further right are left out
MAX_CELL_CHARS = 32_767  # Excel's own limit for one cell: a longer field (one 100 MB CSV field) is cut

# A title or note often stands above the table ("Budget 2024" in A1, the header in row 3):
# rows with one filled cell among the first few are that preamble when a wider row follows.
_HEADER_SEARCH = 10
# Cells that are numbers or dates are data, not column names.
_NOT_A_NAME = re.compile(r"[-+]?[\d.,]+%?|\d{4}-\d\d-\d\d( \d\d:\d\d(:\d\d)?)?|TRUE|FALSE")


def column_letter(index: int) -> str:
    """Excel's name of the 0-based column `index`: A, B, ..., Z, AA, AB, ..."""
    letters = ""
    index += 1
    while index:
        index, rest = divmod(index - 1, 26)
        letters = chr(ord("A") + rest) + letters
    return letters


def looks_like_header(cells: Sequence[str] | Mapping[int, str]) -> bool:
    filled = [c for c in (cells.values() if isinstance(cells, Mapping) else cells) if c]
    return bool(filled) and not any(_NOT_A_NAME.fullmatch(c) for c in filled)


def row_text(headers: Mapping[int, str], cells: Cells) -> str:
    """A row's filled cells as `header: value` lines; a column without a header is named by its letter."""
    return "\n".join(f"{headers.get(i) or column_letter(i)}: {cell}" for i, cell in cells.items())


def _sparse(cells: Sequence[str] | Mapping[int, str]) -> Cells:
    if isinstance(cells, Mapping):
        return {i: c for i, c in sorted(cells.items()) if c}
    return {i: c for i, c in enumerate(cells) if c}


class SheetWriter:
    """Writes tables into pages numbered across all of them; knows whether any was split and
    stops once the chunker's limit for one document is passed (the chunker warns of the cut)."""

    def __init__(self, page_chars: int = SYNTHETIC_PAGE_CHARS, max_chars: int | None = None) -> None:
        self.page_chars = page_chars
        self.max_chars = MAX_DOCUMENT_CHARS if max_chars is None else max_chars  # read now: a test may lower it
        self.pages: list[Page] = []
        self.split = False
        self.warnings: list[str] = []
        self._chars = 0

    @property
    def full(self) -> bool:
        return self._chars > self.max_chars

    def add_sheet(self, name: str, rows: Iterable[Row], name_single_page: bool = True) -> None:
        """One table's pages: "Sheet: name" heads the page (or "Sheet: name (rows 12-40)" each
        page of a split table; a single page of a CSV file needs no name). An empty table
        still gets its page, so page numbers stay sheet numbers."""
        chunks = list(self._row_chunks(rows, name))
        if not chunks:
            self.pages.append(Page(len(self.pages) + 1, ""))
            return
        pages = self._paged(chunks)
        if len(pages) > 1:
            self.split = True
        for first, last, text in pages:
            head = f"Sheet: {name} (rows {first}-{last})" if len(pages) > 1 else f"Sheet: {name}"
            body = f"{head}\n\n{text}" if len(pages) > 1 or name_single_page else text
            self.pages.append(Page(len(self.pages) + 1, body))

    def warn(self, warning: str) -> None:
        if warning not in self.warnings:
            self.warnings.append(warning)

    def _filled(self, name: str, rows: Iterable[Row]) -> Iterator[tuple[int, Cells]]:
        for number, given in rows:
            cells = _sparse(given)
            if cells and max(cells) >= MAX_COLUMNS:
                self.warn(f"sheet {name}: cells right of column {column_letter(MAX_COLUMNS - 1)} are left out")
                cells = {i: c for i, c in cells.items() if i < MAX_COLUMNS}
            for i, cell in cells.items():
                if len(cell) > MAX_CELL_CHARS:
                    self.warn(
                        f"sheet {name}: a cell of more than {MAX_CELL_CHARS:,} characters (row {number}) is cut there"
                    )
                    cells[i] = cell[:MAX_CELL_CHARS]
            if cells:
                yield number, cells

    def _row_chunks(self, rows: Iterable[Row], name: str = "") -> Iterator[tuple[int, str]]:
        """(row number, text) of the preamble lines and each data row, in order."""
        filled = self._filled(name, rows)
        start = list(islice(filled, _HEADER_SEARCH))
        at = next((i for i, (_, cells) in enumerate(start) if len(cells) > 1), 0)
        for number, cells in start[:at]:
            yield number, normalize_text(" ".join(cells.values()))
        headers: Cells = {}
        data = start[at:]
        if len(data) > 1 and looks_like_header(data[0][1]):
            headers, data = data[0][1], data[1:]
        # else the first row is data too, and columns are named by their letter
        for number, cells in chain(data, filled):
            text = normalize_text(row_text(headers, cells))
            if text:
                yield number, text
                self._chars += len(text)
                if self.full:
                    return

    def _paged(self, chunks: list[tuple[int, str]]) -> list[tuple[int, int, str]]:
        """(first row, last row, text) of each page, cut at row ends."""
        pages: list[tuple[int, int, str]] = []
        current: list[tuple[int, str]] = []
        length = 0
        for number, text in chunks:
            if current and length + len(text) > self.page_chars:
                pages.append((current[0][0], current[-1][0], "\n\n".join(t for _, t in current)))
                current, length = [], 0
            current.append((number, text))
            length += len(text) + 2
        pages.append((current[0][0], current[-1][0], "\n\n".join(t for _, t in current)))
        return pages
