"""Packaging contracts: one `clarisql` package, no torch in the core, no generic top-level names."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path


def run(code: str, cwd: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-c", code], cwd=cwd, capture_output=True, text=True, timeout=120
    )


def test_core_import_and_episode_do_not_import_torch(tmp_path: Path) -> None:
    code = (
        "import sys, clarisql, gymnasium as gym\n"
        "from clarisql.envs.tasks import Task, save_tasks\n"
        "import sqlite3\n"
        "c = sqlite3.connect('d.sqlite'); c.execute('create table t(a)'); c.execute('insert into t values (1)'); c.commit()\n"
        "save_tasks([Task(id='x', db='d.sqlite', utterance='?', gold_sql='SELECT a FROM t')], 't.jsonl')\n"
        "env = gym.make('clarisql/ClarifySQL-v0', suite='t.jsonl')\n"
        "env.reset(seed=0); *_, info = env.step({'type': 'stop', 'sql': 'SELECT a FROM t'})\n"
        "import clarisql.policies, clarisql.rollouts.episode, clarisql.rewards\n"
        "assert info['episode']['correct']\n"
        "heavy = [m for m in ('torch', 'transformers', 'trl', 'peft', 'accelerate', 'datasets') if m in sys.modules]\n"
        "print('HEAVY', heavy)\n"
    )
    out = run(code, tmp_path)
    assert out.returncode == 0, out.stderr
    assert "HEAVY []" in out.stdout


def test_no_generic_top_level_packages(tmp_path: Path) -> None:
    out = run(
        "import importlib.util as u\n"
        "print([n for n in ('envs', 'rewards', 'policies', 'rollouts', 'training', 'configs') if u.find_spec(n)])",
        tmp_path,
    )
    assert out.returncode == 0, out.stderr
    assert out.stdout.strip() == "[]"


def test_subpackages_import_as_clarisql() -> None:
    import clarisql.envs
    import clarisql.policies
    import clarisql.rewards
    import clarisql.rollouts

    root = Path(clarisql.__file__).parent
    assert Path(clarisql.envs.__file__).parent == root / "envs"
    assert (root / "configs" / "rewards" / "default.yaml").is_file()
