"""ODUTQA-MDC records as clarisql tasks, over a database synthesized from their gold answers.

ODUTQA-MDC (open-domain table QA with multi-dimensional clarification) publishes gold records
(question, intent, SELECT/FROM/WHERE labels, clarification values, gold SQL and answer) but not
its tables. This module

1. converts each record into a :class:`~clarisql.envs.tasks.Task`: ``intent_ambiguity`` becomes
   the ``intent`` label (value: the column the user means, ``SELECT_clarification``), every
   non-``Correct`` scope triple ``[content, city|district|year, Missing|Error|Unmatch]`` a FROM
   label (value from ``FROM_clarification``), every condition triple ``[content, 企业名称|项目名称,
   不存在]`` a WHERE label ``[content, enterprise|project, not-exist]`` (value: the full name in
   ``WHERE_clarification`` closest to the surface);
2. synthesizes one SQLite table per table caption of the dataset (209 captions: choosing the
   table is part of the task, as in the paper), with the columns the gold SQL of that domain uses,
   and fills in the rows that the gold answers imply (answer values plus the literal equality
   conditions of the top-level WHERE), merging rows that describe the same entity;
3. keeps a task runnable only when its gold SQL, run on that database, execution-matches the
   record's gold answer (multi-table records and those the rows cannot reproduce are left out and
   counted in ``suite.metadata["skipped"]``).

The Fixed-mode simulator answers in Chinese templates modelled on the dataset's dialogues.
The records' licence is unstated upstream: they are read from ``../shared/data/odutqa`` (or
``data=``), never copied into the project; the synthesized database is a cache file.
"""

from __future__ import annotations

import difflib
import hashlib
import json
import os
from collections.abc import Iterable
from pathlib import Path
from typing import Any

import sqlglot
import sqlite_utils
from sqlglot import exp

from clarisql.envs.suites import DatabaseSpec, Suite
from clarisql.envs.tasks import Label, Task, Underspec

GENERATOR_VERSION = 1
SCOPE_SLOTS_CN = {"city": "城市", "district": "区域", "year": "年份"}
CONDITION_SLOTS = {"企业名称": "enterprise", "项目名称": "project"}
SLOT_NAMES_CN = {**SCOPE_SLOTS_CN, "enterprise": "企业名称", "project": "项目名称"}
TEMPLATES_CN = {
    "intent": "我问的是{value}。",
    "Missing": "正确的{slot}应该是{value}。",
    "Error": "正确的{slot}应该是{value}。",
    "Unmatch": "正确的{slot}应该是{value}。",
    "not-exist": "我说的是{value}。",
}
NEUTRAL_CN = "我不太明白你的问题，请具体说明我的请求里哪里不清楚。"


class ODUTQADataError(FileNotFoundError):
    """The ODUTQA-MDC records folder is missing or malformed."""


def default_data_dir() -> Path:
    env = os.environ.get("CLARISQL_ODUTQA_DATA")
    if env:
        return Path(env)
    for base in (Path.cwd(), Path(__file__).resolve().parents[2]):
        cand = base.parent / "shared" / "data" / "odutqa" if base.name else base
        if cand.is_dir():
            return cand
    return Path("../shared/data/odutqa")


def load_records(
    data: str | Path | None = None,
) -> tuple[list[dict[str, Any]], dict[str, list[str]]]:
    """The gold records and the table captions by domain."""
    folder = Path(data) if data else default_data_dir()
    rec_path = folder / "records_dev.jsonl"
    cap_path = folder / "datasets" / "table_captions" / "all_table_captions.json"
    if not rec_path.is_file() or not cap_path.is_file():
        raise ODUTQADataError(
            f"ODUTQA-MDC records not found in {folder} (expected records_dev.jsonl and "
            "datasets/table_captions/all_table_captions.json); pass data=DIR or set CLARISQL_ODUTQA_DATA"
        )
    records = [
        json.loads(line)
        for line in rec_path.read_text(encoding="utf-8").splitlines()
        if line.strip()
    ]
    captions = json.loads(cap_path.read_text(encoding="utf-8"))
    return records, captions


def _closest(surface: str, candidates: Iterable[str]) -> str:
    return max(
        candidates, key=lambda c: (difflib.SequenceMatcher(None, surface, c).ratio(), -len(c))
    )


def record_labels(rec: dict[str, Any]) -> list[Underspec]:
    """The record's gold labels with their clarification values (see the module docstring)."""
    out: list[Underspec] = []
    if rec.get("intent_ambiguity"):
        col = next(iter((rec.get("SELECT_clarification") or {}).values()), "")
        out.append(Underspec(Label("intent"), col))
    from_vals = {cn: val for val, cn in (rec.get("FROM_clarification") or {}).items()}
    for content, slot, kind in rec.get("scope_ambiguity") or []:
        if kind == "Correct":
            continue
        value = from_vals.get(SCOPE_SLOTS_CN.get(slot, slot), "")
        out.append(Underspec(Label(kind, content, slot), value))
    where = rec.get("WHERE_clarification") or {}
    for content, slot_cn, _kind in rec.get("condition_ambiguity") or []:
        names = [name for name, col in where.items() if col == slot_cn] or list(where)
        value = _closest(content, names) if names else ""
        out.append(
            Underspec(Label("not-exist", content, CONDITION_SLOTS.get(slot_cn, slot_cn)), value)
        )
    return out


def record_to_task(rec: dict[str, Any], index: int, db: str = "odutqa") -> Task:
    underspecs = record_labels(rec)
    clauses = {u.label.clause for u in underspecs}
    category = (
        "well-specified" if not clauses else (clauses.pop() if len(clauses) == 1 else "mixed")
    )
    return Task(
        id=f"odutqa/{index:03d}",
        db=db,
        utterance=rec["query"],
        category=category,
        gold_sql=rec["SQL"],
        gold_answer=None if rec.get("SQL_answer") is None else [list(r) for r in rec["SQL_answer"]],
        underspecs=underspecs,
        metadata={
            "uuid": rec.get("uuid"),
            "intent": rec.get("intent"),
            "table_caption": rec.get("table_caption"),
            "tables": [rec["table_caption"]]
            if isinstance(rec.get("table_caption"), str)
            else rec.get("table_caption"),
            "baseline_scope_prediction": baseline_scope_prediction(rec),
        },
    )


def baseline_scope_prediction(rec: dict[str, Any]) -> list[list[str]]:
    """The published MAIC-TQA baseline's scope triples (a lone triple is wrapped in a list)."""
    pred = rec.get("slot_check_result") or []
    if pred and isinstance(pred[0], str):
        pred = [pred]
    return [list(p) for p in pred]


def _domain(caption: str) -> str:
    if caption.endswith("财务表"):
        return "enterprise"
    if "土地" in caption:
        return "land"
    return "community"


def _rows_for(rec: dict[str, Any]) -> tuple[str, list[dict[str, Any]]] | None:
    """(table, rows) that make the record's gold SQL return its answer, or None if unsure."""
    if not rec.get("SQL_answer") or not rec.get("SQL"):
        return None
    try:
        tree = sqlglot.parse_one(rec["SQL"], read="sqlite")
    except sqlglot.errors.SqlglotError:
        return None
    if not isinstance(tree, exp.Select):
        return None
    tables = {t.name for t in tree.find_all(exp.Table)}
    if len(tables) != 1:
        return None
    (table,) = tables
    cols = []
    for e in tree.expressions:
        if not isinstance(e, exp.Column):
            return None
        cols.append(e.name)
    fixed: dict[str, Any] = {}
    where = tree.args.get("where")
    conds = (
        list(where.this.flatten())
        if where is not None and isinstance(where.this, exp.And)
        else ([where.this] if where is not None else [])
    )
    for c in conds:
        if (
            isinstance(c, exp.EQ)
            and isinstance(c.this, exp.Column)
            and isinstance(c.expression, exp.Literal)
        ):
            lit = c.expression
            fixed[c.this.name] = (
                lit.this if lit.is_string else float(lit.this) if "." in lit.this else int(lit.this)
            )
    rows = []
    for ans in rec.get("SQL_answer") or []:
        if len(ans) != len(cols):
            return None
        row = dict(fixed)
        row.update(zip(cols, ans))
        rows.append(row)
    return table, rows


def build_database(
    records: list[dict[str, Any]], captions: dict[str, list[str]], path: Path
) -> None:
    """Write the synthesized database (see the module docstring) to ``path``."""
    per_table: dict[str, list[dict[str, Any]]] = {}
    for rec in records:
        got = _rows_for(rec)
        if got is None:
            continue
        table, rows = got
        merged = per_table.setdefault(table, [])
        for row in rows:
            key_cols = [c for c in ("项目名称", "企业名称", "年月") if c in row]
            for other in merged:
                same_key = key_cols and all(other.get(c) == row[c] for c in key_cols)
                if same_key and all(other.get(c, v) == v for c, v in row.items()):
                    other.update(row)
                    break
            else:
                merged.append(dict(row))
    domain_cols: dict[str, dict[str, type]] = {}
    for table, rows in per_table.items():
        cols = domain_cols.setdefault(_domain(table), {})
        for row in rows:
            for c, v in row.items():
                cols.setdefault(
                    c, float if isinstance(v, (int, float)) and c not in ("年月",) else str
                )
    all_captions = {c for group in captions.values() for c in group} | set(per_table)
    tmp = path.with_suffix(f".tmp{os.getpid()}")
    tmp.unlink(missing_ok=True)
    db = sqlite_utils.Database(tmp)
    for caption in sorted(all_captions):
        cols = domain_cols.get(_domain(caption)) or {"项目名称": str}
        db[caption].create(cols)
        rows = per_table.get(caption)
        if rows:
            db[caption].insert_all(rows, alter=True)
    db.close()
    os.replace(tmp, path)


def odutqa_suite(data: str | Path | None = None, cache_dir: str | Path | None = None) -> Suite:
    """The runnable ODUTQA-MDC tasks over the synthesized database (cached)."""
    from clarisql.envs.database import DatabaseImage
    from clarisql.envs.suites.builtin import default_cache_dir
    from clarisql.rewards.match import execution_match

    records, captions = load_records(data)
    # the folder name covers the records and this module's code, so neither a changed data folder
    # nor a changed synthesizer reuses an old database
    digest = hashlib.sha256(
        json.dumps([records, captions], ensure_ascii=False, sort_keys=True).encode()
        + Path(__file__).read_bytes()
    ).hexdigest()[:12]
    folder = Path(cache_dir) if cache_dir else default_cache_dir()
    folder = folder / f"odutqa-v{GENERATOR_VERSION}-{digest}"
    folder.mkdir(parents=True, exist_ok=True)
    db_path = folder / "odutqa.sqlite"
    if not db_path.is_file():
        build_database(records, captions, db_path)
    image = DatabaseImage(db_path)
    tasks: list[Task] = []
    skipped: list[str] = []
    with image.session(writable=False) as s:
        for i, rec in enumerate(records):
            if not rec.get("SQL") or rec.get("SQL_answer") is None:
                skipped.append(f"odutqa/{i:03d}")
                continue
            task = record_to_task(rec, i)
            res = s.execute(task.gold_sql)
            ordered = "order by" in task.gold_sql.lower()
            if res.ok and execution_match(res.rows, task.gold_answer, ordered=ordered):
                tasks.append(task)
            else:
                skipped.append(task.id)
    spec = DatabaseSpec(
        name="odutqa",
        path=db_path,
        description="ODUTQA-MDC tables (synthesized from the gold records): land deals (土地成交信息表) "
        "and housing sales (商品房成交价格表) per city and district, enterprise finance per year (财务表).",
    )
    meta = {
        "simulator": "fixed",
        "simulator_kwargs": {
            "templates": TEMPLATES_CN,
            "neutral_reply": NEUTRAL_CN,
            "slot_names": SLOT_NAMES_CN,
        },
        "records": len(records),
        "skipped": skipped,
        "tables": len({c for g in captions.values() for c in g}),
    }
    return Suite("odutqa", tasks, {"odutqa": spec}, meta)
