"""The one table of backends: which exist, which module builds each, and what users see of them.

`BUILT_IN` maps a backend's name to its `Entry`: the module that registers its builder
(`@register_backend("name")` on a class with a `from_settings` classmethod), its lines in the
Settings dialog (`Choice`: a label, a help line, the `Option`s that apply; options.py), and
whether users are offered it. The command line's --backend choices, the Settings dialog's
list and fields, the translation table (app/gui/i18n/translate.py) and the packaged app's
hidden imports (packaging/docdesk.spec) are all read from here.

Adding a backend: write its module with `@register_backend("name")` on its class, and add a
line to BUILT_IN; a backend kept outside engine/ passes its entry instead,
`@register_backend("name", entry=Entry(__name__, (Choice(...),)))`, when its module is imported.

Looking a name up imports that one module and nothing else: `import engine.backends` stays
free of llama_cpp, httpx, torch and numpy, and llama.cpp's libraries are loaded by the
llama_cpp module itself before anything imports numpy (see llama_cpp.load_native_library).
"""

from __future__ import annotations

import importlib
from collections.abc import Callable
from dataclasses import dataclass, replace
from pathlib import Path
from typing import TYPE_CHECKING, Protocol

from engine.backends.options import (
    BATCH,
    CONTEXT,
    CPU_REPACK,
    FLASH_ATTENTION,
    GGUF_MODEL,
    GPU_LAYERS,
    KV_CACHE,
    MAX_CONCURRENCY,
    MLOCK,
    SPECULATION,
    THINKING,
    THINKING_BUDGET,
    THREADS,
    THREADS_BATCH,
    Choice,
    Option,
    field_names,
)
from engine.errors import EngineError

if TYPE_CHECKING:
    from engine.backends import LlmSettings
    from engine.backends.base import Backend


class Builder(Protocol):
    def __call__(
        self, settings: LlmSettings, *, log_dir: Path | None = None, has_bf16: bool | None = None
    ) -> Backend: ...


@dataclass(frozen=True)
class Entry:
    module: str  # the module that registers the backend (and goes into the packaged app)
    choices: tuple[Choice, ...] = ()  # its lines in the Settings dialog, with their options
    listed: bool = True  # offered to users (settings, error messages); the fake backend is not
    # What the kind runs, for callers that have only its name (each backend's Capabilities agree):
    gguf: bool = False  # a GGUF file, [llm] model's path (empty: the bundled model)
    served: bool = False  # a model someone serves: its size and file are not known here
    remote: bool = False  # a server DocDesk does not start, at [llm] url: not this computer's hardware
    installed_llama_cpp: bool = False  # llama-cpp-python as installed, in this process (its build's GPU support)


_SERVER = Option("url", "Server URL", "text", "where the server listens", placeholder="http://127.0.0.1:8000")
_SERVED_MODEL = Option("model", "Model name", "text", "the model the server serves; empty: its first one")
_LOCAL_SERVER = (
    Option("llama_server", "llama-server program", "file", "empty: llama-server on PATH, else the one DocDesk built"),
    Option("slots", "Parallel answers (llama-server)", "int", "answers run at once", 0, 64, 1, "as many as fit"),
    Option("server_port", "Port", "int", "the port llama-server listens on", 0, 65_535, 1, "a free one"),
)

# The one list of built-in backends: name -> the module that registers it, and what users see.
BUILT_IN: dict[str, Entry] = {
    "llama_cpp": Entry(
        "engine.backends.llama_cpp",
        (
            Choice(
                "bundled",
                "Bundled model (SmolLM2-135M, CPU)",
                (CONTEXT, THREADS),
                fixed=(("model", None),),
                help="A small model that comes with DocDesk: no download, no GPU needed.",
            ),
            Choice(
                "gguf",
                "GGUF file (llama.cpp)",
                (
                    GGUF_MODEL,
                    CONTEXT,
                    GPU_LAYERS,
                    THREADS,
                    THREADS_BATCH,
                    BATCH,
                    FLASH_ATTENTION,
                    KV_CACHE,
                    MLOCK,
                    CPU_REPACK,
                    THINKING,
                    THINKING_BUDGET,
                    SPECULATION,
                ),
                help="A model file of your own, run inside DocDesk.",
            ),
        ),
        gguf=True,
        installed_llama_cpp=True,
    ),
    "llama_server": Entry(
        "engine.backends.llama_server",
        (
            Choice(
                "llama_server",
                "GGUF file, several answers at once (llama-server, started by DocDesk)",
                (
                    replace(GGUF_MODEL, help="empty: the bundled model", placeholder="the bundled model"),
                    *_LOCAL_SERVER,
                    CONTEXT,
                    GPU_LAYERS,
                    THREADS,
                    THREADS_BATCH,
                    FLASH_ATTENTION,
                    KV_CACHE,
                    CPU_REPACK,
                    THINKING,
                    THINKING_BUDGET,
                    SPECULATION,
                ),
                help="DocDesk starts llama-server and stops it on exit.",
            ),
        ),
        gguf=True,
    ),
    "vllm": Entry(
        "engine.backends.vllm_server",
        (
            Choice(
                "vllm",
                "vLLM (started by DocDesk)",
                (
                    Option(
                        "model",
                        "Model",
                        "text",
                        "a Hugging Face model id or folder",
                        placeholder="Qwen/Qwen2.5-7B-Instruct",
                    ),
                    replace(CONTEXT, help="vLLM's max_model_len", unset="8192"),
                    THINKING,
                    THINKING_BUDGET,
                    SPECULATION,
                    Option(
                        "vllm",
                        "vLLM options",
                        "options",
                        "key=value pairs of vLLM's settings",
                        placeholder="quantization=gptq, max_num_seqs=16, gpu_memory_utilization=0.9",
                    ),
                ),
                help="DocDesk starts a vLLM server on the GPU and stops it on exit.",
            ),
        ),
        served=True,
    ),
    "openai": Entry(
        "engine.backends.openai_http",
        (
            Choice(
                "openai",
                "OpenAI-compatible server",
                (
                    _SERVER,
                    _SERVED_MODEL,
                    Option("api_key", "API key", "secret", "sent as a Bearer token; empty: none"),
                    replace(CONTEXT, unset="ask the server"),
                    MAX_CONCURRENCY,
                    THINKING,
                    THINKING_BUDGET,
                    Option("connect_timeout", "Connect timeout (s)", "float", "", 0.5, 600, 1),
                    Option("read_timeout", "Read timeout (s)", "float", "longest wait for the next words", 1, 3600, 10),
                ),
                help="A server that is already running (llama.cpp, vLLM, Ollama, LM Studio…).",
            ),
        ),
        served=True,
        remote=True,
    ),
    "fake": Entry("engine.backends.fake", listed=False),
}

_ADDED: dict[str, Entry] = {}  # backends registered from elsewhere (register_backend(name, entry=...))
_BUILDERS: dict[str, Builder] = {}


def register_backend(name: str, entry: Entry | None = None) -> Callable[[type], type]:
    """Class decorator: `name` is built by the class's `from_settings(settings, log_dir=, has_bf16=)`.

    A backend that is not in BUILT_IN passes its `entry` (its module is the class's own), which
    adds it to the table: the command line, the Settings dialog and the packaged app see it.
    """

    def register(cls: type) -> type:
        builder = getattr(cls, "from_settings", None)
        if builder is None:
            raise TypeError(f"{cls.__name__} registers backend {name!r} but has no from_settings")
        if entry is not None:
            _check(name, entry)
        if name in _BUILDERS and _BUILDERS[name] != builder:
            raise ValueError(f"backend {name!r} is registered twice")
        if entry is not None:
            _ADDED[name] = entry
        _BUILDERS[name] = builder
        return cls

    return register


def _check(name: str, entry: Entry) -> None:
    """An entry from elsewhere: a new name, its own choice keys, options that are [llm] settings."""
    if name in BUILT_IN:
        raise ValueError(f"backend {name!r} is built in: its entry is BUILT_IN's")
    if _ADDED.get(name, entry) != entry:
        raise ValueError(f"backend {name!r} is registered twice")
    keys = [c.key for n, e in table().items() if n != name for c in e.choices]
    fields = field_names()
    for choice in entry.choices:
        if choice.key in keys:
            raise ValueError(f"backend {name!r}: the choice {choice.key!r} is taken")
        unknown = [o.name for o in choice.options if o.name not in fields]
        unknown += [k for k, _ in choice.fixed if k not in fields]
        if unknown:
            raise ValueError(f"backend {name!r}: {', '.join(unknown)} are not [llm] settings")
        keys.append(choice.key)


def unregister_backend(name: str) -> None:
    """Forget a backend added by register_backend(name, entry=...) (the built-in ones stay)."""
    if name in BUILT_IN:
        raise ValueError(f"{name!r} is built in")
    _ADDED.pop(name, None)
    _BUILDERS.pop(name, None)


def table() -> dict[str, Entry]:
    """Every backend: the built-in ones, then those registered from elsewhere."""
    return {**BUILT_IN, **_ADDED}


def listed_names() -> tuple[str, ...]:
    """The backends offered to users, in a stable order."""
    return tuple(sorted(name for name, entry in table().items() if entry.listed))


def gguf_backends() -> tuple[str, ...]:
    """The backends that run a GGUF file of [llm] model, in the table's order (a downloaded model
    goes to the first unless the chosen backend is one)."""
    return tuple(name for name, entry in table().items() if entry.gguf)


def gguf_choices() -> tuple[str, ...]:
    """The Settings dialog's lines where a GGUF file is picked (a `model` option of a GGUF backend)."""
    gguf = gguf_backends()
    return tuple(c.key for name, c in offered() if name in gguf and any(o.name == "model" for o in c.options))


NOTHING = Entry("", listed=False)  # what a name nobody registered declares: nothing


def declared(name: str) -> Entry:
    """What backend `name`'s entry declares (gguf, served, remote, installed_llama_cpp), for a
    caller that has only the name; a name nobody registered declares nothing."""
    return table().get(name, NOTHING)


def builder(name: str) -> Builder:
    """The builder for `name`, importing only the module that registers it."""
    entry = table().get(name)
    if name not in _BUILDERS and entry is not None:
        importlib.import_module(entry.module)
    found = _BUILDERS.get(name)
    if found is None:
        raise EngineError(f"unknown backend {name!r}: use one of {', '.join(listed_names())}")
    return found


def offered() -> tuple[tuple[str, Choice], ...]:
    """The Settings dialog's backend list, in order: (backend name, choice)."""
    return tuple((name, choice) for name, entry in table().items() if entry.listed for choice in entry.choices)


def choice_for(settings: LlmSettings) -> str:
    """The key of the line that shows `settings`: the first of its backend whose fixed settings
    match, else its first without any; an unlisted backend shows as the first line."""
    lines = [choice for name, choice in offered() if name == settings.backend]
    picked = next((c for c in lines if c.matches(settings)), None) or next((c for c in lines if not c.fixed), None)
    return (picked or offered()[0][1]).key


def options(name: str) -> tuple[Option, ...]:
    """Every option backend `name` reads, over all its choices, each field once."""
    seen: dict[str, Option] = {}
    for choice in table()[name].choices:
        for option in choice.options:
            seen.setdefault(option.name, option)
    return tuple(seen.values())


def hidden_imports() -> list[str]:
    """The modules of every backend: PyInstaller cannot see them (builder() imports them by name)."""
    return sorted({entry.module for entry in table().values()})


def strings() -> list[str]:
    """The user-visible English of every listed backend, for the translation table."""
    found: dict[str, None] = {}
    for _, choice in offered():
        for text in (choice.label, choice.help):
            found[text] = None
        for option in choice.options:
            texts = (option.label, option.help, option.unset, option.placeholder, *(c for c, _ in option.choices))
            found.update(dict.fromkeys(texts))
    return [text for text in found if text]
