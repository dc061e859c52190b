"""The served environment: OpenEnv's validator, WebSocket and HTTP sessions on loopback.

A real uvicorn server runs in a thread on 127.0.0.1 (a free port); every loop is bounded.
"""

from __future__ import annotations

import json
import shutil
import socket
import subprocess
import threading
import time
from collections.abc import Iterator

import pytest

pytest.importorskip("openenv.core.env_server", reason="needs the serve extra (openenv-core)")
uvicorn = pytest.importorskip("uvicorn", reason="needs the serve extra (uvicorn)")
httpx = pytest.importorskip("httpx", reason="needs httpx")

from clarisql.envs import SessionLimits  # noqa: E402
from clarisql.envs.env import ClarifySQLEnv  # noqa: E402
from clarisql.envs.server import ServeConfig  # noqa: E402
from clarisql.envs.server.app import make_app, uvicorn_options  # noqa: E402
from clarisql.envs.server.client import RemoteClarifySQLEnv  # noqa: E402
from clarisql.policies import make_policy  # noqa: E402

#: the served sessions' statement budget: long enough that a slow statement is still running
#: while another session takes five quick steps, even on a busy machine
SLOW_BUDGET_S = 8.0


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


@pytest.fixture(scope="module")
def server() -> Iterator[str]:
    port = _free_port()
    config = ServeConfig(
        suite="builtin",
        port=port,
        max_sessions=4,
        idle_timeout_s=600,
        env_kwargs={"limits": SessionLimits(timeout_s=SLOW_BUDGET_S)},
    )
    srv = uvicorn.Server(uvicorn.Config(make_app(config), **uvicorn_options(config)))
    thread = threading.Thread(target=srv.run, daemon=True)
    thread.start()
    url = f"http://127.0.0.1:{port}"
    deadline = time.monotonic() + 30
    while time.monotonic() < deadline:
        try:
            if httpx.get(f"{url}/health", timeout=1).status_code == 200:
                break
        except httpx.HTTPError:
            time.sleep(0.1)
    else:
        pytest.fail("the server did not start within 30 s")
    yield url
    srv.should_exit = True
    thread.join(timeout=10)


def test_openenv_validate_passes(server: str) -> None:
    exe = shutil.which("openenv")
    if exe is None:
        pytest.skip("the openenv CLI (openenv-core) is not on PATH")
    out = subprocess.run(
        [exe, "validate", "--url", server], capture_output=True, text=True, timeout=600
    )  # (a generous bound: on a busy machine the CLI's own start-up takes most of it)
    report = json.loads(out.stdout)
    assert report["passed"], report["summary"]
    assert out.returncode == 0


def _episode(env, task, policy_name: str) -> list[tuple]:
    """Play one episode with a scripted policy; the trace of what the agent saw and scored."""
    task_id = task.id
    policy = make_policy(policy_name)
    policy.seed(0)
    obs, info = env.reset(seed=3, options={"task_id": task_id})
    policy.reset(obs, info, task if policy.privileged else None)
    trace = [(obs["last"], obs["schema"][:200])]
    for _ in range(25):
        action = policy.act(obs, info)
        obs, reward, terminated, truncated, info = env.step(action)
        trace.append((obs["last"], round(reward, 9), terminated, truncated, info.get("error")))
        if terminated or truncated:
            trace.append(json.dumps(info["reward_components"], sort_keys=True))
            trace.append(info["episode"]["correct"])
            break
    return trace


@pytest.mark.parametrize("policy_name", ["oracle", "answer-without-clarifying"])
def test_remote_episode_equals_in_process(server: str, policy_name: str) -> None:
    local = ClarifySQLEnv("builtin")
    with RemoteClarifySQLEnv(server) as remote:
        for task in local.suite.tasks[::40]:
            assert _episode(remote, task, policy_name) == _episode(local, task, policy_name)
    local.close()


_TIMING_KEYS = {"sql_time_s", "timings", "elapsed_s", "sqlite_s"}


def _same_wire(x):
    """``x`` as the wire carries it (JSON-safe, tuples as lists), timing values left out."""
    from clarisql.envs.server.models import jsonable

    def drop(v):
        if isinstance(v, dict):
            return {k: drop(w) for k, w in v.items() if k not in _TIMING_KEYS}
        if isinstance(v, list):
            return [drop(w) for w in v]
        return v

    return drop(json.loads(json.dumps(jsonable(x))))


def _full_trace(env, task, policy_name: str) -> list:
    """Every tuple the env returned in one episode (observation whole: dialogue, schema)."""
    policy = make_policy(policy_name)
    policy.seed(0)
    obs, info = env.reset(seed=5, options={"task_id": task.id})
    policy.reset(obs, info, task if policy.privileged else None)
    trace = [(dict(obs), _same_wire(info))]
    for _ in range(25):
        obs, reward, terminated, truncated, info = env.step(policy.act(obs, info))
        trace.append((dict(obs), round(reward, 9), terminated, truncated, _same_wire(info)))
        if terminated or truncated:
            break
    return trace


@pytest.mark.parametrize("policy_name", ["oracle", "clarify-every-turn"])
def test_remote_tuples_equal_in_process_whole(server: str, policy_name: str) -> None:
    """The dialogue travels as what each step added; the client rebuilds it exactly."""
    local = ClarifySQLEnv("builtin")
    longest = 0
    with RemoteClarifySQLEnv(server) as remote:
        for task in local.suite.tasks[7::60]:
            want = _full_trace(local, task, policy_name)
            longest = max(longest, len(want))
            assert _full_trace(remote, task, policy_name) == want
    local.close()
    assert longest >= 3  # some episodes with several steps (the dialogue sent in pieces)


def test_steps_send_only_the_new_dialogue(server: str) -> None:
    with httpx.Client(base_url=server, timeout=30) as http:
        first = http.post(
            "/sessions", json={"task_index": 3, "seed": 1, "dialogue_deltas": True}
        ).json()
        sid, dialogue = first["session_id"], first["observation"]["dialogue"]
        assert first["observation"]["dialogue_start"] == 0 and dialogue
        for sql in ("SELECT 1", "SELECT 2"):
            step = http.post(
                f"/sessions/{sid}/step", json={"action": {"type": "execute", "sql": sql}}
            )
            o = step.json()["observation"]
            assert o["dialogue_start"] == len(dialogue)  # continues where the last one ended
            assert sql in o["dialogue"] and not o["dialogue"].startswith(dialogue[:20])
            dialogue += o["dialogue"]
        http.delete(f"/sessions/{sid}")


def test_sessions_are_isolated(server: str) -> None:
    local = ClarifySQLEnv("builtin")
    write = next(t for t in local.suite.tasks if t.writable and t.gold_actions)
    table = f"tmp_isolation_{int(time.time() * 1000)}"
    with RemoteClarifySQLEnv(server) as a, RemoteClarifySQLEnv(server) as b:
        a.reset(options={"task_id": write.id})
        b.reset(options={"task_id": write.id})
        _, _, _, _, info = a.step({"type": "execute", "sql": f"CREATE TABLE {table}(x)"})
        assert info["error"] is None
        obs, _, _, _, info = b.step({"type": "execute", "sql": f"SELECT * FROM {table}"})
        assert "no such table" in obs["last"]
    local.close()


def test_http_sessions_and_errors(server: str) -> None:
    with httpx.Client(base_url=server, timeout=30) as http:
        r = http.post("/sessions", json={"task_index": 0, "seed": 1})
        assert r.status_code == 200, r.text
        sid = r.json()["session_id"]
        r = http.post(
            f"/sessions/{sid}/step", json={"action": {"type": "execute", "sql": "SELECT 1"}}
        )
        assert r.status_code == 200 and "1" in r.json()["observation"]["last"]
        r = http.post(f"/sessions/{sid}/step", json={"action": {"text": "<tool_call>{oops"}})
        assert r.status_code == 200 and r.json()["observation"]["info"]["error"]
        assert http.get(f"/sessions/{sid}/state").json()["step_count"] == 2
        # malformed messages: a clear error, and the session lives on
        r = http.post(f"/sessions/{sid}/step", json={"nope": 1})
        assert r.status_code == 422 and "action" in r.json()["error"]
        r = http.post(f"/sessions/{sid}/step", json={"action": {"labels": "x", "k": "many"}})
        assert r.status_code == 422 and "malformed action" in r.json()["error"]
        r = http.post("/sessions", json={"bogus": 1})
        assert r.status_code == 422 and "unknown reset options" in r.json()["error"]
        assert http.delete(f"/sessions/{sid}").status_code == 200
        for path in (f"/sessions/{sid}/state", "/sessions/nope/state"):
            r = http.get(path)
            assert r.status_code == 404 and "unknown session id" in r.json()["error"]
        r = http.post("/sessions/nope/step", json={"action": {"type": "stop"}})
        assert r.status_code == 404


def test_session_cap(server: str) -> None:
    with httpx.Client(base_url=server, timeout=30) as http:
        sids = []
        for _ in range(4):
            r = http.post("/sessions", json={})
            assert r.status_code == 200
            sids.append(r.json()["session_id"])
        r = http.post("/sessions", json={})
        assert r.status_code == 503 and "max_sessions" in r.json()["error"]
        for sid in sids:
            http.delete(f"/sessions/{sid}")
        assert http.post("/sessions", json={}).status_code == 200


def test_websocket_malformed_message_keeps_session(server: str) -> None:
    from websockets.sync.client import connect

    ws_url = server.replace("http://", "ws://") + "/ws"
    with connect(ws_url, open_timeout=10) as ws:
        ws.send("not json")
        assert json.loads(ws.recv(timeout=10))["type"] == "error"
        ws.send(json.dumps({"type": "reset", "data": {"task_index": 1}}))
        reply = json.loads(ws.recv(timeout=30))
        assert reply["type"] == "observation" and reply["data"]["observation"]["last"]
        ws.send(json.dumps({"type": "step", "data": {"type": "execute", "sql": "SELECT 2"}}))
        assert "2" in json.loads(ws.recv(timeout=30))["data"]["observation"]["last"]


def test_websocket_compression_declined_unless_configured(server: str) -> None:
    from websockets.sync.client import connect

    # the client offers permessage-deflate (its default, as OpenEnv's client does); the server
    # declines it by default (ServeConfig.ws_compression) and the session works uncompressed
    with connect(server.replace("http://", "ws://") + "/ws", open_timeout=10) as ws:
        assert ws.protocol.extensions == []
        ws.send(json.dumps({"type": "reset", "data": {"task_index": 2}}))
        assert json.loads(ws.recv(timeout=30))["type"] == "observation"
    assert uvicorn_options(ServeConfig(ws_compression=True))["ws_per_message_deflate"] is True
    assert uvicorn_options(ServeConfig())["ws_per_message_deflate"] is False


def test_slow_statement_does_not_hold_up_other_sessions(server: str) -> None:
    """Quick steps run inline on the event loop; one that outlives its slice (here a read that
    runs until its budget stops it) is stopped and taken on a worker thread, so other sessions
    keep stepping. Event-based: the other session's five steps are answered while the slow
    one is still unanswered (its budget, SLOW_BUDGET_S, is far longer than five quick steps)."""
    from websockets.sync.client import connect

    ws_url = server.replace("http://", "ws://") + "/ws"
    slow = (
        "WITH RECURSIVE r(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM r WHERE i < 10000000000) "
        "SELECT count(*) FROM r"
    )
    with connect(ws_url, open_timeout=10) as a, connect(ws_url, open_timeout=10) as b:
        for ws in (a, b):
            ws.send(json.dumps({"type": "reset", "data": {"task_index": 0}}))
            assert json.loads(ws.recv(timeout=30))["type"] == "observation"
        a.send(json.dumps({"type": "step", "data": {"type": "execute", "sql": slow}}))
        for i in range(5):
            b.send(json.dumps({"type": "step", "data": {"type": "execute", "sql": f"SELECT {i}"}}))
            assert str(i) in json.loads(b.recv(timeout=30))["data"]["observation"]["last"]
        with pytest.raises(TimeoutError):  # the slow step is still running
            a.recv(timeout=0)
        slow_reply = json.loads(a.recv(timeout=SLOW_BUDGET_S + 60))["data"]
        assert (
            "budget" in slow_reply["observation"]["last"]
            or slow_reply["observation"]["info"]["error"]
        )


def test_observation_built_as_model_construct_builds_it() -> None:
    from clarisql.envs.server.models import (
        OBSERVATION_FIELDS,
        ClarisqlObservation,
        construct_observation,
    )

    values = {
        "done": False,
        "reward": -0.5,
        "metadata": {},
        "db_schema": "",
        "dialogue": "Agent: [execute_sql] SELECT 1\n",
        "dialogue_start": 12,
        "last": "OK.",
        "turn": 2,
        "truncated": False,
        "info": {"error": None, "action": {"type": "execute", "sql": "SELECT 1"}},
    }
    assert tuple(values) == OBSERVATION_FIELDS
    fast = construct_observation(dict(values))
    slow = ClarisqlObservation.model_construct(**values)
    assert type(fast) is ClarisqlObservation
    assert fast.__dict__ == slow.__dict__ and list(fast.__dict__) == list(slow.__dict__)
    assert fast.model_fields_set == slow.model_fields_set
    assert fast.model_dump_json() == slow.model_dump_json()
    assert fast == slow
    # a partial dict is given defaults, as model_construct gives them
    part = construct_observation({"last": "x"})
    assert part == ClarisqlObservation.model_construct(last="x")
