"""Served-mode hardening: every frame answered, caps that hold, expiry reported, slow clients cut.

Real uvicorn servers on 127.0.0.1 (free ports) in threads; every wait is bounded and
event-based (a reply, a closed socket, a count reaching a value), never a timing assertion.
"""

from __future__ import annotations

import json
import socket
import threading
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import Any

import pytest

pytest.importorskip("openenv.core.env_server", reason="needs the serve extra (openenv-core)")
uvicorn = pytest.importorskip("uvicorn", reason="needs the serve extra (uvicorn)")
httpx = pytest.importorskip("httpx", reason="needs httpx")
ws_client = pytest.importorskip("websockets.sync.client", reason="needs websockets")

from clarisql.envs.server import ServeConfig  # noqa: E402
from clarisql.envs.server.app import make_app, uvicorn_options  # noqa: E402

CAP = 64 * 1024


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


@contextmanager
def _server(**kw: Any) -> Iterator[tuple[str, Any]]:
    config = ServeConfig(suite="builtin", port=_free_port(), **kw)
    app = make_app(config)
    srv = uvicorn.Server(uvicorn.Config(app, **uvicorn_options(config)))
    thread = threading.Thread(target=srv.run, daemon=True)
    thread.start()
    url = f"http://127.0.0.1:{config.port}"
    _wait(lambda: _healthy(url), "the server did not start")
    try:
        yield url, app
    finally:
        srv.should_exit = True
        thread.join(timeout=15)


def _healthy(url: str) -> bool:
    try:
        return httpx.get(f"{url}/health", timeout=2).status_code == 200
    except httpx.HTTPError:
        return False


def _wait(cond: Callable[[], bool], what: str, limit_s: float = 60.0) -> None:
    deadline = time.monotonic() + limit_s
    while not cond():
        if time.monotonic() > deadline:
            pytest.fail(what)
        time.sleep(0.05)


@pytest.fixture(scope="module")
def server() -> Iterator[tuple[str, Any]]:
    with _server(
        max_sessions=3, idle_timeout_s=300, max_message_bytes=CAP, inline_parse_bytes=4096
    ) as s:
        yield s


def _ws(url: str):
    return ws_client.connect(url.replace("http://", "ws://") + "/ws", open_timeout=20)


def _reply(ws) -> dict:
    return json.loads(ws.recv(timeout=60))


def _live(app) -> int:
    return app.state.clarisql_slots.live


MALFORMED: list[str | bytes] = [
    "[]",
    '"x"',
    "1",
    "null",
    "[" * 100000,
    "1" * 5000,
    "{" + '"a":' * 40 + "1" + "}" * 40,
    json.dumps(
        {
            "type": "step",
            "data": {"type": "clarify", "labels": [[[[[[[[[[[[[[[[[[["x"]]]]]]]]]]]]]]]]]]]},
        }
    ),
    '{"type": "step", "data": {"type": "search_tables", "k": ' + "9" * 5000 + "}}",
    json.dumps({"type": "step", "data": ["not", "an", "action"]}),
    json.dumps({"type": "step", "data": {"labels": "x", "k": "many"}}),
    json.dumps({"type": "reset", "data": {"seed": "abc"}}),
    json.dumps({"type": "reset", "data": {"task_index": 10**30}}),
    json.dumps({"type": "bogus"}),
    json.dumps({"type": "step", "data": {"type": "execute", "sql": "x" * (CAP + 10)}}),
    b"\x00\x01binary frame",
    json.dumps(
        {"type": "step", "data": {"type": "clarify", "question": "q", "labels": [["a"]] * 8000}}
    ),
    "{'single': 'quotes'}",
]


def test_every_malformed_frame_gets_an_error_and_the_session_lives(server) -> None:
    url, app = server
    with _ws(url) as ws:
        ws.send(json.dumps({"type": "reset", "data": {"task_index": 0, "seed": 1}}))
        assert _reply(ws)["type"] == "observation"
        for frame in MALFORMED:
            ws.send(frame)
            raw = ws.recv(timeout=60)
            reply = json.loads(raw)
            assert reply["type"] == "error", (str(frame)[:60], reply)
            assert reply["data"]["code"] and reply["data"]["message"]
            assert len(raw) < 2000  # bounded, never an echo of the refused input
        # the same session, still in its episode
        ws.send(json.dumps({"type": "step", "data": {"type": "execute", "sql": "SELECT 41 + 1"}}))
        reply = _reply(ws)
        assert reply["type"] == "observation" and "42" in reply["data"]["observation"]["last"]
        assert not reply["data"]["done"]
    _wait(lambda: _live(app) == 0, "the session's slot was not given back")


def test_bad_reset_options_refused_before_a_session_exists(server) -> None:
    url, app = server
    with httpx.Client(base_url=url, timeout=60) as http:
        for body in (
            {"seed": "abc"},
            {"seed": -1},
            {"seed": True},
            {"task_index": 10**30},
            {"task_index": -1},
            {"task_index": 1.5},
            {"task_id": "no/such/task"},
            {"task_id": ["x"]},
            {"episode_id": "e" * 300},
            {"bogus": 1},
            [1, 2],
        ):
            r = http.post("/sessions", json=body)
            assert r.status_code == 422, (body, r.status_code, r.text[:200])
            err = r.json()["error"]
            assert "\n" not in err and len(err) < 300
            assert _live(app) == 0  # no slot taken, none left behind
        r = http.post("/sessions", content=b"{not json")
        assert r.status_code == 422 and _live(app) == 0
        # the stateless OpenEnv route too: a 4xx, not a 500
        r = http.post("/reset", json={"task_index": 10**30})
        assert 400 <= r.status_code < 500, r.text[:200]
        assert _live(app) == 0


def test_one_cap_counts_every_path(server) -> None:
    url, app = server
    with httpx.Client(base_url=url, timeout=60) as http, _ws(url) as a, _ws(url) as b:
        for ws in (a, b):
            ws.send(json.dumps({"type": "reset", "data": {"task_index": 1}}))
            assert _reply(ws)["type"] == "observation"
        r = http.post("/sessions", json={})
        assert r.status_code == 200
        sid = r.json()["session_id"]
        assert _live(app) == 3
        r = http.post("/sessions", json={})  # a fourth: HTTP refused
        assert r.status_code == 503 and "max_sessions" in r.json()["error"]
        with _ws(url) as c:  # a fourth: WebSocket refused with a word
            reply = _reply(c)
            assert reply["type"] == "error" and reply["data"]["code"] == "CAPACITY_REACHED"
        r = http.post("/reset", json={})  # the stateless route counts too
        assert r.status_code == 503
        http.delete(f"/sessions/{sid}")
        assert _live(app) == 2
        a.send(json.dumps({"type": "close"}))
    _wait(lambda: _live(app) == 0, "slots were not given back after the connections closed")
    with httpx.Client(base_url=url, timeout=60) as http:
        assert http.post("/reset", json={}).status_code == 200
        assert _live(app) == 0


def test_bodies_past_the_cap_are_refused_unread(server) -> None:
    url, app = server
    with httpx.Client(base_url=url, timeout=60) as http:
        big = {"action": {"type": "execute", "sql": "SELECT '" + "x" * (2 * CAP) + "'"}}
        r = http.post("/sessions/whatever/step", json=big)
        assert r.status_code == 413 and len(r.content) < 500
        labels = {"action": {"type": "clarify", "question": "q", "labels": [["a"]] * 100000}}
        r = http.post("/step", json=labels)
        assert r.status_code == 413
        # a chunked body (no Content-Length) is cut at the cap as it arrives
        r = http.post("/sessions", content=iter([b"{" + b" " * 4096] * 40))
        assert r.status_code == 413
    assert _live(app) == 0


def test_slow_clients_are_cut_at_the_head_deadline() -> None:
    with _server(max_sessions=2, header_timeout_s=0.5, idle_timeout_s=300) as (url, _):
        port = int(url.rsplit(":", 1)[1])
        socks = []
        for _ in range(20):
            s = socket.create_connection(("127.0.0.1", port), timeout=30)
            s.sendall(b"GET /health HTTP/1.1\r\nHost: x\r\n")  # never finishes its head
            socks.append(s)
        for s in socks:  # each is closed by the server (EOF), not left open for ever
            s.settimeout(30)
            assert s.recv(100) == b""
            s.close()
        assert _healthy(url)  # and the server still serves the others


def test_idle_sessions_expire_with_a_word_and_their_record() -> None:
    with _server(max_sessions=4, idle_timeout_s=0.5) as (url, app):
        with httpx.Client(base_url=url, timeout=60) as http:
            r = http.post("/sessions", json={"task_index": 2})
            sid = r.json()["session_id"]
            http.post(
                f"/sessions/{sid}/step", json={"action": {"type": "execute", "sql": "SELECT 1"}}
            )
            # no request opens a session: the timer alone reaps it
            _wait(lambda: app.state.clarisql_sessions.expired.get(sid) is not None, "not reaped")
            r = http.post(f"/sessions/{sid}/step", json={"action": {"type": "stop"}})
            assert r.status_code == 410
            body = r.json()
            assert "expired" in body["error"] and body["record"]["turns"] == 1
            assert body["record"]["task_id"] and body["record"]["end"] == "expired"
            assert "done" not in body and "reward" not in body
        with _ws(url) as ws:
            ws.send(json.dumps({"type": "reset", "data": {"task_index": 2}}))
            assert _reply(ws)["type"] == "observation"
            reply = _reply(ws)  # nothing sent: the server ends it, saying so
            assert reply["type"] == "error" and reply["data"]["code"] == "SESSION_EXPIRED"
            assert reply["data"]["record"]["end"] == "expired"
            from websockets.exceptions import ConnectionClosed

            with pytest.raises(ConnectionClosed):  # closed: it does not keep working uncounted
                ws.send(json.dumps({"type": "state"}))
                ws.recv(timeout=30)
        _wait(lambda: _live(app) == 0, "expired sessions kept their slots")


def test_memory_budget_refuses_new_sessions_before_the_machine_runs_out() -> None:
    from clarisql.envs.server.sessions import AtCapacity, Slots

    rss = [100 << 20]
    slots = Slots(10, memory_budget=200 << 20, rss=lambda: rss[0])
    a = slots.acquire()
    rss[0] = 300 << 20  # the process grew past its budget
    with pytest.raises(AtCapacity, match="over its budget"):
        slots.acquire()
    assert slots.live == 1
    a.release()
    a.release()  # idempotent: counted once
    rss[0] = 150 << 20
    b = slots.acquire()
    assert slots.live == 1 and b.held


def test_a_session_dropped_unclosed_gives_its_slot_back() -> None:
    import gc

    from clarisql.envs.server.environment import SessionFactory

    factory = SessionFactory(ServeConfig(suite="builtin", max_sessions=2))
    env = factory()
    assert factory.slots.live == 1
    del env
    gc.collect()
    assert factory.slots.live == 0
    with pytest.raises(ValueError, match="max_sessions"):
        ServeConfig(max_sessions=0)
    with pytest.raises(ValueError, match="port"):
        ServeConfig(port=-1)


def test_crowded_bodies_are_refused_before_any_route_parses_them(server) -> None:
    url, app = server
    crowded = json.dumps({"action": {"type": "clarify", "question": "q", "labels": [["a"]] * 8000}})
    assert len(crowded) < CAP
    with httpx.Client(base_url=url, timeout=60) as http:
        for path in ("/step", "/sessions/x/step", "/sessions"):
            r = http.post(path, content=crowded, headers={"content-type": "application/json"})
            assert r.status_code == 422 and "values" in r.json()["error"], (path, r.text[:200])
    assert _live(app) == 0


def test_mcp_holds_no_slot_on_any_path(server) -> None:
    url, app = server

    def rpc(http, method: str, i: int, **params) -> dict:
        body = {"jsonrpc": "2.0", "id": i, "method": method, "params": params}
        return http.post("/mcp", json=body).json()

    with httpx.Client(base_url=url, timeout=60) as http:
        for i in range(12):  # more than the cap: each one refused, none holds a slot
            reply = rpc(http, "openenv/session/create", i)
            assert reply["id"] == i and "error" in reply and "result" not in reply
        assert _live(app) == 0
        sids = []
        for _ in range(3):  # the whole cap of 3 is still there for real sessions
            r = http.post("/sessions", json={})
            assert r.status_code == 200, r.text[:200]
            sids.append(r.json()["session_id"])
        for sid in sids:
            http.delete(f"/sessions/{sid}")
    _wait(lambda: _live(app) == 0, "closed sessions kept their slots")
