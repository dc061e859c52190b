"""OpenEnv packaging: the environment folder validates, ``/mcp`` refuses without holding a
session, generic clients get whole observations, ``serve`` reports its progress and the client
imports without openenv-core (whose package imports gradio)."""

from __future__ import annotations

import json
import os
import shutil
import socket
import subprocess
import sys
import threading
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

pytest.importorskip("openenv.core.env_server", reason="needs the serve extra (openenv-core)")
uvicorn = pytest.importorskip("uvicorn", reason="needs the serve extra (uvicorn)")
httpx = pytest.importorskip("httpx", reason="needs httpx")

from clarisql.envs.server import ServeConfig  # noqa: E402
from clarisql.envs.server.app import MCP_REFUSAL_CODE, make_app, uvicorn_options  # noqa: E402
from clarisql.envs.server.client import RemoteClarifySQLEnv  # noqa: E402

ROOT = Path(__file__).resolve().parent.parent
PACKAGE = ROOT / "deploy" / "openenv"
MAX_SESSIONS = 2


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def _wait_health(url: str, seconds: float = 60) -> None:
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        try:
            if httpx.get(f"{url}/health", timeout=1).status_code == 200:
                return
        except httpx.HTTPError:
            time.sleep(0.1)
    pytest.fail(f"the server did not answer /health within {seconds} s")


@pytest.fixture(scope="module")
def server() -> Iterator[str]:
    port = _free_port()
    config = ServeConfig(suite="builtin", port=port, max_sessions=MAX_SESSIONS, idle_timeout_s=60)
    srv = uvicorn.Server(uvicorn.Config(make_app(config), **uvicorn_options(config)))
    thread = threading.Thread(target=srv.run, daemon=True)
    thread.start()
    url = f"http://127.0.0.1:{port}"
    _wait_health(url)
    yield url
    srv.should_exit = True
    thread.join(timeout=10)


def _openenv_cli() -> str:
    exe = shutil.which("openenv") or shutil.which("openenv", path=str(Path(sys.executable).parent))
    if exe is None:
        pytest.skip("the openenv CLI (openenv-core) is not installed")
    return exe


def test_environment_folder_validates() -> None:
    out = subprocess.run(
        [_openenv_cli(), "validate", str(PACKAGE), "--json"],
        capture_output=True,
        text=True,
        timeout=900,  # a bound, not a timing: the CLI imports openenv-core whole (gradio)
    )
    report = json.loads(out.stdout)
    assert report["passed"], report
    assert (PACKAGE / "server" / "Dockerfile").is_file()
    spec = (PACKAGE / "openenv.yaml").read_text()
    assert "app: server.app:app" in spec and "name: clarisql" in spec


def test_running_server_validates(server: str) -> None:
    out = subprocess.run(
        [_openenv_cli(), "validate", "--url", server], capture_output=True, text=True, timeout=900
    )
    assert json.loads(out.stdout)["passed"]


def test_mcp_refusal_holds_no_session(server: str) -> None:
    with httpx.Client(base_url=server, timeout=30) as http:
        for i in range(3 * MAX_SESSIONS):  # more than the pool holds
            for method in ("openenv/session/create", "tools/list"):
                reply = http.post(
                    "/mcp", json={"jsonrpc": "2.0", "id": i, "method": method, "params": {}}
                ).json()
                assert reply["jsonrpc"] == "2.0" and reply["id"] == i
                assert reply["error"]["code"] == MCP_REFUSAL_CODE
                assert "no MCP tools" in reply["error"]["message"]
        assert http.post("/mcp", content=b"not json").json()["error"]["code"] == MCP_REFUSAL_CODE
    # every WebSocket slot is still free
    envs = [RemoteClarifySQLEnv(server) for _ in range(MAX_SESSIONS)]
    try:
        for e in envs:
            obs, _ = e.reset(options={"task_index": 1})
            assert obs["dialogue"]
    finally:
        for e in envs:
            e.close()


def test_generic_clients_get_whole_observations(server: str) -> None:
    from websockets.sync.client import connect

    with connect(server.replace("http://", "ws://") + "/ws", open_timeout=10) as ws:
        ws.send(json.dumps({"type": "reset", "data": {"task_index": 3}}))
        first = json.loads(ws.recv(timeout=30))["data"]["observation"]
        ws.send(json.dumps({"type": "step", "data": {"type": "execute", "sql": "SELECT 7"}}))
        step = json.loads(ws.recv(timeout=30))["data"]["observation"]
        assert step["db_schema"] == first["db_schema"] != ""  # the schema on every step
        assert step["dialogue_start"] == 0 and step["dialogue"].startswith(first["dialogue"])
        assert "SELECT 7" in step["dialogue"]
        ws.send(json.dumps({"type": "state"}))
        state = json.loads(ws.recv(timeout=30))["data"]
        assert state["episode_id"] and state["step_count"] == 1
        # the caller's own episode id is kept
        ws.send(json.dumps({"type": "reset", "data": {"task_index": 3, "episode_id": "mine"}}))
        ws.recv(timeout=30)
        ws.send(json.dumps({"type": "state"}))
        assert json.loads(ws.recv(timeout=30))["data"]["episode_id"] == "mine"


def _python(code: str) -> subprocess.CompletedProcess:
    return subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, timeout=300, check=True
    )


def test_client_imports_without_openenv() -> None:
    out = _python(
        "import sys; import clarisql.envs.server.client as c; "
        "print(sorted(m for m in ('openenv', 'gradio', 'fastmcp') if m in sys.modules)); "
        "c.ClarisqlEnvClient; print('openenv' in sys.modules)"
    )
    first, second = out.stdout.split("\n")[:2]
    assert first == "[]"  # importing the client loads none of them
    assert second == "True"  # the OpenEnv client class is made on first use


def test_serve_imports_openenv_without_its_web_interface() -> None:
    out = _python(
        "import sys; from clarisql.envs.server.commands import _import_server; "
        "app = _import_server(); print('gradio' in sys.modules, 'openenv' in sys.modules); "
        "import importlib.util; print(importlib.util.find_spec('gradio') is not None)"
    )
    loaded, available = out.stdout.split("\n")[:2]
    assert loaded == "False True"
    assert available in ("True", "False")  # gradio importable again after (when installed)


def test_serve_prints_progress_until_ready(tmp_path: Path) -> None:
    port = _free_port()
    proc = subprocess.Popen(
        [sys.executable, "-m", "clarisql", "serve", "--port", str(port)],
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
        env={**os.environ, "PYTHONUNBUFFERED": "1"},
    )
    lines: list[str] = []
    try:
        deadline = time.monotonic() + 300
        while time.monotonic() < deadline:
            line = proc.stdout.readline()
            if not line:
                break
            lines.append(line.strip())
            if "ready on" in line:
                break
        assert any("ready on" in x for x in lines), lines
        assert lines[0].startswith("clarisql serve: loading the server")
        assert any("loading suite 'builtin'" in x for x in lines)
        assert httpx.get(f"http://127.0.0.1:{port}/health", timeout=10).status_code == 200
    finally:
        proc.terminate()
        proc.wait(timeout=30)


def test_openenv_client_rebuilds_whole_dialogues(server: str) -> None:
    from clarisql.envs.server.client import ClarisqlEnvClient

    with ClarisqlEnvClient(server).sync() as client:
        first = client.reset(task_index=3).observation
        assert first.db_schema and first.dialogue
        step = client.step({"type": "execute", "sql": "SELECT 5"}).observation
        assert step.dialogue.startswith(first.dialogue) and "SELECT 5" in step.dialogue
        assert step.db_schema == ""  # deltas asked for: the schema came with reset
        again = client.reset(task_index=4).observation  # a new episode starts a new dialogue
        assert again.dialogue and not again.dialogue.startswith(step.dialogue)
        assert client.state().episode_id
