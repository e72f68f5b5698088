"""A cheap language guess by script and stopwords; enough to label documents and pick prompts."""

from __future__ import annotations

import re

_KANA = re.compile(r"[\u3040-\u30ff]")
_SCRIPTS = (
    ("ko", re.compile(r"[\uac00-\ud7af]")),
    ("zh", re.compile(r"[\u4e00-\u9fff\u3400-\u4dbf]")),
    ("ar", re.compile(r"[\u0600-\u06ff]")),
    ("ru", re.compile(r"[\u0400-\u04ff]")),
)
_STOPWORDS = {
    "en": {"the", "and", "of", "to", "is", "in", "that", "for", "with"},
    "de": {"der", "die", "und", "ist", "das", "nicht", "mit", "sich", "ein"},
    "fr": {"le", "la", "les", "et", "est", "des", "une", "pour", "dans"},
    "es": {"el", "los", "las", "y", "es", "por", "una", "para", "con"},
}
_WORD = re.compile(r"[a-zà-ÿß]+")


def guess_language(text: str, sample_chars: int = 20000) -> str:
    sample = text[:sample_chars]
    letters = sum(ch.isalpha() for ch in sample) or 1
    if len(_KANA.findall(sample)) > letters * 0.05:  # kana mark Japanese even among many kanji
        return "ja"
    for code, pattern in _SCRIPTS:
        if len(pattern.findall(sample)) > letters * 0.3:
            return code
    words = _WORD.findall(sample.lower())
    if not words:
        return ""
    scores = {code: sum(w in stop for w in words) for code, stop in _STOPWORDS.items()}
    best = max(scores, key=scores.__getitem__)
    return best if scores[best] >= 2 else ""
