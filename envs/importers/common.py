"""What every importer shares: gold SQL made sandbox-safe and checked, the suite folder writer.

:func:`make_safe` is the gold check (see :mod:`clarisql.envs.importers`); :class:`SuiteWriter`
copies databases, writes ``tasks.jsonl`` and ``import_report.json`` and counts every drop.
"""

from __future__ import annotations

import json
import shutil
import sqlite3
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import sqlglot
from sqlglot.tokens import TokenType

from clarisql.envs.sandbox.database import DatabaseImage, SessionLimits, get_image
from clarisql.envs.state.gold import _sql_ordered
from clarisql.envs.tasks import Task, TaskFormatError, save_tasks
from clarisql.rewards.match import execution_match

#: Gold queries are checked under the same budget the environment gives gold queries.
GOLD_LIMITS = SessionLimits(timeout_s=60.0, max_rows=1_000_000, max_bytes=1 << 30)
#: VM steps (in thousands) plain SQLite may spend on the original query before it is given up.
_ORIGINAL_STEP_BUDGET = 200_000


class ImportFormatError(ValueError):
    """The input is not the format asked for (or is missing); the message says where and what."""


@dataclass
class SafeGold:
    """The outcome of :func:`make_safe`: the query to store, or why there is none."""

    sql: str | None
    rewritten: bool = False
    error: str | None = None
    rows: list[list[Any]] | None = None


def read_json(path: Path) -> Any:
    """A JSON file's value, or :class:`ImportFormatError` naming the file."""
    try:
        with path.open(encoding="utf-8") as fh:
            return json.load(fh)
    except OSError as e:
        raise ImportFormatError(f"cannot read {path}: {e.strerror or e}") from None
    except (json.JSONDecodeError, UnicodeDecodeError) as e:
        raise ImportFormatError(f"{path}: not valid JSON ({e})") from None


def schema_names(db: Path) -> set[str]:
    """Every table and column name of an SQLite file, case-folded."""
    conn = sqlite3.connect(f"file:{db}?mode=ro", uri=True)
    try:
        names: set[str] = set()
        tables = [
            r[0]
            for r in conn.execute("SELECT name FROM sqlite_master WHERE type IN ('table','view')")
        ]
        for t in tables:
            names.add(t.casefold())
            for row in conn.execute(f"PRAGMA table_info({_quote_ident(t)})"):
                names.add(str(row[1]).casefold())
        return names
    finally:
        conn.close()


def _quote_ident(name: str) -> str:
    return '"' + name.replace('"', '""') + '"'


def _sql_string(text: str) -> str:
    return "'" + text.replace("'", "''") + "'"


def rewrite_double_quoted(sql: str, names: set[str] | None, now: str | None = None) -> str:
    """``sql`` with each double-quoted token that names no table or column as a string literal.

    SQLite reads such a token as a string (its "DQS" quirk, off in the sandbox). Tokens come from
    sqlglot's SQLite tokenizer, so quotes inside strings and comments are left alone; the rest
    of the text is kept byte for byte. ``now``: replace the ``current_time`` / ``current_date``
    / ``current_timestamp`` keywords by that fixed timestamp (EHRSQL's gold queries are written
    against a fixed "now"; a clock in a gold would make the answer change from day to day).
    ``names=None`` leaves double-quoted tokens alone (only the clock is pinned).
    """
    tokens = sqlglot.Dialect.get_or_raise("sqlite").tokenize(sql)
    out: list[str] = []
    pos = 0
    for tok in tokens:
        raw = sql[tok.start : tok.end + 1]
        repl = None
        if (
            names is not None
            and tok.token_type == TokenType.IDENTIFIER
            and raw.startswith('"')
            and raw.endswith('"')
        ):
            content = raw[1:-1].replace('""', '"')
            if content.casefold() not in names:
                repl = _sql_string(content)
        elif now is not None and raw.lower() in (
            "current_time",
            "current_date",
            "current_timestamp",
        ):
            repl = _sql_string(now)
        if repl is not None:
            out.append(sql[pos : tok.start])
            out.append(repl)
            pos = tok.end + 1
    out.append(sql[pos:])
    return "".join(out)


def _run_plain(db: Path, sql: str) -> list[list[Any]]:
    """Rows of ``sql`` run by plain SQLite (DQS quirk on), read-only and step-bounded."""
    conn = sqlite3.connect(f"file:{db}?mode=ro", uri=True)
    budget = [_ORIGINAL_STEP_BUDGET]

    def progress() -> int:
        budget[0] -= 1
        return 1 if budget[0] <= 0 else 0

    conn.set_progress_handler(progress, 1000)
    try:
        return [list(r) for r in conn.execute(sql).fetchall()]
    finally:
        conn.close()


def _run_sandbox(image: DatabaseImage, sql: str) -> tuple[list[list[Any]] | None, str | None]:
    with image.session(writable=False, limits=GOLD_LIMITS) as s:
        res = s.execute(sql)
    if not res.ok:
        return None, str(res.error)
    if res.truncated:
        return None, "the gold result is larger than the gold row/byte cap"
    return [list(r) for r in res.rows], None


def make_safe(sql: str, db: Path, *, now: str | None = None) -> SafeGold:
    """Make a gold query sandbox-safe and check it on the data.

    With ``now``, the clock keywords are first pinned to that time. The query is then run in the
    sandbox; if the sandbox refuses it, :func:`rewrite_double_quoted` rewrites it and the rewrite
    is kept only when the sandbox runs it and its rows equal the (pinned) original's under plain
    SQLite, where the double-quote quirk is on (as multisets, or as sequences when the query
    orders its rows). ``SafeGold.sql`` is ``None`` with an ``error`` when neither works.
    """
    image = get_image(db)
    try:
        base = rewrite_double_quoted(sql, None, now=now) if now is not None else sql
    except sqlglot.errors.SqlglotError as e:
        return SafeGold(None, error=f"cannot tokenize it: {e}")
    rows, first_error = _run_sandbox(image, base)
    if first_error is None:
        return SafeGold(base, rewritten=base != sql, rows=rows)
    try:
        new = rewrite_double_quoted(base, schema_names(db))
    except sqlglot.errors.SqlglotError as e:
        return SafeGold(None, error=f"the sandbox refuses it: {first_error} (cannot tokenize: {e})")
    if new == base:
        return SafeGold(None, error=f"the sandbox refuses it: {first_error}")
    rows, error = _run_sandbox(image, new)
    if error is not None:
        return SafeGold(None, error=f"the sandbox refuses it: {first_error}; rewritten: {error}")
    try:
        original = _run_plain(db, base)
    except sqlite3.Error as e:
        return SafeGold(None, error=f"the original fails in plain SQLite too: {e}")
    if not execution_match(rows, original, ordered=_sql_ordered(sql)):
        return SafeGold(None, error="the sandbox-safe rewrite changes the result set")
    return SafeGold(new, rewritten=True, rows=rows)


@dataclass
class ImportReport:
    """What an import did (written to ``import_report.json``)."""

    format: str
    source: str
    out: str
    read: int = 0
    kept: int = 0
    rewritten: int = 0
    empty_gold: int = 0
    dropped: list[dict[str, str]] = field(default_factory=list)
    categories: dict[str, int] = field(default_factory=dict)
    databases: list[str] = field(default_factory=list)

    def to_dict(self) -> dict[str, Any]:
        return {
            "format": self.format,
            "source": self.source,
            "out": self.out,
            "read": self.read,
            "kept": self.kept,
            "rewritten": self.rewritten,
            "empty_gold": self.empty_gold,
            "dropped": len(self.dropped),
            "drop_reasons": dict(Counter(d["reason"].split(":")[0] for d in self.dropped)),
            "categories": self.categories,
            "databases": self.databases,
            "dropped_items": self.dropped,
        }

    def summary(self) -> str:
        return (
            f"{self.format}: read {self.read}, kept {self.kept} "
            f"({self.rewritten} gold rewritten sandbox-safe, {self.empty_gold} with an empty "
            f"gold), dropped {len(self.dropped)}; {len(self.databases)} database(s) -> "
            f"{Path(self.out) / 'tasks.jsonl'}"
        )


class SuiteWriter:
    """Collects tasks for one output folder, copying each database the first time it is used."""

    def __init__(self, fmt: str, src: Path, out: Path, *, link: bool = False) -> None:
        self.src, self.out, self.link = src, out, link
        self.report = ImportReport(fmt, str(src), str(out))
        self.tasks: list[Task] = []
        self._ids: set[str] = set()
        self._dbs: dict[str, str] = {}
        (out / "databases").mkdir(parents=True, exist_ok=True)

    def database(self, db_id: str, path: Path) -> str:
        """The task ``db`` reference for ``path`` (copied into ``out/databases`` once)."""
        if db_id not in self._dbs:
            safe = "".join(c if c.isalnum() or c in "-_." else "_" for c in db_id) or "db"
            dest, n = self.out / "databases" / f"{safe}.sqlite", 1
            while dest.exists() or dest.is_symlink():  # two ids with the same safe name
                n += 1
                dest = self.out / "databases" / f"{safe}-{n}.sqlite"
            safe = dest.stem
            if self.link:  # large databases (BIRD): a symbolic link to the source file
                dest.symlink_to(path.resolve())
            else:
                shutil.copyfile(path, dest)
            self._dbs[db_id] = f"databases/{safe}.sqlite"
            self.report.databases.append(db_id)
        return self._dbs[db_id]

    def local_path(self, ref: str) -> Path:
        return self.out / ref

    def drop(self, item: str, reason: str) -> None:
        self.report.dropped.append({"id": item, "reason": reason})

    def gold(self, item: str, sql: str, db_ref: str, *, now: str | None = None) -> SafeGold | None:
        """The sandbox-safe gold for one item, or ``None`` (dropped, with the reason)."""
        g = make_safe(sql, self.local_path(db_ref), now=now)
        if g.sql is None:
            self.drop(item, f"gold: {g.error}")
            return None
        return g

    def add(self, **kw: Any) -> Task | None:
        """Build and keep a task (``None`` and a drop when the record is inconsistent)."""
        tid = kw["id"]
        if tid in self._ids:
            self.drop(tid, "duplicate: the id is used by an earlier record")
            return None
        try:
            task = Task(**kw)
        except TaskFormatError as e:
            self.drop(tid, f"record: {e}")
            return None
        self._ids.add(tid)
        self.tasks.append(task)
        return task

    def finish(self) -> ImportReport:
        if not self.tasks:
            raise ImportFormatError(
                f"{self.src}: no task could be imported "
                f"({len(self.report.dropped)} dropped; first: "
                f"{self.report.dropped[0] if self.report.dropped else 'no records found'})"
            )
        used = {t.db for t in self.tasks}
        for db_id, ref in list(self._dbs.items()):  # databases only dropped tasks used
            if ref not in used:
                (self.out / ref).unlink(missing_ok=True)
                self.report.databases.remove(db_id)
        save_tasks(self.tasks, self.out / "tasks.jsonl")
        self.report.kept = len(self.tasks)
        self.report.categories = dict(Counter(t.category for t in self.tasks))
        with (self.out / "import_report.json").open("w", encoding="utf-8") as fh:
            json.dump(self.report.to_dict(), fh, indent=1, ensure_ascii=False)
        return self.report


def find_database(src: Path, db_id: str, db_dir: Path | None = None) -> Path | None:
    """``<dir>/<db_id>/<db_id>.sqlite`` under ``db_dir`` or the usual Spider/BIRD folders;
    ``None`` also for a ``db_id`` that is a path (absolute, ``..``, a separator), never a file
    outside those folders."""
    if not db_id or "/" in db_id or "\\" in db_id or db_id in (".", "..") or "\0" in db_id:
        return None
    roots = [db_dir] if db_dir is not None else []
    roots += [src / "database", src]
    roots += sorted(p for p in src.glob("*_databases") if p.is_dir())
    roots += sorted(p for p in src.glob("*/*_databases") if p.is_dir())
    for root in roots:
        for cand in (
            root / db_id / f"{db_id}.sqlite",
            root / f"{db_id}.sqlite",
            root / db_id / f"{db_id}.db",
        ):
            if cand.is_file():
                return cand
    return None


def check_source(src: str | Path) -> Path:
    p = Path(src)
    if not p.is_dir():
        raise ImportFormatError(f"{p}: not a folder")
    return p


def prepare_out(out: str | Path) -> Path:
    p = Path(out)
    if p.exists() and not p.is_dir():
        raise ImportFormatError(f"--out {p}: exists and is not a folder")
    if (p / "tasks.jsonl").exists():
        raise ImportFormatError(f"--out {p}: already holds a tasks.jsonl (choose an empty folder)")
    p.mkdir(parents=True, exist_ok=True)
    return p
