"""A toy format, declared and read in this one module as a plugin would: a file that starts with
the line "TOYDOC 1", then pages of UTF-8 text between lines "---", the first line its title.

Importing the module adds the format to the table; tests take it out again with
`unregister_format("toy")`.
"""

from __future__ import annotations

from ingest.errors import DamagedDocument
from ingest.readers import Format, ReadRequest, register_reader
from ingest.readers.registry import magic
from ingest.records import Page, ReadResult

HEADER = b"TOYDOC 1\n"

TOY = Format(
    "toy",
    "Toy notes",
    (".toy",),
    sniff=magic(HEADER, missing="TOYDOC header"),
    noun="a toy note",
    pages="real",
)


@register_reader(TOY)
def read_toy(request: ReadRequest) -> ReadResult:
    try:
        body = request.data.removeprefix(HEADER).decode("utf-8")
    except UnicodeDecodeError as exc:
        raise DamagedDocument(f"damaged toy note: not UTF-8 ({exc.reason} at byte {exc.start})") from exc
    texts = [text.strip() for text in body.split("\n---\n")]
    pages = [Page(number, text) for number, text in enumerate(texts, 1)]
    return ReadResult("toy", pages, title=texts[0].split("\n", 1)[0])


def write_toy(path, *pages: str):
    path.write_bytes(HEADER + "\n---\n".join(pages).encode("utf-8"))
    return path
