"""The SUQL compiler keeps valid SQLite valid: row-id names survive its subquery rewrites."""

from __future__ import annotations

from pathlib import Path

import pytest

from clarisql.envs import SessionLimits, get_image
from clarisql.envs.suql import compile_sql, using

from .test_suql_ranked import ROMANTIC, _db


@pytest.mark.parametrize(
    "sql",
    [
        "SELECT rowid FROM r WHERE answer(reviews, 'is it good for a romantic evening?') = 'Yes' "
        "LIMIT 5",
        "SELECT r.oid, id FROM r WHERE ANSWER(reviews, 'is it good for a romantic evening?') "
        "= 'Yes' ORDER BY id LIMIT 5",
        "SELECT _rowid_ FROM r WHERE kind IN ('a', 'b') AND "
        "ANSWER(reviews, 'is it good for a romantic evening?') = 'Yes' LIMIT 5",
    ],
)
@pytest.mark.parametrize("embedder", ["none", "hashing"])
def test_rowid_survives_the_rewrite(tmp_path: Path, sql: str, embedder: str) -> None:
    img = get_image(_db(tmp_path / "r.sqlite"))
    for rank in (False, True):
        assert (
            compile_sql(sql, 0, rank=rank).sql.count("rowid")
            + compile_sql(sql, 0, rank=rank).sql.lower().count("oid")
            >= 1
        )
    with using(backend="offline", embedder=embedder) as cfg:
        cfg.cached.clear()
        with img.session(False, SessionLimits(timeout_s=30.0)) as s:
            res = s.execute(sql)
    assert res.ok, res.error
    assert {row[0] for row in res.rows} == ROMANTIC  # (id is the rowid alias here)


def test_a_declared_rowid_column_keeps_its_meaning(tmp_path: Path) -> None:
    import sqlite_utils

    db = sqlite_utils.Database(tmp_path / "d.sqlite")
    db.execute("CREATE TABLE t (rowid TEXT, note TEXT)")
    db["t"].insert_all(
        [{"rowid": f"r{i}", "note": "quiet place" if i % 2 else "loud"} for i in range(6)]
    )
    db.close()
    img = get_image(tmp_path / "d.sqlite")
    sql = "SELECT rowid FROM t WHERE ANSWER(note, 'is it quiet?') = 'Yes' ORDER BY note LIMIT 9"
    with using(backend="offline", embedder="none"):
        with img.session(False, SessionLimits(timeout_s=30.0)) as s:
            res = s.execute(sql)
    assert res.ok, res.error
    assert all(str(v).startswith("r") for (v,) in res.rows)
