"""``clarisql export ... --format hf``: suites and runs as Hugging Face datasets that load back
(Arrow and Parquet), carry a dataset card, rebuild the environment's chat exactly, and train a
tiny model through the SFT path."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
import yaml

from clarisql.cli import main as cli_main
from clarisql.envs.env import ClarifySQLEnv
from clarisql.envs.splits import split_of
from clarisql.policies import make_policy
from clarisql.rollouts.episode import run_episode
from clarisql.rollouts.runner import RunConfig, run_eval

from ._train_fixtures import ENV_KW, FORMAT, needs_train, task_file, tiny_model_dir

datasets = pytest.importorskip("datasets", reason="needs the datasets package (train extra)")


def load_all(path) -> datasets.Dataset:
    """Every row of an exported folder: its train split, then its test split."""
    dd = datasets.load_from_disk(str(path))
    assert dd and set(dd) <= {"train", "test"}
    return datasets.concatenate_datasets([dd[sp] for sp in ("train", "test") if sp in dd])


def by_split(rows: list[dict]) -> list[dict]:
    return [r for sp in ("train", "test") for r in rows if r["split"] == sp]


@pytest.fixture(scope="module")
def oracle_run(tmp_path_factory) -> Path:
    out = tmp_path_factory.mktemp("export") / "oracle"
    cfg = RunConfig(suite=str(task_file()), policy="oracle", trials=2, max_turns=3)
    run_eval(cfg, out, progress=False)
    return out


def test_episode_messages_rebuild_the_env_chat(tmp_path):
    from clarisql.rollouts.export import episode_messages

    env = ClarifySQLEnv(str(task_file()), **ENV_KW)
    for pol in ("oracle", "naive", "random:3"):
        for task in env.suite.tasks:
            res = run_episode(env, make_policy(pol), task.id, seed=1)
            rebuilt = episode_messages(res.to_dict(), system=env.messages[0]["content"])
            live = [dict(m) for m in env.messages]
            if res.summary.get("record", {}).get("end") in ("stop", "abstain"):
                live.append({"role": "tool", "content": res.turns[-1]["observation"]})
            assert rebuilt == live, (pol, task.id)
    env.close()


def test_suite_export_round_trips(tmp_path):
    from clarisql.envs.suites import load_suite
    from clarisql.rollouts.export import export_hf, suite_rows

    res = export_hf(task_file(), tmp_path / "suite")
    ds = load_all(tmp_path / "suite")
    rows = by_split(suite_rows(load_suite(str(task_file()))))
    assert res.kind == "suite" and len(ds) == len(rows) == 9
    assert ds.to_list() == rows
    assert ds.features["prompt"] == datasets.List(
        {"role": datasets.Value("string"), "content": datasets.Value("string")}
    )
    assert ds.features["writable"] == datasets.Value("bool")
    row = ds.filter(lambda r: r["task_id"] == "r/from")[0]
    assert row["gold_labels"] and json.loads(row["gold_labels"][0])[2] == "Missing"
    assert row["db_file"] == "small.sqlite" and len(row["db_sha256"]) == 64
    env = ClarifySQLEnv(str(task_file()), **ENV_KW)
    _, info = env.reset(options={"task_id": "r/from"})
    assert row["prompt"] == [dict(m) for m in info["messages"]]  # the env's own system + opening
    env.close()
    pq = datasets.load_dataset(str(tmp_path / "suite" / "data"))  # the card's Parquet layout
    assert [r for sp in ("train", "test") if sp in pq for r in pq[sp].to_list()] == rows
    card = (tmp_path / "suite" / "README.md").read_text()
    front = yaml.safe_load(card.split("---\n")[1])
    assert sum(s["num_examples"] for s in front["dataset_info"]["splits"]) == 9
    assert res.splits == {s["name"]: s["num_examples"] for s in front["dataset_info"]["splits"]}
    assert "| `gold_labels` | list[string] |" in card


def test_run_export_round_trips(oracle_run, tmp_path):
    from clarisql.rollouts.export import export_hf
    from clarisql.rollouts.store import read_trajectories

    res = export_hf(oracle_run, tmp_path / "run", parquet=False)
    ds = load_all(tmp_path / "run")
    lines = by_split(
        [
            x | {"split": split_of(x["task_id"])}
            for x in read_trajectories(oracle_run / "trajectories.jsonl")
        ]
    )
    assert res.kind == "run" and res.parquet is None and len(ds) == len(lines) == 18
    for row, x in zip(ds, lines):
        assert (row["task_id"], row["trial"]) == (x["task_id"], x["trial"])
        assert row["reward"] == pytest.approx(x["reward"]) and row["correct"] == x["correct"]
        assert sum(row["turn_rewards"]) == pytest.approx(x["reward"])
        assert row["reward_components"] == x["summary"]["reward_components"]
        assert row["messages"][0]["role"] == "system" and row["policy"] == "oracle"
        assert row["messages"][-1]["role"] == "tool" and len(row["messages"]) == 2 + 2 * len(
            x["turns"]
        )
    assert ds.features["reward"] == datasets.Value("float64")
    card = (tmp_path / "run" / "README.md").read_text()
    assert "policy `oracle`" in card and "pass@1 1.000" in card


def test_cli_export_and_its_errors(oracle_run, tmp_path, capsys):
    out = tmp_path / "x"
    assert cli_main(["export", str(oracle_run), "--format", "hf", "--out", str(out)]) == 0
    assert "18 episode row(s)" in capsys.readouterr().out
    assert (out / "data" / "train-00000-of-00001.parquet").is_file()
    assert cli_main(["export", str(oracle_run), "--out", str(out)]) == 2  # not empty
    assert "not empty" in capsys.readouterr().err
    assert cli_main(["export", "no-such-suite", "--out", str(tmp_path / "y")]) == 2
    assert "unknown suite" in capsys.readouterr().err
    # a run whose suite is gone: a clear error, and --no-system exports it anyway
    moved = tmp_path / "moved"
    moved.mkdir()
    for f in ("trajectories.jsonl", "run.json"):
        (moved / f).write_bytes((oracle_run / f).read_bytes())
    cfg = json.loads((moved / "run.json").read_text())
    cfg["config"]["suite"] = str(tmp_path / "gone.jsonl")
    (moved / "run.json").write_text(json.dumps(cfg))
    assert cli_main(["export", str(moved), "--out", str(tmp_path / "z")]) == 2
    assert "--no-system" in capsys.readouterr().err
    assert cli_main(["export", str(moved), "--no-system", "--out", str(tmp_path / "z")]) == 0
    ds = load_all(tmp_path / "z")
    assert ds[0]["messages"][0]["role"] == "user"
    assert json.loads(ds[0]["answer"])["kind"] in ("rows", "abstain", "state")


@pytest.mark.train
@needs_train
def test_exported_suite_and_run_train_a_tiny_model(oracle_run, tmp_path):
    from transformers import AutoModelForCausalLM, AutoTokenizer
    from trl import SFTConfig, SFTTrainer

    from clarisql.policies.hf import ChatFormat
    from clarisql.rollouts.export import export_hf
    from clarisql.training.data import (
        dataset_conversations,
        grpo_prompts,
        grpo_prompts_from_dataset,
        oracle_conversations,
        sft_dataset,
    )

    fmt = ChatFormat.from_dict(FORMAT)
    tok = AutoTokenizer.from_pretrained(tiny_model_dir())
    export_hf(task_file(), tmp_path / "suite")
    export_hf(oracle_run, tmp_path / "run")
    suite = load_all(tmp_path / "suite")
    run = load_all(tmp_path / "run")
    env = ClarifySQLEnv(str(task_file()), **ENV_KW)
    # the suite: its task ids drive the oracle (SFT); its prompts are the GRPO prompts
    ids = suite["task_id"]
    assert grpo_prompts_from_dataset(suite, fmt).to_list() == grpo_prompts(env, ids, fmt).to_list()
    from_suite = oracle_conversations(env, ids, fmt)
    env.close()
    # the run: the exported chats are the conversations a live oracle rollout gives
    from_run = dataset_conversations(run.filter(lambda r: r["trial"] == 0), fmt, only_correct=True)
    assert from_run == from_suite
    # one short SFT run on both (the tiny model is shared with test_training.py)
    ds = sft_dataset(tok, from_suite + from_run, fmt)
    model = AutoModelForCausalLM.from_pretrained(tiny_model_dir())
    args = SFTConfig(
        output_dir=str(tmp_path / "sft"),
        max_steps=2,
        per_device_train_batch_size=4,
        learning_rate=1e-3,
        report_to="none",
        save_strategy="no",
        logging_steps=1,
        max_length=None,
        bf16=False,
        fp16=False,
        use_cpu=True,
    )
    trainer = SFTTrainer(model=model, args=args, train_dataset=ds, processing_class=tok)
    trainer.train()
    losses = [h["loss"] for h in trainer.state.log_history if "loss" in h]
    assert len(losses) == 2 and all(loss == loss and loss > 0 for loss in losses)
