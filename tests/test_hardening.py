"""Regression tests for issue 17 (hardening): every reproducer of the issue, against real SQLite."""

from __future__ import annotations

import time
from pathlib import Path

import apsw
import pytest

from clarisql.envs.sandbox.database import DatabaseImage, SessionLimits
from clarisql.envs.sandbox.limits import Watchdog

from .conftest import sha256

BUDGET = 0.5
LIMITS = SessionLimits(timeout_s=BUDGET, max_rows=1000, max_growth_bytes=20_000_000)
# budget + 10 %, plus slack for a loaded 2-core CI machine
SLACK = BUDGET * 1.1 + 0.4
ENDLESS_INSERT = (
    "INSERT INTO j WITH RECURSIVE c(x) AS (SELECT 1 UNION ALL SELECT x + 1 FROM c) SELECT x FROM c"
)


def _timed(s, sql):
    t0 = time.monotonic()
    res = s.execute(sql)
    return res, time.monotonic() - t0


# --- D1: SQLite's own limits ------------------------------------------------------------------
def test_huge_value_refused_at_once(small_db: Path) -> None:
    img = DatabaseImage(small_db)
    before = apsw.memory_used()
    with img.session(True, LIMITS) as s:
        for _ in range(2):
            res, dt = _timed(s, "CREATE TABLE big AS SELECT randomblob(500000000)")
            assert not res.ok and res.error_kind == "too-big", res.error
            assert "at most 1000000 bytes" in res.error
            assert dt < SLACK
        assert s.execute("SELECT count(*) FROM sales").rows == [(30,)]
    assert apsw.memory_used() - before < 10_000_000


@pytest.mark.parametrize(
    "sql",
    [
        # the 12.9 s statement, with values just under the value cap
        "WITH RECURSIVE c(x) AS (SELECT 1 UNION ALL SELECT x+1 FROM c LIMIT 100000) "
        "SELECT sum(length(replace(hex(zeroblob(400000+x%10)),'0','00'))) FROM c",
        # a big sort of large values
        "WITH RECURSIVE c(x) AS (SELECT 1 UNION ALL SELECT x+1 FROM c LIMIT 3000000) "
        "SELECT x FROM c ORDER BY randomblob(64) LIMIT 1",
    ],
    ids=["heavy-ops", "big-sort"],
)
@pytest.mark.parametrize("writable", [False, True], ids=["read-only", "writable"])
def test_heavy_statements_stop_within_budget(small_db: Path, sql: str, writable: bool) -> None:
    img = DatabaseImage(small_db)
    with img.session(writable, LIMITS) as s:
        res, dt = _timed(s, sql)
        assert not res.ok and res.error_kind in ("timeout", "memory", "too-big"), res.error
        assert dt < SLACK, dt


def test_database_growth_is_capped_and_undone(small_db: Path) -> None:
    img = DatabaseImage(small_db)
    with img.session(True, SessionLimits(timeout_s=5, max_growth_bytes=5_000_000)) as s:
        assert s.execute("CREATE TABLE keep(a)").ok
        assert s.execute("INSERT INTO keep VALUES (1)").ok
        res = s.execute(
            "CREATE TABLE g AS WITH RECURSIVE c(x) AS (SELECT 1 UNION ALL SELECT x+1 FROM c "
            "LIMIT 100) SELECT randomblob(900000) AS b FROM c"
        )
        assert not res.ok and res.error_kind == "full", res.error
        res = s.execute(
            "CREATE TEMP TABLE tg AS WITH RECURSIVE c(x) AS (SELECT 1 UNION ALL SELECT x+1 FROM c "
            "LIMIT 100) SELECT randomblob(900000) AS b FROM c"
        )
        assert not res.ok and res.error_kind == "full", res.error
        # only the failing statement was undone
        assert s.execute("SELECT * FROM keep").rows == [(1,)]
        assert not s.execute("SELECT * FROM g").ok


def test_grown_session_is_not_pooled_and_memory_returns(small_db: Path) -> None:
    img = DatabaseImage(small_db)
    with img.session(True, SessionLimits(timeout_s=5)):
        pass  # warm the pool
    from clarisql.envs.sandbox.cow import overlay_bytes

    base = apsw.memory_used()
    with img.session(True, SessionLimits(timeout_s=5)) as s:
        res = s.execute(
            "CREATE TABLE g AS WITH RECURSIVE c(x) AS (SELECT 1 UNION ALL SELECT x+1 FROM c "
            "LIMIT 40) SELECT randomblob(900000) AS b FROM c"
        )
        assert res.ok, res.error
        # the session's private pages (copy-on-write overlay) hold the 36 MB it wrote
        grown = apsw.memory_used() - base + overlay_bytes(s.connection)
        assert grown > 30_000_000
        conn = s.connection
    assert apsw.memory_used() - base + overlay_bytes(conn) < 5_000_000
    # the next episode starts from the image
    with img.session(True, LIMITS) as s:
        assert not s.execute("SELECT * FROM g").ok
        assert s.execute("SELECT count(*) FROM sales").rows == [(30,)]


def test_watchdog_interrupts_and_cancel_prevents_it() -> None:
    dog = Watchdog()
    conn = apsw.Connection(":memory:")
    t0 = time.monotonic()
    dog.watch(conn, t0 + 0.2)
    with pytest.raises(apsw.InterruptError):
        conn.execute(
            "WITH RECURSIVE c(x) AS (SELECT 1 UNION ALL SELECT x+1 FROM c) SELECT count(*) FROM c"
        ).fetchall()
    assert time.monotonic() - t0 < 2.0
    token = dog.watch(conn, time.monotonic() + 0.05)
    dog.cancel(token)
    time.sleep(0.15)
    assert conn.execute("SELECT 1").fetchall() == [(1,)]


# --- D2, D3, D4: recovery after an interrupted write -------------------------------------------
def test_interrupted_write_keeps_temp_tables(small_db: Path) -> None:
    img = DatabaseImage(small_db)
    with img.session(True, LIMITS) as s:
        for sql in (
            "CREATE TABLE j(a)",
            "CREATE TEMP TABLE tt(a)",
            "INSERT INTO temp.tt VALUES (7)",
            "INSERT INTO j SELECT a FROM tt",
        ):
            assert s.execute(sql).ok, sql
        res, dt = _timed(s, ENDLESS_INSERT)
        assert res.error_kind == "timeout" and dt < SLACK
        assert s.execute("SELECT a FROM tt").rows == [(7,)]
        assert s.execute("SELECT a FROM j").rows == [(7,)]


def test_interrupted_write_does_not_change_seen_values(small_db: Path) -> None:
    img = DatabaseImage(small_db)
    with img.session(True, LIMITS) as s:
        assert s.execute("CREATE TABLE r AS SELECT random() AS v").ok
        assert s.execute("CREATE TABLE j(a UNIQUE)").ok
        (seen,) = s.execute("SELECT v FROM r").rows
        assert s.execute(ENDLESS_INSERT).error_kind in ("timeout", "full")
        res = s.execute("INSERT OR ROLLBACK INTO j VALUES (1), (1)")
        assert not res.ok and "UNIQUE" in res.error
        assert s.execute("SELECT v FROM r").rows == [seen]
        assert s.execute("SELECT count(*) FROM j").rows == [(0,)]


def test_recovery_time_does_not_grow_with_earlier_writes(small_db: Path) -> None:
    img = DatabaseImage(small_db)
    with img.session(True, SessionLimits(timeout_s=BUDGET, max_growth_bytes=200_000_000)) as s:
        assert s.execute("CREATE TABLE j(a)").ok
        for _ in range(4):
            res = s.execute(
                "INSERT INTO j WITH RECURSIVE c(x) AS (SELECT 1 UNION ALL SELECT x+1 FROM c "
                "LIMIT 50000) SELECT x FROM c"
            )
            assert res.ok and res.changes == 50000, res.error
        res, dt = _timed(s, ENDLESS_INSERT)
        assert res.error_kind == "timeout" and dt < SLACK, dt
        assert s.execute("SELECT count(*) FROM j").rows == [(200000,)]


# --- D5: per-statement change counts ------------------------------------------------------------
def test_change_counts_are_per_statement(small_db: Path) -> None:
    img = DatabaseImage(small_db)
    with img.session(True, LIMITS) as s:
        assert s.execute("UPDATE sales SET price = price + 1").changes == 30
    with img.session(True, LIMITS) as s:  # the pooled connection of the episode above
        for sql in (
            "CREATE TRIGGER trg AFTER INSERT ON cities BEGIN SELECT 1; END",
            "CREATE TABLE t(a)",
            "CREATE INDEX i ON t(a)",
            "DROP INDEX i",
        ):
            res = s.execute(sql)
            assert res.ok and res.changes == 0, (sql, res.changes)
        assert s.execute("DELETE FROM sales WHERE id <= 3").changes == 3
        assert s.execute("CREATE VIEW v AS SELECT 1").changes == 0
        assert s.execute("UPDATE sales SET price = 0 WHERE id < 0").changes == 0


# --- read-only refusals name the statement's operation -----------------------------------------
@pytest.mark.parametrize(
    "sql,name",
    [
        ("DROP TABLE sales", "DROP TABLE"),
        ("CREATE VIEW v AS SELECT 1", "CREATE VIEW"),
        ("CREATE TABLE t(a)", "CREATE TABLE"),
        ("CREATE UNIQUE INDEX i ON sales(project)", "CREATE INDEX"),
        ("ALTER TABLE sales RENAME TO s2", "ALTER TABLE"),
        ("CREATE TRIGGER tr AFTER INSERT ON sales BEGIN SELECT 1; END", "CREATE TRIGGER"),
        ("DELETE FROM sales", "DELETE"),
        ("INSERT INTO cities VALUES (9, 'x')", "INSERT"),
        ("UPDATE sales SET price = 1", "UPDATE"),
    ],
)
def test_read_only_refusal_names_operation(small_db: Path, sql: str, name: str) -> None:
    before = sha256(small_db)
    with DatabaseImage(small_db).session(False, LIMITS) as s:
        res = s.execute(sql)
        assert not res.ok and res.error_kind == "refused"
        assert f"{name} is not allowed" in res.error, res.error
    assert sha256(small_db) == before


# --- D6: the episode is recorded even when the final digest fails ------------------------------
def _write_env(tmp_path: Path, **kw):
    from clarisql.envs.env import ClarifySQLEnv
    from clarisql.envs.tasks import save_tasks

    from .conftest import build_small_db, small_task

    build_small_db(tmp_path / "small.sqlite")
    save_tasks([small_task("write", "write/1")], tmp_path / "tasks.jsonl")
    return ClarifySQLEnv(str(tmp_path / "tasks.jsonl"), **kw)


def test_large_values_digest_at_the_end(tmp_path: Path) -> None:
    env = _write_env(tmp_path)
    env.reset(seed=0)
    _, _, _, _, info = env.step(
        {"type": "execute", "sql": "UPDATE cities SET name = randomblob(999000) WHERE id = 1"}
    )
    assert info["error"] is None
    _, _, term, _, info = env.step({"type": "stop"})
    assert term and info["episode"]["record"]["final_digest"]
    assert "digest_error" not in info["episode"]


def test_failing_final_digest_still_records_the_episode(tmp_path: Path, monkeypatch) -> None:
    import clarisql.envs.env as env_mod

    def too_big(*a, **k):
        raise apsw.TooBigError("string or blob too big")

    env = _write_env(tmp_path)
    env.reset(seed=0)
    monkeypatch.setattr(env_mod, "session_state", too_big)
    _, reward, term, _, info = env.step({"type": "stop"})
    assert term and "episode" in info
    assert "TooBigError" in info["episode"]["digest_error"]
    assert info["error"] == info["episode"]["digest_error"]
    assert info["episode"]["correct"] is False and reward == reward  # not NaN


# --- D7, D8, D9: the action parser is linear and total -----------------------------------------
MALFORMED = {
    "tool-call-whitespace": "<tool_call>x" + " " * 200_000 + "y",
    "deep-json": '{"type":' * 100_000,
    "deep-json-in-tag": "<tool_call>" + '{"name":' * 100_000,
    "deep-list": '{"type": "clarify", "labels": ' + "[" * 100_000,
    "huge-int": '{"type": "abstain", "reason": ' + "9" * 5000 + "}",
    "huge-int-in-tag": '<tool_call>{"name": "abstain", "arguments": {"reason": '
    + "9" * 5000
    + "}}</tool_call>",
    "many-braces": "{" * 500_000,
    "many-fences": "```json\n{" * 100_000,
    "many-quotes": '{"a": "' * 100_000,
    "junk-1mb": "".join(chr(32 + (i * 7919) % 90) for i in range(1_000_000)),
    "too-long": "x" * 1_000_001,
    "think-tags": "<tool_call><tool_call>" * 50_000,
}


@pytest.mark.parametrize("name", list(MALFORMED))
def test_malformed_text_is_an_action_error_in_linear_time(name: str) -> None:
    from clarisql.envs.actions import ActionError, parse_action
    from clarisql.envs.spaces import ActionSpace

    t0 = time.monotonic()
    with pytest.raises(ActionError):
        parse_action(MALFORMED[name])
    assert ActionSpace().contains(MALFORMED[name]) is False
    assert time.monotonic() - t0 < 2.0


def _deep(n: int):
    x: object = []
    for _ in range(n):
        x = [x]
    return x


@pytest.mark.parametrize(
    "action",
    [
        {"type": "execute", "sql": 10**5000},
        {"type": "clarify", "question": "?", "labels": _deep(50_000)},
        {"type": _deep(50_000)},
        {"type": "execute", "sql": _deep(50_000)},
        {"name": "stop", "arguments": _deep(50_000)},
        {("t",): 1},
    ],
    ids=["huge-int-sql", "deep-labels", "deep-type", "deep-sql", "deep-args", "tuple-key"],
)
def test_malformed_structured_actions_are_invalid_observations(tmp_path: Path, action) -> None:
    from clarisql.envs.spaces import ActionSpace

    ActionSpace().contains(action)  # never raises
    env = _write_env(tmp_path)
    env.reset(seed=0)
    obs, _, term, trunc, info = env.step(action)
    assert not term and not trunc, info["error"]
    assert "internal error" not in (info["error"] or "")
    # the episode goes on
    _, _, term, _, info = env.step({"type": "execute", "sql": "SELECT 1"})
    assert info["error"] is None and not term


def test_huge_int_reason_is_shortened() -> None:
    from clarisql.envs.actions import parse_action

    act = parse_action({"type": "abstain", "reason": 10**5000})
    assert act.type == "abstain" and len(act.reason) < 2000


# --- D12, D13 and bad CLI inputs: one clear line, exit status 2, nothing run ------------------
def _corrupt(kind: str, db: Path) -> None:
    import os

    data = db.read_bytes()
    if kind == "truncated":
        db.write_bytes(data[: len(data) // 3])
    elif kind == "random":
        db.write_bytes(os.urandom(len(data)))
    elif kind == "header-only":
        db.write_bytes(data[:100])
    elif kind == "empty-ish":
        db.write_bytes(b"SQLite format 3\x00")
    elif kind == "directory":
        db.unlink()
        db.mkdir()


@pytest.mark.parametrize("kind", ["truncated", "random", "header-only", "empty-ish"])
def test_corrupt_database_is_a_clear_error(tmp_path: Path, kind: str) -> None:
    from clarisql.envs.sandbox.database import DatabaseFileError

    from .conftest import build_small_db

    db = build_small_db(tmp_path / "small.sqlite")
    _corrupt(kind, db)
    with pytest.raises(DatabaseFileError, match="not a valid SQLite database") as e:
        DatabaseImage(db)
    assert str(db) in str(e.value) and "\n" not in str(e.value)


def _suite(tmp_path: Path, corrupt: str | None = None) -> Path:
    from clarisql.envs.tasks import save_tasks

    from .conftest import build_small_db, small_task

    tmp_path.mkdir(parents=True, exist_ok=True)
    db = build_small_db(tmp_path / "small.sqlite")
    if corrupt:
        _corrupt(corrupt, db)
    return save_tasks([small_task("count", "c/1")], tmp_path / "tasks.jsonl")


CLI_CASES = {
    "truncated-db": (["--suite", "{truncated}"], "not a valid SQLite database"),
    "random-db": (["--suite", "{random}"], "not a valid SQLite database"),
    "header-only-db": (["--suite", "{header-only}"], "not a valid SQLite database"),
    "db-is-directory": (["--suite", "{directory}"], "is a directory"),
    "empty-task-file": (["--suite", "{empty}"], "holds no tasks"),
    "binary-task-file": (["--suite", "{binary}"], "not UTF-8"),
    "nan-weight": (["--suite", "{good}", "--rewards", "{nan}"], "finite"),
    "inf-weight": (["--suite", "{good}", "--rewards", "{inf}"], "finite"),
    "out-is-a-file": (["--suite", "{good}", "--out", "{afile}"], "is not a folder"),
    "bad-random-seed": (["--suite", "{good}", "--policy", "random:abc"], "integer SEED"),
    "missing-task-file": (["--suite", "{tmp}/none.jsonl"], "does not exist"),
}


@pytest.mark.parametrize("case", list(CLI_CASES))
def test_bad_cli_input_is_one_line_and_status_2(tmp_path: Path, capsys, case: str) -> None:
    from clarisql.cli import main

    paths = {"tmp": str(tmp_path), "good": str(_suite(tmp_path / "good"))}
    for kind in ("truncated", "random", "header-only", "directory"):
        paths[kind] = str(_suite(tmp_path / kind, kind))
    (tmp_path / "empty.jsonl").write_text("")
    (tmp_path / "binary.jsonl").write_bytes(b"\xff\xfe\x00garbage")
    (tmp_path / "nan.yaml").write_text("name: x\ncomponents:\n  outcome: .nan\n")
    (tmp_path / "inf.yaml").write_text("name: x\ncomponents:\n  turn: -.inf\n")
    (tmp_path / "afile").write_text("")
    paths.update(
        empty=str(tmp_path / "empty.jsonl"),
        binary=str(tmp_path / "binary.jsonl"),
        nan=str(tmp_path / "nan.yaml"),
        inf=str(tmp_path / "inf.yaml"),
        afile=str(tmp_path / "afile"),
    )
    extra, needle = CLI_CASES[case]
    argv = ["eval", "--policy", "oracle", "--out", str(tmp_path / "out"), "--no-progress"]
    argv += [a.format(**paths) for a in extra]
    assert main(argv) == 2
    err = capsys.readouterr().err.strip()
    assert needle in err and "\n" not in err, err
    assert not (tmp_path / "out" / "trajectories.jsonl").exists()


def test_non_finite_reward_weights_refused() -> None:
    from clarisql.rewards.spec import RewardSpec, RewardSpecError

    for w in (float("nan"), float("inf"), -float("inf"), 10**400):
        with pytest.raises(RewardSpecError, match="finite"):
            RewardSpec({"outcome": w})
    with pytest.raises(RewardSpecError, match="finite"):
        RewardSpec({"outcome": 1.0}, c=float("nan"))


def test_final_digest_is_bounded_by_the_step_budget(tmp_path: Path) -> None:
    # (robust on a busy machine: the table is built under a generous budget, the final digest
    # then gets a small one, and the cost is checked in this thread's CPU time, not wall time)
    import dataclasses

    env = _write_env(tmp_path, limits=SessionLimits(timeout_s=60.0))
    env.reset(seed=0)
    assert env.step({"type": "execute", "sql": "CREATE TABLE j(a)"})[4]["error"] is None
    for _ in range(8):
        _, _, _, _, info = env.step(
            {
                "type": "execute",
                "sql": "INSERT INTO j WITH RECURSIVE c(x) AS (SELECT 1 UNION ALL SELECT x+1 "
                "FROM c LIMIT 60000) SELECT x FROM c",
            }
        )
        assert info["error"] is None, info["error"]
    budget = 0.05
    env.limits = dataclasses.replace(env.limits, timeout_s=budget)
    t0 = time.thread_time()
    _, _, term, _, info = env.step({"type": "stop"})
    assert term and time.thread_time() - t0 < budget * 1.1 + 0.5
    assert "step budget" in info["episode"]["digest_error"]
    assert info["episode"]["record"]["final_digest"] is None and not info["episode"]["correct"]


def test_huge_plain_text_is_not_sent_to_the_user(tmp_path: Path) -> None:
    env = _write_env(tmp_path, plain_text="message")
    env.reset(seed=0)
    t0 = time.monotonic()
    _, _, term, _, info = env.step(MALFORMED["junk-1mb"])
    assert time.monotonic() - t0 < 1.0 and not term
    assert "longer than 8000 characters" in info["error"]
    _, _, _, _, info = env.step("Which city do you mean?")  # a normal message still goes through
    assert info["error"] is None and info["action"]["type"] == "clarify"
    with pytest.raises(Exception, match="longer than 8000"):
        from clarisql.envs.actions import parse_action

        parse_action({"type": "clarify", "question": "x" * 8001})


# --- connection-level counters are per episode ------------------------------------------------
def test_connection_counters_start_at_zero_every_episode(small_db: Path) -> None:
    """changes(), total_changes() and last_insert_rowid() of a pooled connection must not show
    what an earlier episode (another session's) did."""
    img = DatabaseImage(small_db)
    probe = "SELECT changes(), total_changes(), last_insert_rowid()"
    with img.session(True, LIMITS) as s:
        assert s.execute("INSERT INTO cities VALUES (77, 'Elsewhere')").ok
        assert s.execute("UPDATE sales SET price = price + 1").changes == 30
        assert [list(r) for r in s.execute(probe).rows] == [[30, 31, 77]]
    for writable in (True, False):
        with img.session(writable, LIMITS) as s:  # the pooled connection of the episode above
            assert [list(r) for r in s.execute(probe).rows] == [[0, 0, 0]], writable
    with img.session(True, LIMITS) as s:
        assert s.execute("DELETE FROM sales WHERE id <= 2").changes == 2
        assert [list(r) for r in s.execute(probe).rows] == [[2, 2, 0]]


def test_an_idle_write_session_holds_its_changed_pages_not_a_copy(tmp_path: Path) -> None:
    """Counted in bytes SQLite and the overlay report, not in RSS: a writable session over a
    ~25 MB database that wrote one row and read every page holds a few changed pages and a
    page cache bounded by SQLite's cache size, never a copy of the database."""
    from clarisql.envs.sandbox.cow import overlay_bytes

    path = tmp_path / "big.sqlite"
    conn = apsw.Connection(str(path))
    conn.execute(
        "CREATE TABLE t(id INTEGER PRIMARY KEY, v TEXT); WITH RECURSIVE c(x) AS (SELECT 1 "
        "UNION ALL SELECT x+1 FROM c LIMIT 100000) INSERT INTO t SELECT x, hex(randomblob(120)) "
        "FROM c"
    )
    conn.close()
    img = DatabaseImage(path)
    assert img.size_bytes > 20_000_000
    generous = SessionLimits(timeout_s=120.0)  # (a busy machine must not stop the scan)
    sessions = [img.session(True, generous) for _ in range(4)]
    for s in sessions:
        assert s.execute("INSERT INTO t(v) VALUES ('x')").ok
        assert s.execute("SELECT count(*), sum(length(v)) FROM t").rows[0][0] == 100_001
    for s in sessions:
        c = s.connection
        assert overlay_bytes(c) <= 16 * img.page_size  # the pages the INSERT changed
        cache = c.status(apsw.SQLITE_DBSTATUS_CACHE_USED)[0]
        assert cache < 4_000_000 < img.size_bytes  # SQLite's bounded page cache
    for s in sessions:
        s.close()
