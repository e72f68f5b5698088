"""Render the sample user guides (Markdown, written by hand) to PDF with reportlab.

Run with `make samples`; the PDFs are committed so a fresh checkout has them.
Each "## " section starts a new page, so page citations have something to point at.
"""

from __future__ import annotations

import re
from pathlib import Path
from xml.sax.saxutils import escape

from reportlab.lib.pagesizes import A5
from reportlab.lib.styles import ParagraphStyle
from reportlab.pdfbase import pdfmetrics
from reportlab.pdfbase.cidfonts import UnicodeCIDFont
from reportlab.platypus import PageBreak, Paragraph, SimpleDocTemplate

HERE = Path(__file__).resolve().parent


def styles(chinese: bool) -> dict[str, ParagraphStyle]:
    font = "STSong-Light" if chinese else "Helvetica"
    bold = "STSong-Light" if chinese else "Helvetica-Bold"
    wrap = "CJK" if chinese else None
    return {
        "h1": ParagraphStyle("h1", fontName=bold, fontSize=17, leading=22, spaceAfter=10, wordWrap=wrap),
        "h2": ParagraphStyle("h2", fontName=bold, fontSize=13, leading=17, spaceAfter=6, wordWrap=wrap),
        "p": ParagraphStyle("p", fontName=font, fontSize=10, leading=14, spaceAfter=6, wordWrap=wrap),
    }


def render(markdown: Path, pdf: Path, chinese: bool, title: str) -> None:
    style = styles(chinese)
    story = []
    sections = 0
    for block in re.split(r"\n\s*\n", markdown.read_text(encoding="utf-8")):
        block = block.strip()
        if block.startswith("## "):
            sections += 1
            if sections > 1:
                story.append(PageBreak())
            story.append(Paragraph(escape(block[3:]), style["h2"]))
        elif block.startswith("# "):
            story.append(Paragraph(escape(block[2:]), style["h1"]))
        elif block:
            text = escape(" ".join(block.split()))
            text = (
                re.sub(r"`([^`]+)`", r'<font face="Courier">\1</font>', text) if not chinese else text.replace("`", "")
            )
            story.append(Paragraph(text, style["p"]))
    SimpleDocTemplate(str(pdf), pagesize=A5, title=title, author="DocDesk").build(story)


def main() -> None:
    pdfmetrics.registerFont(UnicodeCIDFont("STSong-Light"))
    render(HERE / "docdesk-guide.md", HERE / "docdesk-guide.pdf", False, "DocDesk User Guide")
    render(HERE / "docdesk-guide-zh.md", HERE / "docdesk-guide-zh.pdf", True, "DocDesk 使用指南")


if __name__ == "__main__":
    main()
