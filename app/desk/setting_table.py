"""Every setting DocDesk reads, declared once: its config.toml key, environment variable, flag,
bounds or choices and help. The default is the dataclass field's own (Settings, LlmSettings,
AnswerSettings, ServeSettings); app/desk/settings.py reads config.toml, then the environment, then
the flags, through this table, and nothing else reads them. The command line's flags are made from
it (app/cli/model_flags.py), the README's "Settings" table too (app/desk/setting_docs.py).

Bounds of an [llm] number come from the backend options the Settings dialog shows
(engine/backends/options.py) unless a row gives its own, so the window and config.toml agree.

`environment(name)` is the one place the app reads its environment; a name must be declared here
(a setting's `env`, or `VARIABLES` for the locations read before any setting).
"""

from __future__ import annotations

import os
from collections.abc import Callable
from dataclasses import dataclass, replace

RECORDS = ("llm", "answers", "serve")  # sections that are a record of their own on Settings
FLAG_GROUPS = {
    "common": "every command, and the window",
    "model": "the commands that run the model: ask, summarize, chat, serve, mcp",
    "serve": "docdesk serve",
}


@dataclass(frozen=True)
class Setting:
    key: str  # "section.name": `name` under [section] in config.toml
    help: str
    attr: str = ""  # the Settings attribute outside RECORDS ("library" for library.path)
    env: str | None = None  # an environment variable that overrides config.toml
    flag: str | None = None  # a command-line flag that overrides both
    group: str = ""  # which commands take the flag (FLAG_GROUPS)
    metavar: str | None = None
    minimum: float | None = None
    maximum: float | None = None
    choices: tuple | Callable[[], tuple] | None = None  # what config.toml and the environment may say
    flag_choices: Callable[[], tuple] | None = None  # what the flag offers, where it offers fewer
    implies: tuple[tuple[str, object], ...] = ()  # given as a flag, it sets these too unless flagged
    in_file: bool = True  # False: the environment (or a flag) only, never written to config.toml
    default_text: str = ""  # the default as the README says it, where the field's is not the words

    @property
    def section(self) -> str:
        return self.key.split(".", 1)[0]

    @property
    def name(self) -> str:
        return self.key.split(".", 1)[1]

    @property
    def field(self) -> str:
        """The attribute that holds it: `name` on its record, `attr` on Settings."""
        return self.name if self.section in RECORDS else self.attr

    @property
    def where(self) -> str:
        return f"[{self.section}] {self.name}"

    def allowed(self, for_flag: bool = False) -> tuple | None:
        choices = self.flag_choices if for_flag and self.flag_choices else self.choices
        return choices() if callable(choices) else choices


@dataclass(frozen=True)
class Variable:
    """An environment variable read before settings exist (where the settings are, where logs go)."""

    name: str
    help: str
    default_text: str


def _backend_names() -> tuple[str, ...]:
    from engine.backends.registry import table

    return tuple(table())  # the unlisted test backends too: a test's config may name them


def _offered_backends() -> tuple[str, ...]:
    from engine.backends.registry import listed_names

    return listed_names()


AUTO_ON_OFF = ("auto", "on", "off")

_DECLARED = (
    Setting(
        "library.path",
        "the library folder",
        attr="library",
        env="DOCDESK_HOME",
        flag="--library",
        group="common",
        metavar="DIR",
        default_text="the platform data folder (~/.local/share/docdesk/library)",
    ),
    Setting(
        "embedding.model",
        "empty: MiniLM and the multilingual USE in one vector; or all-MiniLM-L6-v2, "
        "use-multilingual-v3, bundled names joined as `a*0.3+b*0.7`, or a local sentence-transformers folder",
        attr="embedding_model",
        flag="--embedding-model",
        group="common",
        metavar="PATH",
    ),
    Setting("embedding.batch_size", "passages embedded per step", attr="embedding_batch_size", minimum=1, maximum=4096),
    Setting(
        "embedding.multilingual",
        "whether a sentence-transformers folder of your own understands more than English",
        attr="embedding_multilingual",
    ),
    Setting(
        "embedding.precision",
        "sentence-transformers weights: auto is bf16 where the CPU multiplies bf16 in "
        "hardware (AMX, AVX-512 BF16), else fp32",
        attr="embedding_precision",
        env="DOCDESK_EMBED_PRECISION",
        choices=("auto", "fp32", "bf16"),
    ),
    Setting(
        "ingest.ocr",
        "read scans and photos with OCR (slow on a laptop); false: they are refused with that reason",
        attr="ocr",
        env="DOCDESK_OCR",
    ),
    Setting(
        "ui.language", "the window's language; empty: the system's", attr="ui_language", choices=("", "en", "zh_CN")
    ),
    # [llm]: one flat table for every backend; registry.BUILT_IN says which fields each reads
    Setting(
        "llm.backend",
        "the LLM backend",
        flag="--backend",
        group="model",
        choices=_backend_names,
        flag_choices=_offered_backends,
    ),
    Setting(
        "llm.model",
        "GGUF file (llama_cpp, llama_server), served model name (openai), HF id or folder (vllm); "
        "empty: the bundled SmolLM2-135M-Instruct",
        flag="--model",
        group="model",
        metavar="PATH_OR_NAME",
    ),
    Setting(
        "llm.context", "tokens the model sees at once; empty: the smaller of 8192 and the model's training context"
    ),
    Setting("llm.gpu_layers", "layers put on the GPU; -1: all, 0: CPU only"),
    Setting(
        "llm.threads",
        "llama.cpp threads that write the answer; empty: measured for this machine",
        flag="--threads",
        group="model",
        metavar="N",
    ),
    Setting(
        "llm.threads_batch",
        "llama.cpp threads that read the prompt; empty: all cores",
        flag="--threads-batch",
        group="model",
        metavar="N",
    ),
    Setting("llm.batch", "prompt tokens read per step"),
    Setting("llm.flash_attention", "flash attention; empty: on where a GPU is"),
    Setting(
        "llm.kv_cache",
        '"f16" or "q8_0" (halves the cache, needs flash attention); empty: f16 in process, '
        "q8_0 where llama-server's slots need it",
    ),
    Setting("llm.mlock", "keep the model in memory (never swapped out)"),
    Setting("llm.cpu_repack", "llama.cpp's repacked CPU weights (AMX/AVX); empty: off on AMX CPUs"),
    Setting(
        "llm.url",
        "an OpenAI-compatible server (openai); the flag alone also picks backend openai",
        flag="--url",
        group="model",
        metavar="URL",
        implies=(("llm.backend", "openai"),),
    ),
    Setting("llm.api_key", "sent to the server as a Bearer token; empty: none"),
    Setting("llm.max_concurrency", "requests sent to the server at once"),
    Setting("llm.connect_timeout", "seconds to wait for the server to accept a connection"),
    Setting("llm.read_timeout", "seconds to wait for the server's next words"),
    Setting("llm.vllm", 'vLLM\'s own settings, e.g. { quantization = "gptq", max_num_seqs = 16 }'),
    Setting("llm.llama_server", "the llama-server program; empty: llama-server on PATH, then `make llama-server`'s"),
    Setting("llm.slots", "llama-server's parallel slots; empty: as many as the GPU's memory holds, 4 on a CPU"),
    Setting("llm.server_port", "llama-server's port; empty: a free one"),
    Setting("llm.thinking", "thinking models (Qwen3, QwQ, DeepSeek-R1): true or false; empty: the model's default"),
    Setting("llm.thinking_budget", "tokens of thinking per answer at most; empty: no limit"),
    Setting(
        "llm.speculation",
        'prompt-lookup speculation: "ngram" or "off"; empty: as measured (on for llama-server on a CPU)',
    ),
    Setting(
        "llm.build_cache",
        "DocDesk's build cache, where `make llama-server` leaves llama-server",
        env="DOCDESK_CACHE",
        in_file=False,
        default_text="the platform cache (~/.cache/docdesk)",
    ),
    Setting(
        "answers.context_tokens",
        "document text given to the model, in tokens; empty: 3000 on a GPU or server, 1200 on a CPU",
        minimum=1,
    ),
    Setting("answers.answer_tokens", "the answer's length at most, in tokens", minimum=1),
    Setting("answers.history_turns", "earlier exchanges of a chat the model sees", minimum=0),
    Setting("answers.candidates", "passages considered for the context", minimum=1),
    Setting("answers.temperature", "the model's sampling temperature", minimum=0, maximum=2),
    Setting(
        "answers.translate_queries",
        "also search with the question in the library's other language (auto: with a model that can translate)",
        choices=AUTO_ON_OFF,
    ),
    Setting(
        "answers.rerank",
        "the model judges the top 8 passages and reorders them (auto: on a GPU server, while it is fast)",
        choices=AUTO_ON_OFF,
    ),
    Setting("serve.enabled", "the window starts the server when it opens"),
    Setting(
        "serve.host",
        "the address to listen on; another than loopback needs a token",
        flag="--host",
        group="serve",
        metavar="ADDRESS",
    ),
    Setting(
        "serve.port",
        "the port; 0: any free one",
        flag="--port",
        group="serve",
        metavar="PORT",
        minimum=0,
        maximum=65535,
    ),
    Setting(
        "serve.token",
        "clients send `Authorization: Bearer TOKEN`; empty: none asked (the variable stays out of `ps`)",
        env="DOCDESK_TOKEN",
        flag="--token",
        group="serve",
        metavar="TOKEN",
    ),
    Setting(
        "serve.queue",
        "requests that may wait for the model beyond those it runs; more get 429",
        flag="--queue",
        group="serve",
        metavar="N",
        minimum=0,
    ),
    Setting("serve.max_body_bytes", "a request body beyond this many bytes gets 413", minimum=1),
)

VARIABLES = (
    Variable(
        "DOCDESK_CONFIG",
        "the settings file (and window.ini beside it)",
        "config.toml in the platform config folder (~/.config/docdesk)",
    ),
    Variable("DOCDESK_LOG_DIR", "where the log files go", "the platform log folder (~/.local/state/docdesk/log)"),
    Variable("DOCDESK_MODELS", "where downloaded models go", "models/ in the platform data folder"),
    Variable(
        "DOCDESK_MODEL_CATALOG",
        "the model catalog the Models dialog and `docdesk models` list",
        "the catalog that ships with DocDesk",
    ),
    Variable("HF_ENDPOINT", "the Hugging Face Hub to download from (a mirror)", "https://huggingface.co"),
    Variable("DOCDESK_REPORT_STARTUP", "print when the window is shown (tests/bench/bench_gui.py)", "off"),
)


def _option_bounds(row: Setting) -> Setting:
    """An [llm] number's bounds from the Settings dialog's option for it, where the row has none."""
    if row.section != "llm" or row.minimum is not None or row.maximum is not None:
        return row
    from engine.backends.registry import BUILT_IN

    for entry in BUILT_IN.values():
        for choice in entry.choices:
            for option in choice.options:
                if option.name == row.name and option.kind in ("int", "float"):
                    return replace(row, minimum=option.minimum, maximum=option.maximum)
    return row


SETTINGS: tuple[Setting, ...] = tuple(_option_bounds(row) for row in _DECLARED)
BY_KEY = {row.key: row for row in SETTINGS}
NAMES = frozenset({row.env for row in SETTINGS if row.env} | {v.name for v in VARIABLES})


def environment(name: str) -> str | None:
    """The value of a declared environment variable; None where it is unset or empty."""
    if name not in NAMES:
        raise KeyError(f"{name} is not declared in app/desk/setting_table.py")
    value = os.environ.get(name, "").strip()
    return value or None
