"""BM25 over tables (see :mod:`clarisql.envs.retrieval`)."""

from __future__ import annotations

import importlib.util
import re
import threading
from collections.abc import Mapping
from dataclasses import dataclass

from clarisql.envs.sandbox.database import DatabaseImage
from clarisql.envs.schema import schema_summary

_WORD = re.compile(r"[a-z0-9]+|[\u3400-\u9fff\uf900-\ufaff]+")
_CJK = re.compile(r"[\u3400-\u9fff\uf900-\ufaff]")
SAMPLE_VALUES = 5
NAME_WEIGHT = 3
_LOCK = threading.Lock()
_INDEXES: dict[tuple[str, int], TableIndex] = {}
_COMPACT: dict[tuple[str, str | None, int], str] = {}


class TableSearchUnavailable(RuntimeError):
    """bm25s (the ``retrieval`` extra) is not installed."""


def bm25_available() -> bool:
    return importlib.util.find_spec("bm25s") is not None


def analyze(text: str) -> list[str]:
    """Index terms: lower-cased words (``snake_case`` split) and word bigrams (``harrow_vale``),
    CJK characters and character bigrams."""
    out: list[str] = []
    prev = ""
    for run in _WORD.findall(text.replace("_", " ").lower()):
        if _CJK.match(run):
            out.extend(run)
            out.extend(run[i : i + 2] for i in range(len(run) - 1))
            prev = ""
        else:
            out.append(run)
            if prev:
                out.append(prev + "_" + run)
            prev = run
    return out


def _objects(image: DatabaseImage) -> list[tuple[str, list[tuple[str, str]]]]:
    with image.reading() as conn:
        names = [
            r[0]
            for r in conn.execute(
                "SELECT name FROM sqlite_schema WHERE type IN ('table', 'view') "
                "AND name NOT LIKE 'sqlite_%' ORDER BY type, name"
            ).fetchall()
        ]
        out = []
        for name in names:
            try:
                cols = conn.execute(
                    "SELECT name, type FROM pragma_table_info(?)", (name,)
                ).fetchall()
            except Exception:  # noqa: BLE001 - a view SQLite cannot compile: name only
                cols = []
            out.append((name, [(c, t or "") for c, t in cols]))
        return out


def table_count(image: DatabaseImage) -> int:
    """Tables and views in the database."""
    with image.reading() as conn:
        return int(
            conn.execute(
                "SELECT count(*) FROM sqlite_schema WHERE type IN ('table', 'view') "
                "AND name NOT LIKE 'sqlite_%'"
            ).fetchone()[0]
        )


def _samples(image: DatabaseImage, table: str, cols: list[tuple[str, str]]) -> list[str]:
    vals: list[str] = []
    with image.reading() as conn:
        for c, t in cols:
            if t.upper() not in ("TEXT", "") and "CHAR" not in t.upper():
                continue
            col, tab = _quote(c), _quote(table)
            q = f"SELECT DISTINCT {col} FROM {tab} WHERE {col} IS NOT NULL LIMIT {SAMPLE_VALUES}"
            try:
                vals.extend(str(r[0]) for r in conn.execute(q).fetchall())
            except Exception:  # noqa: BLE001 - unreadable view or column: no samples
                continue
    return vals


def _quote(name: str) -> str:
    return '"' + name.replace('"', '""') + '"'


@dataclass
class TableHit:
    table: str
    score: float


class TableIndex:
    """BM25 index of one database's tables (build with :func:`table_index`)."""

    def __init__(self, image: DatabaseImage, captions: Mapping[str, str] | None = None):
        if not bm25_available():
            raise TableSearchUnavailable(
                "table search needs bm25s: pip install 'clarisql[retrieval]'"
            )
        import bm25s

        self.image = image
        objs = _objects(image)
        self.tables = [name for name, _ in objs]
        captions = dict(captions or {})
        docs = []
        for name, cols in objs:
            # field weights by repetition (bm25s scores one text field): the name counts most
            doc = analyze(name) * NAME_WEIGHT + analyze(captions.get(name, "")) * 2
            doc += analyze(" ".join(c for c, _ in cols)) + analyze(
                " ".join(_samples(image, name, cols))
            )
            docs.append(doc or ["<empty>"])
        self._vocab = {t for d in docs for t in d}
        self._bm25 = bm25s.BM25()
        self._bm25.index(docs, show_progress=False)
        lines = schema_summary(image).splitlines()
        self._lines = {}
        for line in lines:
            head = line[5:] if line.startswith("VIEW ") else line
            self._lines[head.split("(", 1)[0]] = line

    def search(self, query: str, k: int = 5) -> list[TableHit]:
        """The ``k`` best tables for ``query`` (fewer when fewer tables share a term)."""
        terms = [t for t in analyze(str(query)) if t in self._vocab]
        if not terms or k < 1:
            return []
        k = min(int(k), len(self.tables))
        docs, scores = self._bm25.retrieve([terms], k=k, show_progress=False)
        return [
            TableHit(self.tables[int(d)], float(s))
            for d, s in zip(docs[0], scores[0])
            if float(s) > 0
        ]

    def render(self, query: str, k: int = 5) -> str:
        """What the agent sees for ``search_tables(query, k)``."""
        hits = self.search(query, k)
        if not hits:
            return f"No table matches {query!r}. Try other words (names, places, years, columns)."
        body = "\n".join(self._lines.get(h.table, h.table) for h in hits)
        return f"{len(hits)} table(s) matching {query!r}, best first:\n{body}"


def table_index(image: DatabaseImage, captions: Mapping[str, str] | None = None) -> TableIndex:
    """The cached :class:`TableIndex` of ``image`` (one per image and captions)."""
    key = (image.key, hash(tuple(sorted((captions or {}).items()))))
    with _LOCK:
        idx = _INDEXES.get(key)
    if idx is None:
        idx = TableIndex(image, captions)
        with _LOCK:
            _INDEXES[key] = idx
    return idx


def compact_schema(image: DatabaseImage, description: str | None = None, budget: int = 1200) -> str:
    """Description, table count and the table names that fit in ``budget`` characters."""
    key = (image.key, description, budget)
    with _LOCK:
        hit = _COMPACT.get(key)
    if hit is None:
        hit = _compact(image, description, budget)
        with _LOCK:
            _COMPACT[key] = hit
    return hit


def _compact(image: DatabaseImage, description: str | None, budget: int) -> str:
    names = [name for name, _ in _objects(image)]
    head = (
        f"The database has {len(names)} tables; their columns are not listed here. Call "
        "search_tables with words from the request (places, years, names, measures) to see the "
        "matching tables with their columns."
    )
    shown, size = [], 0
    for n in names:
        if size + len(n) + 2 > budget:
            break
        shown.append(n)
        size += len(n) + 2
    rest = len(names) - len(shown)
    listing = "Tables: " + ", ".join(shown) + (f", ... and {rest} more" if rest else "")
    text = head + "\n" + listing
    return (description.strip() + "\n\n" + text) if description else text
