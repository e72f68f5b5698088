"""What DocDesk sets in its own process environment, in one place, as it starts: app/cli/main.py's
`main`, which the window, every command and the packaged app go through, calls these before
anything loads torch, transformers, huggingface_hub or llama.cpp. The core (engine/, ingest/)
never touches os.environ.

Each is a default: a value the user set wins. The reader process and every other child inherit them.
"""

from __future__ import annotations

import os

# name -> (value, why), set in every DocDesk process
PROCESS_ENV: dict[str, tuple[str, str]] = {
    "HF_HUB_OFFLINE": ("1", "DocDesk never downloads at run time (a model download's child sets 0 for itself)"),
    "TOKENIZERS_PARALLELISM": ("false", "no tokenizers thread pool beside the reader process (and no fork warning)"),
    "HF_HUB_DISABLE_PROGRESS_BARS": ("1", "no progress bars from huggingface_hub on the terminal"),
}

# The reader process shares the CPU with torch during ingest: OpenMP threads that spin while they
# wait would burn the core it needs (measured: the embed stage 23% slower with a reader beside it,
# against 8% with passive waiting). OpenMP reads the variable once, as it loads, and llama.cpp's
# libggml and torch share one libgomp (both need libgomp.so.1). For llama.cpp decoding a token at
# a time the policy cuts both ways (the bundled SmolLM2-135M, 2 threads on a 2-core machine shared
# with other work: 119-131 tokens/s spinning against 39-45 passive at a load of ~2; 2-24 against
# ~56 at ~3.7), so a process that decodes with llama.cpp keeps OpenMP's default, as it had before
# (llama.cpp's libraries loaded before torch's there).
WAIT_POLICY = ("OMP_WAIT_POLICY", "PASSIVE")
WAIT_POLICY_WHY = (
    "OpenMP threads sleep while they wait, where this process does not run llama.cpp itself (the llama_cpp "
    "backend's commands and window): the reader process beside torch needs the core"
)


def prepare_process() -> None:
    """Set DocDesk's process environment (first thing in main)."""
    for name, (value, _why) in PROCESS_ENV.items():
        os.environ.setdefault(name, value)


def choose_openmp_waiting(runs_llama_cpp: bool) -> None:
    """Passive OpenMP waiting, unless this process decodes with llama.cpp (then before it loads)."""
    if not runs_llama_cpp:
        os.environ.setdefault(*WAIT_POLICY)
