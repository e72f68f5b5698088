"""Hybrid retrieval over the real corpus with the real bundled model."""

from __future__ import annotations

import pytest

from engine.retrieval.retrieve import HybridRetriever, reciprocal_rank_fusion
from tests.eval.eval_retrieval import evaluate, load_questions


@pytest.fixture(scope="module")
def retriever(corpus_library, embedder):
    library, _ = corpus_library
    return HybridRetriever(library, embedder)


def test_rrf_rewards_agreement_between_rankings():
    fused = reciprocal_rank_fusion([[1, 2, 3], [3, 1, 4]])
    assert max(fused, key=fused.get) == 1
    assert fused[3] > fused[2] and fused[4] < fused[3]


def test_dense_search_finds_a_paraphrase(retriever):
    hits = retriever.search("rebels and troublemakers who push humanity forward", k=3).hits
    assert hits[0].passage.title == "crazyones-pdfa"
    assert hits[0].passage.page == 1


def test_chinese_keyword_channel_finds_a_word_inside_a_longer_word(retriever):
    hits = retriever.search("驱动", k=5).hits
    assert hits and all(h.keyword_rank is not None for h in hits[:3])
    assert any("驱动版本" in h.passage.text for h in hits[:3])


def test_results_cite_the_right_page_of_the_book(retriever):
    hits = retriever.search("Definition hausdorffsch Umgebungen", k=5).hits
    top = next(h for h in hits if "hausdorffsch" in h.passage.text)
    assert top.passage.title == "Geometrie und Topologie" and top.passage.page == 12


def test_doc_filter_restricts_results(retriever, corpus_library):
    library, _ = corpus_library
    guide = next(d for d in library.documents() if d.path.endswith("docdesk-guide.pdf"))
    hits = retriever.search("crazy ones rebels", k=5, doc_ids=[guide.id]).hits
    assert hits and {h.passage.doc_id for h in hits} == {guide.id}


def test_answer_lies_in_first_1500_tokens_for_90_percent_of_questions(retriever):
    report = evaluate(retriever, load_questions())
    for lang, result in report.items():
        assert result["share"] >= 0.9, (lang, result["misses"])
