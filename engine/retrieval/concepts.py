"""A question's Chinese words as *concepts*: each a word that a passage matches either by holding
the word itself or by holding one of its English senses from the dictionary
(engine/retrieval/zh_en_dictionary.py: 所有权 is ownership, possession, property, rights…, with
simple inflections). The question's Latin words are concepts too, matched as written. An English
question over a library that holds Chinese has its words as concepts the other way round
(`english_concepts`): each matched as written or by the Chinese words that say it
(engine/retrieval/en_zh_dictionary.py: city is 城市, 本市, 都市). Made once per question, into its
Query (engine/retrieval/query.py); read by the keyword search across languages and the coverage
rule (engine/retrieval/bilingual_keywords.py).
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from engine.retrieval import en_zh_dictionary
from engine.retrieval import zh_en_dictionary as dictionary
from ingest.cjk import HAN_RANGES
from ingest.keywords import query_tokens
from ingest.language import has_han

_HAN_RUN = re.compile(f"[{HAN_RANGES}]+")
_LATIN_WORD = re.compile(r"[A-Za-z][A-Za-z0-9_]+")
SINGLE_CHARACTER_WEIGHT = 0.5  # a one-character word is ambiguous; it counts half


@dataclass(frozen=True)
class Concept:
    label: str
    native: str | None  # the Chinese word as a passage would contain it; None for a Latin word
    forms: frozenset[str]  # lower-case English words that also match it
    weight: float
    senses: tuple[frozenset[str], ...] = ()  # its English senses, each the words a passage must all hold
    chinese: tuple[str, ...] = ()  # an English question's word: the Chinese words that say it

    @property
    def han_words(self) -> tuple[str, ...]:
        """The Chinese words a passage may hold it by: the word itself, or those that say it."""
        return ((self.native,) if self.native else ()) + self.chinese

    def held_in(self, lower: str, latin: set[str]) -> bool:
        """Whether a passage (lower-cased, and its Latin words) says this: the Chinese word itself (or
        one that says it), or every word of one English sense (红烧肉 is "pork braised in soy sauce",
        not "sauce")."""
        if any(word in lower for word in self.han_words):
            return True
        return any(all(inflections(w) & latin for w in sense) for sense in self.senses)


def wanted(question: str) -> bool:
    """Whether a question has Chinese words to look up, and the dictionary is there to look them up."""
    return has_han(question) and dictionary.available()


def wanted_in_english(question: str) -> bool:
    """Whether an English question's words can be looked up in Chinese (the caller knows whether the
    library holds Chinese)."""
    return not has_han(question) and en_zh_dictionary.available()


def warm_up(english: bool = False) -> None:
    if dictionary.available():
        dictionary.segment("预热")
    if english:
        en_zh_dictionary.warm_up()


def inflections(word: str) -> set[str]:
    """The word and the simple English inflections a passage may use (rules, ruled, ruling)."""
    forms = {word, word + "s", word + "es", word + "ed", word + "ing"}
    if word.endswith("e"):
        forms |= {word + "d", word[:-1] + "ing"}
    if word.endswith("y"):
        forms.add(word[:-1] + "ies")
    return forms


def _han_words(run: str) -> list[tuple[str, bool]]:
    """(word, in the dictionary) for a run of Han characters; characters the dictionary does not
    know stay together as one word (a name, a new term), matched as written."""
    words: list[tuple[str, bool]] = []
    for piece in dictionary.segment(run):
        is_known = dictionary.known(piece) and (len(piece) > 1 or piece not in dictionary.FUNCTION_WORDS)
        if not is_known and piece not in dictionary.FUNCTION_WORDS and words and not words[-1][1]:
            words[-1] = (words[-1][0] + piece, False)
        else:
            words.append((piece, is_known))
    return [(w, k) for w, k in words if w not in dictionary.FUNCTION_WORDS]


def concepts(question: str) -> list[Concept]:
    """The question's concepts: its Chinese words (without its grammar), then its Latin words."""
    found: list[Concept] = []
    for run in _HAN_RUN.findall(question):
        for word, is_known in _han_words(run):
            senses = dictionary.english_senses(word) if is_known else ()
            forms = frozenset(f for sense in senses for w in sense for f in inflections(w))
            weight = 1.0 if len(word) > 1 else SINGLE_CHARACTER_WEIGHT
            found.append(Concept(word, word, forms, weight, senses))
    for word in _LATIN_WORD.findall(question):
        lower = word.lower()
        found.append(Concept(word, None, frozenset(inflections(lower)), 1.0, (frozenset([lower]),)))
    return found


def english_concepts(question: str) -> list[Concept]:
    """An English question's keywords (ingest.keywords.query_tokens, without its grammar) as
    concepts, each with the Chinese words that say it; a word the dictionary does not know (a name,
    a number) is matched as written."""
    found = []
    for word in query_tokens(question):
        if word.isascii() and word.isalpha():
            chinese = en_zh_dictionary.chinese_words(word)
            found.append(Concept(word, None, frozenset(inflections(word)), 1.0, (frozenset([word]),), chinese))
    return found
