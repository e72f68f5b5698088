"""A page image decoded within a budget decided before it is decoded, from what its header declares.

- Size: a side under MIN_SIDE pixels holds no text (1 x 1, or a 1 x 60,000 line of pixels):
  refused with that reason. A frame whose decoded pixels would take more than
  MAX_DECODE_BYTES (mode-aware: an RGBA pixel is 4 bytes, a 16-bit one 6 with its 32-bit copy) is refused
  with its size; a JPEG is decoded reduced (draft mode: 1/2 to 1/8) and counted at that size.
- Scale: a page is shrunk to what OCR needs at most (ingest.ocr's MAX_SIDE and MAX_PIXELS). A
  tall or wide image (a scrolling screenshot, a receipt) is not shrunk below a legible scale:
  its short side keeps up to MAX_SIDE pixels and it is read in tiles along its long side
  (ingest.ocr.ocr_tiles), up to MAX_TILED_PIXELS per frame.
- Memory: the decoded frame is reduced first (Image.reduce, a box filter that allocates only
  its output), then converted, composited over white and turned upright on the small copy;
  16-bit and float images are stretched to their own range of grey.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

from ingest.ocr import MAX_PIXELS, MAX_SIDE

MIN_SIDE = 16  # fewer pixels than this each way hold no legible character
MAX_DECODE_BYTES = 512 * 1024 * 1024  # one decoded frame, before it is reduced
MAX_TILED_PIXELS = 64_000_000  # a tall image read in tiles: at most this many pixels OCR'd a frame
TALL = 2.0  # long side / short side past which an image is read in tiles rather than shrunk whole
# Bytes a decoded pixel takes in each mode, with the copy a conversion makes where one is needed
# before reducing (a palette image is expanded to RGB or RGBA first).
_BYTES = {"1": 2, "L": 1, "P": 5, "LA": 4, "PA": 5, "RGB": 4, "RGBA": 4, "CMYK": 7, "YCbCr": 7, "I": 4, "F": 4}
_SIXTEEN_BIT = 6  # I;16 is expanded to 32-bit I before it is reduced
# WebP's animation decoder hands each frame over as a buffer and Pillow copies it: twice the canvas.
_FORMAT_FACTOR = {"WEBP": 2}
_ORIENT = {
    2: "FLIP_LEFT_RIGHT",
    3: "ROTATE_180",
    4: "FLIP_TOP_BOTTOM",
    5: "TRANSPOSE",
    6: "ROTATE_270",
    7: "TRANSVERSE",
    8: "ROTATE_90",
}  # EXIF orientation -> the transpose that sets it upright


@dataclass(frozen=True)
class Plan:
    scale: float  # of the decoded frame, before OCR
    tiled: bool  # read in tiles along the long side


def plan(size: tuple[int, int]) -> Plan:
    """How a frame of `size` is read: one page image within MAX_SIDE and MAX_PIXELS, or, when
    that would shrink a tall or wide image, tiles at a scale that keeps its short side legible."""
    width, height = size
    long, short = max(width, height), min(width, height)
    whole = min(1.0, MAX_SIDE / long, math.sqrt(MAX_PIXELS / (width * height)))
    if whole >= 1.0 or long / short <= TALL:
        return Plan(whole, False)
    return Plan(min(1.0, MAX_SIDE / short, math.sqrt(MAX_TILED_PIXELS / (width * height))), True)


def size_problem(size: tuple[int, int], what: str = "the image") -> str:
    """Why a frame of `size` holds no text OCR could read, or ""."""
    width, height = size
    if min(width, height) >= MIN_SIDE:
        return ""
    dims = f"{what} is {width:,} x {height:,} pixels"
    if max(width, height) < MIN_SIDE:
        return f"{dims}: too small to hold text (OCR needs at least {MIN_SIDE} pixels each way)"
    return f"{dims}: too thin to hold text, a line of pixels (OCR needs at least {MIN_SIDE} pixels each way)"


def decode_problem(frame, what: str = "the image") -> str:
    """Why `frame` (opened, not decoded) is not decoded: its size in memory, or ""."""
    width, height = frame.size
    per_pixel = _BYTES.get(frame.mode, _SIXTEEN_BIT if frame.mode.startswith("I;16") else 4)
    cost = width * height * per_pixel * _FORMAT_FACTOR.get(frame.format or "", 1)
    if cost <= MAX_DECODE_BYTES:
        return ""
    return (
        f"{what} is {width:,} x {height:,} pixels ({frame.mode}), {cost / 2**20:,.0f} MB decoded, more than the "
        f"{MAX_DECODE_BYTES / 2**20:,.0f} MB DocDesk decodes at once (a decompression bomb?)"
    )


def draft(frame) -> None:
    """A JPEG frame is decoded at the smallest of 1/1 to 1/8 of its size that OCR's plan still
    gets in full: its size (and what decode_problem counts) is that size from now on."""
    if frame.format not in ("JPEG", "MPO"):
        return
    wanted = plan(frame.size)
    if wanted.scale < 1.0:
        width, height = frame.size
        frame.draft(
            frame.mode if frame.mode in ("L", "RGB") else "RGB",
            (math.ceil(width * wanted.scale), math.ceil(height * wanted.scale)),
        )


def page_image(frame):
    """The decoded `frame` as an upright RGB or L image at the plan's scale, and the plan."""
    orientation = _orientation(frame)
    frame.load()
    wanted = plan(frame.size)
    image = _reduced(_reducible(frame), wanted.scale)
    image = _flat(image)
    if orientation in _ORIENT:
        from PIL import Image

        image = image.transpose(getattr(Image.Transpose, _ORIENT[orientation]))
    return image, wanted


def blank(image) -> bool:
    """One colour all over: nothing for OCR to read (a blank page costs no OCR)."""
    extrema = image.getextrema()
    bands = extrema if isinstance(extrema[0], tuple) else (extrema,)
    return all(low == high for low, high in bands)


def _orientation(frame) -> int:
    try:
        return int(frame.getexif().get(0x0112) or 1)
    except Exception:  # a damaged EXIF block costs the orientation, not the page
        return 1


def _reducible(image):
    """`image` in a mode Image.reduce and resize take (a palette or bilevel image is expanded)."""
    if image.mode in ("P", "PA"):
        return image.convert("RGBA" if "transparency" in image.info or image.mode == "PA" else "RGB")
    if image.mode == "1":
        return image.convert("L")
    if image.mode.startswith("I;16"):
        return image.convert("I")
    if image.mode in ("CMYK", "YCbCr", "LAB", "HSV"):
        return image.convert("RGB")
    return image


def _reduced(image, scale: float):
    from PIL import Image

    if scale >= 1.0:
        return image
    width, height = image.size
    target = (max(1, round(width * scale)), max(1, round(height * scale)))
    factor = int(1 / scale)
    if factor >= 2:
        image = image.reduce(factor)  # a box filter: cheap, and allocates only its output
    if image.size != target:
        image = image.resize(target, Image.Resampling.LANCZOS)
    return image


def _flat(image):
    """RGB or L for OCR: transparency over white (text drawn on a transparent background stays
    dark on light), 32-bit integer and float grey stretched to 0-255 between its own darkest and
    lightest values (a float page of 0.0-1.0 would otherwise be black)."""
    from PIL import Image

    if image.mode in ("I", "F"):
        return _stretched(image)
    if image.mode in ("RGBA", "LA", "RGBa", "La"):
        white = Image.new("RGBA", image.size, (255, 255, 255, 255))
        return Image.alpha_composite(white, image.convert("RGBA")).convert("RGB")
    if image.mode not in ("RGB", "L"):
        return image.convert("RGB")
    return image


def _stretched(image):
    import numpy as np
    from PIL import Image

    values = np.asarray(image, dtype=np.float32)
    finite = values[np.isfinite(values)]
    if finite.size == 0:
        return Image.new("L", image.size, 255)
    low, high = np.percentile(finite, [0.1, 99.9])
    if high <= low:
        low, high = float(finite.min()), float(finite.max())
    span = high - low if high > low else 1.0
    scaled = np.nan_to_num((values - low) * (255.0 / span), nan=255.0, posinf=255.0, neginf=0.0)
    return Image.fromarray(np.clip(scaled, 0, 255).astype(np.uint8), "L")
