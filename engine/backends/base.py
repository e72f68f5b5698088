"""The protocol every LLM backend implements, and the records it streams."""

from __future__ import annotations

import threading
from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import Protocol

Message = dict[str, str]  # {"role": "system" | "user" | "assistant", "content": "..."}


@dataclass
class GenerationStats:
    """Filled in while a stream runs; complete when the iterator is exhausted."""

    prompt_tokens: int = 0
    completion_tokens: int = 0
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
        """The answer's text piece by piece; fills `request.stats`; raises Cancelled once
        `request.cancel` is set; stops after `request.max_tokens` tokens or at a stop string,
        which is not part of the text."""
        ...

    def count_tokens(self, text: str) -> int: ...

    def close(self) -> None:
        """Release the model, the client or the server process; idempotent."""
        ...
