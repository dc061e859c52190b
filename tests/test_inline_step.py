"""Inline steps (what ``clarisql serve`` takes on its event loop): the same result as ``step``,
or ``None`` with nothing changed when the step cannot finish within its slice."""

from __future__ import annotations

import json
import time
from pathlib import Path

import pytest
import sqlite_utils
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from clarisql.envs import SessionLimits, get_image
from clarisql.envs.env import ClarifySQLEnv
from clarisql.envs.suql import using
from clarisql.envs.tasks import save_tasks

from .conftest import build_small_db, small_task
from .test_fuzz_actions import SQL, structured, texts, tool_calls

SLOW_READ = (  # ~0.1 s here, thousands of progress-handler calls
    "WITH RECURSIVE r(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM r WHERE i < 800000) "
    "SELECT count(*) FROM r"
)
# one SQLite operation of ~0.1 s: the progress handler is not called inside it
ONE_LONG_OP = "SELECT instr(printf('%.*c', 999000, 'x'), printf('%.*c', 8000, 'x') || 'y')"


def _suite(tmp_path: Path) -> Path:
    build_small_db(tmp_path / "small.sqlite")
    tasks = [small_task("from", "read/from"), small_task("write", "write/1")]
    return save_tasks(tasks, tmp_path / "tasks.jsonl")


def _public(out: tuple) -> tuple:
    obs, reward, terminated, truncated, info = out
    info = {k: v for k, v in info.items() if k != "sql_time_s"}
    return obs, reward, terminated, truncated, json.dumps(info, sort_keys=True, default=str)


def _state(env: ClarifySQLEnv) -> tuple:
    return env._turn, env._dialogue, len(env.messages), len(env.record.turns), env._answer


def test_inline_steps_equal_steps(tmp_path: Path) -> None:
    suite = str(_suite(tmp_path))
    actions = [
        {"type": "execute", "sql": "SELECT name FROM cities ORDER BY id"},
        "not an action at all",
        {"type": "execute", "sql": "SELECT nope FROM cities"},
        {"type": "execute", "sql": "PRAGMA table_info(sales)"},
        {"type": "execute", "sql": "SELECT 1; SELECT 2"},
        {"type": "clarify", "question": "Which year?", "labels": [["", "year", "Missing"]]},
        {"type": "execute", "sql": "SELECT sum(price) FROM sales WHERE city_id = 1"},
        {"type": "stop"},
        {"type": "execute", "sql": "SELECT 1"},  # after the end
    ]
    for task_id in ("read/from", "write/1"):
        a, b = ClarifySQLEnv(suite, max_turns=20), ClarifySQLEnv(suite, max_turns=20)
        a.reset(options={"task_id": task_id})
        b.reset(options={"task_id": task_id})
        kinds = []
        for act in actions:
            out = a.step_inline(act, 1.0)
            kinds.append(out is not None)
            if out is None:
                out = a.step(act)
            assert _public(out) == _public(b.step(act)), act
        # executes, the invalid action and the step after the end ran inline; clarify and
        # stop (a model may answer; scoring runs SQL) did not
        assert kinds == [True, True, True, True, True, False, True, False, True]
        a.close()
        b.close()


def test_what_does_not_run_inline_changes_nothing(tmp_path: Path) -> None:
    suite = str(_suite(tmp_path))
    env = ClarifySQLEnv(suite, max_turns=3)
    env.reset(options={"task_id": "write/1"})
    before = _state(env)
    # a write, in a writable session (an interrupted write cannot simply be run again)
    assert env.step_inline({"type": "execute", "sql": "DELETE FROM cities"}, 1.0) is None
    assert env.step_inline({"type": "execute", "sql": "WITH x AS (SELECT 1) SELECT 1"}, 1) is None
    # a read that outlives its slice: stopped, nothing recorded
    assert env.step_inline({"type": "execute", "sql": SLOW_READ}, 0.001) is None
    assert _state(env) == before
    obs, *_, info = env.step({"type": "execute", "sql": SLOW_READ})  # the whole budget
    assert info["error"] is None and "800000" in obs["last"]
    env.step({"type": "execute", "sql": "SELECT 1"})
    # the last turn ends the episode (scoring): never inline
    assert env.step_inline({"type": "execute", "sql": "SELECT 1"}, 1.0) is None
    *_, truncated, info = env.step({"type": "execute", "sql": "SELECT 1"})
    assert truncated and "episode" in info
    env.close()


def test_slice_guard_stops_one_long_operation(tmp_path: Path) -> None:
    img = get_image(build_small_db(tmp_path / "small.sqlite"))
    with img.session(False, SessionLimits()) as s:
        t0 = time.perf_counter()
        res = s.execute(ONE_LONG_OP)
        alone = time.perf_counter() - t0
        assert res.ok and res.rows == [(0,)]
        # one SQLite function over long values cannot be interrupted: inline, values are capped
        # (INLINE_MAX_VALUE), so it is handed back at once instead of holding the caller
        t0 = time.perf_counter()
        assert s.execute_inline(ONE_LONG_OP, 5.0) is None
        assert time.perf_counter() - t0 < alone / 4
        # within the caps: stopped by the progress handler or the slice guard
        assert s.execute_inline(SLOW_READ, 0.001) is None
        # no stray interrupt or lowered limit reaches the next statements, inline or not
        assert s.execute_inline("SELECT 7", 1.0).rows == [(7,)]
        assert s.execute("SELECT length(printf('%.*c', 900000, 'x'))").rows == [(900000,)]


def test_big_values_results_and_writes_are_not_taken_inline(tmp_path: Path) -> None:
    img = get_image(build_small_db(tmp_path / "small.sqlite"))
    big = "WITH RECURSIVE r(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM r WHERE i < 5000) SELECT i FROM r"
    with img.session(False, SessionLimits()) as s:
        assert s.execute_inline(big, 1.0) is None  # 5,000 rows: formatted off the loop
        assert len(s.execute(big).rows) == 5000
        assert s.execute_inline("SELECT zeroblob(100000)", 1.0) is None  # a 100 KB value
        assert len(s.execute("SELECT zeroblob(100000)").rows[0][0]) == 100000
        assert s.execute_inline("SELECT 'ab' LIKE '%" + "a%" * 300 + "'", 1.0) is None
        assert s.execute("SELECT 'ab' LIKE '%" + "a%" * 300 + "'").ok
    with img.session(True, SessionLimits()) as s:
        assert s.execute_inline(b"DELETE FROM cities", 1.0) is None  # (bytes: not read as text)
        assert s.execute_inline(b"SELECT count(*) FROM cities", 1.0) is None
        assert s.execute("SELECT count(*) FROM cities").rows == [(2,)]


def test_model_calls_never_run_inline(tmp_path: Path) -> None:
    db = sqlite_utils.Database(tmp_path / "r.sqlite")
    db["r"].insert_all(
        [{"id": 1, "reviews": "A romantic spot."}, {"id": 2, "reviews": "Loud."}], pk="id"
    )
    db.close()
    img = get_image(tmp_path / "r.sqlite")
    q = "SELECT ANSWER(reviews, 'is it romantic?') FROM r ORDER BY id"
    with using(backend="offline", embedder="none"), img.session(True) as s:
        # named in the statement: declined at once (before and after the runtime exists)
        assert s.execute_inline(q, 1.0) is None
        assert s.execute_inline("SELECT suql_similarity(reviews, 'x') FROM r", 1.0) is None
        # hidden behind a temporary view (views of the image cannot call it: SQLite refuses
        # them as unsafe): the call itself stops the statement before any model is asked
        assert s.execute("CREATE TEMP VIEW tv AS " + q).ok
        assert s.execute_inline(q, 1.0) is None
        assert s.execute_inline("SELECT * FROM tv", 1.0) is None
        assert s.extensions["suql"].statements == []
        assert s.extensions["suql"].current.evaluations == 0
        res = s.execute("SELECT * FROM tv")
        assert res.ok and len(res.rows) == 2
        assert s.extensions["suql"].current.evaluations == 2


_NO_RANDOM = [q for q in SQL if "random" not in q and "RECURSIVE" not in q]
_fuzz_actions = (
    texts
    | structured
    | tool_calls
    | st.builds(lambda q: {"type": "execute", "sql": q}, st.sampled_from(_NO_RANDOM))
    | st.builds(lambda q: {"type": "stop", "sql": q}, st.sampled_from(_NO_RANDOM))
)


@pytest.fixture(scope="module")
def twin_envs(tmp_path_factory) -> tuple[ClarifySQLEnv, ClarifySQLEnv]:
    d: Path = tmp_path_factory.mktemp("twins")
    suite = str(_suite(d))
    a, b = ClarifySQLEnv(suite, max_turns=6), ClarifySQLEnv(suite, max_turns=6)
    yield a, b
    a.close()
    b.close()


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    st.sampled_from(["read/from", "write/1"]),
    st.sampled_from([1e-5, 1.0]),
    st.lists(_fuzz_actions, min_size=1, max_size=7),
)
def test_any_actions_inline_or_not_give_the_same_episode(twin_envs, task_id, slice_s, acts) -> None:
    a, b = twin_envs
    a.reset(options={"task_id": task_id})
    b.reset(options={"task_id": task_id})
    for raw in acts:
        out = a.step_inline(raw, slice_s)
        if out is None:
            out = a.step(raw)
        assert _public(out) == _public(b.step(raw))
        if out[2] or out[3]:
            break
