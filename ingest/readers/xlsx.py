"""XLSX with openpyxl: each worksheet a page of `header: value` rows (several when it is long).

Formulas give the values Excel cached when it last saved the file (data_only); a formula
without one is left out rather than shown as "=SUM(B2:B9)". openpyxl reads a copy of the
container whose parts were checked against the input limits (zipguard), in read-only mode,
so a sheet is streamed row by row, never held whole.

Rows are read sparse, as the sheet's XML holds them: openpyxl's own row iteration yields an
empty row for every missing row number (a sheet whose one row is `<row r="1000000000000">`
would be walked for days) and a list as wide as the last filled cell (16,384 entries for a cell
in XFD). Here its sheet parser (openpyxl.worksheet._reader.WorkSheetParser, as its read-only
sheets use it) gives the rows that exist and their filled cells; rows past Excel's last one
(1,048,576) are left out with a warning, and the text stops at the file's budget (budget.py).
"""

from __future__ import annotations

import datetime as dt
import warnings
from collections.abc import Iterator
from pathlib import Path

from ingest.errors import DamagedDocument, IngestError
from ingest.readers.budget import text_budget
from ingest.readers.registry import ReadRequest, register_reader
from ingest.readers.sheet_pages import Row, SheetWriter
from ingest.readers.zipguard import EXCEL, checked_copy
from ingest.records import ReadResult

# 15 significant digits is what Excel shows: 0.1 + 0.2 stored as 0.30000000000000004 reads 0.3.
_DIGITS = 15
MAX_ROW = 1_048_576  # Excel's last row


@register_reader("xlsx")
def open_xlsx(request: ReadRequest) -> ReadResult:
    return read_xlsx(request.path, request.data)


def read_xlsx(path: Path, data: bytes | None = None) -> ReadResult:
    data = path.read_bytes() if data is None else data
    try:
        package = checked_copy(data, package=EXCEL)
        import openpyxl

        with warnings.catch_warnings():  # "no default style", unsupported extensions: not the user's concern
            warnings.simplefilter("ignore")
            workbook = openpyxl.load_workbook(package, read_only=True, data_only=True)
            try:
                writer = SheetWriter(max_chars=text_budget(len(data)))
                for sheet in workbook.worksheets:
                    if writer.full:
                        break
                    writer.add_sheet(sheet.title, _rows(sheet, writer))
                title = " ".join((workbook.properties.title or "").split())
            finally:
                workbook.close()
    except IngestError:  # over the input limits, or damaged as zipguard found it
        raise
    except Exception as exc:  # zipfile and openpyxl raise KeyError, BadZipFile, lxml errors ...
        raise DamagedDocument(f"damaged Excel workbook: {type(exc).__name__}: {exc}") from exc
    return ReadResult("xlsx", writer.pages, title=title, synthetic_pages=writer.split, warnings=writer.warnings)


def _rows(sheet, writer: SheetWriter) -> Iterator[Row]:
    """The sheet's rows that hold cells, each as {column: text} of its filled cells."""
    from openpyxl.worksheet._reader import WorkSheetParser

    book = sheet.parent
    with sheet._get_source() as source:
        parser = WorkSheetParser(
            source,
            sheet._shared_strings,
            data_only=book.data_only,
            epoch=book.epoch,
            date_formats=book._date_formats,
            timedelta_formats=book._timedelta_formats,
        )
        for number, cells in parser.parse():
            if number > MAX_ROW:
                writer.warn(f"sheet {sheet.title}: rows numbered past {MAX_ROW:,} (Excel's last row) are left out")
                continue
            filled = {cell["column"] - 1: cell_text(cell["value"]) for cell in cells}
            yield number, filled


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
