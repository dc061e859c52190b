"""Training: configs, data, the TRL environment adapter, token rollouts, GAE, and SFT / GRPO / PPO
end to end on a tiny locally built model (few steps; the checkpoint reloads with hf: and is
evaluated by the rollout runner)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
import yaml

from clarisql.envs.env import ClarifySQLEnv
from clarisql.envs.suites import load_suite
from clarisql.policies import make_policy
from clarisql.policies.hf import ChatFormat
from clarisql.rollouts.episode import run_episode

from ._train_fixtures import ENV_KW, FORMAT, needs_train, task_file, tiny_model_dir

pytestmark = pytest.mark.train


# --- configs ---------------------------------------------------------------------------------
def test_every_shipped_recipe_loads():
    from clarisql.training.config import load_config, recipe_dir

    names = sorted(p.stem for p in recipe_dir().glob("*.yaml"))
    assert {
        "tiny-cpu-grpo",
        "tiny-cpu-ppo",
        "grpo-qwen2.5-0.5b",
        "ppo-qwen2.5-0.5b",
        "grpo-multi-gpu",
    } <= set(names)
    for name in names:
        cfg = load_config(name)
        assert cfg.trainer in ("sft", "grpo", "ppo")
        ChatFormat.from_dict(cfg.format)


@needs_train
def test_accelerate_configs_load_with_accelerate():
    """Accelerate's own loader builds each launch config (a dataclass: unknown keys fail)."""
    from accelerate.commands.config.config_args import load_config_from_file

    folder = Path(__file__).resolve().parents[1] / "configs" / "accelerate"
    kinds = {}
    for path in sorted(folder.glob("*.yaml")):
        c = load_config_from_file(str(path))
        zero = (c.deepspeed_config or {}).get("zero_stage")
        kinds[path.stem] = (str(c.distributed_type).split(".")[-1], zero)
    assert kinds == {
        "ddp": ("MULTI_GPU", None),
        "deepspeed_zero2": ("DEEPSPEED", 2),
        "deepspeed_zero3": ("DEEPSPEED", 3),
        "fsdp": ("FSDP", None),
        "multi_node_zero2": ("DEEPSPEED", 2),
    }


@needs_train
def test_recipe_sections_are_valid_trl_configs(tmp_path):
    from trl import GRPOConfig, SFTConfig

    from clarisql.training.config import load_config, recipe_dir
    from clarisql.training.ppo import PPOConfig

    for p in sorted(recipe_dir().glob("*.yaml")):
        cfg = load_config(p.stem)
        if cfg.trainer == "ppo":
            PPOConfig.from_dict(cfg.ppo)
        for section, cls in (("grpo", GRPOConfig), ("warm_start", SFTConfig), ("sft", SFTConfig)):
            values = getattr(cfg, section, None)
            if values:
                cls(output_dir=str(tmp_path), **{**values, "bf16": False})  # bf16 needs a GPU here


def test_overrides_and_errors(tmp_path):
    from clarisql.training.config import ConfigError, load_config

    cfg = load_config(
        "tiny-cpu-grpo",
        ["grpo.max_steps=7", "model.lora={r: 4}", "env.max_turns=2", "output_dir=/x/y"],
    )
    assert cfg.grpo["max_steps"] == 7 and cfg.model.lora == {"r": 4} and cfg.env.max_turns == 2
    assert cfg.output_dir == "/x/y"
    with pytest.raises(ConfigError, match="env.*max_turn"):
        load_config("tiny-cpu-grpo", ["env.max_turn=2"])
    with pytest.raises(ConfigError, match="key=value"):
        load_config("tiny-cpu-grpo", ["grpo.max_steps"])
    with pytest.raises(ConfigError, match="trainer"):
        load_config({"trainer": "dpo", "model": {"tiny": {}}})
    with pytest.raises(FileNotFoundError, match="recipes"):
        load_config(tmp_path / "missing.yaml")


@needs_train
def test_ppo_config_rejects_unknown_keys():
    from clarisql.training.ppo import PPOConfig

    with pytest.raises(ValueError, match="ppo: unknown"):
        PPOConfig.from_dict({"lr": 1})


def test_cli_print_config(capsys):
    from clarisql.cli import main

    assert main(["train", "--config", "tiny-cpu-ppo", "--print-config", "ppo.max_steps=3"]) == 0
    out = yaml.safe_load(capsys.readouterr().out)
    assert out["trainer"] == "ppo" and out["ppo"]["max_steps"] == 3
    assert main(["train", "--config", "no-such-recipe"]) == 2


# --- data --------------------------------------------------------------------------------------
def test_split_is_stratified_and_seeded():
    from clarisql.training.data import split_tasks

    suite = load_suite(str(task_file()))
    tr, ev = split_tasks(suite, 0.34, seed=1)
    assert sorted(tr + ev) == sorted(t.id for t in suite.tasks) and not set(tr) & set(ev)
    assert split_tasks(suite, 0.34, seed=1) == (tr, ev)
    cats_eval = {suite.task(i).category for i in ev}
    assert "well-specified" in cats_eval  # 3 well-specified tasks -> one held out


@needs_train
def test_sft_data_masks_only_assistant_tokens():
    from transformers import AutoTokenizer

    from clarisql.training.data import oracle_conversations, tokenize_conversations

    tok = AutoTokenizer.from_pretrained(tiny_model_dir())
    fmt = ChatFormat.from_dict(FORMAT)
    env = ClarifySQLEnv(str(task_file()), **ENV_KW)
    convs = oracle_conversations(env, ["r/from", "u/1"], fmt)
    assert convs[0][-2]["role"] == "tool" and convs[0][-1] == {"role": "assistant", "content": ""}
    data = tokenize_conversations(tok, convs, fmt)
    ids, mask = data["input_ids"][0], data["assistant_masks"][0]
    learned = tok.decode([t for t, m in zip(ids, mask) if m])
    assert "ask_user" in learned and "stop" in learned and learned.count("<|im_end|>") == 3
    assert (
        "Riverton" not in learned and "tool_response" not in learned
    )  # user/env text is context only
    assert "abstain" in tok.decode(
        [t for t, m in zip(data["input_ids"][1], data["assistant_masks"][1]) if m]
    )
    env.close()


# --- the TRL environment adapter ----------------------------------------------------------------
@needs_train
def test_adapter_replays_oracle_and_matches_env_reward():
    from clarisql.training.env_adapter import EPISODE_OVER, ClarifySQLToolEnv

    adapter = ClarifySQLToolEnv(str(task_file()), env_kwargs=ENV_KW)
    env = ClarifySQLEnv(str(task_file()), **ENV_KW)
    ref = run_episode(env, make_policy("oracle"), "r/from", seed=0)
    opening = adapter.reset(task_id="r/from", prompt=[{"role": "user", "content": ""}])
    assert opening == "What is the total price of sales in Riverton?"
    reply = adapter.ask_user("Which year?", [["", "year", "Missing"]])
    assert "2020" in reply
    out = adapter.stop("SELECT sum(price) FROM sales WHERE city_id = 1 AND year = 2020")
    assert "episode is over" in out
    assert adapter.stop("SELECT 1") == EPISODE_OVER  # after the end: no second step
    assert adapter.get_reward() == pytest.approx(ref.reward) and adapter.correct
    assert adapter.episode["record"]["end"] == "stop"
    env.close()


@needs_train
def test_adapter_unfinished_episode_is_invalid_then_stopped():
    from clarisql.training.env_adapter import ClarifySQLToolEnv

    adapter = ClarifySQLToolEnv(str(task_file()), env_kwargs=ENV_KW)
    adapter.reset(task_id="r/ok1")
    assert "OK" in adapter.execute_sql("SELECT count(*) FROM sales")
    r = adapter.get_reward()  # the model ended its turn without stop: invalid action, then stop
    assert adapter.unfinished and adapter.correct  # the last query's result is the answer
    assert r == pytest.approx(1.0 - 0.1)
    assert adapter.reward_components == {"invalid_action": pytest.approx(-0.1), "outcome": 1.0}
    bad = adapter.execute_sql("SELECT * FROM nope")  # calls after the end do not reach the env
    assert "over" in bad


@needs_train
def test_adapter_exposes_exactly_the_four_tools():
    import inspect

    from clarisql.training.env_adapter import ClarifySQLToolEnv

    names = [
        n
        for n, _ in inspect.getmembers(ClarifySQLToolEnv, predicate=inspect.isfunction)
        if not n.startswith("_")
    ]
    assert sorted(names) == ["abstain", "ask_user", "execute_sql", "get_reward", "reset", "stop"]


# --- token rollouts and GAE ---------------------------------------------------------------------
@needs_train
def test_suffix_ids_rebuild_the_rendered_conversation():
    from transformers import AutoTokenizer

    from clarisql.training.rollout import ChatTokens

    tok = AutoTokenizer.from_pretrained(tiny_model_dir())
    fmt = ChatFormat.from_dict(FORMAT)
    env = ClarifySQLEnv(str(task_file()), **ENV_KW)
    run_episode(env, make_policy("oracle"), "r/where", seed=0)
    conv = fmt.conversation(env.messages)  # system, user, ask_user, tool reply, stop
    ct = ChatTokens(tok, fmt)
    ids = ct.prompt_ids(conv[:2])
    asst = conv[2]
    turn = tok.apply_chat_template(conv[:3], tokenize=True, return_dict=False, **ct.render_kwargs)
    gen = list(turn)[len(ids) :]
    gen = gen[: gen.index(tok.eos_token_id) + 1]  # what a model ending its turn generates
    rebuilt = ids + gen + ct.suffix_ids(asst, conv[3:4])
    assert rebuilt == ct.prompt_ids(conv[:4])
    env.close()


@needs_train
def test_collect_episodes_masks_agent_tokens():
    from clarisql.policies.hf import HFPolicy
    from clarisql.training.rollout import collect_episodes

    policy = make_policy(f"hf:{tiny_model_dir()}", max_new_tokens=12, temperature=1.0, seed=3)
    assert isinstance(policy, HFPolicy)
    envs = [ClarifySQLEnv(str(task_file()), **ENV_KW) for _ in range(2)]
    eps = collect_episodes(policy, envs, ["r/ok1", "u/1"], seeds=[0, 1], max_episode_tokens=1500)
    for ep, env in zip(eps, envs):
        assert len(ep.input_ids) == len(ep.action_mask) == len(ep.token_rewards)
        assert (
            ep.summary["record"]["task_id"] == ep.task_id and 1 <= ep.turns <= ENV_KW["max_turns"]
        )
        assert (
            sum(ep.token_rewards) == pytest.approx(ep.reward) == pytest.approx(ep.summary["reward"])
        )
        assert not any(ep.action_mask[: ep.prompt_len])
        agent = policy.tokenizer.decode(
            [t for t, m in zip(ep.input_ids, ep.action_mask) if m], skip_special_tokens=True
        )
        assert agent.replace("\n", "").replace(" ", "") == "".join(ep.texts).replace(
            "\n", ""
        ).replace(" ", "")
        for k, r in enumerate(ep.token_rewards):
            if r:
                assert ep.action_mask[k] or k == len(ep.input_ids) - 1
        env.close()


@needs_train
def test_gae_skips_environment_tokens():
    import torch

    from clarisql.training.ppo import gae_agent_tokens

    mask = torch.tensor([[0, 1, 1, 0, 0, 1, 0]], dtype=torch.float32)
    rewards = torch.tensor([[0, 0, 0.5, 0, 0, 1.0, 0]])
    values = torch.tensor([[9, 0.2, 0.3, 9, 9, 0.6, 9]]) * mask
    adv, ret = gae_agent_tokens(rewards, values, mask, gamma=0.9, lam=0.8)
    v, r = [0.2, 0.3, 0.6], [0.0, 0.5, 1.0]
    d = [r[0] + 0.9 * v[1] - v[0], r[1] + 0.9 * v[2] - v[1], r[2] - v[2]]
    a2 = d[2]
    a1 = d[1] + 0.72 * a2
    a0 = d[0] + 0.72 * a1
    assert adv[0].tolist() == pytest.approx([0, a0, a1, 0, 0, a2, 0])
    assert ret[0, [1, 2, 5]].tolist() == pytest.approx([a0 + 0.2, a1 + 0.3, a2 + 0.6])


# --- end to end ---------------------------------------------------------------------------------
def _config(tmp_path: Path, trainer: str, **extra) -> dict:
    cfg = {
        "trainer": trainer,
        "output_dir": str(tmp_path / trainer),
        "seed": 0,
        "report_to": "none",
        "model": {"tiny": {}, "tiny_dir": str(tiny_model_dir())},
        "env": {"suite": str(task_file()), **ENV_KW},
        "data": {"eval_fraction": 0.5, "split_seed": 0},
        "format": FORMAT,
        "eval": {"max_tasks": 2, "max_new_tokens": 12},
    }
    cfg.update(extra)
    return cfg


def _check_run(summary: dict, out: Path) -> None:
    from clarisql.cli import main

    final = Path(summary["checkpoint"])
    assert final == out / "final" and (final / "clarisql_format.json").is_file()
    assert (final / "tokenizer.json").is_file()
    ev = json.loads((out / "eval.json").read_text())
    assert ev["n_episodes"] == 2 and summary["eval"]["n_episodes"] == 2
    # the checkpoint reloads with hf: and is evaluated by the rollout runner (clarisql eval)
    assert summary["policy"] == f"hf:{final}"
    run = out / "eval-runner"
    argv = ["eval", "--suite", str(task_file()), "--policy", summary["policy"], "--out", str(run)]
    argv += ["--max-episodes", "3", "--max-turns", "2", "--max-tokens", "8", "--batch-size", "3"]
    assert main([*argv, "--no-progress"]) == 0
    lines = (run / "trajectories.jsonl").read_text().splitlines()
    assert len(lines) == 3 and all(json.loads(x)["turns"] for x in lines)
    metrics = json.loads((run / "metrics.json").read_text())
    assert metrics["n_episodes"] == 3 and "pass@1" in metrics


@needs_train
def test_sft_end_to_end_through_the_cli(tmp_path):
    from clarisql.cli import main

    cfg = _config(
        tmp_path,
        "sft",
        sft={"max_steps": 3, "per_device_train_batch_size": 4, "learning_rate": 1e-3},
    )
    path = tmp_path / "sft.yaml"
    path.write_text(yaml.safe_dump(cfg))
    assert main(["train", "--config", str(path), "sft.max_steps=2"]) == 0
    out = tmp_path / "sft"
    summary = json.loads((out / "summary.json").read_text())
    hist = json.loads((out / "trainer" / "final" / "log_history.json").read_text())
    assert [h["step"] for h in hist if "loss" in h] == [1, 2]
    _check_run(summary, out)


@needs_train
def test_grpo_end_to_end_with_warm_start(tmp_path):
    from clarisql.training.config import load_config
    from clarisql.training.run import train

    cfg = _config(
        tmp_path,
        "grpo",
        warm_start={"max_steps": 2, "per_device_train_batch_size": 4},
        grpo={
            "max_steps": 2,
            "per_device_train_batch_size": 2,
            "num_generations": 2,
            "max_completion_length": 48,
            "learning_rate": 1e-4,
        },
    )
    summary = train(load_config(cfg))
    out = tmp_path / "grpo"
    assert (out / "sft" / "config.json").is_file()  # warm-start checkpoint
    hist = json.loads((out / "trainer" / "grpo" / "log_history.json").read_text())
    logged = [h for h in hist if "rewards/ClarifySQLToolEnv/mean" in h]
    assert len(logged) == 2 and all(
        "clarisql/unfinished" in h and "clarisql/turns" in h for h in logged
    )
    _check_run(summary, out)


@needs_train
def test_ppo_end_to_end_with_lora(tmp_path):
    from clarisql.training.config import load_config
    from clarisql.training.run import train

    cfg = _config(
        tmp_path,
        "ppo",
        ppo={
            "max_steps": 2,
            "episodes_per_step": 2,
            "mini_batch_size": 1,
            "ppo_epochs": 1,
            "max_new_tokens": 16,
            "max_episode_tokens": 1500,
            "learning_rate": 1e-3,
        },
    )
    cfg["model"]["lora"] = {"r": 4, "lora_alpha": 8, "target_modules": ["q_proj", "v_proj"]}
    summary = train(load_config(cfg))
    out = tmp_path / "ppo"
    final = out / "final"
    assert (final / "adapter_config.json").is_file() and (final / "value_head.pt").is_file()
    log = [
        json.loads(x) for x in (out / "trainer" / "ppo" / "ppo_log.jsonl").read_text().splitlines()
    ]
    assert [x["step"] for x in log] == [1, 2]
    assert all(x["agent_tokens"] > 0 and x["vf_loss"] >= 0 for x in log)
    assert log[0]["kl"] == pytest.approx(
        0.0, abs=1e-6
    )  # the LoRA-disabled reference is the start policy
    _check_run(summary, out)
