"""Synth input is bounded and names are plain paths (one-line refusals, never URIs)."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import apsw
import pytest

from clarisql.envs.synth.ingest import MAX_COLUMNS, MAX_FIELD_CHARS, ingest
from clarisql.envs.synth.types import SynthError


def _db(path: Path, table: str) -> Path:
    conn = apsw.Connection(str(path))
    conn.execute(f"CREATE TABLE {table}(a INTEGER, b TEXT); INSERT INTO {table} VALUES (1, 'x')")
    conn.close()
    return path


def _tables(lake: Path) -> set[str]:
    conn = apsw.Connection(str(lake), flags=apsw.SQLITE_OPEN_READONLY)
    try:
        return {r[0] for r in conn.execute("SELECT name FROM sqlite_master WHERE type='table'")}
    finally:
        conn.close()


def test_a_huge_field_is_refused_in_one_line(tmp_path: Path) -> None:
    src = tmp_path / "big.csv"
    src.write_text("name,notes\nx," + "A" * (MAX_FIELD_CHARS + 10) + "\n")
    with pytest.raises(SynthError, match="longer than") as e:
        ingest([src], tmp_path / "out")
    assert "\n" not in str(e.value) and len(str(e.value)) < 300


def test_too_many_columns_is_refused_in_one_line(tmp_path: Path) -> None:
    src = tmp_path / "wide.csv"
    n = 10_000
    src.write_text(",".join(f"c{i}" for i in range(n)) + "\n" + ",".join("1" * n) + "\n")
    with pytest.raises(SynthError, match=f"{n} columns: at most {MAX_COLUMNS}"):
        ingest([src], tmp_path / "out")


def test_file_names_are_plain_paths_not_uris(tmp_path: Path) -> None:
    (tmp_path / "decoy").mkdir()
    _db(tmp_path / "other.sqlite", "secret")
    tricky = _db(tmp_path / "decoy%2F..%2Fother.sqlite", "mine")
    assert _tables(ingest([tricky], tmp_path / "o1")) == {"mine"}  # never other.sqlite
    for name in ("x.sqlite#frag", "y?mode=rwc.sqlite", "z 100%.sqlite"):
        src = _db(tmp_path / name, "t_ok")
        assert _tables(ingest([src], tmp_path / f"o_{len(name)}")) == {"t_ok"}
    # as a further (attached) source too
    lake = ingest([_db(tmp_path / "first.sqlite", "first"), tricky], tmp_path / "o2")
    assert _tables(lake) == {"first", "mine"}


def test_column_names_in_words_take_linear_time() -> None:
    # (the old regex backtracked quadratically: ~27 s for 40,000 capitals, ~3 min for these
    # 100,000; a subprocess with a bound far above the linear cost, so no timing is measured)
    code = (
        "from clarisql.envs.synth.layers.common import human;"
        "assert human('A' * 100000 + 'b').endswith('a ab')"
    )
    subprocess.run([sys.executable, "-c", code], check=True, timeout=60)
