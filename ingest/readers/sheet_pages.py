"""Rows of a table (an Excel sheet, a CSV file) as citable text: one `header: value` line per
filled cell, a blank line between rows, and pages of about 3,000 characters cut at row ends.

A retrieved passage then carries its column names with it ("Region: North", "Growth: 12%"),
which a bare "North | 12%" row would lose once it is cut away from the header row.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Iterator, Sequence
from itertools import chain, islice

from ..chunking import MAX_DOCUMENT_CHARS
from ..normalize import normalize_text
from ..records import Page
from .text import SYNTHETIC_PAGE_CHARS

Row = tuple[int, Sequence[str]]  # (row number as the user sees it, its cells as text; "" for empty)

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


def looks_like_header(cells: Sequence[str]) -> bool:
    filled = [c for c in cells if c]
    return bool(filled) and not any(_NOT_A_NAME.fullmatch(c) for c in filled)


def row_text(headers: Sequence[str], cells: Sequence[str]) -> str:
    """A row's filled cells as `header: value` lines; a column without a header is named by its letter."""
    names = [(headers[i] if i < len(headers) else "") or column_letter(i) for i in range(len(cells))]
    return "\n".join(f"{name}: {cell}" for name, cell in zip(names, cells, strict=True) if cell)


def _filled(rows: Iterable[Row]) -> Iterator[Row]:
    for number, cells in rows:
        if any(cells):
            yield number, cells


class SheetWriter:
    """Writes tables into pages numbered across all of them; knows whether any was split and
    stops once the chunker's limit for one document is passed (the chunker warns of the cut)."""

    def __init__(self, page_chars: int = SYNTHETIC_PAGE_CHARS, max_chars: int | None = None) -> None:
        self.page_chars = page_chars
        self.max_chars = MAX_DOCUMENT_CHARS if max_chars is None else max_chars  # read now: a test may lower it
        self.pages: list[Page] = []
        self.split = False
        self._chars = 0

    @property
    def full(self) -> bool:
        return self._chars > self.max_chars

    def add_sheet(self, name: str, rows: Iterable[Row], name_single_page: bool = True) -> None:
        """One table's pages: "Sheet: name" heads the page (or "Sheet: name (rows 12-40)" each
        page of a split table; a single page of a CSV file needs no name). An empty table
        still gets its page, so page numbers stay sheet numbers."""
        chunks = list(self._row_chunks(rows))
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

    def _row_chunks(self, rows: Iterable[Row]) -> Iterator[tuple[int, str]]:
        """(row number, text) of the preamble lines and each data row, in order."""
        filled = _filled(rows)
        start = list(islice(filled, _HEADER_SEARCH))
        at = next((i for i, (_, cells) in enumerate(start) if sum(1 for c in cells if c) > 1), 0)
        for number, cells in start[:at]:
            yield number, normalize_text(" ".join(c for c in cells if c))
        headers: Sequence[str] = []
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
