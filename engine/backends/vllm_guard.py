"""Before vLLM starts: what is installed in the Python that will run it (vLLM's version, torch's
CUDA architectures, flashinfer), checked against the card and the model with the table of what
runs where (engine/models/gpu_support.toml). An impossible combination is refused within seconds,
with the reason and one that works, instead of a traceback in vLLM's log minutes later."""

from __future__ import annotations

import json
import logging
import re
import shutil
import subprocess
import sys
from dataclasses import dataclass, field
from pathlib import Path

from engine.errors import BackendUnavailable
from engine.models import gpu_support

log = logging.getLogger(__name__)

PROBE_TIMEOUT = 30.0  # importing torch takes a few seconds on a cold disk
SAMPLER = "VLLM_USE_FLASHINFER_SAMPLER"
# Run by vLLM's own interpreter, in the environment vLLM will get: it reads its own environment.
PROBE = f"""
import importlib.metadata as m, importlib.util as u, json, os, sys
out = {{"flashinfer": u.find_spec("flashinfer") is not None, "sampler_env": os.environ.get("{SAMPLER}")}}
for name in ("vllm", "torch"):
    try:
        out[name] = m.version(name)
    except m.PackageNotFoundError:
        out[name] = ""
try:
    import torch
    out["arch_list"] = list(torch.cuda.get_arch_list())
except Exception:
    out["arch_list"] = []
sys.stdout.write("DOCDESK-PROBE " + json.dumps(out) + "\\n")  # the answer, read by the parent: data, not a log
"""


@dataclass
class Probe:
    vllm: str = ""
    torch: str = ""
    arch_list: list[str] = field(default_factory=list)  # [] where torch sees no CUDA: not checked
    flashinfer: bool = False
    sampler_env: str | None = None  # VLLM_USE_FLASHINFER_SAMPLER as the user set it (None: unset)


def interpreter_of(launcher: list[str]) -> str | None:
    """The Python that runs vLLM: this one for `python -m vllm...`, else the `vllm` script's own
    (its #! line, or pip's `/bin/sh` + `exec` form for long paths), else a python beside it."""
    if launcher[:2] == [sys.executable, "-m"]:
        return sys.executable
    script = Path(launcher[0])
    try:
        head = script.read_bytes()[:1024].decode("utf-8", "replace").splitlines()
    except OSError:
        return None
    if head and head[0].startswith("#!"):
        words = head[0][2:].split()
        if words and Path(words[0]).name == "env" and len(words) > 1:
            words = [shutil.which(words[1]) or words[1]]
        if words and "python" in Path(words[0]).name:
            return words[0]
        for line in head[1:4]:  # pip: '''exec' "/a/very/long/path/python" "$0" "$@"
            found = re.search(r"exec'?\s+\"?([^\"\s]*python[^\"\s]*)", line)
            if found:
                return found.group(1)
    for name in ("python", "python3"):
        if (script.parent / name).exists():
            return str(script.parent / name)
    return None


def probe(python: str | None, timeout: float = PROBE_TIMEOUT, run=subprocess.run) -> Probe | None:
    """One call to vLLM's interpreter; None (and a note in the log) where it cannot be asked."""
    if not python:
        log.info("vLLM guard: no Python found for the vllm program; starting it without the checks")
        return None
    try:
        done = run([python, "-c", PROBE], capture_output=True, text=True, timeout=timeout)
        line = next(x for x in (done.stdout or "").splitlines() if x.startswith("DOCDESK-PROBE "))
        data = json.loads(line.split(" ", 1)[1])
        return Probe(**{k: data[k] for k in Probe.__dataclass_fields__ if k in data})
    except (OSError, subprocess.TimeoutExpired, StopIteration, ValueError, TypeError) as exc:
        log.info("vLLM guard: asking %s what is installed failed (%s); starting vLLM without the checks", python, exc)
        return None


def _version(text: str) -> tuple[int, ...]:
    return tuple(int(x) for x in re.findall(r"\d+", text.split("+")[0])[:3])


def _arch_runs(arch_list: list[str], compute_capability: str) -> bool:
    """Whether torch ships kernels the card runs: a cubin of its major at or below its minor, or PTX at or below it."""
    cc = gpu_support.capability(compute_capability)
    for arch in arch_list:
        kind, _, digits = arch.partition("_")
        if not digits.isdigit() or cc is None:
            continue
        have = (int(digits[:-1]), int(digits[-1]))
        if (kind == "sm" and have[0] == cc[0] and have <= cc) or (kind == "compute" and have <= cc):
            return True
    return not arch_list


def problems(found: Probe, compute_capability: str, quantization: str = "", dtype: str | None = None) -> list[str]:
    """Why vLLM cannot run here, each with one that works ([] where nothing is known to be wrong)."""
    row, cc = gpu_support.card(compute_capability), compute_capability
    name = row.get("name", f"compute capability {cc}")
    wrong: list[str] = []
    last = row.get("vllm_last", "")
    if found.vllm and last and _version(found.vllm) >= _version(last):
        wrong.append(
            f"vLLM {found.vllm} does not run on {name} (compute capability {cc}): from {last} on vLLM needs "
            f"{gpu_support.table()['vllm']['min_capability']}. Install a release below {last} with {row.get('torch', 'a torch for it')} "
            f"(pip install 'vllm<{last}'), or use the llama_cpp backend [{row.get('vllm_source', '')}]"
        )
    if found.arch_list and not _arch_runs(found.arch_list, cc):
        wrong.append(
            f"torch {found.torch} has no kernels for {row.get('sm', 'sm_' + cc.replace('.', ''))} (it was built for "
            f"{' '.join(found.arch_list)}): install {row.get('torch', 'a torch build for this card')} "
            f"[{row.get('torch_source', 'torch.cuda.get_arch_list()')}]"
        )
    if quantization and gpu_support.quantization_runs(cc, quantization) is False:
        working = ", ".join(m.upper() for m in gpu_support.working_quantizations(cc)) or "none"
        wrong.append(
            f"{quantization.upper()} needs compute capability {gpu_support.quantization_needs(quantization)}, "
            f"{name} has {cc}: use a build of the model in one that runs on it ({working}; GPTQ for a 4-bit model) "
            f"[{gpu_support.table()['vllm']['quantization_source']}]"
        )
    if dtype and dtype.lower() in ("bfloat16", "bf16") and not gpu_support.has_bf16(cc):
        wrong.append(f'{name} has no bf16 (compute capability {cc}): use dtype = "half" (fp16)')
    return wrong


def check(found: Probe | None, compute_capability: str, quantization: str = "", dtype: str | None = None) -> None:
    """Raise BackendUnavailable naming every problem; nothing where the probe or the card is unknown."""
    if found is None or not compute_capability:
        return
    wrong = problems(found, compute_capability, quantization, dtype)
    if wrong:
        raise BackendUnavailable("vLLM cannot start on this machine:\n- " + "\n- ".join(wrong))


def environment_prefix(found: Probe | None) -> list[str]:
    """`env VLLM_USE_FLASHINFER_SAMPLER=0` before the command where flashinfer is missing and the
    user did not set it: vLLM's engine dies at load otherwise (gpu_support.toml: flashinfer_sampler_source).
    Only vLLM's environment changes, never DocDesk's; without the probe nothing is known, and
    nothing changes."""
    if found is None or found.flashinfer or found.sampler_env is not None:
        return []
    program = shutil.which("env")
    return [program, f"{SAMPLER}=0"] if program else []
