"""Make the corpus's broken files and re-encoded texts: `python tests/data/make_corpus.py [--out DIR]`.

`tests/data/corpus/pdf-samples/` is copied from py-pdf/sample-files (see corpus/README.md); the
other two folders are made here, byte for byte the same on every run (fixed seed, fixed ZIP date),
and committed. tests/test_corpus_data.py runs this into a temporary folder and compares.

- broken/: an empty PDF, a PDF cut off at 700 kB (the first 700,000 bytes of the 117-page
  GeoTopo book), HTML saved as .pdf, random bytes saved as .docx, a ZIP that is not a Word file,
  a text file with NUL bytes. Each must fail with a reason of its own.
- encodings/: the same kind of text in GB18030, UTF-8 with a byte order mark, Latin-1 and UTF-16.
"""

from __future__ import annotations

import argparse
import io
import random
import zipfile
from pathlib import Path

HERE = Path(__file__).resolve().parent
CORPUS = HERE / "corpus"
BOOK = CORPUS / "pdf-samples" / "009-pdflatex-geotopo" / "GeoTopo-komprimiert.pdf"

CHINESE = (
    "本地文档助手的测试文本。\n"
    "第一段：显卡驱动版本应当与 CUDA 版本匹配，否则推理框架会报错。\n"
    "第二段：长文档摘要采用分块处理，再把各块摘要汇总成最终结果。\n"
)
FRENCH = "Le café est prêt. Les élèves étudient à l'école.\nDeuxième ligne: garçon, naïve, façade.\n"
ENGLISH = "UTF-16 text with a byte order mark.\nSecond line of the file.\n"


def not_a_word_file() -> bytes:
    """A ZIP holding one stored text file and no word/document.xml, dated so the bytes never change."""
    member = zipfile.ZipInfo("hello.txt", date_time=(2026, 12, 2, 8, 6, 28))
    member.create_system = 3  # Unix, wherever this runs
    member.external_attr = 0o600 << 16
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w", zipfile.ZIP_STORED) as archive:
        archive.writestr(member, b"a zip archive that is not a Word document")
    return buffer.getvalue()


def files(book: Path = BOOK) -> dict[str, bytes]:
    """Every made file, by its path under the corpus folder."""
    seeded = random.Random(7)
    return {
        "broken/empty.pdf": b"",
        "broken/truncated.pdf": book.read_bytes()[:700_000],
        "broken/html-named.pdf": b"<html><body><h1>Not a PDF</h1><p>This file is HTML saved with a .pdf name.</p></body></html>\n",
        "broken/random-bytes.docx": bytes(seeded.getrandbits(8) for _ in range(20_000)),
        "broken/zip-without-document.docx": not_a_word_file(),
        "broken/nul-bytes.txt": b"first line\n\x00\x00\x00binary\x00junk\nlast line\n",
        "encodings/chinese-gb18030.txt": CHINESE.encode("gb18030"),
        "encodings/chinese-utf8-bom.txt": CHINESE.encode("utf-8-sig"),
        "encodings/french-latin1.txt": FRENCH.encode("latin-1"),
        "encodings/english-utf16.txt": b"\xff\xfe" + ENGLISH.encode("utf-16-le"),  # little-endian with its mark, on any machine
    }


def write(out: Path) -> list[Path]:
    written = []
    for name, data in files().items():
        path = out / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_bytes(data)
        written.append(path)
    return written


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out", type=Path, default=CORPUS, help="the corpus folder to write into (default: %(default)s)")
    args = parser.parse_args()
    for path in write(args.out):
        print(path)


if __name__ == "__main__":
    main()
