"""OCR of page images, offline: RapidOCR's bundled PP-OCR models (Chinese and English) on ONNX Runtime.

One engine per process, loaded on the first page that needs it (ingest.ocr_engine, the only
module that calls RapidOCR). A page image is bounded in pixels before anything else (an
81-megapixel scan is reduced, not decoded at full size twice), rotated upright when most of
its lines stand on end, and its recognised lines are put in reading order, column by column.
Each line keeps its box (fractions of the page's width and height) and its offsets in the
page text, so a citation can be drawn on the page image.
"""

from __future__ import annotations

import math
import re
import threading
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field

from ingest.cjk import CJK_RANGES
from ingest.normalize import normalize_text
from ingest.ocr_engine import OcrEngine

# What OCR sees at most: the long side and the pixel count. 4,000 px is ~340 dpi on an A4
# page, more than the recogniser needs; bigger pages are scaled down (memory stays bounded).
MAX_SIDE = 4000
MAX_PIXELS = 16_000_000
# The image reader refuses images (and frames) past this, on the size their header declares,
# before decoding them: a decompression bomb costs a refusal, not the memory. Just under
# Pillow's own default refusal (2 x 89,478,485 pixels), which DocDesk leaves as it is, so the
# reason given is DocDesk's.
MAX_DECODE_PIXELS = 178_000_000
MIN_LINE_SCORE = 0.5  # RapidOCR's own threshold: lines it is less sure of are dropped
_CJK_EDGE = re.compile(f"[{CJK_RANGES}]")


@dataclass(frozen=True)
class OcrLine:
    text: str
    box: tuple[float, float, float, float]  # x0, y0, x1, y1 as fractions of the page image
    score: float
    start: int = 0  # offsets of the line in the page text
    end: int = 0


@dataclass
class OcrPage:
    text: str
    lines: list[OcrLine] = field(default_factory=list)
    confidence: float = 0.0  # mean line score, weighted by characters; 0 when nothing was read
    rotated: int = 0  # degrees the image was turned (clockwise) to read it upright
    skew: float = 0.0  # then degrees it was turned (counter-clockwise) to level its lines
    seconds: float = 0.0
    pixels: tuple[int, int] = (0, 0)  # the size OCR saw


def bounded(image):
    """`image` as RGB within MAX_SIDE and MAX_PIXELS, scaled down if it is larger."""
    from PIL import Image

    width, height = image.size
    scale = min(1.0, MAX_SIDE / max(width, height), (MAX_PIXELS / (width * height)) ** 0.5)
    if image.mode not in ("RGB", "L"):
        image = image.convert("RGB")
    if scale < 1.0:
        image = image.resize((max(1, int(width * scale)), max(1, int(height * scale))), Image.Resampling.LANCZOS)
    return image


def _detect(image) -> tuple[list[tuple[list[list[float]], str, float]], float]:
    """The recognised lines (box, text, score) RapidOCR is sure enough of, and the share of lines
    its angle classifier found upside down (and turned before reading them)."""
    recognised = OcrEngine.get().read(image)
    found = [line for line in recognised.lines if line[1].strip() and line[2] >= MIN_LINE_SCORE]
    return found, recognised.flipped


def _turn_half(found, size: tuple[int, int]):
    """Boxes of lines read on an upside-down page, as they lie on the page turned upright."""
    width, height = size
    return [([[width - x, height - y] for x, y in box[2:] + box[:2]], text, score) for box, text, score in found]


def _standing(found) -> bool:
    """Most recognised lines are taller than wide: the page is turned by 90 degrees."""
    tall = 0
    for box, text, _score in found:
        xs, ys = [p[0] for p in box], [p[1] for p in box]
        if (max(ys) - min(ys)) > 1.5 * (max(xs) - min(xs)) and len(text) > 1:
            tall += 1
    return tall > max(2, len(found) // 2)


def _quality(found) -> float:
    return sum(score * len(text) for _box, text, score in found)


MIN_SKEW_DEGREES = 0.5  # less than this is left as it is: rows still group correctly


def _skew(found) -> float:
    """The median slope of long lines' top edges, in degrees (positive: text rises to the right)."""
    import math

    angles = []
    for box, text, _score in found:
        (x0, y0), (x1, y1) = box[0], box[1]
        if len(text) >= 8 and abs(x1 - x0) > 1:
            angles.append(math.degrees(math.atan2(y0 - y1, x1 - x0)))
    if len(angles) < 3:
        return 0.0
    return sorted(angles)[len(angles) // 2]


_watch = threading.local()


@contextmanager
def each_page(callback: Callable[[], None]) -> Iterator[None]:
    """callback() as each page image on this thread is handed to OCR (seconds a page, and the
    first loads the engine): the reader process reports "OCR page n of N" by it."""
    previous = getattr(_watch, "callback", None)
    _watch.callback = callback
    try:
        yield
    finally:
        _watch.callback = previous


def ocr_image(image) -> OcrPage:
    """Read one page image (a PIL image of any size): its text in reading order and its lines.
    Line boxes are fractions of the image as it was read: turned by `rotated` degrees clockwise,
    then by `skew` degrees to level it (both 0 for most pages)."""
    callback = getattr(_watch, "callback", None)
    if callback is not None:
        callback()
    started = time.perf_counter()
    image = bounded(image)
    found, flipped = _detect(image)
    rotated = 0
    if _standing(found):  # lines stand on end: read the page a quarter turn each way, keep the better
        from PIL import Image

        # RapidOCR reads a standing line by turning its crop, so the words may be right while the
        # order of lines is not: a turned page wins unless it reads clearly worse.
        best, best_quality = None, 0.8 * _quality(found)
        for degrees, turn in ((90, Image.Transpose.ROTATE_270), (270, Image.Transpose.ROTATE_90)):
            turned = image.transpose(turn)  # ROTATE_270 is a quarter turn clockwise
            again, again_flipped = _detect(turned)
            if _quality(again) >= best_quality:
                best, best_quality = (again, again_flipped, degrees, turned), _quality(again)
        if best is not None:
            found, flipped, rotated, image = best
    if flipped > 0.5:  # most lines were upside down: the page is, so its reading order is reversed
        from PIL import Image

        found = _turn_half(found, image.size)
        image = image.transpose(Image.Transpose.ROTATE_180)
        rotated = (rotated + 180) % 360
    skew = _skew(found)
    if abs(skew) >= MIN_SKEW_DEGREES:  # level the page: its lines then fall into rows and columns
        from PIL import Image

        fill = 255 if image.mode == "L" else (255, 255, 255)
        image = image.rotate(-skew, resample=Image.Resampling.BICUBIC, expand=True, fillcolor=fill)
        found, _flipped = _detect(image)
    else:
        skew = 0.0
    page = _assemble(found, image.size)
    page.skew = round(skew, 2)
    page.rotated = rotated
    page.seconds = time.perf_counter() - started
    page.pixels = image.size
    return page


TILE_OVERLAP = 240  # pixels two tiles share: a line cut by one tile's edge is whole in the other


def tile_spans(length: int, tile: int = MAX_SIDE, overlap: int = TILE_OVERLAP) -> list[tuple[int, int, int, int]]:
    """(start, end, keep_from, keep_to) of the tiles covering `length` pixels: each tile is at most
    `tile` long and overlaps the next by `overlap`; a line belongs to the tile whose keep range
    holds its centre, so a line in an overlap is kept once."""
    if length <= tile:
        return [(0, length, 0, length)]
    count = math.ceil((length - overlap) / (tile - overlap))
    step = (length - tile) / (count - 1)
    starts = [round(i * step) for i in range(count)]
    spans = []
    for i, start in enumerate(starts):
        keep_from = 0 if i == 0 else (start + starts[i - 1] + tile) // 2
        keep_to = length if i == count - 1 else (starts[i + 1] + start + tile) // 2
        spans.append((start, min(length, start + tile), keep_from, keep_to))
    return spans


def ocr_tiles(image) -> OcrPage:
    """Read a tall (or wide) page image in tiles along its long side, each at the image's own
    scale, so its text stays as legible as on a page. Line boxes are fractions of the whole image
    (not turned: a scrolling screenshot or a receipt stands upright)."""
    callback = getattr(_watch, "callback", None)
    if callback is not None:
        callback()
    started = time.perf_counter()
    width, height = image.size
    along_y = height >= width
    found = []
    for start, end, keep_from, keep_to in tile_spans(height if along_y else width):
        tile = image.crop((0, start, width, end) if along_y else (start, 0, end, height))
        for box, text, score in _detect(tile)[0]:
            moved = [[x, y + start] if along_y else [x + start, y] for x, y in box]
            centre = sum(p[1 if along_y else 0] for p in moved) / len(moved)
            if keep_from <= centre < keep_to:
                found.append((moved, text, score))
    page = _assemble(found, image.size)
    page.seconds = time.perf_counter() - started
    page.pixels = image.size
    return page


# -- reading order ---------------------------------------------------------------------------
@dataclass
class _Line:
    x0: float
    y0: float
    x1: float
    y1: float
    text: str
    score: float

    @property
    def height(self) -> float:
        return self.y1 - self.y0


def _gutters(narrow: list[_Line], width: float) -> list[float]:
    """x positions of column gutters: runs at least 0.6% of the page wide that (almost) no narrow
    line crosses, with several lines entirely on each side. A centred narrow line (an author's
    name above two columns) may cross a gutter; a few such lines do not hide it."""
    bins = 400
    step = width / bins
    cover = [0] * bins
    for ln in narrow:
        for b in range(max(0, int(ln.x0 / step)), min(bins, int(ln.x1 / step))):
            cover[b] += 1
    allowed = max(2, len(narrow) // 10)  # titles, centred names, page numbers
    left_edge, right_edge = min(ln.x0 for ln in narrow), max(ln.x1 for ln in narrow)
    gutters: list[float] = []
    b = 0
    while b < bins:
        if cover[b] > allowed:
            b += 1
            continue
        start = b
        while b < bins and cover[b] <= allowed:
            b += 1
        x0, x1 = start * step, b * step
        if x1 - x0 < 0.006 * width or x0 <= left_edge or x1 >= right_edge:
            continue  # too thin, or the margin outside all text
        left = sum(1 for ln in narrow if ln.x1 <= x0 + step)
        right = sum(1 for ln in narrow if ln.x0 >= x1 - step)
        if left >= 3 and right >= 3:
            gutters.append((x0 + x1) / 2)
    return gutters


def _columns(lines: list[_Line], width: float) -> list[list[_Line]]:
    """Split lines into columns at vertical gutters. Lines wider than ~60% of the page
    (titles, full-width captions) do not count when finding gutters; a line that crosses a
    gutter is read before the columns when it is above them (a title), after them otherwise."""
    narrow = [ln for ln in lines if ln.x1 - ln.x0 < 0.6 * width]
    if len(narrow) < 6:
        return [lines]
    gutters = _gutters(narrow, width)
    if not gutters:
        return [lines]
    bands: list[list[_Line]] = [[] for _ in range(len(gutters) + 1)]
    crossing: list[_Line] = []
    for ln in lines:
        if any(ln.x0 < g < ln.x1 for g in gutters):
            crossing.append(ln)
        else:
            bands[sum(1 for g in gutters if ln.x0 >= g)].append(ln)
    filled = [band for band in bands if band]
    if len(filled) < 2:
        return [lines]
    top = min(ln.y0 for band in filled for ln in band)
    head = [ln for ln in crossing if ln.y1 <= top + 1]
    tail = [ln for ln in crossing if ln.y1 > top + 1]
    return [part for part in [head, *filled, tail] if part]


def _rows(column: list[_Line]) -> list[list[_Line]]:
    """Lines of one column grouped into visual rows (boxes that overlap vertically), top down."""
    rows: list[list[_Line]] = []
    for ln in sorted(column, key=lambda item: (item.y0 + item.y1) / 2):
        centre = (ln.y0 + ln.y1) / 2
        if rows:
            last = rows[-1]
            y0, y1 = min(i.y0 for i in last), max(i.y1 for i in last)
            if y0 <= centre <= y1:
                last.append(ln)
                continue
        rows.append([ln])
    return [sorted(row, key=lambda item: item.x0) for row in rows]


def _joiner(before: str, after: str) -> str:
    """No space between Chinese characters, a space between words."""
    if before and after and _CJK_EDGE.match(before[-1]) and _CJK_EDGE.match(after[0]):
        return ""
    return " "


def _assemble(found, size: tuple[int, int]) -> OcrPage:
    width, height = float(size[0]), float(size[1])
    lines = []
    for box, text, score in found:
        xs, ys = [p[0] for p in box], [p[1] for p in box]
        lines.append(_Line(min(xs), min(ys), max(xs), max(ys), normalize_text(text), score))
    if not lines:
        return OcrPage("")
    pieces: list[str] = []
    placed: list[OcrLine] = []
    length = 0
    typical = sorted(ln.height for ln in lines)[len(lines) // 2]
    for column in _columns(lines, width):
        previous_bottom = None
        for row in _rows(column):
            top = min(ln.y0 for ln in row)
            if pieces:  # a paragraph break at a new column or a gap taller than a line
                gap = previous_bottom is None or top - previous_bottom > 0.8 * typical
                pieces.append("\n\n" if gap else "\n")
                length += len(pieces[-1])
            for i, ln in enumerate(row):
                if i:
                    pieces.append(_joiner(row[i - 1].text, ln.text))
                    length += len(pieces[-1])
                start = length
                pieces.append(ln.text)
                length += len(ln.text)
                box = (ln.x0 / width, ln.y0 / height, ln.x1 / width, ln.y1 / height)
                placed.append(OcrLine(ln.text, tuple(round(v, 5) for v in box), round(ln.score, 4), start, length))
            previous_bottom = max(ln.y1 for ln in row)
    text = "".join(pieces)
    chars = sum(len(ln.text) for ln in placed)
    confidence = sum(ln.score * len(ln.text) for ln in placed) / chars if chars else 0.0
    return OcrPage(text, placed, round(confidence, 4))
