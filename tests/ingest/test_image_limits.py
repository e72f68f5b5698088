"""The image reader's pixel limit is its own, per image and per frame, checked on the header's
size before decoding; Pillow's global Image.MAX_IMAGE_PIXELS is never changed."""

from __future__ import annotations

import io
import struct
import threading
import zlib
from pathlib import Path

import pytest

from ingest.errors import OversizedDocument
from ingest.ocr import OcrPage
from ingest.readers import image as image_reader
from ingest.readers.image import ImageStream


def _png_header(width: int, height: int) -> bytes:
    """A PNG that declares `width` x `height` pixels and holds none: a bomb's header."""

    def chunk(kind: bytes, data: bytes) -> bytes:
        return struct.pack(">I", len(data)) + kind + data + struct.pack(">I", zlib.crc32(kind + data))

    header = struct.pack(">IIBBBBB", width, height, 8, 0, 0, 0, 0)
    return b"\x89PNG\r\n\x1a\n" + chunk(b"IHDR", header) + chunk(b"IDAT", zlib.compress(b"")) + chunk(b"IEND", b"")


def _image(size: tuple[int, int], fmt: str = "PNG", more: list[tuple[int, int]] = ()) -> bytes:
    from PIL import Image

    def page(side: tuple[int, int]):
        image = Image.new("L", side, 255)
        image.paste(0, (2, 2, side[0] // 2, 4))  # a mark: a blank page is not handed to OCR at all
        return image

    buffer = io.BytesIO()
    frames = [page(s) for s in more]
    page(size).save(buffer, format=fmt, save_all=bool(frames), append_images=frames)
    return buffer.getvalue()


def test_an_image_past_the_limit_is_refused_with_its_size_whatever_pillow_allows(monkeypatch):
    from PIL import Image

    monkeypatch.setattr(Image, "MAX_IMAGE_PIXELS", None)  # an app that turned Pillow's guard off
    with pytest.raises(
        OversizedDocument, match=r"the image is 20,000 x 10,000 pixels \(200 MP\), more than the 178 MP"
    ):
        ImageStream(Path("bomb.png"), _png_header(20_000, 10_000))


def test_pillows_own_limit_still_refuses_and_is_left_as_it_was():
    from PIL import Image

    before = Image.MAX_IMAGE_PIXELS
    with pytest.raises(OversizedDocument, match="image too large to read"):
        ImageStream(Path("bomb.png"), _png_header(40_000, 40_000))
    ImageStream(Path("small.png"), _image((64, 48)))
    assert Image.MAX_IMAGE_PIXELS == before


def test_a_giant_frame_costs_its_page_not_the_file(monkeypatch):
    read: list[tuple[int, int]] = []

    def fake_ocr(frame) -> OcrPage:
        read.append(frame.size)
        return OcrPage("Harbour timetable", confidence=0.9)

    monkeypatch.setattr(image_reader, "ocr_image", fake_ocr)
    monkeypatch.setattr(image_reader, "MAX_DECODE_PIXELS", 10_000)
    stream = ImageStream(Path("scan.tif"), _image((80, 60), "TIFF", more=[(200, 100), (90, 90)]))
    pages = list(stream.pages())
    assert [(p.number, p.text) for p in pages] == [(1, "Harbour timetable"), (2, ""), (3, "Harbour timetable")]
    assert read == [(80, 60), (90, 90)]  # frame 2 was never decoded
    assert "not read: frame 2 is 200 x 100 pixels" in " ".join(stream.warnings)


def test_limits_hold_per_image_across_threads(monkeypatch):
    from PIL import Image

    before = Image.MAX_IMAGE_PIXELS
    monkeypatch.setattr(image_reader, "MAX_DECODE_PIXELS", 5_000)
    outcomes: dict[str, str] = {}

    def open_one(name: str, data: bytes) -> None:
        for _ in range(20):
            try:
                ImageStream(Path(name), data)
                outcomes[name] = "read"
            except OversizedDocument:
                outcomes[name] = "refused"

    threads = [
        threading.Thread(target=open_one, args=(f"{kind}{n}", _image(size)))
        for n in range(4)
        for kind, size in (("small", (60, 60)), ("large", (100, 100)))
    ]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert outcomes == {
        **{f"small{n}": "read" for n in range(4)},
        **{f"large{n}": "refused" for n in range(4)},
    }
    assert Image.MAX_IMAGE_PIXELS == before


def test_without_ocr_an_image_is_not_decoded_and_says_why(monkeypatch):
    monkeypatch.setattr(image_reader, "ocr_image", lambda frame: pytest.fail("OCR ran although it is off"))
    stream = ImageStream(Path("page.png"), _image((64, 48)), ocr=False)
    assert list(stream.pages()) == []
    assert str(stream.no_text_error()).startswith("an image (PNG) has text only through OCR, and OCR is off: turn OCR on")
