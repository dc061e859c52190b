"""Rewards are pure functions of episode records."""

from __future__ import annotations

from pathlib import Path

import pytest

from clarisql.rewards import (
    EpisodeRecord,
    RewardSpec,
    RewardSpecError,
    TurnRecord,
    execution_match,
    is_correct,
    load_reward_spec,
    reliability,
    reliability_score,
    score_episode,
)
from clarisql.rewards.spec import preset_dir


def test_execution_match_multiset_and_order() -> None:
    gold = [[1, "a"], [2, "b"], [2, "b"]]
    assert execution_match([[2, "b"], [1, "a"], [2, "b"]], gold)
    assert not execution_match([[2, "b"], [1, "a"]], gold)  # multiplicity
    assert not execution_match([[2, "b"], [1, "a"], [1, "a"]], gold)
    assert not execution_match([[2, "b"], [1, "a"], [2, "b"]], gold, ordered=True)
    assert execution_match([[1, "a"], [2, "b"], [2, "b"]], gold, ordered=True)


def test_execution_match_numbers_and_types() -> None:
    assert execution_match([[1.0]], [[1]])
    assert execution_match([[0.1 + 0.2]], [[0.3]])
    assert execution_match([[1234567.0000001]], [[1234567.0]])
    assert not execution_match([[1.01]], [[1.0]])
    assert not execution_match([["1"]], [[1]])  # text is not a number
    assert not execution_match([[None]], [[0]])
    assert not execution_match([[1, 2]], [[1]])


def test_failed_query_never_matches_even_empty_gold() -> None:
    assert not execution_match(None, [])
    assert execution_match([], [])


def rec(**kw) -> EpisodeRecord:
    base = dict(
        task_id="t", category="x", answerable=True, writable=False, gold_rows=[[1]], end="stop"
    )
    base.update(kw)
    return EpisodeRecord(**base)


@pytest.mark.parametrize(
    "kw,correct,phi0,phi10",
    [
        (dict(answer_rows=[[1]]), True, 1, 1),
        (dict(answer_rows=[[2]]), False, 0, -10),
        (dict(answer_rows=None), False, 0, 0),  # a stop with no SQL at all: abstention
        (dict(answer_rows=None, turns=[TurnRecord("execute", sql_error=True)]), False, 0, -10),
        (dict(answer_rows=[[1]], answer_truncated=True), False, 0, -10),
        (dict(answer_rows=[[1]], end="truncated"), False, 0, -10),
        (dict(end="abstain"), False, 0, 0),
        (
            dict(answerable=False, unanswerable_kind="non-sql", gold_rows=None, end="abstain"),
            True,
            1,
            1,
        ),
        (
            dict(answerable=False, unanswerable_kind="non-sql", gold_rows=None, answer_rows=[[1]]),
            False,
            0,
            -10,
        ),
        (dict(writable=True, gold_rows=None, final_digest="a", gold_digest="a"), True, 1, 1),
        (dict(writable=True, gold_rows=None, final_digest="a", gold_digest="b"), False, 0, -10),
        (
            dict(writable=True, gold_rows=None, final_digest="a", gold_digest="a", end="abstain"),
            False,
            0,
            0,
        ),
    ],
)
def test_correctness_and_reliability(kw, correct, phi0, phi10) -> None:
    r = rec(**kw)
    assert is_correct(r) is correct
    assert reliability(r, 0) == phi0
    assert reliability(r, 10) == phi10


def test_phi_n_uses_task_count() -> None:
    rs = [
        rec(task_id="a", answer_rows=[[1]]),
        rec(task_id="b", answer_rows=[[2]]),
        rec(task_id="c", end="abstain"),
    ]
    assert reliability_score(rs, "N") == pytest.approx((1 - 3 + 0) / 3)
    assert reliability_score(rs, 0) == pytest.approx(1 / 3)


def test_spec_components_and_totals() -> None:
    spec = load_reward_spec("clarify_costs")
    r = rec(
        answer_rows=[[1]],
        turns=[
            TurnRecord("clarify", earned=True),
            TurnRecord("clarify", earned=False),
            TurnRecord("invalid", valid=False),
            TurnRecord("execute", sql_error=True),
            TurnRecord("stop"),
        ],
    )
    total, comps = score_episode(r, spec)
    assert comps == pytest.approx(
        {
            "turn": -0.05,
            "clarification": -0.1,
            "unearned_clarification": -0.1,
            "invalid_action": -0.2,
            "sql_error": -0.05,
            "outcome": 1.0,
        }
    )
    assert total == pytest.approx(sum(comps.values()))


def test_all_presets_load() -> None:
    names = sorted(p.stem for p in preset_dir().glob("*.yaml"))
    assert {"default", "outcome", "reliability_phi10", "clarify_costs", "dysql_state"} <= set(names)
    for n in names:
        spec = load_reward_spec(n)
        assert RewardSpec.from_dict(spec.to_dict()) == spec


def test_bad_specs(tmp_path: Path) -> None:
    with pytest.raises(RewardSpecError, match="unknown component"):
        RewardSpec.from_dict({"components": {"outcomes": 1}})
    with pytest.raises(RewardSpecError, match="must be a number"):
        RewardSpec.from_dict({"components": {"outcome": "high"}})
    bad = tmp_path / "bad.yaml"
    bad.write_text("components: [\n")
    with pytest.raises(RewardSpecError, match="not valid YAML"):
        load_reward_spec(bad)
    with pytest.raises(RewardSpecError, match="does not exist"):
        load_reward_spec(tmp_path / "missing.yaml")
    with pytest.raises(RewardSpecError, match="presets"):
        load_reward_spec("no-such-preset")


def test_state_match_scores_read_tasks_by_outcome_only_when_asked() -> None:
    """A read task leaves the state unchanged for every policy: scored by states alone
    (``read_tasks: skip``) a read-only suite ties every policy at 0; ``dysql_state`` scores a
    read task by its outcome, so it ranks the right answer above a wrong one or a bare stop."""
    states_only = RewardSpec.from_dict({"components": {"state_match": 1.0}})
    dysql = load_reward_spec("dysql_state")
    assert dysql.read_tasks == "outcome"
    right, wrong, stop = rec(answer_rows=[[1]]), rec(answer_rows=[[2]]), rec()
    unans = rec(answerable=False, gold_rows=None, end="abstain")
    assert [score_episode(r, states_only)[0] for r in (right, wrong, stop, unans)] == [0, 0, 0, 0]
    assert [score_episode(r, dysql)[0] for r in (right, wrong, stop, unans)] == [1, 0, 0, 1]
    # a write task is still its final state, whatever the answer
    w = rec(writable=True, gold_digest="a", final_digest="a", answer_rows=[[2]])
    assert score_episode(w, dysql)[0] == 1.0
    assert score_episode(rec(writable=True, gold_digest="a", final_digest="b"), dysql)[0] == 0
    with pytest.raises(RewardSpecError, match="read_tasks"):
        RewardSpec.from_dict({"components": {"state_match": {"weight": 1, "read_tasks": "x"}}})
