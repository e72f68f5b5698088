"""The protocol every LLM backend implements, and the records it streams."""

from __future__ import annotations

import threading
from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import Protocol

from engine.backends.capabilities import Capabilities, SlowStreaks

Message = dict[str, str]  # {"role": "system" | "user" | "assistant", "content": "..."}


class ReasoningPiece(str):
    """A piece of the model's reasoning that a server sends apart from its answer (OpenAI-compatible
    `reasoning_content` deltas: llama-server's --reasoning-format, vLLM's reasoning parsers).
    Backends yield these beside plain `str` answer pieces; engine/generation/thinking.py keeps them apart,
    with reasoning written inline as <think>…</think>."""


@dataclass
class GenerationStats:
    """Filled in while a stream runs; complete when the iterator is exhausted."""

    prompt_tokens: int = 0
    completion_tokens: int = 0  # reasoning included, as OpenAI counts them
    reasoning_tokens: int = 0  # of completion_tokens, those the model spent thinking
    ttft_ms: float = 0.0
    total_ms: float = 0.0
    finish_reason: str = ""

    @property
    def tokens_per_s(self) -> float:
        decode_s = (self.total_ms - self.ttft_ms) / 1000
        return (self.completion_tokens - 1) / decode_s if self.completion_tokens > 1 and decode_s > 0 else 0.0


@dataclass
class ChatRequest:
    messages: list[Message]
    max_tokens: int = 512
    temperature: float = 0.2
    stop: list[str] = field(default_factory=list)
    # In-process only: llama.cpp's classic 1.1 keeps small models out of loops. Servers keep their own.
    repeat_penalty: float = 1.1
    top_p: float | None = None  # None: the backend's default
    seed: int | None = None  # None: random
    # Thinking models: None as the model does by default, False asks it not to think (Qwen3's
    # enable_thinking=False in the chat template's arguments), True asks it to.
    thinking: bool | None = None
    cancel: threading.Event = field(default_factory=threading.Event)
    stats: GenerationStats = field(default_factory=GenerationStats)


class Backend(Protocol):
    """What every LLM backend offers; tests/contracts/backend_contract.py checks each one against it.

    Building one is cheap (nothing heavy is loaded); `warm_up()` does the heavy setup, and the
    first request does it too when nobody called it. Both `warm_up()` and `close()` may be
    called any number of times: a second call does nothing.
    """

    name: str
    model: str
    slow_streaks: SlowStreaks  # its own count of slow runs in a row ("auto" reranking stops after two)

    @property
    def capabilities(self) -> Capabilities:
        """What it can do, declared (engine/backends/capabilities.py); callers read this, never probe."""
        ...

    @property
    def context_window(self) -> int:
        """Tokens the prompt and the answer share."""
        ...

    @property
    def max_concurrency(self) -> int:
        """Requests that may stream at once (1: one after the other); at least 1."""
        ...

    @property
    def on_gpu(self) -> bool:
        """Whether the model runs on a GPU: prompts are read fast there, so callers give it more context."""
        ...

    def warm_up(self) -> None:
        """Load what the first request would need (model weights, a client); idempotent."""
        ...

    def stream_chat(self, request: ChatRequest) -> Iterator[str]:
        """The answer's text piece by piece (reasoning a server sends apart as ReasoningPiece,
        reasoning a model writes inline left in the text); fills `request.stats`; raises Cancelled once
        `request.cancel` is set; stops after `request.max_tokens` tokens or at a stop string,
        which is not part of the text."""
        ...

    def count_tokens(self, text: str) -> int: ...

    def close(self) -> None:
        """Release the model, the client or the server process; idempotent."""
        ...
