"""A deterministic in-process backend with no model: scripted replies, streamed token by token.

For tests and demos of everything around the model (answers, chats, summaries, the window, the
CLI) where what a real model would say does not matter. It keeps the protocol as the real
backends do: tokens stream one by one, `max_tokens` and stop strings cut the reply, a set
`cancel` stops it between tokens and raises Cancelled, a prompt that does not fit the context
raises ContextTooLong, `GenerationStats` is filled, and no more than `max_concurrency`
requests run at once. `backend = "fake"` in [llm] selects it; it is not offered to users.

Thinking models, in each of the three ways they write (engine/generation/thinking.py): a scripted reply
may hold `<think>…</think>` (the tags in the text), begin inside its thinking with only
`…</think>` (a template that opened the tag: pass `thinks=True`, as such a backend says), or the
reasoning comes apart (`reasoning=`: streamed as ReasoningPiece before the reply, as a server's
reasoning_content). A request with `thinking=False` gets the reply without any of it, as a
model told not to think answers.

Its tokenizer is lossless and simple: a word with the spaces before it, or any other single
character (a digit, a punctuation mark, a CJK character) with its spaces, is one token.
"""

from __future__ import annotations

import re
import threading
import time
from collections.abc import Callable, Iterator, Sequence
from pathlib import Path
from typing import TYPE_CHECKING

from engine.backends.base import ChatRequest, ReasoningPiece
from engine.backends.capabilities import Capabilities, Reasoning, SlowStreaks
from engine.backends.registry import register_backend
from engine.backends.stops import StopScanner
from engine.errors import BackendUnavailable, Cancelled, ContextTooLong

if TYPE_CHECKING:
    from engine.backends import LlmSettings

TOKEN = re.compile(r"\s*(?:[A-Za-z]+|[^\sA-Za-z])|\s+")
Reply = str | Sequence[str] | Callable[[ChatRequest], str]


def tokens(text: str) -> list[str]:
    """The fake tokenizer: "".join(tokens(text)) == text."""
    return TOKEN.findall(text)


def echo_reply(request: ChatRequest) -> str:
    """The default reply: says which request it answers, so replies differ by request."""
    asked = next((m["content"] for m in reversed(request.messages) if m.get("role") == "user"), "")
    last_line = next((line.strip() for line in reversed(asked.splitlines()) if line.strip()), "")
    words = last_line.split()
    return "Fake reply to: " + " ".join(words[:12]) + (" …" if len(words) > 12 else "")


@register_backend("fake")
class FakeBackend:
    """Scripted replies: a string, a list of strings (one per request, the last one repeating),
    or a function of the request. Records every request it gets."""

    name = "fake"

    def __init__(
        self,
        reply: Reply = echo_reply,
        *,
        model: str = "fake",
        context_window: int = 8192,
        max_concurrency: int = 1,
        on_gpu: bool = False,
        token_delay: float = 0.0,
        error: Exception | None = None,
        reasoning: Reply | None = None,
        thinks: bool | None = None,
        model_file: Path | None = None,
        served: bool = False,
    ) -> None:
        if context_window <= 0:
            raise ValueError("context_window must be positive")
        self.model = model
        self._reply = reply
        self._context_window = context_window
        self._max_concurrency = max(1, max_concurrency)
        self._on_gpu = on_gpu
        self.token_delay = token_delay  # seconds before each token, so a test can cancel mid-stream
        self.error = error  # raised by every request (a server that is down, a model that fails)
        self._reasoning = reasoning  # streamed apart, before each reply (a server's reasoning_content)
        self.thinks = thinks  # a reply may begin inside its thinking (the template opened the tag)
        # Standing in for a backend that runs this GGUF file, or for someone's server (the size of
        # the model decides whether questions are translated: engine/retrieval/query_translation.py).
        self._model_file, self._served = model_file, served
        self.thinking_budget: int | None = None
        self.continues_final_message = False  # as llama-server does, where a test says so
        self.judge: Callable[[list[dict]], float] | None = None  # reranking (yes_probability)
        self.slow_streaks = SlowStreaks()
        self.judged: list[list[dict]] = []
        self.requests: list[ChatRequest] = []
        self.warm_ups = 0  # real warm-ups: 1 after any number of warm_up() calls
        self.in_flight = self.most_in_flight = 0
        self.closed = False
        self._slots = threading.BoundedSemaphore(self._max_concurrency)
        self._lock = threading.Lock()
        self._warm = False

    @classmethod
    def from_settings(
        cls, settings: LlmSettings, *, log_dir: Path | None = None, has_bf16: bool | None = None
    ) -> FakeBackend:
        return cls(
            model=settings.model or "fake",
            context_window=settings.context or 8192,
            max_concurrency=settings.max_concurrency,
        )

    # -- the protocol -----------------------------------------------------------------
    @property
    def context_window(self) -> int:
        return self._context_window

    @property
    def max_concurrency(self) -> int:
        return self._max_concurrency

    @property
    def on_gpu(self) -> bool:
        return self._on_gpu

    @property
    def capabilities(self) -> Capabilities:
        """As scripted: reasoning apart where `reasoning=` is given, a template that opened <think>
        where `thinks=True`, else any reasoning tagged in the reply's text; its judge gives P(yes)."""
        reasoning = Reasoning.APART if self._reasoning is not None else Reasoning.TAGGED
        if self.thinks and self._reasoning is None:
            reasoning = Reasoning.OPENED
        return Capabilities(
            parallel_slots=self._max_concurrency,
            logprobs=True,
            reasoning=reasoning,
            thinks=self.thinks,
            thinking_budget=self.thinking_budget,
            continues_final_message=self.continues_final_message,
            gpu_offload=self._on_gpu,
            model_file=self._model_file,
            served=self._served,
        )

    def warm_up(self) -> None:
        self._check_open()
        with self._lock:
            if not self._warm:
                self._warm = True
                self.warm_ups += 1

    def yes_probability(self, messages: list[dict]) -> float:
        """A judge for reranking (engine/retrieval/rerank.py): `judge(messages)` where the test gives one,
        else the share of the question's words found in the passage."""
        self.judged.append(messages)
        if self.judge is not None:
            return float(self.judge(messages))
        asked = messages[-1]["content"]
        question, _, passage = asked.partition("\n\nPassage:\n")
        words = {w.lower() for w in re.findall(r"\w+", question.removeprefix("Question: "))}
        found = {w.lower() for w in re.findall(r"\w+", passage)}
        return len(words & found) / max(1, len(words))

    def count_tokens(self, text: str) -> int:
        self._check_open()
        return len(tokens(text))

    def close(self) -> None:
        self.closed = True

    def stream_chat(self, request: ChatRequest) -> Iterator[str]:
        self._check_open()
        started = time.perf_counter()
        stats = request.stats
        with self._slots:
            with self._lock:
                self.requests.append(request)
                number = len(self.requests) - 1
                self.in_flight += 1
                self.most_in_flight = max(self.most_in_flight, self.in_flight)
            try:
                yield from self._stream(request, number, started)
            finally:
                with self._lock:
                    self.in_flight -= 1
                stats.total_ms = (time.perf_counter() - started) * 1000
        if stats.finish_reason == "cancelled":
            raise Cancelled("stopped")

    # -- inside -----------------------------------------------------------------------
    def _check_open(self) -> None:
        if self.closed:
            raise BackendUnavailable("the fake backend is closed: create a new one")

    def prompt(self, messages: list[dict]) -> str:
        """The chat template: what `prompt_tokens` counts."""
        turns = "".join(f"<|{m.get('role', 'user')}|>\n{m.get('content', '')}\n" for m in messages)
        return turns + "<|assistant|>\n"

    def reply_for(self, request: ChatRequest, number: int) -> str:
        reply = self._scripted(self._reply, request, number)
        if request.thinking is False:  # told not to think: the answer alone
            reply = re.sub(r"^\s*(?:<think>)?.*?</think>\s*", "", reply, count=1, flags=re.S)
        return reply

    @staticmethod
    def _scripted(script: Reply, request: ChatRequest, number: int) -> str:
        if callable(script):
            return script(request)
        if isinstance(script, str):
            return script
        return script[min(number, len(script) - 1)]

    def _timed(self, pieces: list[str], request: ChatRequest, started: float) -> Iterator[str]:
        """Each token as a model writes it: the delay, the first token's time and the count kept;
        it stops at max_tokens ("length") or a set cancel ("cancelled")."""
        stats = request.stats
        for token in pieces:
            if stats.completion_tokens >= request.max_tokens:
                stats.finish_reason = "length"
                return
            if self.token_delay:
                time.sleep(self.token_delay)
            if request.cancel.is_set():
                stats.finish_reason = "cancelled"
                return
            if stats.completion_tokens == 0:
                stats.ttft_ms = (time.perf_counter() - started) * 1000
            stats.completion_tokens += 1
            yield token

    def _stream(self, request: ChatRequest, number: int, started: float) -> Iterator[str]:
        stats = request.stats
        if self.error is not None:
            raise self.error
        stats.prompt_tokens = self.count_tokens(self.prompt(request.messages))
        if stats.prompt_tokens + request.max_tokens > self._context_window:
            raise ContextTooLong(
                f"the prompt has {stats.prompt_tokens} tokens and the answer may take {request.max_tokens}, "
                f"but the context is {self._context_window}: shorten the input or raise the context length"
            )
        scanner = StopScanner(list(request.stop))
        stats.finish_reason = "stop"  # the reply ran out: the model "ended its turn"
        if self._reasoning is not None and request.thinking is not False:
            for token in self._timed(tokens(self._scripted(self._reasoning, request, number)), request, started):
                stats.reasoning_tokens += 1
                yield ReasoningPiece(token)
            if stats.finish_reason != "stop":
                return
        for token in self._timed(tokens(self.reply_for(request, number)), request, started):
            text = scanner.feed(token.encode("utf-8"))
            if text:
                yield text
            if scanner.stopped:
                return
        if stats.finish_reason == "cancelled":
            return
        if rest := scanner.flush():
            yield rest
