"""Chunker throughput on big inputs (numbers go in the closing note, never in a timed test).

Each size runs in a fresh process, so its peak RSS is its own; the text streams in through
`ChunkStream.add_pages` four pages at a time, as the reader process sends them.

    python tests/bench/bench_chunking.py [--sizes 10 40 200] [--kind text|line|blob] [--timeout 600]

kind: `text` repeats the text of the test corpus (the 117-page German book, the other PDFs,
the Chinese, French and English text files) as pages of about 3,000 characters; `line` is the
same text as one page with every newline turned into a space (a PDF holding one huge line);
`blob` is one page of base64 without any whitespace, `hex` one of hexadecimal digits (not even
punctuation: the embedder's tokenizer sees one word). `--code DIR` measures the `ingest/` of
another folder (e.g. `git archive COMMIT ingest | tar -x -C DIR` for an older chunker).
"""

from __future__ import annotations

import argparse
import base64
import json
import logging
import os
import random
import resource
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
CORPUS = ROOT / "tests" / "data" / "corpus"
PAGE_CHARS = 3000
PAGES_PER_MESSAGE = 4  # ingest/reader_process.py


def corpus_text(corpus: Path) -> str:
    from ingest.readers import read_document

    logging.getLogger("pypdf").setLevel(logging.ERROR)  # the corpus's damaged files say so at length

    parts = []
    for path in sorted((corpus / "pdf-samples").rglob("*.pdf")) + sorted((corpus / "encodings").glob("*.txt")):
        try:
            parts += [page.text for page in read_document(path).pages if page.text.strip()]
        except Exception:  # the corpus holds scans, encrypted and damaged files on purpose
            continue
    if not parts:
        raise SystemExit(f"no text found in the corpus at {corpus}: give --corpus")
    return "\n\n".join(parts)


def pages_of(source: str, kind: str, chars: int):
    """Pages totalling about `chars` characters, made on the fly (the stream keeps its own copies)."""
    from ingest.records import Page

    if kind in ("blob", "hex"):
        data = random.Random(13).randbytes(chars)
        text = base64.b64encode(data[: chars * 3 // 4]).decode() if kind == "blob" else data[: chars // 2].hex()
        yield Page(1, text[:chars])
        return
    if kind == "line":
        flat = source.replace("\n", " ")
        yield Page(1, (flat * (chars // len(flat) + 1))[:chars])
        return
    made, number, position = 0, 0, 0
    while made < chars:
        text = source[position : position + PAGE_CHARS]
        position = (position + PAGE_CHARS) % len(source)
        number += 1
        made += len(text)
        yield Page(number, text)


def run_one(source_file: str, kind: str, megabytes: float) -> dict:
    from ingest.chunking import Chunker
    from ingest.embedders.sentence_transformer import SentenceTransformerEmbedder

    source = Path(source_file).read_text(encoding="utf-8")
    embedder = SentenceTransformerEmbedder()  # its tokenizer only: no torch
    chunker = Chunker(embedder.token_offsets, embedder.max_tokens)
    chunker.count_block_tokens(["warm up tiktoken"])
    embedder.token_offsets("warm up the tokenizer")
    stream = chunker.stream()
    chars = int(megabytes * 1_000_000)
    rss_before = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    started, cpu_started = time.perf_counter(), time.process_time()
    batch = []
    for page in pages_of(source, kind, chars):
        batch.append(page)
        if len(batch) == PAGES_PER_MESSAGE:
            stream.add_pages(batch)
            batch = []
    stream.add_pages(batch)
    stream.finish()
    seconds, cpu = time.perf_counter() - started, time.process_time() - cpu_started
    passages = stream.chunks.passages
    return {
        "mb": megabytes,
        "seconds": seconds,
        "cpu": cpu,
        "rss_mb": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024,
        "rss_before_mb": rss_before / 1024,
        "blocks": len(stream.chunks.blocks),
        "passages": len(passages),
        "longest_passage": max((len(p.text) for p in passages), default=0),
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sizes", type=float, nargs="+", default=[10, 40])
    parser.add_argument("--kind", choices=("text", "line", "blob", "hex"), default="text")
    parser.add_argument("--timeout", type=float, default=600)
    parser.add_argument("--code", default=str(ROOT), help="the folder whose ingest/ is measured")
    parser.add_argument("--corpus", type=Path, default=CORPUS, help="the test corpus (tests/data/corpus)")
    parser.add_argument("--one", nargs=3, help=argparse.SUPPRESS)  # source file, kind, MB: the child
    args = parser.parse_args()
    sys.path.insert(0, args.code)
    if args.one:
        print(json.dumps(run_one(args.one[0], args.one[1], float(args.one[2]))))
        return
    import ingest.chunking

    print(f"chunker: {ingest.chunking.__file__}; kind: {args.kind}", flush=True)
    with tempfile.TemporaryDirectory() as tmp:
        source_file = Path(tmp) / "corpus.txt"
        source_file.write_text(corpus_text(args.corpus), encoding="utf-8")
        print(
            f"{'MB':>6} {'seconds':>9} {'CPU s':>8} {'MB/s':>7} {'peak RSS MB':>12} {'blocks':>7} {'passages':>9} {'longest':>8}"
        )
        for size in args.sizes:
            command = [sys.executable, __file__, "--code", args.code, "--one", str(source_file), args.kind, str(size)]
            try:
                done = subprocess.run(command, capture_output=True, text=True, timeout=args.timeout, env=os.environ)
            except subprocess.TimeoutExpired:
                print(f"{size:>6g} {'>' + format(args.timeout, 'g'):>9} {'':>7} (stopped)", flush=True)
                continue
            if done.returncode != 0:
                print(f"{size:>6g} failed: {done.stderr.strip().splitlines()[-1:]}", flush=True)
                continue
            r = json.loads(done.stdout.strip().splitlines()[-1])
            print(
                f"{r['mb']:>6g} {r['seconds']:>9.1f} {r['cpu']:>8.1f} {r['mb'] / r['seconds']:>7.2f} {r['rss_mb']:>12.0f}"
                f" {r['blocks']:>7} {r['passages']:>9} {r['longest_passage']:>8}",
                flush=True,
            )


if __name__ == "__main__":
    main()
