"""Hostile inputs of issue 32, built for real: small files that declare huge work (images of
giant declared size or thousands of frames, sheets whose rows never end, ODS repeats, an EPUB
spine that lists one chapter again and again, CSVs with one huge field or a million columns),
and the tall "scrolling screenshot" beside its control. No blobs: each is written here with
zlib, zipfile, Pillow or openpyxl, in bounded memory whatever it declares."""

from __future__ import annotations

import struct
import zipfile
import zlib
from pathlib import Path

LINE = "The quick brown dog jumped over the lazy fox"


def _chunk(kind: bytes, data: bytes) -> bytes:
    return struct.pack(">I", len(data)) + kind + data + struct.pack(">I", zlib.crc32(kind + data))


def streamed_png(path: Path, width: int, height: int, rgba: bool = True) -> Path:
    """A white PNG of any declared size, written row by row (the test's memory stays small)."""
    channels = 4 if rgba else 1
    row = b"\x00" + b"\xff" * (width * channels)
    packer = zlib.compressobj(9)
    with open(path, "wb") as out:
        out.write(b"\x89PNG\r\n\x1a\n")
        out.write(_chunk(b"IHDR", struct.pack(">IIBBBBB", width, height, 8, 6 if rgba else 0, 0, 0, 0)))
        pending = b""
        for _ in range(height):
            pending += packer.compress(row)
            if len(pending) > 1 << 20:
                out.write(_chunk(b"IDAT", pending))
                pending = b""
        out.write(_chunk(b"IDAT", pending + packer.flush()))
        out.write(_chunk(b"IEND", b""))
    return path


def printed_page(width: int = 640, height: int = 480, mode: str = "L"):
    """A page of printed lines, the way a screenshot or a scan shows them."""
    from PIL import Image, ImageDraw, ImageFont

    page = Image.new(mode, (width, height), 255 if mode == "L" else (255, 255, 255))
    draw = ImageDraw.Draw(page)
    font = ImageFont.load_default(size=22)
    for number, top in enumerate(range(20, height - 30, 40)):
        draw.text((20, top), f"{LINE} {number}", fill=0, font=font)
    return page


def stacked_pages(path: Path, copies: int) -> Path:
    """A "scrolling screenshot": a printed 640 x 480 page stacked `copies` times."""
    from PIL import Image

    page = printed_page()
    tall = Image.new("L", (640, 480 * copies), 255)
    for k in range(copies):
        tall.paste(page, (0, 480 * k))
    tall.save(path)
    return path


def lines_per_page() -> int:
    return len(range(20, 480 - 30, 40))


def float_tiff(path: Path) -> Path:
    """A printed page as a 32-bit float TIFF, values 0.0-1.0 (what scientific scanners write)."""
    import numpy as np
    from PIL import Image

    values = np.asarray(printed_page(1240, 600), dtype=np.float32) / 255.0
    Image.fromarray(values, "F").save(path)
    return path


def sixteen_bit_tiff(path: Path) -> Path:
    import numpy as np
    from PIL import Image

    Image.fromarray(np.asarray(printed_page(), dtype=np.uint16) * 257).save(path)
    return path


def thin_pngs(folder: Path) -> list[Path]:
    from PIL import Image

    folder.mkdir(parents=True, exist_ok=True)
    paths = []
    for name, size in (("dot.png", (1, 1)), ("column.png", (1, 60_000)), ("row.png", (60_000, 1))):
        Image.new("L", size, 255).save(folder / name)
        paths.append(folder / name)
    return paths


def lossless_webp(path: Path, side: int = 16_383) -> Path:
    from PIL import Image

    Image.new("L", (side, side), 255).save(path, lossless=True, quality=0, method=0)
    return path


def animated_webp(path: Path, frames: int, side: int) -> Path:
    from PIL import Image

    first = Image.new("RGB", (side, side), (255, 255, 255))
    variants = [Image.new("RGB", (side, side), (255, 255, 254 - k)) for k in range(2)]  # consecutive frames differ
    others = [variants[k % 2] for k in range(frames - 1)]
    first.save(path, save_all=True, append_images=others, lossless=True, quality=0, method=0)
    return path


def many_frame_tiff(path: Path, frames: int, side: int = 64, g4: bool = False) -> Path:
    """A TIFF of `frames` blank frames (bilevel, CCITT G4 when `g4`: ~100 bytes a frame)."""
    from PIL import Image

    mode = "1" if g4 else "L"
    frame = Image.new(mode, (side, side), 1 if g4 else 255)
    options = {"compression": "group4"} if g4 else {"compression": "tiff_deflate"}
    frame.save(path, save_all=True, append_images=[frame] * (frames - 1), **options)
    return path


# ---------------------------------------------------------------- sheets, ODS, EPUB, CSV


def _zip(path: Path, members: dict[str, str | bytes]) -> Path:
    with zipfile.ZipFile(path, "w", zipfile.ZIP_DEFLATED) as archive:
        for name, data in members.items():
            method = zipfile.ZIP_STORED if name == "mimetype" else zipfile.ZIP_DEFLATED
            archive.writestr(name, data, compress_type=method)
    return path


def far_row_xlsx(path: Path, row: int = 1_000_000_000_000) -> Path:
    """A workbook whose one sheet holds a cell in A1 and one at row `row` (openpyxl walks every
    row between them)."""
    import openpyxl

    book = openpyxl.Workbook()
    book.active["A1"] = "Harbour fees"
    book.active["A2"] = "kettle"
    book.save(path)
    with zipfile.ZipFile(path) as archive:
        members = {name: archive.read(name) for name in archive.namelist()}
    sheet = members["xl/worksheets/sheet1.xml"].decode()
    far = f'<row r="{row}"><c r="A{row}" t="inlineStr"><is><t>far away</t></is></c></row>'
    sheet = sheet.replace("</sheetData>", far + "</sheetData>").replace('<dimension ref="A1:A2"/>', "")
    members["xl/worksheets/sheet1.xml"] = sheet.encode()
    return _zip(path, members)


def a_and_xfd_xlsx(path: Path, rows: int) -> Path:
    """A workbook of `rows` rows, each with a cell in column A and one in XFD (the last column);
    the sheet's XML is streamed into the container, so a million rows cost the test no memory."""
    import openpyxl

    template = path.with_suffix(".template.xlsx")
    openpyxl.Workbook().save(template)
    with zipfile.ZipFile(template) as source, zipfile.ZipFile(path, "w", zipfile.ZIP_DEFLATED) as archive:
        for name in source.namelist():
            if name != "xl/worksheets/sheet1.xml":
                archive.writestr(name, source.read(name))
        with archive.open("xl/worksheets/sheet1.xml", "w", force_zip64=True) as sheet:
            sheet.write(
                b'<?xml version="1.0" encoding="UTF-8"?><worksheet '
                b'xmlns="http://schemas.openxmlformats.org/spreadsheetml/2006/main"><sheetData>'
            )
            for start in range(1, rows + 1, 10_000):
                sheet.write(
                    "".join(
                        f'<row r="{n}"><c r="A{n}" t="inlineStr"><is><t>item {n}</t></is></c>'
                        f'<c r="XFD{n}"><v>{n}</v></c></row>'
                        for n in range(start, min(rows, start + 9_999) + 1)
                    ).encode()
                )
            sheet.write(b"</sheetData></worksheet>")
    template.unlink()
    return path


_ODS_NS = (
    'xmlns:office="urn:oasis:names:tc:opendocument:xmlns:office:1.0" '
    'xmlns:table="urn:oasis:names:tc:opendocument:xmlns:table:1.0" '
    'xmlns:text="urn:oasis:names:tc:opendocument:xmlns:text:1.0"'
)


def repeated_ods(path: Path, rows: int = 1, repeats: int = 1_000_000_000) -> Path:
    """An ODS whose `rows` rows each repeat `repeats` times, each of a cell repeated `repeats` times."""
    row = (
        f'<table:table-row table:number-rows-repeated="{repeats}">'
        f'<table:table-cell table:number-columns-repeated="{repeats}"><text:p>boom</text:p></table:table-cell>'
        "</table:table-row>"
    )
    return _ods(path, row * rows)


def header_ods(path: Path, header_chars: int, repeats: int = 1_000_000_000) -> Path:
    """An ODS of another shape: a header row of 1,024 cells of `header_chars` letters, then one
    data row of 1,024 one-letter cells repeated `repeats` times (~500 bytes)."""
    header = (
        '<table:table-row><table:table-cell table:number-columns-repeated="1024">'
        f"<text:p>{'H' * header_chars}</text:p></table:table-cell></table:table-row>"
    )
    data = (
        f'<table:table-row table:number-rows-repeated="{repeats}">'
        '<table:table-cell table:number-columns-repeated="1024"><text:p>x</text:p></table:table-cell>'
        "</table:table-row>"
    )
    return _ods(path, header + data)


def _ods(path: Path, rows_xml: str) -> Path:
    """An ODS of one sheet holding `rows_xml`."""
    content = (
        f'<?xml version="1.0" encoding="UTF-8"?><office:document-content {_ODS_NS}><office:body>'
        f'<office:spreadsheet><table:table table:name="S">{rows_xml}</table:table></office:spreadsheet>'
        "</office:body></office:document-content>"
    )
    return _zip(path, {"mimetype": "application/vnd.oasis.opendocument.spreadsheet", "content.xml": content})


def spine_epub(path: Path, repeats: int = 10_000) -> Path:
    """An EPUB whose spine lists its one chapter `repeats` times."""
    chapter = (
        '<?xml version="1.0" encoding="utf-8"?><html xmlns="http://www.w3.org/1999/xhtml"><head><title>c</title>'
        "</head><body><p>" + ("The lighthouse keeper logs every passing ship. " * 200) + "</p></body></html>"
    )
    opf = (
        '<?xml version="1.0"?><package xmlns="http://www.idpf.org/2007/opf" version="3.0">'
        '<metadata xmlns:dc="http://purl.org/dc/elements/1.1/"><dc:title>Again</dc:title></metadata>'
        '<manifest><item id="c" href="c.xhtml" media-type="application/xhtml+xml"/></manifest>'
        "<spine>" + '<itemref idref="c"/>' * repeats + "</spine></package>"
    )
    container = (
        '<?xml version="1.0"?><container xmlns="urn:oasis:names:tc:opendocument:xmlns:container" version="1.0">'
        '<rootfiles><rootfile full-path="book.opf" media-type="application/oebps-package+xml"/></rootfiles>'
        "</container>"
    )
    return _zip(
        path,
        {"mimetype": "application/epub+zip", "META-INF/container.xml": container, "book.opf": opf, "c.xhtml": chapter},
    )


def huge_field_csv(path: Path, field_mb: int) -> Path:
    """A CSV table whose second row holds one field of `field_mb` MB."""
    with open(path, "w", encoding="ascii") as out:
        out.write("name,note\nkettle,boils\n")
        out.write('blob,"')
        piece = "x" * (1 << 20)
        for _ in range(field_mb):
            out.write(piece)
        out.write('"\ntides,rise\n')
    return path


def wide_csv(path: Path, rows: int, columns: int) -> Path:
    with open(path, "w", encoding="ascii") as out:
        for number in range(rows):
            out.write(",".join(f"v{number}" for _ in range(columns)) + "\n")
    return path
