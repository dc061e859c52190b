"""ClarifySQLEnv: registration, checker, actions, gating, rewards, errors as observations."""

from __future__ import annotations

import json
from pathlib import Path

import gymnasium as gym
import pytest
from gymnasium.utils.env_checker import check_env

import clarisql  # noqa: F401  (registers the env)
from clarisql.envs.env import ClarifySQLEnv
from clarisql.envs.tasks import Task, save_tasks

from .conftest import SMALL_GOLD_FROM as GOLD
from .conftest import build_small_db, sha256, small_task


@pytest.fixture
def suite_file(tmp_path: Path) -> Path:
    build_small_db(tmp_path / "small.sqlite")
    tasks = [
        small_task(kind, task_id)
        for kind, task_id in [
            ("from", "read/from"),
            ("where", "read/where"),
            ("ordered", "read/ordered"),
            ("write", "write/1"),
            ("poem", "unans/1"),
        ]
    ]
    return save_tasks(tasks, tmp_path / "tasks.jsonl")


def make(suite_file: Path, **kw) -> ClarifySQLEnv:
    return ClarifySQLEnv(str(suite_file), **kw)


def test_gym_make_and_checker(suite_file: Path) -> None:
    env = gym.make("clarisql/ClarifySQL-v0", suite=str(suite_file))
    check_env(env.unwrapped, skip_render_check=True)
    obs, info = env.reset(seed=3)
    assert env.observation_space.contains(obs)
    assert set(info) >= {"task_id", "messages", "reward_components", "error"}
    assert "category" not in info  # it would name the hidden answer
    env.close()


def test_seeded_reset_is_deterministic(suite_file: Path) -> None:
    env = make(suite_file)
    ids = [env.reset(seed=s)[1]["task_id"] for s in range(10)]
    assert ids == [env.reset(seed=s)[1]["task_id"] for s in range(10)]
    assert len(set(ids)) > 1
    assert env.reset(options={"task_id": "write/1"})[1]["task_id"] == "write/1"
    assert env.reset(options={"task_index": 1})[1]["task_id"] == "read/where"


def test_gated_clarification_reveals_only_matching_labels(suite_file: Path) -> None:
    env = make(suite_file)
    env.reset(options={"task_id": "read/from"})
    # wrong label: neutral reply, no value, unearned
    obs, *_, info = env.step(
        {"type": "clarify", "question": "Which city?", "labels": [["", "city", "Missing"]]}
    )
    assert "2020" not in obs["last"] and "2020" not in obs["dialogue"]
    assert env.record.turns[-1].earned is False
    # a question that merely mentions the year earns nothing without the label
    obs, *_ = env.step({"type": "clarify", "question": "Is it the year 2020?", "labels": []})
    assert "2020" not in obs["last"]
    # the exact triple (case and spaces aside) reveals the gold value
    obs, *_ = env.step(
        {"type": "clarify", "question": "Which year?", "labels": [[" ", "Year", "missing"]]}
    )
    assert "2020" in obs["last"] and env.record.turns[-1].earned is True


def test_no_leak_through_errors(suite_file: Path) -> None:
    env = make(suite_file)
    env.reset(options={"task_id": "read/where"})
    for bad in (
        {"type": "clarify", "labels": [["Projekt 3", "project", "Bogus"]]},
        {"type": "execute"},
        "<tool_call>{not json}</tool_call>",
        {"type": "execute", "sql": "SELECT * FROM nowhere"},
    ):
        obs, r, term, trunc, info = env.step(bad)
        assert info["error"] and "Project 3" not in obs["last"] and "Project 3" not in info["error"]


def test_oracle_style_episode_scores_one(suite_file: Path) -> None:
    env = make(suite_file, reward="reliability_phi10")
    env.reset(options={"task_id": "read/from"})
    env.step({"type": "clarify", "question": "Which year?", "labels": [["", "year", "Missing"]]})
    env.step({"type": "execute", "sql": GOLD})
    obs, reward, term, trunc, info = env.step({"type": "stop"})
    assert term and not trunc
    assert info["episode"]["correct"] is True and reward == pytest.approx(1.0)
    assert info["reward_components"] == {"reliability": 1.0}


def test_wrong_answer_and_unanswerable_penalties(suite_file: Path) -> None:
    env = make(suite_file, reward="reliability_phi10")
    env.reset(options={"task_id": "read/from"})
    *_, r, _, _, info = env.step({"type": "stop", "sql": "SELECT sum(price) FROM sales"})
    assert r == -10.0 and info["episode"]["correct"] is False
    env.reset(options={"task_id": "read/from"})
    *_, r, _, _, _ = env.step({"type": "abstain", "reason": "?"})
    assert r == 0.0
    env.reset(options={"task_id": "unans/1"})
    *_, r, _, _, _ = env.step({"type": "abstain", "reason": "not SQL"})
    assert r == 1.0
    env.reset(options={"task_id": "unans/1"})
    *_, r, _, _, _ = env.step({"type": "stop", "sql": "SELECT 1"})
    assert r == -10.0


def test_failed_final_query_is_never_correct(suite_file: Path, tmp_path: Path) -> None:
    build_small_db(tmp_path / "e.sqlite")
    t = Task(id="empty", db="e.sqlite", utterance="?", gold_sql="SELECT * FROM sales WHERE id < 0")
    p = save_tasks([t], tmp_path / "e.jsonl")
    env = ClarifySQLEnv(str(p))
    env.reset()
    *_, info = env.step({"type": "stop", "sql": "SELECT * FROM sales WHERE nosuch < 0"})
    assert info["episode"]["correct"] is False
    env.reset()
    *_, info = env.step({"type": "stop"})  # no query at all: no answer
    assert info["episode"]["correct"] is False
    env.reset()
    *_, info = env.step({"type": "stop", "sql": "SELECT * FROM sales WHERE id < -5"})
    assert info["episode"]["correct"] is True


def test_failing_gold_ends_the_episode_scored(tmp_path: Path) -> None:
    """A gold query or golden write that fails on its database (GoldError) never raises out of
    the episode: it ends scored (never correct) with the gold's error recorded."""
    build_small_db(tmp_path / "g.sqlite")
    read = Task(id="bad/read", db="g.sqlite", utterance="?", gold_sql="SELECT nosuch FROM sales")
    write = Task(
        id="bad/write",
        db="g.sqlite",
        utterance="?",
        writable=True,
        gold_actions=["UPDATE nosuch SET a = 1"],
    )
    p = save_tasks([read, write], tmp_path / "g.jsonl")
    for reward in ("default", "reliability_phi10"):
        env = ClarifySQLEnv(str(p), reward=reward)
        for tid in ("bad/read", "bad/write"):
            env.reset(options={"task_id": tid})
            *_, r, term, _, info = env.step({"type": "stop", "sql": "SELECT 1"})
            assert term and info["episode"]["correct"] is False
            assert "gold_error" in info["episode"] and "digest_error" not in info["episode"]
            assert r == pytest.approx(info["episode"]["reward"])


def test_unneeded_clarification_is_charged_and_label_precision_recall_recorded(
    suite_file: Path,
) -> None:
    """A shotgun clarify (the gate refuses it as too broad: it finds nothing) pays for every label
    it asked, so even with the gold SQL written anyway it scores below a precise agent; the
    record carries ODUTQA's label precision and recall (pure functions of it: a rescore gives
    the same reward)."""
    from clarisql.rewards import EpisodeRecord, load_reward_spec, score_episode

    shot = [["", "year", "Missing"], ["", "city", "Missing"], ["", "district", "Missing"]]
    shot += [["2019", "year", "Error"], "intent"]
    for reward, precise in (("default", 1.0), ("reliability_phi10", 1.0)):
        env = make(suite_file, reward=reward)
        rewards = {}
        for name, labels in (("precise", [["", "year", "Missing"]]), ("shotgun", shot)):
            env.reset(options={"task_id": "read/from"})
            *_, step_info = env.step({"type": "clarify", "question": "?", "labels": labels})
            # charged at the end: the step's reward does not say which labels were gold
            assert "unneeded_clarification" not in step_info["reward_components"]
            env.step({"type": "execute", "sql": GOLD})
            *_, info = env.step({"type": "stop"})
            ep = info["episode"]
            assert ep["correct"] is True
            assert ep["label_recall"] == (1.0 if name == "precise" else 0.0)
            rec = EpisodeRecord.from_dict(ep["record"])
            assert score_episode(rec, load_reward_spec(reward))[0] == pytest.approx(ep["reward"])
            rewards[name] = ep["reward"]
            if name == "shotgun":
                assert ep["label_precision"] == 0.0
                assert ep["unneeded_clarifications"] == 5
        assert rewards["precise"] == pytest.approx(precise)
        assert rewards["shotgun"] <= 0.0 < rewards["precise"]
    for reward in ("default", "reliability_phi10"):  # within the bounds: answered, and charged
        env = make(suite_file, reward=reward)
        env.reset(options={"task_id": "read/from"})
        two = [["", "year", "Missing"], ["", "city", "Missing"]]
        env.step({"type": "clarify", "question": "?", "labels": two})
        *_, info = env.step({"type": "stop", "sql": GOLD})
        ep = info["episode"]
        assert ep["correct"] and ep["label_recall"] == 1.0
        assert ep["label_precision"] == pytest.approx(1 / 2) and ep["unneeded_clarifications"] == 1
        assert ep["reward"] < 1.0
    env = make(suite_file)
    env.reset(options={"task_id": "read/from"})  # a question about nothing it needs
    env.step({"type": "clarify", "question": "Which city?", "labels": [["", "city", "Missing"]]})
    *_, info = env.step({"type": "stop", "sql": GOLD})
    assert info["episode"]["label_recall"] == 0.0 and info["episode"]["label_precision"] == 0.0


def test_ordered_gold_requires_order(suite_file: Path) -> None:
    env = make(suite_file)
    env.reset(options={"task_id": "read/ordered"})
    *_, info = env.step(
        {"type": "stop", "sql": "SELECT price FROM sales WHERE year = 2019 ORDER BY price DESC"}
    )
    assert info["episode"]["correct"] is False
    env.reset(options={"task_id": "read/ordered"})
    *_, info = env.step(
        {"type": "stop", "sql": "SELECT price FROM sales WHERE year = 2019 ORDER BY id"}
    )
    assert info["episode"]["correct"] is True  # same order here


def test_write_episode_scored_by_final_state(suite_file: Path) -> None:
    src = suite_file.parent / "small.sqlite"
    before = sha256(src)
    env = make(suite_file)
    env.reset(options={"task_id": "write/1"})
    env.step({"type": "execute", "sql": "SELECT * FROM cities"})
    env.step({"type": "execute", "sql": "INSERT INTO cities (name, id) VALUES ('Eastham', 3)"})
    *_, info = env.step({"type": "stop"})
    assert info["episode"]["correct"] is True
    env.reset(options={"task_id": "write/1"})
    env.step({"type": "execute", "sql": "INSERT INTO cities VALUES (3, 'Eastam')"})
    *_, info = env.step({"type": "stop"})
    assert info["episode"]["correct"] is False
    # the next episode starts clean
    env.reset(options={"task_id": "write/1"})
    obs, *_ = env.step({"type": "execute", "sql": "SELECT count(*) FROM cities"})
    assert "\n2" in obs["last"]
    assert sha256(src) == before


def test_step_never_raises(suite_file: Path) -> None:
    env = make(suite_file, reward="clarify_costs")
    obs, r, term, trunc, info = env.step({"type": "stop"})  # before reset
    assert term and info["error"]
    env.reset(options={"task_id": "read/from"})
    bad_inputs = [
        None,
        42,
        b"\xff\xfe",
        "",
        "   ",
        [],
        {},
        {"type": 7},
        {"type": "fly"},
        {"type": "execute", "sql": 5},
        {"type": "clarify", "labels": "nonsense"},
        {"type": "clarify", "question": 3},
        {"type": "clarify", "question": "?", "labels": [["a", "b"]]},
        {"type": "execute", "sql": b"\xff"},
        {"type": "execute", "sql": "SELECT 1; SELECT 2"},
        {"type": "execute", "sql": "ATTACH 'x' AS y"},
        '<tool_call>{"name": "execute_sql", "arguments": "oops"}</tool_call>',
        object(),
    ]
    for bad in bad_inputs:
        obs, r, term, trunc, info = env.step(bad)
        assert isinstance(info["error"], str) and info["error"], bad
        assert obs["last"] and not term
        # every bad input costs something: an invalid action or an SQL error
        comps = info["reward_components"]
        assert "invalid_action" in comps or "sql_error" in comps, (bad, comps)
        assert r < 0
        if trunc:
            break
    assert {t.kind for t in env.record.turns} <= {"invalid", "execute", "clarify"}


def test_invalid_action_penalty_is_configurable(suite_file: Path) -> None:
    env = make(
        suite_file,
        reward={"components": {"outcome": 1.0, "invalid_action": -0.5, "sql_error": -0.25}},
    )
    env.reset(options={"task_id": "read/from"})
    _, r, *_ = env.step("no action here")
    assert r == -0.5
    _, r, *_ = env.step({"type": "execute", "sql": "SELEC 1"})
    assert r == -0.25


def test_text_actions_in_canonical_format(suite_file: Path) -> None:
    env = make(suite_file)
    env.reset(options={"task_id": "read/from"})
    text = 'Let me ask.\n<tool_call>{"name": "ask_user", "arguments": {"question": "Which year?", "labels": [["", "year", "Missing"]]}}</tool_call>'
    obs, *_ = env.step(text)
    assert "2020" in obs["last"]
    obs, *_ = env.step("```sql\n" + GOLD + "\n```")
    assert obs["last"].startswith("OK: 1 row")
    *_, info = env.step('<tool_call>{"name": "stop", "arguments": {}}</tool_call>')
    assert info["episode"]["correct"]


def test_truncation_and_clarification_limit(suite_file: Path) -> None:
    env = make(suite_file, max_turns=4, max_clarifications=1)
    env.reset(options={"task_id": "read/from"})
    q = {"type": "clarify", "question": "Which year?", "labels": [["", "year", "Missing"]]}
    _, _, _, _, info = env.step(q)
    assert info["error"] is None
    _, _, _, _, info = env.step(q)
    assert "clarification limit" in info["error"]
    env.step({"type": "execute", "sql": GOLD})
    obs, r, term, trunc, info = env.step({"type": "execute", "sql": GOLD})
    assert trunc and not term
    assert info["episode"]["record"]["end"] == "truncated"
    # cut off by the turn limit: no answer was given, even though the right rows were on screen
    assert info["episode"]["correct"] is False


def test_episode_record_rescores_to_the_same_reward(suite_file: Path) -> None:
    from clarisql.rewards import EpisodeRecord, load_reward_spec, score_episode

    spec = load_reward_spec("clarify_costs")
    env = make(suite_file, reward=spec)
    env.reset(options={"task_id": "read/where"})
    total = 0.0
    for a in (
        {"type": "clarify", "question": "?", "labels": ["intent"]},
        {
            "type": "clarify",
            "question": "Which project?",
            "labels": [["Projekt 3", "project", "not-exist"]],
        },
        {"type": "execute", "sql": "SELECT nope"},
        {"type": "stop", "sql": "SELECT price FROM sales WHERE project = 'Project 3'"},
    ):
        _, r, term, trunc, info = env.step(a)
        total += r
    rec = EpisodeRecord.from_dict(json.loads(json.dumps(info["episode"]["record"])))
    assert score_episode(rec, spec)[0] == pytest.approx(total)
    assert info["episode"]["reward"] == pytest.approx(total)


def test_render_modes(suite_file: Path, capsys: pytest.CaptureFixture[str]) -> None:
    env = make(suite_file, render_mode="ansi")
    env.reset(options={"task_id": "read/from"})
    assert "User:" in env.render()
    env = make(suite_file, render_mode="human")
    env.reset(options={"task_id": "read/from"})
    env.step({"type": "execute", "sql": "SELECT 1"})
    assert "Agent: [execute_sql] SELECT 1" in capsys.readouterr().out


def test_plain_text_can_be_a_message_to_the_user(suite_file: Path) -> None:
    env = make(suite_file)
    env.reset(options={"task_id": "read/from"})
    *_, info = env.step("Which year do you mean?")
    assert info["error"].startswith("invalid action") and env.record.turns[-1].kind == "invalid"
    env = make(suite_file, plain_text="message")
    env.reset(options={"task_id": "read/from"})
    obs, *_, info = env.step("Which year do you mean?")
    assert info["error"] is None and env.record.turns[-1].kind == "clarify"
    assert "2020" not in obs["last"]  # a message without labels earns nothing in Fixed mode
    *_, info = env.step("<tool_call>{broken</tool_call>")  # a broken tool call stays invalid
    assert info["error"].startswith("invalid action")
    with pytest.raises(ValueError, match="plain_text"):
        make(suite_file, plain_text="shout")
