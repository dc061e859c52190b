"""DySQL-Bench tasks and databases as a clarisql suite (``load_suite("dysql", ...)``).

Data layout (``../shared/data/dysql``, see its SOURCE.md): ``envs.json`` maps each DySQL-Bench
environment (database) to ``db_local_path``, ``tasks_file``, ``hash_table_order`` (upstream's
``TABLE_NAMES``), ``post_copy_sql`` and ``agent_policy`` (the agent's system prompt with the
DDL). Task files are JSON lists of ``{task_index, user_id, instruction, actions: [{"name":
"sql", "kwargs": {"sql": ...}}], outputs}`` (``.jsonl``, one record a line, also works).

:func:`dysql_suite` loads
- the whole folder (every database whose SQLite file is present),
- one database (``db="chinook"``; several: ``db="chinook,music"`` or a list), or
- any extra task file in the same format (``tasks_file=...``) for one database of the folder
  (``db=`` names it, else it is read from the file's path, e.g. ``.../envs/chinook/x.json``);
  the file's tasks replace that database's default tasks.
Databases whose file is absent are skipped with a :class:`MissingDatabaseWarning` naming them and
their task counts; asking for such a database explicitly (``db=``) is an error.

Tasks: id ``<db>/<task_index>``, ``db`` = the database name, ``writable=True``, category
``"write"``, ``gold_actions`` = the golden SQL statements (an action holding several statements
is split into one action per statement, with SQLite's own statement tokenizer), ``instruction``
= the hidden instruction, ``utterance`` = the user's opening message as the offline
instruction-following user says it (the instruction's request sentences without the identity
details, see :mod:`clarisql.envs.simulators.offline`; an LLM-played user writes its own opening
at reset, as DySQL-Bench does), ``metadata`` = ``{user_id, task_index, dysql_env, source}``.

Success is DySQL-Bench's: the final state's digest equals the digest after replaying the golden
actions on a fresh copy. :func:`dysql_digest_config` mirrors DySQL-Bench's hash decisions through
:class:`~clarisql.envs.state.digest.DigestConfig` (see there); :func:`dysql_bench_hash` is an
independent re-implementation of DySQL-Bench's own hash (sort every table) used as the reference
in tests and benchmarks.

Suite metadata: ``simulator="instruction"`` (the environment's default user), ``max_turns=30``
and ``max_clarifications=30`` (DySQL-Bench's 30 agent steps), ``plain_text="message"`` (a reply
with no tool call is a message to the user), ``data``, ``missing_databases``.
"""

from __future__ import annotations

import hashlib
import json
import logging
import os
import warnings
from collections.abc import Iterable, Sequence
from pathlib import Path
from typing import Any

import apsw

from clarisql.envs.simulators.offline import OfflineUser, extract_facts
from clarisql.envs.state.digest import DigestConfig
from clarisql.envs.suites.base import DatabaseSpec, Suite
from clarisql.envs.tasks import Task, TaskFormatError

log = logging.getLogger(__name__)

DATA_ENV_VAR = "CLARISQL_DYSQL_DATA"

#: Column names DySQL-Bench leaves out of its hash (case-insensitive). Its rule is the regular
#: expression ``^(last_?update|updated_?at|update_?time|modified(_at)?|modification_?time|
#: create(d)?_?at|timestamp)$``, which matches exactly these names.
VOLATILE_COLUMNS: tuple[str, ...] = (
    "last_update",
    "lastupdate",
    "updated_at",
    "updatedat",
    "update_time",
    "updatetime",
    "modified",
    "modified_at",
    "modification_time",
    "modificationtime",
    "create_at",
    "createat",
    "created_at",
    "createdat",
    "timestamp",
)
#: Tables DySQL-Bench never hashes, even when its table list names them.
IGNORED_TABLES: tuple[str, ...] = ("sqlite_sequence", "sqlite_stat1")

#: Default episode limits for DySQL tasks (DySQL-Bench runs at most 30 agent steps).
MAX_TURNS = 30


class MissingDatabaseWarning(UserWarning):
    """Some DySQL databases are absent from the data folder; their tasks were skipped."""


class DySQLDataError(FileNotFoundError):
    """The DySQL data folder, ``envs.json`` or a requested database/task file is missing or bad."""


# --- the digest --------------------------------------------------------------------------------
class BadRecordWarning(UserWarning):
    """Some DySQL task records are malformed; they were left out (``metadata["bad_records"]``)."""


def dysql_digest_config(hash_table_order: Sequence[str]) -> DigestConfig:
    """The digest setting that takes DySQL-Bench's decisions.

    - tables: only those in ``hash_table_order`` (upstream ``TABLE_NAMES``), in that order, that
      exist as tables; ``sqlite_sequence`` and ``sqlite_stat1`` never count; views never count;
      tables the agent creates outside the list do not count;
    - volatile columns: :data:`VOLATILE_COLUMNS` (upstream's regular expression);
    - a table whose columns are all volatile counts by its row count only (upstream's
      ``__ONLY_ROWCOUNT__``); the digest does this for every table with no non-volatile column;
    - rows compare as a multiset of typed values (``1``, ``1.0`` and ``'1'`` differ), as
      upstream's sorted tuples of Python values do.
    Known difference: upstream sorts rows with SQLite's ``ORDER BY`` and breaks ties by
    ``rowid``, so two rows equal under a column's collation (``'a'``/``'A'`` with NOCASE) or
    numeric comparison (``1``/``1.0``) but stored in another order hash differently there; here
    they do not (order never matters). Upstream does not hash column names; this digest does, so
    a renamed column counts as a change here.
    """
    order = tuple(hash_table_order)
    return DigestConfig(
        volatile_columns=VOLATILE_COLUMNS,
        table_order=order,
        only_tables=tuple(t for t in order if t not in IGNORED_TABLES),
    )


def _qi(name: str) -> str:
    return '"' + name.replace('"', '""') + '"'


def dysql_bench_hash(conn: apsw.Connection, hash_table_order: Sequence[str]) -> str:
    """DySQL-Bench's final-state hash, re-implemented: read and sort every listed table.

    For each table of ``hash_table_order`` that exists (``sqlite_sequence``/``sqlite_stat1``
    excepted): its non-volatile columns' rows ``ORDER BY`` all those columns then ``rowid``, or
    ``("__ONLY_ROWCOUNT__", n)`` when every column is volatile; SHA-256 of the ``str()`` of the
    list. Cost: every row of every table, sorted. Used as the reference in tests and benchmarks.
    """
    volatile = {c.lower() for c in VOLATILE_COLUMNS}
    existing = {r[0] for r in conn.execute("SELECT name FROM sqlite_master WHERE type='table'")}
    existing -= set(IGNORED_TABLES)
    data: list[tuple[Any, ...]] = []
    for table in hash_table_order:
        if table not in existing:
            continue
        cols = [r[1] for r in conn.execute(f"PRAGMA table_info({_qi(table)})")]
        if not cols:
            data.append((table, ()))
            continue
        stable = [c for c in cols if c.lower() not in volatile]
        if stable:
            sel = ", ".join(_qi(c) for c in stable)
            rows = conn.execute(f"SELECT {sel} FROM {_qi(table)} ORDER BY {sel}, rowid").fetchall()
            data.append((table, tuple(tuple(r) for r in rows)))
        else:
            (n,) = conn.execute(f"SELECT COUNT(*) FROM {_qi(table)}").fetchone()
            data.append((table, ("__ONLY_ROWCOUNT__", n)))
    return hashlib.sha256(str(tuple(data)).encode("utf-8")).hexdigest()


# --- statements -------------------------------------------------------------------------------
def split_statements(sql: str) -> list[str]:
    """Split SQL text into statements with SQLite's own tokenizer (``sqlite3_complete``).

    A ``;`` inside a string, identifier, comment or trigger body does not split. Pieces holding
    only comments and white space are dropped.
    """
    from clarisql.envs.sandbox.statements import only_comments

    out: list[str] = []
    start = 0
    for i, ch in enumerate(sql):
        if ch == ";" and apsw.complete(sql[start : i + 1]):
            piece = sql[start : i + 1].strip()
            if not only_comments(piece):
                out.append(piece)
            start = i + 1
    tail = sql[start:].strip()
    if tail and not only_comments(tail):
        out.append(tail)
    return out


# --- the data folder -----------------------------------------------------------------------------
def default_data_dir() -> Path:
    """``$CLARISQL_DYSQL_DATA``, else ``../shared/data/dysql`` from the current folder, else the
    same beside the repository checkout (raises :class:`DySQLDataError` when none exists)."""
    tried: list[Path] = []
    env = os.environ.get(DATA_ENV_VAR)
    if env:
        p = Path(env).expanduser()
        if p.is_dir():
            return p
        raise DySQLDataError(f"${DATA_ENV_VAR} is {env!r}, which is not a folder")
    for p in (
        Path.cwd() / ".." / "shared" / "data" / "dysql",
        Path(__file__).resolve().parents[3] / "shared" / "data" / "dysql",
    ):
        tried.append(p)
        if p.is_dir():
            return p.resolve()
    raise DySQLDataError(
        "DySQL data folder not found: pass data=PATH (CLI: --data PATH) or set "
        f"${DATA_ENV_VAR}; tried {', '.join(str(t) for t in tried)}"
    )


def read_envs(folder: Path) -> dict[str, dict[str, Any]]:
    """``envs.json`` of a DySQL data folder (checked for the fields the loader needs)."""
    path = folder / "envs.json"
    if not path.is_file():
        raise DySQLDataError(
            f"{folder} has no envs.json: expected the converted DySQL-Bench folder "
            "(../shared/data/dysql, see its SOURCE.md)"
        )
    try:
        envs = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, json.JSONDecodeError) as e:
        raise DySQLDataError(f"{path}: cannot read it as JSON ({e})") from None
    if not isinstance(envs, dict) or not envs:
        raise DySQLDataError(f"{path}: expected an object mapping database names to metadata")
    for name, e in envs.items():
        if not isinstance(e, dict):
            raise DySQLDataError(f"{path}: entry {name!r} is not an object")
        for key in ("db_local_path", "tasks_file", "hash_table_order"):
            if key not in e:
                raise DySQLDataError(f"{path}: entry {name!r} lacks {key!r}")
        if not isinstance(e["hash_table_order"], list) or not all(
            isinstance(t, str) for t in e["hash_table_order"]
        ):
            raise DySQLDataError(
                f"{path}: entry {name!r}: 'hash_table_order' must list table names"
            )
        post = e.get("post_copy_sql") or []
        if not isinstance(post, list) or not all(isinstance(s, str) for s in post):
            raise DySQLDataError(f"{path}: entry {name!r}: 'post_copy_sql' must list SQL strings")
    return envs


def _read_records(path: Path) -> list[Any]:
    try:
        text = path.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as e:
        raise TaskFormatError(f"cannot read DySQL task file {path}: {e}") from None
    if path.suffix == ".jsonl":
        out = []
        for lineno, line in enumerate(text.splitlines(), 1):
            if not line.strip():
                continue
            try:
                out.append(json.loads(line))
            except json.JSONDecodeError as e:
                raise TaskFormatError(f"{path}:{lineno}: not valid JSON ({e.msg})") from None
        return out
    try:
        data = json.loads(text)
    except json.JSONDecodeError as e:
        raise TaskFormatError(f"{path}: not valid JSON ({e.msg} at line {e.lineno})") from None
    if not isinstance(data, list):
        raise TaskFormatError(f"{path}: a DySQL task file holds a JSON list of tasks")
    return data


def dysql_task(record: Any, db: str, where: str, position: int) -> Task:
    """One DySQL task record as a :class:`Task` (``where`` names the record in errors)."""
    if not isinstance(record, dict):
        raise TaskFormatError(
            f"{where}: a task record must be an object, got {type(record).__name__}"
        )
    instruction = record.get("instruction")
    if not isinstance(instruction, str) or not instruction.strip():
        raise TaskFormatError(f"{where}: 'instruction' must be a non-empty string")
    index = record.get("task_index", position)
    if isinstance(index, bool) or not isinstance(index, int) or index < 0:
        raise TaskFormatError(
            f"{where}: 'task_index' must be a non-negative integer, got {index!r}"
        )
    actions = record.get("actions")
    if not isinstance(actions, list):
        raise TaskFormatError(f"{where}: 'actions' must be a list")
    gold: list[str] = []
    for j, a in enumerate(actions):
        if not isinstance(a, dict) or not isinstance(a.get("name"), str):
            raise TaskFormatError(f"{where}: action {j} must be an object with a 'name'")
        if a["name"] == "respond":  # a message to the user: no state change, nothing to replay
            continue
        if a["name"] != "sql":
            raise TaskFormatError(
                f"{where}: action {j}: unknown action name {a['name']!r} (expected 'sql')"
            )
        kwargs = a.get("kwargs")
        sql = kwargs.get("sql") if isinstance(kwargs, dict) else None
        if not isinstance(sql, str) or not sql.strip():
            raise TaskFormatError(f"{where}: action {j}: 'kwargs.sql' must be a non-empty string")
        pieces = split_statements(sql)
        if not pieces:
            raise TaskFormatError(f"{where}: action {j}: 'kwargs.sql' holds no statement")
        gold.extend(pieces)
    if not gold:
        raise TaskFormatError(f"{where}: the task has no SQL action to replay")
    outputs = record.get("outputs") or []
    metadata: dict[str, Any] = {
        "user_id": str(record.get("user_id", "")),
        "task_index": index,
        "dysql_env": db,
        "source": "dysql",
    }
    if outputs:
        metadata["outputs"] = list(outputs)
    opening = OfflineUser(extract_facts(instruction)).opening()
    return Task(
        id=f"{db}/{index}",
        db=db,
        utterance=opening,
        category="write",
        writable=True,
        gold_actions=gold,
        instruction=instruction,
        metadata=metadata,
    )


def load_dysql_tasks(path: str | Path, db: str, bad: dict[str, str] | None = None) -> list[Task]:
    """Every task of a DySQL-format task file, for database ``db`` (ids ``<db>/<task_index>``).

    A malformed record raises :class:`~clarisql.envs.tasks.TaskFormatError`, unless ``bad`` is
    given: then it is left out and its reason kept there (``<db>/#<position>``: message), and
    only a file without one good record raises (the first record's error).
    """
    p = Path(path)
    records = _read_records(p)
    tasks: list[Task] = []
    first: TaskFormatError | None = None
    for i, r in enumerate(records):
        try:
            tasks.append(dysql_task(r, db, f"{p}: task #{i}", i))
        except TaskFormatError as e:
            if bad is None:
                raise
            first = first or e
            bad[f"{db}/#{i}"] = str(e)
    if first is not None and not tasks:
        raise first
    seen: set[str] = set()
    for t in tasks:
        if t.id in seen:
            raise TaskFormatError(f"{p}: duplicate task_index in id {t.id!r}")
        seen.add(t.id)
    return tasks


def _names(db: str | Iterable[str] | None) -> list[str] | None:
    if db is None:
        return None
    items = db.split(",") if isinstance(db, str) else list(db)
    names = [str(x).strip() for x in items if str(x).strip()]
    return names or None


def dysql_suite(
    data: str | Path | None = None,
    db: str | Sequence[str] | None = None,
    tasks_file: str | Path | None = None,
) -> Suite:
    """The DySQL suite (see the module docstring for what each argument selects).

    Raises :class:`DySQLDataError` for a missing folder, ``envs.json``, requested database or task
    file, ``ValueError`` for an unknown database name, and
    :class:`~clarisql.envs.tasks.TaskFormatError` for a task file without one well-formed record
    (naming the file, the record and the field); malformed records beside good ones are left
    out with a :class:`BadRecordWarning` and counted in ``metadata["bad_records"]``.
    """
    folder = Path(data).expanduser() if data is not None else default_data_dir()
    if not folder.is_dir():
        raise DySQLDataError(f"DySQL data folder {folder} does not exist")
    folder = folder.resolve()
    envs = read_envs(folder)
    wanted = _names(db)
    extra = Path(tasks_file).expanduser() if tasks_file is not None else None
    if extra is not None:
        if not extra.is_file() and not extra.is_absolute() and (folder / extra).is_file():
            extra = folder / extra
        if not extra.is_file():
            raise DySQLDataError(f"DySQL task file {tasks_file} does not exist")
        if wanted is None:
            parts = set(extra.resolve().parts)
            guess = [n for n in envs if n in parts]
            if len(guess) != 1:
                raise ValueError(
                    f"cannot tell which database the task file {extra} is for: pass db=NAME "
                    f"(CLI: --db NAME), one of {sorted(envs)}"
                )
            wanted = guess
        elif len(wanted) != 1:
            raise ValueError("a task file is for one database: give exactly one db=NAME")
    if wanted is not None:
        unknown = [n for n in wanted if n not in envs]
        if unknown:
            raise ValueError(
                f"unknown DySQL database(s) {unknown}: expected some of {sorted(envs)}"
            )
    selected = wanted if wanted is not None else list(envs)

    tasks: list[Task] = []
    databases: dict[str, DatabaseSpec] = {}
    missing: dict[str, int] = {}
    bad: dict[str, str] = {}  # malformed records left out (never the whole suite)
    for name in selected:
        e = envs[name]
        db_path = folder / e["db_local_path"]
        if not db_path.is_file():
            if wanted is not None:
                raise DySQLDataError(
                    f"DySQL database {name!r} is not in this copy ({db_path} is absent); "
                    "see the data folder's SOURCE.md"
                )
            missing[name] = _count_tasks(folder, e)
            continue
        source = extra if extra is not None else folder / e["tasks_file"]
        if not source.is_file():
            raise DySQLDataError(f"DySQL task file {source} for {name!r} does not exist")
        tasks.extend(load_dysql_tasks(source, name, bad=bad))
        databases[name] = DatabaseSpec(
            name=name,
            path=db_path.resolve(),
            post_copy_sql=list(e.get("post_copy_sql") or []),
            digest=dysql_digest_config(e["hash_table_order"]),
            description=e.get("agent_policy") or None,
        )
    if missing:
        listed = ", ".join(f"{n} ({k} tasks)" for n, k in missing.items())
        msg = (
            f"DySQL: skipping {sum(missing.values())} tasks of {len(missing)} database(s) whose "
            f"SQLite file is absent from {folder}: {listed}"
        )
        warnings.warn(msg, MissingDatabaseWarning, stacklevel=2)
        log.info(msg)
    if bad:
        msg = f"DySQL: left out {len(bad)} malformed task record(s): " + "; ".join(
            list(bad.values())[:3]
        )
        warnings.warn(msg, BadRecordWarning, stacklevel=2)
        log.info(msg)
    meta = {
        "simulator": "instruction",
        "max_turns": MAX_TURNS,
        "max_clarifications": MAX_TURNS,
        "plain_text": "message",  # agents talk to the user in plain text, as in DySQL-Bench
        "data": str(folder),
        "databases": sorted(databases),
        "missing_databases": missing,
        "bad_records": bad,
    }
    if extra is not None:
        meta["tasks_file"] = str(extra.resolve())
    return Suite(name="dysql", tasks=tasks, databases=databases, metadata=meta)


def _count_tasks(folder: Path, entry: dict[str, Any]) -> int:
    n = entry.get("n_tasks")
    if isinstance(n, int):
        return n
    try:
        return len(_read_records(folder / entry["tasks_file"]))
    except (TaskFormatError, OSError):
        return 0


__all__ = [
    "DATA_ENV_VAR",
    "BadRecordWarning",
    "IGNORED_TABLES",
    "MAX_TURNS",
    "VOLATILE_COLUMNS",
    "DySQLDataError",
    "MissingDatabaseWarning",
    "default_data_dir",
    "dysql_bench_hash",
    "dysql_digest_config",
    "dysql_suite",
    "dysql_task",
    "load_dysql_tasks",
    "read_envs",
    "split_statements",
]
