"""A source that no longer fits whole goes as the sentences that answer (engine/retrieval/trimming.py,
context.py), and a document's passages are ordered by the question's terms close together
(engine/retrieval/proximity.py)."""

from __future__ import annotations

from dataclasses import dataclass

import pytest

from engine.retrieval.context import build_sources
from engine.retrieval.coverage import TermScorer
from engine.retrieval.proximity import closeness, reorder_within_documents
from engine.retrieval.query import Query, Term
from engine.retrieval.retrieve import HybridRetriever
from engine.retrieval.trimming import best_window, sentence_spans

words = lambda text: len(text.split())  # noqa: E731 - a word count is enough to test the budget


def query_of(**idf: float) -> Query:
    terms = tuple(Term(t, 1, w) for t, w in idf.items())
    return Query("q", "q", "en", 0.0, 1.0, None, 100, terms)


def test_sentences_cover_the_text_in_both_scripts():
    text = "First one. Second! Third? 第一句。第二句！“第三句。”\n\nA new paragraph\nthat wraps."
    spans = sentence_spans(text)
    assert "".join(text[a:b] for a, b in spans) == text
    pieces = [text[a:b].strip() for a, b in spans]
    assert pieces == [
        "First one.",
        "Second!",
        "Third?",
        "第一句。",
        "第二句！",
        "“第三句。”",
        "A new paragraph\nthat wraps.",
    ]


def test_the_window_holds_the_question_and_its_surroundings_within_the_limit():
    filler = " ".join(f"Sentence {n} says nothing much here." for n in range(20))
    text = f"{filler} FAISS builds the index. It is fast. {filler}"
    first, last = best_window(query_of(faiss=3.0, index=1.0), text, words, 20)
    window = text[first:last]
    assert "FAISS builds the index." in window and words(window) <= 20
    assert window.strip().endswith(".")  # whole sentences
    # Nothing of the question in it, or no question: the passage stays whole.
    assert best_window(query_of(zebra=2.0), text, words, 20) == (0, len(text))
    assert best_window(None, text, words, 20) == (0, len(text))
    assert best_window(query_of(faiss=1.0), "Short. FAISS.", words, 20) == (0, len("Short. FAISS."))


def test_closeness_rewards_terms_in_neighbouring_sentences():
    scorer = TermScorer.of(query_of(tesla=2.0, patent=2.0))
    near = "Tesla filed a patent. Filler one. Filler two. Filler three."
    far = "Tesla was born. Filler one. Filler two. A patent came later."
    assert closeness(scorer, near) == pytest.approx(1.0)
    assert closeness(scorer, far) == pytest.approx(0.5)


@dataclass
class _Row:
    doc_id: str
    text: str


@dataclass
class _Hit:
    passage: _Row


def test_a_documents_passages_trade_places_only_among_its_own_slots():
    q = query_of(tesla=2.0, patent=2.0)
    hits = [
        _Hit(_Row("a", "Tesla was born. Nothing. Nothing. A patent later.")),
        _Hit(_Row("b", "Another document entirely.")),
        _Hit(_Row("a", "Nothing here.")),
        _Hit(_Row("a", "Tesla filed a patent.")),
    ]
    ordered = reorder_within_documents(q, hits)
    assert [h.passage.doc_id for h in ordered] == ["a", "b", "a", "a"]  # documents keep their slots
    assert ordered[0] is hits[3] and ordered[1] is hits[1]  # the closer match leads its document
    assert reorder_within_documents(query_of(), hits) == hits


@pytest.fixture(scope="module")
def retriever(corpus_library, embedder):
    library, _ = corpus_library
    return HybridRetriever(library, embedder)


def test_a_source_that_does_not_fit_goes_as_its_window_with_its_page(retriever):
    library = retriever.library
    query = retriever.query("What is the official language of Austria?")
    hits = retriever.search(query, 12).hits
    rows = {h.passage.id: h.passage for h in hits}
    budget = max(words(h.passage.text) for h in hits[:3]) // 2 + 40  # not every passage goes whole
    whole = build_sources(library, hits[:3], budget, words, query, trim=False)
    trimmed = build_sources(library, hits[:3], budget, words, query)
    assert sum(s.tokens for s in trimmed) <= budget
    windows = [s for s in trimmed if len(s.passage_ids) == 1 and len(s.text) < len(rows[s.passage_ids[0]].text.strip())]
    assert windows, [s.passage_ids for s in trimmed]
    for source in windows:
        row = rows[source.passage_ids[0]]
        assert source.text in row.text
        assert row.page <= source.page <= source.page_end <= row.page_end
        assert row.start <= source.start < source.end <= row.end
        assert source.excerpt and source.cited_as(False).excerpt  # the passages view says so
    assert not any(s.excerpt for s in whole)
    # Windows only add what whole passages left out.
    assert len(trimmed) >= len(whole)
