"""Progress lines for every phase of a training run (no timing asserted)."""

from __future__ import annotations

import logging

import pytest

from clarisql.envs.env import ClarifySQLEnv
from clarisql.policies.hf import ChatFormat
from clarisql.training.config import ConfigError, load_config
from clarisql.training.data import oracle_conversations
from clarisql.training.progress import Phases, every, report_item

from ._train_fixtures import ENV_KW, FORMAT, small_tasks, task_file


def test_phases_are_numbered_and_timed(caplog: pytest.LogCaptureFixture) -> None:
    caplog.set_level(logging.INFO, logger="clarisql.training")
    ph = Phases(["model", "SFT warm start", "GRPO", "held-out eval"])
    ph.start("GRPO", "4 steps")
    ph.done("GRPO", "reward 0.9")
    text = caplog.text
    assert "[3/4] GRPO: 4 steps" in text
    assert "GRPO done in" in text and "s CPU" in text and "reward 0.9" in text
    assert set(ph.seconds) == set(ph.cpu_seconds) == {"GRPO"}


def test_loops_report_about_ten_lines(caplog: pytest.LogCaptureFixture) -> None:
    caplog.set_level(logging.INFO, logger="clarisql.training")
    assert every(96) == 10 and every(3) == 1
    for i in range(1, 97):
        report_item("things", i, 96, 0.0)
    lines = [r for r in caplog.records if "things" in r.getMessage()]
    assert 9 <= len(lines) <= 12
    assert "things 1/96" in lines[0].getMessage() and "things 96/96" in lines[-1].getMessage()


def test_oracle_collection_reports_progress(caplog: pytest.LogCaptureFixture) -> None:
    caplog.set_level(logging.INFO, logger="clarisql.training")
    env = ClarifySQLEnv(str(task_file()), **ENV_KW)
    ids = [t.id for t in small_tasks()]
    convs = oracle_conversations(env, ids, ChatFormat.from_dict(FORMAT), progress=True)
    env.close()
    assert convs
    assert f"oracle trajectories {len(ids)}/{len(ids)}" in caplog.text
    caplog.clear()
    env = ClarifySQLEnv(str(task_file()), **ENV_KW)
    oracle_conversations(env, ids, ChatFormat.from_dict(FORMAT))
    env.close()
    assert "oracle trajectories" not in caplog.text  # only when asked


def test_step_progress_callback_logs_steps(caplog: pytest.LogCaptureFixture) -> None:
    pytest.importorskip("transformers")
    from types import SimpleNamespace

    from clarisql.training.progress import step_progress

    caplog.set_level(logging.INFO, logger="clarisql.training")
    cb = step_progress("GRPO")
    state = SimpleNamespace(global_step=0, max_steps=4)
    cb.on_train_begin(None, state, None)
    for step in range(1, 5):
        state.global_step = step
        cb.on_log(None, state, None, logs={"loss": 0.5, "reward": 0.25 * step})
    text = caplog.text
    assert "GRPO: 4 steps" in text
    assert "GRPO step 1/4 loss 0.500 reward 0.250" in text and "GRPO step 4/4" in text
    assert "s/step" in text and "left" in text


def test_torch_threads_is_validated() -> None:
    pytest.importorskip("trl")
    from clarisql.training.validate import validate_config

    assert validate_config(load_config("tiny-cpu-grpo")).torch_threads == 1
    with pytest.raises(ConfigError, match="torch_threads"):
        validate_config(load_config("tiny-cpu-grpo", ["torch_threads=0"]))
