"""Deferred final-state digests (envs/state/deferred.py): same match decisions as full digests,
without hashing the image's unchanged tables (issue 14)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from clarisql.envs.sandbox.database import DatabaseImage
from clarisql.envs.state import digest as dg
from clarisql.envs.state.deferred import TableDelta, image_state, session_digest, session_state
from clarisql.envs.state.digest import (
    DigestConfig,
    connection_digest,
    sorted_state_hash,
)

from .conftest import build_small_db
from .test_digest import EDITS

# edits beyond test_digest's table: the same state reached another way (a full pass on one
# side, a delta on the other), reverted and self-cancelling writes, schema changes
MORE = [
    ["UPDATE sales SET price = 1 WHERE id = 3"],
    ["CREATE TABLE tmp(a)", "DROP TABLE tmp", "UPDATE sales SET price = 1 WHERE id = 3"],
    ["UPDATE sales SET price = price * 2", "UPDATE sales SET price = price / 2"],
    ["UPDATE sales SET price = 1 WHERE id = 3", "UPDATE tags SET n = n WHERE tag = 'a'"],
    ["INSERT INTO sales (id, price) VALUES (99, 5)", "DELETE FROM sales WHERE id = 99"],
    ["DELETE FROM cities WHERE id = 2", "INSERT INTO cities VALUES (2, 'Northport')"],
    ["CREATE TABLE tmp(a)", "DROP TABLE tmp"],
    ["DROP TABLE log", "CREATE TABLE log (msg TEXT, last_update TEXT)"],
    ["DELETE FROM log"],
    ["ALTER TABLE cities ADD COLUMN zone TEXT", "ALTER TABLE cities DROP COLUMN zone"],
    ["UPDATE sales SET price = 1 WHERE id = 3", "ALTER TABLE log ADD COLUMN x"],
    ["UPDATE log SET msg = 'z' WHERE msg = 'a'"],
]
ALL = EDITS + MORE


def _state(img: DatabaseImage, edits: list[str], cfg: DigestConfig) -> tuple[str, str, str]:
    """(state key, absolute digest, sort-and-hash of a full read) after ``edits``."""
    with img.session(True) as s:
        for sql in edits:
            assert s.execute(sql).ok, sql
        state = session_state(s, cfg)
        key = state.key()
        with s.trusted() as conn:
            full, naive = connection_digest(conn, cfg), sorted_state_hash(conn, cfg)
        assert state.absolute() == full == session_digest(s, cfg)
    return key, full, naive


@pytest.mark.parametrize(
    "cfg",
    [DigestConfig(), DigestConfig(count_only_tables=("log",), only_tables=("sales", "log"))],
    ids=["default", "only+count-only"],
)
def test_keys_make_the_same_match_decisions_as_full_digests(tmp_path: Path, cfg) -> None:
    img = DatabaseImage(build_small_db(tmp_path / "db.sqlite"))
    got = [_state(img, e, cfg) for e in ALL]
    for i, (ki, fi, ni) in enumerate(got):
        for j, (kj, fj, nj) in enumerate(got):
            assert (ki == kj) == (fi == fj) == (ni == nj), (ALL[i], ALL[j])
    # a state equal to the image has the image's key, in either direction
    base = image_state(img, cfg).key()
    for e, (k, f, _) in zip(ALL, got):
        assert (k == base) == (f == dg.image_digest(img, cfg)), e


def test_one_row_writes_hash_no_image_table(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    img = DatabaseImage(build_small_db(tmp_path / "db.sqlite"))
    passes: list[str] = []
    real = dg.table_digest

    def counting(conn, table, config):  # noqa: ANN001
        passes.append(table)
        return real(conn, table, config)

    monkeypatch.setattr(dg, "table_digest", counting)
    cfg = DigestConfig()
    with img.session(True) as s:
        s.execute("UPDATE sales SET price = 1 WHERE id = 7")
        s.execute("INSERT INTO kv VALUES ('z', 1, 2)")
        state = session_state(s, cfg)
        assert isinstance(state.parts["sales"], TableDelta)
        key = state.key()
        assert state.row_count("sales") == 30 and state.row_count("kv") == 4
        assert passes == [] and img.digest_cache.get(cfg.key()) in (None, {})
        with s.trusted() as conn:
            full = connection_digest(conn, cfg)
        assert state.absolute() == full  # the absolute value is still there when asked for
    with img.session(True) as s:  # the same writes in another order: the same key
        s.execute("INSERT INTO kv VALUES ('z', 1, 2)")
        s.execute("UPDATE sales SET price = 1 WHERE id = 7")
        assert session_state(s, cfg).key() == key


def test_a_full_pass_reads_only_that_tables_image_digest(tmp_path: Path) -> None:
    img = DatabaseImage(build_small_db(tmp_path / "db.sqlite"))
    cfg = DigestConfig()
    with img.session(True) as s:
        s.execute("UPDATE tags SET n = 0 WHERE tag IS NULL")  # nullable key: a full pass
        s.execute("UPDATE sales SET price = 1 WHERE id = 7")
        session_state(s, cfg).key()
    assert set(img.digest_cache[cfg.key()]) == {"tags"}


PROBE = """
import json, sys
from clarisql.envs.sandbox.database import DatabaseImage
from clarisql.envs.state.digest import DigestConfig
from clarisql.envs.state.deferred import session_state
img = DatabaseImage(sys.argv[1])
out = []
for edits in json.loads(sys.argv[2]):
    with img.session(True) as s:
        for sql in edits:
            s.execute(sql)
        out.append(session_state(s, DigestConfig()).key())
print(json.dumps(out))
"""


def test_keys_are_the_same_in_another_process(tmp_path: Path) -> None:
    db = build_small_db(tmp_path / "db.sqlite")
    sample = [MORE[0], MORE[1], EDITS[8], EDITS[9]]
    img = DatabaseImage(db)
    here = [_state(img, e, DigestConfig())[0] for e in sample]
    env = {**os.environ, "CLARISQL_CACHE_DIR": str(tmp_path / "other-cache")}
    out = subprocess.run(
        [sys.executable, "-c", PROBE, str(db), json.dumps(sample)],
        capture_output=True,
        text=True,
        env=env,
        timeout=120,
        check=True,
    )
    assert json.loads(out.stdout) == here
    assert here[0] == here[1]  # a delta on one side, a full pass on the other: the same state


ROW_OPS = st.one_of(
    st.tuples(st.just("ins"), st.integers(1, 8), st.sampled_from(["a", "b", None, 1, 1.0])),
    st.tuples(st.just("upd"), st.integers(1, 8), st.sampled_from(["a", "b", None, 1, 1.0])),
    st.tuples(st.just("del"), st.integers(1, 8), st.none()),
    st.tuples(st.just("add"), st.integers(1, 8), st.sampled_from(["a", "b"])),
)


def _sql(op: tuple) -> str:
    kind, k, v = op
    lit = "NULL" if v is None else repr(v) if not isinstance(v, str) else f"'{v}'"
    if kind == "ins":
        return f"INSERT OR REPLACE INTO cities VALUES ({k}, {lit})"
    if kind == "upd":
        return f"UPDATE cities SET name = {lit} WHERE id = {k}"
    if kind == "del":
        return f"DELETE FROM cities WHERE id = {k}"
    return f"INSERT INTO log (msg, last_update) VALUES ('{v}', 'x{k}')"  # no key, volatile column


@settings(
    max_examples=40, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(a=st.lists(ROW_OPS, max_size=6), g=st.lists(ROW_OPS, max_size=6))
def test_random_edits_agree_with_full_digests(tmp_path_factory, a, g) -> None:
    img = _IMG.get("img")
    if img is None:
        img = _IMG["img"] = DatabaseImage(build_small_db(tmp_path_factory.mktemp("h") / "db"))
    ka, fa, _ = _state(img, [_sql(o) for o in a], DigestConfig())
    kg, fg, _ = _state(img, [_sql(o) for o in g], DigestConfig())
    assert (ka == kg) == (fa == fg)


_IMG: dict[str, DatabaseImage] = {}


def _env(tmp_path: Path, **task_kw):
    from clarisql.envs.env import ClarifySQLEnv
    from clarisql.envs.tasks import save_tasks

    from .conftest import small_task

    build_small_db(tmp_path / "small.sqlite")
    task = small_task("write", "write/1")
    for k, v in task_kw.items():
        setattr(task, k, v)
    save_tasks([task], tmp_path / "tasks.jsonl")
    return ClarifySQLEnv(str(tmp_path / "tasks.jsonl"))


@pytest.mark.parametrize(
    "sql,correct",
    [
        ("INSERT INTO cities VALUES (3, 'Eastham')", True),
        ("INSERT INTO cities VALUES (3, 'Westham')", False),
        ("SELECT 1", False),
    ],
)
def test_episode_compares_changes_and_hashes_no_image_table(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, sql: str, correct: bool
) -> None:
    monkeypatch.setenv("CLARISQL_CACHE_DIR", str(tmp_path / "cache"))
    env = _env(tmp_path)
    env.reset(seed=0)
    env.step({"type": "execute", "sql": sql})
    _, _, term, _, info = env.step({"type": "stop"})
    ep = info["episode"]
    assert term and ep["correct"] is correct and "digest_error" not in ep
    rec = ep["record"]
    assert rec["final_digest"].startswith("delta:") and rec["gold_digest"].startswith("delta:")
    assert (rec["final_digest"] == rec["gold_digest"]) is correct
    (row,) = ep["state_diff"]["tables"]
    assert row["table"] == "cities" and row["initial_rows"] == 2 and row["gold_rows"] == 3
    assert row["final_rows"] == (2 if sql == "SELECT 1" else 3)
    assert row["matches_gold"] is correct and row["changed_by_agent"] is (sql != "SELECT 1")
    assert ep["state_diff"]["matches_gold"] is correct
    # nothing of the image was hashed: no digest cache was needed, in memory or on disk
    img = env.image_for(env.task)
    assert all(not v for v in img.digest_cache.values())
    assert not (tmp_path / "cache" / "digests").exists()


def test_a_task_with_an_absolute_gold_digest_gets_an_absolute_final_digest(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("CLARISQL_CACHE_DIR", str(tmp_path / "cache"))
    target = build_small_db(tmp_path / "target.sqlite")
    import apsw

    conn = apsw.Connection(str(target))
    conn.execute("INSERT INTO cities VALUES (3, 'Eastham')")
    gold = connection_digest(conn)
    conn.close()
    env = _env(tmp_path, gold_actions=[], gold_digest=gold)
    for sql, correct in [("INSERT INTO cities VALUES (3, 'Eastham')", True), ("SELECT 1", False)]:
        env.reset(seed=0)
        env.step({"type": "execute", "sql": sql})
        *_, info = env.step({"type": "stop"})
        assert info["episode"]["correct"] is correct
        assert not info["episode"]["record"]["final_digest"].startswith("delta:")


def _text_db(path: Path, encoding: str) -> Path:
    import apsw

    conn = apsw.Connection(str(path))
    conn.execute(f"PRAGMA encoding = '{encoding}'")
    conn.execute("CREATE TABLE t(id INTEGER PRIMARY KEY, s TEXT, x)")
    conn.execute("INSERT INTO t VALUES (1, 'héllo ✓', 1.5), (2, 'b', NULL), (3, '', x'00ff')")
    conn.close()
    return path


def test_row_text_hashes_the_same_in_utf8_and_utf16_databases(tmp_path: Path) -> None:
    imgs = [DatabaseImage(_text_db(tmp_path / f"{e}.sqlite", e)) for e in ("UTF-8", "UTF-16le")]
    cfg = DigestConfig()
    assert dg.image_digest(imgs[0], cfg) == dg.image_digest(imgs[1], cfg)
    keys = []
    for img in imgs:
        with img.session(True) as s:
            s.execute("UPDATE t SET s = 'wörld' WHERE id = 2")
            state = session_state(s, cfg)
            with s.trusted() as conn:
                assert state.absolute() == connection_digest(conn, cfg)
            keys.append(state.key())
    assert keys[0] == keys[1]


def test_text_that_is_not_valid_utf8_is_hashed_not_an_error(tmp_path: Path) -> None:
    img = DatabaseImage(_text_db(tmp_path / "db.sqlite", "UTF-8"))
    cfg = DigestConfig()
    with img.session(True) as s:
        s.execute("UPDATE t SET s = CAST(x'ff41' AS TEXT) WHERE id = 2")
        a = session_state(s, cfg)
        with s.trusted() as conn:
            assert a.absolute() == connection_digest(conn, cfg) != dg.image_digest(img, cfg)
    with img.session(True) as s:
        s.execute("UPDATE t SET s = CAST(x'ff42' AS TEXT) WHERE id = 2")
        assert session_state(s, cfg).key() != a.key()


def test_large_tables_row_counts_are_kept_on_disk(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from clarisql.envs.state import deferred as sd
    from clarisql.envs.state import digest_cache

    monkeypatch.setenv("CLARISQL_CACHE_DIR", str(tmp_path / "cache"))
    monkeypatch.setattr(sd, "_COUNT_ON_DISK_ROWS", 10)
    db = build_small_db(tmp_path / "db.sqlite")
    img = DatabaseImage(db)
    assert sd.image_row_count(img, "sales") == 30 and sd.image_row_count(img, "cities") == 2
    assert digest_cache.load_counts(img.content_key) == {"sales": 30}  # small ones: not worth it
    # another process (a new image object) reads the stored count instead of counting
    digest_cache.save_counts(img.content_key, {"sales": 31})
    assert sd.image_row_count(DatabaseImage(db), "sales") == 31
