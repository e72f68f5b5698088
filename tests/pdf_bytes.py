"""Hand-written PDFs for reader tests: objects in, a file with a correct cross-reference table out."""

from __future__ import annotations

from pathlib import Path


def pdf_from_objects(path: Path, objects: list[bytes]) -> Path:
    """A PDF of the given objects (object 1 is the catalog) with a correct cross-reference table."""
    out, offsets = bytearray(b"%PDF-1.4\n"), []
    for number, body in enumerate(objects, 1):
        offsets.append(len(out))
        out += b"%d 0 obj\n%s\nendobj\n" % (number, body)
    xref = len(out)
    out += b"xref\n0 %d\n0000000000 65535 f \n" % (len(objects) + 1)
    out += b"".join(b"%010d 00000 n \n" % offset for offset in offsets)
    out += b"trailer\n<< /Size %d /Root 1 0 R >>\nstartxref\n%d\n%%%%EOF\n" % (len(objects) + 1, xref)
    path.write_bytes(bytes(out))
    return path
