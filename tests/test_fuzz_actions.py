"""Property-based fuzzing (hypothesis) of action parsing and of whole episodes.

Properties: :func:`parse_action` returns an :class:`Action` or raises :class:`ActionError`,
nothing else; ``ActionSpace.contains`` returns a bool; ``env.step`` never raises, never ends an
episode by "internal error", and a step's SQL stays within the time budget. Sized to run in CI
in well under a minute.
"""

from __future__ import annotations

import time
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from clarisql.envs.actions import Action, ActionError, parse_action
from clarisql.envs.env import ClarifySQLEnv
from clarisql.envs.sandbox.database import SessionLimits
from clarisql.envs.spaces import ActionSpace
from clarisql.envs.tasks import save_tasks

from .conftest import build_small_db, small_task

FRAGMENTS = [
    "<tool_call>", "</tool_call>", "```", "```json\n", "```sql\n", "{", "}", "[", "]", '"', ":",
    ",", '"type"', '"name"', '"arguments"', '"sql"', '"execute_sql"', '"stop"', '"abstain"',
    '"ask_user"', '"question"', '"labels"', '"intent"', "null", "9" * 40, " " * 300, "\n", "\\",
    "<think>", "SELECT 1",
]  # fmt: skip
SQL = [
    "SELECT * FROM sales LIMIT 3", "SELECT random()", "DELETE FROM sales WHERE id % 5 = 0",
    "CREATE TEMP TABLE IF NOT EXISTS tmp(a)", "INSERT INTO temp.tmp VALUES (random())",
    "CREATE TABLE IF NOT EXISTS z(a)", "INSERT INTO z SELECT randomblob(900000)",
    "DROP TABLE IF EXISTS z", "BEGIN", "SAVEPOINT s", "ROLLBACK", "PRAGMA writable_schema=1",
    "SELECT 1; SELECT 2", "SELEC", "", "SELECT zeroblob(2000000)", "CREATE VIEW v AS SELECT 1",
    "INSERT INTO z WITH RECURSIVE c(x) AS (SELECT 1 UNION ALL SELECT x+1 FROM c) SELECT x FROM c",
]  # fmt: skip

texts = st.lists(st.sampled_from(FRAGMENTS) | st.text(max_size=12), max_size=25).map("".join)
json_values = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats() | st.text(max_size=10),
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=8), inner),
    max_leaves=10,
)
keys = st.sampled_from(["type", "name", "arguments", "sql", "question", "labels", "reason"])
structured = st.dictionaries(
    keys, st.sampled_from(["execute", "stop", "clarify", "abstain", "ask_user"]) | json_values
)
tool_calls = st.builds(
    lambda name, args: f'<tool_call>{{"name": "{name}", "arguments": {args}}}</tool_call>',
    st.sampled_from(["execute_sql", "stop", "ask_user", "abstain", "dance"]),
    texts,
)
actions = (
    texts
    | structured
    | tool_calls
    | st.builds(lambda q: {"type": "execute", "sql": q}, st.sampled_from(SQL))
)


@settings(max_examples=400, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(actions)
def test_parse_action_is_total(raw) -> None:
    try:
        act = parse_action(raw)
    except ActionError:
        assert ActionSpace().contains(raw) is False
    else:
        assert isinstance(act, Action)
        assert ActionSpace().contains(raw) is True


@pytest.fixture(scope="module")
def fuzz_env(tmp_path_factory) -> ClarifySQLEnv:
    d: Path = tmp_path_factory.mktemp("fuzz")
    build_small_db(d / "small.sqlite")
    tasks = [small_task("write", "w/1"), small_task("from", "r/1"), small_task("poem", "u/1")]
    save_tasks(tasks, d / "tasks.jsonl")
    env = ClarifySQLEnv(str(d / "tasks.jsonl"), limits=SessionLimits(timeout_s=0.2))
    yield env
    env.close()


BUDGET_SLACK = 0.2 * 1.1 + 0.5  # budget + 10 %, plus slack for a loaded CI machine


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.integers(0, 2), st.lists(actions, min_size=1, max_size=8))
def test_episodes_survive_any_actions(fuzz_env: ClarifySQLEnv, task_index: int, acts) -> None:
    fuzz_env.reset(seed=0, options={"task_index": task_index})
    for raw in acts:
        t0 = time.monotonic()
        _, reward, term, trunc, info = fuzz_env.step(raw)
        assert time.monotonic() - t0 < BUDGET_SLACK + (0.5 if term or trunc else 0.0)
        assert "internal error" not in str(info.get("error") or ""), info.get("error")
        assert reward == reward  # not NaN
        if term or trunc:
            assert "episode" in info
            break


@given(st.text(max_size=200))
@settings(max_examples=200, deadline=None)
def test_execute_text_is_the_general_encoding(sql: str) -> None:
    import json

    from clarisql.envs.actions import TOOL_NAMES

    act = Action("execute", sql=sql)
    general = json.dumps(
        {"name": TOOL_NAMES["execute"], "arguments": {"sql": sql}}, ensure_ascii=False
    )
    assert act.to_text() == f"<tool_call>{general}</tool_call>"
