"""The window and its dialogs fit the screen they open on.

Sizes are derived from the screen's available geometry (the desktop less panels and docks), in
logical pixels, so a 1366×768 laptop, a 2560×1440 monitor and a scale factor of 2 all get a window
that is wholly on screen. The pure functions take and give QRect/QSize (tested without a screen);
`DialogFit` applies them to any dialog of the window as it is shown.
"""

from __future__ import annotations

from PySide6.QtCore import QEvent, QObject, QPoint, QRect, QSize
from PySide6.QtGui import QGuiApplication
from PySide6.QtWidgets import QDialog, QMessageBox, QWidget

FIRST_SHARE = 0.85  # of the available width and height on a first start
TITLE_BAR = 32  # the window manager's frame above the client area (unknown until shown)
BORDER = 4  # the frame's other sides
MARGIN = 24  # kept free around a dialog


def available(widget: QWidget | None = None) -> QRect:
    """The available geometry of the screen `widget` is on (or will open on)."""
    screen = widget.screen() if widget is not None else None
    screen = screen or QGuiApplication.primaryScreen()
    return screen.availableGeometry() if screen is not None else QRect(0, 0, 1280, 720)


def client_area(avail: QRect) -> QRect:
    """Where a window's client rectangle may lie so that its frame stays inside `avail`."""
    return avail.adjusted(BORDER, TITLE_BAR, -BORDER, -BORDER)


def first_geometry(avail: QRect, minimum: QSize | None = None, share: float = FIRST_SHARE) -> QRect:
    """A first start: `share` of the available area (at least the window's `minimum` where the
    screen has room for it), centred, its frame never past the edges."""
    room = client_area(avail)
    size = QSize(int(avail.width() * share), int(avail.height() * share))
    size = size.expandedTo(minimum or QSize()).boundedTo(room.size())
    rect = QRect(0, 0, size.width(), size.height())
    rect.moveCenter(room.center())
    return rect


def clamp(rect: QRect, avail: QRect, minimum: QSize | None = None) -> QRect:
    """`rect` (a client rectangle, as restored) shrunk to fit `avail` and moved inside it; grown
    to the window's `minimum` first (as the window will be), where the screen has room."""
    room = client_area(avail)
    size = rect.size().expandedTo(minimum or QSize()).boundedTo(room.size())
    x = min(max(rect.x(), room.left()), room.right() + 1 - size.width())
    y = min(max(rect.y(), room.top()), room.bottom() + 1 - size.height())
    return QRect(x, y, size.width(), size.height())


def dialog_size(avail: QRect, wanted: QSize) -> QSize:
    """A dialog's size: what it would like, never more than the available area less margins."""
    room = QSize(avail.width() - 2 * MARGIN - 2 * BORDER, avail.height() - 2 * MARGIN - TITLE_BAR - BORDER)
    return wanted.boundedTo(room)


def first_pane_sizes(width: int, library_hint: int, chat_list: int = 170) -> tuple[list[int], list[int]]:
    """A first start's splitters: the library gets what its columns ask for, within 45% of the
    window and never less than a third (at most 900 px), and the chat list a narrow strip, so the
    documents and the conversation get the room. (main splitter sizes, chat splitter sizes)"""
    library = max(min(library_hint, int(0.45 * width)), min(width // 3, 900))
    chat = max(width - library, 0)
    return [library, chat], [min(chat_list, chat // 4), max(chat - min(chat_list, chat // 4), 0)]


def fit_dialog(dialog: QWidget, wanted: QSize | None = None) -> None:
    """Size a dialog for the screen: `wanted` (or its present size) bounded by the screen."""
    parent = dialog.parentWidget()
    dialog.resize(dialog_size(available(parent or dialog), wanted or dialog.size()))


class DialogFit(QObject):
    """Keeps every dialog of a window inside the screen: as a dialog is shown it shrinks to the
    screen's available area less margins where it is larger, and is centred over the window with
    its frame inside the screen (Qt's own placement counts only the frame's left side)."""

    def __init__(self, window: QWidget) -> None:
        super().__init__(window)
        self.window = window

    def watch(self, widget: QObject) -> None:
        if isinstance(widget, QDialog):  # not menus or other popups: they open where they are asked
            widget.installEventFilter(self)

    def eventFilter(self, watched: QObject, event: QEvent) -> bool:  # noqa: N802 - Qt's name
        if event.type() == QEvent.Show and not event.spontaneous() and isinstance(watched, QWidget):
            self.place(watched)
        return False

    def place(self, dialog: QWidget) -> None:
        avail = available(self.window)
        size = dialog_size(avail, dialog.size())
        if size != dialog.size():
            dialog.resize(size)
        if isinstance(dialog, QMessageBox):  # sizes itself as it is shown: Qt places it
            return
        rect = QRect(QPoint(0, 0), size)
        rect.moveCenter(self.window.geometry().center())
        dialog.move(clamp(rect, avail).topLeft() - QPoint(BORDER, TITLE_BAR))  # move() places the frame
