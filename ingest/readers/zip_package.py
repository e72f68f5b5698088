"""A ZIP container read member by member (EPUB, OpenDocument), within zipguard's limits.

Unlike Word, PowerPoint and Excel files, which are handed on as a checked copy
(`zipguard.checked_copy`), these are read here one member at a time, as the reader asks for
them, and every message names the container as the user knows it (`zipguard.Package`).
"""

from __future__ import annotations

import io
import zipfile
from collections.abc import Iterator

from lxml import etree

from ingest.errors import DamagedDocument, OversizedDocument
from ingest.readers.zipguard import Package, ZipLimits, checked_members, read_member


class ZipPackage:
    """A ZIP container whose members are read within the input limits and parsed as XML without
    entity expansion, DTDs or network access (no XXE, no billion laughs)."""

    def __init__(self, data: bytes, package: Package, limits: ZipLimits | None = None) -> None:
        self.package = package  # how messages name the file: "the EPUB file ...", "damaged EPUB: ..."
        self.limits = limits or ZipLimits()
        self._raw = io.BytesIO(data)  # a position of its own: the directory reader moves the other one
        self._read = 0
        try:
            with zipfile.ZipFile(io.BytesIO(data)) as archive:
                members = checked_members(archive, self.limits, package)
        except (zipfile.BadZipFile, zipfile.LargeZipFile, ValueError) as exc:
            raise DamagedDocument(f"{package.damaged}: not a readable ZIP container ({exc})") from exc
        self._members = {info.filename: info for info in members}

    def has(self, name: str) -> bool:
        return name in self._members

    def chunks(self, name: str) -> Iterator[bytes]:
        """A member's bytes as they are decompressed; every member counts towards the total limit."""
        info = self._members[name]
        self._read += info.file_size
        if info.file_size > self.limits.part_bytes or self._read > self.limits.total_bytes:
            raise OversizedDocument(
                f"the {self.package.kind} file expands beyond DocDesk's input limits (a zip bomb?) at {name}"
            )
        yield from read_member(self._raw, info, self.limits, self.package)

    def read(self, name: str) -> bytes:
        return b"".join(self.chunks(name))

    @staticmethod
    def parser(**options) -> etree.XMLParser:
        return etree.XMLParser(resolve_entities=False, no_network=True, huge_tree=False, load_dtd=False, **options)

    def xml(self, name: str) -> etree._Element:
        try:
            return etree.fromstring(self.read(name), self.parser())
        except etree.XMLSyntaxError as exc:
            raise DamagedDocument(f"{self.package.damaged}: {name} is not well-formed XML ({exc})") from exc
