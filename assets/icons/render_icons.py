"""Render the window icon, app/gui/icons/docdesk.svg, to the PNG sizes desktops and packages ask for (16 to 512 px).

QT_QPA_PLATFORM=offscreen python assets/icons/render_icons.py
"""

from __future__ import annotations

import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent
SIZES = (16, 24, 32, 48, 64, 128, 256, 512)


def main() -> int:
    from PySide6.QtCore import Qt
    from PySide6.QtGui import QGuiApplication, QImage, QPainter
    from PySide6.QtSvg import QSvgRenderer

    app = QGuiApplication.instance() or QGuiApplication(sys.argv[:1])  # noqa: F841 - painting needs one
    renderer = QSvgRenderer(str(HERE.parents[1] / "app" / "gui" / "icons" / "docdesk.svg"))
    for size in SIZES:
        image = QImage(size, size, QImage.Format_ARGB32)
        image.fill(Qt.transparent)
        painter = QPainter(image)
        painter.setRenderHint(QPainter.Antialiasing)
        renderer.render(painter)
        painter.end()
        image.save(str(HERE / f"docdesk-{size}.png"))
    print(f"rendered {len(SIZES)} sizes into {HERE}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
