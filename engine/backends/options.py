"""What each backend lets users set: option descriptors over the flat [llm] settings.

config.toml's [llm] section stays one flat table (`LlmSettings`, every field kept so old configs
load). On top of it each backend's registry entry (registry.py) names its `Choice`s, the lines
of the Settings dialog's backend list, and each choice names the `Option`s that apply to it, so
the window shows only those. Labels and help are English source strings; the window translates
them in the "Backends" context (app/gui/i18n/translate.py fills the Chinese from `strings()`).

How an option's widget maps to its setting is decided here, without Qt: `shown()` is what the
widget starts at, `stored()` turns what the widget holds back into the setting. An empty text,
the minimum of a number with an `unset` text, and the first of `choices` all mean the field's
default (None for most: "decide for me").
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass

# kind -> the widget the window shows
KINDS = {
    "gguf": "a .gguf file: a line with Browse…",
    "file": "a program or folder path: a line with Browse…",
    "text": "one line of text",
    "secret": "one line of text, shown as dots",
    "int": "a whole number between minimum and maximum",
    "float": "a decimal number between minimum and maximum",
    "bool": "a check box",
    "choice": "a list of `choices`: (label, value) pairs, the first one meaning the default",
    "options": 'key=value pairs: "quantization=gptq, max_num_seqs=16" (a dict setting)',
}

AUTO_ON_OFF = (("auto", None), ("on", True), ("off", False))


@dataclass(frozen=True)
class Option:
    name: str  # the LlmSettings field it sets
    label: str
    kind: str
    help: str = ""
    minimum: float = 0
    maximum: float = 0
    step: float = 1
    unset: str = ""  # int/float: what the minimum reads as; it means the field's default
    choices: tuple[tuple[str, object], ...] = ()
    placeholder: str = ""

    def __post_init__(self) -> None:
        if self.kind not in KINDS:
            raise ValueError(f"option {self.name!r}: unknown kind {self.kind!r} (one of {', '.join(KINDS)})")
        if self.kind == "choice" and not self.choices:
            raise ValueError(f"option {self.name!r}: a choice needs choices")

    def shown(self, value: object) -> object:
        """What the widget starts at for the setting `value`."""
        if self.kind in ("int", "float"):
            return self.minimum if value is None else value
        if self.kind == "choice":
            return next((label for label, v in self.choices if v == value), self.choices[0][0])
        if self.kind == "options":
            return ", ".join(f"{k}={v}" for k, v in (value or {}).items())
        if self.kind == "bool":
            return bool(value)
        return "" if value is None else str(value)

    def stored(self, raw: object) -> object:
        """The setting for what the widget holds (`raw`: its text, number, label or check)."""
        if self.kind in ("int", "float"):
            if raw == self.minimum and self.unset:
                return default(self.name)
            return int(raw) if self.kind == "int" else float(raw)
        if self.kind == "choice":
            return dict(self.choices).get(raw, self.choices[0][1])
        if self.kind == "options":
            return parse_options(str(raw))
        if self.kind == "bool":
            return bool(raw)
        text = str(raw).strip()
        return text if text else default(self.name)


@dataclass(frozen=True)
class Choice:
    """One line of the backend list: a label and the options shown with it. `fixed` are the
    settings this line implies (the bundled model: no model file); the line is picked for a
    configuration whose settings match them."""

    key: str  # unique among all backends' choices; the backend's own name when it has one line
    label: str
    options: tuple[Option, ...] = ()
    fixed: tuple[tuple[str, object], ...] = ()
    help: str = ""

    def option(self, name: str) -> Option:
        return next(o for o in self.options if o.name == name)

    def matches(self, settings) -> bool:
        return bool(self.fixed) and all(getattr(settings, k) == v for k, v in self.fixed)


def default(name: str) -> object:
    """The LlmSettings default of field `name` (what an emptied widget means)."""
    from engine.backends import LlmSettings

    for field in dataclasses.fields(LlmSettings):
        if field.name == name:
            if field.default_factory is not dataclasses.MISSING:
                return field.default_factory()
            return field.default
    raise KeyError(f"LlmSettings has no field {name!r}")


def field_names() -> tuple[str, ...]:
    from engine.backends import LlmSettings

    return tuple(f.name for f in dataclasses.fields(LlmSettings))


def parse_options(text: str) -> dict:
    """ "quantization=gptq, max_num_seqs=16" as {"quantization": "gptq", "max_num_seqs": 16}."""
    options: dict = {}
    for part in text.split(","):
        key, _, value = part.partition("=")
        key, value = key.strip().replace("-", "_"), value.strip()
        if not key or not value:
            continue
        for cast in (int, float):
            try:
                options[key] = cast(value)
                break
            except ValueError:
                continue
        else:
            options[key] = {"true": True, "false": False}.get(value.lower(), value)
    return options


# -- the options the built-in backends share (registry.py puts them together per backend) ---------
CONTEXT = Option(
    "context", "Context length", "int", "tokens the model sees at once", 0, 1_048_576, 1024, "model default"
)
THREADS = Option(
    "threads",
    "CPU threads",
    "int",
    "threads that write the answer; automatic: measured for this machine",
    0,
    256,
    1,
    "automatic",
)
THREADS_BATCH = Option(
    "threads_batch",
    "CPU threads for prompts",
    "int",
    "threads that read the prompt; automatic: all cores",
    0,
    256,
    1,
    "automatic",
)
GPU_LAYERS = Option("gpu_layers", "GPU layers", "int", "layers put on the GPU; 0: CPU only", -1, 999, 1, "all")
BATCH = Option("batch", "Batch size", "int", "prompt tokens read per step", 1, 65_536, 128)
FLASH_ATTENTION = Option("flash_attention", "Flash attention", "choice", "auto: on where a GPU is", choices=AUTO_ON_OFF)
KV_CACHE = Option(
    "kv_cache",
    "KV cache",
    "choice",
    "q8_0 halves the cache's memory (needs flash attention)",
    choices=(("auto", None), ("f16", "f16"), ("q8_0", "q8_0")),
)
MLOCK = Option("mlock", "Keep the model in memory (mlock)", "bool", "never swap the model out")
CPU_REPACK = Option(
    "cpu_repack",
    "Repacked CPU weights",
    "choice",
    "llama.cpp's AMX/AVX layout; auto: off on AMX CPUs",
    choices=AUTO_ON_OFF,
)
GGUF_MODEL = Option("model", "Model", "gguf", "a .gguf file", placeholder="a .gguf file")
THINKING = Option(
    "thinking",
    "Thinking (reasoning models)",
    "choice",
    "Qwen3, QwQ, DeepSeek-R1: think before answering; the answer is kept apart from the thinking",
    choices=(("model default", None), ("on", True), ("off", False)),
)
THINKING_BUDGET = Option(
    "thinking_budget", "Thinking budget", "int", "tokens of thinking per answer at most", 0, 65_536, 256, "no limit"
)
SPECULATION = Option(
    "speculation",
    "Prompt-lookup speculation",
    "choice",
    "drafts copied from the sources, checked in one pass: faster where answers quote (auto: as measured)",
    choices=(("auto", None), ("on", "ngram"), ("off", "off")),
)
MAX_CONCURRENCY = Option("max_concurrency", "Parallel answers", "int", "requests sent to the server at once", 1, 256)
