"""The reliability suite's machinery: the attack registry, the rows of the table, and `Lab`, where
one attack builds its inputs and runs the real `docdesk` command line as a subprocess under the
meter (measure.py), so each row says how long DocDesk took and how much memory it used."""

from __future__ import annotations

import json
import os
import shutil
import signal
import sqlite3
import subprocess
import sys
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from functools import partial
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
# The DocDesk whose CLI is attacked: this checkout, or another one named by DOCDESK_ATTACK_ROOT
# (to try the attacks on a branch before it is merged).
CLI_ROOT = Path(os.environ.get("DOCDESK_ATTACK_ROOT") or ROOT)
MEASURE = Path(__file__).with_name("measure.py")

# Short notes, one passage each: the shared template library holds them, and attacks that need
# a library with documents copy it. A file with the same bytes is "unchanged" for add, so an
# attack can give the library these documents at new paths without loading the model.
NOTES = {
    "kettle.md": "# Kettles\n\nThe kettle whistles when the water boils on the stove.",
    "cats.md": "# Cats\n\nCats sleep peacefully beside warm fireplaces in winter.",
    "tides.md": "# Tides\n\nTides rise and fall twice a day with the pull of the moon.",
    "bees.md": "# Bees\n\nBees carry pollen from flower to flower in the spring.",
}


class AttackSkipped(Exception):
    """The machine cannot stage this attack (no root to mount, no setpriv)."""


def expect(condition: object, observation: str) -> None:
    """Assert one expected behaviour; the observation is what the table shows when it fails."""
    if not condition:
        raise AssertionError(observation)


@dataclass
class Run:
    """One `docdesk` call: exit status (None: stopped at its time limit), output, wall seconds
    and the peak resident set of the CLI and its children."""

    args: tuple[str, ...]
    rc: int | None
    stdout: str
    stderr: str
    seconds: float
    peak_mb: float

    @property
    def json(self) -> dict:
        try:
            return json.loads(self.stdout)
        except ValueError as exc:
            raise AssertionError(f"`docdesk {' '.join(self.args[:2])}` printed no JSON (rc {self.rc})") from exc

    @property
    def error(self) -> str:
        """The one-line reason a failed command gave on stderr ('' when none)."""
        lines = [line for line in self.stderr.splitlines() if line.startswith("docdesk: ")]
        return lines[-1] if lines else ""

    def brief(self) -> str:
        if self.rc is None:
            return f"{self.args[0]}: no exit after {self.seconds:.0f} s"
        tail = self.error or self._first_failure() or _last_line(self.stderr)
        return f"{self.args[0]}: exit {self.rc}" + (f" ({tail[:160]})" if self.rc and tail else "")

    def _first_failure(self) -> str:
        try:
            failed = json.loads(self.stdout).get("failed") or []
        except (ValueError, AttributeError):
            return ""
        return f"{failed[0]['path'].rsplit('/', 1)[-1]}: {failed[0]['reason']}" if failed else ""

    def expect_clean(self, code: int | set[int]) -> None:
        """The exit code is the expected one and no traceback reached the user."""
        codes = {code} if isinstance(code, int) else code
        expect("Traceback" not in self.stderr, f"{self.brief()}: traceback: {_last_line(self.stderr)}")
        expect(self.rc in codes, f"{self.brief()}, expected exit {' or '.join(map(str, sorted(codes)))}")


def _last_line(text: str) -> str:
    lines = [line for line in text.splitlines() if line.strip()]
    return lines[-1][:200] if lines else ""


def _as_a_terminal_starts_it() -> None:
    """Ctrl-C and Ctrl-\\ at their defaults, as in a terminal's foreground command: a test run started
    in the background by a script (`make test &`) ignores SIGINT, every child inherits that through
    exec, and Python then installs no KeyboardInterrupt, so a Ctrl-C attack would see none."""
    signal.signal(signal.SIGINT, signal.SIG_DFL)
    signal.signal(signal.SIGQUIT, signal.SIG_DFL)


class Running:
    """A `docdesk` call started in the background (to kill it, or to race it against another)."""

    def __init__(
        self, lab: Lab, library: Path, args: tuple[str, ...], model: Path | None, prefix: tuple[str, ...] = ()
    ) -> None:
        self.lab, self.args = lab, args
        self.report = lab.work / f"run-{next(lab.counter)}"
        self.out, self.err = open(f"{self.report}.out", "w+"), open(f"{self.report}.err", "w+")
        command = [
            *prefix,
            sys.executable,
            str(MEASURE),
            str(self.report),
            sys.executable,
            "-m",
            "app",
            *args,
            "--json",
        ]
        if model is not None:
            command += ["--embedding-model", str(model)]
        self.started = time.perf_counter()
        self.process = subprocess.Popen(
            command,
            cwd=CLI_ROOT,
            env=lab.env(library),
            stdout=self.out,
            stderr=self.err,
            start_new_session=True,
            preexec_fn=_as_a_terminal_starts_it,
        )
        lab.cleanups.append(self.stop)

    def stop(self) -> None:
        """Whatever an attack that failed half-way left running goes: the meter, the CLI, its reader."""
        if self.alive():
            os.killpg(self.process.pid, signal.SIGKILL)
            self.process.wait()
        self.out.close()
        self.err.close()

    def cli_pid(self, timeout: float = 30) -> int:
        deadline = time.monotonic() + timeout
        pid_file = Path(f"{self.report}.pid")
        while not pid_file.exists():
            expect(time.monotonic() < deadline, "the CLI did not start")
            time.sleep(0.02)
        return int(pid_file.read_text())

    def alive(self) -> bool:
        return self.process.poll() is None

    def finish(self, timeout: float = 600) -> Run:
        try:
            self.process.wait(timeout=timeout)
        except subprocess.TimeoutExpired:
            os.killpg(self.process.pid, signal.SIGKILL)  # the meter, the CLI and its reader
            self.process.wait()
        meter = Path(self.report)
        report = json.loads(meter.read_text()) if meter.exists() else None
        self.out.seek(0)
        self.err.seek(0)
        run = Run(
            self.args,
            report["rc"] if report else None,
            self.out.read(),
            self.err.read().replace(str(self.lab.work), "…"),  # reasons read the same wherever the attack ran
            report["seconds"] if report else time.perf_counter() - self.started,
            report["peak_kb"] / 1024 if report else 0.0,
        )
        self.out.close()
        self.err.close()
        self.lab.runs.append(run)
        return run


class Shared:
    """What several attacks use, built once per session: the template library of NOTES, and a
    stand-in embedding model for attacks about size rather than meaning."""

    def __init__(self, base: Path) -> None:
        self.base = base
        self._template: Path | None = None
        self._standin: Path | None = None

    def template(self) -> Path:
        if self._template is None:
            notes = write_notes(self.base / "template-notes")
            lab = Lab(self.base / "template-work", self)
            run = lab.docdesk(self.base / "template-lib", "add", str(notes))
            if run.rc != 0:
                raise RuntimeError(f"the template library could not be built: {run.stderr[-2000:]}")
            self._template = self.base / "template-lib"
        return self._template

    def standin_model(self) -> Path:
        if self._standin is None:
            from tests.reliability.standin import build_standin_model

            self._standin = build_standin_model(self.base / "standin-model")
        return self._standin


def write_notes(folder: Path, names: list[str] | None = None) -> Path:
    folder.mkdir(parents=True, exist_ok=True)
    for name in names or list(NOTES):
        (folder / name).write_text(NOTES[name], encoding="utf-8")
    return folder


class Lab:
    """One attack's folder, its `docdesk` calls and what they cost."""

    def __init__(self, work: Path, shared: Shared) -> None:
        import itertools

        self.work, self.shared = work, shared
        work.mkdir(parents=True, exist_ok=True)
        self.runs: list[Run] = []
        self.counter = itertools.count()
        self.cleanups: list[Callable[[], object]] = []

    def env(self, library: Path) -> dict[str, str]:
        env = dict(os.environ, DOCDESK_HOME=str(library), HF_HUB_OFFLINE="1", QT_QPA_PLATFORM="offscreen")
        env["DOCDESK_CONFIG"] = str(self.work / "no-config.toml")
        env["DOCDESK_LOG_DIR"] = str(self.work / "logs")
        env["PYTHONPATH"] = os.pathsep.join(filter(None, [str(CLI_ROOT), os.environ.get("PYTHONPATH")]))
        return env

    def start(self, library: Path, *args: str, model: Path | None = None, prefix: tuple[str, ...] = ()) -> Running:
        """`docdesk ARGS --json` in the background; `prefix` runs it under another command (setpriv)."""
        return Running(self, library, args, model, prefix)

    def docdesk(
        self, library: Path, *args: str, timeout: float = 600, model: Path | None = None, prefix: tuple[str, ...] = ()
    ) -> Run:
        return self.start(library, *args, model=model, prefix=prefix).finish(timeout)

    def tmpfs(self, name: str, size: str) -> Path:
        """A real tmpfs of `size` mounted at work/name for this attack (unmounted after it)."""
        if sys.platform != "linux" or os.geteuid() != 0 or shutil.which("mount") is None:
            raise AttackSkipped("mounting a tmpfs needs root on Linux")
        point = self.work / name
        point.mkdir()
        mounted = subprocess.run(
            ["mount", "-t", "tmpfs", "-o", f"size={size}", "tmpfs", str(point)], capture_output=True
        )
        if mounted.returncode != 0:
            raise AttackSkipped(f"cannot mount a tmpfs here: {mounted.stderr.decode().strip()}")
        self.cleanups.append(lambda: subprocess.run(["umount", "-l", str(point)], capture_output=True))
        return point

    def library(self, name: str = "lib") -> Path:
        """A copy of the shared template library (the four NOTES, indexed)."""
        target = self.work / name
        shutil.copytree(self.shared.template(), target)
        return target

    @property
    def seconds(self) -> float:
        return sum(run.seconds for run in self.runs)

    @property
    def peak_mb(self) -> float:
        return max((run.peak_mb for run in self.runs), default=0.0)


def documents(lab: Lab, library: Path) -> list[dict]:
    run = lab.docdesk(library, "list")
    run.expect_clean(0)
    return run.json["documents"]


def integrity(library: Path) -> str:
    with sqlite3.connect(f"file:{library / 'library.sqlite'}?mode=ro", uri=True) as conn:
        return conn.execute("PRAGMA integrity_check").fetchone()[0]


# ---------------------------------------------------------------- the registry and its rows


@dataclass(frozen=True)
class Attack:
    name: str  # the row's title and the test's id
    expected: str
    run: Callable[[Lab], str]  # returns the observation; raises AssertionError on a failed expectation
    slow: bool = False
    models: bool = True  # the CLI loads the embedding model


ATTACKS: list[Attack] = []


def attack(name: str, expected: str, slow: bool = False, models: bool = True, **params):
    """Register `function(lab, **params)` as one attack. Stacked, the same function is
    registered again with other parameters: its full-size (slow) and small (fast) forms."""

    def register(function):
        ATTACKS.append(Attack(name, expected, partial(function, **params), slow, models))
        return function

    return register


@dataclass
class Row:
    attack: str
    expected: str
    result: str  # pass | fail | skipped
    observation: str
    seconds: float
    peak_mb: float
    slow: bool = False
    extra: dict = field(default_factory=dict)

    @property
    def passed(self) -> bool:
        return self.result == "pass"


def run_attack(item: Attack, work: Path, shared: Shared) -> Row:
    lab = Lab(work, shared)
    try:
        observation, result = item.run(lab), "pass"
    except AttackSkipped as exc:
        observation, result = str(exc), "skipped"
    except AssertionError as exc:
        observation, result = str(exc) or "an expectation failed", "fail"
    except Exception as exc:  # the harness itself failed: still a row, never a lost table
        observation, result = f"{type(exc).__name__}: {exc}", "fail"
    finally:
        for cleanup in reversed(lab.cleanups):
            cleanup()
    observation = observation.replace(str(work), "…")  # the attack's temporary folder says nothing
    return Row(item.name, item.expected, result, observation, lab.seconds, lab.peak_mb, item.slow)
