"""Framework adapters (clarisql.envs.adapters) against the real packages and a fake model server.

SkyRL-gym and verifiers tests need those packages (the ``skyrl`` / ``verifiers`` extras) and
skip without them; the model is ``tests/_fake_openai.py`` on loopback, answering with scripted
tool calls, so every episode's reward is known: the gold query scores the outcome, the same
query on an unanswerable task does not, and abstaining there does.
"""

from __future__ import annotations

import asyncio
import json
import os
import sys
from pathlib import Path
from typing import Any

import pytest

from clarisql.envs.adapters.episode import EnvSpec, TextEpisode, reply_action
from clarisql.envs.splits import split_of
from clarisql.envs.suites import load_suite

sys.path.insert(0, str(Path(__file__).parent))
from _fake_openai import FakeOpenAI, completion  # noqa: E402

PLUGINS = Path(__file__).resolve().parent.parent / "envs" / "adapters" / "plugins"


def _call(name: str, **arguments: Any) -> str:
    return "<tool_call>" + json.dumps({"name": name, "arguments": arguments}) + "</tool_call>"


@pytest.fixture(scope="module")
def tasks() -> dict[str, Any]:
    suite = load_suite("builtin")
    answerable = next(
        t for t in suite.tasks if t.answerable and not t.writable and not t.underspecs
    )
    unanswerable = next(t for t in suite.tasks if not t.answerable and not t.writable)
    return {"answerable": answerable, "unanswerable": unanswerable}


# --- the shared core ---------------------------------------------------------------------------
def test_text_episode_plays_the_env_episode(tasks: dict[str, Any]) -> None:
    t = tasks["answerable"]
    ep = TextEpisode({"suite": "builtin"})
    messages = ep.start(t.id, seed=0)
    assert [m["role"] for m in messages] == ["system", "user"]
    assert "execute_sql" in messages[0]["content"]
    # a structured tool call (OpenAI form, JSON-text arguments) is the same action as the text
    turn = ep.act(
        {
            "role": "assistant",
            "content": None,
            "tool_calls": [
                {"function": {"name": "execute_sql", "arguments": '{"sql": "SELECT 1"}'}}
            ],
        }
    )
    assert turn.message["role"] == "tool" and not turn.done
    turn = ep.act("no tool call here")  # an invalid action: answered, the episode goes on
    assert turn.message["role"] == "user" and turn.info["error"] and not turn.done
    turn = ep.act(_call("stop", sql=t.gold_sql))
    assert turn.done and ep.correct() and ep.components()["outcome"] > 0
    assert ep.total == pytest.approx(sum(ep.components().values()))
    names = [t["function"]["name"] for t in ep.tools]
    # search_tables only where the env offers it (a large schema, with bm25s installed)
    assert names == ["ask_user", "execute_sql", "abstain", "stop"] + (
        ["search_tables"] if ep.env.table_search else []
    )
    ep.close()


def test_reply_action_forms() -> None:
    call = {"name": "abstain", "arguments": {"reason": "x"}}
    assert reply_action({"tool_calls": [{"type": "function", "function": call}]}) == call
    assert reply_action({"content": [{"type": "text", "text": "a"}, {"text": "b"}]}) == "ab"
    assert reply_action({"function": {"name": "stop", "arguments": ""}}) == {
        "name": "stop",
        "arguments": {},
    }
    assert reply_action("plain") == "plain"
    # tool_calls that is no list (one call as an object, or junk) never raises
    assert reply_action({"tool_calls": {"type": "function", "function": call}}) == call
    assert reply_action({"tool_calls": 5}) == {"name": None}


def test_env_spec_rejects_unknown_options_and_splits() -> None:
    with pytest.raises(ValueError, match="unknown clarisql env options"):
        EnvSpec.from_mapping({"suite": "builtin", "rewards": "x"})
    env = EnvSpec.from_mapping({"gate": "text", "reward": "outcome"}).make_env()
    assert env.gate == "text" and env.reward_spec.name == "outcome"  # passed to the env
    env.close()
    train = EnvSpec(split="train").task_ids()
    test = EnvSpec(split="test").task_ids()
    assert train and test and not set(train) & set(test)
    assert all(split_of(i) == "test" for i in test)
    assert len(train) + len(test) == len(EnvSpec().task_ids())


# --- SkyRL-gym ---------------------------------------------------------------------------------
def _skyrl_episode(env: Any, fake: FakeOpenAI) -> list[dict[str, Any]]:
    """SkyRL's generator loop, shortened: model call on the chat, env.step on the reply."""
    from openai import OpenAI

    client = OpenAI(base_url=fake.url, api_key="x", max_retries=0)
    chat, _ = env.init([{"role": "user", "content": "ignored: the env's own prompt is used"}])
    outs = []
    for _ in range(8):  # bounded
        reply = client.chat.completions.create(model="fake", messages=chat)
        text = reply.choices[0].message.content
        out = env.step(text)
        outs.append(out)
        chat = chat + [{"role": "assistant", "content": text}] + out["observations"]
        if out["done"]:
            break
    env.close()
    return outs


def test_skyrl_env_with_the_real_package(tasks: dict[str, Any]) -> None:
    skyrl_gym = pytest.importorskip("skyrl_gym", reason="needs the skyrl extra (skyrl-gym)")
    from clarisql.envs.adapters.skyrl_env import register

    env_id = register()
    assert register() == env_id  # idempotent
    good, bad = tasks["answerable"], tasks["unanswerable"]
    config = {"suite": "builtin", "reward": "default"}
    with FakeOpenAI() as fake:
        fake.script = [
            (200, {"reply": _call("execute_sql", sql="SELECT 1")}, 0.0),
            (200, {"reply": _call("stop", sql=good.gold_sql)}, 0.0),
        ]
        outs = _skyrl_episode(
            skyrl_gym.make(env_id, env_config=config, extras={"task_id": good.id}), fake
        )
        assert fake.requests[0]["messages"][0]["role"] == "system"  # the env's own prompt
        assert fake.requests[1]["messages"][-1]["content"].startswith("OK: 1 row")
    assert [o["done"] for o in outs] == [False, True]
    assert outs[-1]["metadata"]["correct"] is True
    assert sum(o["reward"] for o in outs) == pytest.approx(outs[-1]["metadata"]["episode_reward"])
    assert outs[-1]["metadata"]["reward_components"]["outcome"] > 0

    # the same stop on an unanswerable task loses; abstaining there wins
    rewards = {}
    for name, reply in (("stop", _call("stop", sql="SELECT 1")), ("abstain", _call("abstain"))):
        with FakeOpenAI() as fake:
            fake.script = [(200, {"reply": reply}, 0.0)]
            env = skyrl_gym.make(
                env_id,
                env_config=config,
                extras={"reward_spec": {"ground_truth": {"task_id": bad.id}}},
            )
            outs = _skyrl_episode(env, fake)
        rewards[name] = sum(o["reward"] for o in outs)
        assert outs[-1]["done"] and outs[-1]["metadata"]["correct"] is (name == "abstain")
    assert rewards["abstain"] > rewards["stop"]
    with pytest.raises(KeyError):
        skyrl_gym.make(env_id, env_config=config, extras={"task_id": "no/such/task"})


# --- verifiers ---------------------------------------------------------------------------------
def _sse(body: dict[str, Any], text: str) -> bytes:
    """A streamed chat completion (what verifiers' interception proxy asks for) as raw HTTP."""
    base = {"id": "c", "object": "chat.completion.chunk", "created": 0, "model": body["model"]}
    delta = {"role": "assistant", "content": text}
    chunks = [
        base | {"choices": [{"index": 0, "delta": delta, "finish_reason": None}]},
        base | {"choices": [{"index": 0, "delta": {}, "finish_reason": "stop"}]},
        base
        | {"choices": [], "usage": {"prompt_tokens": 1, "completion_tokens": 1, "total_tokens": 2}},
    ]
    sse = ("".join(f"data: {json.dumps(c)}\n\n" for c in chunks) + "data: [DONE]\n\n").encode()
    head = (
        "HTTP/1.1 200 OK\r\nContent-Type: text/event-stream\r\n"
        f"Content-Length: {len(sse)}\r\nConnection: close\r\n\r\n"
    ).encode()
    return head + sse


def _scripted(replies: list[str]) -> Any:
    def behave(body: dict[str, Any], n: int) -> tuple[int, bytes, float]:
        text = replies[min(n, len(replies) - 1)]
        if body.get("stream"):
            return -1, _sse(body, text), 0.0
        return 200, json.dumps(completion(text)).encode(), 0.0

    return behave


def _verifiers_episode(env: Any, task_id: str, replies: list[str]) -> tuple[Any, FakeOpenAI]:
    import verifiers.v1 as vf

    task = next(iter(env.taskset.include(ids=[task_id])))
    with FakeOpenAI(_scripted(replies), max_requests=20) as fake:
        os.environ.setdefault("CLARISQL_TEST_KEY", "x")
        ctx = vf.ModelContext(
            model="fake",
            client=vf.EvalClientConfig(base_url=fake.url, api_key_var="CLARISQL_TEST_KEY"),
        )

        async def run() -> Any:
            async with env.serving():
                return await asyncio.wait_for(env.run_episode(task, ctx), timeout=300)

        episode = asyncio.run(run())
    return episode, fake


@pytest.fixture(scope="module")
def vf_env() -> Any:
    pytest.importorskip("verifiers.v1", reason="needs the verifiers extra (verifiers>=0.4)")
    import shutil

    if (
        shutil.which("uv") is None
        and shutil.which("uv", path=str(Path(sys.executable).parent)) is None
    ):
        pytest.skip("verifiers' chat harness runs its program with uv, which is not installed")
    os.environ["PATH"] = f"{Path(sys.executable).parent}{os.pathsep}{os.environ.get('PATH', '')}"
    sys.path.insert(0, str(PLUGINS))  # the plugin module as an install puts it on sys.path
    from clarisql.envs.adapters.verifiers_env import load_environment

    return load_environment("builtin", reward="default")


def test_verifiers_taskset_is_the_env_prompt(vf_env: Any, tasks: dict[str, Any]) -> None:
    import verifiers.v1 as vf

    # verifiers' own loader resolves the plugin id to the same taskset
    config = vf.resolve_env_config({"taskset": {"id": "clarisql-vf", "split": "test"}})
    test_ids = [t.data.id for t in vf.load_environment(config).taskset]
    assert test_ids and all(split_of(i) == "test" for i in test_ids)
    t = tasks["answerable"]
    task = next(iter(vf_env.taskset.include(ids=[t.id])))
    ep = TextEpisode({"suite": "builtin"})
    system, opening = ep.start(t.id, seed=0)
    ep.close()
    assert task.data.system_prompt == system["content"] and task.data.prompt == opening["content"]


def test_verifiers_episode_rubric_is_the_reward_spec(vf_env: Any, tasks: dict[str, Any]) -> None:
    good, bad = tasks["answerable"], tasks["unanswerable"]
    episode, fake = _verifiers_episode(
        vf_env, good.id, [_call("execute_sql", sql="SELECT 1"), _call("stop", sql=good.gold_sql)]
    )
    assert not episode.errors
    (trace,) = episode.traces
    assert trace.rewards["outcome"].score > 0 and trace.metrics["correct"] == 1.0
    assert trace.metrics["turns"] == 2.0
    sent = fake.requests[-1]["messages"]
    assert sent[-1]["content"].startswith("OK: 1 row")  # the env's answer came back as the user

    scores = {}
    for name, reply in (("stop", _call("stop", sql="SELECT 1")), ("abstain", _call("abstain"))):
        episode, _ = _verifiers_episode(vf_env, bad.id, [reply])
        (trace,) = episode.traces
        scores[name] = sum(r.score * r.weight for r in trace.rewards.values())
        assert trace.metrics["correct"] == float(name == "abstain")
    assert scores["abstain"] > scores["stop"]


# --- verl (its documented interaction interface; verl itself is not installed here) -------------
def test_verl_recipe_interaction_plays_episodes(tasks: dict[str, Any]) -> None:
    import importlib

    import yaml

    from clarisql.envs.adapters import verl_reward

    root = Path(__file__).resolve().parent.parent
    recipe = yaml.safe_load((root / "configs/verl/clarisql_multiturn_grpo.yaml").read_text())
    multi = recipe["actor_rollout_ref"]["rollout"]["multi_turn"]
    assert multi["enable"] and recipe["data"]["return_raw_chat"]
    (entry,) = yaml.safe_load((root / multi["interaction_config_path"]).read_text())["interaction"]
    assert (root / recipe["custom_reward_function"]["path"]).is_file()
    module, _, name = entry["class_name"].rpartition(".")
    cls = getattr(importlib.import_module(module), name)  # as verl's registry loads it
    interaction = cls({"name": entry["name"], **entry["config"]})
    assert interaction.name == "clarisql"

    async def play(task_id: str, replies: list[str]) -> tuple[list, float, float]:
        from openai import AsyncOpenAI

        iid = await interaction.start_interaction(None, task_id=task_id, seed=0)
        ep = TextEpisode({"suite": "builtin"})
        chat = ep.start(task_id, seed=0)  # the row's prompt (the export's `prompt` column)
        ep.close()
        turns = []
        with FakeOpenAI() as fake:
            fake.script = [(200, {"reply": r}, 0.0) for r in replies]
            client = AsyncOpenAI(base_url=fake.url, api_key="x", max_retries=0)
            for _ in range(6):  # verl's max_assistant_turns, here bounded small
                reply = await client.chat.completions.create(model="fake", messages=chat)
                chat = chat + [{"role": "assistant", "content": reply.choices[0].message.content}]
                done, text, score, meta = await interaction.generate_response(iid, chat)
                turns.append((done, score, meta))
                chat = chat + [{"role": "user", "content": text}]
                if done:
                    break
            await client.close()
        total = await interaction.calculate_score(iid)
        await interaction.finalize_interaction(iid)
        reward = verl_reward.compute_score(
            "clarisql/builtin", "", task_id, {"turn_scores": [t[1] for t in turns]}
        )
        return turns, total, reward

    good, bad = tasks["answerable"], tasks["unanswerable"]
    turns, total, reward = asyncio.run(
        play(good.id, [_call("execute_sql", sql="SELECT 1"), _call("stop", sql=good.gold_sql)])
    )
    assert [t[0] for t in turns] == [False, True] and turns[-1][2]["correct"] is True
    assert reward == pytest.approx(total) and total > 0
    _, lost, _ = asyncio.run(play(bad.id, [_call("stop", sql="SELECT 1")]))
    _, won, _ = asyncio.run(play(bad.id, [_call("abstain", reason="not in the data")]))
    assert won > lost
    assert interaction._episodes == {}  # every episode released
    with pytest.raises(ValueError, match="task_id"):
        asyncio.run(interaction.start_interaction(None))


def test_vf_eval_cli_runs_the_plugin(vf_env: Any, tasks: dict[str, Any], tmp_path: Path) -> None:
    import shutil
    import subprocess

    exe = shutil.which("vf-eval", path=str(Path(sys.executable).parent)) or shutil.which("vf-eval")
    if exe is None:
        pytest.skip("the vf-eval CLI (verifiers) is not installed")
    good = tasks["answerable"]
    replies = [_call("execute_sql", sql="SELECT 1"), _call("stop", sql=good.gold_sql)]
    with FakeOpenAI(_scripted(replies), max_requests=20) as fake:
        env = {
            **os.environ,
            "CLARISQL_TEST_KEY": "x",
            # the plugin module where an install puts it (an editable install needs nothing)
            "PYTHONPATH": os.pathsep.join([str(PLUGINS), os.environ.get("PYTHONPATH", "")]),
        }
        out = subprocess.run(
            [exe, "clarisql-vf", "-m", "fake", "--client.base-url", fake.url,
             "--client.api-key-var", "CLARISQL_TEST_KEY", "--no-push", "-o", str(tmp_path),
             "--select.include.ids", json.dumps([good.id])],
            capture_output=True, text=True, timeout=900, env=env,
        )  # fmt: skip
    assert out.returncode == 0, out.stderr[-2000:]
    (traces,) = list(tmp_path.rglob("traces.jsonl"))
    (episode,) = [json.loads(line) for line in traces.read_text().splitlines() if line.strip()]
    (trace,) = episode["traces"]
    assert episode["task"]["data"]["id"] == good.id and episode["ok"]
    assert trace["rewards"]["outcome"]["score"] > 0 and trace["metrics"]["correct"] == 1.0
