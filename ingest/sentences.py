"""Sentence units: the spans a block is made of, cut at sentence and paragraph ends.

`sentence_units` splits a whole text. `SentenceWindow` finds the same units in a text that
arrives in pieces, looking at each character a bounded number of times and holding only
the text not yet consumed. It searches up to a *safe point*: just after a character that
no sentence or paragraph end can contain (neither whitespace nor their punctuation). Every
match before it is then the match of the whole text, whatever follows, and the search can
go on from there; so the units do not depend on where pages or windows end.
"""

from __future__ import annotations

import re
from collections import deque
from dataclasses import dataclass

from ingest.cjk import CJK_RANGES

# Sentence ends: Latin punctuation before whitespace, CJK full stops anywhere
# (after NFKC, full-width ！？； have become !?;, so those count when CJK precedes them).
_SENTENCE_END = re.compile(rf"(?:[.!?…]+[\"'”’»)\]]*(?=\s)|[。！？；]+[”’」』)]*|(?<=[{CJK_RANGES}])[!?;]+)")
_PARAGRAPH_END = re.compile(r"\n\s*\n")
# The last character that is neither whitespace nor any punctuation of the two patterns above.
_LAST_SAFE = re.compile(r"(?s).*[^\s.!?…\"'”’»)\]。！？；」』;]")
FORCE_WINDOW_CHARS = 1 << 22  # no safe point in this many (only punctuation and spaces): cut anyway


@dataclass(frozen=True)
class _Unit:
    start: int
    end: int
    paragraph_end: bool


def sentence_units(text: str) -> list[_Unit]:
    """Split text into contiguous sentence spans covering all of it."""
    cuts: dict[int, bool] = {}
    for match in _SENTENCE_END.finditer(text):
        cuts.setdefault(match.end(), False)
    for match in _PARAGRAPH_END.finditer(text):
        cuts[match.start()] = True
    units: list[_Unit] = []
    start = 0
    for position in sorted(cuts):
        if position > start:
            units.append(_Unit(start, position, cuts[position]))
            start = position
    if start < len(text):
        units.append(_Unit(start, len(text), True))
    return units


class SentenceWindow:
    """The units of a growing text, as (start, end, paragraph_end) in offsets of the whole text.

    A unit longer than `max_unit_chars` (a table, a dump) is cut at a space in its second
    half, or anywhere if there is none. `feed` text, take `units`, and `release` what is no
    longer needed; `text(start, end)` reads what is still held.
    """

    def __init__(self, max_unit_chars: int) -> None:
        self.max_unit_chars = max_unit_chars
        self.length = 0  # characters fed so far
        self._incoming: list[str] = []
        self._buf, self._base = "", 0  # the text from _base on
        self._keep = 0  # text before this is not needed any more, but for units not yet taken
        self._resume = 0  # sentence ends are searched from here on
        self._checked = 0  # no safe point between _resume and here
        self._cuts: deque[tuple[int, bool]] = deque()  # (position, paragraph end) not yet made units
        self._unit_start = 0

    def feed(self, text: str) -> None:
        self._incoming.append(text)
        self.length += len(text)

    def release(self, upto: int) -> None:
        """Text before `upto` will not be asked for again, units to come excepted."""
        self._keep = upto

    def text(self, start: int, end: int) -> str:
        return self._buf[start - self._base : end - self._base]

    def units(self, final: bool) -> list[tuple[int, int, bool]]:
        """The units that are complete: up to the last safe point, or to the end when final."""
        if self._incoming:
            keep = min(self._keep, self._unit_start, max(0, self._resume - 1))  # lookbehind: one more
            self._buf, self._base = self._buf[keep - self._base :] + "".join(self._incoming), keep
            self._incoming = []
        safe = self.length if final else self._safe_point()
        if safe > self._resume:
            self._find_cuts(self._resume, safe)
            self._resume = safe
        return self._units_upto(safe, final)

    def _safe_point(self) -> int:
        match = _LAST_SAFE.match(self._buf, max(self._resume, self._checked) - self._base, self.length - self._base)
        self._checked = self.length
        if match:
            return self._base + match.end()
        return self.length if self.length - self._resume > FORCE_WINDOW_CHARS else self._resume

    def _find_cuts(self, lo: int, hi: int) -> None:
        """Sentence and paragraph ends in [lo, hi), as sentence_units finds them in the whole text."""
        buf, base = self._buf, self._base
        cuts: dict[int, bool] = {}
        for match in _SENTENCE_END.finditer(buf, lo - base, hi - base):
            cuts.setdefault(match.end() + base, False)
        for match in _PARAGRAPH_END.finditer(buf, lo - base, hi - base):
            cuts[match.start() + base] = True
        self._cuts.extend(sorted(cuts.items()))

    def _units_upto(self, safe: int, final: bool) -> list[tuple[int, int, bool]]:
        units: list[tuple[int, int, bool]] = []
        start, cuts, limit = self._unit_start, self._cuts, self.max_unit_chars
        while True:
            while cuts and cuts[0][0] <= start:
                cuts.popleft()
            if cuts:
                end, paragraph_end = cuts[0]
            elif final and start < self.length:
                end, paragraph_end = self.length, True
            elif safe - start > limit:  # its end lies past the window, so it is long
                end, paragraph_end = None, False
            else:
                break
            if end is None or end - start > limit:
                space = self._buf.rfind(" ", start + limit // 2 - self._base, start + limit - self._base)
                end, paragraph_end = (space + 1 + self._base if space != -1 else start + limit), False
            units.append((start, end, paragraph_end))
            start = end
        self._unit_start = start
        return units
