"""Shared setup for test_training.py and test_hf_policy.py: a small task file on a real SQLite
database and a tiny locally built model (built once per test session)."""

from __future__ import annotations

import atexit
import importlib.util
import shutil
import tempfile
from pathlib import Path

import pytest

from clarisql.envs.tasks import Task, save_tasks

from .conftest import build_small_db, small_task


def _have(module: str) -> bool:
    try:
        return importlib.util.find_spec(module) is not None
    except (ImportError, ValueError):
        return False


HAVE_TRAIN = all(
    _have(m) for m in ("torch", "transformers", "trl", "peft", "accelerate", "datasets")
)
needs_train = pytest.mark.skipif(
    not HAVE_TRAIN,
    reason="needs the train extra (torch, transformers, trl, peft, accelerate, datasets)",
)

TINY_SPEC = {
    "vocab_size": 1024,
    "hidden_size": 32,
    "intermediate_size": 64,
    "num_hidden_layers": 2,
    "num_attention_heads": 2,
    "num_key_value_heads": 1,
    "max_position_embeddings": 2048,
}
FORMAT = {"tools": True, "system": "brief", "include_schema": True}
ENV_KW = {"max_turns": 3, "max_rows_shown": 3}

_CACHE: dict[str, Path] = {}


def small_tasks() -> list[Task]:
    kinds = [
        ("from", "r/from"),
        ("where", "r/where"),
        ("count", "r/ok1"),
        ("names", "r/ok2"),
        ("max", "r/ok3"),
        ("select", "r/sel"),
        ("write", "w/1"),
        ("poem", "u/1"),
        ("future", "u/2"),
    ]
    return [small_task(kind, task_id) for kind, task_id in kinds]


def task_file() -> Path:
    """A JSONL task file beside a small real SQLite database (built once per session)."""
    if "suite" not in _CACHE:
        d = Path(tempfile.mkdtemp(prefix="clarisql-train-suite-"))
        atexit.register(shutil.rmtree, d, ignore_errors=True)
        build_small_db(d / "small.sqlite")
        _CACHE["suite"] = save_tasks(small_tasks(), d / "tasks.jsonl")
    return _CACHE["suite"]


def tiny_model_dir() -> Path:
    """A tiny random-initialised model + local tokenizer for :func:`task_file` (built once)."""
    if "tiny" not in _CACHE:
        from clarisql.policies.hf import ChatFormat
        from clarisql.training.tiny import build_tiny

        d = Path(tempfile.mkdtemp(prefix="clarisql-tiny-"))
        atexit.register(shutil.rmtree, d, ignore_errors=True)
        fmt = ChatFormat.from_dict(FORMAT)
        _CACHE["tiny"] = build_tiny(
            d, str(task_file()), TINY_SPEC, formats=[fmt], env_kwargs=ENV_KW
        )
        fmt.save(d)
    return _CACHE["tiny"]
