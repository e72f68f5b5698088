"""EPUB 2 and 3: the spine's XHTML documents in reading order, through the HTML reader.

Pages follow the book's own page numbers where it has a page list (EPUB 3 nav `page-list`,
EPUB 2 NCX `pageList`): a marker is put where each page starts, the HTML reader extracts the
text, and the text is cut at the markers. Otherwise pages are synthetic, and each chapter
starts a page with its title.
"""

from __future__ import annotations

import posixpath
import re
from dataclasses import dataclass, field
from pathlib import Path
from urllib.parse import unquote

from lxml import etree

from ingest.errors import DamagedDocument, EmptyDocument, EncryptedDocument, IngestError
from ingest.normalize import normalize_text
from ingest.readers.budget import text_budget
from ingest.readers.html import html_to_text
from ingest.readers.registry import ReadRequest, register_reader
from ingest.readers.text import SYNTHETIC_PAGE_CHARS, decode, paginate
from ingest.readers.zip_package import ZipPackage
from ingest.readers.zipguard import EPUB
from ingest.records import Page, ReadResult

_OPF = "{http://www.idpf.org/2007/opf}"
_DC = "{http://purl.org/dc/elements/1.1/}"
_CONTAINER = "{urn:oasis:names:tc:opendocument:xmlns:container}"
_NCX = "{http://www.daisy.org/z3986/2005/ncx/}"
_XHTML = "{http://www.w3.org/1999/xhtml}"
_EPUB_TYPE = "{http://www.idpf.org/2007/ops}type"
_ENC = "{http://www.w3.org/2001/04/xmlenc#}"
_HTML_TYPES = {"application/xhtml+xml", "text/html"}
# Where a page starts in the extracted text; private-use characters never occur in books' text.
_MARK = "\ue000{}\ue001"
_MARKS = re.compile("\ue000(\\d+)\ue001")
_SHORT_PAGE = SYNTHETIC_PAGE_CHARS // 3  # a chapter this short (a cover, a title page) shares a page


@dataclass
class _Book:
    title: str
    documents: list[str]  # content documents in reading order: linear ones, then non-linear
    budget: int = 0  # characters the book may give (budget.py): reading stops past it
    toc_titles: dict[str, str] = field(default_factory=dict)  # document -> its first table-of-contents entry
    page_targets: list[tuple[str, str, str]] = field(default_factory=list)  # (document, fragment, label)
    warnings: list[str] = field(default_factory=list)


@register_reader("epub")
def open_epub(request: ReadRequest) -> ReadResult:
    return read_epub(request.path, request.data)


def read_epub(path: Path, data: bytes) -> ReadResult:
    try:
        package = ZipPackage(data, EPUB)
        book = _open_book(package)
        book.budget = text_budget(len(data))
        result = _book_pages(package, book) if book.page_targets else None
        return result or _synthetic_pages(package, book)
    except IngestError:
        raise
    except Exception as exc:  # a structure no reader expects (lxml, zipfile, missing attributes ...)
        raise DamagedDocument(f"damaged EPUB: {type(exc).__name__}: {exc}") from exc


def _resolve(base: str, href: str) -> tuple[str, str]:
    """(member name, fragment) of `href` written in the member `base`."""
    target, _, fragment = href.partition("#")
    if not target:
        return base, unquote(fragment)
    return posixpath.normpath(posixpath.join(posixpath.dirname(base), unquote(target))), unquote(fragment)


def _open_book(package: ZipPackage) -> _Book:
    if not package.has("META-INF/container.xml"):
        raise DamagedDocument("damaged EPUB: META-INF/container.xml is missing (not an EPUB?)")
    rootfile = package.xml("META-INF/container.xml").find(f".//{_CONTAINER}rootfile")
    opf_name = rootfile.get("full-path", "") if rootfile is not None else ""
    if not package.has(opf_name):
        raise DamagedDocument(f"damaged EPUB: its package document {opf_name or '(not named)'} is missing")
    opf = package.xml(opf_name)
    manifest = {
        item.get("id"): (
            _resolve(opf_name, item.get("href", ""))[0],
            item.get("media-type", ""),
            item.get("properties", ""),
        )
        for item in opf.iter(f"{_OPF}item")
    }
    spine = opf.find(f"{_OPF}spine")
    if spine is None:
        raise DamagedDocument("damaged EPUB: its package document has no spine (no reading order)")
    refs = [(ref.get("idref"), ref.get("linear", "yes") != "no") for ref in spine.iter(f"{_OPF}itemref")]
    # Non-linear items (notes, answers, pop-ups) are read after the main text: searchable, and
    # the book's reading order stays unbroken.
    ordered = [idref for idref, linear in refs if linear] + [idref for idref, linear in refs if not linear]
    named = [manifest[i][0] for i in ordered if i in manifest and manifest[i][1] in _HTML_TYPES]
    documents = list(dict.fromkeys(named))  # each content document once, where it first comes
    if not documents:
        raise EmptyDocument("the EPUB's reading order (spine) names no XHTML documents")
    _refuse_drm(package, set(documents))
    title = " ".join((opf.findtext(f".//{_DC}title") or "").split())
    book = _Book(title, documents)
    if len(named) > len(documents):  # the spine may name an item once (EPUB 3, 3.4.11): a repeat adds no text
        book.warnings.append(
            f"the reading order names {len(named):,} documents, {len(named) - len(documents):,} of them "
            f"again: each is read once ({len(documents):,})"
        )
    nav = next((name for name, _, props in manifest.values() if "nav" in props.split()), None)
    ncx = manifest.get(spine.get("toc"), ("", "", ""))[0] or next(
        (name for name, kind, _ in manifest.values() if kind == "application/x-dtbncx+xml"), None
    )
    if nav and package.has(nav):
        _read_nav(package, nav, book)
    if ncx and package.has(ncx) and not (book.page_targets and book.toc_titles):
        _read_ncx(package, ncx, book)
    return book


def _refuse_drm(package: ZipPackage, documents: set[str]) -> None:
    """Font obfuscation is harmless; encrypted content documents mean DRM."""
    if not package.has("META-INF/encryption.xml"):
        return
    for reference in package.xml("META-INF/encryption.xml").iter(f"{_ENC}CipherReference"):
        # URIs are relative to the container's root, not to META-INF
        if posixpath.normpath(unquote(reference.get("URI", ""))) in documents:
            raise EncryptedDocument("encrypted (DRM) EPUB: DocDesk cannot read it")


def _label(element) -> str:
    return " ".join("".join(element.itertext()).split())


def _read_nav(package: ZipPackage, nav: str, book: _Book) -> None:
    for element in package.xml(nav).iter(f"{_XHTML}nav"):
        kinds = element.get(_EPUB_TYPE, "").split()
        for link in element.iter(f"{_XHTML}a"):
            if not link.get("href"):
                continue
            document, fragment = _resolve(nav, link.get("href"))
            if "page-list" in kinds:
                book.page_targets.append((document, fragment, _label(link)))
            elif "toc" in kinds:
                book.toc_titles.setdefault(document, _label(link))


def _read_ncx(package: ZipPackage, ncx: str, book: _Book) -> None:
    tree = package.xml(ncx)
    for point in tree.iter(f"{_NCX}navPoint"):
        content = point.find(f"{_NCX}content")
        if content is not None and content.get("src"):
            label = point.find(f"{_NCX}navLabel")
            book.toc_titles.setdefault(_resolve(ncx, content.get("src"))[0], _label(label) if label is not None else "")
    if book.page_targets:
        return
    for target in tree.iter(f"{_NCX}pageTarget"):
        content = target.find(f"{_NCX}content")
        if content is not None and content.get("src"):
            label = target.find(f"{_NCX}navLabel")
            text = _label(label) if label is not None else target.get("value", "")
            book.page_targets.append((*_resolve(ncx, content.get("src")), text))


def _drop(element) -> None:
    """Remove `element` but keep the text that follows it."""
    parent, previous = element.getparent(), element.getprevious()
    if element.tail:
        if previous is not None:
            previous.tail = (previous.tail or "") + element.tail
        else:
            parent.text = (parent.text or "") + element.tail
    parent.remove(element)


def _mark_before(element, mark: str) -> None:
    """Put `mark` just before `element`: before, not inside, so it survives where the HTML
    reader skips the element's content (an <svg> page anchor)."""
    parent, previous = element.getparent(), element.getprevious()
    if parent is None:
        element.text = mark + (element.text or "")
    elif previous is not None:
        previous.tail = (previous.tail or "") + mark
    else:
        parent.text = (parent.text or "") + mark


def _document_text(package: ZipPackage, name: str, anchors: dict[str, int], book: _Book) -> str:
    """The visible text of one content document, with a page marker where each anchor starts.

    `anchors` maps the document's page-start ids to page indexes ("" for its very start)."""
    raw = package.read(name)
    try:
        root = etree.fromstring(raw, package.parser())
    except etree.XMLSyntaxError:
        # Books are sometimes sloppy HTML named XHTML; the HTML reader copes, page anchors are lost.
        if anchors:
            book.warnings.append(f"{name} is not well-formed XHTML: read as HTML, its page breaks are lost")
        return html_to_text(decode(raw).text)[0]
    for element in [e for e in root.iter() if isinstance(e.tag, str) and e.get("hidden") is not None]:
        if element.getparent() is not None:
            _drop(element)  # not shown by readers: hidden page lists, landmarks
    prefix = _MARK.format(anchors[""]) if "" in anchors else ""
    for element in root.iter():
        if isinstance(element.tag, str) and element.get("id") in anchors:
            _mark_before(element, _MARK.format(anchors[element.get("id")]))
    return prefix + html_to_text(etree.tostring(root, encoding="unicode"))[0]


def _within(package: ZipPackage, book: _Book, name: str) -> bool:
    if package.has(name):
        return True
    book.warnings.append(f"{name} is named in the reading order but missing from the EPUB")
    return False


def _book_pages(package: ZipPackage, book: _Book) -> ReadResult | None:
    """Pages cut at the book's page starts; None when none of them can be found."""
    labels = [label for _, _, label in book.page_targets]
    anchors: dict[str, dict[str, int]] = {}
    for index, (document, fragment, _) in enumerate(book.page_targets):
        anchors.setdefault(document, {}).setdefault(fragment, index)
    order: list[int] = []  # page indexes in the order their starts occur in the text
    texts: dict[int, list[str]] = {-1: []}  # -1: what comes before the first page start
    current, produced = -1, 0
    for name in (n for n in book.documents if _within(package, book, n)):
        pieces = _MARKS.split(_document_text(package, name, anchors.get(name, {}), book))
        texts[current].append(pieces[0])
        for index, text in zip(pieces[1::2], pieces[2::2], strict=True):
            current = int(index)
            if current not in texts:
                order.append(current)
                texts[current] = []
            texts[current].append(text)
        produced += sum(map(len, pieces))
        if produced > book.budget:
            break  # past the book's budget: the reader process cuts it there and says so
    if not order:
        book.warnings.append("the book's page list points to nowhere DocDesk can find: its pages are synthetic")
        return None
    if len(order) < len(labels):
        book.warnings.append(f"{len(labels) - len(order)} of the book's {len(labels)} listed pages were not found")
    texts[order[0]] = texts.pop(-1) + texts[order[0]]  # front matter without a page number joins the first page
    page_texts = [normalize_text("\n\n".join(texts[i])) for i in order]
    if not any(page_texts):
        raise EmptyDocument("no text in the EPUB")
    pages = _numbered([labels[i] for i in order], page_texts)
    return ReadResult("epub", pages, title=book.title, synthetic_pages=False, warnings=book.warnings)


def _numbered(labels: list[str], texts: list[str]) -> list[Page]:
    """Pages numbered as printed where the labels are increasing whole numbers. Otherwise (roman
    front matter, repeated numbers) 1..n, each page's text starting with its printed label,
    because a page number is an int and must grow with the text."""
    numbers = [int(label) if label.isdigit() else 0 for label in labels]
    if all(n > 0 for n in numbers) and all(a < b for a, b in zip(numbers, numbers[1:], strict=False)):
        return [Page(number, text) for number, text in zip(numbers, texts, strict=True)]
    return [
        Page(n, f"[p. {label}]\n\n{text}".strip()) for n, (label, text) in enumerate(zip(labels, texts, strict=True), 1)
    ]


def _synthetic_pages(package: ZipPackage, book: _Book) -> ReadResult:
    pages: list[str] = []
    produced = 0
    for name in (n for n in book.documents if _within(package, book, n)):
        text = normalize_text(_document_text(package, name, {}, book))
        if not text:
            continue
        title = book.toc_titles.get(name, "")
        if title and title.casefold() not in text.casefold():
            text = f"{title}\n\n{text}"  # the chapter's title is an image, or only in the table of contents
        chapter = [page.text for page in paginate(text)]
        if pages and len(pages[-1]) < _SHORT_PAGE and len(pages[-1]) + len(chapter[0]) <= SYNTHETIC_PAGE_CHARS:
            pages[-1] = f"{pages[-1]}\n\n{chapter.pop(0)}"
        pages += chapter
        produced += len(text)
        if produced > book.budget:
            break
    if not pages:
        raise EmptyDocument("no text in the EPUB")
    numbered = [Page(n, text) for n, text in enumerate(pages, 1)]
    return ReadResult("epub", numbered, title=book.title, synthetic_pages=True, warnings=book.warnings)
