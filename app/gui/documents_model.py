"""The library pane's table: every document as one row of prepared cells, filtered and sorted here.

A QStandardItemModel costs five items a row and rebuilds them all on every refresh (0.45 s of
frozen window at 10,000 documents, tests/bench/bench_library_pane.py); a proxy filtering this
model would call data() from C++ for every cell at each keystroke. So the rows are plain tuples
made once per refresh, the filter is a substring test over each row's lower-cased text, and
the view only asks for the cells it shows.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from PySide6.QtCore import QAbstractTableModel, QModelIndex, Qt

DOC_ID = Qt.UserRole + 1
PATH = Qt.UserRole + 2
PROGRESS = Qt.UserRole + 3  # the status cell's fraction done (0..1) while a file is read, else None
TITLE, FORMAT, PAGES, STATUS, ADDED = range(5)
_DIGIT_RUNS = re.compile(r"(\d{1,30})")  # bounded: int() refuses thousands of digits


def natural_key(text: str) -> tuple:
    """Text ordered as people number things: "Chapter 2" before "Chapter 10", case ignored.
    Split on digit runs, the text and the numbers alternate, so like always meets like."""
    parts = _DIGIT_RUNS.split(text.casefold())
    return tuple(int(part) if at % 2 else part for at, part in enumerate(parts))


@dataclass
class DocumentLine:
    doc_id: str
    path: str
    cells: list[str]  # title, format, pages, status, added, as shown
    pages: int
    tooltip: str
    progress: float | None = None  # fraction done while it is being read, embedded

    def haystack(self) -> str:
        return "\t".join(self.cells).casefold()


class DocumentsModel(QAbstractTableModel):
    def __init__(self, headers: list[str], parent=None) -> None:
        super().__init__(parent)
        self._headers = headers
        self._lines: list[DocumentLine] = []  # every document, in the current sort order
        self._haystacks: list[str] = []
        self._shown: list[int] = []  # indexes into _lines that pass the filter
        self._filter = ""
        self._sort: tuple[int, Qt.SortOrder] | None = None
        self._row_of_path: dict[str, int] = {}  # path -> index into _lines
        self._keys: dict[str, tuple] = {}  # cell text -> its natural_key, for the sorted column
        self._keys_column = -1

    # -- content -----------------------------------------------------------------------
    def set_lines(self, lines: list[DocumentLine]) -> None:
        self.beginResetModel()
        self._lines = lines
        self._order()
        self._select()
        self.endResetModel()

    def set_filter(self, text: str) -> None:
        self.beginResetModel()
        self._filter = text.casefold()
        self._select()
        self.endResetModel()

    def set_status(self, path: str, text: str, progress: float | None = None) -> bool:
        """Show `text` (and a bar at `progress`, 0..1) as the status of the document at `path`;
        False if no row has that path."""
        at = self._row_of_path.get(path)
        if at is None:
            return False
        line = self._lines[at]
        line.cells[STATUS], line.progress = text, progress
        self._haystacks[at] = line.haystack()
        try:
            row = self._shown.index(at)  # at most the rows shown: a progress update is rare
        except ValueError:
            return True
        cell = self.index(row, STATUS)
        self.dataChanged.emit(cell, cell, [Qt.DisplayRole, PROGRESS])
        return True

    def line(self, row: int) -> DocumentLine:
        return self._lines[self._shown[row]]

    def status_of(self, doc_id: str) -> str:
        """The status shown for a document, whether or not the filter shows its row."""
        return next((line.cells[STATUS] for line in self._lines if line.doc_id == doc_id), "")

    def row_of(self, doc_id: str) -> int | None:
        for row, at in enumerate(self._shown):
            if self._lines[at].doc_id == doc_id:
                return row
        return None

    # -- Qt's side ---------------------------------------------------------------------
    def rowCount(self, parent: QModelIndex = QModelIndex()) -> int:  # noqa: B008 - Qt's signature
        return 0 if parent.isValid() else len(self._shown)

    def columnCount(self, parent: QModelIndex = QModelIndex()) -> int:  # noqa: B008
        return 0 if parent.isValid() else len(self._headers)

    def headerData(self, section: int, orientation: Qt.Orientation, role: int = Qt.DisplayRole):
        if orientation == Qt.Horizontal and role == Qt.DisplayRole and 0 <= section < len(self._headers):
            return self._headers[section]
        return None

    def data(self, index: QModelIndex, role: int = Qt.DisplayRole):
        if not index.isValid() or index.row() >= len(self._shown):
            return None
        line = self._lines[self._shown[index.row()]]
        if role == Qt.DisplayRole:
            return line.cells[index.column()]
        if role == Qt.ToolTipRole:
            return line.tooltip
        if role == DOC_ID:
            return line.doc_id
        if role == PATH:
            return line.path
        if role == PROGRESS and index.column() == STATUS:
            return line.progress
        if role == Qt.TextAlignmentRole and index.column() == PAGES:
            return int(Qt.AlignRight | Qt.AlignVCenter)
        return None

    def sort(self, column: int, order: Qt.SortOrder = Qt.AscendingOrder) -> None:
        # A reset, not a layout change: the pane keeps its selection by document id across it.
        self.beginResetModel()
        self._sort = (column, order)
        self._order()
        self._select()
        self.endResetModel()

    # -- the filter and the order ------------------------------------------------------
    def _order(self) -> None:
        if self._sort is not None:
            column, order = self._sort
            if column == PAGES:
                key = lambda line: line.pages  # noqa: E731 - numbers, not their text
            else:  # the keys of the last order are kept: a refresh every few seconds sorts the same titles
                known = self._keys if self._keys_column == column else {}
                keys = {text: known.get(text) or natural_key(text) for text in (ln.cells[column] for ln in self._lines)}
                self._keys, self._keys_column = keys, column
                key = lambda line: keys[line.cells[column]]  # noqa: E731
            self._lines.sort(key=key, reverse=order == Qt.DescendingOrder)
        self._haystacks = [line.haystack() for line in self._lines]
        self._row_of_path = {line.path: at for at, line in enumerate(self._lines)}

    def _select(self) -> None:
        needle = self._filter
        if not needle:
            self._shown = list(range(len(self._lines)))
        else:
            self._shown = [at for at, hay in enumerate(self._haystacks) if needle in hay]
