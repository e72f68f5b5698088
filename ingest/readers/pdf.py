"""PDF text, page by page, with pypdf (non-strict, so damaged files are read where possible)."""

from __future__ import annotations

import io
import logging
from collections.abc import Iterator
from pathlib import Path

from ..errors import DamagedDocument, EmptyDocument, EncryptedDocument
from ..normalize import normalize_text
from ..records import Page, ReadResult

log = logging.getLogger(__name__)

# A page with fewer visible characters than this is treated as having no text layer.
MIN_PAGE_CHARS = 8
_ERROR_CHARS = 200  # of an extraction error's message, in warnings and reasons


def _quiet_pypdf() -> None:
    # pypdf warns through `warnings` too; route them into logging, where the app decides
    # that they go to the log file and not the terminal (app/logs.py).
    logging.captureWarnings(True)


def _title(reader) -> str:
    try:
        meta = reader.metadata
        title = (meta.title if meta else None) or ""
    except Exception as exc:  # metadata is optional; a broken dictionary must not fail the file
        log.info("unreadable PDF metadata: %s", exc)
        return ""
    title = normalize_text(str(title))
    if title.lower().startswith(("microsoft word - ", "untitled")):
        return ""
    return title


def _unlock(reader, password: str | None) -> None:
    if not reader.is_encrypted:
        return
    try:
        if reader.decrypt("") != 0:  # many PDFs are encrypted with an empty user password
            return
        if password is None:
            raise EncryptedDocument("encrypted: a password is needed (pass --password)")
        if reader.decrypt(password) == 0:
            raise EncryptedDocument("encrypted: the password is wrong")
    except EncryptedDocument:
        raise
    except Exception as exc:  # unsupported crypto, missing cryptography package, ...
        raise EncryptedDocument(f"encrypted and cannot be decrypted: {exc}") from exc


class PdfStream:
    """An opened PDF whose pages are extracted one at a time, so ingest can start on
    the first pages of a long book while the rest is still being read."""

    format = "pdf"
    synthetic_pages = False

    def __init__(self, path: Path, password: str | None = None, data: bytes | None = None) -> None:
        _quiet_pypdf()
        from pypdf import PdfReader

        data = path.read_bytes() if data is None else data
        try:
            self._reader = PdfReader(io.BytesIO(data), strict=False)
            _unlock(self._reader, password)
            self._pages = self._reader.pages
            self.page_count = len(self._pages)
        except EncryptedDocument:
            raise
        except Exception as exc:  # pypdf raises many types for broken files; all mean "cannot be read"
            if type(exc).__name__ == "FileNotDecryptedError":
                raise EncryptedDocument("encrypted: a password is needed (pass --password)") from exc
            raise DamagedDocument(_damage_reason(data, exc)) from exc
        self.title = _title(self._reader)
        self._empty: list[int] = []  # pages whose extraction gave (almost) no text
        self._failed: dict[int, str] = {}  # pages whose extraction raised: the error

    def pages(self) -> Iterator[Page]:
        for number in range(1, self.page_count + 1):
            try:
                text = normalize_text(self._pages[number - 1].extract_text() or "")
            except Exception as exc:  # one bad content stream should not lose the other pages
                self._failed[number] = f"{type(exc).__name__}: {exc}"[:_ERROR_CHARS]
                text = ""
            else:
                if len(text.strip()) < MIN_PAGE_CHARS:
                    self._empty.append(number)
            yield Page(number, text)

    def _failures(self) -> str:
        """'pp. 1-3 (PdfStreamError: ...)': the pages that raised and their (first) errors."""
        errors = list(dict.fromkeys(self._failed.values()))
        more = f"; {len(errors) - 1} other error(s)" if len(errors) > 1 else ""
        return f"{_ranges(sorted(self._failed))} ({errors[0]}{more})"

    @property
    def warnings(self) -> list[str]:
        """Complete once pages() is exhausted."""
        found = []
        if self._empty:
            found.append(
                f"no text layer (scanned?) on {len(self._empty)} of {self.page_count} pages: {_ranges(self._empty)}"
            )
        if self._failed:
            found.append(f"text extraction failed on {self._failures()}")
        return found

    def no_text_error(self) -> DamagedDocument | EmptyDocument:
        """Why a PDF none of whose pages gave text cannot be indexed (once pages() is exhausted):
        extraction failed, or there is no text layer to extract."""
        if not self.page_count:
            return EmptyDocument("the PDF has no pages")
        if len(self._failed) == self.page_count:
            return DamagedDocument(
                f"text extraction failed on every page, {self._failures()}: the PDF is damaged "
                "or uses something pypdf cannot read (OCR would not be needed for a PDF with a text layer)"
            )
        if self._failed:
            return EmptyDocument(
                f"no text: extraction failed on {self._failures()}, and the other "
                f"{self.page_count - len(self._failed)} pages have no text layer (scanned?): run OCR on it first"
            )
        return EmptyDocument(f"no text layer (scanned?) on any of its {self.page_count} pages: run OCR on it first")


def read_pdf(path: Path, password: str | None = None) -> ReadResult:
    stream = PdfStream(path, password)
    pages = list(stream.pages())
    return ReadResult("pdf", pages, title=stream.title, warnings=stream.warnings)


def _damage_reason(data: bytes, exc: Exception) -> str:
    tail = data[-2048:]
    reason = f"damaged PDF, pypdf cannot read it ({type(exc).__name__}: {exc})"
    if b"%%EOF" not in tail:
        reason += "; the file is cut off (no %%EOF at its end): was a download or copy interrupted?"
    return reason


def _ranges(numbers: list[int]) -> str:
    """[1,2,3,7] -> 'pp. 1-3, 7'."""
    parts: list[str] = []
    start = prev = numbers[0]
    for n in numbers[1:] + [0]:
        if n == prev + 1:
            prev = n
            continue
        parts.append(f"{start}" if start == prev else f"{start}-{prev}")
        start = prev = n
    return ("p. " if len(numbers) == 1 else "pp. ") + ", ".join(parts)
