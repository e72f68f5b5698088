"""Summaries from the window: one at a time, with progress, Cancel, and page links that open the viewer."""

from __future__ import annotations

from pathlib import Path

from PySide6.QtCore import QObject, Signal
from PySide6.QtWidgets import QStatusBar, QWidget

from app.desk.services import DocDesk
from app.gui.document_opener import DocumentOpener
from app.gui.ops import Op, describe
from app.gui.summary_panel import SummaryPanel
from app.gui.tasks import Workers


class SummaryController(QObject):
    finished = Signal(object)  # the Summary; None when it was cancelled or failed
    progressed = Signal(object)  # engine.summarize's progress event; None when the summary ended

    def __init__(
        self,
        desk: DocDesk,
        workers: Workers,
        panel: SummaryPanel,
        opener: DocumentOpener,
        status: QStatusBar,
        window: QWidget,
    ) -> None:
        super().__init__(window)
        self.desk, self.workers, self.panel, self.opener, self.status = desk, workers, panel, opener, status
        self.op: Op | None = None
        self._starting = False
        panel.cancel_requested.connect(self.cancel)
        panel.page_clicked.connect(lambda doc_id, page: self.opener.open(doc_id, page))

    @property
    def running(self) -> bool:
        return self.op is not None or self._starting

    def summarize(self, doc_id: str) -> None:
        if self.running:
            self.panel.raise_()
            return
        self._starting = True
        Op(self.workers, "store", "document", lambda _ctx: self.desk.document(doc_id)).success(self._start).failure(
            lambda _exc: setattr(self, "_starting", False)
        ).run()

    def _start(self, doc) -> None:
        self._starting = False
        if doc is None or doc.status != "indexed":
            self.status.showMessage(self.tr("Only indexed documents can be summarized"), 4000)
            return
        self.panel.start(doc.id, doc.title or Path(doc.path).name)

        def work(ctx):
            with self.desk.doing("summarizing", document=doc.title or doc.path):
                return self.desk.summarizer().summarize(doc.id, on_progress=ctx.progress, cancel=ctx.cancel)

        op = Op(self.workers, "engine", "summarize", work).progress(self._progress, every_s=0.1)
        self.op = op.success(self._done).cancelled(self._cancelled).failure(self._failed).busy(self._busy).run()

    def _progress(self, event) -> None:
        self.panel.show_progress(event)
        self.progressed.emit(event)

    def _busy(self, busy: bool) -> None:
        if not busy:
            self.op = None
            self.progressed.emit(None)

    def _done(self, summary) -> None:
        self.panel.show_summary(summary)
        self.finished.emit(summary)

    def _cancelled(self, _stopped) -> None:
        self.panel.show_stopped(self.tr("Stopped. Finished blocks are kept: summarize again to resume."), True)
        self.finished.emit(None)

    def _failed(self, exc: BaseException) -> None:
        self.panel.show_stopped(self.tr("Summary failed: %1").replace("%1", describe(exc)), False)
        self.finished.emit(None)

    def cancel(self) -> None:
        if self.op is not None:
            self.op.cancel()
