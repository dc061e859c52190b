"""The command line, run as a user would (subprocesses, real built-in suite)."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest


def clarisql(*args: str, cache: Path, stdin: str | None = None) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "CLARISQL_CACHE_DIR": str(cache)}
    return subprocess.run(
        [sys.executable, "-m", "clarisql", *args],
        input=stdin,
        capture_output=True,
        text=True,
        timeout=300,
        env=env,
    )


@pytest.fixture(scope="module")
def cache(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return tmp_path_factory.mktemp("cache")


def test_demo_prints_the_metrics_table(cache: Path) -> None:
    out = clarisql("demo", "--max-episodes", "40", cache=cache)
    assert out.returncode == 0, out.stderr
    rows = {ln.split()[0]: ln.split()[1:] for ln in out.stdout.splitlines() if ln.split()}
    assert rows["policy"] == ["Pass@1", "φ_0", "φ_10", "ask/ep", "turns/ep", "reward"]
    assert {"oracle", "answer-without-clarifying", "abstain-all", "random"} <= set(rows)
    assert rows["oracle"][:3] == ["1.000", "1.000", "1.000"]  # Pass@1, φ_0, φ_10
    assert float(rows["answer-without-clarifying"][0]) < 1.0


def test_play_drives_an_episode(cache: Path) -> None:
    script = "schema\nsql SELECT 1\nask which year? || ,year,Missing\nabstain cannot\n"
    out = clarisql("play", "--seed", "0", cache=cache, stdin=script)
    assert out.returncode == 0, out.stderr
    assert "Task builtin/" in out.stdout
    assert "OK: 1 row(s)." in out.stdout
    assert "Episode over (terminated)" in out.stdout


def test_user_errors_are_one_line(cache: Path, tmp_path: Path) -> None:
    out = clarisql("play", "--suite", str(tmp_path / "missing.jsonl"), cache=cache, stdin="")
    assert out.returncode == 2
    assert "error:" in out.stderr and "Traceback" not in out.stderr
    out = clarisql("demo", "--rewards", "no-such-spec", "--max-episodes", "1", cache=cache)
    assert out.returncode == 2 and "unknown reward spec" in out.stderr
