"""Where a cited passage lies on its pages, so the viewer marks every line of it, across a page
break.

The passage is DocDesk's text of the pages (pypdf's extraction, normalised); a PDF's own text
layer (pdfium's) differs in spaces, line breaks, hyphens and ligatures. Both are compared as
letters and digits only (NFKC, case folded), so the passage is found whatever the spacing, and
what was found maps back to the layer's characters, whose line rectangles pdfium gives. A passage
that begins on the page before the cited one, or runs on to the next, is marked there too.
No Qt here: the opener runs it on a worker thread.
"""

from __future__ import annotations

import unicodedata
from dataclasses import dataclass, field

ENDS = 40  # letters and digits at each end of a passage that must match where the whole does not
WINDOW = 24  # letters and digits of the page that, found in the passage, show the page holds part of it
VIEW_WIDTH = 1400  # pixels across a rendered page; the view scales it to its width


def canonical(text: str) -> tuple[str, list[int]]:
    """`text` as letters and digits only, and where each of them is in `text`."""
    chars: list[str] = []
    where: list[int] = []
    for i, ch in enumerate(text):
        for c in unicodedata.normalize("NFKC", ch).casefold():
            if c.isalnum():
                chars.append(c)
                where.append(i)
    return "".join(chars), where


@dataclass
class Found:
    start: int  # character range in the page text
    end: int
    runs_on: bool = False  # the passage goes on after this page
    began_before: bool = False  # the passage began before this page


def _with_punctuation(text: str, found: Found) -> Found:
    """The range grown over the punctuation that touches it ("(see", "hashes."): marks end where words do."""
    while found.start > 0 and not text[found.start - 1].isspace() and not text[found.start - 1].isalnum():
        found.start -= 1
    while found.end < len(text) and not text[found.end].isspace() and not text[found.end].isalnum():
        found.end += 1
    return found


def find_passage(page_text: str, passage: str) -> Found | None:
    """The part of `passage` that is on the page whose text is `page_text`, or None."""
    found = _find(page_text, passage)
    return _with_punctuation(page_text, found) if found else None


def _find(page_text: str, passage: str) -> Found | None:
    page, where = canonical(page_text)
    wanted, _ = canonical(passage)
    if not page or not wanted:
        return None
    at = page.find(wanted)
    if at >= 0:
        return Found(where[at], where[at + len(wanted) - 1] + 1)
    if len(wanted) < WINDOW:
        return None
    # Part of it is here: its head, its tail, or (a passage of many pages) the whole page. The
    # stretch of the page whose windows are in the passage is that part; where the passage's
    # head or tail is on the page, the part starts or ends exactly there.
    starts = [*range(0, max(1, len(page) - WINDOW + 1), WINDOW // 2), max(0, len(page) - WINDOW)]
    hits = [i for i in starts if page[i : i + WINDOW] in wanted]
    if not hits:
        return None
    first, last = min(hits), min(len(page), max(hits) + WINDOW)
    head, tail = wanted[:ENDS], wanted[-ENDS:]
    h, t = page.find(head), page.rfind(tail)
    began_before, runs_on = h < 0, t < 0 or t < h
    if not began_before:
        first = h
    elif first <= WINDOW:  # the page opens with it
        first = 0
    if not runs_on:
        last = t + len(tail)
    elif last >= len(page) - WINDOW:  # the page ends with it
        last = len(page)
    if last <= first:
        return None
    return Found(where[first], where[last - 1] + 1, runs_on=runs_on, began_before=began_before)


def passage_pages(texts: dict[int, str], page: int, passage: str) -> dict[int, Found]:
    """The pages (of `texts`, by number) the passage cited on `page` lies on, with its range on each."""
    found: dict[int, Found] = {}
    here = find_passage(texts.get(page, ""), passage)
    if here is None:
        return found
    found[page] = here
    number = page
    while found[number].began_before and number - 1 in texts:  # its head is on the page before
        before = find_passage(texts[number - 1], passage)
        if before is None or not before.runs_on:
            break
        number -= 1
        found[number] = before
    number = page
    while found[number].runs_on and number + 1 in texts:  # its tail is on the next page
        after = find_passage(texts[number + 1], passage)
        if after is None or not after.began_before:
            break
        number += 1
        found[number] = after
    return found


@dataclass
class MarkedPage:
    number: int
    image: object  # a PIL image of the page
    boxes: list[tuple[float, float, float, float]] = field(default_factory=list)  # fractions: x0, y0, x1, y1


def pdf_passage_pages(path: str, page: int, passage: str) -> list[MarkedPage]:
    """The PDF pages holding the passage cited on `page`, rendered, each with the rectangles of
    the lines it covers; [] where the passage is not in the PDF's text layer (the viewer then
    shows the whole document with a phrase found by QtPdf)."""
    import pypdfium2
    import pypdfium2.raw as pdfium

    document = pypdfium2.PdfDocument(path)
    try:
        count = len(document)
        textpages, texts = {}, {}
        for number in range(max(1, page - 1), min(count, page + 1) + 1):
            textpage = document[number - 1].get_textpage()
            chars = textpage.count_chars()
            # Character by character: get_text_range() need not keep pdfium's character indices.
            texts[number] = "".join(chr(pdfium.FPDFText_GetUnicode(textpage, i)) for i in range(chars))
            textpages[number] = textpage
        marked = []
        for number, found in sorted(passage_pages(texts, page, passage).items()):
            pdf_page = document[number - 1]
            width, height = pdf_page.get_size()
            image = pdf_page.render(scale=VIEW_WIDTH / max(width, 1)).to_pil()
            boxes = []
            if pdf_page.get_rotation() == 0:  # rectangles are in unrotated page space
                textpage = textpages[number]
                for i in range(textpage.count_rects(found.start, found.end - found.start)):
                    left, bottom, right, top = textpage.get_rect(i)
                    boxes.append((left / width, 1 - top / height, right / width, 1 - bottom / height))
            marked.append(MarkedPage(number, image, boxes))
        return marked if any(p.boxes for p in marked) else []
    finally:
        document.close()
