"""What llama-cpp-python's `Llama` class does not offer, read or set in llama.cpp's own library:
whether the build can offload to a GPU, and model parameters `Llama()` has no argument for."""

from __future__ import annotations

import threading
from contextlib import contextmanager

_PARAMS_LOCK = threading.Lock()


def supports_gpu_offload() -> bool:
    """Whether the installed llama.cpp build can put layers on a GPU (a CUDA or Metal build)."""
    from llama_cpp import llama_supports_gpu_offload

    return bool(llama_supports_gpu_offload())


@contextmanager
def model_params(**fields):
    """Model parameters that `Llama()` does not take as arguments (it drops unknown keywords).

    `Llama.__init__` starts from `llama_model_default_params()`; for the duration of one load,
    that function returns the defaults with `fields` set.
    """
    import llama_cpp.llama_cpp as native

    defaults = native.llama_model_default_params
    known = {name for name, _ in native.llama_model_params._fields_}

    def patched():
        params = defaults()
        for name, value in fields.items():
            if name in known:
                setattr(params, name, value)
        return params

    with _PARAMS_LOCK:
        native.llama_model_default_params = patched
        try:
            yield
        finally:
            native.llama_model_default_params = defaults
