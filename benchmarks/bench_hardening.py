"""Hardening benchmark: the attack list and a fuzz run of random actions against real episodes.

Run: ``nice python benchmarks/bench_hardening.py [--actions 100000] [--budget 0.25] [--json OUT]``.

- Attack list (issue 17's reproducers and more, on read-only and write episodes of the built-in
  suite, with the default 2 s budget): the step time of every attack against the budget.
- Fuzz run: ``--actions`` random actions (malformed text and tool calls, deep JSON, huge integers,
  degenerate white space, structured dicts of the wrong shape, and SQL from a small grammar that
  includes heavy statements, temp objects, random(), big values and interrupted writes) over
  many episodes of the built-in suite (and DySQL-Bench's suite from ../shared when present),
  with a short ``--budget`` so heavy statements are stopped often.

Served mode (``--served``, or ``--served-only``): a real ``clarisql serve`` on loopback (a
subprocess). One WebSocket session steps ``SELECT 1`` in a loop while another sends each
attack (text actions and label lists up to the message cap, 700k labels, a 3M-label HTTP body,
20 MB of SQL over HTTP and WebSocket, malformed frames): the victim's worst step latency during
each attack minus its quiet median ("added ms"), and the reply each attack got. Then: 62
``POST /sessions {"seed": "abc"}`` (status codes), ``max_sessions + 4`` WebSocket sessions
(opened / refused), the server's RSS before and after ``write_sessions`` idle write sessions,
and 200 slow-loris connections (how many the server closed, and how soon).

Reported: the largest step time (wall clock, and CPU time of the stepping thread, which tells
work from waiting for a core on a loaded machine) against the budget + 10 %, the number of steps
over it, episodes that ended with
"internal error" (must be 0), exceptions that escaped ``step()`` (must be 0), SQLite's heap
(``apsw.memory_used``, peak and after) and the process RSS before and after.
"""

from __future__ import annotations

import argparse
import json
import random
import resource
import sys
import time
from pathlib import Path
from typing import Any

import apsw

from clarisql.envs.env import ClarifySQLEnv
from clarisql.envs.sandbox.database import SessionLimits

SHARED = Path(__file__).resolve().parents[1].parent / "shared" / "data" / "dysql"

HEAVY = [
    "CREATE TABLE big AS SELECT randomblob(500000000)",
    "WITH RECURSIVE c(x) AS (SELECT 1 UNION ALL SELECT x+1 FROM c LIMIT 60) "
    "SELECT sum(length(replace(hex(zeroblob(20000000+x)),'0','00'))) FROM c",
    "WITH RECURSIVE c(x) AS (SELECT 1 UNION ALL SELECT x+1 FROM c LIMIT 100000) "
    "SELECT sum(length(replace(hex(zeroblob(400000+x%10)),'0','00'))) FROM c",
    "SELECT randomblob(1000000000)",
    "WITH RECURSIVE c(x) AS (SELECT 1 UNION ALL SELECT x+1 FROM c LIMIT 5000000) "
    "SELECT x FROM c ORDER BY randomblob(64) LIMIT 1",
    "WITH RECURSIVE c(x) AS (SELECT 1 UNION ALL SELECT x+1 FROM c) SELECT count(*) FROM c",
    "CREATE TABLE g AS WITH RECURSIVE c(x) AS (SELECT 1 UNION ALL SELECT x+1 FROM c LIMIT 200) "
    "SELECT randomblob(900000) AS b FROM c",
    "CREATE TEMP TABLE tg AS WITH RECURSIVE c(x) AS (SELECT 1 UNION ALL SELECT x+1 FROM c "
    "LIMIT 200) SELECT randomblob(900000) AS b FROM c",
]
WRITE_SEQUENCE = [
    "CREATE TABLE j(a)",
    "CREATE TEMP TABLE tt(a)",
    "INSERT INTO temp.tt VALUES (7)",
    "INSERT INTO j SELECT a FROM tt",
    "CREATE TABLE r AS SELECT random() AS v",
    *[
        "INSERT INTO j WITH RECURSIVE c(x) AS (SELECT 1 UNION ALL SELECT x+1 FROM c LIMIT 500000) "
        "SELECT x FROM c"
    ]
    * 4,
    "INSERT INTO j WITH RECURSIVE c(x) AS (SELECT 1 UNION ALL SELECT x+1 FROM c) SELECT x FROM c",
    "SELECT a FROM tt",
    "SELECT v FROM r",
    "CREATE TRIGGER trg AFTER INSERT ON j BEGIN SELECT 1; END",
]
TEXT_ATTACKS = [
    "<tool_call>x" + " " * 40000 + "y",
    '{"type":' * 100000,
    '{"type": "abstain", "reason": ' + "9" * 5000 + "}",
    "".join(chr(32 + (i * 7919) % 90) for i in range(1_000_000)),
    "```json\n{" * 100000,
]

FRAGMENTS = [
    "<tool_call>", "</tool_call>", "```", "```json\n", "```sql\n", "{", "}", "[", "]", '"', ":",
    ",", '"type"', '"name"', '"arguments"', '"sql"', '"execute_sql"', '"stop"', '"abstain"',
    '"ask_user"', '"question"', '"labels"', '"intent"', "null", "9" * 50, " " * 200, "\n",
    "\\", "\udcff", "\x00", "SELECT 1", "<think>",
]  # fmt: skip
SQL_PARTS = [
    "SELECT * FROM {t} LIMIT 5", "SELECT count(*) FROM {t}", "SELECT random()",
    "DELETE FROM {t} WHERE rowid % 7 = 0", "UPDATE {t} SET rowid = rowid WHERE rowid < 3",
    "CREATE TEMP TABLE IF NOT EXISTS tmp(a)", "INSERT INTO temp.tmp VALUES (random())",
    "CREATE TABLE IF NOT EXISTS z(a)", "INSERT INTO z SELECT randomblob(900000)",
    "DROP TABLE IF EXISTS z", "CREATE VIEW IF NOT EXISTS vv AS SELECT 1", "DROP TABLE {t}",
    "BEGIN", "SAVEPOINT s", "ROLLBACK", "ATTACH 'x.db' AS x", "PRAGMA writable_schema=1",
    "VACUUM", "SELECT load_extension('x')", "SELECT 1; SELECT 2", "SELEC", "",
    "INSERT OR ROLLBACK INTO z VALUES (1), (1)", "SELECT zeroblob(2000000)",
    "WITH RECURSIVE c(x) AS (SELECT 1 UNION ALL SELECT x+1 FROM c) SELECT count(*) FROM c",
    "INSERT INTO z WITH RECURSIVE c(x) AS (SELECT 1 UNION ALL SELECT x+1 FROM c) SELECT x FROM c",
]  # fmt: skip


def _deep(n: int) -> Any:
    x: Any = []
    for _ in range(n):
        x = [x]
    return x


HEAVY_SQL = {
    "INSERT INTO z SELECT randomblob(900000)",
    "SELECT zeroblob(2000000)",
    "WITH RECURSIVE c(x) AS (SELECT 1 UNION ALL SELECT x+1 FROM c) SELECT count(*) FROM c",
    "INSERT INTO z WITH RECURSIVE c(x) AS (SELECT 1 UNION ALL SELECT x+1 FROM c) SELECT x FROM c",
}
LIGHT_SQL = [q for q in SQL_PARTS if q not in HEAVY_SQL]
DEEP = _deep(2000)
BAD_STRUCTURES = [
    {"type": "clarify", "question": "which?", "labels": "intent"},
    {"type": "clarify", "question": "which?", "labels": []},
    {"type": "dance"},
    {"type": 3},
    {"type": None},
    {"type": "execute", "sql": None},
    {"type": "execute", "sql": 10**5000},
    {"type": "execute", "sql": b"\xff"},
    {"type": "execute", "sql": DEEP},
    {"name": "stop", "arguments": "{"},
    {"name": "stop", "arguments": DEEP},
    {"name": "stop", "arguments": 5},
    {"type": "clarify", "labels": DEEP},
    None,
    3.5,
    [],
    b"\xff\xfe",
]


def random_action(rng: random.Random, tables: list[str]) -> Any:
    """One random action: mostly SQL (a few heavy statements), the rest malformed text or
    structures, now and then one of the text attacks (1 MB of junk, deep JSON, ...)."""
    k = rng.random()
    t = rng.choice(tables) if tables else "t"
    if k < 0.55:
        pool = sorted(HEAVY_SQL) if rng.random() < 0.02 else LIGHT_SQL
        sql = rng.choice(pool).format(t=t)
        if rng.random() < 0.5:
            return {"type": "execute", "sql": sql}
        return '<tool_call>{"name": "execute_sql", "arguments": ' + json.dumps({"sql": sql}) + "}"
    if k < 0.85:
        return "".join(rng.choice(FRAGMENTS) for _ in range(rng.randint(1, 30)))
    if k < 0.97:
        return rng.choice(BAD_STRUCTURES)
    if k < 0.972:
        return rng.choice(TEXT_ATTACKS)
    return {"type": rng.choice(["stop", "abstain"])}


def rss_mb() -> float:
    try:
        for line in Path("/proc/self/status").read_text().splitlines():
            if line.startswith("VmRSS:"):
                return int(line.split()[1]) / 1024
    except OSError:
        pass
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024


class Probe:
    """Runs steps, timing each and catching what escapes ``step()``."""

    def __init__(self, budget: float) -> None:
        self.budget = budget
        self.over_budget = 0
        self.max_cpu_s = 0.0
        self.max_step_s = 0.0
        self.max_step_what = ""
        self.escaped: list[str] = []
        self.internal: list[str] = []
        self.peak_heap = 0
        self.steps = 0

    def step(self, env: ClarifySQLEnv, action: Any) -> tuple[bool, dict[str, Any]]:
        t0, c0 = time.perf_counter(), time.thread_time()
        try:
            _, _, term, trunc, info = env.step(action)
        except Exception as e:  # counted: must never happen
            self.escaped.append(f"{type(e).__name__}: {e}"[:200])
            return True, {}
        dt = time.perf_counter() - t0
        self.max_cpu_s = max(self.max_cpu_s, time.thread_time() - c0)
        self.over_budget += dt > self.budget * 1.1
        self.steps += 1
        if dt > self.max_step_s:
            self.max_step_s, self.max_step_what = dt, repr(action)[:100]
        if "internal error" in str(info.get("error") or ""):
            self.internal.append(str(info["error"])[:200])
        self.peak_heap = max(self.peak_heap, apsw.memory_used())
        return term or trunc, info


def run_attacks(probe: Probe) -> list[dict[str, Any]]:
    env = ClarifySQLEnv("builtin", max_turns=100)
    out = []
    writes = [i for i, t in enumerate(env.suite.tasks) if t.writable]
    reads = [i for i, t in enumerate(env.suite.tasks) if not t.writable and t.answerable]
    for kind, idx in (("read-only", reads[0]), ("write", writes[0])):
        for seq in ([*HEAVY], WRITE_SEQUENCE, TEXT_ATTACKS):
            env.reset(seed=0, options={"task_index": idx})
            for sql in seq:
                act = sql if seq is TEXT_ATTACKS else {"type": "execute", "sql": sql}
                t0 = time.perf_counter()
                done, info = probe.step(env, act)
                out.append(
                    {
                        "episode": kind,
                        "action": (sql if isinstance(sql, str) else repr(sql))[:70],
                        "step_s": round(time.perf_counter() - t0, 3),
                        "error": (info.get("error") or "")[:80],
                    }
                )
                if done:
                    env.reset(seed=0, options={"task_index": idx})
            probe.step(env, {"type": "stop"})
    env.close()
    return out


def run_fuzz(probe: Probe, n_actions: int, budget: float, seed: int) -> dict[str, Any]:
    rng = random.Random(seed)
    envs = [ClarifySQLEnv("builtin", limits=SessionLimits(timeout_s=budget))]
    if (SHARED / "DySQL-Bench").exists():
        envs.append(ClarifySQLEnv("dysql", limits=SessionLimits(timeout_s=budget)))
    episodes = 0
    done = True
    env = envs[0]
    tables: list[str] = []
    samples: list[tuple[int, float, float]] = []  # (actions, RSS MB, SQLite heap MB)
    for i in range(n_actions):
        if i % max(1, n_actions // 10) == 0:
            samples.append((i, round(rss_mb(), 1), round(apsw.memory_used() / 1e6, 1)))
        if done:
            env = rng.choice(envs)
            env.reset(seed=rng.randrange(1 << 30))
            episodes += 1
            with env._session.trusted() as conn:  # noqa: SLF001 (the benchmark's own peek)
                tables = [
                    r[0] for r in conn.execute("SELECT name FROM sqlite_schema WHERE type='table'")
                ]
        done, _ = probe.step(env, random_action(rng, tables))
        if not done and rng.random() < 0.03:
            done, _ = probe.step(env, {"type": rng.choice(["stop", "abstain"])})
    for e in envs:
        e.close()
    return {"episodes": episodes, "samples": samples}


# --- served mode ---------------------------------------------------------------------------------
def _free_port() -> int:
    import socket

    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def _proc_rss_mb(pid: int) -> float:
    try:
        with open(f"/proc/{pid}/statm", "rb") as f:
            return int(f.read().split()[1]) * 4096 / 1e6
    except (OSError, ValueError, IndexError):
        return float("nan")


_VICTIM = """
import json, sys, time
from websockets.sync.client import connect
with connect(sys.argv[1], open_timeout=60, max_size=None) as ws:
    ws.send(json.dumps({"type": "reset", "data": {"task_index": 0}}))
    ws.recv(timeout=120)
    print("ready", flush=True)
    msg = json.dumps({"type": "step", "data": {"type": "execute", "sql": "SELECT 1"}})
    end = time.time() + float(sys.argv[2])
    while time.time() < end:
        t0 = time.time()
        ws.send(msg)
        ws.recv(timeout=120)
        print(t0, time.time() - t0, flush=True)
        time.sleep(0.002)
"""


class _Victim:
    """Another process with a WebSocket session stepping ``SELECT 1`` in a loop (so nothing the
    attacker does in this process slows it); its (start, latency) samples, by wall clock."""

    def __init__(self, ws_url: str, seconds: float):
        import subprocess
        import threading

        self.proc = subprocess.Popen(
            [sys.executable, "-c", _VICTIM, ws_url, str(seconds)],
            stdout=subprocess.PIPE,
            text=True,
        )
        assert self.proc.stdout is not None
        if self.proc.stdout.readline().strip() != "ready":
            raise RuntimeError("the victim session did not start")
        self.samples: list[tuple[float, float]] = []
        self.thread = threading.Thread(target=self._read, daemon=True)
        self.thread.start()

    def _read(self) -> None:
        assert self.proc.stdout is not None
        for line in self.proc.stdout:
            t, lat = line.split()
            self.samples.append((float(t), float(lat)))

    def window(self, t0: float, t1: float) -> list[float]:
        return [lat for (t, lat) in list(self.samples) if t0 <= t + lat and t <= t1]

    def close(self) -> None:
        self.proc.terminate()
        self.proc.wait(timeout=60)


def _served_attacks(cap: int) -> list[tuple[str, str, Any]]:
    """(name, transport, payload): payloads sized against the message cap."""
    n_labels = cap // 8
    return [
        (
            "text action ~cap (nested JSON)",
            "ws",
            {"type": "step", "data": {"text": "<tool_call>" + '{"a":' * (cap // 9)}},
        ),
        (
            "text action ~cap (code fence)",
            "ws",
            {"type": "step", "data": {"text": "```json\n" + "{" * (cap // 2) + "\n```"}},
        ),
        (
            f"clarify with {n_labels} labels (~cap)",
            "ws",
            {
                "type": "step",
                "data": {"type": "clarify", "question": "q", "labels": [["a"]] * n_labels},
            },
        ),
        (
            "clarify with 700k labels (over the cap)",
            "ws",
            {
                "type": "step",
                "data": {"type": "clarify", "question": "q", "labels": [["a"]] * 700_000},
            },
        ),
        (
            "3M-label HTTP body",
            "http",
            {"action": {"type": "clarify", "question": "q", "labels": [["a"]] * 3_000_000}},
        ),
        ("20 MB SQL over HTTP", "http", {"action": {"type": "execute", "sql": "x" * 20_000_000}}),
        (
            "20 MB SQL over WebSocket",
            "ws",
            {"type": "step", "data": {"type": "execute", "sql": "x" * 20_000_000}},
        ),
        ("'[' * 100000", "ws-raw", "[" * 100_000),
        ("5000-digit integer", "ws-raw", '{"type": "step", "data": {"k": ' + "9" * 5000 + "}}"),
        ("binary frame", "ws-raw", b"\x00" * 1000),
    ]


def run_served(
    max_sessions: int = 8, cap: int = 1 << 20, write_sessions: int = 6
) -> dict[str, Any]:
    """Start ``clarisql serve`` (a subprocess on loopback) and measure stalls, caps, memory,
    malformed messages and slow clients against it (see the module docstring)."""
    import socket
    import statistics
    import subprocess

    import httpx
    from websockets.sync.client import connect

    port = _free_port()
    url, ws_url = f"http://127.0.0.1:{port}", f"ws://127.0.0.1:{port}/ws"
    cmd = [
        sys.executable,
        "-m",
        "clarisql",
        "serve",
        "--port",
        str(port),
        "--max-sessions",
        str(max_sessions),
        "--idle-timeout",
        "120",
        "--max-message-bytes",
        str(cap),
    ]
    srv = subprocess.Popen(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    out: dict[str, Any] = {"max_sessions": max_sessions, "max_message_bytes": cap}
    try:
        deadline = time.monotonic() + 180
        while time.monotonic() < deadline:
            try:
                if httpx.get(f"{url}/health", timeout=2).status_code == 200:
                    break
            except httpx.HTTPError:
                time.sleep(0.2)
        else:
            raise RuntimeError("the server did not start within 180 s")
        http = httpx.Client(base_url=url, timeout=120)
        victim = _Victim(ws_url, 600)
        time.sleep(1.0)
        quiet = [lat for _, lat in victim.samples]
        base = statistics.median(quiet)
        out["victim_step_ms_quiet"] = {"median": base * 1e3, "max": max(quiet) * 1e3}
        stalls = []
        attacker = connect(ws_url, open_timeout=30, max_size=None)
        attacker.send(json.dumps({"type": "reset", "data": {"task_index": 0}}))
        json.loads(attacker.recv(timeout=60))
        for name, how, payload in _served_attacks(cap):
            if how == "http":
                sid = http.post("/sessions", json={}).json()["session_id"]
                body = json.dumps(payload).encode()
            else:
                data = payload if how == "ws-raw" else json.dumps(payload)
            time.sleep(0.05)
            t0 = time.time()
            reply = ""
            try:
                if how == "http":
                    r = http.post(f"/sessions/{sid}/step", content=body)
                    reply = f"HTTP {r.status_code}, {len(r.content)} bytes"
                else:
                    attacker.send(data)
                    raw = attacker.recv(timeout=120)
                    kind = json.loads(raw)
                    code = kind["data"].get("code") if kind["type"] == "error" else "observation"
                    reply = f"{kind['type']} {code}, {len(raw)} bytes"
            except Exception as e:  # (a closed connection is the answer past 4x the cap)
                reply = f"{type(e).__name__}: {str(e)[:60]}"
                attacker = connect(ws_url, open_timeout=30, max_size=None)
                attacker.send(json.dumps({"type": "reset", "data": {"task_index": 0}}))
                json.loads(attacker.recv(timeout=60))
            if how == "http":
                http.delete(f"/sessions/{sid}")
            t1 = time.time()
            time.sleep(0.1)
            lats = victim.window(t0, t1)
            worst = max(lats) if lats else float("nan")
            stalls.append(
                {
                    "attack": name,
                    "reply": reply,
                    "attack_s": round(t1 - t0, 3),
                    "victim_steps": len(lats),
                    "victim_added_ms": round((worst - base) * 1e3, 1),
                }
            )
        attacker.send(json.dumps({"type": "step", "data": {"type": "execute", "sql": "SELECT 7"}}))
        alive = "7" in json.loads(attacker.recv(timeout=60))["data"]["observation"]["last"]
        attacker.close()
        victim.close()
        out["stalls"] = stalls
        out["max_victim_added_ms"] = max(s["victim_added_ms"] for s in stalls)
        out["attacker_session_alive_after_all"] = alive

        # caps: bad options hold no slot; every path counts against one cap
        bad = [http.post("/sessions", json={"seed": "abc"}).status_code for _ in range(62)]
        out["bad_option_status"] = sorted(set(bad))
        socks = [connect(ws_url, open_timeout=30) for _ in range(max_sessions + 4)]
        refused = 0
        for s in socks:
            try:
                s.send(json.dumps({"type": "state"}))
                refused += json.loads(s.recv(timeout=60))["type"] == "error"
            except Exception:  # (refused: the server said so and closed it first)
                refused += 1
        out["ws_sessions_opened"] = len(socks) - refused
        out["ws_sessions_refused"] = refused
        out["http_open_when_full"] = http.post("/sessions", json={}).status_code
        for s in socks:
            s.close()
        time.sleep(1.0)

        # memory: idle write sessions (each has written a row)
        from clarisql.envs.env import ClarifySQLEnv

        local = ClarifySQLEnv("builtin")
        w = [i for i, t in enumerate(local.suite.tasks) if t.writable][0]
        local.close()
        rss0 = _proc_rss_mb(srv.pid)
        sids = []
        for _ in range(min(write_sessions, max_sessions)):
            r = http.post("/sessions", json={"task_index": w})
            sid = r.json()["session_id"]
            http.post(
                f"/sessions/{sid}/step",
                json={"action": {"type": "execute", "sql": "CREATE TABLE bench_m(a)"}},
            )
            sids.append(sid)
        rss1 = _proc_rss_mb(srv.pid)
        out["idle_write_sessions"] = len(sids)
        out["server_rss_mb"] = {
            "before": round(rss0, 1),
            "after": round(rss1, 1),
            "per_session": round((rss1 - rss0) / max(1, len(sids)), 2),
        }
        for sid in sids:
            http.delete(f"/sessions/{sid}")

        # slow clients: 200 connections that never finish a request head
        loris = []
        for _ in range(200):
            s = socket.create_connection(("127.0.0.1", port), timeout=60)
            s.sendall(b"GET /health HTTP/1.1\r\nHost: x\r\n")
            loris.append(s)
        t0 = time.perf_counter()
        closed = 0
        for s in loris:
            s.settimeout(60)
            try:
                closed += s.recv(10) == b""
            except OSError:
                pass
            s.close()
        out["slow_loris"] = {
            "connections": len(loris),
            "closed_by_server": closed,
            "all_closed_within_s": round(time.perf_counter() - t0, 1),
        }
        http.close()
    finally:
        srv.terminate()
        try:
            srv.wait(timeout=30)
        except subprocess.TimeoutExpired:
            srv.kill()
    return out


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--actions", type=int, default=100_000)
    ap.add_argument("--budget", type=float, default=0.25, help="fuzz run time budget (s)")
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--json", default=None)
    ap.add_argument(
        "--served", action="store_true", help="also run the served-mode section (clarisql serve)"
    )
    ap.add_argument("--served-only", action="store_true", help="run only the served-mode section")
    args = ap.parse_args(argv)
    if args.served_only:
        res = run_served()
        print(json.dumps(res, indent=2))
        if args.json:
            Path(args.json).write_text(json.dumps(res, indent=2) + "\n", encoding="utf-8")
        return 0
    rss0, heap0 = rss_mb(), apsw.memory_used()

    default_budget = SessionLimits().timeout_s
    attack_probe = Probe(default_budget)
    t0 = time.perf_counter()
    attacks = run_attacks(attack_probe)
    attack_s = time.perf_counter() - t0
    print(f"attack list: {len(attacks)} steps in {attack_s:.1f} s")
    for a in sorted(attacks, key=lambda a: -a["step_s"])[:8]:
        print(f"  {a['step_s']:6.3f} s  {a['episode']:9s} {a['action']!r:74s} {a['error']}")

    fuzz_probe = Probe(args.budget)
    t0 = time.perf_counter()
    fz = run_fuzz(fuzz_probe, args.actions, args.budget, args.seed)
    fuzz_s = time.perf_counter() - t0
    rss1, heap1 = rss_mb(), apsw.memory_used()
    res = {
        "attack_steps": len(attacks),
        "attack_max_step_s": attack_probe.max_step_s,
        "attack_max_step_action": attack_probe.max_step_what,
        "attack_budget_s": default_budget,
        "attack_max_step_cpu_s": attack_probe.max_cpu_s,
        "attack_steps_over_budget_plus_10pct": attack_probe.over_budget,
        "fuzz_actions": fuzz_probe.steps,
        "fuzz_episodes": fz["episodes"],
        "fuzz_s": fuzz_s,
        "fuzz_budget_s": args.budget,
        "fuzz_max_step_s": fuzz_probe.max_step_s,
        "fuzz_max_step_action": fuzz_probe.max_step_what,
        "fuzz_max_step_cpu_s": fuzz_probe.max_cpu_s,
        "fuzz_steps_over_budget_plus_10pct": fuzz_probe.over_budget,
        "internal_error_episodes": len(attack_probe.internal) + len(fuzz_probe.internal),
        "escaped_exceptions": len(attack_probe.escaped) + len(fuzz_probe.escaped),
        "sqlite_heap_mb": {
            "before": heap0 / 1e6,
            "peak": max(attack_probe.peak_heap, fuzz_probe.peak_heap) / 1e6,
            "after": heap1 / 1e6,
        },
        "rss_mb": {"before": rss0, "after": rss1},
        "fuzz_samples_actions_rss_heap": fz["samples"],
    }
    if args.served:
        res["served"] = run_served()
    print(json.dumps(res, indent=2))
    for msg in (attack_probe.internal + fuzz_probe.internal)[:5]:
        print("internal error:", msg, file=sys.stderr)
    for msg in (attack_probe.escaped + fuzz_probe.escaped)[:5]:
        print("escaped:", msg, file=sys.stderr)
    if args.json:
        Path(args.json).write_text(json.dumps(res, indent=2) + "\n", encoding="utf-8")
    ok = not res["internal_error_episodes"] and not res["escaped_exceptions"]
    return 0 if ok else 1


if __name__ == "__main__":
    raise SystemExit(main())
