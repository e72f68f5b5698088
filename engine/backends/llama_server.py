"""llama.cpp's `llama-server` with parallel slots, started and stopped by DocDesk.

The in-process backend decodes one request at a time; llama-server decodes N requests together
in one batch (`--parallel N`), so a summary maps N blocks at once and several chats answer at
the same time, for about the memory cost of N contexts. It runs under the shared process
manager and is then an OpenAI-compatible backend with `max_concurrency` = N.
"""

from __future__ import annotations

import logging
import shutil
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import TYPE_CHECKING

from engine.backends.capabilities import Capabilities, Reasoning
from engine.backends.managed_server import ManagedServer, choose_port
from engine.backends.registry import register_backend
from engine.backends.speculation import chosen, llama_server_flags
from engine.errors import BackendUnavailable, ModelLoadError, ModelNotFound
from engine.models.threads import plan_threads

if TYPE_CHECKING:
    from engine.backends import LlmSettings

log = logging.getLogger(__name__)

MAX_SLOTS = 16
CPU_SLOTS = 4  # without a GPU: batching still shares each weight read; more slots only add latency
DEFAULT_CONTEXT = 8192


@dataclass
class LlamaServerSettings:
    model: Path
    executable: str | None = None  # None: `llama-server` on PATH, else the one `make llama-server` built
    slots: int | None = None  # None: as many as the memory plan fits, at most MAX_SLOTS
    context: int | None = None  # per slot; None: the smaller of 8192 and the model's training context
    gpu_layers: int = -1
    flash_attention: bool | None = None  # None: on where a GPU is
    kv_cache: str | None = None  # None: f16 where every slot fits with it, else q8_0 (needs flash attention)
    threads: int | None = None  # decode threads; None: engine/models/threads.py decides
    threads_batch: int | None = None  # prompt threads; None: as decided there
    port: int | None = None
    build_cache: str | None = None  # where `make llama-server` left its builds; None: the platform cache
    cpu_repack: bool | None = None  # llama.cpp's repacked CPU weights; None: off on AMX CPUs (it segfaults there)
    thinking: bool | None = None  # None: the template's default; False: no thinking; True: thinking
    thinking_budget: int | None = None  # tokens of thinking per answer; None: no cap
    startup_timeout: float = 300.0
    speculation: str | None = (
        None  # "ngram" | "off"; None: as measured for a GPU or a CPU (engine/backends/speculation.py)
    )
    extra_args: list[str] = field(default_factory=list)


def built_servers(cache: str | None = None) -> list[Path]:
    """The llama-server programs `make llama-server` left in DocDesk's build cache (`cache`, from
    [llm] build_cache, else the platform's), newest first."""
    from platformdirs import user_cache_dir

    root = Path(cache or user_cache_dir("docdesk")).expanduser() / "llama-server"
    found = [p for p in root.glob("*/llama-server") if p.is_file()]
    return sorted(found, key=lambda p: p.stat().st_mtime, reverse=True)


def find_executable(configured: str | None, cache: str | None = None) -> str:
    if configured:
        path = Path(configured).expanduser()
        if not path.is_file():
            raise BackendUnavailable(f"llama-server not found at {path}: fix [llm] llama_server in the settings")
        return str(path)
    on_path = shutil.which("llama-server")
    if on_path:
        return on_path
    built = built_servers(cache)
    if built:
        return str(built[0])
    raise BackendUnavailable(
        "llama-server is not installed: run `make llama-server` (builds it from the pinned llama.cpp), "
        "put a llama.cpp release's llama-server on PATH, or set [llm] llama_server to its path"
    )


@dataclass
class ServerPlan:
    """What the server is started with, decided once from the model and the machine."""

    slots: int
    context: int
    kv_cache: str
    flash_attention: bool
    on_gpu: bool
    reason: str


def plan_server(settings: LlamaServerSettings, gpus: list | None = None) -> ServerPlan:
    from engine.models.doctor import detect_gpus, server_kv_cache, slot_plan
    from engine.models.gguf_info import read_gguf

    shape = read_gguf(settings.model)
    gpus = detect_gpus() if gpus is None else gpus
    on_gpu = bool(gpus) and settings.gpu_layers != 0
    context = settings.context or min(DEFAULT_CONTEXT, shape.context_length or DEFAULT_CONTEXT)
    flash = on_gpu if settings.flash_attention is None else settings.flash_attention
    if settings.kv_cache:
        kv = settings.kv_cache
    elif on_gpu and flash:
        kv = server_kv_cache(shape, gpus[0].vram_bytes, context, settings.slots or MAX_SLOTS)
    else:
        kv = "f16"  # a quantized V cache needs flash attention
    if settings.slots:
        slots, reason = settings.slots, "as configured"
    elif on_gpu:
        slots = slot_plan(shape, gpus[0].vram_bytes, context, kv, MAX_SLOTS)
        reason = f"as many {context}-token slots as fit {gpus[0].name}'s memory (at most {MAX_SLOTS})"
    else:
        slots, reason = CPU_SLOTS, "no GPU: a few slots share each read of the weights"
    return ServerPlan(max(1, slots), context, kv, flash, on_gpu, reason)


def build_command(
    settings: LlamaServerSettings, plan: ServerPlan, executable: str, port: int, template_file: Path | None = None
) -> list[str]:
    """llama-server's command line; `template_file`: a chat template to use instead of the GGUF's."""
    layers = "999" if settings.gpu_layers < 0 else str(settings.gpu_layers)
    command = [
        executable,
        "--model", str(settings.model),
        "--alias", settings.model.stem,
        "--host", "127.0.0.1",
        "--port", str(port),
        "--parallel", str(plan.slots),
        "--ctx-size", str(plan.context * plan.slots),  # llama-server divides it among the slots
        "--n-gpu-layers", layers,
        "--flash-attn", "on" if plan.flash_attention else "off",
        "--cache-type-k", plan.kv_cache,
        "--cache-type-v", plan.kv_cache,
        "--jinja",  # the GGUF's own chat template (chat_template_kwargs honoured), as in process
        "--metrics",
        "--slots",
        "--no-webui",
    ]  # fmt: skip
    threads = plan_threads(settings.threads, settings.threads_batch)
    command += ["--threads", str(threads.threads), "--threads-batch", str(threads.threads_batch)]
    command += reasoning_flags(settings.thinking, settings.thinking_budget)
    from engine.backends.llama_cpp import cpu_has_amx

    # As in the in-process backend: llama.cpp's AMX repacking segfaults at the model's load on
    # AMX CPUs (llama.cpp #20824), so it is off there unless asked for.
    if not (settings.cpu_repack if settings.cpu_repack is not None else not cpu_has_amx()):
        command += ["--no-repack"]
    command += llama_server_flags(chosen("llama_server", settings.speculation, plan.on_gpu))
    if template_file is not None:
        command += ["--chat-template-file", str(template_file)]
    return command + list(settings.extra_args)


def template_for_server(shape, model: Path, folder: Path) -> tuple[str, Path | None]:
    """What --jinja renders with: the GGUF's template when DocDesk's bounded check passes it, else
    its family's, written to a file in `folder` for --chat-template-file (engine/backends/
    template_check.py); a model without one is left to llama-server's default, as before."""
    from engine.backends.chat_template import ChatTemplateError
    from engine.backends.template_check import choose_template

    if not shape.chat_template:
        return "", None
    try:
        choice = choose_template(shape.chat_template, shape.architecture, model.name)
    except ChatTemplateError as exc:
        raise ModelLoadError(str(exc)) from exc
    if choice.family is None:
        return choice.source, None
    log.warning(choice.warning)
    folder.mkdir(parents=True, exist_ok=True)
    path = folder / f"chat-template-{choice.family}.jinja"
    path.write_text(choice.source, encoding="utf-8")
    return choice.source, path


def reasoning_flags(thinking: bool | None, budget: int | None) -> list[str]:
    """Thinking models on llama-server: reasoning comes apart as `reasoning_content` (deepseek
    format: the answer's `content` never holds <think>); thinking off renders the template without
    it (--reasoning off: enable_thinking=false) and ends any block at once (--reasoning-budget 0);
    else the budget caps each block (-1: no cap). A request's chat_template_kwargs still apply."""
    flags = ["--reasoning-format", "deepseek"]
    if thinking is False:
        return flags + ["--reasoning", "off", "--reasoning-budget", "0"]
    if thinking:
        flags += ["--reasoning", "on"]
    return flags + ["--reasoning-budget", str(budget if budget is not None else -1)]


@register_backend("llama_server")
class LlamaServer(ManagedServer):
    name = "llama_server"
    # llama-server continues a final assistant message: a reply cut mid-thought is answered with
    # its thinking given back closed (engine/generation/generate.py), whatever the template does.
    continues_final_message = True

    @classmethod
    def from_settings(
        cls, settings: LlmSettings, *, log_dir: Path | None = None, has_bf16: bool | None = None
    ) -> LlamaServer:
        """Started and healthy: the GGUF of [llm] model, else the bundled one."""
        from engine.backends.llama_cpp import bundled_model_path

        options = LlamaServerSettings(
            model=Path(settings.model).expanduser() if settings.model else bundled_model_path(),
            executable=settings.llama_server,
            slots=settings.slots,
            context=settings.context,
            gpu_layers=settings.gpu_layers,
            flash_attention=settings.flash_attention,
            kv_cache=settings.kv_cache,
            threads=settings.threads,
            threads_batch=settings.threads_batch,
            port=settings.server_port,
            build_cache=settings.build_cache,
            cpu_repack=settings.cpu_repack,
            thinking=settings.thinking,
            thinking_budget=settings.thinking_budget,
            speculation=settings.speculation,
        )
        # The server's log goes beside the library, where a user looks first.
        return cls(options, log_dir or Path.cwd()).start()

    def __init__(self, settings: LlamaServerSettings, log_dir: Path, gpus: list | None = None) -> None:
        if not settings.model.is_file():
            raise ModelNotFound(f"model file not found: {settings.model} (set [llm] model to a .gguf file)")
        executable = find_executable(settings.executable, settings.build_cache)
        from engine.models.gguf_info import read_gguf

        self.model_file = settings.model  # the GGUF it serves
        self.plan = plan_server(settings, gpus)
        self._template, template_file = template_for_server(read_gguf(settings.model), settings.model, log_dir)
        # --reasoning-format deepseek: reasoning comes apart; thinking off: none comes (--reasoning off).
        self._reasoning = Reasoning.NONE if settings.thinking is False else Reasoning.APART
        port = choose_port(settings.port)
        super().__init__(
            build_command(settings, self.plan, executable, port, template_file),
            port,
            log_dir / f"llama-server-{port}.log",
            settings.startup_timeout,
            model=settings.model.stem,
            max_concurrency=self.plan.slots,
            context_window=self.plan.context,
        )

    @property
    def on_gpu(self) -> bool:
        return self.plan.on_gpu

    @property
    def capabilities(self) -> Capabilities:
        """The OpenAI-compatible client's, for a server DocDesk started on a GGUF file it knows:
        its slots and GPU as planned, the GGUF's own template, reasoning apart from the text."""
        return replace(
            super().capabilities,
            reasoning=self._reasoning,
            chat_template=self._template or None,
            gpu_offload=self.plan.on_gpu,
            model_file=self.model_file,
            served=False,
        )

    def count_tokens(self, text: str) -> int:
        """The model's own tokenizer, through the server (summaries cut pieces by it)."""
        return len(self._request("POST", "/tokenize", json={"content": text}).json()["tokens"])

    def slots(self) -> list[dict]:
        """llama-server's own view of its slots (`is_processing` for each)."""
        return self._request("GET", "/slots").json()
