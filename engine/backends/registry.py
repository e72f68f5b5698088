"""Which backends exist and how each is built from the settings.

Each backend module registers its builder (`@register_backend("name")` on a class with a
`from_settings` classmethod). The table below only says which module holds which name, so
that looking a name up imports that one module and nothing else: `import engine.backends`
stays free of llama_cpp, httpx, torch and numpy, and llama.cpp's libraries are loaded by the
llama_cpp module itself before anything imports numpy (see llama_cpp.load_native_library).
"""

from __future__ import annotations

import importlib
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Protocol

from ..errors import EngineError

if TYPE_CHECKING:
    from . import LlmSettings
    from .base import Backend


class Builder(Protocol):
    def __call__(
        self, settings: LlmSettings, *, log_dir: Path | None = None, has_bf16: bool | None = None
    ) -> Backend: ...


@dataclass(frozen=True)
class Entry:
    module: str
    listed: bool = True  # offered to users (settings, error messages); the fake backend is not


# The one list of built-in backends: name -> the module that registers it.
BUILT_IN: dict[str, Entry] = {
    "llama_cpp": Entry("engine.backends.llama_cpp"),
    "llama_server": Entry("engine.backends.llama_server"),
    "openai": Entry("engine.backends.openai_http"),
    "vllm": Entry("engine.backends.vllm_server"),
    "fake": Entry("engine.backends.fake", listed=False),
}

_BUILDERS: dict[str, Builder] = {}


def register_backend(name: str) -> Callable[[type], type]:
    """Class decorator: `name` is built by the class's `from_settings(settings, log_dir=, has_bf16=)`."""

    def register(cls: type) -> type:
        builder = getattr(cls, "from_settings", None)
        if builder is None:
            raise TypeError(f"{cls.__name__} registers backend {name!r} but has no from_settings")
        if name in _BUILDERS and _BUILDERS[name] != builder:
            raise ValueError(f"backend {name!r} is registered twice")
        _BUILDERS[name] = builder
        return cls

    return register


def listed_names() -> tuple[str, ...]:
    """The backends offered to users, in a stable order."""
    return tuple(sorted(name for name, entry in BUILT_IN.items() if entry.listed))


def builder(name: str) -> Builder:
    """The builder for `name`, importing only the module that registers it."""
    if name not in _BUILDERS and name in BUILT_IN:
        importlib.import_module(BUILT_IN[name].module)
    found = _BUILDERS.get(name)
    if found is None:
        raise EngineError(f"unknown backend {name!r}: use one of {', '.join(listed_names())}")
    return found
