"""SOURCEs -> one SQLite database (the "lake").

Contract
- :func:`ingest` takes SQLite files and/or folders of CSV files (a single ``.csv``/``.tsv`` file
  works too) and writes ONE SQLite database ``out_dir/lake.sqlite`` (written to a temporary file
  and renamed, so a failed run leaves no half-built database). The sources are only read.
- CSV files become tables through sqlite-utils, named after the file (lower case, runs of
  characters other than letters, digits and ``_`` become ``_``; clashes get ``_2``, ``_3``...).
  Values are kept raw: sqlite-utils' type detection gives a column INTEGER / REAL only when every
  value fits; a column with ``'NA'`` or ``''`` next to numbers stays TEXT, exactly as written,
  and the generated SQL casts (see :mod:`.profile`). Headers are kept (white space collapsed); a
  blank header becomes ``column_N``, a repeated one (case-insensitively) ``NAME_2``, ``NAME_3``.
- The first SQLite source is copied whole (SQLite backup API: schema, keys, views, triggers);
  tables of further SQLite sources are copied with ``CREATE TABLE ... AS SELECT`` (columns and
  rows, not constraints).
- Bad input raises :class:`clarisql.envs.synth.SynthError` with one readable line: a missing
  source, a folder without CSV files, a CSV file that does not parse (NUL bytes, a row with more
  fields than the header, no header), a file that is not SQLite or is corrupt, a lake without
  tables.
- Input is bounded: a CSV value longer than :data:`MAX_FIELD_CHARS` or a header with more than
  :data:`MAX_COLUMNS` columns is refused with one line (before any row is loaded). Source names
  are plain paths, never URIs: ``%2F``, ``#`` and ``?`` in a file name are characters of the
  name (SQLite is given a percent-encoded ``file:`` URI of the resolved path, read-only).
"""

from __future__ import annotations

import csv
import os
import re
import tempfile
from collections.abc import Iterator, Sequence
from concurrent.futures import BrokenExecutor
from pathlib import Path
from typing import Any
from urllib.parse import quote

import apsw
import sqlite_utils

from clarisql.envs.synth.forked import fork_pool
from clarisql.envs.synth.types import SynthError, quote_ident

LAKE_FILE = "lake.sqlite"
CSV_SUFFIXES = (".csv", ".tsv")
_SQLITE_MAGIC = b"SQLite format 3\x00"
#: Longest CSV value taken (longer: the file is refused); wider tables are refused too.
MAX_FIELD_CHARS = 1 << 17
MAX_COLUMNS = 1000
csv.field_size_limit(MAX_FIELD_CHARS)


def _ro_uri(path: Path) -> str:
    """A read-only SQLite URI naming exactly ``path`` (every URI-special character escaped)."""
    return "file:" + quote(str(path.resolve()), safe="/") + "?mode=ro"


def table_name(stem: str, taken: set[str]) -> str:
    """A clean, unused table name for a file stem (see the module docstring)."""
    base = re.sub(r"[^0-9a-z_]+", "_", stem.lower()).strip("_") or "table"
    if base[0].isdigit():
        base = "t_" + base
    name, n = base, 2
    while name.lower() in taken:
        name, n = f"{base}_{n}", n + 1
    taken.add(name.lower())
    return name


def _clean_headers(header: list[str]) -> list[str]:
    out: list[str] = []
    seen: set[str] = set()
    for i, h in enumerate(header, 1):
        h = " ".join(h.lstrip("\ufeff").split())
        base, n = h, 2
        if not h:
            h = base = f"column_{i}"
        while h.lower() in seen:  # SQLite names are case-insensitive: Name, name -> name_2
            h, n = f"{base}_{n}", n + 1
        seen.add(h.lower())
        out.append(h)
    return out


_INT = re.compile(r"-?(0|[1-9]\d{0,17})\Z")
_REAL = re.compile(r"-?(\d+\.\d*|\.\d+|\d+)([eE][+-]?\d+)?\Z")


def _unterminated(path: Path, last_field: str) -> bool:
    """Whether the file's last value ran to the end of the file inside an unclosed quote.

    Python's csv module (non-strict, so that open data's stray quotes inside values still
    parse) reads an unclosed quote to the end of the file without an error. A quoted value that
    spans lines and is closed ends the file with its quote; an unclosed one swallowed the
    lines after it, so it holds a line break and the file's last character is not a quote.
    """
    if "\n" not in last_field and "\r" not in last_field:
        return False
    with path.open("rb") as fh:
        fh.seek(max(0, path.stat().st_size - 256))
        tail = fh.read().rstrip()
    return not tail.endswith(b'"')


def _open_csv(path: Path, encoding: str) -> tuple[list[str], Iterator[list[str]], Any]:
    """The cleaned header, the data rows and the file handle (closed by the caller)."""
    fh = path.open(newline="", encoding=encoding)
    sample = fh.read(65536)
    fh.seek(0)
    if "\x00" in sample:
        fh.close()
        raise SynthError(f"CSV file {path} does not parse: it holds NUL bytes (binary data?)")
    delimiter = "\t" if path.suffix.lower() == ".tsv" else ","
    if path.suffix.lower() != ".tsv":
        try:
            delimiter = csv.Sniffer().sniff(sample, delimiters=",;\t|").delimiter
        except csv.Error:
            pass
    reader = csv.reader(fh, delimiter=delimiter)
    try:
        header = next(reader)
    except StopIteration:
        fh.close()
        raise SynthError(f"CSV file {path} is empty (no header row)") from None
    except csv.Error as e:
        fh.close()
        raise SynthError(f"CSV file {path} does not parse: {_csv_problem(e)}") from None
    if len(header) > MAX_COLUMNS:
        fh.close()
        raise SynthError(
            f"CSV file {path} has {len(header)} columns: at most {MAX_COLUMNS} are taken"
        )
    cols = _clean_headers(header)

    def rows() -> Iterator[list[str]]:
        prev, start, last = reader.line_num, 0, None
        for row in reader:
            if row:
                if len(row) > len(cols):
                    raise SynthError(
                        f"CSV file {path} does not parse: line {reader.line_num} has "
                        f"{len(row)} fields, the header has {len(cols)}"
                    )
                last, start = row, prev + 1
                yield row
            prev = reader.line_num
        if last is not None and _unterminated(path, last[-1]):
            raise SynthError(
                f"CSV file {path} does not parse: a quote opened on line {start} is never "
                "closed (the rest of the file would be one value)"
            )

    return cols, rows(), fh


def _csv_problem(e: csv.Error) -> str:
    text = str(e)
    if "field limit" in text:
        return f"a value is longer than {MAX_FIELD_CHARS} characters (MAX_FIELD_CHARS)"
    return text


def _detect(path: Path) -> tuple[str, list[str], list[str], int]:
    """First pass: encoding, header, column types (sqlite-utils' names), row count.

    A column is ``integer`` / ``float`` only when every value is one (a single ``'NA'`` or
    ``''`` keeps it ``text``, exactly as sqlite-utils' type detection decides; integers with a
    leading zero stay text so codes like ``007`` keep their spelling).
    """
    for encoding in ("utf-8-sig", "cp1252", "latin-1"):
        try:
            cols, rows, fh = _open_csv(path, encoding)
            with fh:
                is_int = [True] * len(cols)
                is_real = [True] * len(cols)
                n = 0
                for row in rows:
                    n += 1
                    for i, val in enumerate(row):
                        if is_int[i] and not _INT.match(val):
                            is_int[i] = False
                        if is_real[i] and not is_int[i] and not _REAL.match(val):
                            is_real[i] = False
                types = [
                    "integer" if a else ("float" if b else "text") for a, b in zip(is_int, is_real)
                ]
                types += ["text"] * (len(cols) - len(types))
                return encoding, cols, types, n
        except UnicodeDecodeError:
            continue
        except csv.Error as e:
            raise SynthError(f"CSV file {path} does not parse: {_csv_problem(e)}") from None
    raise SynthError(f"CSV file {path} does not parse: unknown text encoding")  # pragma: no cover


def _load_csv(
    db: sqlite_utils.Database,
    path: Path,
    name: str,
    detected: tuple[str, list[str], list[str], int] | None = None,
) -> None:
    """Two passes: detect types, then create the table (sqlite-utils) and bulk-insert.

    Rows go in through one ``executemany`` in one transaction rather than sqlite-utils'
    ``insert_all`` + ``TypeTracker`` + ``transform``: the same result (declared INTEGER/REAL
    columns convert their numeric text by SQLite's type affinity) at a fraction of the cost,
    which matters for a 60 MB folder.
    """
    encoding, cols, types, n = detected or _detect(path)
    if n == 0:
        raise SynthError(f"CSV file {path} has a header but no data rows")
    py = {"integer": int, "float": float, "text": str}
    db[name].create({c: py[t] for c, t in zip(cols, types)})
    width = len(cols)
    cols_sql = ", ".join(quote_ident(c) for c in cols)
    sql = f"INSERT INTO {quote_ident(name)} ({cols_sql}) VALUES ({', '.join('?' * width)})"
    _, rows, fh = _open_csv(path, encoding)
    with fh, db.conn:
        db.conn.executemany(
            sql, (r if len(r) == width else r + [None] * (width - len(r)) for r in rows)
        )


def _check_sqlite(path: Path) -> None:
    try:
        with path.open("rb") as fh:
            head = fh.read(16)
    except OSError as e:
        raise SynthError(f"cannot read {path}: {e.strerror}") from None
    if head != _SQLITE_MAGIC:
        raise SynthError(f"{path} is not an SQLite database (and not a folder of CSV files)")


def _first_problem(report: str) -> str:
    """SQLite's integrity report (one problem a line) as one line: the first and a count."""
    lines = [ln.strip() for ln in str(report).splitlines() if ln.strip() and "***" not in ln]
    if not lines:
        return " ".join(str(report).split())
    more = f"; {len(lines) - 1} more problem(s)" if len(lines) > 1 else ""
    return lines[0] + more


def _user_tables(conn: apsw.Connection, schema: str = "main") -> list[str]:
    # ordinary tables only: a virtual table and its shadow tables are no data to copy
    q = (
        "SELECT name FROM pragma_table_list WHERE schema = ? AND type = 'table' "
        "AND name NOT LIKE 'sqlite_%' ORDER BY name"
    )
    return [r[0] for r in conn.execute(q, (schema,))]


def _copy_sqlite(path: Path, target: Path, first: bool, taken: set[str]) -> None:
    _check_sqlite(path)
    try:
        src = apsw.Connection(_ro_uri(path), flags=apsw.SQLITE_OPEN_READONLY | apsw.SQLITE_OPEN_URI)
        try:
            (ok,) = src.execute("PRAGMA quick_check").fetchone()
            if ok != "ok":
                raise SynthError(f"{path} is a corrupt SQLite database ({_first_problem(ok)})")
            if first:
                dst = apsw.Connection(str(target))
                with dst.backup("main", src, "main") as b:
                    b.step(-1)
                taken.update(t.lower() for t in _user_tables(dst))
                dst.close()
                return
        finally:
            src.close()
        # URI filenames must be enabled on the connection that ATTACHes one
        dst = apsw.Connection(
            str(target),
            flags=apsw.SQLITE_OPEN_READWRITE | apsw.SQLITE_OPEN_CREATE | apsw.SQLITE_OPEN_URI,
        )
        try:
            dst.execute("ATTACH DATABASE ? AS src", (_ro_uri(path),))
            for t in _user_tables(dst, "src"):
                new = t if t.lower() not in taken else table_name(t, taken)
                taken.add(new.lower())
                dst.execute(
                    f"CREATE TABLE main.{quote_ident(new)} AS SELECT * FROM src.{quote_ident(t)}"
                )
            dst.execute("DETACH DATABASE src")
        finally:
            dst.close()
    except apsw.Error as e:
        raise SynthError(f"{path} is a corrupt SQLite database ({_first_problem(e)})") from None


def _csv_files(folder: Path) -> list[Path]:
    """The folder's CSV files, less the data dictionaries (read by ``describe``, not tables)."""
    from clarisql.envs.synth.describe import is_dictionary_csv

    return sorted(
        p
        for p in folder.iterdir()
        if p.is_file() and p.suffix.lower() in CSV_SUFFIXES and not is_dictionary_csv(p)
    )


def ingest(sources: Sequence[str | Path], out_dir: str | Path, workers: int = 1) -> Path:
    """Build ``out_dir/lake.sqlite`` from ``sources`` (see the module docstring); its path.

    With ``workers > 1`` the first pass over the CSV files (:func:`_detect`) runs ahead in a
    forked process where forking is safe (:func:`~.forked.fork_pool`), beside the second pass
    that loads the file before; the same database.
    """
    if not sources:
        raise SynthError("no SOURCE given (an SQLite file or a folder of CSV files)")
    out = Path(out_dir)
    out.mkdir(parents=True, exist_ok=True)
    paths = [Path(s) for s in sources]
    for p in paths:
        if not p.exists():
            raise SynthError(f"source {p} does not exist")
        if p.is_dir() and not _csv_files(p):
            raise SynthError(f"folder {p} holds no CSV files (*.csv, *.tsv)")
    fd, tmp_name = tempfile.mkstemp(prefix=".lake-", suffix=".sqlite", dir=out)
    os.close(fd)
    tmp = Path(tmp_name)
    tmp.unlink()
    try:
        _build(paths, tmp, workers)
        os.replace(tmp, out / LAKE_FILE)
    finally:
        tmp.unlink(missing_ok=True)
    return out / LAKE_FILE


def _build(paths: list[Path], target: Path, workers: int = 1) -> None:
    taken: set[str] = set()
    sqlite_sources = [p for p in paths if p.is_file() and p.suffix.lower() not in CSV_SUFFIXES]
    for i, p in enumerate(sqlite_sources):
        _copy_sqlite(p, target, first=i == 0, taken=taken)
    csvs: list[Path] = []
    for p in paths:
        if p.is_dir():
            csvs += _csv_files(p)
        elif p.suffix.lower() in CSV_SUFFIXES:
            csvs.append(p)
    if csvs:
        ahead = fork_pool(1) if workers > 1 and len(csvs) > 1 else None
        # (forked before the database is opened: the child holds no handle of it)
        detected = [ahead.submit(_detect, f) for f in csvs] if ahead is not None else None
        db = sqlite_utils.Database(str(target))
        try:
            for i, f in enumerate(csvs):
                got = None
                if detected is not None:
                    try:
                        got = detected[i].result()
                    except BrokenExecutor:  # (the child died: this process reads the file)
                        got = None
                _load_csv(db, f, table_name(f.stem, taken), got)
        finally:
            db.close()
            if ahead is not None:
                ahead.shutdown(wait=True, cancel_futures=True)
    conn = apsw.Connection(str(target))
    try:
        if not _user_tables(conn):
            raise SynthError("the sources hold no tables")
    finally:
        conn.close()


__all__ = ["CSV_SUFFIXES", "LAKE_FILE", "MAX_COLUMNS", "MAX_FIELD_CHARS", "ingest", "table_name"]
