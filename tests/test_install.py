"""The install: one lock pins everything, the venv holds exactly it, and the Makefile builds
llama-cpp-python for the GPU nvidia-smi reports (`make -n` shows the flags)."""

from __future__ import annotations

import importlib.util
import os
import subprocess
from importlib.metadata import distributions
from pathlib import Path

import pytest

from tests.fake_gpu import fake_nvidia_smi, path_with

ROOT = Path(__file__).resolve().parent.parent
_spec = importlib.util.spec_from_file_location("install_locked", ROOT / "packaging" / "install_locked.py")
install_locked = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(install_locked)


def test_every_locked_package_is_installed_at_its_pinned_version():
    """The venv holds the lock: each pin installed exactly. A package a contributor installed beside
    it (a profiler, a debugger) is not the lock's business; one that moved a pin is caught here."""
    pins = {name: install_locked.version_of(line) for name, line in install_locked.read_lock().items()}
    installed = {install_locked.normalize(d.metadata["Name"]): d.version for d in distributions()}
    assert installed["llama-cpp-python"] == pins["llama-cpp-python"]
    wrong = {name: (installed.get(name), pin) for name, pin in pins.items() if installed.get(name) != pin}
    assert not wrong, f"not installed as locked (installed, locked): {wrong}"


def test_the_lock_pins_every_package_exactly_with_hashes():
    lines = (ROOT / "requirements.lock").read_text().splitlines()
    requirements = [line for line in lines if line and not line.startswith((" ", "#"))]
    pins = install_locked.read_lock()
    assert len(requirements) == len(pins) > 50  # every requirement line is a name==version pin
    assert all("--hash=sha256:" in line for line in pins.values())
    assert "+cpu" in pins["torch"] and "llama-cpp-python" in pins and "scikit-build-core" in pins


def make_dry_run(*args: str, path: str | None = None) -> str:
    env = dict(os.environ, PATH=path or os.environ["PATH"])
    done = subprocess.run(["make", "-n", "-B", *args], cwd=ROOT, env=env, capture_output=True, text=True, check=True)
    return done.stdout


@pytest.fixture
def v100(tmp_path) -> str:
    return path_with(fake_nvidia_smi(tmp_path / "bin", "7.0"))


def test_make_builds_for_the_v100_that_nvidia_smi_reports(v100, tmp_path, monkeypatch):
    from tests.test_cuda_toolchain import stub_nvcc

    stub_nvcc(tmp_path / "usr-local" / "cuda-12.9" / "bin", "12.9")  # CUDA 13 cannot build sm_70: a 12 beside it
    monkeypatch.setenv("DOCDESK_CUDA_ROOTS", str(tmp_path / "usr-local"))
    shown = make_dry_run("run", path=v100)
    assert 'CMAKE_ARGS="-DGGML_CUDA=on -DCMAKE_CUDA_ARCHITECTURES=70' in shown
    assert "--flavour cuda-sm70" in shown


def test_make_without_a_gpu_builds_for_the_cpu(tmp_path):
    no_gpu = os.pathsep.join(p for p in os.environ["PATH"].split(os.pathsep) if not (Path(p) / "nvidia-smi").exists())
    shown = make_dry_run("run", path=no_gpu)
    assert "GGML_CUDA" not in shown and "--flavour cpu" in shown


def test_gpu_cpu_forces_the_cpu_build(v100):
    shown = make_dry_run("run", "GPU=cpu", path=v100)
    assert "GGML_CUDA" not in shown and "--flavour cpu" in shown


def test_a_gpu_without_nvcc_says_what_to_install_then_builds_for_the_cpu(v100):
    shown = make_dry_run("test", "NVCC=", path=v100)
    assert "GGML_CUDA" not in shown and "--flavour cpu" in shown
    assert "nvcc is not: install the CUDA toolkit" in shown


def _refused(monkeypatch, *args: str) -> str:
    """install_locked.main's refusal, run here: nothing may be installed, so pip and the build fail the test."""

    def install(*_args, **_kwargs):
        pytest.fail(f"install_locked {' '.join(args)} went on to install instead of refusing")

    monkeypatch.setattr(install_locked, "pip", install)
    monkeypatch.setattr(install_locked, "llama_wheel", install)
    monkeypatch.setattr(install_locked, "llama_server", install)
    with pytest.raises(SystemExit) as refused:
        install_locked.main(list(args))
    assert refused.value.code not in (0, None)
    return str(refused.value.code)


def test_the_lock_is_for_the_python_that_runs(monkeypatch):
    assert "made for Python 3.99" in _refused(monkeypatch, "--python", "3.99")


def test_install_locked_takes_only_a_docdesk_wheel(tmp_path, monkeypatch):
    """`--wheel` (packaging/test_wheel.sh) refuses anything else before installing a thing."""
    refused = {
        "numpy-2.0-py3-none-any.whl": "not a DocDesk wheel",
        "docdesk-0.1.0.tar.gz": "not a DocDesk wheel",
        "docdesk-0.1.0-py3-none-any.whl": "no such file",
    }
    for name, why in refused.items():
        path = tmp_path / name
        if why != "no such file":
            path.write_bytes(b"")
        assert why in _refused(monkeypatch, "--wheel", str(path)), name
