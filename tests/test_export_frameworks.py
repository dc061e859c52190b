"""The datasets export as TRL / verifiers / verl / SkyRL users load it: tools, structured tool
calls, the gold answer, the database reference and stable train/test splits, round-tripped
through ``datasets`` (Arrow and Parquet)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from clarisql.envs.actions import parse_action
from clarisql.envs.splits import split_of
from clarisql.rollouts.runner import RunConfig, run_eval

from ._train_fixtures import needs_train, task_file, tiny_model_dir

datasets = pytest.importorskip("datasets", reason="needs the datasets package (train extra)")


@pytest.fixture(scope="module")
def exported(tmp_path_factory) -> dict[str, Path]:
    from clarisql.rollouts.export import export_hf

    root = tmp_path_factory.mktemp("fw")
    run = root / "run"
    # a policy that asks, queries and stops: every kind of tool call in the chats
    run_eval(RunConfig(suite=str(task_file()), policy="oracle", max_turns=6), run, progress=False)
    export_hf(task_file(), root / "suite")
    export_hf(run, root / "episodes")
    return {"suite": root / "suite", "run": run, "episodes": root / "episodes"}


def _rows(path: Path) -> list[dict]:
    dd = datasets.load_from_disk(str(path))
    return [r for sp in ("train", "test") if sp in dd for r in dd[sp].to_list()]


def test_suite_rows_carry_tools_answer_and_framework_columns(exported) -> None:
    from clarisql.envs.sandbox.database import get_image
    from clarisql.envs.state.gold import gold_rows
    from clarisql.envs.suites import load_suite

    suite = load_suite(str(task_file()))
    rows = _rows(exported["suite"])
    assert sorted(r["task_id"] for r in rows) == sorted(t.id for t in suite.tasks)
    kinds = set()
    for r in rows:
        task = suite.task(r["task_id"])
        tools = json.loads(r["tools"])
        assert [t["function"]["name"] for t in tools] == [
            "ask_user",
            "execute_sql",
            "abstain",
            "stop",
        ]
        answer = json.loads(r["answer"])
        kinds.add(answer["kind"])
        if answer["kind"] == "rows":
            spec = suite.database(task)
            want = gold_rows(task, get_image(spec.path, spec.post_copy_sql))
            assert answer["rows"] == json.loads(json.dumps(want, default=str))
            assert answer["sql"] == task.gold_sql
        elif answer["kind"] == "abstain":
            assert not task.answerable
        else:
            assert task.writable and answer["actions"] == list(task.gold_actions)
        assert r["split"] == split_of(task.id)
        assert r["extra_info"]["interaction_kwargs"] == {
            "name": "clarisql",
            "task_id": task.id,
            "seed": 0,
        }
        assert r["reward_model"]["ground_truth"] == r["reward_spec"]["ground_truth"] == task.id
        assert r["env_class"] == "clarisql" and r["db_file"] and len(r["db_sha256"]) == 64
    assert {"rows", "abstain"} <= kinds


def test_run_messages_hold_structured_tool_calls(exported) -> None:
    from clarisql.rollouts.store import read_trajectories

    lines = {
        (x["task_id"], x["trial"]): x
        for x in read_trajectories(exported["run"] / "trajectories.jsonl")
    }
    rows = _rows(exported["episodes"])
    pq = datasets.load_dataset(str(exported["episodes"] / "data"))
    assert [r for sp in ("train", "test") if sp in pq for r in pq[sp].to_list()] == rows
    names = set()
    for r in rows:
        x = lines[(r["task_id"], r["trial"])]
        msgs = r["messages"]
        assert msgs[0]["role"] == "system" and msgs[1]["role"] == "user"
        assert len(msgs) == 2 + 2 * len(x["turns"])
        for turn, (call_msg, result) in zip(x["turns"], zip(msgs[2::2], msgs[3::2])):
            assert call_msg["role"] == "assistant"
            if result["role"] == "tool":
                (call,) = call_msg["tool_calls"]
                assert (
                    result["tool_call_id"] == call["id"]
                    and result["name"] == call["function"]["name"]
                )
                names.add(call["function"]["name"])
                again = parse_action(
                    {
                        "name": call["function"]["name"],
                        "arguments": json.loads(call["function"]["arguments"]),
                    }
                )
                assert again == parse_action(turn["action"])
            else:  # no usable action: the text and the env's note
                assert not call_msg["tool_calls"] and call_msg["content"]
            assert result["content"] == turn["observation"]
        assert r["messages_text"][-1]["content"] == msgs[-1]["content"]
        assert r["split"] == split_of(r["task_id"]) and json.loads(r["answer"])["kind"]
        assert r["db_file"] and len(r["db_sha256"]) == 64
    assert {"ask_user", "execute_sql", "stop"} <= names


def test_splits_are_a_stable_hash_of_the_task_id() -> None:
    ids = [f"suite/{i:04d}" for i in range(400)]
    here = [split_of(i) for i in ids]
    assert 0.1 < here.count("test") / len(ids) < 0.3  # about TEST_FRACTION
    code = (
        "from clarisql.envs.splits import split_of; import sys, json; "
        "print(json.dumps([split_of(f'suite/{i:04d}') for i in range(400)]))"
    )
    for seed in ("0", "12345"):  # another process, another str hash salt: the same splits
        out = subprocess.run(
            [sys.executable, "-c", code],
            env={**os.environ, "PYTHONHASHSEED": seed},
            capture_output=True,
            text=True,
            timeout=120,
            check=True,
        )
        assert json.loads(out.stdout) == here
    assert split_of("a", 0.0) == "train" and split_of("a", 1.0) == "test"
    with pytest.raises(ValueError):
        split_of("a", 1.5)


def test_builtin_export_has_both_splits(tmp_path) -> None:
    from clarisql.envs.suites import load_suite
    from clarisql.rollouts.export import export_hf

    res = export_hf("builtin", tmp_path / "builtin", parquet=True)
    ids = [t.id for t in load_suite("builtin").tasks]
    want = {sp: sum(split_of(i) == sp for i in ids) for sp in ("train", "test")}
    assert res.splits == want and want["test"] > 0
    dd = datasets.load_from_disk(str(tmp_path / "builtin"))
    assert {sp: len(dd[sp]) for sp in dd} == want
    assert all(r == "test" for r in dd["test"]["split"])
    pq = datasets.load_dataset(str(tmp_path / "builtin" / "data"))
    assert pq["test"].to_list() == dd["test"].to_list()
    # the prompt is the env's own (with table search where the env turns it on)
    from clarisql.envs.env import ClarifySQLEnv

    env = ClarifySQLEnv("builtin")
    for row in dd["test"].select(range(3)):
        _, info = env.reset(seed=0, options={"task_id": row["task_id"]})
        assert row["prompt"] == [dict(m) for m in info["messages"]]
        names = [t["function"]["name"] for t in json.loads(row["tools"])]
        assert ("search_tables" in names) == env.table_search  # the tools the prompt offers
    env.close()


@pytest.mark.train
@needs_train
def test_trl_sft_trains_on_the_exported_episodes_as_is(exported, tmp_path) -> None:
    from transformers import AutoModelForCausalLM, AutoTokenizer
    from trl import SFTConfig, SFTTrainer

    ds = datasets.load_from_disk(str(exported["episodes"]))["train"]
    ds = ds.select_columns(["messages", "tools"])  # nothing else: TRL's conversational format
    tok = AutoTokenizer.from_pretrained(tiny_model_dir())
    text = tok.apply_chat_template(
        ds[0]["messages"], tools=json.loads(ds[0]["tools"]), tokenize=False
    )
    assert "ask_user" in text or "execute_sql" in text
    args = SFTConfig(
        output_dir=str(tmp_path / "sft"),
        max_steps=1,
        per_device_train_batch_size=2,
        report_to="none",
        save_strategy="no",
        use_cpu=True,
        bf16=False,
        fp16=False,
        max_length=None,
    )
    model = AutoModelForCausalLM.from_pretrained(tiny_model_dir())
    trainer = SFTTrainer(model=model, args=args, train_dataset=ds, processing_class=tok)
    trainer.train()
    assert trainer.state.global_step == 1
