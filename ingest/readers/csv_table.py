"""CSV and TSV as a table: the rows of one sheet in `header: value` lines, on pages cut at row ends.

The encoding is found as for any text file; the delimiter by csv.Sniffer (a .tsv is tab
separated). Text that does not parse as a table (a note saved as .csv, one value a line)
returns None, and the caller reads it as plain text.
"""

from __future__ import annotations

import csv
import io
from collections import Counter
from collections.abc import Iterator
from pathlib import Path

from ingest.readers.budget import text_budget
from ingest.readers.registry import ReadRequest, register_reader
from ingest.readers.sheet_pages import MAX_CELL_CHARS, Row, SheetWriter
from ingest.readers.text import TextStream, decode
from ingest.records import ReadResult

_SNIFF_CHARS = 64 * 1024  # csv.Sniffer's regular expressions are slow on long samples
_DELIMITERS = ",;\t|"
_SAMPLE_ROWS = 50
# Most rows of a table have the same number of cells; a few short ones (a comment, a total) may not.
_MIN_REGULAR_SHARE = 0.6
# csv's own limit on one field is 128 KB: past it a table was read as plain text, all of it. Up to
# this a field is parsed and then cut (sheet_pages.MAX_CELL_CHARS).
FIELD_LIMIT = 256 * 1024 * 1024
_WIDE_CELLS = 1_000  # delimiters in a first row longer than the sample that make it a table row


@register_reader("csv")
def open_csv(request: ReadRequest) -> ReadResult | TextStream:
    table = read_csv(request.path, request.data)
    return table if table is not None else TextStream(request.data, "text")  # not tabular after all


def read_csv(path: Path, data: bytes) -> ReadResult | None:
    """The table in `data`, or None when it is not one."""
    decoded = decode(data)
    text = decoded.text.removeprefix("\ufeff")
    dialect = _dialect(text, path.suffix.lower() == ".tsv")
    if dialect is None:
        return None
    writer = SheetWriter(max_chars=text_budget(len(data)))
    try:
        writer.add_sheet(path.name, _rows(text, dialect), name_single_page=False)
    except csv.Error:  # a NUL inside quotes, a field past FIELD_LIMIT ...: no table after all
        return None
    return ReadResult("csv", writer.pages, synthetic_pages=writer.split, warnings=decoded.warnings + writer.warnings)


def _dialect(text: str, tab_separated: bool) -> dict | None:
    """csv.reader's format parameters for `text`, or None when it is not a table."""
    sample = text[:_SNIFF_CHARS]
    if len(text) > _SNIFF_CHARS and "\n" in sample:
        sample = sample[: sample.rindex("\n")]  # a cut row would sniff as another shape
    elif len(text) > _SNIFF_CHARS:
        return _wide_dialect(sample, tab_separated)
    if tab_separated:
        dialect = {"delimiter": "\t"}
    else:
        try:
            sniffed = csv.Sniffer().sniff(sample, delimiters=_DELIMITERS)
        except csv.Error:
            return None
        # Only the delimiter, quote and spacing are taken: the sniffer's guess of `doublequote`
        # is often wrong, and nearly every writer doubles quotes inside quoted cells (as Excel).
        dialect = {
            "delimiter": sniffed.delimiter,
            "quotechar": sniffed.quotechar or '"',
            "skipinitialspace": sniffed.skipinitialspace,
        }
    return dialect if _is_tabular(sample, dialect) else None


def _wide_dialect(sample: str, tab_separated: bool) -> dict | None:
    """A first row longer than the sniffer's sample (a million columns): a table when one
    delimiter splits it into many cells; its columns are then capped like any sheet's."""
    counts = {d: sample.count(d) for d in ("\t",) if tab_separated} or {d: sample.count(d) for d in _DELIMITERS}
    delimiter, count = max(counts.items(), key=lambda item: item[1])
    return {"delimiter": delimiter} if count >= _WIDE_CELLS else None


def _is_tabular(sample: str, dialect: dict) -> bool:
    try:
        widths = [len(row) for row in csv.reader(io.StringIO(sample), **dialect) if any(c.strip() for c in row)]
    except csv.Error:
        return False
    widths = widths[:_SAMPLE_ROWS]
    if len(widths) < 2:
        return False
    width, count = Counter(widths).most_common(1)[0]
    return width >= 2 and count >= _MIN_REGULAR_SHARE * len(widths)


def _rows(text: str, dialect: dict) -> Iterator[Row]:
    """Each row as its cells, a cell cut past MAX_CELL_CHARS before its spaces are collapsed
    (the writer warns of the cut), so one 100 MB field costs its parse, not 100 MB of text work."""
    if csv.field_size_limit() < FIELD_LIMIT:
        csv.field_size_limit(FIELD_LIMIT)  # raised once for the process; never lowered under another reader
    for number, cells in enumerate(csv.reader(io.StringIO(text), **dialect), start=1):
        yield number, [" ".join(cell[: MAX_CELL_CHARS + 1].split()) for cell in cells]
