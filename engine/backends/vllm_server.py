"""Start `vllm serve` as a child process (through the shared ManagedServer), then talk to it as
an OpenAI-compatible backend."""

from __future__ import annotations

import os
import shutil
import sys
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import TYPE_CHECKING

from engine.backends.capabilities import Capabilities, Reasoning
from engine.backends.managed_server import ManagedServer, choose_port, free_port, port_in_use
from engine.backends.registry import register_backend
from engine.backends.speculation import chosen, vllm_flags
from engine.errors import BackendUnavailable, EngineError

if TYPE_CHECKING:
    from engine.backends import LlmSettings

__all__ = ["VllmServer", "VllmSettings", "build_command", "free_port", "port_in_use"]


@dataclass
class VllmSettings:
    model: str
    port: int | None = None  # None: a free port
    dtype: str | None = None  # None: "half" on GPUs without bf16, else vLLM's "auto"
    max_model_len: int = 8192
    gpu_memory_utilization: float = 0.90
    max_num_seqs: int = 16
    max_num_batched_tokens: int | None = None
    quantization: str | None = None
    prefix_caching: bool = True
    extra_args: list[str] = field(default_factory=list)
    startup_timeout: float = 600.0
    command: list[str] | None = None  # overrides the whole command line (tests, custom launchers)
    executable: str | None = None  # a `vllm` program to run as `vllm serve MODEL ...` (another environment)
    # vLLM's reasoning parser, so a thinking model's reasoning comes as reasoning_content: None
    # picks one from the model's name (reasoning_parser_for), "" runs none.
    reasoning_parser: str | None = None
    speculation: str = "off"  # "ngram": prompt-lookup speculation (engine/backends/speculation.py)


def reasoning_parser_for(model: str) -> str:
    """vLLM's parser for a thinking model family ("" for a model that does not think)."""
    name = model.lower()
    if "qwen3" in name:
        return "qwen3"
    if "qwq" in name or "deepseek-r1" in name or "r1-distill" in name:
        return "deepseek_r1"
    return ""


def _launcher(settings: VllmSettings) -> list[str]:
    """How to start vLLM: its module in this Python, or a `vllm` executable (the packaged DocDesk
    does not bundle vLLM, so it needs one installed beside it or a server started by hand)."""
    frozen = getattr(sys, "frozen", False)
    if not frozen and not settings.executable and _vllm_importable():
        return [sys.executable, "-m", "vllm.entrypoints.openai.api_server", "--model", settings.model]
    executable = os.path.expanduser(settings.executable) if settings.executable else shutil.which("vllm")
    if executable:
        return [executable, "serve", settings.model]
    if frozen:
        raise BackendUnavailable(
            "vLLM is not part of the DocDesk application: install it in its own environment "
            "(python -m venv ~/vllm && ~/vllm/bin/pip install vllm) and set [llm] vllm = { executable = "
            '"~/vllm/bin/vllm" } in config.toml, or run `vllm serve MODEL` yourself and choose the '
            "OpenAI-compatible backend with its URL"
        )
    raise BackendUnavailable(
        "vLLM is not installed: pip install 'docdesk[vllm]' (it needs an NVIDIA GPU), "
        "or use the llama_cpp backend with a GGUF file"
    )


def build_command(settings: VllmSettings, port: int, has_bf16: bool) -> list[str]:
    """The `vllm serve` command line, with DocDesk's safe defaults."""
    dtype = settings.dtype or ("auto" if has_bf16 else "half")
    command = [
        *_launcher(settings),
        "--host",
        "127.0.0.1",
        "--port",
        str(port),
        "--dtype",
        dtype,
        "--max-model-len",
        str(settings.max_model_len),
        "--gpu-memory-utilization",
        str(settings.gpu_memory_utilization),
        "--max-num-seqs",
        str(settings.max_num_seqs),
    ]
    if settings.max_num_batched_tokens:
        command += ["--max-num-batched-tokens", str(settings.max_num_batched_tokens)]
    if settings.prefix_caching:
        command.append("--enable-prefix-caching")
    if settings.quantization:
        command += ["--quantization", settings.quantization]
    if parser := reasoning_parser(settings):
        command += ["--reasoning-parser", parser]
    command += vllm_flags(settings.speculation)
    return command + list(settings.extra_args)


def reasoning_parser(settings: VllmSettings) -> str:
    """The reasoning parser DocDesk starts vLLM with ("" for none; a command of its own says nothing)."""
    if settings.command:
        return ""
    return reasoning_parser_for(settings.model) if settings.reasoning_parser is None else settings.reasoning_parser


def guard(options: VllmSettings, compute_capability: str) -> list[str]:
    """Refuse what cannot run here before vLLM starts (engine/backends/vllm_guard.py: one probe of
    vLLM's Python, the card, the model folder's quantization_config); the environment prefix vLLM needs."""
    from engine.backends import vllm_guard
    from engine.models.gpu_support import quantization_of

    found = vllm_guard.probe(vllm_guard.interpreter_of(_launcher(options)))
    quantization = options.quantization or quantization_of(options.model)
    vllm_guard.check(found, compute_capability, quantization, options.dtype)
    return vllm_guard.environment_prefix(found)


def _vllm_importable() -> bool:
    import importlib.util

    return importlib.util.find_spec("vllm") is not None


@register_backend("vllm")
class VllmServer(ManagedServer):
    """A vLLM (or any OpenAI-compatible) server process that DocDesk starts and stops."""

    name = "vllm"

    @classmethod
    def from_settings(
        cls, settings: LlmSettings, *, log_dir: Path | None = None, has_bf16: bool | None = None
    ) -> VllmServer:
        """Started and healthy; half precision on GPUs without bf16 unless `has_bf16` says otherwise."""
        from engine.models.doctor import detect_gpus, pitfalls

        if not settings.model and not settings.vllm.get("command"):
            raise EngineError("the vllm backend needs a model: set [llm] model to a Hugging Face id or folder")
        options = VllmSettings(model=settings.model or "", **settings.vllm)
        if settings.context:
            options.max_model_len = settings.context
        options.speculation = chosen("vllm", settings.speculation or settings.vllm.get("speculation"), True)
        gpus = detect_gpus() if has_bf16 is None or not options.command else []  # a command of its own: no guard
        if has_bf16 is None:
            has_bf16 = not (gpus and any("no bf16" in p for p in pitfalls(gpus[0])))
        prefix = [] if options.command else guard(options, gpus[0].compute_capability if gpus else "")
        server = cls(options, log_dir or Path.cwd(), has_bf16)
        server.command = prefix + server.command
        # Reasoning comes apart as reasoning_content where vLLM runs a reasoning parser
        # ([llm] vllm = "reasoning_parser=qwen3"); engine/generation/thinking.py splits it from the text otherwise.
        server.thinking, server.thinking_budget = settings.thinking, settings.thinking_budget
        return server.start()

    def __init__(
        self, settings: VllmSettings, log_dir: Path, has_bf16: bool = True, max_concurrency: int | None = None
    ):
        port = choose_port(settings.port)
        self.settings = settings
        super().__init__(
            settings.command or build_command(settings, port, has_bf16),
            port,
            log_dir / f"vllm-{port}.log",
            settings.startup_timeout,
            model=None if settings.command else settings.model,
            max_concurrency=max_concurrency or settings.max_num_seqs,
            context_window=settings.max_model_len,
        )

    @property
    def capabilities(self) -> Capabilities:
        """The OpenAI-compatible client's, with reasoning apart where vLLM runs a reasoning parser."""
        served = super().capabilities
        return replace(served, reasoning=Reasoning.APART) if reasoning_parser(self.settings) else served
