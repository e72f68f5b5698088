"""A separate process that extracts document text and streams pages back.

pypdf is pure Python: in this process it would hold the GIL and stall the embedder.
In its own (lower-priority) process it reads the next pages while the embedder works
on the previous ones. Jobs are read strictly in the order they are submitted.
"""

from __future__ import annotations

import hashlib
import logging
import multiprocessing
import os
import queue
import signal
import threading
import time
from contextlib import contextmanager
from dataclasses import dataclass, field, replace
from pathlib import Path

from ingest.errors import IngestError
from ingest.filehash import file_digest
from ingest.records import Page

log = logging.getLogger(__name__)

PAGES_PER_MESSAGE = 4
READER_NICENESS = 5  # the embedder, not the reader, should win the CPU when both want it


@dataclass
class Pages:
    job: int
    pages: list[Page]


@dataclass
class Reading:
    """Where the reader is in a job: sent once the document is open (`pages_total`, 0 where the
    format does not know it up front), and as each page goes to OCR (`ocr_page`, seconds each)."""

    job: int
    pages_total: int = 0
    ocr_page: int = 0


@dataclass
class Finished:
    job: int
    format: str = ""
    title: str = ""
    synthetic_pages: bool = False
    warnings: list[str] = field(default_factory=list)
    error: str = ""
    seconds: float = 0.0
    log_lines: list[str] = field(default_factory=list)
    # What was read: the SHA-256, size and mtime of the bytes the text came from.
    digest: str = ""
    size: int = 0
    mtime: float = 0.0


class _Collect(logging.Handler):
    """Keeps a job's library warnings (pypdf's) to send them to the parent's log."""

    def __init__(self) -> None:
        super().__init__(logging.INFO)
        self.lines: list[str] = []

    def emit(self, record: logging.LogRecord) -> None:
        self.lines.append(f"{record.name}: {record.getMessage()}")


STABLE_READ_TRIES = 3  # a file still changing after this many reads is left for the next add


def read_stream(job: int, path: str, password: str | None, emit, ocr: bool = True) -> None:
    """Read one document, calling emit(Pages) as pages come and emit(Finished) at the end;
    `ocr`: scans and images are read by OCR (the caller's setting).

    The file's bytes are read once, hashed, and parsed from memory: Finished.digest is the hash
    of exactly the bytes the text came from, so a file rewritten during `add` never has another
    version's text under its id."""
    try:
        data, mtime = _stable_bytes(path)
    except OSError as exc:
        emit(Finished(job, error=f"cannot read the file: {exc.strerror or exc}"))
        return
    if data is None:
        emit(Finished(job, error="the file kept changing while it was read: add it again once it is written"))
        return
    finished = _read_once(job, path, password, data, emit, ocr)
    finished.digest = hashlib.sha256(data).hexdigest()
    finished.size, finished.mtime = len(data), mtime
    emit(finished)


def _stable_bytes(path: str) -> tuple[bytes | None, float]:
    """The file's bytes, once they were read twice alike (a read during an in-place rewrite can
    catch half of each version); None if they never were."""
    for _ in range(STABLE_READ_TRIES):
        with open(path, "rb") as handle:
            data = handle.read()
            mtime = os.fstat(handle.fileno()).st_mtime
        if file_digest(path) == hashlib.sha256(data).hexdigest():
            return data, mtime
    return None, 0.0


class _ReceiverFailed(Exception):
    """What the receiver of the pages raised (a cancel, a full disk while embedding inline): it is
    the caller's, so it goes back to the caller instead of counting as a reader crash."""


def _read_once(job: int, path: str, password: str | None, data: bytes, emit, ocr: bool) -> Finished:
    from ingest.readers import finish_result, open_document
    from ingest.readers.budget import cut_warning, text_budget

    def send(message: Pages | Reading) -> None:
        try:
            emit(message)
        except Exception as exc:
            raise _ReceiverFailed from exc

    collect = _Collect()
    root = logging.getLogger()
    root.addHandler(collect)
    started = time.perf_counter()
    try:
        stream = open_document(Path(path), password, data, ocr=ocr)
        pages, cut = _send_pages(job, stream, send, text_budget(len(data)))
        result = finish_result(stream, pages, Path(path))
        return Finished(
            job,
            result.format,
            result.title,
            result.synthetic_pages,
            result.warnings + ([cut_warning(len(data), cut)] if cut else []),
            seconds=time.perf_counter() - started,
            log_lines=collect.lines,
        )
    except _ReceiverFailed as failed:
        raise failed.__cause__ from None
    except IngestError as exc:
        return Finished(job, error=str(exc), seconds=time.perf_counter() - started, log_lines=collect.lines)
    except Exception as exc:  # a reader bug must cost one file, never the batch
        log.exception("reader crashed on %s", path)
        return Finished(
            job,
            error=f"could not be read: {type(exc).__name__}: {exc}",
            seconds=time.perf_counter() - started,
            log_lines=collect.lines,
        )
    finally:
        root.removeHandler(collect)


def _within(page: Page, room: int) -> Page:
    """`page` cut to its first `room` characters (OCR lines past the cut are dropped)."""
    ocr = page.ocr
    if ocr is not None:
        ocr = replace(ocr, lines=tuple(line for line in ocr.lines if line[1] <= room))
    return Page(page.number, page.text[:room], ocr)


def _send_pages(job: int, stream, send, budget: int) -> tuple[list[Page], int]:
    """Read the stream's pages, sending them a few at a time: first its page total where the
    format knows it (a PDF), then the pages, and "OCR page n" before each page OCR reads.
    Reading stops once the pages hold `budget` characters (ingest/readers/budget.py): the
    second value is then the budget, else 0."""
    from ingest.ocr import each_page

    total = getattr(stream, "page_count", 0) or 0
    send(Reading(job, total))
    pages: list[Page] = []
    batch: list[Page] = []

    def flush() -> None:
        nonlocal batch
        if batch:
            send(Pages(job, batch))
            batch = []

    def ocr_starts() -> None:  # the pages before it are sent first: OCR takes seconds a page
        flush()
        send(Reading(job, total, len(pages) + 1))  # pages come in order

    chars, cut = 0, 0
    with each_page(ocr_starts):
        for page in stream.pages():
            if chars + len(page.text) > budget:
                page, cut = _within(page, budget - chars), budget
            chars += len(page.text)
            pages.append(page)
            batch.append(page)
            if cut or len(batch) >= PAGES_PER_MESSAGE or page.ocr is not None:  # an OCR'd page took seconds
                flush()
            if cut:
                break  # the rest of the stream is never read
    flush()
    return pages, cut


def _reader_main(jobs, results, parent_pid: int, ocr: bool) -> None:
    # Ctrl-C in a terminal reaches the whole process group: the parent answers it (one line, and
    # it stops this process), so here it is ignored rather than printed as a traceback.
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    try:
        os.nice(READER_NICENESS)
    except OSError:
        pass
    logging.captureWarnings(True)
    logging.getLogger().setLevel(logging.INFO)
    logging.getLogger().handlers[:] = [logging.NullHandler()]  # records travel to the parent instead

    def watch_parent() -> None:  # an orphan (its parent was killed) exits by itself
        while os.getppid() == parent_pid:
            time.sleep(0.5)
        os._exit(0)

    threading.Thread(target=watch_parent, daemon=True).start()
    try:
        while (job := jobs.get()) is not None:
            read_stream(*job, results.put, ocr=ocr)
    except (KeyboardInterrupt, BrokenPipeError, EOFError):  # stopped by the parent, or it is gone
        os._exit(1)


def _stopped(code: int | None) -> str:
    """Why the reader process is gone, in words: a signal by its name (SIGKILL is most often the
    system out of memory, or someone's kill -9)."""
    if code is not None and code < 0:
        try:
            name = signal.Signals(-code).name
        except ValueError:
            name = f"signal {-code}"
        hint = " (out of memory, or killed)" if name == "SIGKILL" else ""
        return f"the reader process was stopped by {name}{hint} while it read this file"
    return f"the reader process stopped (exit code {code}) while it read this file"


@contextmanager
def _sigint_ignored():
    """SIGINT ignored while the child is started (the main thread only: signals live there)."""
    if threading.current_thread() is not threading.main_thread():
        yield
        return
    previous = signal.signal(signal.SIGINT, signal.SIG_IGN)
    try:
        yield
    finally:
        signal.signal(signal.SIGINT, previous)


class ReaderProcess:
    """Owns the child; `submit` jobs, then `next_message` until each job's Finished. `ocr`: as
    in read_stream, for every job."""

    def __init__(self, ocr: bool = True) -> None:
        context = multiprocessing.get_context("spawn")  # never fork a process that holds torch threads
        self._jobs = context.Queue()
        self._results = context.Queue()
        self._process = context.Process(
            target=_reader_main, args=(self._jobs, self._results, os.getpid(), ocr), daemon=True, name="docdesk-reader"
        )
        with _sigint_ignored():  # inherited through exec: Ctrl-C never reaches the child, even as it starts
            self._process.start()

    def submit(self, job: int, path: str, password: str | None) -> None:
        self._jobs.put((job, path, password))

    def next_message(self, job: int) -> Pages | Reading | Finished:
        """The next message; a Finished with an error if the child died reading `job`."""
        while True:
            try:
                return self._results.get(timeout=0.5)
            except queue.Empty:
                if not self._process.is_alive():
                    return Finished(job, error=f"could not be read: {_stopped(self._process.exitcode)}")

    @property
    def alive(self) -> bool:
        return self._process.is_alive()

    def close(self) -> None:
        if self._process.is_alive():
            self._jobs.put(None)
            self._process.join(timeout=2)
        if self._process.is_alive():
            self._process.kill()
            self._process.join()
        self._jobs.close()
        self._results.close()
