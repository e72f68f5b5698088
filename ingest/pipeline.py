"""Add, sync and re-embed: files -> read -> chunk -> embed -> one transaction per document.

Reading (pypdf is pure Python and holds the GIL) runs ahead in a separate process while
this process embeds, so the two stages overlap on a small machine.
"""

from __future__ import annotations

import hashlib
import logging
import multiprocessing
import os
import threading
import time
from collections import deque
from collections.abc import Callable, Iterable
from concurrent.futures import Future, ProcessPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path

from .chunking import Chunker, join_pages
from .embedding import Embedder
from .errors import IngestError
from .language import guess_language
from .records import ReadResult
from .sniff import is_supported_name
from .store.library import FileRecord, IndexedDocument, Library
from .store.vectors import VectorIndex

log = logging.getLogger(__name__)

READ_AHEAD = 4  # documents read ahead of the embedder; bounds memory on huge batches


@dataclass
class Progress:
    stage: str  # hashing | reading | embedding | writing | done | failed | reembedding | indexing
    files_done: int
    files_total: int
    path: str = ""
    pages: int = 0
    passages: int = 0
    reason: str = ""


@dataclass
class AddReport:
    added: list[dict] = field(default_factory=list)
    skipped: list[dict] = field(default_factory=list)
    failed: list[dict] = field(default_factory=list)
    removed: list[dict] = field(default_factory=list)
    timings: dict[str, float] = field(default_factory=dict)

    def as_dict(self) -> dict:
        return {"added": self.added, "skipped": self.skipped, "failed": self.failed, "removed": self.removed}


@dataclass
class _Job:
    file: FileRecord
    result: ReadResult | None = None
    error: str = ""
    read_seconds: float = 0.0


def file_digest(path: Path) -> str:
    digest = hashlib.sha256()
    with path.open("rb") as handle:
        while chunk := handle.read(1 << 20):
            digest.update(chunk)
    return digest.hexdigest()


def read_job(path: str, password: str | None) -> tuple[ReadResult | None, str, float]:
    """Runs in the reader process: (result, error, seconds). Errors travel as text."""
    from .readers import read_document

    started = time.perf_counter()
    try:
        return read_document(Path(path), password), "", time.perf_counter() - started
    except IngestError as exc:
        return None, str(exc), time.perf_counter() - started
    except Exception as exc:  # a reader bug must cost one file, never the batch
        log.exception("reader crashed on %s", path)
        return None, f"could not be read: {type(exc).__name__}: {exc}", time.perf_counter() - started


def expand_paths(paths: Iterable[Path]) -> tuple[list[tuple[Path, Path | None]], list[dict]]:
    """Files to consider, each with the folder it came from; plus missing paths."""
    found: list[tuple[Path, Path | None]] = []
    missing: list[dict] = []
    for raw in paths:
        path = Path(raw).expanduser().absolute()
        if path.is_dir():
            for root, dirs, names in os.walk(path):
                dirs[:] = sorted(d for d in dirs if not d.startswith("."))
                for name in sorted(names):
                    candidate = Path(root) / name
                    if is_supported_name(candidate) and candidate.is_file():
                        found.append((candidate, path))
        elif path.is_file():
            found.append((path, None))
        else:
            missing.append({"path": str(path), "reason": "no such file or folder"})
    return found, missing


class Ingestor:
    """Turns files into indexed documents of one library, with one embedding model."""

    def __init__(
        self,
        library: Library,
        embedder: Embedder,
        on_progress: Callable[[Progress], None] | None = None,
        cancel: threading.Event | None = None,
        read_in_subprocess: bool = True,
    ) -> None:
        self.library = library
        self.embedder = embedder
        self.chunker = Chunker(embedder.token_offsets, embedder.max_tokens)
        self.on_progress = on_progress or (lambda progress: None)
        self.cancel = cancel or threading.Event()
        self.read_in_subprocess = read_in_subprocess
        self.timings: dict[str, float] = {}

    def _time(self, stage: str, started: float) -> None:
        self.timings[stage] = self.timings.get(stage, 0.0) + time.perf_counter() - started

    # -- public -----------------------------------------------------------------
    def add(self, paths: Iterable[Path], password: str | None = None) -> AddReport:
        report = AddReport()
        files, missing = expand_paths(paths)
        report.failed.extend(missing)
        folder_ids: dict[Path, int] = {}
        for _, folder in files:
            if folder is not None and folder not in folder_ids:
                folder_ids[folder] = self.library.remember_folder(str(folder))
        jobs = self._plan(files, folder_ids, report)
        self.reembed_stale()
        self._run(jobs, password, report)
        self.refresh_vectors()
        report.timings = dict(self.timings)
        return report

    def sync(self) -> AddReport:
        """Rescan remembered folders by content hash: new, changed and deleted files."""
        report = AddReport()
        roots = []
        for folder_id, folder in self.library.folders():
            root = Path(folder)
            if not root.is_dir():
                report.failed.append(
                    {"path": folder, "reason": "folder not found (unmounted?); its documents are kept"}
                )
                continue
            roots.append(root)
            for record in self.library.files_under(folder_id):
                if not Path(record.path).exists():
                    doc = self.library.document(record.doc_id)
                    self.library.remove_file(record.path)
                    report.removed.append(
                        {"doc_id": record.doc_id, "path": record.path, "title": doc.title if doc else ""}
                    )
        if roots:
            sub = self.add(roots)
            report.added, report.skipped = sub.added, sub.skipped
            report.failed.extend(sub.failed)
        elif report.removed:
            self.refresh_vectors()
        report.timings = dict(self.timings)
        return report

    def reembed_stale(self) -> int:
        """Re-chunk and re-embed documents made with another embedding model; returns how many."""
        stale = [
            d
            for d in self.library.documents(with_counts=False)
            if d.status == "indexed" and d.embed_model != self.embedder.name
        ]
        for number, doc in enumerate(stale):
            if self.cancel.is_set():
                break
            self.on_progress(Progress("reembedding", number, len(stale), doc.path))
            pages = self.library.pages(doc.id)
            chunks = self.chunker.chunk(pages)
            vectors = self.embedder.encode([p.text for p in chunks.passages])
            self.library.replace_content(doc.id, pages, chunks, vectors, self.embedder.name)
        if stale:
            self.on_progress(Progress("reembedding", len(stale), len(stale)))
        self._record_model()
        return len(stale)

    def refresh_vectors(self) -> bool:
        dim = self.library.meta("embedding_dim")
        if dim is None:
            return False
        started = time.perf_counter()
        changed = VectorIndex(self.library, self.embedder.name, int(dim)).refresh()
        self._time("vectors", started)
        return changed

    # -- steps ------------------------------------------------------------------
    def _record_model(self) -> None:
        if self.library.meta("embedding_model") != self.embedder.name:
            self.library.set_meta("embedding_model", self.embedder.name)
            self.library.set_meta("embedding_max_tokens", str(self.embedder.max_tokens))

    def _plan(self, files, folder_ids, report: AddReport) -> list[_Job]:
        started = time.perf_counter()
        jobs: list[_Job] = []
        seen: dict[str, str] = {}
        for number, (path, folder) in enumerate(files):
            self.on_progress(Progress("hashing", number, len(files), str(path)))
            try:
                stat = path.stat()
                digest = file_digest(path)
            except OSError as exc:
                report.failed.append({"path": str(path), "reason": f"cannot read the file: {exc.strerror or exc}"})
                continue
            record = FileRecord(
                str(path), digest, stat.st_size, stat.st_mtime, folder_ids.get(folder) if folder else None
            )
            if digest in seen:
                report.skipped.append(
                    {"doc_id": digest, "path": str(path), "reason": f"same content as {seen[digest]}"}
                )
                continue
            seen[digest] = str(path)
            existing = self.library.document(digest)
            if existing and existing.status == "indexed":
                known = self.library.file(record.path)
                if known is None or known.doc_id != digest or known.folder_id != record.folder_id:
                    self.library.link_file(record)
                report.skipped.append({"doc_id": digest, "path": str(path), "reason": "unchanged"})
                continue
            self.library.queue(digest, record.path, record.size, record.mtime)
            jobs.append(_Job(record))
        self._time("hash", started)
        # Small files first: they become searchable at once, and the reader gets ahead.
        jobs.sort(key=lambda job: job.file.size)
        return jobs

    def _reads(self, jobs: list[_Job], password: str | None):
        """Yield jobs with their read results, reading ahead in another process."""
        if not self.read_in_subprocess or len(jobs) < 2:
            for job in jobs:
                job.result, job.error, job.read_seconds = read_job(job.file.path, password)
                yield job
            return
        context = multiprocessing.get_context("spawn")  # never fork a process that holds torch threads
        with ProcessPoolExecutor(max_workers=1, mp_context=context) as pool:
            pending: deque[tuple[_Job, Future]] = deque()
            queue = iter(jobs)
            for job in queue:
                pending.append((job, pool.submit(read_job, job.file.path, password)))
                if len(pending) >= READ_AHEAD:
                    break
            while pending:
                job, future = pending.popleft()
                try:
                    job.result, job.error, job.read_seconds = future.result()
                except Exception as exc:  # the reader process died (out of memory, a crash in a C library)
                    job.error = f"could not be read: the reader stopped ({type(exc).__name__})"
                    pool.shutdown(cancel_futures=True)
                    yield job
                    rest = [j for j, _ in pending] + list(queue)
                    yield from self._reads_inline(rest, password)
                    return
                next_job = next(queue, None)
                if next_job is not None:
                    pending.append((next_job, pool.submit(read_job, next_job.file.path, password)))
                yield job
                if self.cancel.is_set():
                    pool.shutdown(cancel_futures=True)
                    return

    def _reads_inline(self, jobs, password):
        for job in jobs:
            job.result, job.error, job.read_seconds = read_job(job.file.path, password)
            yield job

    def _run(self, jobs: list[_Job], password: str | None, report: AddReport) -> None:
        total = len(jobs)
        done = 0
        started = time.perf_counter()
        for job in self._reads(jobs, password):
            self._time("read_wait", started)
            self.timings["read"] = self.timings.get("read", 0.0) + job.read_seconds
            if self.cancel.is_set():
                break
            path = job.file.path
            if job.result is None:
                self.library.store_failed(job.file, job.error)
                report.failed.append({"doc_id": job.file.doc_id, "path": path, "reason": job.error})
                done += 1
                self.on_progress(Progress("failed", done, total, path, reason=job.error))
                started = time.perf_counter()
                continue
            result = job.result
            self.on_progress(Progress("embedding", done, total, path, pages=len(result.pages)))
            entry = self._index_one(job.file, result)
            done += 1
            report.added.append(entry)
            self.on_progress(Progress("done", done, total, path, pages=entry["pages"], passages=entry["passages"]))
            started = time.perf_counter()

    def _index_one(self, file: FileRecord, result: ReadResult) -> dict:
        t = time.perf_counter()
        chunks = self.chunker.chunk(result.pages)
        self._time("chunk", t)
        t = time.perf_counter()
        vectors = self.embedder.encode([p.text for p in chunks.passages])
        self._time("embed", t)
        if self.library.meta("embedding_dim") is None:
            self.library.set_meta("embedding_dim", str(vectors.shape[1]))
        t = time.perf_counter()
        text, _ = join_pages(result.pages)
        item = IndexedDocument(file.doc_id, file, result, chunks, vectors, guess_language(text), self.embedder.name)
        self.library.store_indexed(item)
        self._time("write", t)
        return {
            "doc_id": file.doc_id,
            "path": file.path,
            "title": result.title,
            "pages": len(result.pages),
            "blocks": len(chunks.blocks),
            "passages": len(chunks.passages),
            "status": "indexed",
            "warnings": result.warnings,
        }
