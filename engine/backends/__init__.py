"""LLM backends behind one protocol, and the factory that builds one from settings."""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

from .base import Backend, ChatRequest, GenerationStats, Message

__all__ = ["Backend", "ChatRequest", "GenerationStats", "LlmSettings", "Message", "create_backend"]

BACKENDS = ("llama_cpp", "openai", "vllm")


@dataclass
class LlmSettings:
    """The [llm] section of config.toml; flags override it."""

    backend: str = "llama_cpp"
    model: str | None = None  # GGUF path (llama_cpp), served name (openai), HF id or folder (vllm)
    context: int | None = None
    gpu_layers: int = -1
    threads: int | None = None
    batch: int = 512
    flash_attention: bool | None = None
    kv_cache: str = "f16"
    mlock: bool = False
    cpu_repack: bool | None = None  # llama.cpp's repacked CPU weights (AMX/AVX); None: off on AMX CPUs
    url: str = "http://127.0.0.1:8000"
    api_key: str | None = None
    max_concurrency: int = 4
    connect_timeout: float = 5.0
    read_timeout: float = 120.0
    vllm: dict = field(default_factory=dict)  # VllmSettings fields


def create_backend(settings: LlmSettings, log_dir: Path | None = None, has_bf16: bool | None = None) -> Backend:
    from ..errors import EngineError

    if settings.backend == "llama_cpp":
        from .llama_cpp import LlamaCppBackend

        return LlamaCppBackend(
            settings.model,
            settings.context,
            settings.gpu_layers,
            settings.threads,
            settings.batch,
            settings.flash_attention,
            settings.kv_cache,
            settings.mlock,
            settings.cpu_repack,
        )
    if settings.backend == "openai":
        from .openai_http import OpenAIBackend

        return OpenAIBackend(
            settings.url,
            settings.model,
            settings.api_key,
            settings.max_concurrency,
            settings.connect_timeout,
            settings.read_timeout,
            settings.context,
        )
    if settings.backend == "vllm":
        from ..doctor import detect_gpus, pitfalls
        from .vllm_server import VllmServer, VllmSettings

        if not settings.model and not settings.vllm.get("command"):
            raise EngineError("the vllm backend needs a model: set [llm] model to a Hugging Face id or folder")
        options = VllmSettings(model=settings.model or "", **settings.vllm)
        if settings.context:
            options.max_model_len = settings.context
        if has_bf16 is None:
            gpus = detect_gpus()
            has_bf16 = not (gpus and any("no bf16" in p for p in pitfalls(gpus[0])))
        return VllmServer(options, log_dir or Path.cwd(), has_bf16).start()
    raise EngineError(f"unknown backend {settings.backend!r}: use one of {', '.join(BACKENDS)}")
