"""How much text one file may give, decided from its size on disk before it is read.

A real document holds a few characters of text per byte: a text file one, a PDF or an Office
file (compressed XML) up to ~10, a spreadsheet of short repeated values some tens. A file
that declares far more work than its bytes (an ODS row repeated a billion times in 522 bytes,
an EPUB whose spine lists one chapter 10,000 times, a PDF holding a 50 MB line in 149 KB) is
cut at CHARS_PER_BYTE characters per byte on disk, as zipguard cuts a ZIP that expands more
than 100 times, with a warning that says so. FLOOR_CHARS lets any file give a book's worth
whatever its size. The chunker's own limit (MAX_DOCUMENT_CHARS) stays the ceiling.

Readers that build their text in memory (sheets, ODF, EPUB) stop at this budget; the reader
process (ingest/reader_process.py) cuts every format's page stream at it, so the text, and with
it the time to embed it, is bounded for every file.
"""

from __future__ import annotations

from ingest.chunking import MAX_DOCUMENT_CHARS

FLOOR_CHARS = 2_000_000  # any file may give this much text: a long book, ~1,500 passages
CHARS_PER_BYTE = 100  # beyond the floor: characters of text per byte of the file on disk


def text_budget(size: int) -> int:
    """The characters of text a file of `size` bytes may give."""
    return min(MAX_DOCUMENT_CHARS, max(FLOOR_CHARS, CHARS_PER_BYTE * size))


def cut_warning(size: int, budget: int) -> str:
    """What the document's warnings say when its text was cut at `budget`."""
    if budget >= MAX_DOCUMENT_CHARS:
        why = f"DocDesk keeps at most {MAX_DOCUMENT_CHARS:,} characters of one document"
    else:
        why = (
            f"the file ({size:,} bytes) expands to more than {CHARS_PER_BYTE} characters per byte "
            f"beyond the first {FLOOR_CHARS:,} (a file that declares far more text than it holds?)"
        )
    return f"text cut at {budget:,} characters: {why}"
