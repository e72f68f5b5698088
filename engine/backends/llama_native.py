"""What llama-cpp-python's `Llama` class does not offer, read or set in llama.cpp's own library:
whether the build can offload to a GPU, and model parameters `Llama()` has no argument for; and
that `Llama()` leaves the GGUF's chat template alone (DocDesk renders it, within bounds)."""

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

    During the same load `Llama()` does not compile the GGUF's chat templates: it would, with an
    unbounded jinja2 environment, and a template that is not valid Jinja would fail the load with
    jinja2's traceback before DocDesk's own check (engine/backends/template_check.py) could
    choose another. DocDesk never uses llama-cpp-python's chat handlers.
    """
    import llama_cpp.llama_cpp as native
    from llama_cpp import llama_chat_format

    defaults = native.llama_model_default_params
    known = {name for name, _ in native.llama_model_params._fields_}

    def patched():
        params = defaults()
        for name, value in fields.items():
            if name in known:
                setattr(params, name, value)
        return params

    formatter = llama_chat_format.Jinja2ChatFormatter
    with _PARAMS_LOCK:
        native.llama_model_default_params = patched
        llama_chat_format.Jinja2ChatFormatter = _TemplateLeftToDocDesk
        try:
            yield
        finally:
            native.llama_model_default_params = defaults
            llama_chat_format.Jinja2ChatFormatter = formatter


class _TemplateLeftToDocDesk:
    """What `Llama()` builds for each template in the GGUF during a DocDesk load: nothing compiled."""

    def __init__(self, template: str, *_args, **_kwargs) -> None:
        self.template = template

    def to_chat_handler(self):
        def refuse(*_args, **_kwargs):
            raise NotImplementedError("DocDesk renders chat templates itself (engine/backends/chat_template.py)")

        return refuse
