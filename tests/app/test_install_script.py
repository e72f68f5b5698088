"""packaging/install.sh puts the menu entry, icons and a `docdesk` link under ~/.local, and takes them away."""

from __future__ import annotations

import configparser
import os
import shutil
import subprocess
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]


def test_install_and_uninstall_under_home(tmp_path):
    exe = tmp_path / "DocDesk"
    exe.write_text("#!/bin/sh\necho docdesk\n")
    exe.chmod(0o755)
    home = tmp_path / "home"
    env = {**os.environ, "HOME": str(home)}
    env.pop("XDG_DATA_HOME", None)
    subprocess.run(["bash", str(ROOT / "packaging" / "install.sh"), str(exe)], env=env, check=True, capture_output=True)
    share = home / ".local" / "share"
    desktop = share / "applications" / "docdesk.desktop"
    entry = configparser.ConfigParser(interpolation=None)
    entry.optionxform = str
    entry.read(desktop, encoding="utf-8")
    section = entry["Desktop Entry"]
    assert section["Exec"] == f"{exe} %F" and section["Icon"] == "docdesk" and section["Type"] == "Application"
    for size in (16, 32, 48, 128, 256, 512):
        assert (share / "icons" / "hicolor" / f"{size}x{size}" / "apps" / "docdesk.png").is_file()
    assert (home / ".local" / "bin" / "docdesk").resolve() == exe
    if shutil.which("desktop-file-validate"):
        subprocess.run(["desktop-file-validate", str(desktop)], check=True)

    subprocess.run(
        ["bash", str(ROOT / "packaging" / "install.sh"), "--uninstall"], env=env, check=True, capture_output=True
    )
    assert not desktop.exists() and not (home / ".local" / "bin" / "docdesk").exists()
    assert not (share / "icons" / "hicolor" / "48x48" / "apps" / "docdesk.png").exists()


def test_install_refuses_a_missing_executable(tmp_path):
    env = {**os.environ, "HOME": str(tmp_path)}
    proc = subprocess.run(
        ["bash", str(ROOT / "packaging" / "install.sh"), str(tmp_path / "nothing")],
        env=env,
        capture_output=True,
        text=True,
    )
    assert proc.returncode == 2 and "is not an executable" in proc.stderr
