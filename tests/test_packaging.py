"""The wheel holds all of DocDesk: every package under app/, engine/ and ingest/ (every folder with an
__init__.py, each with all its modules) and the translations. A list of packages kept by hand once
left app.serve and engine.backends out while editable installs and the PyInstaller bundle worked.

The wheel is built (a few seconds, no venv) from a copy of the checkout's files, as git sees them, so
that a stale build/ folder cannot add what the sources no longer have. `make wheel-test`
(packaging/test_wheel.sh) goes further: the wheel in a clean venv, run from outside the checkout.
"""

from __future__ import annotations

import shutil
import subprocess
import sys
import zipfile
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
TOP = ("app", "engine", "ingest")
# As pyproject.toml's package-data: the files the code opens beside itself (translations, the window icon).
DATA = ("*.qm", "*.json", "*.toml", "*.svg", "*.png", "*.ico")


def checkout_files() -> list[str]:
    """The checkout's files as git sees them: tracked and new, not ignored."""
    listed = subprocess.run(
        ["git", "ls-files", "-z", "--cached", "--others", "--exclude-standard"],
        cwd=ROOT,
        capture_output=True,
        check=True,
    ).stdout.decode()
    return sorted({name for name in listed.split("\0") if name and (ROOT / name).is_file()})


@pytest.fixture(scope="module")
def source(tmp_path_factory) -> Path:
    folder = tmp_path_factory.mktemp("source")
    for name in checkout_files():
        (folder / name).parent.mkdir(parents=True, exist_ok=True)
        shutil.copy2(ROOT / name, folder / name)
    return folder


@pytest.fixture(scope="module")
def wheel(source, tmp_path_factory) -> Path:
    out = tmp_path_factory.mktemp("wheel")
    pip_wheel = [sys.executable, "-m", "pip", "wheel", "--quiet", "--no-deps", "--no-build-isolation"]
    subprocess.run([*pip_wheel, "-w", str(out), str(source)], check=True, timeout=120)
    (built,) = out.glob("docdesk-*.whl")
    return built


@pytest.fixture(scope="module")
def wheel_names(wheel) -> set[str]:
    with zipfile.ZipFile(wheel) as archive:
        return set(archive.namelist())


def packages(source: Path) -> list[Path]:
    return sorted(
        init.parent.relative_to(source)
        for top in TOP
        for init in (source / top).rglob("__init__.py")
        if "__pycache__" not in init.parts
    )


def test_every_package_is_in_the_wheel_with_all_its_modules(source, wheel_names):
    found = packages(source)
    assert {Path("app/serve"), Path("engine/backends"), Path("ingest/store")} <= set(found)
    missing = [
        module.relative_to(source).as_posix()
        for package in found
        for module in (source / package).glob("*.py")
        if module.relative_to(source).as_posix() not in wheel_names
    ]
    assert not missing, f"not in the wheel: {missing} (pyproject.toml [tool.setuptools.packages.find])"


def test_the_data_files_the_code_loads_are_in_the_wheel(source, wheel_names):
    data = sorted(
        p.relative_to(source).as_posix() for top in TOP for pattern in DATA for p in (source / top).rglob(pattern)
    )
    assert "app/gui/i18n/docdesk_zh_CN.qm" in data and "app/gui/icons/docdesk.svg" in data
    missing = [name for name in data if name not in wheel_names]
    assert not missing, f"not in the wheel: {missing} (pyproject.toml [tool.setuptools.package-data])"


def test_the_wheel_holds_docdesk_and_nothing_else(wheel, wheel_names):
    tops = {name.split("/", 1)[0] for name in wheel_names}
    (info,) = {top for top in tops if top.endswith(".dist-info")}
    assert tops - {info} == set(TOP), f"unexpected in the wheel: {sorted(tops - {info} - set(TOP))}"
    with zipfile.ZipFile(wheel) as archive:
        assert "docdesk = app.cli.main:main" in archive.read(f"{info}/entry_points.txt").decode()
