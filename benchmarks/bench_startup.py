"""Start-up costs of the served environment: client import and ``clarisql serve`` until ready.

Each measurement is a fresh interpreter (``--repeat`` times, median and range reported):

1. ``import clarisql.envs.server.client`` (what a trainer pays to talk to a server), beside
   ``import openenv.core.env_client`` (what the client imported before: openenv-core's package
   imports gradio);
2. ``python -m clarisql serve`` from process start until it prints ``ready on``, with the
   phases it prints (imports, suite load, uvicorn start).

Wall time on the machine as it is: label numbers taken on a busy machine as such.

    python benchmarks/bench_startup.py [--repeat 3] [--suite builtin] [--json OUT]
"""

from __future__ import annotations

import argparse
import json
import os
import re
import socket
import statistics
import subprocess
import sys
import time


def _import_s(module: str) -> float:
    t0 = time.perf_counter()
    subprocess.run([sys.executable, "-c", f"import {module}"], check=True, timeout=600)
    return time.perf_counter() - t0


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def _serve_s(suite: str) -> tuple[float, list[str]]:
    port = _free_port()
    t0 = time.perf_counter()
    proc = subprocess.Popen(
        [sys.executable, "-m", "clarisql", "serve", "--suite", suite, "--port", str(port)],
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
        env={**os.environ, "PYTHONUNBUFFERED": "1"},
    )
    lines: list[str] = []
    try:
        deadline = time.monotonic() + 600
        while time.monotonic() < deadline:
            line = proc.stdout.readline()
            if not line:
                raise RuntimeError(f"serve exited before it was ready: {lines}")
            lines.append(line.rstrip())
            if "ready on" in line:
                return time.perf_counter() - t0, lines
        raise RuntimeError("serve was not ready within 600 s")
    finally:
        proc.terminate()
        proc.wait(timeout=30)


def _summary(xs: list[float]) -> dict[str, float]:
    return {"median_s": statistics.median(xs), "min_s": min(xs), "max_s": max(xs)}


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--repeat", type=int, default=3)
    ap.add_argument("--suite", default="builtin")
    ap.add_argument("--json", default=None)
    args = ap.parse_args()
    out: dict[str, object] = {"load_average": os.getloadavg()[0], "cpus": os.cpu_count()}
    for name, module in (
        ("client_import", "clarisql.envs.server.client"),
        ("openenv_env_client_import", "openenv.core.env_client"),
    ):
        out[name] = _summary([_import_s(module) for _ in range(args.repeat)])
    runs = [_serve_s(args.suite) for _ in range(args.repeat)]
    out["serve_ready"] = _summary([s for s, _ in runs])
    out["serve_phases"] = [re.sub(r"http://\S+", "URL", line) for line in runs[len(runs) // 2][1]]
    print(json.dumps(out, indent=2))
    if args.json:
        with open(args.json, "w", encoding="utf-8") as fh:
            json.dump(out, fh, indent=2)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
