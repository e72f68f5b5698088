"""The build knows the card and the toolkit: CUDA 13 cannot compile for a V100 (sm_70), so the
Makefile takes a CUDA 12 compiler found beside it or stops within seconds saying what to install,
before any venv or compiler runs. Stub `nvidia-smi` and `nvcc` stand in for the hardware and the
toolkits (tests/fake_gpu.py); packaging/cuda_toolchain.py and the Makefile that reads it are real.
The refusal of a real CUDA 13.0 nvcc is recorded in tests/bench/results/nvcc13-sm70-refusal.txt."""

from __future__ import annotations

import importlib.util
import os
import shutil
import stat
import subprocess
import sys
from pathlib import Path

import pytest

from tests.fake_gpu import fake_nvidia_smi

ROOT = Path(__file__).resolve().parent.parent
_spec = importlib.util.spec_from_file_location("cuda_toolchain", ROOT / "packaging" / "cuda_toolchain.py")
toolchain = importlib.util.module_from_spec(_spec)
sys.modules["cuda_toolchain"] = toolchain  # dataclasses look their module up while the class is made
_spec.loader.exec_module(toolchain)


def stub_nvcc(folder: Path, release: str) -> Path:
    """An `nvcc` that answers --version as CUDA `release` does."""
    folder.mkdir(parents=True, exist_ok=True)
    nvcc = folder / "nvcc"
    nvcc.write_text(f'#!/bin/sh\necho "Cuda compilation tools, release {release}, V{release}.88"\n')
    nvcc.chmod(nvcc.stat().st_mode | stat.S_IXUSR | stat.S_IXGRP | stat.S_IXOTH)
    return nvcc


@pytest.fixture
def machine(tmp_path, monkeypatch):
    """A machine whose only compilers are the stubs put in `roots` (PATH keeps the shell tools,
    never a real nvcc)."""
    roots = tmp_path / "usr-local"
    roots.mkdir()
    tools = tmp_path / "bin"
    tools.mkdir()
    for name in ("sh", "bash", "tr", "grep", "sort", "paste", "cat", "env", "make"):
        found = shutil.which(name)
        if found:
            (tools / name).symlink_to(found)
    monkeypatch.setenv("DOCDESK_CUDA_ROOTS", str(roots))
    monkeypatch.setenv("PATH", str(tools))
    for name in ("DOCDESK_NVCC", "CUDACXX"):
        monkeypatch.delenv(name, raising=False)
    return roots


def ask(archs: str, field: str, capsys) -> str:
    assert toolchain.main(["--archs", archs, "--print", field]) == 0
    return capsys.readouterr().out.strip()


def test_which_cuda_compiles_for_which_card():
    cuda = lambda release: toolchain.Compiler("nvcc", release, named=False)  # noqa: E731
    assert not cuda((13, 0)).builds(70) and cuda((13, 0)).builds(75) and cuda((13, 0)).builds(90)
    assert cuda((12, 9)).builds(70) and cuda((12, 4)).builds(70) and cuda((12, 4)).builds(90)
    assert not cuda((12, 4)).builds(120) and cuda((12, 8)).builds(120) and cuda((12, 8)).builds(70)
    assert cuda((11, 8)).builds(35) and not cuda((12, 0)).builds(35) and not cuda((11, 0)).builds(86)


def test_a_v100_takes_the_cuda_12_beside_cuda_13(machine, capsys):
    stub_nvcc(machine / "cuda-13.0" / "bin", "13.0")
    (machine / "cuda").symlink_to(machine / "cuda-13.0")
    stub_nvcc(machine / "cuda-12.4" / "bin", "12.4")
    assert ask("70", "nvcc", capsys) == str(machine / "cuda-12.4" / "bin" / "nvcc")
    note = ask("70", "note", capsys)
    assert note.startswith("nvcc 12.4") and "skipped nvcc 13.0" in note
    assert ask("90", "nvcc", capsys) == str(machine / "cuda" / "bin" / "nvcc")  # an H100: the newest
    assert ask("70", "error", capsys) == ""


def test_a_v100_with_only_cuda_13_is_told_what_to_install(machine, capsys):
    stub_nvcc(machine / "cuda-13.0" / "bin", "13.0")
    assert ask("70", "nvcc", capsys) == ""
    said = ask("70", "error", capsys)
    assert "nvcc 13.0" in said and "cannot compile for sm_70" in said
    assert "install a CUDA 12 toolkit beside it" in said and "DOCDESK_NVCC" in said and "GPU=cpu" in said


def test_mixed_cards_need_one_toolkit_for_all(machine, capsys):
    stub_nvcc(machine / "cuda-13.0" / "bin", "13.0")
    said = ask("70;120", "error", capsys)
    assert "sm_70, sm_120" in said and "one toolkit that builds for all of them" in said
    stub_nvcc(machine / "cuda-12.4" / "bin", "12.4")  # builds sm_70, not Blackwell's sm_120
    assert ask("70;120", "nvcc", capsys) == ""
    stub_nvcc(machine / "cuda-12.8" / "bin", "12.8")
    assert ask("70;120", "nvcc", capsys) == str(machine / "cuda-12.8" / "bin" / "nvcc")


def test_the_compiler_named_wins_where_it_can(machine, capsys, monkeypatch):
    stub_nvcc(machine / "cuda-12.8" / "bin", "12.8")
    named = stub_nvcc(machine / "mine", "12.2")
    monkeypatch.setenv("DOCDESK_NVCC", str(named))
    assert ask("70", "nvcc", capsys) == str(named)
    monkeypatch.setenv("DOCDESK_NVCC", str(stub_nvcc(machine / "old13", "13.0")))  # cannot: the next that can
    assert ask("70", "nvcc", capsys) == str(machine / "cuda-12.8" / "bin" / "nvcc")


def make(*args: str, path: str) -> subprocess.CompletedProcess:
    env = dict(os.environ, PATH=path)  # PYTHON: this interpreter itself, not a shim that needs PATH
    return subprocess.run(["make", f"PYTHON={sys.executable}", *args], cwd=ROOT, env=env, capture_output=True, text=True, timeout=60)


def test_make_stops_before_building_on_a_v100_with_cuda_13_alone(machine):
    stub_nvcc(machine / "cuda-13.0" / "bin", "13.0")
    fake_nvidia_smi(machine.parent / "bin", "7.0")
    path = str(machine.parent / "bin")
    flags = make("-s", "llama-flags", path=path)
    assert flags.returncode == 2 and "install a CUDA 12 toolkit" in flags.stderr and flags.stdout == ""
    run = make("-n", "-B", "run", path=path)  # -n: had it gone on, the build's commands would print
    assert run.returncode == 2 and "No CUDA compiler here builds llama.cpp for sm_70" in run.stderr
    assert "install_locked.py" not in run.stdout and "venv" not in run.stdout
    assert "--flavour cpu" in make("-n", "-B", "run", "GPU=cpu", path=path).stdout  # the way out it names


def test_make_builds_a_v100_with_the_cuda_12_it_finds(machine):
    stub_nvcc(machine / "cuda-13.0" / "bin", "13.0")
    twelve = stub_nvcc(machine / "cuda-12.9" / "bin", "12.9")
    fake_nvidia_smi(machine.parent / "bin", "7.0")
    flags = make("-s", "llama-flags", path=str(machine.parent / "bin"))
    assert flags.returncode == 0
    assert flags.stdout.strip() == "cuda-sm70 -DGGML_CUDA=on -DCMAKE_CUDA_ARCHITECTURES=70 -DLLAVA_BUILD=OFF"
    assert f"nvcc 12.9 ({twelve})" in flags.stderr and "skipped nvcc 13.0" in flags.stderr
    shown = make("-n", "-B", "run", path=str(machine.parent / "bin")).stdout
    assert "--flavour cuda-sm70" in shown
