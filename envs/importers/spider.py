"""Spider-format folders to a suite (also AmbiQT/AMBROSIA-style records with several readings).

Input: ``SRC/*.json`` files that are lists of ``{"db_id", "question", "query"}`` records
(``dev.json``, ``train_spider.json``...; ``tables.json`` and other files are skipped) and the
databases at ``SRC/database/<db_id>/<db_id>.sqlite`` (or ``db_dir``). A record with several
acceptable readings lists them as ``gold_alternatives`` (extra queries besides ``query``) or as
``queries`` (all readings, the first one is ``gold_sql``); each reading is checked like a gold.
Output: see :mod:`clarisql.envs.importers`. Task ids are ``<file stem>/<index>``.
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


def _is_records(data: Any, sql_key: str) -> bool:
    return (
        isinstance(data, list)
        and bool(data)
        and all(isinstance(r, dict) for r in data)
        and "db_id" in data[0]
        and "question" in data[0]
        and (sql_key in data[0] or "queries" in data[0])
    )


def record_files(src: Path, files: list[str] | None, sql_key: str) -> list[tuple[str, list]]:
    """``(stem, records)`` for the named files, else every record list in ``src``."""
    paths = [src / f for f in files] if files else sorted(src.glob("*.json"))
    out = []
    for p in paths:
        data = read_json(p)
        if _is_records(data, sql_key):
            out.append((p.stem, data))
        elif files:
            raise ImportFormatError(f"{p}: not a list of {{db_id, question, {sql_key}}} records")
    if not out:
        raise ImportFormatError(
            f"{src}: no JSON file holds a list of {{db_id, question, {sql_key}}} records"
        )
    return out


def readings(rec: dict[str, Any], sql_key: str) -> list[str]:
    """All acceptable gold queries of a record, the main one first."""
    if isinstance(rec.get("queries"), list):
        qs = list(rec["queries"])
    else:
        qs = [rec.get(sql_key)]
        alts = rec.get("gold_alternatives") or rec.get("alternatives") or []
        qs += list(alts) if isinstance(alts, list) else [alts]
    return qs


def import_records(
    w: SuiteWriter,
    src: Path,
    stem: str,
    records: list,
    *,
    sql_key: str,
    db_dir: Path | None,
    utterance: Any = None,
    extra: Any = None,
    limit: int | None = None,
) -> None:
    """Shared by Spider and BIRD: one task per record, every reading checked."""
    for i, rec in enumerate(records[:limit] if limit else records):
        item = f"{stem}/{rec.get('question_id', i)}"
        w.report.read += 1
        db_id, question = rec.get("db_id"), rec.get("question")
        if not isinstance(db_id, str) or not isinstance(question, str) or not question.strip():
            w.drop(item, "record: needs string 'db_id' and 'question'")
            continue
        qs = readings(rec, sql_key)
        if not qs or not all(isinstance(q, str) and q.strip() for q in qs):
            w.drop(item, f"record: '{sql_key}' must be a non-empty SQL string")
            continue
        path = find_database(src, db_id, db_dir)
        if path is None:
            w.drop(item, f"database: {db_id}/{db_id}.sqlite not found")
            continue
        ref = w.database(db_id, path)
        golds = []
        for q in dict.fromkeys(qs):  # a reading listed twice is one reading
            g = w.gold(item, q, ref)
            if g is None:
                break
            golds.append(g)
        else:
            main, alts = golds[0], golds[1:]
            meta: dict[str, Any] = {"source": w.report.format, "db_id": db_id}
            if extra:
                meta.update(extra(rec))
            if any(g.rewritten for g in golds):
                meta["original_sql"] = qs[0] if len(qs) == 1 else qs
            task = w.add(
                id=item,
                db=ref,
                utterance=utterance(rec) if utterance else question.strip(),
                gold_sql=main.sql,
                gold_alternatives=[g.sql for g in alts],
                metadata=meta,
            )
            if task is not None:
                w.report.rewritten += any(g.rewritten for g in golds)
                w.report.empty_gold += main.rows == []


def import_spider(
    src: str | Path,
    out: str | Path,
    *,
    files: list[str] | None = None,
    db_dir: str | Path | None = None,
    limit: int | None = None,
    link: bool = False,
) -> ImportReport:
    """Import a Spider-format folder ``src`` into suite folder ``out`` (see the module docstring)."""
    s = check_source(src)
    w = SuiteWriter("spider", s, prepare_out(out), link=link)
    for stem, records in record_files(s, files, "query"):
        import_records(
            w,
            s,
            stem,
            records,
            sql_key="query",
            db_dir=Path(db_dir) if db_dir else None,
            limit=limit,
        )
    return w.finish()
