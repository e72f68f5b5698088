"""A question as every stage of an answer reads it: the `Query` record, made once per question
(after a follow-up is rewritten to stand alone) and handed to search, the relevance rule,
reranking, the page pin and the prompt (engine/answer.py), so that none of them works out the
question's language, CJK share, page or keyword weights again.

What it holds: the text searched and the question as asked; the language the answer is written
in (ingest/language.py, of the question as asked); the CJK share and, from it, how far the
embedding channel is trusted; the page the question names ("and on page 5?"); the question's
keyword terms, each with its BM25 IDF over the library (one read of the FTS5 index's counts);
and, for a question with Chinese words (or an English one over a library holding Chinese), its
dictionary concepts (engine/retrieval/concepts.py) with the IDF of every word and form that
stands for them.
"""

from __future__ import annotations

import math
import re
from dataclasses import dataclass, field
from functools import cached_property

from engine.retrieval import concepts as concept_words
from engine.retrieval.concepts import Concept
from ingest.keywords import query_tokens
from ingest.language import cjk_share, question_language
from ingest.store.library import Library

_PAGE_REFERENCE = re.compile(r"\b(?:pages?|p\.|pp\.)\s*(\d{1,5})|第\s*(\d{1,5})\s*页", re.IGNORECASE)
MIN_DENSE_WEIGHT = 0.05  # an English-only embedder still breaks ties on a Chinese question


@dataclass(frozen=True)
class Term:
    """A keyword of the question (or a word standing for one of its concepts), weighed over the library."""

    text: str
    passages: int  # passages holding it, from the FTS5 index's own counts
    idf: float


def bm25_idf(total: int, having: int) -> float:
    """BM25's IDF: a term in every passage weighs ~0, one in none weighs most."""
    return math.log(1 + (total - having + 0.5) / (having + 0.5))


def dense_weight(share: float, multilingual: bool) -> float:
    """How much to trust the embedding channel for a query with this CJK share.

    An English-only model (the bundled all-MiniLM-L6-v2) maps CJK text to near-noise,
    so for such queries the keyword channel decides, and the dense one only breaks ties.
    """
    return 1.0 if multilingual else max(MIN_DENSE_WEIGHT, 1.0 - share)


def page_reference(question: str) -> int | None:
    """The page a question names: "and on page 5?", "p. 12", "第 3 页"."""
    match = _PAGE_REFERENCE.search(question)
    return int(match.group(1) or match.group(2)) if match else None


@dataclass(frozen=True)
class Query:
    text: str  # as searched: a follow-up rewritten to stand alone
    asked: str  # as the user asked it
    language: str  # the answer's language, of the question as asked (ingest.language.question_language)
    cjk_share: float  # of `text`: kana, Han and Hangul among its letters and digits
    dense_weight: float  # how far the embedding channel is trusted for it
    page: int | None  # the page the question names, None when it names none
    total: int  # passages in the library when it was made: the IDFs' base
    terms: tuple[Term, ...]  # its keyword tokens (ingest.keywords.query_tokens), in order
    crossing: bool = False  # its keywords searched across languages (HybridRetriever.cross_language)
    # a Chinese question searched across languages: its dense ranking alternates them (retrieve.py)
    alternating: bool = False
    concepts: tuple[Concept, ...] = ()  # a Chinese question's dictionary concepts, or an English one's
    lexicon: tuple[Term, ...] = field(default=(), repr=False)  # the concepts' words and English forms

    @cached_property
    def _words(self) -> dict[str, Term]:
        return {term.text: term for term in self.lexicon}

    def word(self, text: str) -> Term:
        """A concept's word or English form, weighed (zero passages if the library has none)."""
        return self._words.get(text) or Term(text, 0, bm25_idf(self.total, 0))

    def passage_counts(self) -> dict[str, int]:
        """{term: passages holding it} for the question's own terms."""
        return {term.text: term.passages for term in self.terms}


def make_query(
    library: Library, text: str, asked: str | None = None, multilingual: bool = False, cross_language: bool = True
) -> Query:
    """The Query for `text` (as searched) over `library`; `asked`: the question as the user wrote it
    (the text itself when it was not rewritten). `multilingual`: whether the embedder reads more than
    English; `cross_language`: whether a Chinese question's keywords are also matched in English."""
    asked = text if asked is None else asked
    tokens = query_tokens(text)
    total, counts = library.keyword_document_counts(tokens)
    terms = tuple(Term(t, counts[t], bm25_idf(total, counts[t])) for t in tokens)
    # A Chinese question's concepts count towards coverage whatever the search does across languages;
    # an English question's Chinese words are looked up where the library holds Chinese to find.
    found: tuple[Concept, ...] = ()
    if concept_words.wanted(text):
        found = tuple(concept_words.concepts(text))
    elif cross_language and concept_words.wanted_in_english(text) and "zh" in library.document_languages():
        found = tuple(concept_words.english_concepts(text))
    share = cjk_share(text)
    return Query(
        text=text,
        asked=asked,
        language=question_language(asked),
        cjk_share=share,
        dense_weight=dense_weight(share, multilingual),
        page=page_reference(asked),
        total=total,
        terms=terms,
        crossing=cross_language and bool(found),
        alternating=cross_language and concept_words.wanted(text),
        concepts=found,
        lexicon=_lexicon(library, total, found),
    )


def _lexicon(library: Library, total: int, found: tuple[Concept, ...]) -> tuple[Term, ...]:
    """Every English form of the concepts, and every Chinese word among them, with its passages and
    IDF. A Chinese word's passages are estimated from the index: its rarest bigram's count."""
    if not found:
        return ()
    forms = sorted({f for c in found for f in c.forms})
    _, having = library.keyword_document_counts(forms)
    lexicon = [Term(f, having[f], bm25_idf(total, having[f])) for f in forms]
    natives = list(dict.fromkeys(word for c in found for word in c.han_words))
    pieces = {word: query_tokens(word) if len(word) > 1 else [word] for word in natives}
    counts = library.keyword_passage_counts(list(dict.fromkeys(t for p in pieces.values() for t in p)))
    for word in natives:
        passages = min((counts[t] for t in pieces[word]), default=0)
        lexicon.append(Term(word, passages, bm25_idf(total, passages)))
    return tuple(lexicon)
