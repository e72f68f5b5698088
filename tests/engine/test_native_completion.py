"""llama.cpp in child processes: a real completion, and a large GGUF read and then loaded.

A native crash here fails the one test with its signal; the rest of the run goes on.
"""

from __future__ import annotations

import pytest

from engine.backends.llama_cpp import bundled_model_path, cpu_has_amx
from tests.native import completion_code, run_child

pytestmark = pytest.mark.models


def test_a_real_completion_runs_in_a_child_process(native_llama):
    assert not native_llama.crash, native_llama.describe()
    assert native_llama.output["tokens"] > 0 and native_llama.output["text"].strip()


@pytest.fixture(scope="module")
def large_gguf(tmp_path_factory):
    """A 0.7 GB GGUF with a real model's shape (random weights), written for this test."""
    from tests.bench.synthetic_gguf import SHAPES, write

    return write(tmp_path_factory.mktemp("gguf") / "synthetic-1b.gguf", SHAPES["llama-1b"], bundled_model_path())


def test_a_large_gguf_read_then_loaded_in_one_process(large_gguf):
    """DocDesk reads every model's header before llama.cpp loads it; the read must leave nothing
    behind that breaks the load (the gguf package's memmap reader did, on a GPU build)."""
    assert large_gguf.stat().st_size > 600 * 2**20
    result = run_child(completion_code(str(large_gguf), max_tokens=4, read_first=True, context=512))
    assert not result.crash, result.describe()
    assert result.output["tokens"] > 0  # random weights: noise, but decoded


@pytest.mark.parametrize("repack", [True, False])
def test_the_cpu_repack_setting_reaches_llama_cpp(repack):
    code = f"""
        import json
        from engine.backends.llama_cpp import LlamaCppBackend
        backend = LlamaCppBackend(context=512, cpu_repack={repack})
        backend.warm_up()
        print(json.dumps({{"use_extra_bufts": bool(backend._llm.model_params.use_extra_bufts)}}))
        backend.close()
    """
    result = run_child(code)
    assert not result.crash, result.describe()
    assert result.output == {"use_extra_bufts": repack}


def test_amx_is_read_from_the_cpu_flags(tmp_path):
    sapphire = tmp_path / "spr"
    sapphire.write_text("processor\t: 0\nflags\t\t: fpu avx512f amx_bf16 amx_tile amx_int8 avx512_fp16\n")
    epyc = tmp_path / "epyc"
    epyc.write_text("processor\t: 0\nflags\t\t: fpu avx2 fma\nbugs\t\t: amx_int8_not_a_flag\n")
    assert cpu_has_amx(sapphire) and not cpu_has_amx(epyc) and not cpu_has_amx(tmp_path / "missing")


def _first_import(log: str, module: str) -> int:
    """Line of `python -X importtime` output where module is first imported (-1: never)."""
    lines = [line.split("|")[-1].strip() for line in log.splitlines() if line.startswith("import time:")]
    return lines.index(module) if module in lines else -1


@pytest.mark.parametrize("command", [["ask", "What does DocDesk need?"], ["chat", "Say hi."]])
def test_a_model_command_loads_llama_cpp_before_numpy(tmp_path, command):
    """On the H200 machine a model load crashed once numpy was imported first: a process that
    runs the in-process model loads llama.cpp's libraries before search or ingest import numpy."""
    import os
    import subprocess
    import sys

    from tests.conftest import ROOT, SAMPLES

    env = dict(os.environ, DOCDESK_HOME=str(tmp_path / "lib"))
    subprocess.run([sys.executable, "-m", "app", "add", str(SAMPLES / "docdesk-guide.md")], env=env, check=True,
                   capture_output=True, cwd=ROOT)  # fmt: skip
    done = subprocess.run(
        [sys.executable, "-X", "importtime", "-m", "app", *command, "--json"],
        env=env, capture_output=True, text=True, cwd=ROOT, timeout=600,
    )  # fmt: skip
    assert done.returncode == 0, done.stderr[-2000:]
    llama, numpy = _first_import(done.stderr, "llama_cpp.llama_cpp"), _first_import(done.stderr, "numpy")
    assert 0 <= llama < numpy, (llama, numpy)
