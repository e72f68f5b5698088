"""One way to answer: DocDesk.answer (app/desk/answering.py) and the four front doors over it.

The window, `docdesk ask`, `docdesk serve` and `docdesk mcp` only show what DocDesk.answer yields;
the tests here hold them to it (structurally, and with a stand-in façade), check the façade on the
fake model and a real library, and check that the window links every number of a grouped citation.
"""

from __future__ import annotations

import ast
import asyncio
import json
import os
import threading
from argparse import Namespace
from pathlib import Path
from types import SimpleNamespace

os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")

import pytest  # noqa: E402

from app.desk.answering import Answered, TextDelta, final_answer  # noqa: E402
from engine.backends import GenerationStats, LlmSettings  # noqa: E402
from engine.citations import CITATION, cited_numbers, shown_sources  # noqa: E402
from ingest.records import CitedSource  # noqa: E402

ROOT = Path(__file__).resolve().parents[2]
GUIDE = ROOT / "assets" / "samples" / "docdesk-guide.pdf"
FRONT_DOORS = [
    "app/gui/chat_controller.py",
    "app/gui/chat_pane.py",
    "app/cli/main.py",
    "app/serve/answering.py",
    "app/serve/openai_api.py",
    "app/serve/openai_format.py",
    "app/mcp/server.py",
]
# What only app/desk/answering.py may call: the steps of an answer, and the crash marker around them.
LOWER_LEVEL = {"prepare", "generate", "stream", "answerer", "chat_session", "ask_question", "cited_sources"}


def source(n: int, cited: bool) -> CitedSource:
    return CitedSource(n, f"doc{n}", f"Guide {n}", f"/docs/guide{n}.pdf", n, n, f"text {n}", cited=cited)


# -- the citation pattern and the sources rule, once ---------------------------------------------------
def test_one_citation_pattern_reads_single_and_grouped_citations():
    assert [m.group(1) for m in CITATION.finditer("a [1] b [2, 3] c [4，5] d [x] e [6,7]")] == [
        "1",
        "2, 3",
        "4，5",
        "6,7",
    ]
    assert cited_numbers("A [2]. B [1][2]. C [3, 1]. D [9]. E [4，2].", 4) == [2, 1, 3, 4]


def test_a_reader_is_shown_the_cited_sources_else_all():
    given = [source(1, False), source(2, True), source(3, True)]
    assert [s.n for s in shown_sources(given)] == [2, 3]
    uncited = [source(1, False), source(2, False)]
    assert shown_sources(uncited) == uncited and shown_sources([]) == []


def test_the_window_links_each_number_of_a_grouped_citation(qapp):
    from app.gui.transcript import answer_document

    document = answer_document("Cats sleep [1, 2]. 猫在冬天睡觉 [3，1]. Dogs too [2]. Not [x].", 4)
    html = document.toHtml()
    for n in (1, 2, 3):
        assert f'href="cite:4/{n}"' in html
    assert html.count('href="cite:4/1"') == 2 and html.count('href="cite:4/2"') == 2
    assert ">[2]</span></a>" in html  # a single citation stays one link, "[2]"
    text = document.toPlainText()
    assert "Cats sleep [1, 2]." in text and "[3，1]" in text and "Not [x]." in text


# -- every front door goes through DocDesk.answer --------------------------------------------------------
def _calls(path: str) -> list[tuple[str, list]]:
    tree = ast.parse((ROOT / path).read_text(encoding="utf-8"))
    found = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Call):
            name = node.func.attr if isinstance(node.func, ast.Attribute) else getattr(node.func, "id", "")
            found.append((name, node.args))
    return found


@pytest.mark.parametrize("path", FRONT_DOORS)
def test_no_front_door_assembles_an_answer_itself(path):
    calls = _calls(path)
    assert not [name for name, _ in calls if name in LOWER_LEVEL], "answer through DocDesk.answer"
    marked = [args for name, args in calls if name == "doing" and args and getattr(args[0], "value", "") == "answering"]
    assert not marked, "the crash marker of an answer is DocDesk.answer's"
    cited_else_all = "if s.cited] or"
    assert cited_else_all not in (ROOT / path).read_text(encoding="utf-8"), "use engine.citations.shown_sources"


def test_the_four_front_doors_call_the_facade():
    for path in ("app/gui/chat_controller.py", "app/cli/main.py", "app/serve/answering.py", "app/mcp/server.py"):
        assert "answer" in {name for name, _ in _calls(path)}, path
    served = (ROOT / "app/serve/openai_api.py").read_text(encoding="utf-8")
    assert "__aenter__" not in served and "__aexit__" not in served


class StandInDesk:
    """A façade whose answer is scripted: "Cats sleep [1, 2]." in two pieces, sources 1 and 2 cited.
    With `until_cancelled`, it writes until the caller's cancel event is set, as the model does."""

    def __init__(self, until_cancelled: bool = False) -> None:
        self.calls: list[dict] = []
        self.until_cancelled = until_cancelled
        self.settings = SimpleNamespace(llm=LlmSettings(backend="fake"), library=Path("/nowhere"))

    def parallel_answers(self) -> int:
        return 1

    def answer(self, question, doc_ids=None, **options):
        self.calls.append({"question": question, "doc_ids": doc_ids, **options})
        cancel = options.get("cancel") or threading.Event()
        text = ""
        for piece in ["Cats sleep ", "[1, 2]."]:
            text += piece
            yield TextDelta(piece)
        while self.until_cancelled and not cancel.wait(0.01):
            text += "."
            yield TextDelta(".")
        given = [source(1, True), source(2, True), source(3, False)]
        timings = {"retrieve_ms": 5.0, "ttft_ms": 7.0, "total_ms": 9.0}
        chat_id = options.get("chat_id") or "chat1" if options.get("save_chat", True) else None
        yield Answered(
            *(text, shown_sources(given), given, GenerationStats(10, 4), timings, cancel.is_set()),
            *(question, question, True, {"relevant": True}, chat_id),
        )


def test_docdesk_ask_prints_the_stream_and_the_shown_sources(capsys):
    from app.cli.main import _cmd_ask

    desk = StandInDesk()
    args = Namespace(question=["Where", "do", "cats", "sleep?"], doc=None, new_chat=False, chat="c1", json=False)
    args.backend = args.model = args.url = None
    assert _cmd_ask(desk, args) == 0
    out, err = capsys.readouterr()
    assert out.startswith("Cats sleep [1, 2].\n") and "[1] Guide 1, p. 1" in out and "Guide 3" not in out
    assert "continue with --chat c1" in err
    assert desk.calls[0]["question"] == "Where do cats sleep?" and desk.calls[0]["chat_id"] == "c1"

    args.json = True
    assert _cmd_ask(desk, args) == 0
    payload = json.loads(capsys.readouterr().out)
    assert payload["answer"] == "Cats sleep [1, 2]." and [s["n"] for s in payload["sources"]] == [1, 2, 3]


def test_mcp_ask_answers_through_the_facade_without_saving_a_chat():
    from app.mcp.server import DocDeskTools

    desk = StandInDesk()
    result = asyncio.run(DocDeskTools(desk).ask("Where do cats sleep?"))
    assert result["answer"] == "Cats sleep [1, 2]." and result["relevant"] is True
    assert [s["cited"] for s in result["sources"]] == [True, True, False]
    assert desk.calls[0]["save_chat"] is False and isinstance(desk.calls[0]["cancel"], threading.Event)


def test_serve_answers_through_the_facade_streamed_and_not():
    import httpx

    from app.desk.serve_settings import ServeSettings
    from app.serve.openai_api import create_app

    desk = StandInDesk()
    app = create_app(desk, ServeSettings(), slots=1)
    body = {"model": "docdesk", "messages": [{"role": "user", "content": "Where do cats sleep?"}]}

    async def ask() -> tuple[dict, str]:
        transport = httpx.ASGITransport(app=app)
        async with httpx.AsyncClient(transport=transport, base_url="http://127.0.0.1") as api:
            done = (await api.post("/v1/chat/completions", json=body)).json()
            streamed = (await api.post("/v1/chat/completions", json={**body, "stream": True})).text
        return done, streamed

    done, streamed = asyncio.run(ask())
    text = done["choices"][0]["message"]["content"]
    assert (
        text
        == "Cats sleep [1, 2].\n\nSources:\n[1] Guide 1, p. 1 (/docs/guide1.pdf)\n[2] Guide 2, p. 2 (/docs/guide2.pdf)"
    )
    assert [s["n"] for s in done["sources"]] == [1, 2, 3]
    assert '"content": "Cats sleep "' in streamed and streamed.rstrip().endswith("data: [DONE]")
    assert len(desk.calls) == 2 and all(c["save_chat"] is False and c["history"] == [] for c in desk.calls)
    assert desk.calls[0]["title"].startswith("served: ")


def test_the_window_answers_through_the_facade_and_stop_stops_it(qtbot):
    from PySide6.QtWidgets import QWidget

    from app.gui.chat_controller import ChatController
    from app.gui.chat_pane import ChatPane
    from app.gui.tasks import Workers

    desk = StandInDesk(until_cancelled=True)
    desk.list_chats = lambda: []
    window, workers = QWidget(), Workers()
    qtbot.addWidget(window)
    pane = ChatPane(window)
    chat = ChatController(desk, workers, pane, SimpleNamespace(selected_ids=lambda: []), None, window)
    try:
        with qtbot.waitSignal(chat.answer_finished, timeout=10_000) as finished:
            chat.ask("Where do cats sleep?")
            qtbot.waitUntil(lambda: pane.messages[-1]["text"].startswith("Cats sleep"), timeout=5_000)
            pane.stop.click()
        answered = finished.args[0]
        assert isinstance(answered, Answered) and answered.cancelled and answered.chat_id == "chat1"
        message = pane.messages[-1]
        assert message["text"].startswith("Cats sleep [1, 2].") and "(stopped)" in message["text"]
        assert [s.n for s in message["sources"]] == [1, 2, 3]  # all given: the passages dialog shows them
        assert desk.calls[0]["chat_id"] is None and desk.calls[0]["cancel"].is_set()
        assert 'href="cite:1/1"' in pane.transcript.toHtml() and 'href="cite:1/2"' in pane.transcript.toHtml()
    finally:
        workers.shutdown()


# -- the façade on the fake model and a real library -------------------------------------------------------
@pytest.fixture(scope="module")
def guide_library(tmp_path_factory, embedder):
    from ingest.pipeline import Ingestor
    from ingest.store.library import Library

    folder = tmp_path_factory.mktemp("answering-library")
    library = Library(folder)
    assert len(Ingestor(library, embedder).add([GUIDE]).added) == 1
    library.close()
    return folder


def desk_on(folder: Path, embedder, backend, guard=None):
    from app.desk.services import DocDesk
    from app.desk.settings import Settings

    return DocDesk(Settings(library=folder), guard, backend=backend, embedder=embedder)


@pytest.mark.models
def test_a_chat_answered_through_the_facade(guide_library, embedder, tmp_path):
    from app.desk.crash import CrashGuard
    from engine.backends.fake import FakeBackend

    guard = CrashGuard()
    guard.start(tmp_path / "logs")
    marker = tmp_path / "logs" / f"session-{os.getpid()}.json"
    desk = desk_on(guide_library, embedder, FakeBackend(), guard)
    try:
        events = desk.answer("Which Python version does DocDesk need?")
        first = next(events)
        assert isinstance(first, TextDelta) and first.text
        assert json.loads(marker.read_text())["activity"] == "answering"  # while the model writes
        answered = final_answer(events)
        assert json.loads(marker.read_text())["activity"] == "idle"
        assert answered.text.startswith("Fake reply to:") and answered.relevant and answered.chat_id
        assert answered.sources == shown_sources(answered.given) and answered.stats.completion_tokens > 0
        assert {"retrieve_ms", "ttft_ms", "total_ms"} <= set(answered.timings)

        follow = final_answer(desk.answer("And on page 2?", chat_id=answered.chat_id))
        assert follow.chat_id == answered.chat_id and follow.standalone != "And on page 2?"
        assert [m.role for m in desk.chat_messages(answered.chat_id)] == ["user", "assistant"] * 2

        unsaved = final_answer(desk.answer("Which Python version?", save_chat=False))
        assert unsaved.chat_id is None and len(desk.list_chats()) == 1
        with pytest.raises(ValueError):
            next(desk.answer("Which Python version?", history=[]))
    finally:
        desk.close()
        guard.stop()


@pytest.mark.models
def test_cancel_stops_the_model_and_keeps_what_it_wrote(guide_library, embedder):
    from engine.backends.fake import FakeBackend

    words = " ".join("word" + chr(97 + i % 26) + chr(97 + i // 26) for i in range(400))
    desk = desk_on(guide_library, embedder, FakeBackend(words, token_delay=0.005))
    cancel = threading.Event()
    seen: list[str] = []

    def on_text(text: str) -> None:
        seen.append(text)
        if len(seen) == 5:
            cancel.set()

    try:
        answered = final_answer(desk.answer("Which Python version?", save_chat=False, cancel=cancel), on_text)
    finally:
        desk.close()
    assert answered.cancelled and answered.stats.finish_reason == "cancelled"
    assert answered.text.startswith("worda") and answered.stats.completion_tokens < 100
