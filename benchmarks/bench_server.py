"""Served environment under load: many concurrent WebSocket sessions on loopback.

What it measures (one run, side by side, servers in subprocesses on 127.0.0.1):
1. Step overhead of one WebSocket session: ``clarisql serve`` minus the same step in-process,
   against OpenEnv's own echo env (generated with ``openenv init``) measured the same way. Both
   servers run at once and are measured in alternating rounds (``--rounds``; the median round
   is reported), with the server's CPU time per step (process time from ``/proc``: it suffers
   less from a loaded machine than wall time).
2. ``--sessions`` concurrent sessions (default 1000; 0 skips it): each opens a WebSocket,
   resets and takes ``--steps`` steps; p50 / p99 step latency, errors, and the server's RSS per
   session.
Every wait has a timeout and the whole run a deadline; it stops by itself.

    python benchmarks/bench_server.py [--sessions 1000] [--steps 5] [--rounds 5] [--json OUT]
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import socket
import statistics
import subprocess
import sys
import tempfile
import textwrap
import time
from pathlib import Path

import httpx
from websockets.asyncio.client import connect

ACTION = {"type": "execute", "sql": "SELECT 1"}


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def cpu_s(pid: int) -> float:
    """User + system CPU seconds of process ``pid`` so far."""
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def rss_mb(pid: int) -> float:
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1]) / 1024
    return float("nan")


def wait_healthy(url: str, proc: subprocess.Popen, timeout: float = 120) -> None:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if proc.poll() is not None:
            raise SystemExit(f"server exited with {proc.returncode}")
        try:
            if httpx.get(f"{url}/health", timeout=1).status_code == 200:
                return
        except httpx.HTTPError:
            pass
        time.sleep(0.2)
    raise SystemExit(f"{url} not healthy after {timeout} s")


def start_clarisql(port: int, sessions: int) -> subprocess.Popen:
    cmd = [sys.executable, "-m", "clarisql", "serve", "--port", str(port)]
    cmd += ["--max-sessions", str(sessions + 16), "--idle-timeout", "600"]
    return subprocess.Popen(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)


def start_echo(port: int, sessions: int, workdir: Path) -> subprocess.Popen:
    """OpenEnv's own echo environment (``openenv init``), served by OpenEnv's create_app."""
    subprocess.run(["openenv", "init", "echo_env"], cwd=workdir, check=True, capture_output=True)
    code = textwrap.dedent(f"""
        import sys, uvicorn
        sys.path.insert(0, {str(workdir / "echo_env")!r})
        from models import EchoAction, EchoObservation
        from server.echo_env_environment import EchoEnvironment
        from openenv.core.env_server.http_server import create_app
        app = create_app(EchoEnvironment, EchoAction, EchoObservation, env_name="echo_env",
                         max_concurrent_envs={sessions + 16})
        uvicorn.run(app, host="127.0.0.1", port={port}, log_level="warning")
    """)
    return subprocess.Popen(
        [sys.executable, "-c", code], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL
    )


async def one_session(
    url: str, steps: int, action: dict, lat: list[float], ready: list[int] | None = None, gate=None
) -> int:
    """Reset, (wait at ``gate``), then ``steps`` steps; returns the number of error replies."""
    errors = 0
    async with connect(url, open_timeout=120, max_size=2**24) as ws:
        await ws.send(json.dumps({"type": "reset", "data": {}}))
        reply = json.loads(await asyncio.wait_for(ws.recv(), 120))
        errors += reply.get("type") == "error"
        if ready is not None:
            ready[0] += 1
        if gate is not None:
            await gate.wait()
        for _ in range(steps):
            t0 = time.perf_counter()
            await ws.send(json.dumps({"type": "step", "data": action}))
            reply = json.loads(await asyncio.wait_for(ws.recv(), 60))
            lat.append(time.perf_counter() - t0)
            errors += reply.get("type") == "error"
    return errors


def pct(xs: list[float], q: float) -> float:
    xs = sorted(xs)
    return xs[min(len(xs) - 1, int(q * len(xs)))] * 1000


async def sequential(url: str, episodes: int, steps: int, action: dict) -> list[float]:
    lat: list[float] = []
    for _ in range(episodes):
        await one_session(url, steps, action, lat)
    return lat


async def concurrent(url: str, sessions: int, steps: int, action: dict, pid: int) -> dict:
    lat: list[float] = []
    gate = asyncio.Event()
    ready = [0]
    rss0 = rss_mb(pid)
    t_open = time.perf_counter()
    tasks = [
        asyncio.create_task(one_session(url, steps, action, lat, ready, gate))
        for _ in range(sessions)
    ]
    # every session open and reset before anyone steps: the server then holds them all
    t0 = time.monotonic()
    while time.monotonic() - t0 < 300:
        if ready[0] >= sessions or all(t.done() for t in tasks):
            break
        await asyncio.sleep(0.2)
    open_s = time.perf_counter() - t_open
    rss_open = rss_mb(pid)
    gate.set()
    t1 = time.perf_counter()
    results = await asyncio.wait_for(asyncio.gather(*tasks, return_exceptions=True), 600)
    wall = time.perf_counter() - t1
    failed = sum(isinstance(r, BaseException) for r in results)
    errors = sum(r for r in results if isinstance(r, int))
    return {
        "sessions": sessions,
        "open_and_reset_all_s": open_s,
        "steps": len(lat),
        "failed_sessions": failed,
        "error_replies": errors,
        "p50_ms": pct(lat, 0.5),
        "p99_ms": pct(lat, 0.99),
        "steps_per_s": len(lat) / wall,
        "rss_idle_mb": rss0,
        "rss_open_mb": rss_open,
        "rss_per_session_kb": (rss_open - rss0) * 1024 / max(1, sessions),
    }


def in_process_step_ms(n: int, cold: bool = False) -> float:
    """Median in-process step time; with ``cold``, 16 MB of memory are touched before every
    step, so the step runs on cold CPU caches as it does in a server after network work."""
    from clarisql.envs.env import ClarifySQLEnv

    env = ClarifySQLEnv("builtin")
    junk = bytearray(16 * 1024 * 1024) if cold else None
    times = []
    for i in range(n):
        if i % 15 == 0:
            env.reset(seed=i)
        if junk is not None:
            junk[::64] = bytes(len(junk) // 64)  # one write per cache line
        t0 = time.perf_counter()
        env.step(dict(ACTION))
        times.append(time.perf_counter() - t0)
    env.close()
    return statistics.median(times) * 1000


def one_session_rounds(servers: dict[str, tuple[str, dict, int]], rounds: int) -> dict:
    """Alternating rounds of 20 sequential episodes x 15 steps per server: the median round's
    p50 step latency, and the server's CPU per step (resets and session set-up included)."""
    per: dict[str, list[tuple[float, float]]] = {name: [] for name in servers}
    for _ in range(rounds):
        for name, (ws, action, pid) in servers.items():
            c0 = cpu_s(pid)
            lat = asyncio.run(sequential(ws, 20, 15, action))
            per[name].append((pct(lat, 0.5), (cpu_s(pid) - c0) * 1000 / len(lat)))
    return {
        name: {
            "one_session_step_p50_ms": statistics.median(p for p, _ in xs),
            "one_session_server_cpu_ms_per_step": statistics.median(c for _, c in xs),
            "rounds_p50_ms": [round(p, 4) for p, _ in xs],
        }
        for name, xs in per.items()
    }


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--sessions", type=int, default=1000)
    ap.add_argument("--steps", type=int, default=5)
    ap.add_argument("--rounds", type=int, default=5)
    ap.add_argument("--json", default=None)
    args = ap.parse_args()
    out: dict = {
        "in_process_step_ms": in_process_step_ms(600),
        "in_process_step_cold_cache_ms": in_process_step_ms(300, cold=True),
    }
    procs: dict[str, tuple[subprocess.Popen, int]] = {}
    with tempfile.TemporaryDirectory() as tmp:
        try:
            for name in ("echo", "clarisql"):
                port = free_port()
                procs[name] = (
                    start_echo(port, args.sessions, Path(tmp))
                    if name == "echo"
                    else start_clarisql(port, args.sessions),
                    port,
                )
            for proc, port in procs.values():
                wait_healthy(f"http://127.0.0.1:{port}", proc)
            servers = {
                name: (
                    f"ws://127.0.0.1:{port}/ws",
                    {"message": "SELECT 1"} if name == "echo" else ACTION,
                    proc.pid,
                )
                for name, (proc, port) in procs.items()
            }
            out.update(one_session_rounds(servers, args.rounds))
            for name, (ws, action, pid) in servers.items():
                if args.sessions > 0:
                    out[name].update(
                        asyncio.run(concurrent(ws, args.sessions, args.steps, action, pid))
                    )
        finally:
            for proc, _ in procs.values():
                proc.terminate()
                try:
                    proc.wait(timeout=30)
                except subprocess.TimeoutExpired:
                    proc.kill()
    c, e = out["clarisql"], out["echo"]
    out["clarisql_ws_overhead_ms"] = c["one_session_step_p50_ms"] - out["in_process_step_ms"]
    out["echo_ws_step_ms"] = e["one_session_step_p50_ms"]
    print(json.dumps(out, indent=2))
    if args.json:
        Path(args.json).write_text(json.dumps(out, indent=2))


if __name__ == "__main__":
    os.environ.setdefault("PYTHONUNBUFFERED", "1")
    main()
