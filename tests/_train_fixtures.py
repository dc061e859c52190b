"""Shared setup for test_training.py and test_hf_policy.py: a small task file on a real SQLite
database and a tiny locally built model (built once per test session)."""

from __future__ import annotations

import atexit
import importlib.util
import shutil
import tempfile
from pathlib import Path

import pytest

from clarisql.envs.tasks import Label, Task, Underspec, save_tasks

from .conftest import build_small_db


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
    return [
        Task(
            id="r/from",
            db="small.sqlite",
            utterance="What is the total price of sales in Riverton?",
            category="from",
            gold_sql="SELECT sum(price) FROM sales WHERE city_id = 1 AND year = 2020",
            underspecs=[Underspec(Label("Missing", "", "year"), "2020")],
        ),
        Task(
            id="r/where",
            db="small.sqlite",
            utterance="How much did Projekt 3 sell for?",
            category="where",
            gold_sql="SELECT price FROM sales WHERE project = 'Project 3'",
            underspecs=[Underspec(Label("not-exist", "Projekt 3", "project"), "Project 3")],
        ),
        Task(
            id="r/ok1",
            db="small.sqlite",
            utterance="How many sales are there?",
            gold_sql="SELECT count(*) FROM sales",
        ),
        Task(
            id="r/ok2",
            db="small.sqlite",
            utterance="List the city names.",
            gold_sql="SELECT name FROM cities",
        ),
        Task(
            id="r/ok3",
            db="small.sqlite",
            utterance="What is the highest sale price?",
            gold_sql="SELECT max(price) FROM sales",
        ),
        Task(
            id="r/sel",
            db="small.sqlite",
            utterance="Tell me about Project 5.",
            category="select",
            gold_sql="SELECT price FROM sales WHERE project = 'Project 5'",
            underspecs=[Underspec(Label("intent"), "its price")],
        ),
        Task(
            id="w/1",
            db="small.sqlite",
            utterance="Add the city Eastham with id 3.",
            category="write",
            writable=True,
            gold_actions=["INSERT INTO cities VALUES (3, 'Eastham')"],
        ),
        Task(
            id="u/1",
            db="small.sqlite",
            utterance="Write a poem about Riverton.",
            category="unanswerable:non-sql",
            answerable=False,
            unanswerable_kind="non-sql",
        ),
        Task(
            id="u/2",
            db="small.sqlite",
            utterance="What will prices be in 2030?",
            category="unanswerable:external-knowledge",
            answerable=False,
            unanswerable_kind="external-knowledge",
        ),
    ]


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
