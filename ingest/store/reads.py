"""The library's read side for search and answers: passages, blocks, pages, keywords, embeddings.

A mixin of `Library` (ingest/store/library.py), which owns the connection and its lock."""

from __future__ import annotations

import json
from collections.abc import Iterable, Iterator

from ingest.keywords import fts_match_expression
from ingest.records import Block, Page, PageOcr
from ingest.store.rows import PASSAGE_SELECT, PassageRow, passage_row


class PassageReads:
    """Needs `conn`, `_lock` and the `_vocab_ready`/`_passage_total*` fields of Library."""

    # -- passages ---------------------------------------------------------------
    def passages(self, ids: Iterable[int]) -> dict[int, PassageRow]:
        ids = list(ids)
        if not ids:
            return {}
        marks = ",".join("?" * len(ids))
        rows = self.conn.execute(PASSAGE_SELECT + f"WHERE p.id IN ({marks})", ids)
        return {r[0]: passage_row(r) for r in rows}

    def block_passages(self, block_id: int, ordinals: tuple[int, int] | None = None) -> list[PassageRow]:
        """The passages of one block in reading order (those with ordinals in the given range, if
        one is given): the neighbours that widen a cited passage."""
        sql, params = PASSAGE_SELECT + "WHERE p.block_id = ?", [block_id]
        if ordinals is not None:
            sql += " AND p.ordinal BETWEEN ? AND ?"
            params += list(ordinals)
        rows = self.conn.execute(sql + " ORDER BY p.ordinal", params)
        return [passage_row(r) for r in rows]

    def page_passages(self, doc_ids: list[str], page: int) -> list[PassageRow]:
        """Passages that touch a page of the given documents ("and on page 5?")."""
        if not doc_ids:
            return []
        marks = ",".join("?" * len(doc_ids))
        rows = self.conn.execute(
            PASSAGE_SELECT + f"WHERE p.doc_id IN ({marks}) AND p.page <= ? AND p.page_end >= ? "
            "ORDER BY p.doc_id, p.ordinal",
            [*doc_ids, page, page],
        )
        return [passage_row(r) for r in rows]

    def page_starts(self, doc_id: str) -> list[tuple[int, int]]:
        """(page number, offset in the document text) in order."""
        return [
            (r[0], r[1])
            for r in self.conn.execute("SELECT number, start FROM pages WHERE doc_id = ? ORDER BY number", (doc_id,))
        ]

    def blocks(self, doc_id: str) -> list[tuple[int, Block]]:
        """(block id, block) in reading order."""
        rows = self.conn.execute(
            "SELECT id, ordinal, start, end, page, page_end, tokens, text FROM blocks WHERE doc_id = ? ORDER BY ordinal",
            (doc_id,),
        )
        return [(r[0], Block(*r[1:])) for r in rows]

    def document_blocks(self, doc_ids: list[str]) -> list[tuple]:
        """Every block of the given documents, in reading order: (id, doc_id, start, end, page,
        page_end, tokens, text) — the documents whole, for a question that fits them in."""
        if not doc_ids:
            return []
        marks = ",".join("?" * len(doc_ids))
        rows = self.conn.execute(
            f"SELECT id, doc_id, start, end, page, page_end, tokens, text FROM blocks WHERE doc_id IN ({marks}) "
            "ORDER BY doc_id, ordinal",
            list(doc_ids),
        )
        order = {doc_id: i for i, doc_id in enumerate(doc_ids)}
        return sorted((tuple(r) for r in rows), key=lambda r: order.get(r[1], 0))

    def document_languages(self, doc_ids: list[str] | None = None) -> set[str]:
        """The languages of the indexed documents (of `doc_ids` only, when given)."""
        sql, params = "SELECT DISTINCT language FROM documents WHERE status = 'indexed'", []
        if doc_ids:
            sql += f" AND id IN ({','.join('?' * len(doc_ids))})"
            params = list(doc_ids)
        return {row[0] for row in self.conn.execute(sql, params) if row[0]}

    def document_tokens(self, doc_ids: list[str]) -> int:
        """The documents' text in tokens, as counted when they were cut into blocks."""
        if not doc_ids:
            return 0
        marks = ",".join("?" * len(doc_ids))
        row = self.conn.execute(f"SELECT COALESCE(SUM(tokens), 0) FROM blocks WHERE doc_id IN ({marks})", list(doc_ids))
        return int(row.fetchone()[0])

    def block_row(self, block_id: int) -> tuple[int, str]:
        """(start offset, text) of a block."""
        row = self.conn.execute("SELECT start, text FROM blocks WHERE id = ?", (block_id,)).fetchone()
        return (row[0], row[1]) if row else (0, "")

    def keyword_document_counts(self, tokens: list[str]) -> tuple[int, dict[str, int]]:
        """(passage count, {token: passages containing it}) from the FTS5 index, for IDF weights."""
        counts = self.keyword_passage_counts(tokens)
        changes = self.passage_changes()
        if self._passage_total is None or self._passage_total_at != changes:
            self._passage_total = self.passage_count()  # a scan of every row: kept until passages change
            self._passage_total_at = changes
        return self._passage_total, counts

    def keyword_passage_counts(self, tokens: list[str]) -> dict[str, int]:
        """{token: passages containing it}, read from the FTS5 index's own term statistics."""
        with self._lock:
            if not self._vocab_ready:
                # fts5vocab reads the index's own term statistics; a temp table costs nothing on disk.
                self.conn.execute(
                    "CREATE VIRTUAL TABLE IF NOT EXISTS temp.fts_vocab USING fts5vocab(main, passages_fts, row)"
                )
                self._vocab_ready = True
        counts = {t: 0 for t in tokens}
        if tokens:
            marks = ",".join("?" * len(tokens))
            for term, docs in self.conn.execute(
                f"SELECT term, doc FROM temp.fts_vocab WHERE term IN ({marks})", tokens
            ):
                counts[term] = docs
        return counts

    def passage_changes(self) -> int:
        """A number that moves whenever passages are added or removed or a document's status or
        embedding model changes (kept by triggers: schema.py). One row: no scan of the passages."""
        return self.conn.execute("SELECT n FROM passage_changes").fetchone()[0]

    def passage_count(self, embed_model: str | None = None) -> int:
        if embed_model is None:
            return self.conn.execute("SELECT count(*) FROM passages").fetchone()[0]
        return self.conn.execute(
            "SELECT count(*) FROM passages p JOIN documents d ON d.id = p.doc_id WHERE d.embed_model = ?",
            (embed_model,),
        ).fetchone()[0]

    def passage_ids(self, embed_model: str) -> list[int]:
        rows = self.conn.execute(
            "SELECT p.id FROM passages p JOIN documents d ON d.id = p.doc_id WHERE d.embed_model = ? "
            "AND d.status = 'indexed' ORDER BY p.id",
            (embed_model,),
        )
        return [r[0] for r in rows]

    def embeddings(self, ids: list[int], batch: int = 5000) -> Iterator[tuple[list[int], list[bytes]]]:
        for i in range(0, len(ids), batch):
            chunk = ids[i : i + batch]
            marks = ",".join("?" * len(chunk))
            rows = self.conn.execute(
                f"SELECT id, embedding FROM passages WHERE id IN ({marks}) ORDER BY id", chunk
            ).fetchall()
            yield [r[0] for r in rows], [r[1] for r in rows]

    def doc_embeddings(self, doc_ids: list[str], embed_model: str) -> tuple[list[int], list[bytes]]:
        marks = ",".join("?" * len(doc_ids))
        rows = self.conn.execute(
            f"SELECT p.id, p.embedding FROM passages p JOIN documents d ON d.id = p.doc_id "
            f"WHERE p.doc_id IN ({marks}) AND d.embed_model = ?",
            [*doc_ids, embed_model],
        ).fetchall()
        return [r[0] for r in rows], [r[1] for r in rows]

    def keyword_search(self, tokens: list[str], k: int, doc_ids: list[str] | None = None) -> list[tuple[int, float]]:
        """(passage id, bm25) best first. FTS5's bm25() is lower-is-better; it is negated here."""
        if not tokens:
            return []
        expression = fts_match_expression(tokens)
        if doc_ids:
            marks = ",".join("?" * len(doc_ids))
            sql = (
                "SELECT f.rowid, bm25(passages_fts) AS score FROM passages_fts f JOIN passages p ON p.id = f.rowid "
                f"WHERE passages_fts MATCH ? AND p.doc_id IN ({marks}) ORDER BY score LIMIT ?"
            )
            params = [expression, *doc_ids, k]
        else:
            sql = "SELECT rowid, bm25(passages_fts) AS score FROM passages_fts WHERE passages_fts MATCH ? ORDER BY score LIMIT ?"
            params = [expression, k]
        return [(r[0], -r[1]) for r in self.conn.execute(sql, params)]

    def ocr_page(self, doc_id: str, number: int) -> PageOcr | None:
        """How the page's text was recognised, if it was by OCR (its lines' boxes, for the viewer)."""
        row = self.conn.execute(
            "SELECT confidence, rotated, skew, lines FROM ocr_pages WHERE doc_id = ? AND number = ?", (doc_id, number)
        ).fetchone()
        if row is None:
            return None
        return PageOcr(row[0], tuple(tuple(line) for line in json.loads(row[3])), row[1], row[2])

    def pages(self, doc_id: str) -> list[Page]:
        return [
            Page(r[0], r[1])
            for r in self.conn.execute("SELECT number, text FROM pages WHERE doc_id = ? ORDER BY number", (doc_id,))
        ]
