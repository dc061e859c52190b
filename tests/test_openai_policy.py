"""``openai:MODEL@URL`` against a small fake OpenAI-compatible server on 127.0.0.1.

The server is started by each test on a free port, answers a bounded number of requests and
plays a model that knows the fixture tasks (so a correct run proves the chat loop works).
"""

from __future__ import annotations

import importlib.util
import json
import socket
from pathlib import Path
from typing import Any

import pytest

from clarisql.cli import main as cli_main
from clarisql.envs.env import ClarifySQLEnv
from clarisql.policies import make_policy
from clarisql.policies.openai_compat import EndpointError, OpenAIPolicy, parse_spec
from clarisql.rollouts.episode import run_episode
from clarisql.rollouts.runner import RunConfig, run_eval
from clarisql.rollouts.store import read_trajectories

from ._fake_openai import FakeOpenAI

_spec = importlib.util.spec_from_file_location(
    "_rollout_tasks", Path(__file__).with_name("_rollout_tasks.py")
)
fx = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(fx)

TASKS = {t.utterance: t for t in fx.make_tasks(n_cities=2)}


def solver_reply(body: dict[str, Any]) -> dict[str, Any]:
    """The "model": clarify the gold labels, abstain when unanswerable, run the gold SQL, stop."""
    msgs = body["messages"]
    task = TASKS[msgs[1]["content"]]
    turn = sum(m["role"] == "assistant" for m in msgs)
    plan: list[tuple[str, dict[str, Any]]] = []
    if not task.answerable:
        plan = [("abstain", {"reason": "not in the database"})]
    else:
        if task.underspecs:
            plan.append(
                (
                    "ask_user",
                    {"question": "Which?", "labels": [u.label.to_json() for u in task.underspecs]},
                )
            )
        plan += [("execute_sql", {"sql": a}) for a in task.gold_actions]
        if task.gold_sql:
            plan.append(("execute_sql", {"sql": task.gold_sql}))
        plan.append(("stop", {}))
    name, args = plan[min(turn, len(plan) - 1)]
    if body.get("tools"):
        msg = {
            "role": "assistant",
            "content": None,
            "tool_calls": [
                {
                    "id": f"call_{turn}",
                    "type": "function",
                    "function": {"name": name, "arguments": json.dumps(args)},
                }
            ],
        }
    else:
        msg = {
            "role": "assistant",
            "content": "Thinking... <tool_call>"
            + json.dumps({"name": name, "arguments": args})
            + "</tool_call>",
        }
    return {
        "id": "x",
        "object": "chat.completion",
        "choices": [{"index": 0, "message": msg, "finish_reason": "stop"}],
        "usage": {"prompt_tokens": 10, "completion_tokens": 5},
    }


FakeServer = FakeOpenAI


def ok(body: dict[str, Any], n: int) -> tuple[int, bytes, float]:
    return 200, json.dumps(solver_reply(body)).encode(), 0.0


@pytest.fixture(scope="module")
def task_file(tmp_path_factory) -> Path:
    return fx.build_task_file(tmp_path_factory.mktemp("suite"), n_cities=2)


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def test_parse_spec():
    assert parse_spec("Qwen/Qwen2.5-7B@http://h:8000/v1") == ("Qwen/Qwen2.5-7B", "http://h:8000/v1")
    assert parse_spec("me@corp/model@https://api.x.com/v1") == (
        "me@corp/model",
        "https://api.x.com/v1",
    )
    for bad in ("model", "model@ftp://x", "@http://x"):
        with pytest.raises(ValueError):
            parse_spec(bad)


@pytest.mark.parametrize("tools", [False, True])
def test_openai_policy_solves_the_tasks_through_the_runner(task_file, tmp_path, monkeypatch, tools):
    monkeypatch.setenv("MY_KEY", "sk-test-123")
    with FakeServer(ok) as srv:
        cfg = RunConfig(
            suite=str(task_file),
            policy=f"openai:fake-model@{srv.url}",
            policy_kwargs={
                "api_key_env": "MY_KEY",
                "tools": tools,
                "temperature": 0.7,
                "max_tokens": 64,
            },
        )
        o = run_eval(cfg, tmp_path / "run", concurrency=3, progress=False)
    errors = tmp_path / "run" / "errors.jsonl"
    why = errors.read_text()[:3000] if errors.exists() else ""
    assert o.complete and o.n_errors == 0 and o.metrics["pass@1"] == 1.0, why
    assert o.metrics["detection"]["from"]["f1"] == 1.0
    assert all(h.get("Authorization") == "Bearer sk-test-123" for h in srv.headers)
    first = srv.requests[0]
    assert (
        first["model"] == "fake-model" and first["temperature"] == 0.7 and first["max_tokens"] == 64
    )
    assert (
        first["messages"][0]["role"] == "system" and "tool_call" in first["messages"][0]["content"]
    )
    assert isinstance(first["seed"], int)
    assert ("tools" in first) == tools
    # a later request carries the whole conversation: the reply and the observation after it
    longest = max(srv.requests, key=lambda b: len(b["messages"]))["messages"]
    roles = [m["role"] for m in longest]
    assert roles[:3] == ["system", "user", "assistant"]
    if tools:
        assert "tool" in roles and all(
            m.get("tool_call_id") for m in longest if m["role"] == "tool"
        )
    else:
        assert any(
            m["role"] == "user" and m["content"].startswith("[execute_sql result]") for m in longest
        )
    lines = read_trajectories(tmp_path / "run" / "trajectories.jsonl")
    assert all(x["turns"][0]["raw"] for x in lines)  # the model's text is kept


def test_unusable_replies_become_invalid_actions(task_file):
    replies = [
        b"this is not json",
        b'{"choices": []}',
        b'{"choices": [{"message": {"content": ""}}]}',
        json.dumps(
            {
                "choices": [
                    {
                        "message": {
                            "content": None,
                            "tool_calls": [
                                {
                                    "id": "c1",
                                    "type": "function",
                                    "function": {"name": "execute_sql", "arguments": "{not json"},
                                }
                            ],
                        }
                    }
                ]
            }
        ).encode(),
    ]

    def garbage(body: dict[str, Any], n: int) -> tuple[int, bytes, float]:
        return 200, replies[n % len(replies)], 0.0

    env = ClarifySQLEnv(str(task_file), max_turns=4)
    with FakeServer(garbage) as srv:
        pol = OpenAIPolicy(f"m@{srv.url}", tools=True, max_retries=0)
        res = run_episode(env, pol, "riverton/well", seed=1)
    assert res.summary["record"]["end"] == "truncated" and not res.correct
    assert len(srv.requests) == 4
    assert all(t["error"] and t["error"].startswith("invalid action") for t in res.turns)
    assert "unusable reply" in res.turns[0]["raw"] and "not valid JSON" in res.turns[3]["error"]
    assert pol.stats["unusable_replies"] == 2  # the empty content is a reply, just an empty action
    assert "empty action" in res.turns[2]["error"]


def test_retries_transient_failures_then_succeeds(task_file):
    def flaky(body: dict[str, Any], n: int) -> tuple[int, bytes, float]:
        if n == 0:
            return 503, b'{"error": {"message": "overloaded"}}', 0.0
        if n == 1:
            return -1, b"GARBAGE NOT HTTP\r\n\r\n", 0.0
        if n == 2:
            return 200, json.dumps(solver_reply(body)).encode(), 3.0  # slower than the timeout
        return ok(body, n)

    env = ClarifySQLEnv(str(task_file))
    with FakeServer(flaky) as srv:
        # (a timeout a loopback reply meets on a loaded machine too: 0.3 s did not, always)
        pol = make_policy(f"openai:m@{srv.url}", timeout_s=1.0, max_retries=3, backoff_s=0.01)
        res = run_episode(env, pol, "riverton/from", seed=1)
    assert res.correct and pol.stats["retries"] == 3


def test_endpoint_failures_are_recorded_and_retried_by_the_next_run(task_file, tmp_path):
    state = {"down": True}

    def sometimes_down(body: dict[str, Any], n: int) -> tuple[int, bytes, float]:
        if state["down"] and TASKS[body["messages"][1]["content"]].category == "where":
            return 500, b"internal error", 0.0
        return ok(body, n)

    with FakeServer(sometimes_down) as srv:
        cfg = RunConfig(
            suite=str(task_file),
            policy=f"openai:m@{srv.url}",
            policy_kwargs={"max_retries": 1, "backoff_s": 0.0},
        )
        o = run_eval(cfg, tmp_path, concurrency=2, progress=False)
        assert not o.complete and o.n_errors == 2 and o.n_done == 12
        errors = [json.loads(x) for x in (tmp_path / "errors.jsonl").read_text().splitlines()]
        assert {e["task_id"] for e in errors} == {"riverton/where", "lakemont/where"}
        assert "failed after 2 tries" in errors[0]["error"] and "HTTP 500" in errors[0]["error"]
        state["down"] = False
        o2 = run_eval(cfg, tmp_path, concurrency=2, progress=False)
    assert o2.complete and o2.n_new == 2 and o2.metrics["pass@1"] == 1.0


def test_concurrency_limit_per_endpoint(task_file, tmp_path):
    def slow(body: dict[str, Any], n: int) -> tuple[int, bytes, float]:
        return 200, json.dumps(solver_reply(body)).encode(), 0.02

    with FakeServer(slow) as srv:
        cfg = RunConfig(
            suite=str(task_file), policy=f"openai:m@{srv.url}", policy_kwargs={"concurrency": 2}
        )
        o = run_eval(cfg, tmp_path, concurrency=6, progress=False, write_reports=False)
    assert o.complete and srv.max_in_flight <= 2


def test_fatal_http_error_stops_the_run_at_once(task_file, tmp_path, capsys):
    def unauthorized(body: dict[str, Any], n: int) -> tuple[int, bytes, float]:
        return 401, b'{"error": {"message": "Incorrect API key provided"}}', 0.0

    with FakeServer(unauthorized) as srv:
        code = cli_main(
            [
                "eval",
                "--suite",
                str(task_file),
                "--policy",
                f"openai:m@{srv.url}",
                "--concurrency",
                "1",
                "--out",
                str(tmp_path),
                "--no-progress",
                "--api-key-env",
                "NO_SUCH_KEY_VAR",
            ]
        )
    assert code == 1 and len(srv.requests) == 1
    err = capsys.readouterr().err
    assert "HTTP 401" in err and "$NO_SUCH_KEY_VAR" in err and "Incorrect API key" in err
    with pytest.raises(EndpointError, match="HTTP 401"):
        with FakeServer(unauthorized) as srv:
            pol = OpenAIPolicy(f"m@{srv.url}")
            pol.reset({"last": "hi", "schema": ""}, {})
            pol.act({"last": "hi"}, {})


def test_unreachable_endpoint_is_a_one_line_error(task_file, tmp_path, capsys):
    url = f"http://127.0.0.1:{_free_port()}/v1"
    code = cli_main(
        [
            "eval",
            "--suite",
            str(task_file),
            "--policy",
            f"openai:m@{url}",
            "--out",
            str(tmp_path / "o"),
        ]
    )
    assert code == 2
    err = capsys.readouterr().err.strip()
    assert (
        err.startswith("clarisql eval: error: openai endpoint")
        and "unreachable" in err
        and "\n" not in err
    )
    assert not (tmp_path / "o").exists()
    # the policy alone: bounded retries, then a clear error
    pol = OpenAIPolicy(f"m@{url}", max_retries=1, backoff_s=0.0, timeout_s=2)
    pol.reset({"last": "hi", "schema": ""}, {})
    with pytest.raises(EndpointError, match="failed after 2 tries"):
        pol.act({"last": "hi"}, {})
