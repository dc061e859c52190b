"""ODUTQA's tables are stored in an order that depends on the rows' values, not on the gold."""

from __future__ import annotations

import sqlite3

from clarisql.envs.suites.odutqa.db import store_shuffled

ROWS = [(f"企业{i}", 2019 + i % 4, float(i * 7 % 13)) for i in range(40)]


def _stored(rows: list[tuple]) -> list[tuple]:
    conn = sqlite3.connect(":memory:")
    conn.execute("CREATE TABLE t (name TEXT, year INTEGER, value REAL)")
    conn.executemany("INSERT INTO t VALUES (?, ?, ?)", rows)
    store_shuffled(conn, ["t"])
    return conn.execute("SELECT rowid, * FROM t ORDER BY rowid").fetchall()


def test_storage_order_ignores_insertion_order() -> None:
    gold_first = _stored(ROWS)
    gold_last = _stored(ROWS[::-1])
    assert gold_first == gold_last
    assert [r[0] for r in gold_first] == list(range(1, 41))
    assert sorted(r[1:] for r in gold_first) == sorted(ROWS)


def test_planted_gold_rows_are_not_first() -> None:
    # the first 5 rows planned are the "gold": after storing, the first rows are others
    stored = _stored(ROWS)
    firsts = {r[1] for r in stored[:5]}
    assert len(firsts & {r[0] for r in ROWS[:5]}) <= 2
