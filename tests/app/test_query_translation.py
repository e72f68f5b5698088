"""Query translation: where the model can translate, a question is also asked in the library's
other languages and the results fused; cached; off with the bundled model. A real library of the
English and Chinese sample guides; the fake backend translates as a scripted model would (what a
real model's translation is worth cannot be judged here: nothing capable runs on this machine)."""

from __future__ import annotations

import pytest

from app.desk.answering import final_answer
from engine.answer import AnswerSettings
from engine.backends.fake import FakeBackend
from engine.retrieval import query_translation
from tests.conftest import SAMPLES

pytestmark = pytest.mark.models
QUESTION = "DocDesk 需要哪个 Python 版本？"
TRANSLATION = "Which Python version does DocDesk need?"


@pytest.fixture(scope="module")
def library(tmp_path_factory, embedder):
    from ingest.pipeline import Ingestor
    from ingest.store.library import Library

    folder = tmp_path_factory.mktemp("translation-library")
    lib = Library(folder)
    Ingestor(lib, embedder).add([SAMPLES / "docdesk-guide.md", SAMPLES / "docdesk-guide-zh.md"])
    lib.close()
    return folder


def translating_model() -> FakeBackend:
    def reply(request) -> str:
        system = request.messages[0]["content"]
        if system.startswith("Translate the user's question into English"):
            return TRANSLATION
        return "An answer [1]."

    return FakeBackend(reply, model="qwen2.5-7b-instruct")


def desk_on(folder, embedder, backend, mode="auto"):
    from app.desk.services import DocDesk
    from app.desk.settings import Settings

    settings = Settings(library=folder)
    settings.answers = AnswerSettings(translate_queries=mode)
    return DocDesk(settings, backend=backend, embedder=embedder)


def translation_requests(backend) -> list:
    return [r for r in backend.requests if r.messages[0]["content"].startswith("Translate the user's")]


def test_a_chinese_question_is_also_searched_in_english_and_fused(library, embedder):
    backend = translating_model()
    desk = desk_on(library, embedder, backend, "on")
    searched: list[str] = []
    search = desk.retriever.search
    desk.retriever.search = lambda query, *args, **kw: (
        searched.append(getattr(query, "text", query)),
        search(query, *args, **kw),
    )[1]
    try:
        answered = final_answer(desk.answer(QUESTION, save_chat=False))
        assert searched == [QUESTION, TRANSLATION]  # both searched (for real), the rankings fused
        asked = translation_requests(backend)
        assert len(asked) == 1 and asked[0].messages[1]["content"] == QUESTION and asked[0].thinking is False
        assert "translate_ms" in answered.timings
        english = [s for s in answered.given if s.path.endswith("docdesk-guide.md")]
        assert english, [s.path for s in answered.given]  # the English guide was found through the translation
        assert any("3.11" in s.text for s in english)
        # Asked again: the translation comes from the cache (the retriever's translator), the model
        # is not asked to translate.
        final_answer(desk.answer(QUESTION, save_chat=False))
        assert len(translation_requests(backend)) == 1
    finally:
        desk.close()


def test_only_the_libraries_other_languages_are_asked_for(library, embedder):
    backend = translating_model()
    desk = desk_on(library, embedder, backend, "on")
    try:
        english_doc = next(d.id for d in desk.documents() if d.path.endswith("docdesk-guide.md"))
        chinese_doc = next(d.id for d in desk.documents() if d.path.endswith("guide-zh.md"))
        final_answer(desk.answer(QUESTION, [chinese_doc], save_chat=False))  # only Chinese: nothing to translate
        assert translation_requests(backend) == []
        final_answer(desk.answer(QUESTION, [english_doc, chinese_doc], save_chat=False))
        assert len(translation_requests(backend)) == 1
    finally:
        desk.close()


def test_auto_is_off_with_the_bundled_model_and_on_for_a_server(library, embedder, tmp_path):
    from engine.backends.llama_cpp import bundled_model_path

    bundled = FakeBackend(model_file=bundled_model_path())  # 135M: far below what translates a question
    assert not query_translation.can_translate(bundled)
    big = tmp_path / "big.gguf"
    with big.open("wb") as handle:
        handle.truncate(query_translation.MIN_MODEL_BYTES)  # sparse: a 7B-class file's size on disk
    assert query_translation.can_translate(FakeBackend(model_file=big))
    assert query_translation.can_translate(FakeBackend(served=True))

    backend = translating_model()  # the fake backend is neither a server nor a large GGUF
    desk = desk_on(library, embedder, backend, "auto")
    try:
        final_answer(desk.answer(QUESTION, save_chat=False))
        assert translation_requests(backend) == []
    finally:
        desk.close()
