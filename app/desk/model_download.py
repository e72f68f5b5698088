"""Getting a model from the Hugging Face Hub into DocDesk's models folder, and switching to it.

The download runs in a child process (`python -m app.desk.model_download`) that talks to the Hub with
`huggingface_hub`: DocDesk keeps `HF_HUB_OFFLINE=1` in its own process (the embedder must never
reach the network), and huggingface_hub reads that once, when it is imported. The child

1. asks the Hub for the file's LFS metadata (`HfApi.get_paths_info`: size and sha256);
2. refuses a file that does not fit on the disk (beside what is already downloaded);
3. appends to `<file>.incomplete` from where it stopped (`http_get` with a Range request): a
   download cancelled, interrupted or killed with `kill -9` goes on from there next time
   (huggingface_hub's own `hf_hub_download` writes to a temporary file it deletes on failure, so
   it would start over);
4. checks the whole file's sha256 against the Hub's, removes a file that differs, and renames
   the good one into place.

It reports JSON lines on stdout; the parent (`download`) turns them into `Progress` with speed
and time left, and cancels by ending the child, which keeps the partial file for next time.
"""

from __future__ import annotations

import contextlib
import errno
import json
import os
import shutil
import sys
import threading
import time
from dataclasses import dataclass
from pathlib import Path

from app.desk.setting_table import environment
from engine.errors import Cancelled
from engine.models.catalog import DEFAULT_ENDPOINT, CatalogEntry, load_catalog

PARTIAL = ".incomplete"
DISK_MARGIN = 64 << 20  # kept free besides the file


class DownloadError(Exception):
    pass


class NotEnoughDisk(DownloadError):
    pass


class HashMismatch(DownloadError):
    pass


def models_dir() -> Path:
    """Where downloaded models go: DOCDESK_MODELS, else `models` in DocDesk's data folder."""
    if folder := environment("DOCDESK_MODELS"):
        return Path(folder).expanduser()
    from platformdirs import user_data_dir

    return Path(user_data_dir("docdesk")) / "models"


def hub_endpoint() -> str:
    """The Hub to talk to: HF_ENDPOINT (a mirror, or the tests' local Hub), read when asked."""
    return (environment("HF_ENDPOINT") or DEFAULT_ENDPOINT).rstrip("/")


def catalog() -> list[CatalogEntry]:
    """The model catalog: DOCDESK_MODEL_CATALOG's file, else the one DocDesk ships."""
    other = environment("DOCDESK_MODEL_CATALOG")
    return load_catalog(Path(other).expanduser() if other else None)


def target_path(entry: CatalogEntry, folder: Path | None = None) -> Path:
    return (folder or models_dir()) / entry.repo.replace("/", "--") / entry.file


def partial_path(target: Path) -> Path:
    return target.with_name(target.name + PARTIAL)


def downloaded(entry: CatalogEntry, folder: Path | None = None) -> Path | None:
    """The entry's file where a finished download put it (checked against the Hub's sha256 then)."""
    target = target_path(entry, folder)
    return target if target.is_file() else None


@dataclass
class Progress:
    phase: str  # starting | downloading | verifying | done
    done: int = 0
    total: int = 0
    speed: float = 0.0  # bytes/s over the last seconds
    eta_s: float | None = None  # seconds left, None while unknown

    @property
    def fraction(self) -> float:
        return self.done / self.total if self.total else 0.0


class _Rate:
    """Speed over a sliding window of a few seconds, and the time left at that speed."""

    def __init__(self, window_s: float = 4.0) -> None:
        self.window_s, self.points = window_s, []

    def add(self, done: int, now: float) -> float:
        self.points.append((now, done))
        while len(self.points) > 2 and now - self.points[0][0] > self.window_s:
            self.points.pop(0)
        (t0, d0), (t1, d1) = self.points[0], self.points[-1]
        return (d1 - d0) / (t1 - t0) if t1 > t0 else 0.0


def download(
    entry: CatalogEntry,
    on_progress=None,
    cancel: threading.Event | None = None,
    folder: Path | None = None,
    endpoint: str | None = None,
) -> Path:
    """Download `entry` (resuming a partial file), check it and return its path. Raises
    NotEnoughDisk, HashMismatch, DownloadError, or Cancelled (the partial file is kept)."""
    target = target_path(entry, folder)
    target.parent.mkdir(parents=True, exist_ok=True)
    # The child gets this process's environment as it is, with the Hub let in.
    env = {**os.environ, "HF_HUB_OFFLINE": "0", "HF_HUB_DISABLE_PROGRESS_BARS": "1"}
    env["HF_ENDPOINT"] = endpoint or hub_endpoint()
    env.pop("TRANSFORMERS_OFFLINE", None)
    root = str(Path(__file__).resolve().parents[2])  # the folder that holds app/
    env["PYTHONPATH"] = os.pathsep.join(filter(None, [root, env.get("PYTHONPATH")]))
    # The packaged app has no `python -m`: its entry point runs the child on CHILD_FLAG.
    child_of = [sys.executable, CHILD_FLAG] if getattr(sys, "frozen", False) else [sys.executable, "-m", __name__]
    command = [*child_of, entry.repo, entry.file, str(target), entry.sha256]
    import queue
    import subprocess

    child = subprocess.Popen(command, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=env)
    lines: queue.Queue = queue.Queue()
    threading.Thread(target=lambda: [lines.put(x) for x in child.stdout] + [lines.put(None)], daemon=True).start()
    rate, last = _Rate(), None
    try:
        while True:
            if cancel is not None and cancel.is_set():
                child.terminate()
                child.wait(10)
                raise Cancelled("download cancelled; the part already downloaded is kept for next time")
            try:
                line = lines.get(timeout=0.1)
            except queue.Empty:
                continue
            if line is None:
                break
            last = json.loads(line)
            if on_progress is not None and last["event"] in ("start", "progress", "verifying"):
                done, total = last.get("done", last.get("resume_from", 0)), last.get("size", 0)
                speed = rate.add(done, time.monotonic()) if last["event"] == "progress" else 0.0
                eta = (total - done) / speed if speed > 0 else None
                phase = {"start": "starting", "progress": "downloading"}.get(last["event"], "verifying")
                on_progress(Progress(phase, done, total, speed, eta))
    finally:
        if child.poll() is None and (cancel is None or not cancel.is_set()):
            child.wait()
    stderr = child.stderr.read() if child.stderr else ""
    if last and last["event"] == "done" and child.returncode == 0:
        if on_progress is not None:
            on_progress(Progress("done", last["size"], last["size"]))
        return Path(last["path"])
    if last and last["event"] == "error":
        kind = {"disk": NotEnoughDisk, "hash": HashMismatch}.get(last["kind"], DownloadError)
        raise kind(last["message"])
    raise DownloadError(f"the download stopped (exit {child.returncode}): {stderr.strip()[-500:] or 'no message'}")


def check_chosen_model(path: Path):
    """A GGUF file about to become the model: its header read (a damaged or foreign file is
    refused) and its chat template tried within bounds (engine/backends/template_check.py).
    Returns (ModelFacts, a warning or None: the family's template stands in for a broken one);
    raises ModelLoadError in DocDesk's words when the model cannot be used."""
    from engine.backends.chat_template import ChatTemplateError
    from engine.backends.template_check import choose_template
    from engine.errors import ModelLoadError
    from engine.models.catalog import read_local

    facts = read_local(path)
    try:
        choice = choose_template(facts.shape.chat_template, facts.shape.architecture, Path(path).name)
    except ChatTemplateError as exc:
        raise ModelLoadError(str(exc)) from exc
    return facts, choice.warning


def use_model(settings, path: Path):
    """`settings` switched to the GGUF file at `path` (llama.cpp in process, or its server if that
    is the backend chosen); the caller saves and reloads."""
    import copy

    from engine.backends.registry import gguf_backends

    changed = copy.deepcopy(settings)
    if changed.llm.backend not in (runs_gguf := gguf_backends()):
        changed.llm.backend = runs_gguf[0]
    changed.llm.model = str(Path(path).expanduser().resolve())
    return changed


# -- the child process ---------------------------------------------------------------------------
def _emit(event: str, **fields) -> None:
    sys.stdout.write(json.dumps({"event": event, **fields}) + "\n")
    sys.stdout.flush()  # a parent that is gone ends this child here (BrokenPipeError)


class _Counting:
    """The partial file as http_get writes it, reporting how far it is every 0.2 s."""

    def __init__(self, handle, done: int, size: int) -> None:
        self.handle, self.done, self.size, self.last = handle, done, size, 0.0

    def write(self, chunk: bytes) -> int:
        written = self.handle.write(chunk)
        self.done += len(chunk)
        now = time.monotonic()
        if now - self.last >= 0.2:
            self.last = now
            self.handle.flush()
            _emit("progress", done=self.done, size=self.size)
        return written

    def __getattr__(self, name):  # tell, seek, truncate, flush: the file's own
        return getattr(self.handle, name)


def _sha256(path: Path, size: int) -> str:
    import hashlib

    digest, done, last = hashlib.sha256(), 0, 0.0
    with path.open("rb") as handle:
        while chunk := handle.read(4 << 20):
            digest.update(chunk)
            done += len(chunk)
            if time.monotonic() - last >= 0.2:
                last = time.monotonic()
                _emit("verifying", done=done, size=size)
    return digest.hexdigest()


def _remote(repo: str, filename: str, revision: str = "main") -> tuple[int, str]:
    """The file's size and sha256 from the Hub's LFS metadata."""
    from huggingface_hub import HfApi

    infos = HfApi(endpoint=hub_endpoint()).get_paths_info(repo, [filename], revision=revision)
    info = next((i for i in infos if getattr(i, "path", None) == filename), None)
    if info is None:
        raise DownloadError(f"{repo} has no file {filename}")
    if info.lfs is None:
        raise DownloadError(f"{repo}/{filename} has no LFS sha256 on the Hub to check the download against")
    return int(info.lfs.size), str(info.lfs.sha256)


def fetch(repo: str, filename: str, target: Path, expected_sha256: str = "", revision: str = "main") -> Path:
    """The child's work (HF_HUB_OFFLINE=0 in its environment)."""

    size, sha256 = _remote(repo, filename, revision)
    if expected_sha256 and expected_sha256 != sha256:
        raise HashMismatch(f"the catalog's sha256 for {filename} is not the Hub's ({sha256}): refusing it")
    with _download_lock(target):  # two downloads of one model: the second waits, then finds it done
        if target.is_file() and target.stat().st_size == size and _sha256(target, size) == sha256:
            return target
        return _fetch_locked(repo, filename, target, revision, size, sha256)


@contextlib.contextmanager
def _download_lock(target: Path):
    """An exclusive lock on the folder `target` downloads into (one model's folder), held by one
    process at a time: flock on the folder itself, so no lock file is left beside the model
    (where there is no fcntl, as on Windows, downloads are not locked)."""
    try:
        import fcntl
    except ImportError:
        yield
        return
    folder = os.open(target.parent, os.O_RDONLY)
    try:
        try:
            fcntl.flock(folder, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            _emit("waiting", message=f"another DocDesk is downloading {target.name}: waiting for it")
            fcntl.flock(folder, fcntl.LOCK_EX)
        yield
    finally:
        os.close(folder)  # closing releases the lock


def _fetch_locked(repo: str, filename: str, target: Path, revision: str, size: int, sha256: str) -> Path:
    from huggingface_hub import get_hf_file_metadata, hf_hub_url
    from huggingface_hub.file_download import http_get
    from huggingface_hub.utils import build_hf_headers

    partial = partial_path(target)
    have = partial.stat().st_size if partial.exists() else 0
    if have > size:
        partial.unlink()
        have = 0
    free = shutil.disk_usage(target.parent).free
    if size - have + DISK_MARGIN > free:
        raise NotEnoughDisk(
            f"{filename} needs {(size - have) / 1e9:.1f} GB more on {target.parent}, which has {free / 1e9:.1f} GB free"
        )
    _emit("start", size=size, sha256=sha256, resume_from=have)
    endpoint = hub_endpoint()
    url = hf_hub_url(repo, filename, revision=revision, endpoint=endpoint)
    headers = build_hf_headers()
    location = get_hf_file_metadata(url, headers=headers, endpoint=endpoint).location
    if location.split("/")[2] != url.split("/")[2]:
        headers.pop("authorization", None)  # a token never goes to the CDN
    with partial.open("ab") as handle:
        http_get(location, _Counting(handle, have, size), resume_size=have, headers=headers, expected_size=size)
    _emit("verifying", done=0, size=size)
    if _sha256(partial, size) != sha256:
        partial.unlink()
        raise HashMismatch(f"{filename} does not match the Hub's sha256 {sha256}: it was removed, download it again")
    os.replace(partial, target)
    return target


def _out_of_space(exc: BaseException | None) -> bool:
    """Whether `exc`, or what caused it, is a full disk or quota."""
    while exc is not None:
        if isinstance(exc, OSError) and exc.errno in (errno.ENOSPC, errno.EDQUOT):
            return True
        exc = exc.__cause__ or exc.__context__
    return False


CHILD_FLAG = "--docdesk-model-download"  # packaging/docdesk_main.py: this process is a download child


def child_main(argv: list[str]) -> int:
    """The download child's whole life (also the packaged app's, started with CHILD_FLAG)."""
    try:
        return _child(argv)
    except (KeyboardInterrupt, BrokenPipeError):  # Ctrl-C, or the parent is gone: the partial file stays
        return 130


def _child(argv: list[str]) -> int:
    repo, filename, target, expected = argv[:4]
    try:
        path = fetch(repo, filename, Path(target), expected)
    except NotEnoughDisk as exc:
        _emit("error", kind="disk", message=str(exc))
        return 3
    except HashMismatch as exc:
        _emit("error", kind="hash", message=str(exc))
        return 4
    except Exception as exc:
        if _out_of_space(exc):  # the disk filled while writing: the exit-code table's 3, not a Hub error
            _emit("error", kind="disk", message=f"the disk holding {Path(target).parent} is full: {exc}")
            return 3
        # the Hub's errors (not found, gated, offline) reach the parent as words
        _emit("error", kind="hub", message=str(exc).splitlines()[0] if str(exc) else type(exc).__name__)
        return 5
    _emit("done", path=str(path), size=path.stat().st_size)
    return 0


if __name__ == "__main__":
    sys.exit(child_main(sys.argv[1:]))
