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


def test_eval_cli_passes_budget_and_progress_to_hf_only() -> None:
    from clarisql.cli import build_parser
    from clarisql.rollouts.commands import _config

    p = build_parser()
    args = p.parse_args(
        [
            "eval",
            "--suite",
            "builtin",
            "--policy",
            "hf:x",
            "--out",
            "o",
            "--max-episode-tokens",
            "64",
        ]
    )
    kw = _config(args, args.policy, args.rewards).policy_kwargs
    assert kw["max_episode_tokens"] == 64 and kw["progress"] is True
    args = p.parse_args(
        ["eval", "--suite", "builtin", "--policy", "hf:x", "--out", "o", "--no-progress"]
    )
    assert _config(args, args.policy, args.rewards).policy_kwargs["progress"] is False
    args = p.parse_args(["eval", "--suite", "builtin", "--policy", "oracle", "--out", "o"])
    kw = _config(args, args.policy, args.rewards).policy_kwargs
    assert "progress" not in kw and "max_episode_tokens" not in kw


@needs_train
def test_threads_option_sets_torch_threads() -> None:
    import torch

    before = torch.get_num_threads()
    try:
        make_policy(f"hf:{tiny_model_dir()}", format=FORMAT, threads=1)
        assert torch.get_num_threads() == 1
    finally:
        torch.set_num_threads(before)
