"""The window's "Serve to editors": the same OpenAI-compatible server as `docdesk serve`, on a
thread of the window's process, answering from the window's library with the window's model.

It starts when the window opens (if enabled in Settings) and again after Settings change; the
status bar says where it listens, or why it could not.
"""

from __future__ import annotations

import copy
import logging

from PySide6.QtCore import QObject, Qt
from PySide6.QtWidgets import QLabel

from app.desk.serve_settings import ServeRefused, ServeSettings
from app.desk.services import DocDesk

log = logging.getLogger(__name__)


class ServeController(QObject):
    def __init__(self, desk: DocDesk, label: QLabel, window) -> None:
        super().__init__(window)
        self.desk, self.label = desk, label
        self.server = None
        self.serving: ServeSettings | None = None  # the settings the running server was started with
        self.label.setTextInteractionFlags(Qt.TextSelectableByMouse)  # the address, to copy into an editor
        self.label.setVisible(False)

    @property
    def url(self) -> str | None:
        return self.server.url if self.server is not None and self.server.running else None

    def apply(self, settings: ServeSettings, restart: bool = False) -> None:
        """Start, stop or restart the server to match `settings` (restart: the model changed)."""
        if settings == self.serving and not restart and (self.server is None or self.server.running):
            return
        self.stop()
        if not settings.enabled:
            return
        from app.serve.runner import BackgroundServer

        server = BackgroundServer(self.desk, copy.deepcopy(settings))
        try:
            url = server.start()
        except ServeRefused as refused:
            self._show(self.tr("⚠ Not serving editors"), str(refused))
            return
        self.server, self.serving = server, copy.deepcopy(settings)
        guarded = self.tr("a token is required") if settings.token else self.tr("no token: this computer only")
        self._show(
            self.tr("Serving editors at %1").replace("%1", url),
            self.tr('OpenAI-compatible endpoint, model "docdesk" · %1').replace("%1", guarded),
        )

    def _show(self, text: str, tooltip: str) -> None:
        self.label.setText(text)
        self.label.setToolTip(tooltip)
        self.label.setVisible(True)

    def stop(self) -> None:
        if self.server is not None:
            self.server.stop()
        self.server = self.serving = None
        self.label.setVisible(False)
