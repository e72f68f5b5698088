"""The library side of the window: the document list, adding, syncing watched folders, removing.

Every read of the library and every walk of a folder runs as an op on a worker; the GUI thread
only shows the results.
"""

from __future__ import annotations

import logging
from pathlib import Path

from PySide6.QtCore import QFileSystemWatcher, QObject, QTimer, QUrl, Signal
from PySide6.QtGui import QDesktopServices
from PySide6.QtWidgets import QLabel, QMessageBox, QStatusBar, QWidget

from app.desk.services import DocDesk
from app.gui.library_pane import LibraryPane
from app.gui.ops import Op, describe
from app.gui.tasks import Workers

log = logging.getLogger(__name__)

SYNC_DELAY_MS = 1500  # a folder that changes settles before it is re-synced
INDEX_POLL_MS = 1000  # how often the counts line asks whether the dense index is being built
# How often the window asks whether the library changed (the CLI, sync, serve or a second window
# wrote to it): Library.version() is one PRAGMA, ~4 µs, but it waits on the library's lock
# while this process writes, so it runs on the store worker, never on the GUI thread.
LIBRARY_POLL_MS = 1500
MAX_WATCHED = 4000  # inotify's per-user watch limit is 8,192 by default
PROGRESS_LABELS = ("reading", "embedding", "writing", "hashing")


class LibraryController(QObject):
    changed = Signal()  # the document list on screen was refreshed
    ingest_finished = Signal(object)  # the AddReport, or None when adding failed

    def __init__(
        self, desk: DocDesk, workers: Workers, pane: LibraryPane, counts: QLabel, status: QStatusBar, window: QWidget
    ) -> None:
        super().__init__(window)
        self.desk, self.workers, self.pane, self.counts, self.status, self.window = (
            desk,
            workers,
            pane,
            counts,
            status,
            window,
        )
        self.watcher = QFileSystemWatcher(self)
        self._sync_timer = QTimer(self, singleShot=True, interval=SYNC_DELAY_MS)
        self._sync_timer.timeout.connect(self.sync)
        self.watcher.directoryChanged.connect(lambda _p: self._sync_timer.start())
        self.watcher.fileChanged.connect(lambda _p: self._sync_timer.start())
        pane.remove_requested.connect(self.remove)
        pane.reindex_requested.connect(self.reindex)
        pane.reveal_requested.connect(self.reveal)
        # A background build of the dense index (minutes at a million passages) shows its progress
        # beside the counts; keyword search answers meanwhile.
        self._index_timer = QTimer(self, interval=INDEX_POLL_MS)
        self._index_timer.timeout.connect(self._show_index_build)
        self._index_timer.start()
        self._shown_version = None  # library.version() read just before the list on screen
        self._reading = 0  # lists and polls on their way: the next poll waits for them
        self._poll_timer = QTimer(self, interval=LIBRARY_POLL_MS)
        self._poll_timer.timeout.connect(self._poll)
        self._poll_timer.start()
        self._counts_text = ""
        self._labels = {
            "reading": self.tr("reading"),
            "embedding": self.tr("embedding"),
            "writing": self.tr("writing"),
            "hashing": self.tr("checking"),
        }
        self._labels["reembedding"] = self._labels["embedding"]  # a document another model embedded

    # -- the list -------------------------------------------------------------------------
    def refresh(self) -> None:
        def work(_ctx):
            version = self.desk.library.version()  # before the list: a commit between them shows at the next poll
            return version, self.desk.documents(), self.desk.library.read_only

        self._reading += 1
        Op(self.workers, "store", "list", work).success(self._show).failure(self._read_failed).run()

    def _poll(self) -> None:
        """Refresh when another process (or this one) changed the library since the list was read."""
        if self._reading or self._shown_version is None:
            return
        self._reading += 1
        Op(self.workers, "store", "poll", lambda _ctx: self.desk.library.version()).success(self._polled).failure(
            self._read_failed
        ).run()

    def _polled(self, version) -> None:
        self._reading -= 1
        if version != self._shown_version:
            self.refresh()

    def _read_failed(self, exc: BaseException) -> None:
        self._reading -= 1
        log.info("reading the library failed: %s", describe(exc))

    def _show(self, listing) -> None:
        self._reading -= 1
        self._shown_version, docs, read_only = listing
        self.pane.show_documents(docs)
        indexed = [d for d in docs if d.status == "indexed"]
        passages = sum(d.passages for d in indexed)
        documents = (
            self.tr("1 document") if len(indexed) == 1 else self.tr("%1 documents").replace("%1", str(len(indexed)))
        )
        text = (
            documents
            + " · "
            + (self.tr("1 passage") if passages == 1 else self.tr("%1 passages").replace("%1", str(passages)))
        )
        tip = ""
        if read_only:  # say it before the user tries to add: every write would fail
            text += " · " + self.tr("read-only")
            tip = self.tr(
                "The library folder %1 cannot be written (a read-only mount, no permission, or a full disk). Search, ask and summarize work; adding, removing and saving chats do not."  # noqa: E501 - one literal, for the translation tools
            ).replace("%1", str(self.desk.settings.library))
        self._counts_text = text
        self.counts.setText(text)
        self.counts.setToolTip(tip)
        self._show_index_build()
        self.changed.emit()

    def _show_index_build(self) -> None:
        progress = self.desk.index_rebuild()
        if progress is None:
            if self.counts.text() != self._counts_text:
                self.counts.setText(self._counts_text)  # the build has finished
            return
        if progress.stage == "training":
            state = self.tr("building the search index…")
        else:
            state = self.tr("building the search index: %1%").replace("%1", str(round(progress.fraction * 100)))
        self.counts.setText(f"{self._counts_text} · {state}" if self._counts_text else state)

    # -- adding ---------------------------------------------------------------------------
    def add_paths(self, paths: list[Path]) -> None:
        def work(ctx):
            return self.desk.add(paths, on_progress=ctx.progress, cancel=ctx.cancel)

        self.status.showMessage(self.tr("Adding %1 item(s)…").replace("%1", str(len(paths))), 4000)
        self._ingest(Op(self.workers, "ingest", "add", work))
        QTimer.singleShot(300, self.refresh)  # queued rows appear while the first file is read

    def reembed(self) -> None:
        """Documents another embedding model embedded (the library predates the default, or the
        setting changed) are embedded again now, each row saying so while it is, not silently at
        the first question (which waits for this)."""
        op = Op(self.workers, "ingest", "re-embed", lambda ctx: self.desk.reembed(ctx.progress, ctx.cancel))
        op.progress(self._progress, final=lambda e: e.files_done == e.files_total)
        op.success(self._reembedded).failure(self._ingest_failed).run()

    def _reembedded(self, _count: int) -> None:
        self.pane.clear_progress()
        self.refresh()

    def sync(self) -> None:
        self._ingest(Op(self.workers, "ingest", "sync", lambda ctx: self.desk.sync(cancel=ctx.cancel)))

    def reindex(self, ids: list[str]) -> None:
        def work(ctx):
            paths = [Path(d.path) for d in (self.desk.document(i) for i in ids) if d]
            for doc_id in ids:
                self.desk.remove(doc_id)
            return self.desk.add(paths, cancel=ctx.cancel)

        self._ingest(Op(self.workers, "ingest", "re-index", work))

    def _ingest(self, op: Op) -> None:
        op.progress(self._progress, final=lambda e: e.stage in ("done", "failed"))
        op.success(self._ingested).failure(self._ingest_failed).run()

    def _progress(self, event) -> None:
        if event.stage in self._labels and event.path:
            self.pane.show_progress(event.path, *self._progress_text(event))
        if event.stage in ("done", "failed"):
            self.refresh()

    def _progress_text(self, event) -> tuple[str, float | None]:
        """What the status cell says, and how full its bar is (None: no bar, the total is not known)."""
        if event.stage == "reading" and event.ocr_page:
            if event.pages_total:
                text = self.tr("OCR p. %1/%2").replace("%1", str(event.ocr_page)).replace("%2", str(event.pages_total))
                return text, (event.ocr_page - 1) / event.pages_total
            return self.tr("OCR p. %1").replace("%1", str(event.ocr_page)), None
        if event.stage == "reading" and event.pages_total:
            text = self.tr("reading %1/%2 p.").replace("%1", str(event.pages)).replace("%2", str(event.pages_total))
            return text, event.pages / event.pages_total
        if event.stage == "embedding" and event.passages_total:
            done, total = str(event.passages), str(event.passages_total)
            return self.tr("embedding %1/%2").replace("%1", done).replace(
                "%2", total
            ), event.passages / event.passages_total
        detail = f" · {event.pages} p." if event.pages else ""
        return self._labels[event.stage] + detail, None

    def _ingested(self, report) -> None:
        self.pane.clear_progress()
        self.refresh()
        self.watch()
        if report.held:  # an unmounted drive, say: its documents stay until the user confirms
            folders = ", ".join(h["path"] for h in report.held[:3])
            self.status.showMessage(
                self.tr("Files are missing from %1: its documents are kept (unmounted?)").replace("%1", folders), 12000
            )
        elif report.failed:
            names = ", ".join(Path(f["path"]).name for f in report.failed[:3])
            self.status.showMessage(self.tr("Could not read: %1 (see the Status column)").replace("%1", names), 8000)
        else:
            self.status.showMessage(self.tr("%1 added").replace("%1", str(len(report.added))), 4000)
        self.ingest_finished.emit(report)

    def _ingest_failed(self, exc: BaseException) -> None:
        self.pane.clear_progress()
        self.refresh()
        QMessageBox.warning(self.window, "DocDesk", self.tr("Adding documents failed: %1").replace("%1", describe(exc)))
        self.ingest_finished.emit(None)

    # -- the rest -------------------------------------------------------------------------
    def remove(self, ids: list[str]) -> None:
        def work(_ctx):
            for doc_id in ids:
                self.desk.remove(doc_id)

        Op(self.workers, "ingest", "remove", work).success(lambda _r: self.refresh()).failure(self._ingest_failed).run()

    def reveal(self, doc_id: str) -> None:
        def opened(doc) -> None:
            if doc:
                QDesktopServices.openUrl(QUrl.fromLocalFile(str(Path(doc.path).parent)))

        Op(self.workers, "store", "reveal", lambda _ctx: self.desk.document(doc_id)).success(opened).run()

    def watch(self) -> None:
        """Watch the remembered folders (the walk runs on a worker)."""

        def add(paths: list[str]) -> None:
            watched = set(self.watcher.directories()) | set(self.watcher.files())
            missing = [p for p in paths if p not in watched][:MAX_WATCHED]
            if missing:
                self.watcher.addPaths(missing)

        Op(self.workers, "store", "watch", lambda _ctx: self.desk.watch_paths(MAX_WATCHED)).success(add).run()
