"""English words and the Chinese words that say them: CC-CEDICT read backwards, each English word's
Chinese words ranked by how common they are in Chinese text.

Used to search Chinese passages with an English question's words (engine/retrieval/concepts.py,
`english_concepts`): without it an English reader of Chinese documents gets only the dense
channel's cross-language matches, and a Chinese passage's best window of sentences cannot be told
from its worst. A Chinese word stands for an English word where one of its CC-CEDICT senses
(zh_en_dictionary, split at "/" and ";") is that word alone ("to found" for 建立, "city" for
城市); of those, the commonest in jieba's dictionary (349,046 words with their counts in a large
corpus of Chinese text; MIT licence) come first, a later sense of a word counting less (城市 is a
city first, 华 a "magnificent" third). Loaded on the first English question over a library that
holds Chinese (~1 s, ~10 MB kept) or by warm_up; `available()` is False where either package
is missing, and search then goes on without it.
"""

from __future__ import annotations

import re
import threading
from functools import lru_cache

from engine.retrieval import zh_en_dictionary as zh_en

FREQUENCIES = ("jieba", "dict.txt")
PER_WORD = 4  # Chinese words kept per English word (tune split, en→zh within 500: 3 words 0.66, 4 0.68, 5 0.68)
MIN_COUNT = 5  # in jieba's counts: rarer words are names, idioms and OCR of old texts
SHARE_OF_BEST = 0.02  # a Chinese word far rarer than the best one for the sense is left out
# Past forms and plurals a suffix rule cannot undo, as questions use them ("who won", "when was it built").
_IRREGULAR = dict(
    pair.split(":")
    for pair in """won:win wrote:write written:write built:build began:begin begun:begin became:become
    took:take taken:take gave:give given:give made:make led:lead held:hold fought:fight taught:teach
    sold:sell bought:buy brought:bring thought:think spent:spend sent:send lost:lose met:meet paid:pay
    ran:run saw:see seen:see said:say told:tell went:go gone:go grew:grow grown:grow knew:know
    known:know chose:choose chosen:choose spoke:speak spoken:speak rose:rise fell:fall drew:draw
    drawn:draw struck:strike kept:keep stood:stand came:come got:get ate:eat eaten:eat flew:fly
    drove:drive driven:drive sang:sing sung:sing threw:throw thrown:throw wore:wear worn:wear
    men:man women:woman children:child feet:foot teeth:tooth mice:mouse""".split()
)
_SENSE_SPLIT = re.compile(r"[/;]")
_lock = threading.Lock()
_words: dict[str, tuple[tuple[float, str], ...]] | None = None


def available() -> bool:
    from importlib.util import find_spec

    return zh_en.available() and find_spec(FREQUENCIES[0]) is not None


def _counts() -> dict[str, int]:
    """{word: its count} from jieba's dictionary ("word count part-of-speech" per line)."""
    from importlib.resources import files

    counts: dict[str, int] = {}
    with files(FREQUENCIES[0]).joinpath(FREQUENCIES[1]).open(encoding="utf-8") as lines:
        for line in lines:
            word, _, rest = line.partition(" ")
            count = rest.split(" ", 1)[0]
            if count.isdigit():
                counts[word] = int(count)
    return counts


def _load() -> dict[str, tuple[tuple[float, str], ...]]:
    """{English word: (score, Chinese word) best first}; words of two to four characters only (one
    character is found inside too many others to stand for a word)."""
    global _words
    with _lock:
        if _words is None:
            counts = _counts()
            scored: dict[str, list[tuple[float, str]]] = {}
            for chinese, entry in zh_en._load().items():
                count = counts.get(chinese, 0)
                if not 2 <= len(chinese) <= 4 or count < MIN_COUNT:
                    continue
                for position, sense in enumerate(_SENSE_SPLIT.split(entry)):
                    if len(words := zh_en.sense_words(sense)) == 1:  # a sense that is one word alone
                        scored.setdefault(words[0], []).append((count / (1 + position), chinese))
            _words = {english: tuple(sorted(found, reverse=True)[: 4 * PER_WORD]) for english, found in scored.items()}
        return _words


def lemmas(word: str) -> list[str]:
    """The word and the base forms an inflected English word may have (founded -> found, cities ->
    city, largest -> large), most likely first."""
    forms = [word, *([_IRREGULAR[word]] if word in _IRREGULAR else [])]
    for suffix, replacements in (
        ("ies", ("y",)), ("ied", ("y",)), ("iest", ("y",)), ("ier", ("y",)), ("es", ("", "e")),
        ("s", ("",)), ("ed", ("", "e")), ("ing", ("", "e")), ("est", ("", "e")), ("er", ("", "e")),
    ):  # fmt: skip
        if word.endswith(suffix) and len(word) - len(suffix) >= 3:
            stem = word[: -len(suffix)]
            forms += [stem + r for r in replacements]
            if len(stem) >= 4 and stem[-1] == stem[-2]:  # stopped -> stop, biggest -> big
                forms.append(stem[:-1])
    return list(dict.fromkeys(forms))


@lru_cache(maxsize=4096)
def chinese_words(word: str) -> tuple[str, ...]:
    """The Chinese words for a lower-case English word, of the word and its base forms together
    (cities: 城市 from "city" before 城邑 from "cities"), best first."""
    words = _load()
    found: dict[str, float] = {}
    for form in lemmas(word):
        for score, chinese in words.get(form, ()):
            found[chinese] = max(found.get(chinese, 0.0), score)
    if not found:
        return ()
    best = max(found.values())
    ranked = sorted((c for c, score in found.items() if score >= SHARE_OF_BEST * best), key=lambda c: -found[c])
    return tuple(ranked[:PER_WORD])


def warm_up() -> None:
    if available():
        chinese_words("warm")
