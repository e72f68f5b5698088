"""Text repair applied to every extracted page before chunking."""

from __future__ import annotations

import re
import unicodedata

from ingest.cjk import CJK_PUNCTUATION, CJK_RANGES

# Control characters except tab and newline; NUL included.
_CONTROL = re.compile(r"[\x00-\x08\x0b\x0c\x0e-\x1f\x7f-\x9f\u200b\ufeff\ufffe]")
# A word broken by a hyphen at a line end: "informa-\ntion" -> "information".
# Only when a lower-case letter continues, so "Jean-\nPierre" keeps its hyphen.
_HYPHEN_BREAK = re.compile(r"(\w)[-\u00ad\u2010]\n[ \t]*([a-zà-ÿß])")
_SOFT_HYPHEN = re.compile("\u00ad")
_SPACES = re.compile(r"[^\S\n]+")  # any whitespace but newline
_TRAILING = re.compile(r" +\n")
_LEADING = re.compile(r"\n +")
_MANY_BLANK_LINES = re.compile(r"\n{3,}")
# Chinese and Japanese put no spaces between words: a line break between two CJK characters
# is layout (a PDF's line wrap), and keeping it would split words for search.
_CJK = CJK_RANGES + CJK_PUNCTUATION
_CJK_LINE_BREAK = re.compile(f"(?<=[{_CJK}]) ?\n ?(?=[{_CJK}])")


def normalize_text(text: str) -> str:
    """NFKC (ligatures, full-width forms), rejoin hyphenated words, drop control
    characters and repair whitespace. Paragraph breaks (blank lines) survive."""
    text = text.replace("\r\n", "\n").replace("\r", "\n")
    text = unicodedata.normalize("NFKC", text)
    text = _CONTROL.sub("", text)
    text = _HYPHEN_BREAK.sub(r"\1\2", text)
    text = _SOFT_HYPHEN.sub("", text)
    text = _SPACES.sub(" ", text)
    text = _TRAILING.sub("\n", text)
    text = _LEADING.sub("\n", text)
    text = _MANY_BLANK_LINES.sub("\n\n", text)
    text = _CJK_LINE_BREAK.sub("", text)
    return text.strip()
