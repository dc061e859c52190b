"""EHRSQL-style question sets (with unanswerable questions) to a suite.

Input, either layout:

- ``SRC/*.json`` lists of ``{"id", "question", "query", "is_impossible"?, "db_id"?}`` (EHRSQL
  2022; a question is unanswerable when ``is_impossible`` is true or ``query`` is null/``"null"``/
  ``"nan"``);
- EHRSQL 2024's ``data.json`` (``{"data": [{"id", "question"}]}``) beside ``label.json``
  (``{id: sql or "null"}``), in ``SRC`` or its sub-folders.

The database: ``db`` (one SQLite file for every question), else ``SRC/database/<db_id>/<db_id>.sqlite``
or ``SRC/<db_id>.sqlite``. Unanswerable questions get their kind where the record names a
TrustSQL kind (``unanswerable_kind``, ``kind`` or ``type``), else ``unknown``. EHRSQL's gold
queries read the clock (``current_time``); they are pinned to ``now`` (EHRSQL's own fixed
"current time", ``2105-12-31 23:59:00``, by default) so the gold never changes. Output: see
:mod:`clarisql.envs.importers`.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from clarisql.envs.importers.common import (
    ImportFormatError,
    ImportReport,
    SuiteWriter,
    check_source,
    find_database,
    prepare_out,
    read_json,
)
from clarisql.envs.tasks import ALL_UNANSWERABLE_KINDS, UNANSWERABLE_KIND_ALIASES

EHRSQL_NOW = "2105-12-31 23:59:00"
_NULL = (None, "", "null", "nan", "none")


def _records(src: Path, files: list[str] | None) -> list[tuple[str, list[dict[str, Any]]]]:
    out = []
    paths = [src / f for f in files] if files else sorted(src.glob("*.json"))
    for p in paths:
        if p.name == "label.json":
            continue
        data = read_json(p)
        if isinstance(data, dict) and isinstance(data.get("data"), list):  # EHRSQL 2024
            labels_path = p.parent / "label.json"
            labels = read_json(labels_path) if labels_path.is_file() else {}
            if not isinstance(labels, dict):
                raise ImportFormatError(f"{labels_path}: expected an object {{id: sql}}")
            recs = []
            for r in data["data"]:
                if isinstance(r, dict):
                    r = dict(r)
                    r.setdefault("query", labels.get(str(r.get("id"))))
                    recs.append(r)
            out.append((p.parent.name if p.stem == "data" else p.stem, recs))
        elif (
            isinstance(data, list) and data and isinstance(data[0], dict) and "question" in data[0]
        ):
            out.append((p.stem, data))
        elif files:
            raise ImportFormatError(f"{p}: not an EHRSQL question list")
    if not files and not out:
        for p in sorted(src.glob("*/data.json")):
            out += _records(p.parent, ["data.json"])
    if not out:
        raise ImportFormatError(f"{src}: no EHRSQL question list (*.json or */data.json) found")
    return out


def _kind(rec: dict[str, Any]) -> str:
    for key in ("unanswerable_kind", "kind", "type"):
        k = rec.get(key)
        if isinstance(k, str):
            k = UNANSWERABLE_KIND_ALIASES.get(k, k)
            if k in ALL_UNANSWERABLE_KINDS:
                return k
    return "unknown"


def import_ehrsql(
    src: str | Path,
    out: str | Path,
    *,
    files: list[str] | None = None,
    db: str | Path | None = None,
    db_dir: str | Path | None = None,
    now: str = EHRSQL_NOW,
    limit: int | None = None,
    link: bool = False,
) -> ImportReport:
    """Import an EHRSQL-style folder ``src`` into suite folder ``out`` (see the module docstring)."""
    s = check_source(src)
    one_db = Path(db) if db else None
    if one_db is not None and not one_db.is_file():
        raise ImportFormatError(f"--db {one_db}: no such database file")
    w = SuiteWriter("ehrsql", s, prepare_out(out), link=link)
    for stem, records in _records(s, files):
        for i, rec in enumerate(records[:limit] if limit else records):
            item = f"{stem}/{rec.get('id', i)}"
            w.report.read += 1
            question = rec.get("question")
            if not isinstance(question, str) or not question.strip():
                w.drop(item, "record: needs a string 'question'")
                continue
            db_id = str(rec.get("db_id") or "ehrsql")
            path = one_db or find_database(s, db_id, Path(db_dir) if db_dir else None)
            if path is None:
                w.drop(item, f"database: {db_id}.sqlite not found (pass --db)")
                continue
            ref = w.database(db_id if not one_db else one_db.stem, path)
            query = rec.get("query")
            impossible = bool(rec.get("is_impossible")) or (
                not isinstance(query, str) or query.strip().lower() in _NULL
            )
            meta: dict[str, Any] = {"source": "ehrsql", "db_id": db_id}
            if impossible:
                kind = _kind(rec)
                w.add(
                    id=item,
                    db=ref,
                    utterance=question.strip(),
                    category=f"unanswerable:{kind}",
                    answerable=False,
                    unanswerable_kind=kind,
                    metadata=meta,
                )
                continue
            g = w.gold(item, query, ref, now=now)
            if g is None:
                continue
            if g.rewritten:
                meta["original_sql"] = query
            if w.add(id=item, db=ref, utterance=question.strip(), gold_sql=g.sql, metadata=meta):
                w.report.rewritten += g.rewritten
                w.report.empty_gold += g.rows == []
    return w.finish()
