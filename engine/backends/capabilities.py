"""What a backend can do, declared by the backend itself: callers read `backend.capabilities`
instead of trying attributes, and tests/contracts/backend_contract.py checks that each backend's
record tells the truth.

Values that depend on the model or the server (GPU offload, slots, the template's reasoning) are
decided when the backend is built; a record never changes after that unless the backend's own
settings do (its thinking budget, say).
"""

from __future__ import annotations

import threading
from dataclasses import dataclass, field
from enum import StrEnum
from pathlib import Path


class Reasoning(StrEnum):
    """How a thinking model's reasoning reaches DocDesk (engine/generation/thinking.py splits each)."""

    NONE = "none"  # the model is told not to think: no reasoning comes
    TAGGED = "tagged"  # in the text, as <think>…</think> before the answer
    OPENED = "opened"  # in the text, but the chat template opened <think>: only …</think> comes
    APART = "apart"  # apart from the text, as `reasoning_content` deltas (ReasoningPiece)
    ANY = "any"  # as a server DocDesk did not start chooses: any of the three above


@dataclass(frozen=True)
class Capabilities:
    """One backend's declaration of what it does; see the module docstring."""

    parallel_slots: int  # requests that stream at once (the backend's max_concurrency)
    streams: bool = True  # stream_chat yields the reply in pieces as the model writes it
    # yes_probability(messages) gives the model's P(yes) for its first token, from its
    # log-probabilities: the reranker's judgement (engine/retrieval/rerank.py).
    logprobs: bool = False
    reasoning: Reasoning = Reasoning.TAGGED
    # Whether a reply may begin inside its reasoning with no tag: True or False as configured or
    # as the template shows; None: not known, the model's name decides (engine/generation/thinking.py).
    thinks: bool | None = None
    thinking_budget: int | None = None  # tokens of thinking per reply; None: no cap
    keeps_thinking_budget: bool = False  # it enforces thinking_budget itself, so DocDesk need not count
    # A reply cut mid-thought can be continued from a final assistant message that closes the
    # thinking (llama-server): engine/generation/generate.py then gives the thinking back closed.
    continues_final_message: bool = False
    # The model's own chat template (Jinja) that DocDesk renders prompts with, or the server it
    # started renders with (--jinja); None where the template is unknown here.
    chat_template: str | None = field(default=None, repr=False)
    gpu_offload: bool = False  # the model runs on a GPU: prompts are read fast, so answers get more context
    model_file: Path | None = None  # the GGUF file it runs (in process, or in a server it started)
    served: bool = False  # the model is someone's server: its size and file are not known here
    # It runs llama-cpp-python, as installed with DocDesk, in this process: whether it can use a GPU
    # is that build's, which the doctor checks (engine/models/doctor.py gpu_build_warning).
    installed_llama_cpp: bool = False


class SlowStreaks:
    """Runs in a row of optional work that took too long, by what was run ("rerank"), kept by each
    backend for itself: its own model's speed decides, and a new backend starts afresh."""

    def __init__(self) -> None:
        self._runs: dict[str, int] = {}
        self._lock = threading.Lock()

    def record(self, work: str, slow: bool) -> None:
        """One run of `work`: a slow one lengthens its streak, a fast one ends it."""
        with self._lock:
            self._runs[work] = self._runs.get(work, 0) + 1 if slow else 0

    def count(self, work: str) -> int:
        """How many runs of `work` in a row were slow, up to the last one."""
        with self._lock:
            return self._runs.get(work, 0)
