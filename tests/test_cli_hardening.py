"""CLI input that is not what it should be: one line on stderr and status 2, never a traceback,
checked before slow work (loading a suite, binding a port)."""

from __future__ import annotations

import dataclasses
import json
import os
from pathlib import Path

import pytest

from clarisql.cli import main

from .conftest import build_small_db, small_task


def _one_line(capsys) -> str:
    err = capsys.readouterr().err.strip()
    assert "\n" not in err and "Traceback" not in err, err
    return err


@pytest.mark.parametrize(
    "argv,needle",
    [
        (["serve", "--port", "-1"], "port must be between 0 and 65535"),
        (["serve", "--port", "70000"], "port must be between 0 and 65535"),
        (["serve", "--max-sessions", "0"], "max_sessions must be a positive integer"),
        (["serve", "--max-message-bytes", "0"], "max_message_bytes must be a positive"),
        (["serve", "--idle-timeout", "-5"], "--idle-timeout must be >= 0"),
        (["serve", "--memory-budget-mb", "-1"], "memory_budget_mb must be a positive"),
    ],
)
def test_bad_serve_options_refused_before_anything_starts(capsys, argv, needle) -> None:
    pytest.importorskip("openenv.core.env_server", reason="needs the serve extra")
    assert main(argv) == 2
    assert needle in _one_line(capsys)


def _tasks_with_db(tmp_path: Path, db: str) -> Path:
    from clarisql.envs.tasks import save_tasks

    build_small_db(tmp_path / "small.sqlite")
    task = dataclasses.replace(small_task("count", "c/1"), db=db)
    return save_tasks([task], tmp_path / "tasks.jsonl")


@pytest.mark.parametrize("kind", ["dev-zero", "fifo"])
def test_a_task_database_that_is_not_a_regular_file(tmp_path: Path, capsys, kind: str) -> None:
    if kind == "fifo":
        if not hasattr(os, "mkfifo"):
            pytest.skip("no FIFOs here")
        os.mkfifo(tmp_path / "db.fifo")
        db = str(tmp_path / "db.fifo")
    else:
        if not Path("/dev/zero").exists():
            pytest.skip("no /dev/zero here")
        db = "/dev/zero"
    suite = _tasks_with_db(tmp_path, db)
    argv = ["eval", "--suite", str(suite), "--policy", "oracle", "--out", str(tmp_path / "o")]
    assert main([*argv, "--no-progress"]) == 2
    assert "is not a regular file" in _one_line(capsys)


def test_export_to_a_fifo_says_what_it_is(tmp_path: Path, capsys) -> None:
    pytest.importorskip("datasets", reason="needs the datasets extra")
    if not hasattr(os, "mkfifo"):
        pytest.skip("no FIFOs here")
    os.mkfifo(tmp_path / "out.fifo")
    assert main(["export", "builtin", "--out", str(tmp_path / "out.fifo")]) == 2
    assert "is not a folder" in _one_line(capsys)


@pytest.mark.parametrize(
    "line",
    [
        {"task_id": "t", "turns": "x"},
        {"task_id": "t", "turns": [1, 2]},
        {"task_id": "t", "turns": [], "reward": "high"},
        {"task_id": "t", "turns": [], "gold": ["x"]},
    ],
)
def test_view_of_a_malformed_run_is_one_line(tmp_path: Path, capsys, line: dict) -> None:
    (tmp_path / "trajectories.jsonl").write_text(json.dumps(line) + "\n")
    assert main(["view", str(tmp_path)]) == 2
    assert "malformed" in _one_line(capsys)
