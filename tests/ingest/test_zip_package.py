"""ZipPackage (EPUB, OpenDocument) says what zipguard found in the words of the user's format."""

from __future__ import annotations

import io
import zipfile

import pytest

from ingest.errors import DamagedDocument, OversizedDocument
from ingest.readers.zip_package import ZipPackage
from ingest.readers.zipguard import EPUB, OPENDOCUMENT, ZipLimits


def _zip(members: dict[str, bytes], method: int = zipfile.ZIP_DEFLATED) -> bytes:
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w", method) as archive:
        for name, content in members.items():
            archive.writestr(name, content)
    return buffer.getvalue()


def _corrupt_checksum(data: bytes, name: str) -> bytes:
    """`data` with the stored member `name`'s first byte changed: same size, wrong CRC."""
    start = data.index(name.encode()) + len(name)  # the local header's name, then the data
    return data[:start] + bytes([data[start] ^ 0xFF]) + data[start + 1 :]


def test_limits_are_refused_in_the_packages_own_words():
    many = _zip({f"OEBPS/{n}.xhtml": b"<p/>" for n in range(3)})
    with pytest.raises(OversizedDocument, match=r"^the EPUB file holds 3 parts, more than 2 \(a zip bomb\?\)$"):
        ZipPackage(many, EPUB, ZipLimits(members=2))
    big = _zip({"content.xml": b"<p>" + b" " * 4096 + b"</p>"})
    with pytest.raises(OversizedDocument, match=r"^the OpenDocument file expands more than 2 times \(a zip bomb\?\)"):
        ZipPackage(big, OPENDOCUMENT, ZipLimits(ratio=2, ratio_floor=100))
    picture = _zip({"Pictures/scan.png": bytes(range(256)) * 16}, zipfile.ZIP_STORED)  # not a text part
    package = ZipPackage(picture, OPENDOCUMENT, ZipLimits(total_bytes=1000))
    with pytest.raises(OversizedDocument, match=r"^the OpenDocument file expands beyond DocDesk's input limits"):
        package.read("Pictures/scan.png")


def test_damage_is_named_after_the_package():
    stored = _zip({"OEBPS/one.xhtml": b"<p>Chapter one</p>"}, zipfile.ZIP_STORED)
    package = ZipPackage(_corrupt_checksum(stored, "OEBPS/one.xhtml"), EPUB)
    with pytest.raises(DamagedDocument, match=r"^damaged EPUB: OEBPS/one.xhtml fails its size or checksum$"):
        package.read("OEBPS/one.xhtml")
    bzipped = _zip({"content.xml": b"<p>Hi</p>"}, zipfile.ZIP_BZIP2)
    with pytest.raises(
        DamagedDocument,
        match=r"^damaged OpenDocument file: content.xml uses ZIP compression method 12, which OpenDocument files do not use$",
    ):
        ZipPackage(bzipped, OPENDOCUMENT).read("content.xml")
    with pytest.raises(DamagedDocument, match=r"^damaged EPUB: not a readable ZIP container"):
        ZipPackage(b"PK\x03\x04 no zip", EPUB)
    with pytest.raises(DamagedDocument, match=r"^damaged OpenDocument file: content.xml is not well-formed XML"):
        ZipPackage(_zip({"content.xml": b"<p>"}), OPENDOCUMENT).xml("content.xml")
