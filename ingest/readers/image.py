"""Photos and scans of pages (PNG, JPEG, TIFF with any number of pages, WebP), read by OCR.

Each frame of the file is one page, recognised as the stream reaches it, so progress and
cancel work page by page. The work a file may cost is decided before it is decoded, from what
its header declares and its size on disk (image_decode has the rules for one frame):

- an image (or a frame) past MAX_DECODE_PIXELS, or whose decoded pixels would take more than
  image_decode.MAX_DECODE_BYTES, is refused with its size; one under 16 pixels a side is
  refused as too small or too thin to hold text;
- at most MAX_FRAMES frames are read, and frames are decoded only while their declared pixels
  stay within max(FLOOR_PIXELS, PIXELS_PER_BYTE x the file's bytes): a 10 KB file declaring
  200 frames of 64 MP reads a few of them, and the warning names the cap;
- a JPEG is decoded reduced (draft mode), any frame is reduced before it is converted, and a
  tall or wide image is read in tiles at a legible scale (ingest.ocr.ocr_tiles).

Pillow's global Image.MAX_IMAGE_PIXELS is left as it is (reading may run in threads); past it,
Pillow refuses too.
"""

from __future__ import annotations

import io
import re
from collections.abc import Iterator
from pathlib import Path

from ingest.errors import DamagedDocument, EmptyDocument, OversizedDocument
from ingest.ocr import MAX_DECODE_PIXELS, OcrPage, ocr_image, ocr_tiles
from ingest.readers import image_decode
from ingest.readers.ocr_pages import OCR_OFF_HINT, OcrTally, page_ocr
from ingest.readers.registry import ReadRequest, register_reader
from ingest.records import Page

_NAMES = {"PNG": "PNG", "JPEG": "JPEG", "MPO": "JPEG", "TIFF": "TIFF", "WEBP": "WebP"}
MAX_FRAMES = 300  # pages of one image file read by OCR; a longer scan is better kept as a PDF
FLOOR_PIXELS = 400_000_000  # declared pixels any image file may have decoded, whatever its size
PIXELS_PER_BYTE = 2_000  # and beyond that, per byte on disk (a G4 fax page: ~100 pixels a byte)


def _too_large(size: tuple[int, int], what: str = "the image") -> str:
    """Why an image of `size` (from its header) is not decoded, or "" when it may be."""
    width, height = size
    if width * height <= MAX_DECODE_PIXELS:
        return ""
    return (
        f"{what} is {width:,} x {height:,} pixels ({width * height / 1e6:,.0f} MP), more than the "
        f"{MAX_DECODE_PIXELS / 1e6:,.0f} MP DocDesk decodes (a decompression bomb?)"
    )


def _frame_problem(frame, what: str) -> tuple[str, type]:
    """Why `frame` is not read, and the error class for it when it is the whole file; ("", ...) if it is."""
    for reason, kind in (
        (image_decode.size_problem(frame.size, what), EmptyDocument),
        (_too_large(frame.size, what), OversizedDocument),
        (image_decode.decode_problem(frame, what), OversizedDocument),
    ):
        if reason:
            return reason, kind
    return "", EmptyDocument


def _open(data: bytes):
    from PIL import Image

    try:
        image = Image.open(io.BytesIO(data))  # the header only: nothing is decoded yet
        reason, kind = _too_large(image.size), OversizedDocument
        image_decode.draft(image)
        if not reason:
            reason, kind = _frame_problem(image, "the image")
    except Image.DecompressionBombError as exc:  # past Pillow's own global limit, refused on opening
        declared = re.search(r"\((\d+) pixels\)", str(exc))
        size = f"{int(declared.group(1)) / 1e6:,.0f} MP" if declared else "more pixels"
        raise OversizedDocument(
            f"image too large to read: the image declares {size}, more than the {MAX_DECODE_PIXELS / 1e6:,.0f} MP "
            "DocDesk decodes (a decompression bomb?)"
        ) from exc
    except Exception as exc:  # Pillow raises UnidentifiedImageError, OSError, SyntaxError ...
        raise DamagedDocument(f"damaged or unsupported image: {type(exc).__name__}: {exc}") from exc
    if reason:
        if kind is EmptyDocument:
            raise EmptyDocument(f"no text can be read: {reason}")
        raise OversizedDocument(f"image too large to read: {reason}")
    return image


class ImageStream:
    """`ocr`: the caller's choice, as for PDFs; without OCR an image gives no text, and says why."""

    format = "image"
    synthetic_pages = False

    def __init__(self, path: Path, data: bytes, ocr: bool = True) -> None:
        self.ocr = ocr
        self._image = _open(data)
        self.title = ""
        self.kind = _NAMES.get(self._image.format or "", self._image.format or "image")
        self.frames = getattr(self._image, "n_frames", 1)
        self.page_count = min(self.frames, MAX_FRAMES)  # a page per frame: progress says n of N
        self.size = len(data)
        self.budget = max(FLOOR_PIXELS, PIXELS_PER_BYTE * self.size)  # declared pixels decoded, in all
        self.tally = OcrTally()
        self._skipped: list[str] = []  # frames not read, and why

    @property
    def warnings(self) -> list[str]:
        return self.tally.warnings() + self._skipped

    def _frames(self) -> Iterator:
        from PIL import ImageSequence

        spent = 0
        for number, frame in enumerate(ImageSequence.Iterator(self._image), start=1):
            if number > MAX_FRAMES:
                self._skipped.append(
                    f"only the first {MAX_FRAMES:,} of its {self.frames:,} frames were read "
                    f"(DocDesk reads at most {MAX_FRAMES:,} pages of one image file)"
                )
                return
            image_decode.draft(frame)
            spent += frame.size[0] * frame.size[1]
            if spent > self.budget and number > 1:
                self._skipped.append(
                    f"frames {number:,}-{self.frames:,} were not read: they declare more pixels than a file of "
                    f"{self.size / 1024:,.0f} KB may have decoded ({self.budget / 1e6:,.0f} MP in all)"
                )
                return
            yield frame

    def pages(self) -> Iterator[Page]:
        if not self.ocr:
            return  # nothing is decoded: no_text_error says OCR is off
        number = 0
        try:
            for number, frame in enumerate(self._frames(), start=1):
                reason = _frame_problem(frame, f"frame {number}")[0] if number > 1 else ""  # the first: on opening
                if reason:  # one giant or empty frame of a TIFF costs that page, not the file
                    self._skipped.append(f"not read: {reason}")
                    yield Page(number, "")
                    continue
                image, wanted = image_decode.page_image(frame)
                if image_decode.blank(image):
                    result = OcrPage("")
                else:
                    result = ocr_tiles(image) if wanted.tiled else ocr_image(image)
                del image
                self.tally.add(number, result)
                yield Page(number, result.text, page_ocr(result))
        except (OSError, SyntaxError, ValueError) as exc:  # a truncated or damaged frame
            if number <= 1:
                raise DamagedDocument(f"damaged {self.kind} image: {type(exc).__name__}: {exc}") from exc
            self.tally.damaged = f"frame {number} and after are damaged ({type(exc).__name__}: {exc})"

    def no_text_error(self) -> EmptyDocument:
        if not self.ocr:
            return EmptyDocument(f"an image ({self.kind}) has text only through OCR, and OCR is off: {OCR_OFF_HINT}")
        pages = self.tally.pages
        where = "the image" if pages <= 1 else f"any of its {pages} pages"
        unread = f" ({'; '.join(self._skipped)})" if self._skipped else ""
        return EmptyDocument(
            f"no text found by OCR on {where} ({self.kind}): is it a photo without printed text?{unread}"
        )


@register_reader("image")
def open_image(request: ReadRequest) -> ImageStream:
    return ImageStream(request.path, request.data, ocr=request.ocr)
