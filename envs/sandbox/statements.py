"""What the sandbox knows of one agent statement apart from running it.

Contract
- :func:`check_text` refuses, before SQLite sees it, what is not one runnable statement's text
  (not UTF-8, a NUL, nothing but comments, ``VACUUM``, longer than the limit) as an
  :class:`ExecResult`; otherwise it gives the text back (decoded from bytes).
- The authorizer's tables (which pragmas may run, which operations write, which functions are
  denied) and :class:`Refusal` (a refusal the authorizer or exec tracer raised).
- :func:`error_result` turns what SQLite (or the sandbox) raised while running a statement into
  the :class:`ExecResult` the agent sees: every message depends on the statement and the limits
  only.
- :func:`take_rows` fetches a result within the row and byte caps.
- Text helpers that must agree with SQLite's tokenizer on comments and white space.
"""

from __future__ import annotations

import itertools
import operator
from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

import apsw

if TYPE_CHECKING:
    from clarisql.envs.sandbox.limits import SessionLimits

#: what a writable session may run inline (:meth:`Session.execute_inline`): statements that
#: cannot change the database (an interrupted read changed nothing, so it can be run again)
INLINE_WORDS = frozenset({"SELECT", "VALUES", "EXPLAIN", "PRAGMA"})
#: An inline statement works on small values and returns a small result; anything bigger is run
#: again off the loop. SQLite checks interrupts only between VM operations, so one function
#: over long values (``instr()`` of two 1 MB strings: seconds) would hold the loop whatever the
#: slice: inline, values and rows may be at most INLINE_MAX_VALUE bytes, LIKE/GLOB patterns
#: INLINE_MAX_PATTERN, and a result INLINE_MAX_ROWS rows / INLINE_MAX_BYTES (its formatting
#: runs on the loop too).
INLINE_MAX_VALUE = 16_384
INLINE_MAX_PATTERN = 256
INLINE_MAX_ROWS = 256
INLINE_MAX_BYTES = 65_536

# Pragmas an agent may read (no argument) or call with a table/index name argument.
INTROSPECTION_PRAGMAS = frozenset(
    {
        "table_info",
        "table_xinfo",
        "table_list",
        "index_list",
        "index_info",
        "index_xinfo",
        "foreign_key_list",
        "foreign_key_check",
        "integrity_check",
        "quick_check",
    }
)
READ_PRAGMAS = frozenset(
    {
        "foreign_keys",
        "user_version",
        "schema_version",
        "page_count",
        "page_size",
        "encoding",
        "collation_list",
        "compile_options",
        "freelist_count",
        "application_id",
        "data_version",
        "max_page_count",
        "auto_vacuum",
        "journal_mode",
        "case_sensitive_like",
        "function_list",
        "pragma_list",
        "module_list",
    }
)
WRITE_ACTIONS = {
    apsw.SQLITE_INSERT: "INSERT",
    apsw.SQLITE_UPDATE: "UPDATE",
    apsw.SQLITE_DELETE: "DELETE",
    apsw.SQLITE_CREATE_TABLE: "CREATE TABLE",
    apsw.SQLITE_DROP_TABLE: "DROP TABLE",
    apsw.SQLITE_ALTER_TABLE: "ALTER TABLE",
    apsw.SQLITE_CREATE_INDEX: "CREATE INDEX",
    apsw.SQLITE_DROP_INDEX: "DROP INDEX",
    apsw.SQLITE_CREATE_VIEW: "CREATE VIEW",
    apsw.SQLITE_DROP_VIEW: "DROP VIEW",
    apsw.SQLITE_CREATE_TRIGGER: "CREATE TRIGGER",
    apsw.SQLITE_DROP_TRIGGER: "DROP TRIGGER",
    apsw.SQLITE_REINDEX: "REINDEX",
    apsw.SQLITE_ANALYZE: "ANALYZE",
}
TEMP_ACTIONS = {
    apsw.SQLITE_CREATE_TEMP_TABLE,
    apsw.SQLITE_CREATE_TEMP_INDEX,
    apsw.SQLITE_CREATE_TEMP_VIEW,
    apsw.SQLITE_CREATE_TEMP_TRIGGER,
    apsw.SQLITE_DROP_TEMP_TABLE,
    apsw.SQLITE_DROP_TEMP_INDEX,
    apsw.SQLITE_DROP_TEMP_VIEW,
    apsw.SQLITE_DROP_TEMP_TRIGGER,
}
# Actions whose first argument names a table whose rows may change.
ROW_CHANGING = {
    apsw.SQLITE_INSERT,
    apsw.SQLITE_UPDATE,
    apsw.SQLITE_DELETE,
    apsw.SQLITE_CREATE_TABLE,
    apsw.SQLITE_DROP_TABLE,
}
# Operations the authorizer allows whatever their arguments (a fast path for reads).
ALWAYS_ALLOWED = frozenset({apsw.SQLITE_SELECT, apsw.SQLITE_READ, apsw.SQLITE_RECURSIVE})
DENIED_FUNCTIONS = frozenset({"load_extension", "readfile", "writefile", "edit", "fts3_tokenizer"})
SCHEMA_TABLES = frozenset(
    {"sqlite_master", "sqlite_schema", "sqlite_temp_master", "sqlite_temp_schema"}
)


@dataclass
class ExecResult:
    """Outcome of one statement. ``ok=False`` carries ``error``; rows are tuples."""

    ok: bool
    sql: str
    columns: list[str] = field(default_factory=list)
    rows: list[tuple[Any, ...]] = field(default_factory=list)
    truncated: bool = False
    changes: int = 0
    error: str | None = None
    error_kind: str | None = (
        None  # refused | syntax | runtime | timeout | empty | encoding | too-many | deferred
    )
    elapsed_s: float = 0.0  # the whole call, sandbox checks included
    sqlite_s: float = 0.0  # time inside SQLite: preparing, stepping and fetching the statement
    is_write: bool = False

    @property
    def returns_rows(self) -> bool:
        return self.ok and bool(self.columns)


class Refusal(Exception):
    """A statement the authorizer or exec tracer refused (its message is shown)."""

    def __init__(self, message: str, kind: str = "refused"):
        super().__init__(message)
        self.kind = kind


def skip_comments(text: str, i: int = 0) -> int:
    """Index of the first character at or after ``i`` that is not white space, ``;`` or a comment.

    Written by hand because it must agree with SQLite's own tokenizer on exactly this small
    point (what may surround the one statement of an action); a full SQL parser would be overkill
    and could disagree with SQLite elsewhere.
    """
    n = len(text)
    while i < n:
        ch = text[i]
        if ch.isspace() or ch == ";":
            i += 1
        elif text.startswith("--", i):
            j = text.find("\n", i)
            i = n if j < 0 else j + 1
        elif text.startswith("/*", i):
            j = text.find("*/", i + 2)
            i = n if j < 0 else j + 2
        else:
            return i
    return n


def only_comments(text: str) -> bool:
    """True when ``text`` holds nothing but white space, ``;`` and SQL comments."""
    return skip_comments(text) == len(text)


def first_word(text: str, start: int | None = None) -> str:
    """The first word (upper case) at or after ``start`` (default: after any comments)."""
    i = skip_comments(text) if start is None else start
    j = i
    while j < len(text) and (text[j].isalnum() or text[j] == "_"):
        j += 1
    return text[i:j].upper()


def words(text: str, n: int) -> list[str]:
    """The first ``n`` words of ``text`` (upper case), comments and white space skipped."""
    out: list[str] = []
    i = 0
    while len(out) < n:
        i = skip_comments(text, i)
        j = i
        while j < len(text) and (text[j].isalnum() or text[j] == "_"):
            j += 1
        if j == i:
            break
        out.append(text[i:j].upper())
        i = j
    return out


def _fail(sql: str, error: str, kind: str) -> ExecResult:
    return ExecResult(False, sql, error=error, error_kind=kind)


def check_text(sql: Any, max_sql_chars: int) -> str | ExecResult:
    """``sql`` as text when it may be run; else the refusal (see the module docstring)."""
    if isinstance(sql, (bytes, bytearray)):
        try:
            sql = bytes(sql).decode("utf-8")
        except UnicodeDecodeError as e:
            return _fail(
                repr(sql)[:200],
                f"SQL is not valid UTF-8 ({e.reason} at byte {e.start})",
                "encoding",
            )
    if not isinstance(sql, str):
        return _fail(repr(sql)[:200], f"SQL must be a string, got {type(sql).__name__}", "encoding")
    try:
        if not sql.isascii():  # (ASCII text always encodes: no copy made for it)
            sql.encode("utf-8")
    except UnicodeEncodeError as e:
        return _fail(
            sql.encode("utf-8", "replace").decode()[:200],
            f"SQL is not valid UTF-8 text ({e.reason})",
            "encoding",
        )
    if "\x00" in sql:
        return _fail(sql.replace("\x00", "\\0")[:200], "SQL contains a NUL character", "encoding")
    # (a statement that starts with a letter has no comment or white space to skip)
    start = 0 if sql[:1].isalpha() else skip_comments(sql)
    if start == len(sql):  # only white space, ``;`` and comments
        return _fail(sql, "empty SQL statement", "empty")
    # (the slice test first: an ASCII first word can be VACUUM only if it starts so)
    if (sql[start : start + 6].upper() == "VACUUM" or not sql.isascii()) and first_word(
        sql, start
    ) == "VACUUM":
        # Refused by name: VACUUM INTO writes a file, and inside the episode transaction SQLite
        # would only say "cannot VACUUM from within a transaction".
        return _fail(sql, "VACUUM (and VACUUM INTO) is not allowed in an episode", "refused")
    if len(sql) > max_sql_chars:
        return _fail(sql[:200], f"SQL is longer than {max_sql_chars} characters", "too-long")
    return sql


#: what :func:`error_result` translates (anything else is a bug and propagates)
STATEMENT_ERRORS = (apsw.ExecTraceAbort, apsw.Error, OverflowError, MemoryError, ValueError)


def error_result(
    e: BaseException,
    sql: str,
    lim: SessionLimits,
    refusal: Refusal | None,
    stop_reason: str | None,
    inline: bool = False,
) -> ExecResult:
    """The result of a statement that raised ``e`` (one of :data:`STATEMENT_ERRORS`).

    ``refusal``: what the authorizer or exec tracer refused, if anything; ``stop_reason``: why
    the progress handler stopped it (``"memory"``, ``"steps"``, ``"timeout"``, ``"slice"``); ``inline``: it
    ran under a time slice and the inline caps, so an interrupt other than for memory, or a
    value or pattern past the caps, means "run it again" (error kind ``deferred``).
    """
    if inline and (
        isinstance(e, apsw.TooBigError)
        or (isinstance(e, apsw.Error) and "pattern too complex" in str(e))
    ):  # (past the inline caps on values and patterns: run it again with the session's own)
        return _fail(sql, "too big to run inline", "deferred")
    if isinstance(e, apsw.ExecTraceAbort):
        ref = refusal or Refusal("statement refused")
        return _fail(sql, str(ref), ref.kind)
    if isinstance(e, apsw.InterruptError):
        if inline and stop_reason not in ("memory", "steps"):
            # an inline statement's slice ran out (or it met a model call): run it again
            return _fail(sql, "stopped at its time slice", "deferred")
        if stop_reason == "memory":
            return _fail(
                sql,
                "statement stopped: it needed more than "
                f"{lim.max_statement_memory_bytes / 1e6:g} MB of memory",
                "memory",
            )
        if lim.max_vm_steps is not None:
            # the same text for the step budget and the wall-clock cap above it: what the
            # agent reads never tells whether the clock or the count stopped the statement
            return _fail(
                sql,
                f"statement stopped: it ran past its budget of {lim.max_vm_steps:,} SQLite "
                f"steps (or {lim.timeout_s:g} s in one long operation)",
                "timeout",
            )
        return _fail(
            sql, f"statement stopped: it ran past the {lim.timeout_s:g} s time budget", "timeout"
        )
    if isinstance(e, apsw.TooBigError):
        return _fail(
            sql,
            f"string, blob or row too big: a value may be at most {lim.max_value_bytes} bytes",
            "too-big",
        )
    if isinstance(e, apsw.FullError):
        return _fail(
            sql,
            "database full: an episode's database may grow by at most "
            f"{lim.max_growth_bytes / 1e6:g} MB (the statement was undone)",
            "full",
        )
    if isinstance(e, apsw.NoMemError):
        return _fail(sql, "out of memory", "memory")
    if isinstance(e, apsw.Error):
        if refusal is not None:
            return _fail(sql, str(refusal), refusal.kind)
        kind = "syntax" if isinstance(e, apsw.SQLError) else "runtime"
        return _fail(sql, clean_error(e), kind)
    return _fail(sql, f"{type(e).__name__}: {e}", "runtime")


_SIZED = (str, bytes)
FIRST_ITEM = operator.itemgetter(0)
_CHUNK_ROWS = 256


def _row_bytes(row: tuple[Any, ...]) -> int:
    return sum(len(v) if v.__class__ in _SIZED else 8 for v in row)


def take_rows(it: Iterator[tuple[Any, ...]], max_rows: int, max_bytes: int) -> tuple[list, bool]:
    """Up to ``max_rows`` rows of ``it`` whose size (strings and blobs by length, other values 8
    bytes) stays within ``max_bytes``; ``truncated`` when more were there.

    Rows are taken in chunks (``islice`` runs in C) and sized a chunk at a time; only the chunk
    that crosses the byte cap is walked row by row, so a large answer costs little more than
    SQLite's own fetch, and no more than one chunk past the cap is ever held.
    """
    if max_rows > 0:  # the usual small answer: one chunk under both caps, returned as it is
        want = _CHUNK_ROWS if max_rows > _CHUNK_ROWS else max_rows
        chunk = list(itertools.islice(it, want))
        size = 0
        for r in chunk:
            for v in r:
                size += len(v) if v.__class__ in _SIZED else 8
        if len(chunk) < want and size <= max_bytes:
            return chunk, False
        it = itertools.chain(chunk, it)  # (taken again below)
    rows: list[tuple[Any, ...]] = []
    nbytes = 0
    while len(rows) < max_rows:
        want = min(_CHUNK_ROWS, max_rows - len(rows))
        chunk = list(itertools.islice(it, want))
        if not chunk:
            return rows, False
        size = 0
        for r in chunk:  # (a plain loop: a generator fed to sum() costs more per row)
            for v in r:
                size += len(v) if v.__class__ in _SIZED else 8
        if nbytes + size <= max_bytes:
            rows += chunk
            nbytes += size
            if len(chunk) < want:  # the iterator ran out (the usual small answer: one chunk)
                return rows, False
            continue
        for row in chunk:
            nbytes += _row_bytes(row)
            if nbytes > max_bytes:
                return rows, True
            rows.append(row)
    return rows, next(it, None) is not None


def clean_error(e: apsw.Error) -> str:
    msg = str(e)
    for prefix in ("SQLError: ", "ConstraintError: ", "Error: "):
        if msg.startswith(prefix):
            msg = msg[len(prefix) :]
    return msg
