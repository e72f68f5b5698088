"""DocDesk's size targets: no module in app/, engine/, ingest/ over 400 lines, no function over
60 lines. Prints what is over and exits 1 if anything is.

    python packaging/check_structure.py [--modules 400] [--functions 60]

`duplicates` (the tool library's clone finder, where installed) and tests/bench/bench_gui.py
(window start and GUI stalls) are the other two targets; this script runs the first when it is
on PATH and says so when it is not.
"""

from __future__ import annotations

import argparse
import ast
import shutil
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
PACKAGES = ("app", "engine", "ingest")


def modules() -> list[Path]:
    return sorted(p for package in PACKAGES for p in (ROOT / package).rglob("*.py"))


def long_modules(limit: int) -> list[tuple[str, int]]:
    found = []
    for path in modules():
        lines = len(path.read_text(encoding="utf-8").splitlines())
        if lines > limit:
            found.append((str(path.relative_to(ROOT)), lines))
    return found


def long_functions(limit: int) -> list[tuple[str, int]]:
    found = []
    for path in modules():
        tree = ast.parse(path.read_text(encoding="utf-8"))
        for node in ast.walk(tree):
            if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef):
                length = node.end_lineno - node.lineno + 1
                if length > limit:
                    found.append((f"{path.relative_to(ROOT)}:{node.lineno} {node.name}", length))
    return found


def duplicate_pairs(tool: str) -> tuple[list[str], list[str]]:
    """(pairs, boilerplate pairs) of `duplicates` rows whose both sides are DocDesk's Python code."""
    result = subprocess.run([tool, "--most", "200", "--seconds", "120"], cwd=ROOT, capture_output=True, text=True)
    pairs, boilerplate = [], []
    for line in result.stdout.splitlines():
        words = line.split()
        if len(words) < 4 or not words[0].startswith("D") or words[2] != "~":
            continue
        sides = [words[1].split(":")[0], words[3].split(":")[0]]
        if all(side.endswith(".py") and side.split("/")[0] in PACKAGES for side in sides):
            (boilerplate if "boilerplate" in words else pairs).append(" ".join(words[1:4]))
    return pairs, boilerplate


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--modules", type=int, default=400)
    parser.add_argument("--functions", type=int, default=60)
    args = parser.parse_args(argv)
    over = 0
    for name, lines in long_modules(args.modules):
        print(f"module over {args.modules} lines: {name} ({lines})")
        over += 1
    for name, lines in long_functions(args.functions):
        print(f"function over {args.functions} lines: {name} ({lines})")
        over += 1
    tool = shutil.which("duplicates")
    if tool:
        pairs, boilerplate = duplicate_pairs(tool)
        for pair in pairs:
            print(f"repeated code: {pair}")
        over += len(pairs)
        print(f"duplicates: {len(pairs)} pairs in app/, engine/, ingest/; {len(boilerplate)} more of boilerplate shape")
    else:
        print("duplicates: not installed here (the tool library's clone finder); skipped")
    print(f"{len(modules())} modules checked; {over} over the targets")
    return 1 if over else 0


if __name__ == "__main__":
    sys.exit(main())
