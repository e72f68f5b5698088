"""Which CUDA compiler builds llama.cpp for this machine's cards, asked by the Makefile before it
compiles anything (standard library only: it runs before the venv exists).

    python3 packaging/cuda_toolchain.py --archs "70;86" --print nvcc|version|note|error

Each card's compute capability (nvidia-smi's, as the Makefile reads it) must be one that the
compiler can build for. CUDA 13 removed Maxwell, Pascal and Volta (compute capability < 7.5: a V100
is 7.0; CUDA 13.0 release notes; NVIDIA/cutlass PR #3166), CUDA 12 removed Kepler (< 5.0), and new
cards need a recent toolkit; the 580 driver branch is the last for Volta (NVIDIA's 580 driver notes).
The compilers looked at, in this order: DOCDESK_NVCC, CUDACXX, `nvcc`
on PATH, /usr/local/cuda/bin/nvcc, then every /usr/local/cuda-*/bin/nvcc (newest first). The first
of the named ones (DOCDESK_NVCC, CUDACXX) that builds for every card wins, else the newest found
that does. Where none does, `--print error` says what to install, and the Makefile stops before
compiling (tests/test_cuda_toolchain.py runs it with stub compilers).
"""

from __future__ import annotations

import argparse
import glob
import os
import re
import shutil
import subprocess
import sys
from dataclasses import dataclass

# The newest CUDA that still compiles for a card below each bound, (major, minor) inclusive.
LAST_CUDA_BELOW = ((50, (11, 99)), (75, (12, 99)))  # Kepler: CUDA 11.x; Maxwell, Pascal, Volta: 12.x
# The first CUDA that compiles for a card of at least this compute capability.
FIRST_CUDA_FROM = ((121, (12, 9)), (100, (12, 8)), (89, (11, 8)), (87, (11, 4)), (86, (11, 1)), (80, (11, 0)))


@dataclass(frozen=True)
class Compiler:
    path: str
    version: tuple[int, int]
    named: bool  # given by DOCDESK_NVCC or CUDACXX

    @property
    def release(self) -> str:
        return f"{self.version[0]}.{self.version[1]}"

    def builds(self, arch: int) -> bool:
        for bound, last in LAST_CUDA_BELOW:
            if arch < bound and self.version > last:
                return False
        for start, first in FIRST_CUDA_FROM:
            if arch >= start:
                return self.version >= first
        return True


def version_of(nvcc: str) -> tuple[int, int] | None:
    """`nvcc --version`'s "release 12.4": (12, 4); None where it does not run."""
    try:
        shown = subprocess.run([nvcc, "--version"], capture_output=True, text=True, timeout=20).stdout
    except (OSError, subprocess.SubprocessError):
        return None
    found = re.search(r"release (\d+)\.(\d+)", shown)
    return (int(found.group(1)), int(found.group(2))) if found else None


def candidates(only: str | None = None) -> list[tuple[str, bool]]:
    if only is not None:  # `make NVCC=path`: that compiler alone (`NVCC=`: none)
        return [(only, True)] if only and os.access(only, os.X_OK) else []
    named = [(os.environ[v], True) for v in ("DOCDESK_NVCC", "CUDACXX") if os.environ.get(v)]
    roots = os.environ.get("DOCDESK_CUDA_ROOTS", "/usr/local")  # where cuda/ and cuda-*/ toolkits live
    found = [shutil.which("nvcc"), os.path.join(roots, "cuda", "bin", "nvcc")]
    versioned = glob.glob(os.path.join(roots, "cuda-*", "bin", "nvcc"))
    versioned.sort(key=lambda p: [int(n) for n in re.findall(r"\d+", p.rsplit("cuda-", 1)[-1])], reverse=True)
    seen, out = set(), []
    for path, is_named in named + [(p, False) for p in found + versioned if p]:
        real = os.path.realpath(path)
        if real not in seen and os.access(path, os.X_OK):
            seen.add(real)
            out.append((path, is_named))
    return out


def compilers(only: str | None = None) -> list[Compiler]:
    found = []
    for path, named in candidates(only):
        version = version_of(path)
        if version is not None:
            found.append(Compiler(path, version, named))
    return found


def choose(archs: list[int], found: list[Compiler]) -> Compiler | None:
    able = [c for c in found if all(c.builds(a) for a in archs)]
    named = [c for c in able if c.named]
    return named[0] if named else max(able, key=lambda c: c.version, default=None)


def refusal(archs: list[int], found: list[Compiler]) -> str:
    """What to do where no compiler here builds for every card (one line: make prints it)."""
    cards = ", ".join(f"sm_{a}" for a in archs)
    paths: dict[str, list[str]] = {}  # one line per release: /usr/local/bin/nvcc is often cuda's own
    for c in found:
        paths.setdefault(c.release, []).append(c.path)
    missed = "; ".join(
        f"nvcc {c.release} ({', '.join(paths.pop(c.release))}) cannot compile for "
        + ", ".join(f"sm_{a}" for a in archs if not c.builds(a))
        for c in found
        if c.release in paths
    )
    old = [a for a in archs if a < 75]
    if old:
        fix = (
            "CUDA 13 removed Volta, Pascal and Maxwell (compute capability below 7.5): install a CUDA 12 "
            "toolkit beside it (e.g. NVIDIA's cuda-toolkit-12-9 package, in /usr/local/cuda-12.9) and keep "
            "a driver that still drives these cards (the 580 branch is the last); DocDesk finds "
            "/usr/local/cuda-12*, or set DOCDESK_NVCC=/path/to/nvcc"
        )
    else:
        fix = "install a newer CUDA toolkit (12.8 or later for Blackwell) and run make again, or set DOCDESK_NVCC"
    if len({a < 75 for a in archs}) > 1:
        fix += "; these cards need one toolkit that builds for all of them (CUDA 12.8 or 12.9)"
    return f"No CUDA compiler here builds llama.cpp for {cards}: {missed}. {fix}. Or build for the CPU: make run GPU=cpu"


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--archs", required=True, help='compute capabilities as the Makefile has them: "70;86"')
    parser.add_argument("--only", help="look at this compiler alone (the Makefile's NVCC=...)")
    parser.add_argument("--print", dest="field", choices=("nvcc", "version", "note", "error"), required=True)
    args = parser.parse_args(argv)
    archs = sorted({int(a) for a in re.findall(r"\d+", args.archs)})
    if not archs:
        return 0
    found = compilers(args.only)
    chosen = choose(archs, found)
    if args.field == "nvcc" and chosen:
        print(chosen.path)
    elif args.field == "version" and chosen:
        print(chosen.release)
    elif args.field == "note" and chosen:
        others = [c for c in found if c is not chosen and not all(c.builds(a) for a in archs)]
        skipped = "".join(f"; skipped nvcc {c.release} ({c.path}): it cannot compile for these cards" for c in others)
        print(f"nvcc {chosen.release} ({chosen.path}){skipped}")
    elif args.field == "error" and found and not chosen:
        print(refusal(archs, found))
    return 0


if __name__ == "__main__":
    sys.exit(main())
