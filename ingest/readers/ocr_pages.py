"""What readers keep of OCR'd pages: the record stored with the page, and a tally for warnings."""

from __future__ import annotations

from dataclasses import dataclass, field

from ingest.ocr import OcrPage
from ingest.readers.page_ranges import page_ranges
from ingest.records import PageOcr

# How a user turns OCR back on when the caller had it off: the app's setting (app/desk/settings.py)
# and its environment override.
OCR_OFF_HINT = "turn OCR on to read scans ([ingest] ocr = true in config.toml, and DOCDESK_OCR not 0)"


def page_ocr(result: OcrPage) -> PageOcr:
    return PageOcr(
        result.confidence,
        tuple((ln.start, ln.end, *ln.box, ln.score) for ln in result.lines),
        result.rotated,
        result.skew,
    )


@dataclass
class OcrTally:
    pages: int = 0
    read: list[int] = field(default_factory=list)  # pages OCR found text on
    blank: list[int] = field(default_factory=list)  # pages it found none on
    chars: int = 0
    weighted: float = 0.0
    seconds: float = 0.0
    damaged: str = ""

    def add(self, number: int, result: OcrPage) -> None:
        self.pages += 1
        self.seconds += result.seconds
        (self.read if result.text.strip() else self.blank).append(number)
        chars = len(result.text)
        self.chars += chars
        self.weighted += result.confidence * chars

    @property
    def confidence(self) -> float:
        return self.weighted / self.chars if self.chars else 0.0

    def warnings(self) -> list[str]:
        found = []
        if self.read:
            found.append(
                f"text recognised by OCR on {len(self.read)} page(s), {page_ranges(self.read)}, "
                f"mean confidence {self.confidence:.2f}, {self.seconds:.0f} s"
            )
        if self.blank:
            found.append(f"OCR found no text on {len(self.blank)} page(s): {page_ranges(self.blank)}")
        if self.damaged:
            found.append(self.damaged)
        return found
