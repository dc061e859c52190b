"""Integrity probes: their SQL rewrites (sqlglot), what write-until-stop would win from a leaking
user and cannot win from ours, and that every ablation report runs and checks every probe."""

from __future__ import annotations

import json
import warnings
from pathlib import Path

import pytest
import sqlite_utils

from clarisql.cli import main as cli_main
from clarisql.envs.env import ClarifySQLEnv
from clarisql.envs.simulators import STOP_TOKEN, InstructionSimulator, SimulatorReply
from clarisql.envs.state import gold
from clarisql.envs.state.deferred import session_state
from clarisql.envs.suites import DatabaseSpec, Suite, load_suite
from clarisql.envs.tasks import Task
from clarisql.policies import make_policy
from clarisql.policies.probes import (
    HONEST_MISS_VARIANTS,
    INTEGRITY_PROBES,
    literal_guesses,
    literal_tables,
    perturb_literal,
    strip_filter,
    write_candidates,
)
from clarisql.rollouts.episode import run_episode
from clarisql.rollouts.report import integrity_check

from .conftest import SHARED_DATA, need_shared

GOLD = "UPDATE items SET track = 2794 WHERE id = 460"


def test_sql_rewrites() -> None:
    assert strip_filter("SELECT sum(price) FROM s WHERE year = 2019 AND city = 'X'") == (
        "SELECT SUM(price) FROM s"
    )
    assert strip_filter("SELECT a FROM t GROUP BY a HAVING COUNT(*) > 1") == (
        "SELECT a FROM t GROUP BY a"
    )
    assert strip_filter("SELECT 1") == "SELECT 1" and strip_filter("SELEC (") is None
    assert strip_filter("DELETE FROM t WHERE id = 3") == "DELETE FROM t"
    assert perturb_literal(GOLD, 0) == "UPDATE items SET track = 2795 WHERE id = 460"
    assert perturb_literal(GOLD, 1) == "UPDATE items SET track = 2794 WHERE id = 461"
    assert perturb_literal("UPDATE t SET a = 'x'", 0) == "UPDATE t SET a = 'x (other)'"
    assert perturb_literal("DELETE FROM t", 0) is None
    cands = write_candidates([GOLD, "DELETE FROM t"])
    assert cands[0] == [GOLD, "DELETE FROM t"] and len(cands) == 3
    assert write_candidates(["DELETE FROM t"]) == [["DELETE FROM t"], []]
    assert literal_tables("SELECT a FROM t_x WHERE b = 1", "SELECT a FROM t_y") == (
        "SELECT a FROM t_y WHERE b = 1"
    )
    assert literal_guesses("How many 'Blue Whale' tickets in 2019?")[:2] == ["Blue Whale", "2019"]
    assert literal_guesses("how many?") == ["0"]


class LeakingUser(InstructionSimulator):
    """The leak this project closed, rebuilt for the test: STOP when the state equals the gold.
    It has to reach into the env, because the simulator API no longer hands it any state."""

    def __init__(self, env: ClarifySQLEnv):
        super().__init__("offline")
        self.env = env

    def respond(self, message, labels, ctx) -> SimulatorReply:
        env, task = self.env, self.env.task
        image = env.image_for(task)
        target = gold.gold_digest(task, image, env._digest_config)
        if session_state(env._session, env._digest_config).key() == target:
            return SimulatorReply(STOP_TOKEN, stop=True)
        return super().respond(message, labels, ctx)


def _mini(tmp_path: Path) -> Suite:
    db = sqlite_utils.Database(tmp_path / "mini.sqlite")
    db["items"].insert_all(
        [{"id": 460, "invoice": 86, "track": 2792}, {"id": 461, "invoice": 86, "track": 5}],
        pk="id",
    )
    db.close()
    task = Task(
        id="t/2",  # the probe's seeded order for this id tries the gold candidate first
        db="mini",
        utterance="Hi! I request to swap my track for TrackID 2794.",
        writable=True,
        category="write",
        gold_actions=[GOLD],
        instruction="You are Lucas, CustomerID 47. You request to swap InvoiceLineId 460 for "
        "TrackID 2794.",
    )
    spec = DatabaseSpec(name="mini", path=tmp_path / "mini.sqlite")
    return Suite("mini", [task], {"mini": spec}, {"simulator": "instruction", "max_turns": 30})


def _score(env: ClarifySQLEnv, policy: str) -> tuple[float, str]:
    res = run_episode(env, make_policy(policy), "t/2", seed=0)
    return res.summary["reward"], res.summary["record"]["end"]


def test_write_until_stop_wins_only_from_a_leaking_user(tmp_path: Path) -> None:
    env = ClarifySQLEnv(_mini(tmp_path), reward="dysql_state")
    replay, _ = _score(env, "replay")
    honest_user, end = _score(env, "write-until-stop")
    assert replay == 1.0 and honest_user == 0.0 and end == "truncated"  # played every candidate
    env.simulator = LeakingUser(env)
    leaked, end = _score(env, "write-until-stop")
    assert leaked == 1.0 and end == "user_stop"  # stopped right after the gold candidate
    flags = integrity_check(
        {"dysql_state": {"replay": replay, "write-until-stop": leaked}},
    )
    assert [f["flagged"] for f in flags] == [True]
    flags = integrity_check({"dysql_state": {"replay": replay, "write-until-stop": honest_user}})
    assert [f["flagged"] for f in flags] == [False]
    env.close()


def test_every_ablation_runs_every_probe_and_none_wins(tmp_path: Path) -> None:
    out = tmp_path / "abl"
    args = ["ablate", "--suite", "builtin", "--policies", "oracle", "--out", str(out)]
    args += ["--no-progress"]  # the whole suite (~8 s): a sample may hold no unclear write
    assert cli_main(args) == 0
    rep = json.loads((out / "ablation.json").read_text())
    assert rep["policies"] == ["oracle", *INTEGRITY_PROBES, *HONEST_MISS_VARIANTS]
    assert rep["probes_missing"] == []
    checked = {(f["spec"], f["degenerate"]) for f in rep["integrity"]}
    assert checked == {(s, p) for s in rep["specs"] for p in INTEGRITY_PROBES}
    assert not [f for f in rep["integrity"] if f["flagged"]]
    assert "FLAGGED" not in (out / "ablation.md").read_text()
    # the honest agent that misses one needed label in ten beats every probe under every
    # preset that charges unneeded clarification (``outcome`` does not: there the gate holds)
    miss = json.loads((out / "integrity_miss.json").read_text())
    assert miss and not [f for f in miss if f["flagged"] and f["spec"] != "outcome"]
    # exploring instead of asking solves no underspecified task of the built-in suite
    suite = load_suite("builtin")
    lines = (out / "runs" / "explore-without-clarifying" / "trajectories.jsonl").read_text()
    solved = [
        x["task_id"]
        for x in map(json.loads, lines.splitlines())
        if x["summary"]["correct"] and suite.task(x["task_id"]).underspecs
    ]
    assert solved == []


@pytest.mark.parametrize("probe", ["write-until-stop", "explore-without-clarifying"])
def test_gold_reading_probes_are_privileged(probe: str) -> None:
    assert make_policy(probe).privileged


def test_write_until_stop_loses_to_replay_on_dysql_under_every_preset(tmp_path: Path) -> None:
    data = need_shared(SHARED_DATA / "dysql" / "envs.json").parent
    out = tmp_path / "abl"
    args = ["ablate", "--suite", "dysql", "--data", str(data), "--out", str(out)]
    args += ["--policies", "replay", "write-until-stop", "--no-probes", "--no-progress"]
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        assert cli_main(args) == 0
    rep = json.loads((out / "ablation.json").read_text())
    assert rep["n_common_tasks"] == 162
    assert set(rep["specs"]) >= {"default", "dysql_state", "reliability_phi10", "clarify_costs"}
    for spec, scores in rep["scores"].items():
        assert scores["write-until-stop"] < scores["replay"], spec
    assert not [f for f in rep["integrity"] if f["flagged"]]
