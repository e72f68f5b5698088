"""XLSX with openpyxl: each worksheet a page of `header: value` rows (several when it is long).

Formulas give the values Excel cached when it last saved the file (data_only); a formula
without one is left out rather than shown as "=SUM(B2:B9)". openpyxl reads a copy of the
container whose parts were checked against the input limits (zipguard), in read-only mode,
so a sheet is streamed row by row, never held whole.
"""

from __future__ import annotations

import datetime as dt
import warnings
from collections.abc import Iterator
from pathlib import Path

from ..errors import DamagedDocument, IngestError
from ..records import ReadResult
from .registry import ReadRequest, register_reader
from .sheet_pages import Row, SheetWriter
from .zipguard import EXCEL, checked_copy

# 15 significant digits is what Excel shows: 0.1 + 0.2 stored as 0.30000000000000004 reads 0.3.
_DIGITS = 15


@register_reader("xlsx")
def open_xlsx(request: ReadRequest) -> ReadResult:
    return read_xlsx(request.path, request.data)


def read_xlsx(path: Path, data: bytes | None = None) -> ReadResult:
    try:
        package = checked_copy(path.read_bytes() if data is None else data, package=EXCEL)
        import openpyxl

        with warnings.catch_warnings():  # "no default style", unsupported extensions: not the user's concern
            warnings.simplefilter("ignore")
            workbook = openpyxl.load_workbook(package, read_only=True, data_only=True)
            try:
                writer = SheetWriter()
                for sheet in workbook.worksheets:
                    if writer.full:
                        break
                    writer.add_sheet(sheet.title, _rows(sheet))
                title = " ".join((workbook.properties.title or "").split())
            finally:
                workbook.close()
    except IngestError:  # over the input limits, or damaged as zipguard found it
        raise
    except Exception as exc:  # zipfile and openpyxl raise KeyError, BadZipFile, lxml errors ...
        raise DamagedDocument(f"damaged Excel workbook: {type(exc).__name__}: {exc}") from exc
    return ReadResult("xlsx", writer.pages, title=title, synthetic_pages=writer.split)


def _rows(sheet) -> Iterator[Row]:
    # The declared dimension can claim A1:XFD1048576 for a handful of cells; without it each
    # row is as wide as its last filled cell.
    sheet.reset_dimensions()
    for number, values in enumerate(sheet.iter_rows(values_only=True), start=1):
        yield number, [cell_text(value) for value in values]


def cell_text(value: object) -> str:
    """A cell's value as a person reads it: 2024-03-01, 1234.5, TRUE; "" for an empty cell."""
    if value is None:
        return ""
    if isinstance(value, bool):
        return "TRUE" if value else "FALSE"
    if isinstance(value, float):
        return format(value, f".{_DIGITS}g")
    if isinstance(value, dt.datetime):
        if value.time() == dt.time(0):
            return value.date().isoformat()
        return value.isoformat(" ", "seconds" if value.second else "minutes")
    if isinstance(value, dt.date | dt.time):
        return value.isoformat()
    return " ".join(str(value).split())
