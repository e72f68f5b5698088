"""The library table's status cell as a progress bar while a file is read: the model's PROGRESS
role (0..1) is the bar, the status text ("reading 2/4 p.") is written on it."""

from __future__ import annotations

from PySide6.QtWidgets import QApplication, QStyle, QStyledItemDelegate, QStyleOptionProgressBar

from app.gui.documents_model import PROGRESS

STEPS = 1000


class ProgressDelegate(QStyledItemDelegate):
    def paint(self, painter, option, index) -> None:
        fraction = index.data(PROGRESS)
        if fraction is None:
            super().paint(painter, option, index)
            return
        style = option.widget.style() if option.widget is not None else QApplication.style()
        self.initStyleOption(option, index)
        option.text = ""
        style.drawControl(QStyle.CE_ItemViewItem, option, painter, option.widget)  # the selection, if any
        bar = QStyleOptionProgressBar()
        if option.widget is not None:
            bar.initFrom(option.widget)
        bar.rect = option.rect.adjusted(2, 2, -2, -2)
        bar.minimum, bar.maximum = 0, STEPS
        bar.progress = max(0, min(STEPS, round(fraction * STEPS)))
        bar.text = index.data()
        bar.textVisible = True
        bar.state = option.state | QStyle.State_Horizontal
        style.drawControl(QStyle.CE_ProgressBar, bar, painter, option.widget)
