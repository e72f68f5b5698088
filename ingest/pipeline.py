"""Add, sync and re-embed: files -> read -> chunk -> embed -> one transaction per document.

Reading (pypdf is pure Python and holds the GIL) runs in a separate process that streams
pages back, so this process chunks and embeds the first blocks of a book while the rest of
it is still being read. Each document is still written in one transaction at its end.
"""

from __future__ import annotations

import logging
import os
import threading
import time
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field, replace
from pathlib import Path

from ingest.chunking import Chunker
from ingest.discover import expand_paths, mass_removal, present
from ingest.document_builder import DocumentBuilder
from ingest.embedding import Embedder, encode_distinct
from ingest.filehash import file_digest
from ingest.language import guess_language
from ingest.reader_process import Finished, Pages, ReaderProcess, Reading, read_stream
from ingest.records import ReadResult
from ingest.store.embedder_owner import claim, left_behind, refuse_if_left_behind
from ingest.store.library import FileRecord, IndexedDocument, Library
from ingest.store.vectors import VectorIndex

log = logging.getLogger(__name__)

READ_AHEAD = 4  # documents read ahead of the embedder; bounds memory on huge batches


class _Stopped(Exception):
    """Cancel was set while a document was being read and embedded."""


@dataclass
class Progress:
    stage: str  # hashing | reading | embedding | writing | done | failed | reembedding | indexing
    files_done: int
    files_total: int
    path: str = ""
    pages: int = 0  # read so far (reading), or all of them
    passages: int = 0  # embedded so far (reading, embedding), or all of them
    reason: str = ""
    pages_total: int = 0  # the document's pages where the reader knows them up front (a PDF); 0: not known
    ocr_page: int = 0  # reading: the page OCR is reading now (seconds a page); 0: none
    passages_total: int = 0  # embedding: the document's passages, known once it is all read


@dataclass
class AddReport:
    added: list[dict] = field(default_factory=list)
    skipped: list[dict] = field(default_factory=list)
    failed: list[dict] = field(default_factory=list)
    removed: list[dict] = field(default_factory=list)
    # Folders whose files mostly vanished in one sync (an unmounted drive, a half-finished move):
    # their documents are kept until the user confirms.
    held: list[dict] = field(default_factory=list)
    timings: dict[str, float] = field(default_factory=dict)

    def as_dict(self) -> dict:
        return {
            "added": self.added,
            "skipped": self.skipped,
            "failed": self.failed,
            "removed": self.removed,
            "held": self.held,
        }


@dataclass
class _Job:
    file: FileRecord


class Ingestor:
    """Turns files into indexed documents of one library, with one embedding model."""

    def __init__(
        self,
        library: Library,
        embedder: Embedder,
        on_progress: Callable[[Progress], None] | None = None,
        cancel: threading.Event | None = None,
        read_in_subprocess: bool = True,
        vectors: VectorIndex | None = None,
        ocr: bool = True,  # scans and images are read by OCR (slow on a laptop): the app's setting
    ) -> None:
        self.library = library
        self.embedder = embedder
        # The library's dense index: the façade hands its own, shared with the retriever.
        self.vectors = vectors if vectors is not None else VectorIndex(library, embedder)
        self.chunker = Chunker(embedder.token_offsets, embedder.max_tokens)
        self.on_progress = on_progress or (lambda progress: None)
        self.cancel = cancel or threading.Event()
        self.read_in_subprocess = read_in_subprocess
        self.ocr = ocr
        self.timings: dict[str, float] = {}

    def _time(self, stage: str, started: float) -> None:
        self.timings[stage] = self.timings.get(stage, 0.0) + time.perf_counter() - started

    # -- public -----------------------------------------------------------------
    def add(self, paths: Iterable[Path], password: str | None = None) -> AddReport:
        refuse_if_left_behind(self.library, self.embedder.name)
        report = AddReport()
        files, missing = expand_paths(paths)
        report.failed.extend(missing)
        folder_ids: dict[Path, int] = {}
        for _, folder in files:
            if folder is not None and folder not in folder_ids:
                folder_ids[folder] = self.library.remember_folder(str(folder))
        jobs, twins = self._plan(files, folder_ids, report)
        self.reembed_stale()
        self._run(jobs, password, report)
        self._link_twins(twins)
        self.refresh_vectors()
        report.timings = dict(self.timings)
        return report

    def sync(self, confirm_removals: bool = False) -> AddReport:
        """Rescan remembered folders by content hash: new, changed and deleted files.

        A folder that lost all its files, or most of them, in one sync is held: nothing of it is
        removed unless `confirm_removals` (an empty mount point is still a directory). Paths that
        are gone are forgotten after the new files are planned, so a file renamed or moved within
        the folders keeps its document: its new path is linked, nothing is read or embedded again."""
        refuse_if_left_behind(self.library, self.embedder.name)
        report = AddReport()
        roots = []
        gone_all: list[FileRecord] = []
        known: set[str] = set()
        for folder_id, folder in self.library.folders():
            root = Path(folder)
            if not os.path.isdir(root):  # os.path: a folder it may no longer open is not there either
                report.failed.append(
                    {"path": folder, "reason": "folder not found (unmounted?); its documents are kept"}
                )
                continue
            roots.append(root)
            records = self.library.files_under(folder_id)
            known.update(r.path for r in records)
            states = {r.path: present(r.path) for r in records}
            gone = [r for r in records if states[r.path] is False]
            for record in (r for r in records if states[r.path] is None):
                report.failed.append(
                    {"path": record.path, "reason": "cannot tell whether it is still there; its document is kept"}
                )
            if gone and not confirm_removals and mass_removal(root, len(gone), len(records)):
                report.held.append({"path": folder, "gone": len(gone), "files": len(records)})
                continue
            gone_all += gone
        report.removed += self._forget_vanished_queued()
        if roots:
            sub = self.add(roots)
            report.added, report.skipped = sub.added, sub.skipped
            report.failed.extend(sub.failed)
        self._forget_gone(gone_all, known, report)
        if report.removed:
            self.refresh_vectors()
        report.timings = dict(self.timings)
        return report

    def _forget_gone(self, gone: list[FileRecord], known: set[str], report: AddReport) -> None:
        """Forget the paths that are gone; one whose document a new path now holds was moved."""
        moved_from = {record.doc_id: record.path for record in gone}
        moved = set()
        for entry in report.skipped:
            old = moved_from.get(entry.get("doc_id", ""))
            if old and entry["path"] not in known:
                entry["reason"] = f"moved from {old}: not read again"
                moved.add(entry["doc_id"])
        for record in gone:
            doc = self.library.document(record.doc_id)
            self.library.remove_file(record.path)
            if record.doc_id not in moved:
                report.removed.append({"doc_id": record.doc_id, "path": record.path, "title": doc.title if doc else ""})

    def _forget_vanished_queued(self) -> list[dict]:
        """Documents left queued by a stopped `add` whose file is gone since: nothing can finish them."""
        vanished = [
            d
            for d in self.library.documents(with_counts=False)
            if d.status == "queued" and self.library.file(d.path) is None and present(d.path) is False
        ]
        for doc in vanished:
            self.library.remove(doc.id)
        return [
            {"doc_id": d.id, "path": d.path, "title": d.title, "reason": "queued, and its file is gone"}
            for d in vanished
        ]

    def reembed_stale(self) -> int:
        """Re-chunk and re-embed documents made with another embedding model; returns how many.
        Nothing when the library was converted away from this embedder (embedder_owner.py); else
        the library becomes this embedder's before the first document is converted."""
        if left_behind(self.library, self.embedder.name):
            return 0
        stale = [
            d
            for d in self.library.documents(with_counts=False)
            if d.status == "indexed" and d.embed_model != self.embedder.name
        ]
        if stale:
            claim(self.library, self.embedder)
        for number, doc in enumerate(stale):
            if self.cancel.is_set():
                break
            self.on_progress(Progress("reembedding", number, len(stale), doc.path))
            pages = self.library.pages(doc.id)
            chunks = self.chunker.chunk(pages)
            vectors = encode_distinct(self.embedder, [p.text for p in chunks.passages])
            self.library.replace_content(doc.id, pages, chunks, vectors, self.embedder.name)
        if stale:
            self.on_progress(Progress("reembedding", len(stale), len(stale)))
        self._record_model()
        return len(stale)

    def refresh_vectors(self) -> bool:
        if self.library.meta("embedding_dim") is None:
            return False  # nothing was ever embedded
        started = time.perf_counter()
        changed = self.vectors.refresh()
        self._time("vectors", started)
        return changed

    # -- steps ------------------------------------------------------------------
    def _record_model(self) -> None:
        claim(self.library, self.embedder)

    def _link_twins(self, twins: list[FileRecord]) -> None:
        """Paths holding the same bytes as another file of this add: each is one of its document's
        paths, so that `remove PATH` and sync know it."""
        for record in twins:
            doc = self.library.document(record.doc_id)
            if doc is not None and doc.status == "indexed":
                self.library.link_file(record)

    def _unchanged_digest(self, path: str, stat: os.stat_result) -> str | None:
        """The known hash of a file whose size and modification time are what the library last
        saw of it (an indexed document): such a file is not read again. Any other file is hashed,
        and the hash decides whether it changed. (A rewrite that keeps both size and mtime to the
        nanosecond is taken for unchanged, as rsync and make take it.)"""
        known = self.library.file(path)
        if known is None or known.size != stat.st_size or known.mtime != stat.st_mtime:
            return None
        doc = self.library.document(known.doc_id)
        return known.doc_id if doc is not None and doc.status == "indexed" else None

    def _plan(self, files, folder_ids, report: AddReport) -> tuple[list[_Job], list[FileRecord]]:
        started = time.perf_counter()
        jobs: list[_Job] = []
        twins: list[FileRecord] = []
        seen: dict[str, str] = {}
        for number, (path, folder) in enumerate(files):
            self.on_progress(Progress("hashing", number, len(files), str(path)))
            try:
                stat = path.stat()
                digest = self._unchanged_digest(str(path), stat) or file_digest(path)
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
                twins.append(record)
                continue
            seen[digest] = str(path)
            existing = self.library.document(digest)
            known = self.library.file(record.path)
            if known is not None and record.folder_id is None:
                record.folder_id = known.folder_id  # adding one file of a watched folder keeps it watched
            if existing and existing.status == "indexed":
                seen_as = (known.doc_id, known.folder_id, known.size, known.mtime) if known else None
                if seen_as != (digest, record.folder_id, record.size, record.mtime):
                    self.library.link_file(record)  # also a new mtime of the same bytes: not read at the next sync
                report.skipped.append({"doc_id": digest, "path": str(path), "reason": "unchanged"})
                continue
            self.library.queue(digest, record.path, record.size, record.mtime)
            jobs.append(_Job(record))
        self._time("hash", started)
        # Small files first: they become searchable at once, and the reader gets ahead.
        jobs.sort(key=lambda job: job.file.size)
        return jobs, twins

    def _run(self, jobs: list[_Job], password: str | None, report: AddReport) -> None:
        reader = ReaderProcess(self.ocr) if self.read_in_subprocess and jobs else None
        submitted = 0

        def submit_ahead(current: int) -> None:
            nonlocal submitted
            while reader is not None and submitted < min(len(jobs), current + READ_AHEAD):
                reader.submit(submitted, jobs[submitted].file.path, password)
                submitted += 1

        try:
            for number, job in enumerate(jobs):
                if self.cancel.is_set():
                    break
                submit_ahead(number)
                builder = DocumentBuilder(self.chunker, self.embedder, self._time)
                try:
                    finished = self._read_into(reader, number, job, builder, password, len(jobs))
                except _Stopped:  # cancelled mid-document: it stays queued, nothing of it is written
                    break
                if reader is not None and not reader.alive:  # it crashed on this file: a fresh one reads the rest
                    reader.close()
                    reader, submitted = ReaderProcess(self.ocr), number + 1
                self._store(job, finished, builder, report, number + 1, len(jobs))
        finally:
            if reader is not None:
                reader.close()

    def _read_into(self, reader, number, job, builder, password, total) -> Finished:
        """Feed the document's pages to the builder as they arrive; return the reader's verdict."""
        path = job.file.path
        finished: Finished | None = None
        where = Reading(number)  # the page total, and the page OCR reads now

        def handle(message: Pages | Reading | Finished) -> None:
            nonlocal finished, where
            if isinstance(message, Finished):
                finished = message
                return
            if self.cancel.is_set():  # a long book stops at its next page, not at its end
                raise _Stopped
            if isinstance(message, Reading):
                where = message
            else:
                builder.add(message.pages)
                where = replace(where, ocr_page=0)
            read = len(builder.stream.pages)
            at = {"pages_total": where.pages_total, "ocr_page": where.ocr_page}
            self.on_progress(Progress("reading", number, total, path, read, builder.passages, **at))

        if reader is None:  # inline: the builder's chunk and embed time is not reading time
            before = self.timings.get("chunk", 0.0) + self.timings.get("embed", 0.0)
            read_stream(number, path, password, handle, self.ocr)
            spent = self.timings.get("chunk", 0.0) + self.timings.get("embed", 0.0) - before
            finished.seconds = max(0.0, finished.seconds - spent)
        while finished is None:
            started = time.perf_counter()
            message = reader.next_message(number)
            self._time("read_wait", started)
            handle(message)
        self.timings["read"] = self.timings.get("read", 0.0) + finished.seconds
        for line in finished.log_lines:
            log.info("%s: %s", path, line)
        return finished

    def _store(self, job: _Job, finished: Finished, builder, report: AddReport, done: int, total: int) -> None:
        path = job.file.path
        if finished.digest and finished.digest != job.file.doc_id:
            # The file was rewritten after it was hashed: what was read is stored under its own hash.
            self.library.forget_queued(job.file.doc_id)
            job.file = replace(job.file, doc_id=finished.digest, size=finished.size, mtime=finished.mtime)
        if finished.error:
            self.library.store_failed(job.file, finished.error)
            report.failed.append({"doc_id": job.file.doc_id, "path": path, "reason": finished.error})
            self.on_progress(Progress("failed", done, total, path, reason=finished.error))
            return
        pages = len(builder.stream.pages)

        def embedded(passages: int, of: int) -> None:
            self.on_progress(Progress("embedding", done - 1, total, path, pages, passages, passages_total=of))

        chunks, vectors = builder.finish(embedded)
        if self.library.meta("embedding_dim") is None:
            self.library.set_meta("embedding_dim", str(vectors.shape[1]))
        started = time.perf_counter()
        warnings = finished.warnings + builder.stream.warnings  # the chunker's: a text cut at its limit
        result = ReadResult(finished.format, builder.stream.pages, finished.title, finished.synthetic_pages, warnings)
        language = guess_language(builder.stream.head(20_000))  # not the whole text joined
        self.library.store_indexed(
            IndexedDocument(job.file.doc_id, job.file, result, chunks, vectors, language, self.embedder.name)
        )
        self._time("write", started)
        entry = {
            "doc_id": job.file.doc_id,
            "path": path,
            "title": result.title,
            "pages": pages,
            "blocks": len(chunks.blocks),
            "passages": len(chunks.passages),
            "status": "indexed",
            "warnings": result.warnings,
        }
        report.added.append(entry)
        self.on_progress(Progress("done", done, total, path, pages=entry["pages"], passages=entry["passages"]))
