"""Decide a file's format from its bytes; the extension only has to agree.

What each format looks like (magic bytes, a ZIP's mimetype or main part, markup) and which
extensions claim it is written in the format table (ingest/readers/registry.py); this module
asks the table, and words the refusals: old binary Office files, names that lie, types DocDesk
does not read.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from pathlib import Path

from ingest.errors import EmptyDocument, EncryptedDocument, UnsupportedFormat
from ingest.readers.registry import (
    FALLBACK,
    Content,
    Format,
    format_for_extension,
    formats,
    replaced_extensions,
    sniffs,
    supported_extensions,
    supported_formats_text,
)

_OLE = b"\xd0\xcf\x11\xe0\xa1\xb1\x1a\xe1"  # the compound file of .doc/.xls/.ppt and of encrypted OOXML
# What the bytes may be besides a format of the table.
_NOT_A_FORMAT = {"zip": "a ZIP archive", "ole": "a binary Office file"}


class _Claimed(Mapping[str, str]):
    """extension -> format name, as the table says now (a format registered later included)."""

    def __getitem__(self, extension: str) -> str:
        fmt = format_for_extension(extension)
        if fmt is None:
            raise KeyError(extension)
        return fmt.name

    def __iter__(self) -> Iterator[str]:
        return iter(supported_extensions())

    def __len__(self) -> int:
        return len(supported_extensions())


CLAIMED: Mapping[str, str] = _Claimed()  # kept for callers of old; new code calls supported_extensions()


def content_format(data: bytes) -> str:
    """The format the bytes say: a name from the table whose sniff claims them; "zip" for another
    ZIP archive, "ole" for an old binary Office (or encrypted Office) file, else "text"."""
    content = Content(data)
    for fmt in sniffs():
        if fmt.sniff.test(content):
            return fmt.name
    if content.is_zip:
        content.zip  # noqa: B018 - a damaged ZIP is refused as damaged, not as "another archive"
        return "zip"
    if content.head.startswith(_OLE):
        return "ole"
    return FALLBACK


def is_supported_name(path: Path) -> bool:
    """Whether a folder scan should pick this file up."""
    suffix = path.suffix.lower()
    claimed = format_for_extension(suffix) is not None or suffix in replaced_extensions()
    return claimed and not path.name.startswith((".", "~$"))


def _encrypted_office(data: bytes) -> bool:
    """A password-protected .docx/.xlsx/.pptx is an OLE file holding an "EncryptedPackage" stream."""
    return "EncryptedPackage".encode("utf-16-le") in data[: 1 << 20]


def _refuse_ole(suffix: str, data: bytes) -> None:
    if _encrypted_office(data):
        raise EncryptedDocument(
            "the Office file is password-protected: DocDesk cannot open encrypted Office files; "
            "save a copy without a password"
        )
    replaced = replaced_extensions()
    if suffix in replaced:
        raise UnsupportedFormat(
            f"legacy binary Office format ({suffix}): save it as {replaced[suffix]} (File > Save As) and add that file"
        )
    named = f" (named {suffix})" if suffix else ""
    modern = "/".join(dict.fromkeys(replaced.values()))
    raise UnsupportedFormat(f"legacy binary Office format{named}: save it as {modern} and add that file")


def _in_zip(fmt: Format | None) -> bool:
    return fmt is not None and fmt.sniff is not None and fmt.sniff.in_zip


def _describe(found: str) -> str:
    return _NOT_A_FORMAT.get(found) or next(fmt.noun for fmt in formats() if fmt.name == found)


def _mismatch(suffix: str, claimed: Format, found: str) -> UnsupportedFormat:
    named = f"named {suffix} but not {claimed.noun}"
    found_format = next((fmt for fmt in formats() if fmt.name == found), None)
    if _in_zip(claimed) and found == "zip":
        return UnsupportedFormat(f"{named}: a ZIP archive without {claimed.sniff.missing}")
    if _in_zip(claimed) and not _in_zip(found_format):
        return UnsupportedFormat(f"{named} (not a ZIP container)")
    if found == FALLBACK and claimed.sniff is not None and claimed.sniff.missing:
        return UnsupportedFormat(f"{named} (no {claimed.sniff.missing})")
    return UnsupportedFormat(f"named {suffix} but the content is {_describe(found)}, not {claimed.noun}")


def _unclaimed(suffix: str, found: str) -> str:
    """The format of a file whose name claims none: what its content is, where that is clear."""
    if found == "zip":
        inside = ", ".join(dict.fromkeys(fmt.group for fmt in formats() if _in_zip(fmt)))
        raise UnsupportedFormat(f"a ZIP archive but not a document DocDesk reads (none of {inside})")
    if suffix and found in (FALLBACK, "ole"):
        raise UnsupportedFormat(f"unsupported file type {suffix}: DocDesk reads {supported_formats_text()}")
    return found


def detect_format(path: Path, data: bytes) -> str:
    """Return the format (a name in the table) to read the file `path` whose bytes are `data`
    with, or raise with a reason a user understands."""
    if not data:
        raise EmptyDocument("empty file (0 bytes)")
    suffix = path.suffix.lower()
    found = content_format(data)
    claimed = format_for_extension(suffix)
    if found == "ole" and (not suffix or suffix in replaced_extensions() or _in_zip(claimed)):
        _refuse_ole(suffix, data)
    if claimed is None:
        return _unclaimed(suffix, found)
    if found == claimed.name or found in claimed.holds:
        return claimed.name
    raise _mismatch(suffix, claimed, found)
