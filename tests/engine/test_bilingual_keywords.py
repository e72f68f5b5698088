"""A Chinese question's keywords find English passages (CC-CEDICT) and Chinese ones alike."""

from __future__ import annotations

from pathlib import Path

import pytest

from engine.retrieval import bilingual_keywords, concepts, zh_en_dictionary
from engine.retrieval.retrieve import HybridRetriever
from ingest.language import mostly_chinese

pytestmark = pytest.mark.models

SAMPLES = Path(__file__).resolve().parents[2] / "assets" / "samples"
RUST_BOOK = Path(__file__).resolve().parents[1] / "eval" / "data" / "rust-book"


def test_a_run_is_cut_into_the_words_a_reader_sees():
    assert zh_en_dictionary.segment("堆上分配内存") == ["堆", "上", "分配", "内存"]
    assert zh_en_dictionary.segment("长文档摘要是") == ["长", "文档", "摘要", "是"]


def test_a_word_reads_as_its_computing_or_common_senses():
    assert "stack" in zh_en_dictionary.english_words("栈")
    assert "sheep" not in zh_en_dictionary.english_words("栈")  # "a pen for sheep", its first sense
    assert "resource" in zh_en_dictionary.english_words("资源")
    assert "guangxi" not in zh_en_dictionary.english_words("资源")  # a county's name comes last
    assert "ownership" in zh_en_dictionary.english_words("所有权")


def test_a_question_becomes_concepts_without_its_grammar():
    found = {c.label: c for c in concepts.concepts("Rust 的所有权规则有哪几条？")}
    assert "的" not in found and "有" not in found
    assert "ownership" in found["所有权"].forms and "rules" in found["规则"].forms
    assert found["Rust"].native is None and "rust" in found["Rust"].forms
    # characters the dictionary does not know stay together and match as written
    unknown = concepts.concepts("㐀㐂䶵怎么办")
    assert [c.label for c in unknown][0] == "㐀㐂䶵" and not unknown[0].forms


@pytest.fixture(scope="module")
def rust_book(tmp_path_factory):
    """The Rust book chapters of the eval set (two English, three Chinese, different chapters) and
    the English sample guide, embedded by the default embedder, whose multilingual half ranks
    passages of both languages."""
    from ingest.embedding import make_embedder
    from ingest.pipeline import Ingestor
    from ingest.store.library import Library

    embedder = make_embedder(None)
    library = Library(tmp_path_factory.mktemp("rust-book"))
    report = Ingestor(library, embedder).add([*sorted(RUST_BOOK.glob("*/*.md")), SAMPLES / "docdesk-guide.md"])
    assert len(report.added) == 6
    yield library, HybridRetriever(library, embedder)
    library.close()


def _top_texts(ranked, library, n):
    rows = library.passages([i for i, _ in ranked[:n]])
    return [rows[i].text for i, _ in ranked[:n]]


def test_a_chinese_question_finds_the_english_answer_by_its_words(rust_book):
    library, retriever = rust_book
    question = "Rust 的所有权规则有哪几条？"
    crossing = retriever.keyword_candidates(question, 10)
    assert any("There can only be one owner at a time" in t for t in _top_texts(crossing, library, 3))
    retriever.cross_language = False
    try:  # without the dictionary, keyword search finds Chinese passages only
        native = retriever.keyword_candidates(question, 10)
        assert not any("one owner at a time" in t for t in _top_texts(native, library, 10))
    finally:
        retriever.cross_language = True
    hits = retriever.search(question, k=5).hits
    assert any("There can only be one owner at a time" in h.passage.text for h in hits)


def test_a_chinese_question_about_a_chinese_passage_still_finds_it_first(rust_book):
    library, retriever = rust_book
    ranked = retriever.keyword_candidates("使用互斥器时必须记住哪两个规则？", 10)
    assert "你必须记住两个规则" in _top_texts(ranked, library, 1)[0]


def test_restricted_to_documents_it_stays_inside_them(rust_book):
    library, retriever = rust_book
    chinese = [d.id for d in library.documents() if "/zh/" in d.path]
    ranked = retriever.keyword_candidates("Rust 的所有权规则有哪几条？", 10, doc_ids=chinese)
    rows = library.passages([i for i, _ in ranked])
    assert ranked and {rows[i].doc_id for i, _ in ranked} <= set(chinese)


def test_without_the_dictionary_search_goes_on_in_the_question_language(rust_book, monkeypatch):
    library, retriever = rust_book
    monkeypatch.setattr(zh_en_dictionary, "available", lambda: False)
    assert not concepts.wanted("所有权规则")
    hits = retriever.search("使用互斥器时必须记住哪两个规则？", k=3).hits
    assert hits and "互斥器" in hits[0].passage.text


def test_a_chinese_questions_dense_ranking_lets_the_languages_take_turns(rust_book):
    library, retriever = rust_book
    hits = retriever.search("变量离开作用域时会发生什么？", k=20).hits
    by_dense = sorted((h for h in hits if h.dense_rank is not None), key=lambda h: h.dense_rank)
    languages = [mostly_chinese(h.passage.text) for h in by_dense[:4]]
    assert languages[0] != languages[1] and languages[2] != languages[3]
    english = retriever.search("What happens when a variable goes out of scope?", k=20).hits
    by_dense = sorted((h for h in english if h.dense_rank is not None), key=lambda h: h.dense_rank)
    assert not any(mostly_chinese(h.passage.text) for h in by_dense[:2])  # English keeps its order


def test_a_concept_is_held_by_its_word_or_by_a_whole_english_sense():
    ownership = next(c for c in concepts.concepts("所有权") if c.label == "所有权")
    assert ownership.held_in("each value has an owner; ownership moves", {"each", "value", "ownership"})
    assert ownership.held_in("所有权规则", set())
    braised = next(c for c in concepts.concepts("红烧肉") if c.label == "红烧肉")
    assert not braised.held_in("add the sauce", {"add", "the", "sauce"})  # one word of "pork braised in soy sauce"


def test_relevance_counts_a_chinese_questions_words_found_in_english(rust_book):
    _library, retriever = rust_book
    query = retriever.query("Rust 的所有权规则有哪几条？")
    hits = [h for h in retriever.search(query, k=10).hits if "one owner at a time" in h.passage.text]
    assert hits
    crossing = bilingual_keywords.coverages(query, [hits[0].passage.text])[0]
    assert crossing > 0.3  # ownership, rules and Rust, at half weight for coming through the dictionary
    assert hits[0].coverage == pytest.approx(crossing)  # the coverage search gave the hit, which the judge reads


def test_the_passage_holding_every_word_of_the_question_leads(rust_book, monkeypatch):
    from engine.retrieval import retrieve

    library, retriever = rust_book
    question = "What is the vectors.faiss file for?"  # the dense channel prefers Rust's Vec passages
    hits = retriever.search(question, k=5).hits
    assert "only a cache" in hits[0].passage.text
    monkeypatch.setattr(retrieve, "WHOLE", 2.0)  # no passage gets the vote
    assert "only a cache" not in retriever.search(question, k=5).hits[0].passage.text


def test_an_english_question_finds_the_chinese_answer_by_its_words(rust_book):
    """The reverse direction (engine/retrieval/en_zh_dictionary.py): environment is 环境, variable
    变量, so keyword search ranks the Chinese chapter on closures for an English question."""
    library, retriever = rust_book
    question = "How do closures capture variables from their environment?"
    query = retriever.query(question)
    assert query.crossing and not query.alternating
    top = _top_texts(retriever.keyword_candidates(query, 10), library, 3)
    assert any(mostly_chinese(t) and "环境" in t and "变量" in t for t in top)
    retriever.cross_language = False
    try:  # not across languages: the question's words are its own only
        assert not retriever.query(question).concepts
    finally:
        retriever.cross_language = True
    hits = retriever.search(query, k=10).hits
    chinese = [h for h in hits if mostly_chinese(h.passage.text) and "环境" in h.passage.text]
    assert chinese and chinese[0].coverage > 0  # its words counted through the dictionary, at a discount
