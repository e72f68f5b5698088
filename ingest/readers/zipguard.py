"""A ZIP container (Word, PowerPoint, Excel; EPUB and OpenDocument through zip_package), read
within limits: a zip bomb costs a refusal, not the memory.

Two checks. Before anything is decompressed, the sizes the central directory declares
(each part, all parts, the compression ratio, the number of parts). Then, while
decompressing, the bytes that really come out: each part is inflated here from its raw
bytes, counting what goes in and what comes out, and reading stops at the first limit
crossed, whatever the directory said. python-docx, python-pptx or openpyxl then reads the
checked copy, never the original container. EPUB and OpenDocument files are read member by
member instead (zip_package.ZipPackage), under the same limits and checks.
"""

from __future__ import annotations

import io
import struct
import zipfile
import zlib
from collections.abc import Iterator
from dataclasses import dataclass
from typing import BinaryIO

from ingest.errors import DamagedDocument, OversizedDocument

MB = 1024 * 1024


@dataclass(frozen=True)
class ZipLimits:
    # One decompressed part. Generous: a long book's word/document.xml is some MB. python-docx
    # needs ~15 times a part's size in memory to parse it, so this also bounds the parse.
    part_bytes: int = 200 * MB
    # All decompressed text parts together (pictures, fonts and embedded files are not read).
    total_bytes: int = 256 * MB
    # Decompressed : compressed. Generated, very repetitive paragraphs compress ~50 times;
    # zeros and repeated markup ~1000.
    ratio: int = 100
    ratio_floor: int = 1 * MB  # below this a part may compress as tightly as it likes
    members: int = 10_000


DOCX_LIMITS = ZipLimits()


@dataclass(frozen=True)
class Package:
    """How messages name the container: "the Word file expands ...", "damaged Word document: ..."."""

    kind: str = "Word"
    damaged: str = "damaged Word document"


WORD = Package()
POWERPOINT = Package("PowerPoint", "damaged PowerPoint presentation")
EXCEL = Package("Excel", "damaged Excel workbook")
EPUB = Package("EPUB", "damaged EPUB")
OPENDOCUMENT = Package("OpenDocument", "damaged OpenDocument file")

# Only these parts are ever parsed for text; the rest (pictures, fonts, OLE objects) are
# handed on empty, so they are never decompressed and cannot cost memory.
_TEXT_SUFFIXES = (".xml", ".rels")
_IN_CHUNK = 64 * 1024
_OUT_CHUNK = MB
_LOCAL_HEADER = struct.Struct("<4s5H3L2H")


def _mb(size: int) -> str:
    return f"{size / MB:.0f}" if size >= 10 * MB else f"{size / MB:.1f}"


def is_text_part(name: str) -> bool:
    return name.lower().endswith(_TEXT_SUFFIXES)


def checked_members(
    archive: zipfile.ZipFile, limits: ZipLimits = DOCX_LIMITS, package: Package = WORD
) -> list[zipfile.ZipInfo]:
    """The archive's members (the last of duplicate names, as zipfile reads them), after the
    checks on what the central directory declares."""
    infos = archive.infolist()
    if len(infos) > limits.members:
        raise OversizedDocument(
            f"the {package.kind} file holds {len(infos)} parts, more than {limits.members} (a zip bomb?)"
        )
    members = list({info.filename: info for info in infos if not info.is_dir()}.values())
    total = 0
    for info in (m for m in members if is_text_part(m.filename)):
        if info.file_size > limits.part_bytes:
            raise OversizedDocument(
                f"the {package.kind} file expands to more than {_mb(limits.part_bytes)} MB (a zip bomb?): "
                f"{info.filename} alone declares {_mb(info.file_size)} MB"
            )
        if info.file_size > limits.ratio_floor and info.file_size > limits.ratio * max(info.compress_size, 1):
            raise OversizedDocument(
                f"the {package.kind} file expands more than {limits.ratio} times (a zip bomb?): {info.filename} "
                f"declares {_mb(info.file_size)} MB from {info.compress_size} bytes"
            )
        total += info.file_size
        if total > limits.total_bytes:
            raise OversizedDocument(
                f"the {package.kind} file expands to more than {_mb(limits.total_bytes)} MB (a zip bomb?): "
                "its parts declare more than that together"
            )
    return members


def _data_start(raw: BinaryIO, info: zipfile.ZipInfo, package: Package) -> int:
    raw.seek(info.header_offset)
    header = raw.read(_LOCAL_HEADER.size)
    if len(header) < _LOCAL_HEADER.size or header[:4] != b"PK\x03\x04":
        raise DamagedDocument(f"{package.damaged}: the ZIP entry of {info.filename} is missing or broken")
    *_, name_length, extra_length = _LOCAL_HEADER.unpack(header)
    return info.header_offset + _LOCAL_HEADER.size + name_length + extra_length


def _raw_chunks(raw: BinaryIO, info: zipfile.ZipInfo, package: Package) -> Iterator[bytes]:
    raw.seek(_data_start(raw, info, package))
    left = info.compress_size
    while left > 0:
        chunk = raw.read(min(_IN_CHUNK, left))
        if not chunk:
            raise DamagedDocument(f"{package.damaged}: {info.filename} is cut off")
        left -= len(chunk)
        yield chunk


class _Meter:
    """Counts one part's bytes in and out and refuses at the first limit crossed."""

    def __init__(self, info: zipfile.ZipInfo, limits: ZipLimits, package: Package) -> None:
        self.info = info
        self.limits = limits
        self.package = package
        self.consumed = 0
        self.produced = 0
        self.crc = 0

    def count(self, out: bytes, consumed: int) -> bytes:
        self.consumed = consumed
        self.produced += len(out)
        name, declared, package = self.info.filename, self.info.file_size, self.package
        if self.produced > declared:  # declared sizes are already within the part and total limits
            raise OversizedDocument(
                f"the {package.kind} file expands beyond the size it declares (a zip bomb?): {name} gives more "
                f"than its declared {_mb(declared)} MB"
            )
        if self.produced > self.limits.ratio_floor and self.produced > self.limits.ratio * max(consumed, 1):
            raise OversizedDocument(
                f"the {package.kind} file expands more than {self.limits.ratio} times (a zip bomb?): {name} gives "
                f"{_mb(self.produced)} MB from {consumed} bytes"
            )
        self.crc = zlib.crc32(out, self.crc)
        return out

    def verify(self) -> None:
        if self.produced != self.info.file_size or self.crc != self.info.CRC:
            raise DamagedDocument(f"{self.package.damaged}: {self.info.filename} fails its size or checksum")


def _inflate(chunks: Iterator[bytes], meter: _Meter) -> Iterator[bytes]:
    inflater = zlib.decompressobj(-zlib.MAX_WBITS)
    fed = 0
    for chunk in chunks:
        fed += len(chunk)
        data = chunk
        while data and not inflater.eof:
            out = inflater.decompress(data, _OUT_CHUNK)
            data = inflater.unconsumed_tail
            yield meter.count(out, fed - len(data) - len(inflater.unused_data))
        if inflater.eof:
            return
    while not inflater.eof:  # all input given; zlib may still hold output
        out = inflater.decompress(b"", _OUT_CHUNK)
        if not out:
            raise DamagedDocument(f"{meter.package.damaged}: {meter.info.filename} is cut off")
        yield meter.count(out, fed)


def read_member(
    raw: BinaryIO, info: zipfile.ZipInfo, limits: ZipLimits = DOCX_LIMITS, package: Package = WORD
) -> Iterator[bytes]:
    """A member's decompressed bytes in chunks, read from the container's raw bytes `raw`."""
    if info.flag_bits & 0x1:
        raise DamagedDocument(f"{package.damaged}: {info.filename} is encrypted inside the ZIP")
    meter = _Meter(info, limits, package)
    chunks = _raw_chunks(raw, info, package)
    if info.compress_type == zipfile.ZIP_STORED:
        consumed = 0
        for chunk in chunks:
            consumed += len(chunk)
            yield meter.count(chunk, consumed)
    elif info.compress_type == zipfile.ZIP_DEFLATED:
        try:
            yield from _inflate(chunks, meter)
        except zlib.error as exc:
            raise DamagedDocument(f"{package.damaged}: {info.filename} does not decompress ({exc})") from exc
    else:
        raise DamagedDocument(
            f"{package.damaged}: {info.filename} uses ZIP compression method {info.compress_type}, "
            f"which {package.kind} files do not use"
        )
    meter.verify()


def checked_copy(data: bytes, limits: ZipLimits = DOCX_LIMITS, package: Package = WORD) -> io.BytesIO:
    """An uncompressed copy of the package `data` whose text parts passed `limits` as they were
    decompressed, and whose other parts are left empty."""
    buffer = io.BytesIO()
    raw = io.BytesIO(data)  # a position of its own: the directory reader moves the other one
    with zipfile.ZipFile(io.BytesIO(data)) as archive:
        members = checked_members(archive, limits, package)
        with zipfile.ZipFile(buffer, "w", zipfile.ZIP_STORED) as copy:
            for info in members:
                with copy.open(info.filename, "w") as target:
                    if is_text_part(info.filename):
                        for chunk in read_member(raw, info, limits, package):
                            target.write(chunk)
    buffer.seek(0)
    return buffer
