"""Running one request to the end: the reasoning of a thinking model kept apart from the answer
(engine/generation/thinking.py), a guard against a model that repeats itself, and a thinking budget where
the backend does not keep one itself."""

from __future__ import annotations

import dataclasses
from collections.abc import Callable, Iterator
from dataclasses import dataclass

from engine.backends import Backend, ChatRequest
from engine.generation.thinking import Piece, ThinkingSplitter, may_think

LOOP_CHARS = 120
LOOP_WINDOW = 32_768  # a loop repeats what it wrote lately: the last this many characters are searched
# Tokens a thinking model may spend thinking when no budget is set, on top of the answer's own.
THINKING_ALLOWANCE = 2048
# Reasoning past this many characters is stopped whatever the token budget (a stream that never
# closes its thought, a server that ignores max_tokens): the answer is asked for without thinking.
MAX_REASONING_CHARS = 200_000


def repeats_itself(text: str) -> bool:
    """A model caught in a loop: its last LOOP_CHARS characters already appeared, verbatim."""
    return len(text) >= 2 * LOOP_CHARS and text.find(text[-LOOP_CHARS:]) < len(text) - LOOP_CHARS


LOOP_STEP = 64  # characters the text grows between two looks


class LoopGuard:
    """repeats_itself for a growing text, in time linear in its length: only the last LOOP_WINDOW
    characters are searched, and only once the text grew LOOP_STEP characters since the last look.
    Where it finds a loop, `keep` is how much of the text comes before the echo began."""

    def __init__(self) -> None:
        self.seen = 0
        self.keep: int | None = None

    def looping(self, text) -> bool:
        size = len(text)
        if size - self.seen < LOOP_STEP or size < 2 * LOOP_CHARS:
            return False
        self.seen = size
        window = text.tail(LOOP_WINDOW)
        if not repeats_itself(window):
            return False
        # The echo repeats the text one period back: it began where that stops being true.
        period = len(window) - LOOP_CHARS - window.find(window[-LOOP_CHARS:])
        start = len(window) - LOOP_CHARS
        while start > period and window[start - 1] == window[start - 1 - period]:
            start -= 1
        self.keep = size - len(window) + start
        return True


class ReasoningBudget:
    """Whether the reasoning passed `budget` tokens, counting only when it may have: each token is
    at least a character, so after a count of n tokens the next count waits for budget - n more."""

    def __init__(self, backend: Backend, budget: int | None) -> None:
        self.backend, self.budget = backend, budget
        self.next_count = budget if budget is not None else None

    def spent(self, reasoning) -> bool:
        if self.budget is None or len(reasoning) <= self.next_count:
            return False
        tokens = self.backend.count_tokens(str(reasoning))
        if tokens > self.budget:
            return True
        self.next_count = len(reasoning) + (self.budget - tokens)
        return False


@dataclass
class Reply:
    """What `pieces` leaves behind once the reply ended."""

    answer: str = ""  # the answer's text, a loop cut where it began
    reasoning: str = ""  # the model's thinking ("" for a model that does not think)
    thought_unfinished: bool = False  # it ended mid-thought: no answer was written


def thinking_budget(backend: Backend) -> int | None:
    """The tokens of thinking allowed per reply, where DocDesk keeps the count (not the backend)."""
    declared = backend.capabilities
    return None if declared.keeps_thinking_budget else declared.thinking_budget


def with_thinking_room(backend: Backend, request: ChatRequest) -> ChatRequest:
    """A request whose max_tokens leaves room for thinking where the model may think: the
    answer keeps its own budget, the thinking gets its budget (or THINKING_ALLOWANCE) on top."""
    if request.thinking is False or not may_think(backend, request):
        return request
    room = backend.capabilities.thinking_budget or THINKING_ALLOWANCE
    return dataclasses.replace(request, max_tokens=request.max_tokens + room)


def pieces(backend: Backend, request: ChatRequest, reply: Reply | None = None) -> Iterator[Piece]:
    """The reply piece by piece as the backend writes it, each a Piece of reasoning or of the
    answer (raises Cancelled when the request's cancel event is set). A model caught in a loop
    is stopped: finish_reason "loop". A model that thinks past the budget is stopped and asked
    again without thinking, as is one whose tokens ran out mid-thought; its thinking so far is
    kept. `reply` (if given) is filled at the end."""
    reply = reply if reply is not None else Reply()
    splitter = ThinkingSplitter(may_think(backend, request))
    budget = ReasoningBudget(backend, thinking_budget(backend))
    answer_loop, reasoning_loop = LoopGuard(), LoopGuard()
    over_budget = False
    stream = backend.stream_chat(request)
    for raw in stream:
        for piece in splitter.feed(raw):
            yield piece
        if answer_loop.looping(splitter.answer_text) or reasoning_loop.looping(splitter.reasoning_text):
            stream.close()  # the backend stops first, so what its stats say last is why: the loop
            request.stats.finish_reason = "loop"
            break
        if splitter.thought_unfinished and (
            len(splitter.reasoning_text) > MAX_REASONING_CHARS or budget.spent(splitter.reasoning_text)
        ):
            stream.close()
            over_budget = True
            break
    yield from splitter.finish(request.stats.finish_reason)
    _count_reasoning(backend, request, splitter.reasoning)
    # Out of tokens mid-thought (no budget, or a backend that kept none): ask again as well.
    over_budget = over_budget or (splitter.thought_unfinished and request.stats.finish_reason == "length")
    if over_budget and not request.cancel.is_set():  # the answer, without thinking, after the thinking allowed
        again = _answer_after_thinking(backend, request, splitter.reasoning)
        answer = ThinkingSplitter(False)
        stream = backend.stream_chat(again)
        for raw in stream:
            for piece in answer.feed(raw):
                if not piece.reasoning:
                    yield piece
            if len(answer.reasoning_text) > MAX_REASONING_CHARS:  # it thinks again, asked not to: enough
                stream.close()
                break
        yield from (p for p in answer.finish(again.stats.finish_reason) if not p.reasoning)
        _merge_stats(request.stats, again.stats)
        splitter.answer = answer.answer
        splitter.state = "answer"
    reply.reasoning = splitter.reasoning.strip()
    reply.answer = splitter.answer if answer_loop.keep is None else splitter.answer[: answer_loop.keep]
    reply.thought_unfinished = splitter.thought_unfinished


def _answer_after_thinking(backend: Backend, request: ChatRequest, reasoning: str) -> ChatRequest:
    """The request again, for the answer alone: where the server continues a final assistant
    message (llama-server), the thinking so far is given back closed, so the model answers from
    it whatever its template does with enable_thinking (budget forcing); elsewhere the model is
    asked not to think."""
    stats = request.stats.__class__()
    if backend.capabilities.continues_final_message and reasoning.strip():
        closed = {"role": "assistant", "content": f"<think>\n{reasoning.strip()}\n</think>\n\n"}
        return dataclasses.replace(request, messages=[*request.messages, closed], stats=stats)
    return dataclasses.replace(request, thinking=False, stats=stats)


def _count_reasoning(backend: Backend, request: ChatRequest, reasoning: str) -> None:
    """stats.reasoning_tokens, counted by the model's tokenizer where the backend did not say."""
    stats = request.stats
    if reasoning.strip() and not stats.reasoning_tokens:
        try:
            stats.reasoning_tokens = min(stats.completion_tokens or 10**9, backend.count_tokens(reasoning))
        except Exception:  # a server without a tokenizer endpoint: an estimate beats nothing
            stats.reasoning_tokens = max(1, len(reasoning) // 4)


def _merge_stats(first, second) -> None:
    first.completion_tokens += second.completion_tokens
    first.total_ms += second.total_ms
    first.finish_reason = second.finish_reason


def complete(backend: Backend, request: ChatRequest, on_text: Callable[[str], None] | None = None) -> str:
    """The answer to a request, its pieces passed to on_text as they come (raises Cancelled when
    its cancel event is set); the reasoning of a thinking model is not part of it; a loop is cut
    where it began."""
    reply = Reply()
    for piece in pieces(backend, request, reply):
        if on_text and piece.text and not piece.reasoning:
            on_text(piece.text)
    return reply.answer
