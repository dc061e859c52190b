"""``hf:`` evaluation bounded by an episode token budget, with progress lines."""

from __future__ import annotations

import pytest

from clarisql.envs.env import ClarifySQLEnv
from clarisql.policies import make_policy
from clarisql.rollouts.episode import run_episode

from ._train_fixtures import ENV_KW, FORMAT, needs_train, task_file, tiny_model_dir

pytestmark = pytest.mark.train


@needs_train
def test_episode_token_budget_stops_the_episode(capsys: pytest.CaptureFixture[str]) -> None:
    d = tiny_model_dir()
    policy = make_policy(
        f"hf:{d}",
        format=FORMAT,
        max_new_tokens=16,
        max_episode_tokens=20,
        progress=True,
        progress_s=0.0,
    )
    env = ClarifySQLEnv(str(task_file()), **{**ENV_KW, "max_turns": 12})
    res = run_episode(env, policy, "r/where", seed=0)
    env.close()
    assert policy.stats["tokens"] <= 20  # no action is given more than what is left
    if policy.stats["budget_stops"]:  # the random model may also have stopped by itself
        assert res.turns[-1]["action"] == {"type": "stop", "sql": None}
        assert len(res.turns) < 12
    assert policy.stats["actions"] >= 1
    err = capsys.readouterr().err
    assert "tokens generated" in err and "tokens/s" in err


@needs_train
def test_budget_is_per_episode() -> None:
    d = tiny_model_dir()
    policy = make_policy(f"hf:{d}", format=FORMAT, max_new_tokens=8, max_episode_tokens=8)
    env = ClarifySQLEnv(str(task_file()), **{**ENV_KW, "max_turns": 6})
    first = run_episode(env, policy, "r/ok1", seed=0)
    second = run_episode(env, policy, "r/ok1", seed=0)
    env.close()
    # the second episode starts with a fresh budget: the same greedy actions again
    assert [t["action"] for t in first.turns] == [t["action"] for t in second.turns]
    assert len(first.turns) <= 2


def test_bad_budget_is_refused() -> None:
    pytest.importorskip("torch")
    d = tiny_model_dir()
    with pytest.raises(ValueError, match="max_episode_tokens"):
        make_policy(f"hf:{d}", format=FORMAT, max_episode_tokens=0)
