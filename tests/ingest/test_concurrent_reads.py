"""Reads of one library connection from many threads at once, as serve's and the window's threads
make them, beside a writer. From Python 3.12 on, sqlite3 shares a cached prepared statement
between threads that run the same SQL on one connection, and such reads failed ("bad parameter or
other API misuse", rows of None: seen on the GPU machine under Python 3.12 at 8 concurrent
answers); the library's connections keep no statement cache (ingest/store/schema.py).

The same check runs under every other Python 3.12+ found on this machine (pyenv's, or
python3.12/python3.13 on PATH), through the library's own `connect`: the suite's Python may be
3.11, where the bug does not show."""

from __future__ import annotations

import shutil
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]

CHECK = r"""
import collections, sys, tempfile, threading, time
sys.path.insert(0, sys.argv[1])
from ingest.store.schema import connect
conn = connect(tempfile.mkdtemp() + "/x.sqlite")
conn.execute("CREATE TABLE t(id INTEGER PRIMARY KEY, v TEXT)")
conn.executemany("INSERT INTO t(v) VALUES (?)", [(str(i),) for i in range(2000)])
errors, stop, lock = collections.Counter(), time.monotonic() + float(sys.argv[2]), threading.Lock()
def read():
    while time.monotonic() < stop:
        try:
            key, value = conn.execute("SELECT id, v FROM t WHERE id = ?", (5,)).fetchone()
            assert len([r for r in conn.execute("SELECT id FROM t WHERE id < 50")]) == 49
        except Exception as exc:
            errors[type(exc).__name__] += 1
def write():
    while time.monotonic() < stop:
        with lock:
            conn.execute("BEGIN IMMEDIATE"); conn.execute("UPDATE t SET v = v WHERE id = 1"); conn.execute("COMMIT")
threads = [threading.Thread(target=read) for _ in range(16)] + [threading.Thread(target=write)]
[t.start() for t in threads]; [t.join() for t in threads]
print(dict(errors))
"""


def other_pythons() -> list[str]:
    found = {shutil.which(name) for name in ("python3.12", "python3.13", "python3.14")}
    found |= {str(p) for p in Path.home().glob(".pyenv/versions/3.1[2-9]*/bin/python3")}
    usable = []
    for python in sorted(p for p in found if p):
        probe = subprocess.run([python, "-c", "import sqlite3"], capture_output=True)
        if probe.returncode == 0:
            usable.append(python)
    return usable


def test_threads_reading_one_connection_beside_a_writer_never_fail_here():
    run = subprocess.run([sys.executable, "-c", CHECK, str(ROOT), "2"], capture_output=True, text=True, timeout=60)
    assert run.returncode == 0 and run.stdout.strip() == "{}", run.stdout + run.stderr[-500:]


@pytest.mark.parametrize("python", other_pythons() or [pytest.param(None, marks=pytest.mark.skip("no Python 3.12+"))])
def test_and_under_python_3_12_and_later(python):
    run = subprocess.run([python, "-c", CHECK, str(ROOT), "2"], capture_output=True, text=True, timeout=60)
    assert run.returncode == 0 and run.stdout.strip() == "{}", run.stdout + run.stderr[-500:]
