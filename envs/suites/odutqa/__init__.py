"""ODUTQA-MDC records as clarisql tasks, over a full database of all 209 tables.

ODUTQA-MDC (open-domain table QA with multi-dimensional clarification) publishes gold records
(question, intent, SELECT/FROM/WHERE labels, clarification values, gold SQL and answer) but not
its tables. This module

1. converts each record into a :class:`~clarisql.envs.tasks.Task`: ``intent_ambiguity`` becomes
   the ``intent`` label (value: the column the user means, ``SELECT_clarification``), every
   non-``Correct`` scope triple ``[content, city|district|year, Missing|Error|Unmatch]`` a FROM
   label (value from ``FROM_clarification``), every condition triple ``[content, 企业名称|项目名称,
   不存在]`` a WHERE label ``[content, enterprise|project, not-exist]`` (value: the full name in
   ``WHERE_clarification`` closest to the surface);
2. builds one SQLite database with a populated table per caption (209: choosing the table is part
   of the task, as in the paper) from the captions, a fixed seed and the union of EVERY record
   file of the data folder (``records_*.jsonl``), so it is the same whichever set is loaded
   (:mod:`clarisql.envs.suites.odutqa.db`, :mod:`clarisql.envs.suites.odutqa.fit`): the gold
   rows, other enterprises, years, districts and projects, same-named projects elsewhere and
   look-alike names, so that reading a vague request literally or exploring instead of asking
   gives a wrong or ambiguous result;
3. keeps a task runnable when its gold SQL, run on that database, execution-matches the record's
   gold answer (multi-table records included; the others are counted in
   ``suite.metadata["skipped"]``; a malformed record, e.g. one with a NULL in its gold answer,
   is left out of the database too and its reason kept in ``suite.metadata["bad_records"]``),
   and stores the literal reading of the request as ``metadata["naive_sql"]`` for the naive baseline
   (:func:`clarisql.envs.suites.odutqa.literal.literal_sql`).

The Fixed-mode simulator answers in Chinese templates modelled on the dataset's dialogues.
The records' licence is unstated upstream: they are read from ``../shared/data/odutqa`` (or
``data=``), never copied into the project; the database is a cache file keyed by the records,
the captions and the generator's source.
"""

from __future__ import annotations

import difflib
import hashlib
import json
import math
import os
from collections.abc import Iterable
from pathlib import Path
from typing import Any

import sqlglot

from clarisql.envs.suites.base import DatabaseSpec, Suite
from clarisql.envs.tasks import Label, Task, Underspec

GENERATOR_VERSION = 2
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
    for base in (Path.cwd(), Path(__file__).resolve().parents[3]):
        cand = base.parent / "shared" / "data" / "odutqa" if base.name else base
        if cand.is_dir():
            return cand
    return Path("../shared/data/odutqa")


def load_records(
    data: str | Path | None = None, split: str = "dev"
) -> tuple[list[dict[str, Any]], dict[str, list[str]]]:
    """The gold records of one set (``records_<split>.jsonl``) and the table captions by domain."""
    folder = Path(data) if data else default_data_dir()
    rec_path = folder / f"records_{split}.jsonl"
    cap_path = folder / "datasets" / "table_captions" / "all_table_captions.json"
    if not rec_path.is_file() or not cap_path.is_file():
        raise ODUTQADataError(
            f"ODUTQA-MDC records not found in {folder} (expected records_{split}.jsonl and "
            "datasets/table_captions/all_table_captions.json); pass data=DIR or set CLARISQL_ODUTQA_DATA"
        )
    captions = json.loads(cap_path.read_text(encoding="utf-8"))
    return _read_jsonl(rec_path), captions


def _read_jsonl(path: Path) -> list[dict[str, Any]]:
    """Every non-blank line's record; a line that is not a JSON object keeps its place as
    ``{"_bad": why}`` (see :func:`record_problem`), so one bad line never loses the file."""
    lines = path.read_text(encoding="utf-8", errors="replace").splitlines()
    out: list[dict[str, Any]] = []
    for n, line in enumerate(lines, 1):
        if not line.strip():
            continue
        try:
            obj = json.loads(line)
        except (ValueError, RecursionError) as e:
            obj = {"_bad": f"{path.name}:{n}: not valid JSON ({type(e).__name__})"}
        out.append(obj if isinstance(obj, dict) else {"_bad": f"{path.name}:{n}: not an object"})
    return out


def _cell_ok(v: Any) -> bool:
    return isinstance(v, str) or (
        isinstance(v, (int, float)) and not isinstance(v, bool) and math.isfinite(v)
    )


def record_problem(rec: Any) -> str | None:
    """Why a record can neither become a task nor feed the database (``None``: it can).

    A record needs a question, a gold SQL that parses, a table caption and a gold answer made
    of rows of strings and finite numbers: a NULL (or NaN) cell cannot be planted in the
    generated tables, and its labels must convert. Such records are left out of the database
    and counted in ``suite.metadata["bad_records"]`` (id: reason), never failing the suite.
    """
    if not isinstance(rec, dict):
        return "not a JSON object"
    if rec.get("_bad"):
        return str(rec["_bad"])
    if not isinstance(rec.get("query"), str) or not rec["query"].strip():
        return "no question (query)"
    if not isinstance(rec.get("SQL"), str) or not rec["SQL"].strip():
        return "no gold SQL"
    cap = rec.get("table_caption")
    if not (
        isinstance(cap, str) or (isinstance(cap, list) and all(isinstance(c, str) for c in cap))
    ):
        return "no table caption"
    ans = rec.get("SQL_answer")
    if not isinstance(ans, list) or not all(isinstance(r, (list, tuple)) for r in ans):
        return "gold answer (SQL_answer) is not a list of rows"
    for r in ans:
        bad = [v for v in r if not _cell_ok(v)]
        if bad:
            return f"gold answer holds {'NULL' if bad[0] is None else repr(bad[0])[:40]}"
    try:
        sqlglot.parse_one(rec["SQL"], read="sqlite")
        record_labels(rec)
    except (sqlglot.errors.SqlglotError, RecursionError) as e:
        return f"gold SQL does not parse ({type(e).__name__})"
    except (TypeError, ValueError, KeyError, AttributeError) as e:
        return f"malformed labels ({type(e).__name__}: {str(e)[:80]})"
    return None


def all_records(data: str | Path | None = None) -> list[dict[str, Any]]:
    """The records of every set in the folder (``records_*.jsonl``, by file name): what the
    database is built from, whichever set is evaluated."""
    folder = Path(data) if data else default_data_dir()
    return [r for p in sorted(folder.glob("records_*.jsonl")) for r in _read_jsonl(p)]


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


def record_to_task(
    rec: dict[str, Any], index: int, db: str = "odutqa", prefix: str = "odutqa"
) -> Task:
    underspecs = record_labels(rec)
    clauses = {u.label.clause for u in underspecs}
    category = (
        "well-specified" if not clauses else (clauses.pop() if len(clauses) == 1 else "mixed")
    )
    return Task(
        id=f"{prefix}/{index:03d}",
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


def build_database(
    records: list[dict[str, Any]], captions: dict[str, list[str]], path: Path
) -> list[int]:
    """Write the full database for ``records`` (pass every set's) to ``path``; return the
    indices of the records whose gold SQL does not reproduce their answer on it (a record with a
    :func:`record_problem` is left out of the database and counted among them)."""
    from clarisql.envs.suites.odutqa.fit import build_full_database

    good = [i for i, rec in enumerate(records) if record_problem(rec) is None]
    kept = [records[i] for i in good]
    pairs = [
        (u.label.content, u.value)
        for rec in kept
        for u in record_labels(rec)
        if u.label.kind == "not-exist" and u.value
    ]
    failing = {good[j] for j in build_full_database(kept, captions, pairs, path)}
    return sorted(failing | (set(range(len(records))) - set(good)))


def _generator_digest(records: list[dict[str, Any]], captions: dict[str, list[str]]) -> str:
    """A hash of the records, the captions and the generator's source (the cache key)."""
    here = Path(__file__).parent
    h = hashlib.sha256(json.dumps([records, captions], ensure_ascii=False, sort_keys=True).encode())
    for name in ("__init__.py", "db.py", "fit.py"):
        h.update((here / name).read_bytes())
    return h.hexdigest()[:12]


def odutqa_suite(
    data: str | Path | None = None, cache_dir: str | Path | None = None, split: str = "dev"
) -> Suite:
    """The runnable ODUTQA-MDC tasks of one set over the full database (cached)."""
    from clarisql.envs.sandbox.database import DatabaseImage
    from clarisql.envs.suites.builtin import default_cache_dir
    from clarisql.envs.suites.odutqa.literal import literal_sql
    from clarisql.rewards.match import execution_match

    records, captions = load_records(data, split)
    every = all_records(data)
    folder = Path(cache_dir) if cache_dir else default_cache_dir()
    folder = folder / f"odutqa-v{GENERATOR_VERSION}-{_generator_digest(every, captions)}"
    folder.mkdir(parents=True, exist_ok=True)
    db_path = folder / "odutqa.sqlite"
    if not db_path.is_file():
        build_database(every, captions, db_path)
    table_names = sorted({c for g in captions.values() for c in g})
    prefix = "odutqa" if split == "dev" else f"odutqa-{split}"
    image = DatabaseImage(db_path)
    tasks: list[Task] = []
    skipped: list[str] = []
    bad: dict[str, str] = {}
    with image.session(writable=False) as s:
        for i, rec in enumerate(records):
            why = record_problem(rec)
            if why is not None:
                skipped.append(f"{prefix}/{i:03d}")
                bad[f"{prefix}/{i:03d}"] = why
                continue
            task = record_to_task(rec, i, prefix=prefix)
            res = s.execute(task.gold_sql)
            ordered = "order by" in task.gold_sql.lower()
            if res.ok and execution_match(res.rows, task.gold_answer, ordered=ordered):
                task.metadata["naive_sql"] = literal_sql(task, table_names)
                tasks.append(task)
            else:
                skipped.append(task.id)
    spec = DatabaseSpec(
        name="odutqa",
        path=db_path,
        description="ODUTQA-MDC tables: land deals (土地成交信息表) and housing sales "
        "(商品房成交价格表) per city and district, enterprise finance per year (财务表).",
    )
    meta = {
        "simulator": "fixed",
        "simulator_kwargs": {
            "templates": TEMPLATES_CN,
            "neutral_reply": NEUTRAL_CN,
            "slot_names": SLOT_NAMES_CN,
        },
        "records": len(records),
        "split": split,
        "skipped": skipped,
        "bad_records": bad,
        "tables": len(table_names),
        "table_names": table_names,
    }
    return Suite("odutqa", tasks, {"odutqa": spec}, meta)
