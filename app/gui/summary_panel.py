"""The summary panel: progress (blocks done / total, time left), Cancel, then the structured
summary with page links, Copy and "Save as Markdown"."""

from __future__ import annotations

from PySide6.QtCore import QSize, Signal
from PySide6.QtGui import QGuiApplication
from PySide6.QtWidgets import (
    QDialog,
    QFileDialog,
    QHBoxLayout,
    QLabel,
    QProgressBar,
    QPushButton,
    QTextBrowser,
    QVBoxLayout,
)

from app.gui.screen_fit import fit_dialog


def summary_markdown(summary) -> str:
    """The summary with each section's pages a link that opens the document at its first page;
    what the model wrote is shown as text, never as HTML."""
    from engine.summarize import render_markdown

    return render_markdown(summary, page_link=lambda s: f"page:{s.page}", text=lambda t: t.replace("<", "\\<"))


class SummaryPanel(QDialog):
    cancel_requested = Signal()
    page_clicked = Signal(str, int)  # doc id, page

    def __init__(self, parent=None) -> None:
        super().__init__(parent)
        fit_dialog(self, QSize(700, 760))  # less on a small screen
        self.status = QLabel()
        self.progress = QProgressBar()
        self.cancel = QPushButton(self.tr("Cancel"))
        self.cancel.clicked.connect(self.cancel_requested)
        self.browser = QTextBrowser()
        self.browser.setOpenLinks(False)
        self.browser.anchorClicked.connect(lambda url: self.page_clicked.emit(self.doc_id, int(url.path())))
        self.copy = QPushButton(self.tr("Copy"))
        self.copy.clicked.connect(lambda: QGuiApplication.clipboard().setText(self.markdown))
        self.save = QPushButton(self.tr("Save as Markdown…"))
        self.save.clicked.connect(self._save)
        top = QHBoxLayout()
        top.addWidget(self.progress, 1)
        top.addWidget(self.cancel)
        bottom = QHBoxLayout()
        bottom.addStretch(1)
        bottom.addWidget(self.copy)
        bottom.addWidget(self.save)
        layout = QVBoxLayout(self)
        layout.addWidget(self.status)
        layout.addLayout(top)
        layout.addWidget(self.browser, 1)
        layout.addLayout(bottom)
        self.doc_id = ""
        self.markdown = ""
        self.state = "idle"  # running | done | cancelled | failed

    def start(self, doc_id: str, title: str) -> None:
        self.doc_id, self.markdown, self.state = doc_id, "", "running"
        self.setWindowTitle(self.tr("Summary: %1").replace("%1", title))
        self.status.setText(self.tr("Summarizing…"))
        self.progress.setRange(0, 0)
        self.cancel.setEnabled(True)
        self.copy.setEnabled(False)
        self.save.setEnabled(False)
        self.browser.clear()
        self.show()
        self.raise_()

    def show_progress(self, event) -> None:
        self.progress.setRange(0, max(event.total, 1))
        self.progress.setValue(event.done)
        stage = self.tr("blocks") if event.stage == "map" else self.tr("combining")
        left = ""
        if event.eta_s is not None and event.done < event.total:
            left = " · " + self.tr("about %1 s left").replace("%1", f"{event.eta_s:.0f}")
        cached = " · " + self.tr("%1 from cache").replace("%1", str(event.cached)) if event.cached else ""
        self.status.setText(f"{stage}: {event.done} / {event.total}{cached}{left}")

    def show_summary(self, summary) -> None:
        self.state = "done"
        self.markdown = summary.text
        self.browser.setMarkdown(summary_markdown(summary))
        self.progress.setRange(0, 1)
        self.progress.setValue(1)
        cache = self.tr("from the cache") if summary.from_cache == summary.steps else ""
        seconds = summary.timings["total_ms"] / 1000
        self.status.setText(self.tr("Done in %1 s").replace("%1", f"{seconds:.1f}") + (f" ({cache})" if cache else ""))
        self.cancel.setEnabled(False)
        self.copy.setEnabled(True)
        self.save.setEnabled(True)

    def show_stopped(self, message: str, cancelled: bool) -> None:
        self.state = "cancelled" if cancelled else "failed"
        self.status.setText(message)
        self.progress.setRange(0, 1)
        self.cancel.setEnabled(False)

    def _save(self) -> None:
        path, _ = QFileDialog.getSaveFileName(self, self.tr("Save summary"), "summary.md", "Markdown (*.md)")
        if path:
            with open(path, "w", encoding="utf-8") as handle:
                handle.write(self.markdown)
