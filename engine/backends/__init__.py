"""LLM backends behind one protocol, and the factory that builds one from settings."""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

from .base import Backend, ChatRequest, GenerationStats, Message

__all__ = ["Backend", "ChatRequest", "GenerationStats", "LlmSettings", "Message", "create_backend"]

BACKENDS = ("llama_cpp", "llama_server", "openai", "vllm")


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
            settings.kv_cache or "f16",
            settings.mlock,
            settings.cpu_repack,
        )
    if settings.backend == "llama_server":
        from .llama_cpp import bundled_model_path
        from .llama_server import LlamaServer, LlamaServerSettings

        options = LlamaServerSettings(
            model=Path(settings.model).expanduser() if settings.model else bundled_model_path(),
            executable=settings.llama_server,
            slots=settings.slots,
            context=settings.context,
            gpu_layers=settings.gpu_layers,
            flash_attention=settings.flash_attention,
            kv_cache=settings.kv_cache,
            threads=settings.threads,
            port=settings.server_port,
        )
        # The server's log goes beside the library, where a user looks first.
        return LlamaServer(options, log_dir or Path.cwd()).start()
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
