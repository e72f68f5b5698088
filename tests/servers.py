"""Command lines for the real servers the tests and benchmarks start on loopback."""

from __future__ import annotations

import sys

from engine.backends.llama_cpp import bundled_model_path, cpu_has_amx

# llama_cpp.server with llama.cpp's repacked CPU weights off, as DocDesk's own backends run it on
# AMX CPUs, where the repacking segfaults at load (llama.cpp #20824): the server has no flag for it.
_SERVER_WITHOUT_REPACK = """
import runpy, sys
import llama_cpp.llama_cpp as native
defaults = native.llama_model_default_params
def without_repack():
    params = defaults()
    params.use_extra_bufts = False
    return params
native.llama_model_default_params = without_repack
sys.argv[0] = "llama_cpp.server"
runpy.run_module("llama_cpp.server", run_name="__main__", alter_sys=True)
"""


def llama_server_command(threads: int = 2, context: int = 2048) -> list[str]:
    """llama.cpp's own OpenAI-compatible server on the bundled model; `{port}` is filled in by the manager."""
    start = ["-c", _SERVER_WITHOUT_REPACK] if cpu_has_amx() else ["-m", "llama_cpp.server"]
    return [
        sys.executable,
        *start,
        "--model",
        str(bundled_model_path()),
        "--host",
        "127.0.0.1",
        "--port",
        "{port}",
        "--n_ctx",
        str(context),
        "--n_threads",
        str(threads),
        "--model_alias",
        "smollm2",
    ]
