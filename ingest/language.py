"""What language a text is in: the one rule, for documents (ingest/pipeline.py labels them) and
questions (the language an answer is written in, engine/prompts.py), and the CJK share that
search reads (engine/retrieval/query.py).

By script first: kana mark Japanese even among many kanji (Japanese writes its content words in
kanji and its grammar in kana, so a kana share of a few percent is enough); Hangul marks Korean;
Han characters with neither, Chinese; then Arabic and Cyrillic. Each script must be a share of
the letters, so an English question naming a Chinese term stays English. A Latin-script text is
told by its stopwords. The codes returned are CODES; what each is called in a prompt, and the
instruction to answer in it, is engine/prompts.py's LANGUAGES table.
"""

from __future__ import annotations

import re

from ingest.cjk import CJK_RANGES, HAN_RANGES, HANGUL_RANGES, KANA_RANGES

CODES = ("en", "zh", "ja", "ko", "de", "fr", "es", "ar", "ru")
KANA_SHARE = 0.05  # of the letters: Japanese
SCRIPT_SHARE = 0.3  # of the letters: Korean, Chinese, Arabic, Russian
SHORT_WORDS = 12  # a text this short (a question) is told by one stopword, not two

_KANA = re.compile(f"[{KANA_RANGES}]")
_HAN = re.compile(f"[{HAN_RANGES}]")
_CJK = re.compile(f"[{CJK_RANGES}]")
_SCRIPTS = (
    ("ko", re.compile(f"[{HANGUL_RANGES}]")),
    ("zh", _HAN),
    ("ar", re.compile(r"[\u0600-\u06ff]")),
    ("ru", re.compile(r"[\u0400-\u04ff]")),
)
# Words of a language's grammar, and the question words a short question is told by.
_STOPWORDS = {
    "en": {"the", "and", "of", "to", "is", "in", "that", "for", "with", "what", "how", "does", "are", "which"},
    "de": {"der", "die", "und", "ist", "das", "nicht", "mit", "sich", "ein", "wie", "welche", "warum", "wer", "hat"},
    "fr": {"le", "la", "les", "et", "est", "des", "une", "pour", "dans", "comment", "quel", "quelle", "pourquoi"},
    "es": {"el", "los", "las", "y", "es", "por", "una", "para", "con", "qué", "cómo", "cuál", "cuáles", "del"},
}
_WORD = re.compile(r"[a-zà-ÿß]+")
_LATIN = re.compile(r"[a-z0-9]+")


def guess_language(text: str, sample_chars: int = 20000) -> str:
    """The language code of `text` (one of CODES), or "" when neither script nor stopwords tell."""
    sample = text[:sample_chars]
    letters = sum(ch.isalpha() for ch in sample) or 1
    if len(_KANA.findall(sample)) > letters * KANA_SHARE:
        return "ja"
    for code, pattern in _SCRIPTS:
        if len(pattern.findall(sample)) > letters * SCRIPT_SHARE:
            return code
    words = _WORD.findall(sample.lower())
    if not words:
        return ""
    scores = {code: sum(w in stop for w in words) for code, stop in _STOPWORDS.items()}
    best = max(scores, key=scores.__getitem__)
    return best if scores[best] >= (1 if len(words) < SHORT_WORDS else 2) else ""


def question_language(question: str) -> str:
    """The language to answer a question in: its own, English when nothing tells."""
    return guess_language(question) or "en"


def cjk_share(text: str) -> float:
    """The share of the text's letters and digits written in kana, Han or Hangul: how much of it
    an English-only embedder cannot read (digits count: "V100" is read like English)."""
    alnum = [ch for ch in text if ch.isalnum()]
    if not alnum:
        return 0.0
    return sum(1 for ch in alnum if _CJK.match(ch)) / len(alnum)


def has_han(text: str) -> bool:
    """Whether the text holds Chinese characters (Han: Chinese words, or Japanese kanji)."""
    return _HAN.search(text) is not None


def mostly_chinese(text: str) -> bool:
    """Whether a passage is mostly Chinese: its Han characters, taken as words of 1.5 characters,
    outnumber its Latin words (a Chinese passage quoting code or English terms stays Chinese)."""
    return len(_HAN.findall(text)) / 1.5 > len(_LATIN.findall(text.lower()))
