"""One way to answer a question from the library, for every front door.

`DocDesk.answer` (this module's `answer`) does all of it: the crash marker (`desk.doing("answering")`),
a chat's history and its follow-up rewriting, retrieval, the prompt, the model, the citations the
model forgot, and which sources a reader is shown. It yields TextDelta records as the model writes
its answer (ReasoningDelta records as a thinking model thinks: never part of the answer), then one
Answered record. The window (app/gui/chat_controller.py), `docdesk ask` (app/cli/main.py),
`docdesk serve` (app/serve/answering.py) and `docdesk mcp` (app/mcp/server.py) only show them.

Stopping: set the `cancel` event (from any thread); the model stops at its next token and the
Answered record says `cancelled`, with what was written before. A KeyboardInterrupt raised while
the stream is read leaves the same way as any error: the crash marker is cleared on the way out.
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Generator, Iterable, Iterator
from dataclasses import dataclass

from engine.answer import Answer, Answerer, ReasoningDelta, Sampling, TextDelta, Turn
from engine.backends import GenerationStats
from engine.citations import shown_sources
from ingest.records import CitedSource


@dataclass
class Answered:
    """How an answer ended: the last record of the stream."""

    text: str  # the whole answer, citations the model forgot added (the deltas are what it wrote)
    sources: list[CitedSource]  # what a reader is shown: the sources cited, else all it was given
    given: list[CitedSource]  # every source the model was given, each marked whether it is cited
    stats: GenerationStats  # tokens, finish_reason ("length", "loop", "cancelled", ...)
    timings: dict[str, float]  # each stage's <stage>_ms (see `stages`), retrieve_ms, prepare_ms, ttft_ms, total_ms
    cancelled: bool  # stopped before the model finished: `text` is what it wrote until then
    question: str  # as asked
    standalone: str  # as searched: a follow-up rewritten with the chat's history
    relevant: bool  # False: nothing in the library matched, the model was not asked
    relevance: dict  # why: the relevance rule's evidence and verdict, and what overruled it (PreparedAnswer.why)
    chat_id: str | None = None  # the chat the exchange is kept in; None when not saved as a chat
    unsaved: str = ""  # why the chat could not be written (a read-only library, a full disk)
    reasoning: str = ""  # a thinking model's reasoning, kept beside the answer ("" for others)
    thinking_ms: float = 0.0  # how long it thought
    whole_documents: bool = False  # the documents asked about fit and went to the model whole
    stages: tuple[tuple[str, float], ...] = ()  # (stage, ms): the question's way, in order (engine/answer.py)

    @classmethod
    def of(cls, answer: Answer, chat_id: str | None = None, unsaved: str = "") -> Answered:
        prepared, given = answer.prepared, answer.cited_sources()
        ended = (answer.text, shown_sources(given), given, answer.stats, answer.timings, answer.cancelled)
        asked = (prepared.question, prepared.standalone, prepared.relevant, prepared.why())
        thought = (answer.reasoning, round(answer.thinking_ms, 1))
        stages = tuple((name, round(ms, 1)) for name, ms in prepared.stages)
        return cls(*ended, *asked, chat_id, unsaved, *thought, prepared.whole_documents, stages)


AnswerEvent = TextDelta | ReasoningDelta | Answered


def answer(desk, question, doc_ids, chat_id, save_chat, history, cancel, title, sampling=None) -> Iterator[AnswerEvent]:
    """DocDesk.answer (its signature says what each argument is)."""
    if save_chat and history is not None:
        raise ValueError("a saved chat has its own history: pass chat_id, or save_chat=False with the history")
    cancel = cancel or threading.Event()
    session = desk.chat_session(chat_id) if save_chat else None
    if session is not None:
        title = title or (session.chat.title if session.chat else question[:60])
        steps = session.stream(question, doc_ids or None, cancel, sampling)
    else:
        steps = _unsaved(desk.answerer(), question, doc_ids or None, history, cancel, sampling)
    with desk.doing("answering", question=question, chat_title=title or question[:60]):
        done = yield from steps
    if session is None:
        yield Answered.of(done)
    else:
        yield Answered.of(done, session.chat.id, session.store.unsaved)  # the desk's ChatsSavedWherePossible


def _unsaved(
    answerer: Answerer,
    question: str,
    doc_ids: list[str] | None,
    history: list[Turn] | None,
    cancel: threading.Event,
    sampling: Sampling | None,
) -> Generator[TextDelta | ReasoningDelta, None, Answer]:
    """An answer kept nowhere: the caller holds the conversation (an editor, an agent)."""
    prepared = answerer.prepare(question, doc_ids, history, cancel)
    return (yield from answerer.stream(prepared, cancel, sampling))


def final_answer(
    events: Iterable[AnswerEvent],
    on_text: Callable[[str], None] | None = None,
    on_reasoning: Callable[[str], None] | None = None,
    on_restart: Callable[[], None] | None = None,
) -> Answered:
    """Read an answer stream to its end: the answer's text through `on_text`, a thinking model's
    reasoning through `on_reasoning`, `on_restart()` where what was streamed must be dropped
    (the records after it say it again rightly); the Answered record back. Should a callback
    raise (a closed pipe), the stream is closed: the model stops, the marker clears."""
    try:
        for event in events:
            if isinstance(event, Answered):
                return event
            if isinstance(event, ReasoningDelta):
                if on_reasoning is not None:
                    on_reasoning(event.text)
            elif event.restart:
                if on_restart is not None:
                    on_restart()
            elif on_text is not None:
                on_text(event.text)
    finally:
        if close := getattr(events, "close", None):
            close()
    raise RuntimeError("the answer stream ended without an answer")
