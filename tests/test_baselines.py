"""Scripted baselines on the built-in suite have the outcomes the design promises."""

from __future__ import annotations

import pytest

from clarisql.envs.env import ClarifySQLEnv
from clarisql.policies import make_policy
from clarisql.rollouts.episode import run_episode
from clarisql.rollouts.metrics import records_from_results, summary_metrics


@pytest.fixture(scope="module")
def env(tmp_path_factory: pytest.TempPathFactory) -> ClarifySQLEnv:
    return ClarifySQLEnv("builtin", suite_kwargs={"cache_dir": tmp_path_factory.mktemp("cache")})


def run(env: ClarifySQLEnv, name: str) -> dict:
    policy = make_policy(name)
    results = [run_episode(env, policy, t.id, seed=i) for i, t in enumerate(env.suite.tasks)]
    return summary_metrics(records_from_results(results)) | {"results": results}


def test_oracle_is_perfect(env: ClarifySQLEnv) -> None:
    m = run(env, "oracle")
    bad = [r.task_id for r in m["results"] if not r.correct]
    assert bad == [], f"oracle failed on {bad[:10]}"
    assert m["pass@1"] == 1.0 and m["phi_10"] == 1.0
    # it clarifies exactly the underspecified tasks, and every clarification is earned
    for r in m["results"]:
        task = env.suite.task(r.task_id)
        turns = r.summary["record"]["turns"]
        clar = [t for t in turns if t["kind"] == "clarify"]
        assert len(clar) == (1 if task.underspecs and task.answerable else 0)
        assert all(t["earned"] and t["n_revealed"] == len(task.underspecs) for t in clar)


def test_answering_without_clarifying_scores_clearly_less(env: ClarifySQLEnv) -> None:
    m = run(env, "answer-without-clarifying")
    assert m["pass@1"] < 0.5
    assert m["phi_10"] < 0
    # it is right exactly on the well-specified tasks (and on writes that need no clarification)
    for r in m["results"]:
        task = env.suite.task(r.task_id)
        if task.answerable and not task.underspecs:
            assert r.correct, r.task_id
        elif task.underspecs or not task.answerable:
            assert not r.correct, r.task_id


def test_abstain_all_phi_equals_unanswerable_share(env: ClarifySQLEnv) -> None:
    m = run(env, "abstain-all")
    share = sum(not t.answerable for t in env.suite.tasks) / len(env.suite.tasks)
    assert m["phi_10"] == pytest.approx(share)
    assert m["phi_0"] == pytest.approx(share)


def test_random_policy_is_reproducible(env: ClarifySQLEnv) -> None:
    a = [
        run_episode(env, make_policy("random:3"), t.id, seed=1).reward for t in env.suite.tasks[:40]
    ]
    b = [
        run_episode(env, make_policy("random:3"), t.id, seed=1).reward for t in env.suite.tasks[:40]
    ]
    assert a == b
