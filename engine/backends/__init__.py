"""LLM backends behind one protocol, and the factory that builds one from settings."""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

from engine.backends.base import Backend, ChatRequest, GenerationStats, Message, ReasoningPiece
from engine.backends.capabilities import Capabilities, Reasoning, SlowStreaks
from engine.backends.registry import builder, listed_names

__all__ = [
    "BACKENDS",
    "Backend",
    "Capabilities",
    "ChatRequest",
    "GenerationStats",
    "LlmSettings",
    "Message",
    "Reasoning",
    "ReasoningPiece",
    "SlowStreaks",
    "create_backend",
]

BACKENDS = listed_names()  # the backends users choose from: ("llama_cpp", "llama_server", "openai", "vllm")


@dataclass
class LlmSettings:
    """The [llm] section of config.toml; flags override it.

    One flat table, so that every config.toml written so far still loads. Which of these fields
    each backend reads, with its label and widget, is declared in the backend table
    (registry.BUILT_IN: `registry.options(name)`); the Settings dialog shows only those.
    """

    backend: str = "llama_cpp"
    model: str | None = None  # GGUF path (llama_cpp), served name (openai), HF id or folder (vllm)
    context: int | None = None
    gpu_layers: int = -1
    threads: int | None = None  # llama.cpp's threads for decoding (None: engine/models/threads.py decides)
    threads_batch: int | None = None  # llama.cpp's threads for reading the prompt (None: as decided there)
    batch: int = 512
    flash_attention: bool | None = None
    kv_cache: str | None = None  # "f16" | "q8_0"; None: f16 in process, q8_0 with flash attention on a GPU server
    mlock: bool = False
    cpu_repack: bool | None = None  # llama.cpp's repacked CPU weights (AMX/AVX); None: off on AMX CPUs
    url: str = "http://127.0.0.1:8000"
    api_key: str | None = None
    max_concurrency: int = 4
    connect_timeout: float = 5.0
    read_timeout: float = 120.0
    vllm: dict = field(default_factory=dict)  # VllmSettings fields
    llama_server: str | None = None  # llama_server: the executable (None: PATH, then `make llama-server`'s)
    slots: int | None = None  # llama_server: parallel slots (None: from the memory plan)
    server_port: int | None = None  # llama_server: its port (None: a free one)
    build_cache: str | None = None  # DocDesk's build cache, where `make llama-server` leaves it (None: the platform's)
    # Thinking models (Qwen3, QwQ, DeepSeek-R1): None as the model does by default, True or False
    # asks for thinking or none; thinking_budget caps the tokens of thinking per answer (None: no cap).
    thinking: bool | None = None
    thinking_budget: int | None = None
    # Prompt-lookup speculation (engine/backends/speculation.py): "ngram" or "off"; None: the
    # backend's measured default.
    speculation: str | None = None


def create_backend(settings: LlmSettings, log_dir: Path | None = None, has_bf16: bool | None = None) -> Backend:
    """The backend `settings.backend` names, built by its own module (engine/backends/registry.py).

    `log_dir` is where a server DocDesk starts writes its log (beside the library); `has_bf16`
    overrides what the GPU check says for vLLM's dtype.
    """
    return builder(settings.backend)(settings, log_dir=log_dir, has_bf16=has_bf16)
