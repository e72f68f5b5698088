"""PDF text, page by page, with pypdf (non-strict, so damaged files are read where possible)."""

from __future__ import annotations

import io
import logging
import unicodedata
from collections.abc import Iterator
from pathlib import Path

from ingest.errors import DamagedDocument, EmptyDocument, EncryptedDocument
from ingest.normalize import normalize_text
from ingest.readers.ocr_pages import OCR_OFF_HINT, OcrTally, page_ocr
from ingest.readers.page_ranges import page_ranges
from ingest.readers.registry import ReadRequest, register_reader
from ingest.records import Page, ReadResult

log = logging.getLogger(__name__)

# A page with fewer visible characters than this is treated as having no text layer.
MIN_PAGE_CHARS = 8
_ERROR_CHARS = 200  # of an extraction error's message, in warnings and reasons
# A text layer is garbage (a broken font encoding, a scanner's junk layer) when more than this
# share of its visible characters are unassigned, private-use or replacement characters.
GARBAGE_SHARE = 0.3
RENDER_DPI = 300  # scans are rendered for OCR at this resolution, within ingest.ocr's pixel bounds
MIN_RENDER_DPI = 72  # a page of images is never rendered coarser than this


MIN_IMAGE_PX = 32  # an image smaller than this both ways (an icon, a bullet) holds no line of text


def ocr_render_dpi(page, text_layer_whole: bool) -> float | None:
    """The resolution to render a pypdfium2 page at for OCR, or None when nothing on it could hold
    text beyond its text layer. `text_layer_whole`: the layer is short but not garbage, so what
    the page's text objects say is in it already (a page of "Test" and a bullet icon keeps "Test").

    RENDER_DPI, or less for a page that holds nothing but images (a scan, a photo) whose pixels
    are coarser than that: rendering a 150-dpi scan at 300 dpi gives OCR four times the pixels and
    no more detail, and its detector's time grows with the pixels (a 300-dpi letter page: ~2.5 s
    on two cores). Glyphs and drawings (text may be turned to outlines) have no pixels of their
    own: a page with any of them to read gets RENDER_DPI."""
    import math

    import pypdfium2.raw as pdfium

    finest, vector, readable = 0.0, False, False
    for item in page.get_objects(max_depth=0):
        if item.type == pdfium.FPDF_PAGEOBJ_TEXT and text_layer_whole:
            continue
        if item.type != pdfium.FPDF_PAGEOBJ_IMAGE:
            vector = readable = True  # glyphs of a garbage layer, a path, a shading, a form
            continue
        width_px, height_px = item.get_px_size()
        if max(width_px, height_px) < MIN_IMAGE_PX:
            continue
        readable = True
        m = item.get_matrix()  # the unit square onto the page, in points
        width_pt, height_pt = math.hypot(m.a, m.b), math.hypot(m.c, m.d)
        if width_pt > 0 and height_pt > 0:
            finest = max(finest, 72 * width_px / width_pt, 72 * height_px / height_pt)
    if not readable:
        return None
    if vector or finest <= 0:
        return RENDER_DPI
    return max(MIN_RENDER_DPI, min(RENDER_DPI, finest))


def _garbage(text: str) -> bool:
    visible = [c for c in text if not c.isspace()]
    if not visible:
        return False
    odd = sum(1 for c in visible if c == "\ufffd" or unicodedata.category(c) in ("Co", "Cn", "Cs"))
    return odd > GARBAGE_SHARE * len(visible)


def _quiet_pypdf() -> None:
    # pypdf warns through `warnings` too; route them into logging, where the app decides
    # that they go to the log file and not the terminal (app/desk/logs.py).
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
    the first pages of a long book while the rest is still being read.

    `ocr`: pages without a usable text layer are rendered and read by OCR. The caller decides
    (the app's setting, through Ingestor and open_document): OCR is slow on a laptop."""

    format = "pdf"
    synthetic_pages = False

    def __init__(self, path: Path, password: str | None = None, data: bytes | None = None, ocr: bool = True) -> None:
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
        self._data = data
        self._rendered = None  # the pypdfium2 document, opened for the first page that needs OCR
        self.ocr = ocr
        self.tally = OcrTally()
        self._empty: list[int] = []  # pages with (almost) no text, from the text layer or OCR
        self._failed: dict[int, str] = {}  # pages whose extraction raised: the error
        self._ocr_failed: dict[int, str] = {}

    def pages(self) -> Iterator[Page]:
        for number in range(1, self.page_count + 1):
            try:
                text = normalize_text(self._pages[number - 1].extract_text() or "")
            except Exception as exc:  # one bad content stream should not lose the other pages
                self._failed[number] = f"{type(exc).__name__}: {exc}"[:_ERROR_CHARS]
                text = ""
            else:
                if self.ocr and (len(text.strip()) < MIN_PAGE_CHARS or _garbage(text)):
                    page = self._ocr_page(number, text_layer_whole=not _garbage(text))
                    if page is not None:
                        yield page
                        continue
                if len(text.strip()) < MIN_PAGE_CHARS:
                    self._empty.append(number)
            yield Page(number, text)

    def _ocr_page(self, number: int, text_layer_whole: bool) -> Page | None:
        """The page rendered and read by OCR; None if rendering failed (the reason is kept) or the
        page holds nothing OCR could read beyond its text layer."""
        from ingest.ocr import MAX_PIXELS, MAX_SIDE, ocr_image

        try:
            if self._rendered is None:
                import pypdfium2

                self._rendered = pypdfium2.PdfDocument(self._data)
            page = self._rendered[number - 1]
            dpi = ocr_render_dpi(page, text_layer_whole)
            if dpi is None:
                page.close()
                return None  # nothing there for OCR to read: the text layer stands
            width, height = page.get_size()  # points
            scale = min(dpi / 72, MAX_SIDE / max(width, height, 1), (MAX_PIXELS / max(width * height, 1)) ** 0.5)
            image = page.render(scale=scale).to_pil()
            page.close()
        except Exception as exc:  # pdfium cannot render what pypdf could open: keep the page empty
            self._ocr_failed[number] = f"{type(exc).__name__}: {exc}"[:_ERROR_CHARS]
            return None
        result = ocr_image(image)
        self.tally.add(number, result)
        if not result.text.strip():
            return None
        return Page(number, result.text, page_ocr(result))

    def _failures(self) -> str:
        """'pp. 1-3 (PdfStreamError: ...)': the pages that raised and their (first) errors."""
        errors = list(dict.fromkeys(self._failed.values()))
        more = f"; {len(errors) - 1} other error(s)" if len(errors) > 1 else ""
        return f"{page_ranges(sorted(self._failed))} ({errors[0]}{more})"

    @property
    def warnings(self) -> list[str]:
        """Complete once pages() is exhausted."""
        found = [w for w in self.tally.warnings() if not w.startswith("OCR found no text")]
        if self._empty:
            how = "nor text found by OCR" if self.ocr else "(scanned? OCR is off)"
            found.append(
                f"no text layer {how} on {len(self._empty)} of {self.page_count} pages: {page_ranges(self._empty)}"
            )
        if self._ocr_failed:
            errors = list(dict.fromkeys(self._ocr_failed.values()))
            found.append(f"pages could not be rendered for OCR: {page_ranges(sorted(self._ocr_failed))} ({errors[0]})")
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
        none = "no text layer, and OCR found no text on them" if self.ocr else "no text layer (scanned?)"
        hint = "" if self.ocr else f": {OCR_OFF_HINT}"
        if self._failed:
            return EmptyDocument(
                f"no text: extraction failed on {self._failures()}, and the other "
                f"{self.page_count - len(self._failed)} pages have {none}{hint}"
            )
        if self.ocr:
            return EmptyDocument(
                f"no text on any of its {self.page_count} pages: no text layer, and OCR found no printed text"
            )
        return EmptyDocument(f"no text layer (scanned?) on any of its {self.page_count} pages{hint}")


@register_reader("pdf")
def open_pdf(request: ReadRequest) -> PdfStream:
    return PdfStream(request.path, request.password, request.data, ocr=request.ocr)


def read_pdf(path: Path, password: str | None = None, ocr: bool = True) -> ReadResult:
    stream = PdfStream(path, password, ocr=ocr)
    pages = list(stream.pages())
    return ReadResult("pdf", pages, title=stream.title, warnings=stream.warnings)


def _damage_reason(data: bytes, exc: Exception) -> str:
    tail = data[-2048:]
    reason = f"damaged PDF, pypdf cannot read it ({type(exc).__name__}: {exc})"
    if b"%%EOF" not in tail:
        reason += "; the file is cut off (no %%EOF at its end): was a download or copy interrupted?"
    return reason
