"""A library for GPU benchmarks that carry no embedding model: the 117-page GeoTopo book and the
user guide (English and Chinese), embedded with the tests' stand-in embedder
(tests/standin_embedder.py). Its summaries are real work for the model; its search finds passages
by shared words, which is all `docdesk serve`'s load test needs.

    python tests/bench/standin_library.py OUT
"""

from __future__ import annotations

import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT))

DOCUMENTS = [
    ROOT / "tests/data/corpus/pdf-samples/009-pdflatex-geotopo/GeoTopo-komprimiert.pdf",
    ROOT / "assets/samples/docdesk-guide.pdf",
    ROOT / "assets/samples/docdesk-guide-zh.pdf",
]


def main(argv: list[str] | None = None) -> int:
    from app.desk.services import DocDesk
    from app.desk.settings import Settings
    from tests.standin_embedder import HashingEmbedder

    out = Path((argv or sys.argv[1:])[0])
    desk = DocDesk(Settings(library=out), embedder=HashingEmbedder())
    try:
        desk.add(DOCUMENTS)
        rows = desk.documents()
    finally:
        desk.close()
    for row in rows:
        print(f"{row.status:8} {row.title}")
    return 0 if len(rows) == len(DOCUMENTS) and all(r.status == "indexed" for r in rows) else 1


if __name__ == "__main__":
    raise SystemExit(main())
