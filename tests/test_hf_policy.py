"""The hf: policy: chat format conversion, tool schemas, loading (full model and LoRA adapter),
batched generation and evaluation with run_episode on a tiny locally built model."""

from __future__ import annotations

import json
import subprocess
import sys

import pytest

from clarisql.envs.env import ClarifySQLEnv
from clarisql.policies import make_policy
from clarisql.policies.hf import ChatFormat, action_to_tool_call
from clarisql.rollouts.episode import run_episode

from ._train_fixtures import ENV_KW, FORMAT, needs_train, task_file, tiny_model_dir

pytestmark = pytest.mark.train


def _oracle_messages(task_id: str) -> tuple[ClarifySQLEnv, list[dict]]:
    env = ClarifySQLEnv(str(task_file()), **ENV_KW)
    run_episode(env, make_policy("oracle"), task_id, seed=0)
    return env, list(env.messages)


def test_import_stays_torch_free():
    code = (
        "import sys, clarisql, clarisql.cli, clarisql.policies.hf, clarisql.training.commands; "
        "clarisql.cli.build_parser(); "
        "bad = [m for m in ('torch', 'transformers', 'trl', 'peft') if m in sys.modules]; "
        "print(bad); sys.exit(1 if bad else 0)"
    )
    r = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True)
    assert r.returncode == 0, r.stdout + r.stderr


def test_conversation_tools_mode_maps_actions_and_replies():
    env, msgs = _oracle_messages("r/from")
    conv = ChatFormat(tools=True, system="env").conversation(msgs)
    assert conv[0] == msgs[0] and conv[1] == msgs[1]
    assert conv[2]["role"] == "assistant" and conv[2]["content"] == ""
    call = conv[2]["tool_calls"][0]["function"]
    assert call["name"] == "ask_user" and call["arguments"]["labels"] == [["", "year", "Missing"]]
    assert conv[3] == {"role": "tool", "name": "ask_user", "content": msgs[3]["content"]}
    assert conv[-1]["tool_calls"][0]["function"] == {
        "name": "stop",
        "arguments": {"sql": "SELECT sum(price) FROM sales WHERE city_id = 1 AND year = 2020"},
    }
    env.close()


def test_conversation_keeps_invalid_text_and_error_as_user():
    msgs = [
        {"role": "system", "content": "S"},
        {"role": "user", "content": "U"},
        {"role": "assistant", "content": "I think the answer is 3"},
        {"role": "user", "content": "invalid action: could not find an action"},
        {
            "role": "assistant",
            "content": '<tool_call>{"name": "execute_sql", "arguments": {"sql": "SELECT 1"}}</tool_call>',
        },
        {"role": "tool", "content": "OK: 1 row(s)."},
    ]
    conv = ChatFormat(tools=True).conversation(msgs)
    assert conv[2] == {"role": "assistant", "content": "I think the answer is 3"}
    assert conv[3] == {"role": "user", "content": "invalid action: could not find an action"}
    assert conv[4]["tool_calls"][0]["function"] == {
        "name": "execute_sql",
        "arguments": {"sql": "SELECT 1"},
    }
    assert conv[5] == {"role": "tool", "name": "execute_sql", "content": "OK: 1 row(s)."}
    text = ChatFormat(tools=False).conversation(msgs)
    assert [m["role"] for m in text] == ["system", "user", "assistant", "user", "assistant", "user"]
    assert text[4]["content"] == msgs[4]["content"]


def test_system_variants():
    env, msgs = _oracle_messages("r/ok1")
    env_sys = msgs[0]["content"]
    brief = ChatFormat(system="brief", include_schema=False).system_text(env_sys)
    assert (
        "sales(" not in brief
        and "<tool_call>" not in brief
        and brief.startswith("You are a data assistant")
    )
    with_schema = ChatFormat(system="brief", include_schema=True).system_text(env_sys)
    assert "sales(" in with_schema and "<tool_call>" not in with_schema
    text_brief = ChatFormat(tools=False, system="brief", include_schema=False).system_text(env_sys)
    assert "<tool_call>" in text_brief  # text mode keeps the action format help
    assert ChatFormat(system="Be terse.").system_text(env_sys) == "Be terse."
    with pytest.raises(ValueError, match="unknown key"):
        ChatFormat.from_dict({"tool": True})
    env.close()


def test_action_to_tool_call_stop_without_sql_has_no_arguments():
    assert action_to_tool_call({"type": "stop", "sql": None})["function"] == {
        "name": "stop",
        "arguments": {},
    }
    assert action_to_tool_call({"type": "abstain", "reason": "no"})["function"]["arguments"] == {
        "reason": "no"
    }


@needs_train
def test_tool_schemas_match_the_training_adapter():
    from transformers.utils import get_json_schema

    from clarisql.policies.hf import TOOL_METHODS, tool_schemas
    from clarisql.training.env_adapter import ClarifySQLToolEnv

    schemas = tool_schemas()
    assert [s["function"]["name"] for s in schemas] == list(TOOL_METHODS)
    ask = schemas[0]["function"]["parameters"]
    assert ask["required"] == ["question"] and "labels" in ask["properties"]
    adapter = ClarifySQLToolEnv(str(task_file()), env_kwargs=ENV_KW)
    assert [get_json_schema(getattr(adapter, n)) for n in TOOL_METHODS] == schemas


@needs_train
def test_hf_policy_loads_checkpoint_and_plays_episodes():
    d = tiny_model_dir()
    policy = make_policy(f"hf:{d}", max_new_tokens=24)
    assert policy.format == ChatFormat.from_dict(FORMAT)  # read from clarisql_format.json
    env = ClarifySQLEnv(str(task_file()), **ENV_KW)
    for tid in ("r/ok1", "u/1"):
        res = run_episode(env, policy, tid, seed=0)
        assert res.summary["record"]["task_id"] == tid
        assert 1 <= len(res.turns) <= ENV_KW["max_turns"]
        assert all(isinstance(t["action"], (str, dict)) for t in res.turns)
    env.close()


@needs_train
def test_hf_prompt_equals_trl_grpo_prompt():
    """HFPolicy renders an episode's opening exactly as TRL's GRPOTrainer renders the adapter's prompt."""
    from clarisql.training.data import grpo_prompts
    from clarisql.training.env_adapter import ClarifySQLToolEnv

    d = tiny_model_dir()
    fmt = ChatFormat.from_dict(FORMAT)
    policy = make_policy(f"hf:{d}", format=fmt)
    env = ClarifySQLEnv(str(task_file()), **ENV_KW)
    row = grpo_prompts(env, ["r/where"], fmt)[0]
    adapter = ClarifySQLToolEnv(str(task_file()), env_kwargs=ENV_KW)
    opening = adapter.reset(task_id=row["task_id"])
    prompt = row["prompt"][:-1] + [
        {"role": "user", "content": row["prompt"][-1]["content"] + opening}
    ]
    tools = [getattr(adapter, n) for n in ("ask_user", "execute_sql", "abstain", "stop")]
    trl_ids = policy.tokenizer.apply_chat_template(
        prompt, tools=tools, add_generation_prompt=True, tokenize=True, return_dict=False
    )
    _, info = env.reset(options={"task_id": "r/where"})
    assert policy.prompt_ids(info["messages"]) == list(trl_ids)
    env.close()


@needs_train
def test_act_batch_generates_for_several_episodes_and_is_deterministic():
    d = tiny_model_dir()
    policy = make_policy(f"hf:{d}", format=FORMAT, max_new_tokens=16, batch_size=2)
    envs = [ClarifySQLEnv(str(task_file()), **ENV_KW) for _ in range(3)]
    obs_infos = [e.reset(options={"task_id": t}) for e, t in zip(envs, ("r/ok1", "r/where", "u/2"))]
    a1 = policy.act_batch([o for o, _ in obs_infos], [i for _, i in obs_infos])
    a2 = [policy.act(o, i) for o, i in obs_infos]
    assert len(a1) == 3 and all(isinstance(a, str) for a in a1)
    assert a1 == a2  # greedy: batching (left padding) does not change the output
    with pytest.raises(ValueError, match="messages"):
        policy.act_batch([obs_infos[0][0], obs_infos[1][0]], [{}, {}])
    for e in envs:
        e.close()


@needs_train
def test_context_exhaustion_stops_instead_of_truncating():
    d = tiny_model_dir()
    policy = make_policy(f"hf:{d}", format=FORMAT, max_new_tokens=16)
    policy.max_positions = 10
    env = ClarifySQLEnv(str(task_file()), **ENV_KW)
    obs, info = env.reset(options={"task_id": "r/ok1"})
    assert policy.act(obs, info) == {"type": "stop", "sql": None}
    env.close()


@needs_train
def test_lora_adapter_folder_loads_with_hf_prefix(tmp_path):
    import torch
    from peft import LoraConfig, get_peft_model
    from transformers import AutoModelForCausalLM, AutoTokenizer

    d = tiny_model_dir()
    base = AutoModelForCausalLM.from_pretrained(d)
    tok = AutoTokenizer.from_pretrained(d)
    peft_model = get_peft_model(
        base,
        LoraConfig(
            task_type="CAUSAL_LM",
            r=4,
            lora_alpha=8,
            target_modules=["q_proj", "v_proj"],
            init_lora_weights=False,
        ),
    )
    out = tmp_path / "adapter"
    peft_model.save_pretrained(out)
    tok.save_pretrained(out)
    ChatFormat.from_dict(FORMAT).save(out)
    assert json.loads((out / "adapter_config.json").read_text())["base_model_name_or_path"] == str(
        d
    )
    policy = make_policy(f"hf:{out}", max_new_tokens=8)
    ids = torch.tensor([[1, 2, 3, 4]])
    with torch.no_grad():
        want = peft_model(input_ids=ids).logits
        got = policy.model(input_ids=ids).logits
    assert torch.allclose(want, got, atol=1e-5)  # the adapter is applied (merged), not ignored
    with torch.no_grad():
        plain = AutoModelForCausalLM.from_pretrained(d)(input_ids=ids).logits
    assert not torch.allclose(plain, got, atol=1e-5)


@needs_train
def test_missing_model_folder_is_a_clear_error(tmp_path):
    with pytest.raises((FileNotFoundError, ValueError), match="does not exist|cannot load"):
        make_policy(f"hf:{tmp_path / 'nope' / 'model'}")
