"""Photos and scans of pages (PNG, JPEG, TIFF with any number of pages, WebP), read by OCR.

Each frame of the file is one page, recognised as the stream reaches it, so progress and
cancel work page by page. Decoding is bounded: a JPEG is decoded at a reduced size when it is
larger than OCR needs, and an image (or a frame) past MAX_DECODE_PIXELS is refused with its size,
checked here on the size its header declares before anything is decoded. Pillow's global
Image.MAX_IMAGE_PIXELS is left as it is (reading may run in threads); past it, Pillow refuses too.
"""

from __future__ import annotations

import io
from collections.abc import Iterator
from pathlib import Path

from ..errors import DamagedDocument, EmptyDocument, OversizedDocument
from ..ocr import MAX_DECODE_PIXELS, MAX_SIDE, ocr_image
from ..records import Page
from .ocr_pages import OCR_OFF_HINT, OcrTally, page_ocr
from .registry import ReadRequest, register_reader

_NAMES = {"PNG": "PNG", "JPEG": "JPEG", "MPO": "JPEG", "TIFF": "TIFF", "WEBP": "WebP"}


def _too_large(size: tuple[int, int], what: str = "the image") -> str:
    """Why an image of `size` (from its header) is not decoded, or "" when it may be."""
    width, height = size
    if width * height <= MAX_DECODE_PIXELS:
        return ""
    return (
        f"{what} is {width:,} x {height:,} pixels ({width * height / 1e6:,.0f} MP), more than the "
        f"{MAX_DECODE_PIXELS / 1e6:,.0f} MP DocDesk decodes (a decompression bomb?)"
    )


def _open(data: bytes):
    from PIL import Image

    try:
        image = Image.open(io.BytesIO(data))  # the header only: nothing is decoded yet
        reason = _too_large(image.size)
    except Image.DecompressionBombError as exc:  # past Pillow's own global limit
        raise OversizedDocument(f"image too large to read ({exc})") from exc
    except Exception as exc:  # Pillow raises UnidentifiedImageError, OSError, SyntaxError ...
        raise DamagedDocument(f"damaged or unsupported image: {type(exc).__name__}: {exc}") from exc
    if reason:
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
        self.page_count = getattr(self._image, "n_frames", 1)  # a page per frame: progress says n of N
        self.tally = OcrTally()
        self._skipped: list[str] = []  # frames past MAX_DECODE_PIXELS: why each was not read

    @property
    def warnings(self) -> list[str]:
        return self.tally.warnings() + self._skipped

    def _frames(self) -> Iterator:
        from PIL import ImageSequence

        for frame in ImageSequence.Iterator(self._image):
            if frame.format == "JPEG" or self._image.format == "JPEG":
                frame.draft("RGB", (MAX_SIDE, MAX_SIDE))  # decode at 1/2, 1/4 or 1/8 size when that is enough
            yield frame

    def pages(self) -> Iterator[Page]:
        from PIL import ImageOps

        if not self.ocr:
            return  # nothing is decoded: no_text_error says OCR is off
        number = 0
        try:
            for number, frame in enumerate(self._frames(), start=1):
                reason = _too_large(frame.size, f"frame {number}")  # the first was checked on opening
                if reason:  # one giant frame of a TIFF costs that page, not the file
                    self._skipped.append(f"not read: {reason}")
                    yield Page(number, "")
                    continue
                frame.load()
                result = ocr_image(ImageOps.exif_transpose(frame))  # a phone photo says which way is up
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
        return EmptyDocument(f"no text found by OCR on {where} ({self.kind}): is it a photo without printed text?")


@register_reader("image")
def open_image(request: ReadRequest) -> ImageStream:
    return ImageStream(request.path, request.data, ocr=request.ocr)
