"""How many CPU threads llama.cpp uses: `[llm] threads` and `threads_batch`, or a default from this machine.

llama.cpp has two counts: `n_threads` decodes the answer one token at a time, `n_threads_batch`
reads the prompt in batches (llama-server: `--threads`, `--threads-batch`). Decoding a token is a
short burst of work per thread followed by a barrier: one thread that has to wait for a core
(another thread of ours, the embedder, the window) stalls all the others at every token. Reading
a prompt is long, even work that every core speeds up.

The default: decode on the physical cores less one (at least 1), read prompts on every usable CPU.
Measured on this project's 2-core machine with the bundled 135M model (`python
tests/bench/bench_threads.py`, tests/bench/results/threads-cpu.json, medians of 5 runs, tokens/s):

    load                        decode 1 thread   decode 2 threads   prompt 1 thread   prompt 2 threads
    quiet                       61-63             53-56              145               209-249
    one busy core               52-59             36-42              81-142            96-116
    the embedder (2 threads)    30-31             32-35              59-64             70-74

One decode thread is as fast as two when the machine is quiet and about 1.4x faster while anything
else wants a core (the issue saw 12-35 against 4-9 under load); two prompt threads read 1.5x
faster when quiet and no slower under load. A machine is not told apart by name: the counts come
from /proc/cpuinfo and the process's CPU affinity, so a 16-core machine decodes on 15 threads.
"""

from __future__ import annotations

import os
import re
from dataclasses import dataclass
from pathlib import Path


@dataclass(frozen=True)
class ThreadPlan:
    threads: int  # decode
    threads_batch: int  # prompt
    source: str  # where the numbers came from, for the doctor


def usable_cpus() -> int:
    """Logical CPUs this process may run on (its affinity mask, else all)."""
    try:
        return max(1, len(os.sched_getaffinity(0)))
    except (AttributeError, OSError):
        return max(1, os.cpu_count() or 1)


def physical_cores(cpuinfo: Path = Path("/proc/cpuinfo")) -> int:
    """Physical cores (hyper-threads counted once); the usable CPUs where that cannot be read."""
    try:
        text = cpuinfo.read_text(encoding="ascii", errors="ignore")
    except OSError:
        return usable_cpus()
    cores = set()
    for block in text.split("\n\n"):
        package = re.search(r"^physical id\s*:\s*(\d+)", block, re.MULTILINE)
        core = re.search(r"^core id\s*:\s*(\d+)", block, re.MULTILINE)
        if core:
            cores.add((package.group(1) if package else "0", core.group(1)))
    return min(len(cores), usable_cpus()) if cores else usable_cpus()


def default_threads(cores: int | None = None, cpus: int | None = None) -> tuple[int, int, str]:
    """(decode threads, prompt threads, why) for a machine with `cores` physical cores and `cpus`
    usable logical CPUs (this machine's when not given)."""
    cores = physical_cores() if cores is None else cores
    cpus = usable_cpus() if cpus is None else cpus
    decode = max(1, cores - 1)
    why = f"{cores} physical cores, {cpus} CPUs: decode on cores - 1 = {decode}, prompts on all {cpus}"
    return decode, cpus, why


def plan_threads(threads: int | None = None, threads_batch: int | None = None) -> ThreadPlan:
    """The threads llama.cpp gets: what [llm] sets, the machine's default for what it leaves unset."""
    decode, batch, why = default_threads()
    if threads and threads_batch:
        return ThreadPlan(threads, threads_batch, "[llm] threads and threads_batch")
    if threads:
        return ThreadPlan(threads, batch, f"[llm] threads; threads_batch automatic ({why})")
    if threads_batch:
        return ThreadPlan(decode, threads_batch, f"[llm] threads_batch; threads automatic ({why})")
    return ThreadPlan(decode, batch, f"automatic: {why}")
