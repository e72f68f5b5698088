#!/usr/bin/env bash
# DocDesk as a wheel, the way pip users get it (`make wheel-test`):
#  1. the sdist and the wheel, built from a copy of the checkout's files (tracked and new, as git
#     sees them; the checkout gets no build/ folder), and a second wheel built from the sdist;
#  2. the wheel holds every package under app/, engine/, ingest/ (each folder with __init__.py, with
#     all its modules) and the data files (the translations), and the wheel from the sdist the same;
#  3. a new venv with exactly the lock (packaging/install_locked.py --wheel: hash-checked, the
#     cached llama-cpp-python build, `pip check` against the wheel's own requirements);
#  4. from a folder outside the checkout, with a temporary home, library and config (the fake
#     model): `docdesk --version`, `docdesk add`, one chat completion from `docdesk serve`, and
#     `docdesk mcp`'s tools over stdio.
# Settings (environment): BUILD_PYTHON builds (default .venv/bin/python: the lock's setuptools),
# VENV_PYTHON makes the clean venv (python3), LLAMA_FLAVOUR names the llama-cpp-python build in
# ~/.cache/docdesk/wheels (cpu), LOCK_PYTHON the lock's Python (3.11), KEEP=1 keeps the work folder.
set -euo pipefail
root="$(cd "$(dirname "$0")/.." && pwd)"
build_python="${BUILD_PYTHON:-$root/.venv/bin/python}"
venv_python="${VENV_PYTHON:-python3}"
flavour="${LLAMA_FLAVOUR:-cpu}"
case "$build_python" in /* | "") ;; */*) build_python="$PWD/$build_python" ;; esac  # the steps below change folder
case "$venv_python" in /* | "") ;; */*) venv_python="$PWD/$venv_python" ;; esac
export HF_HUB_OFFLINE=1
started=$SECONDS
work="$(mktemp -d "${TMPDIR:-/tmp}/docdesk-wheel-test.XXXXXX")"
server=""

step() { echo "== [$((SECONDS - started)) s] $*"; }
fail() {
    echo "wheel-test FAILED: $*" >&2
    exit 1
}
finish() {
    status=$?
    if [ -n "$server" ] && kill -0 "$server" 2>/dev/null; then kill -KILL "$server" 2>/dev/null || true; fi
    if [ -n "${KEEP:-}" ] || [ "$status" != 0 ]; then echo "work folder kept: $work" >&2; else rm -rf "$work"; fi
}
trap finish EXIT
[ -x "$build_python" ] || fail "no $build_python: run \`make run\` (or set BUILD_PYTHON to a Python with the lock's setuptools)"

step "copying the checkout's files to $work/src"
"$build_python" - "$root" "$work/src" <<'EOF'
import shutil, subprocess, sys
from pathlib import Path

root, dest = Path(sys.argv[1]), Path(sys.argv[2])
listed = subprocess.run(
    ["git", "ls-files", "-z", "--cached", "--others", "--exclude-standard"], cwd=root, capture_output=True, check=True
).stdout.decode()
for name in sorted({n for n in listed.split("\0") if n and (root / n).is_file()}):
    (dest / name).parent.mkdir(parents=True, exist_ok=True)
    shutil.copy2(root / name, dest / name)
EOF

step "building the sdist and the wheel"
(cd "$work/src" && "$build_python" -c 'import sys; from setuptools import build_meta; build_meta.build_sdist(sys.argv[1])' "$work/dist") \
    >"$work/sdist.log" 2>&1 || { cat "$work/sdist.log"; fail "the sdist did not build"; }
"$build_python" -m pip wheel --quiet --no-deps --no-build-isolation -w "$work/dist" "$work/src" \
    || fail "the wheel did not build"
sdists=("$work"/dist/docdesk-*.tar.gz)
wheels=("$work"/dist/docdesk-*.whl)
[ ${#sdists[@]} = 1 ] && [ -f "${sdists[0]}" ] || fail "no sdist in $work/dist"
[ ${#wheels[@]} = 1 ] && [ -f "${wheels[0]}" ] || fail "no wheel in $work/dist"
sdist="${sdists[0]}"
wheel="${wheels[0]}"
mkdir -p "$work/unpacked"
tar -xzf "$sdist" -C "$work/unpacked"
"$build_python" -m pip wheel --quiet --no-deps --no-build-isolation -w "$work/from-sdist" "$work"/unpacked/docdesk-* \
    || fail "the sdist does not build a wheel"

step "checking what the wheel holds"
"$build_python" - "$work/src" "$wheel" "$work"/from-sdist/docdesk-*.whl <<'EOF' || fail "the wheel is incomplete (pyproject.toml [tool.setuptools])"
import sys, zipfile
from pathlib import Path

source, wheel, from_sdist = Path(sys.argv[1]), sys.argv[2], sys.argv[3]
names = set(zipfile.ZipFile(wheel).namelist())
packages = sorted(
    init.parent for top in ("app", "engine", "ingest") for init in (source / top).rglob("__init__.py")
    if "__pycache__" not in init.parts
)
expected = {m.relative_to(source).as_posix() for p in packages for m in p.glob("*.py")}
data = ("*.qm", "*.json", "*.toml", "*.svg", "*.png", "*.ico")  # as pyproject.toml's package-data
expected |= {
    d.relative_to(source).as_posix() for top in ("app", "engine", "ingest") for pattern in data for d in (source / top).rglob(pattern)
}
if "app/gui/i18n/docdesk_zh_CN.qm" not in expected:
    sys.exit("no app/gui/i18n/docdesk_zh_CN.qm in the checkout")
missing = sorted(expected - names)
print(f"{Path(wheel).name}: {len(names)} files; the checkout's {len(packages)} packages: {', '.join(p.relative_to(source).as_posix() for p in packages)}")
if missing:
    sys.exit(f"not in the wheel: {', '.join(missing)}")
tops = {n.split("/", 1)[0] for n in names if not n.split("/", 1)[0].endswith(".dist-info")}
if tops != {"app", "engine", "ingest"}:
    sys.exit(f"the wheel's top-level folders are {sorted(tops)}, not app, engine, ingest")
other = set(zipfile.ZipFile(from_sdist).namelist())
if {n for n in other if ".dist-info/" not in n} != {n for n in names if ".dist-info/" not in n}:
    sys.exit(f"the wheel built from the sdist differs: missing {sorted(names - other)}, more {sorted(other - names)}")
EOF

step "a new venv with the locked dependencies and the wheel (install_locked.py --wheel)"
"$venv_python" -m venv "$work/venv"
torch_index=()
# torch +cpu: from pip's find-links where they are configured (as `make lock` does), else PyTorch's index
if [ -n "$("$venv_python" -m pip config get global.find-links 2>/dev/null || true)" ]; then torch_index=(--torch-index ""); fi
# PIP_COMPILE=0: no bytecode for all of torch and Qt up front (a minute on 2 cores); imports compile what they use
PIP_COMPILE=0 "$work/venv/bin/python" "$root/packaging/install_locked.py" --flavour "$flavour" --python "${LOCK_PYTHON:-3.11}" \
    "${torch_index[@]}" --wheel "$wheel" >"$work/install.log" 2>&1 \
    || { tail -40 "$work/install.log"; fail "the locked install of the wheel failed (log above)"; }
grep -v '^WARNING: Location' "$work/install.log" | grep -E '^\+ pip|installed from' || true

mkdir -p "$work/run" "$work/home" "$work/library" "$work/logs"
cd "$work/run"  # outside the checkout: nothing may come from the source tree
cat >"$work/config.toml" <<'EOF'
[llm]
backend = "fake"
EOF
cat >"$work/run/retention.md" <<'EOF'
# Retention policy

Invoices are kept for eleven years in the archive room on the third floor.
EOF
# Only the venv, a temporary home, library, config and log folder: "${isolated[@]}" docdesk ...
isolated=(env -i PATH="$work/venv/bin:/usr/bin:/bin" HOME="$work/home" LANG=C.UTF-8 HF_HUB_OFFLINE=1
    TOKENIZERS_PARALLELISM=false DOCDESK_CONFIG="$work/config.toml" DOCDESK_HOME="$work/library"
    DOCDESK_LOG_DIR="$work/logs")

step "imports come from the venv"
"${isolated[@]}" python -c '
import sys, app, app.serve, engine.backends, ingest.store
site = sys.argv[1]
for module in (app, app.serve, engine.backends, ingest.store):
    if not module.__file__.startswith(site):
        sys.exit(f"{module.__name__} is imported from {module.__file__}, not from the venv")
' "$work/venv/lib/" || fail "DocDesk is not imported from the installed wheel"

step "docdesk --version"
version="$("${isolated[@]}" docdesk --version)" || fail "docdesk --version failed"
echo "$version"
wheel_version="$(basename "$wheel" | cut -d- -f2)"
case "$version" in *"$wheel_version"*) ;; *) fail "docdesk --version says '$version', the wheel is $wheel_version" ;; esac

step "docdesk add (the bundled embedding model)"
"${isolated[@]}" docdesk add "$work/run/retention.md" >"$work/add.log" 2>&1 || { cat "$work/add.log"; fail "docdesk add failed"; }

step "docdesk serve: one chat completion"
"${isolated[@]}" docdesk serve --port 0 2>"$work/serve.log" &  # env execs docdesk: $! is the server
server=$!
url=""
for _ in $(seq 1 240); do
    url="$(grep -o 'http://127.0.0.1:[0-9]*/v1' "$work/serve.log" | head -1 || true)"
    [ -n "$url" ] && break
    kill -0 "$server" 2>/dev/null || { cat "$work/serve.log"; fail "docdesk serve exited before listening"; }
    sleep 0.5
done
[ -n "$url" ] || { cat "$work/serve.log"; fail "docdesk serve did not start within 120 s"; }
"${isolated[@]}" python - "$url" <<'EOF' || { cat "$work/serve.log"; fail "docdesk serve gave no answer"; }
import json, sys, urllib.request

body = {"model": "docdesk", "messages": [{"role": "user", "content": "How long are invoices kept?"}]}
request = urllib.request.Request(
    sys.argv[1] + "/chat/completions", json.dumps(body).encode(), {"Content-Type": "application/json"}
)
with urllib.request.urlopen(request, timeout=120) as reply:
    status, answer = reply.status, json.load(reply)
text = answer["choices"][0]["message"]["content"]
sources = answer.get("sources") or []
print(f"HTTP {status}: {text[:100]!r}... sources: {[s.get('title') for s in sources]}")
if status != 200 or not text.strip():
    sys.exit("no answer")
if not any(s.get("path", "").endswith("retention.md") for s in sources):
    sys.exit("the answer cites nothing from the library")
EOF
kill -TERM "$server"
wait "$server" || fail "docdesk serve did not exit 0 on SIGTERM"
server=""

step "docdesk mcp: the tool list over stdio"
"${isolated[@]}" python - "$work/venv/bin/docdesk" <<'EOF' || { cat "$work/logs"/* 2>/dev/null | tail -20; fail "docdesk mcp did not list its tools"; }
import os, sys

import anyio
from mcp import Client
from mcp.client.stdio import StdioServerParameters

TOOLS = {"search_documents", "ask", "list_documents", "summarize_document", "get_page"}


async def main() -> None:
    params = StdioServerParameters(command=sys.argv[1], args=["mcp"], env=dict(os.environ), cwd=os.getcwd())
    with anyio.fail_after(180):
        async with Client(params, read_timeout_seconds=120) as client:
            names = {tool.name for tool in (await client.list_tools()).tools}
            print(f"tools: {', '.join(sorted(names))}")
            if not TOOLS <= names:
                sys.exit(f"missing tools: {', '.join(sorted(TOOLS - names))}")
            listed = await client.call_tool("list_documents", {})
            if listed.is_error or "retention.md" not in str(listed.structured_content):
                sys.exit(f"list_documents: {listed.content}")


anyio.run(main)
EOF

step "wheel-test passed: $(basename "$wheel") ($((SECONDS - started)) s)"
