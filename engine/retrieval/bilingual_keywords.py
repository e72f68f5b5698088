"""Keyword search for a Chinese question across Chinese and English passages alike.

FTS5 matches a Chinese question's character bigrams, so keyword search used to rank Chinese
passages only and a Chinese reader of English documents got only the dense channel's
cross-language matches. Here the question is cut into words (engine/retrieval/zh_en_dictionary.py); each
word is a *concept* that a passage matches either by containing the word itself or any of its
dictionary English words (所有权: ownership, possession, property, rights…, with simple inflections).
Every candidate passage, of either language, is scored the same way, BM25-like: per concept the
best of its forms (idf times saturated term frequency), summed, with passage length counted in
words on both sides (a Chinese word taken as 1.5 characters) so neither language is favoured.
Treating a word's translations as one concept keeps a word with many senses from outweighing one
with a single sense (Pirkola's structured queries).
"""

from __future__ import annotations

import math
import re
from dataclasses import dataclass

from engine.retrieval import zh_en_dictionary as dictionary
from ingest.keywords import affordable_tokens, query_tokens
from ingest.store.library import Library

_HAN_RUN = re.compile(r"[\u3400-\u4dbf\u4e00-\u9fff\uf900-\ufaff]+")
_HAN = re.compile(r"[\u3400-\u4dbf\u4e00-\u9fff\uf900-\ufaff]")
_LATIN = re.compile(r"[a-z0-9]+")
_LATIN_WORD = re.compile(r"[A-Za-z][A-Za-z0-9_]+")
CANDIDATES = 300  # of each kind (English forms, the question's own tokens) scored per question
AVERAGE_WORDS = 300  # the passage length BM25's length normalisation is relative to
K1, B = 1.2, 0.75
SINGLE_CHARACTER_WEIGHT = 0.5
# A concept found through the dictionary is weaker evidence than the question's own words (a word's
# senses are many, and one matching word is not the question): its coverage counts half. Chosen on
# the calibration questions (tests/eval/calibrate_relevance.py): at 0.5, 59 of 60 questions asked
# across languages are kept and 19 of 24 unrelated declined; at 1.0, 60 and 15; without the
# dictionary's coverage, 54 and 20. Held-out unrelated: 17 of 18 declined at 0.5, 14 at 1.0.
CROSSING_DISCOUNT = 0.5  # a one-character word is ambiguous; it counts half


@dataclass(frozen=True)
class Concept:
    label: str
    native: str | None  # the Chinese word as a passage would contain it; None for a Latin word
    forms: frozenset[str]  # lower-case English words that also match it
    weight: float
    senses: tuple[frozenset[str], ...] = ()  # its English senses, each the words a passage must all hold

    def held_in(self, lower: str, latin: set[str]) -> bool:
        """Whether a passage (lower-cased, and its Latin words) says this: the Chinese word itself, or
        every word of one English sense (红烧肉 is "pork braised in soy sauce", not "sauce")."""
        if self.native is not None and self.native in lower:
            return True
        return any(all(inflections(w) & latin for w in sense) for sense in self.senses)


def warm_up() -> None:
    if dictionary.available():
        dictionary.segment("预热")


def wanted(question: str) -> bool:
    return bool(_HAN.search(question)) and dictionary.available()


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


def _idf(total: int, having: int) -> float:
    return math.log(1 + (total - having + 0.5) / (having + 0.5))


def _saturated(count: int, norm: float) -> float:
    return count * (K1 + 1) / (count + norm)


def rank(library: Library, question: str, k: int, doc_ids: list[str] | None = None) -> list[tuple[int, float]]:
    """(passage id, score) best first, Chinese and English passages scored alike."""
    found = concepts(question)
    if not found:
        return []
    forms = sorted({f for c in found for f in c.forms})
    total, having = library.keyword_document_counts(forms)
    present = [f for f in forms if having.get(f)]
    if not doc_ids:  # a common word costs every passage it appears in (ingest.keywords.POSTING_BUDGET)
        present = affordable_tokens(present, having)
    own = query_tokens(question)
    if own and not doc_ids:
        own = affordable_tokens(own, library.keyword_passage_counts(own))
    candidates = [i for i, _ in library.keyword_search(present, CANDIDATES, doc_ids)]
    candidates += [i for i, _ in library.keyword_search(own, CANDIDATES, doc_ids)]
    rows = library.passages(dict.fromkeys(candidates))
    form_idf = {f: _idf(total, having[f]) for f in present}
    native_idf = {c.native: _idf(total, _native_count(library, c.native)) for c in found if c.native}
    scored = []
    for passage_id, row in rows.items():
        lower = row.text.lower()
        latin = _LATIN.findall(lower)
        length = len(latin) + len(_HAN.findall(row.text)) / 1.5
        norm = K1 * (1 - B + B * length / AVERAGE_WORDS)
        counts: dict[str, int] = {}
        for word in latin:
            if word in form_idf:
                counts[word] = counts.get(word, 0) + 1
        score = 0.0
        for concept in found:
            best = 0.0
            if concept.native and (n := lower.count(concept.native)):
                best = native_idf[concept.native] * _saturated(n, norm)
            for form in concept.forms & counts.keys():
                best = max(best, form_idf[form] * _saturated(counts[form], norm))
            score += concept.weight * best
        if score > 0:
            scored.append((passage_id, score))
    scored.sort(key=lambda pair: -pair[1])
    return scored[:k]


def coverages(library: Library, question: str, texts: list[str]) -> list[float]:
    """For each text, the IDF-weighted share of the question's concepts it holds, in either language
    (Concept.held_in): the keyword evidence of the "nothing relevant" rule (engine/retrieval/relevance.py)."""
    found = concepts(question)
    if not found:
        return [0.0] * len(texts)
    forms = sorted({f for c in found for f in c.forms})
    total, having = library.keyword_document_counts(forms)
    weights = []
    for concept in found:
        counts = [having.get(f, 0) for f in concept.forms]
        if concept.native:
            counts.append(_native_count(library, concept.native))
        weights.append(concept.weight * _idf(total, max(counts, default=0)))
    whole = sum(weights) or 1.0
    shares = []
    for text in texts:
        lower = text.lower()
        latin = set(_LATIN.findall(lower))
        shares.append(
            CROSSING_DISCOUNT * sum(w for w, c in zip(weights, found, strict=True) if c.held_in(lower, latin)) / whole
        )
    return shares


def chinese(text: str) -> bool:
    """Whether a passage is mostly Chinese: its Han characters, as words, outnumber its Latin words."""
    return len(_HAN.findall(text)) / 1.5 > len(_LATIN.findall(text.lower()))


def alternate_languages(library: Library, ranked: list[tuple[int, float]]) -> list[tuple[int, float]]:
    """A dense ranking for a Chinese question with its Chinese and English passages taking turns,
    each language in its own order. The embedder's similarities across languages run lower than
    within one (and its English-only half clusters Chinese text), so without this the English
    passages that answer a Chinese question sit below Chinese ones that do not. Measured on the
    eval library (README, "Choosing the embedder"): Chinese questions over English chapters found
    0.90 within 1,500 tokens against 0.84, Chinese over Chinese unchanged at 1,500. English
    questions keep their plain ranking: alternating cost them 0.97 -> 0.93."""
    rows = library.passages([i for i, _ in ranked])
    han = [pair for pair in ranked if pair[0] in rows and chinese(rows[pair[0]].text)]
    latin = [pair for pair in ranked if pair[0] in rows and not chinese(rows[pair[0]].text)]
    turns = [pair for couple in zip(han, latin, strict=False) for pair in couple]
    shorter = min(len(han), len(latin))
    return turns + han[shorter:] + latin[shorter:]


def _native_count(library: Library, word: str) -> int:
    """Passages holding a Chinese word, estimated from the index: its rarest bigram's count."""
    tokens = query_tokens(word) if len(word) > 1 else [word]
    counts = library.keyword_passage_counts(tokens)
    return min(counts.values()) if counts else 0
