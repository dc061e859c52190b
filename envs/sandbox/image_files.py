"""The files behind a database image: validation, the base file episodes read, on-disk caches.

Contract
- :func:`check_database_file` opens a file read-only and raises
  :class:`~clarisql.envs.sandbox.database.DatabaseFileError` (one line, naming the file) unless it is a
  usable SQLite database: the header, the schema, and a page count that fits the file's size;
  files up to :data:`QUICK_CHECK_MAX_BYTES` also pass ``PRAGMA quick_check`` (on larger ones it
  would read the whole file at every cold start).
- :func:`base_file` is the read-only file episodes of an image read: the source file itself, or,
  when the suite has ``post_copy_sql``, a derived copy with those statements applied, built once
  in the cache folder (keyed by the source's identity and the statements) and shared by every
  process.
- :func:`content_key` names a file's content cheaply (path, size, mtime and SQLite's file change
  counter), for caches that outlive the process (:mod:`clarisql.envs.state.digest`'s on-disk cache).
- :func:`cache_dir` is ``$CLARISQL_CACHE_DIR`` or ``~/.cache/clarisql``.
"""

from __future__ import annotations

import hashlib
import os
from pathlib import Path

import apsw

QUICK_CHECK_MAX_BYTES = 64 * 1024 * 1024


def cache_dir() -> Path:
    env = os.environ.get("CLARISQL_CACHE_DIR")
    return Path(env).expanduser() if env else Path.home() / ".cache" / "clarisql"


class DatabaseFileError(ValueError):
    """A database file is missing, not a file, or not a valid SQLite database (one-line message)."""


def _error(msg: str) -> Exception:
    return DatabaseFileError(msg)


def _clean(e: apsw.Error) -> str:
    return str(e).split(": ", 1)[-1] if ": " in str(e) else str(e)


def check_database_file(path: Path) -> tuple[int, int]:
    """``(page_size, page_count)`` of a valid SQLite file, else ``DatabaseFileError``."""
    size = path.stat().st_size
    with open(path, "rb") as f:
        header = f.read(100)
    if size == 0:
        raise _error(f"{path}: not a valid SQLite database (empty file)")
    if len(header) < 100 or not header.startswith(b"SQLite format 3\x00"):
        raise _error(f"{path}: not a valid SQLite database (no SQLite header)")
    try:
        conn = apsw.Connection(
            f"file:{path}?mode=ro&immutable=1",
            flags=apsw.SQLITE_OPEN_READONLY | apsw.SQLITE_OPEN_URI,
        )
    except apsw.Error as e:
        raise _error(f"{path}: cannot open the database ({_clean(e)})") from None
    try:
        conn.execute("SELECT count(*) FROM sqlite_schema").fetchall()
        (page_size,) = conn.execute("PRAGMA page_size").fetchone()
        (pages,) = conn.execute("PRAGMA page_count").fetchone()
        if pages * page_size > size:
            raise _error(
                f"{path}: not a valid SQLite database (truncated: {size} bytes, "
                f"the header says {pages * page_size})"
            )
        if size <= QUICK_CHECK_MAX_BYTES:
            problem = conn.execute("PRAGMA quick_check(1)").fetchone()[0]
            if problem != "ok":
                raise _error(f"{path}: not a valid SQLite database ({problem})")
    except apsw.Error as e:
        raise _error(f"{path}: not a valid SQLite database ({_clean(e)})") from None
    finally:
        conn.close()
    return int(page_size), int(pages)


def content_key(path: Path, extra: str = "") -> str:
    """A short, stable name for the content of ``path`` (see the module docstring)."""
    st = path.stat()
    with open(path, "rb") as f:
        header = f.read(100)
    counter = header[24:28].hex() if len(header) >= 28 else ""
    ident = f"{path.resolve()}|{st.st_size}|{st.st_mtime_ns}|{counter}|{extra}"
    return hashlib.sha256(ident.encode("utf-8", "surrogatepass")).hexdigest()[:24]


def base_file(path: Path, post_copy_sql: tuple[str, ...]) -> Path:
    """The file episodes read: ``path``, or its derived copy with ``post_copy_sql`` applied."""
    if not post_copy_sql:
        return path
    key = content_key(path, repr(post_copy_sql))
    out = cache_dir() / "images" / f"{path.stem}-{key}.sqlite"
    if out.is_file():
        return out
    out.parent.mkdir(parents=True, exist_ok=True)
    tmp = out.with_name(f"{out.name}.{os.getpid()}.tmp")
    src = apsw.Connection(
        f"file:{path}?mode=ro", flags=apsw.SQLITE_OPEN_READONLY | apsw.SQLITE_OPEN_URI
    )
    dst = apsw.Connection(str(tmp))
    try:
        with dst.backup("main", src, "main") as b:
            b.step(-1)
        for stmt in post_copy_sql:
            dst.execute(stmt)
    finally:
        dst.close()
        src.close()
    os.replace(tmp, out)  # atomic: a concurrent builder's copy is the same content
    return out


__all__ = ["QUICK_CHECK_MAX_BYTES", "base_file", "cache_dir", "check_database_file", "content_key"]
