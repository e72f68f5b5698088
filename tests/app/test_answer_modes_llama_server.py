"""Query translation, the model as reranker and whole documents through llama.cpp's real server
(DocDesk's llama_server backend, `make llama-server`) with the bundled model: the plumbing, for
real. The 135M model's translations and judgements are noise; what it says is not judged here."""

from __future__ import annotations

import pytest

from app.desk.answering import final_answer
from engine.answer import AnswerSettings
from tests.conftest import SAMPLES

pytestmark = pytest.mark.models


@pytest.fixture(scope="module")
def server(tmp_path_factory):
    from engine.backends import LlmSettings, create_backend
    from engine.backends.llama_server import find_executable
    from engine.errors import BackendUnavailable

    try:
        find_executable(None)
    except BackendUnavailable:
        pytest.skip("no llama-server: run `make llama-server`")
    settings = LlmSettings(backend="llama_server", slots=4, context=8192, threads=2)
    backend = create_backend(settings, log_dir=tmp_path_factory.mktemp("server-logs"))
    yield backend
    backend.close()


@pytest.fixture(scope="module")
def library(tmp_path_factory, embedder):
    from ingest.pipeline import Ingestor
    from ingest.store.library import Library

    folder = tmp_path_factory.mktemp("modes-library")
    lib = Library(folder)
    Ingestor(lib, embedder).add([SAMPLES / "docdesk-guide.md", SAMPLES / "docdesk-guide-zh.md"])
    lib.close()
    return folder


def desk_on(folder, embedder, backend, **answers):
    from app.desk.services import DocDesk
    from app.desk.settings import Settings

    settings = Settings(library=folder)
    settings.answers = AnswerSettings(answer_tokens=32, **answers)
    return DocDesk(settings, backend=backend, embedder=embedder)


def test_translation_reranking_and_whole_documents_through_the_server(server, library, embedder):
    desk = desk_on(library, embedder, server, translate_queries="on", rerank="on", context_tokens=300)
    searched: list[str] = []
    search = desk.retriever.search
    desk.retriever.search = lambda query, *args, **kw: (
        searched.append(getattr(query, "text", query)),
        search(query, *args, **kw),
    )[1]
    try:
        answered = final_answer(desk.answer("DocDesk 需要哪个 Python 版本？", save_chat=False))
        assert "translate_ms" in answered.timings and "rerank_ms" in answered.timings
        assert len(searched) >= 1 and answered.given  # a translation searched too, where the model gave one
        translated = desk.retriever.translator.cache
        assert translated and all(isinstance(v, str) for v in translated.values())

    finally:
        desk.retriever.search = search
    whole_desk = desk_on(library, embedder, server, translate_queries="off", rerank="off", context_tokens=6000)
    english = next(d.id for d in whole_desk.documents() if d.path.endswith("docdesk-guide.md"))
    whole = final_answer(whole_desk.answer("What is this about?", [english], save_chat=False))
    assert whole.whole_documents and len("".join(s.text for s in whole.given)) > 2000
