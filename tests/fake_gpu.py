"""A stand-in `nvidia-smi` for machines without a GPU: it prints what the real one prints on a
V100 workstation, so the Makefile's build choice, the doctor and the window's warning can be
tested where CI runs. It stands in for the hardware only; everything that reads it is real."""

from __future__ import annotations

import os
import stat
from pathlib import Path

V100_QUERY = "Tesla V100-SXM2-32GB, 7.0, 32768, 535.183.01"
HEADER = """+-----------------------------------------------------------------------------------------+
| NVIDIA-SMI 535.183.01             Driver Version: 535.183.01   CUDA Version: 12.2     |
+-----------------------------------------------------------------------------------------+
"""


def fake_nvidia_smi(folder: Path, compute_cap: str = "7.0") -> Path:
    """Write an executable `nvidia-smi` into folder; put folder first on PATH to use it."""
    folder.mkdir(parents=True, exist_ok=True)
    script = folder / "nvidia-smi"
    script.write_text(
        "#!/bin/sh\n"
        'case "$*" in\n'
        f'  *--query-gpu=compute_cap*) echo "{compute_cap}" ;;\n'
        f'  *--query-gpu=*) echo "{V100_QUERY.replace("7.0", compute_cap)}" ;;\n'
        f"  *) cat <<'EOF'\n{HEADER}EOF\n ;;\n"
        "esac\n"
    )
    script.chmod(script.stat().st_mode | stat.S_IXUSR | stat.S_IXGRP | stat.S_IXOTH)
    return folder


def path_with(folder: Path) -> str:
    return os.pathsep.join([str(folder), os.environ.get("PATH", "")])
