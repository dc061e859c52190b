"""The dataset card (``README.md``) of an exported suite or run (:mod:`clarisql.rollouts.export`).

Hub-style YAML front matter (tags, the Parquet ``configs`` entry, ``dataset_info`` with the
typed features), then what a row is, the columns and their types, provenance and how to load
and train on it.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Mapping
from typing import Any

import yaml

from clarisql import __version__

_SUITE_COLUMNS = {
    "task_id": "task id, unique in the suite",
    "suite": "suite name",
    "category": "well-specified, select/from/where/mixed (underspecified), write, unanswerable:KIND",
    "db": "database reference inside the suite (`suite:NAME` or a file path)",
    "db_file": "file name of the SQLite database",
    "db_sha256": "SHA-256 of that file (to check you run on the same database)",
    "question": "what the user says first",
    "prompt": "chat-format prompt: the environment's system message and the user's question",
    "writable": "the task changes the database (CRUD)",
    "answerable": "false: the agent should abstain",
    "unanswerable_kind": "why it cannot be answered (TrustSQL kinds)",
    "gold_sql": "query whose result is the gold answer (read tasks)",
    "gold_actions": "golden SQL actions, in order (write tasks)",
    "gold_labels": 'underspecification labels, each a JSON string (`"intent"` or `[content, slot, kind]`)',
    "underspecs": "labels with the value that resolves each (what the user reveals when asked)",
    "gold_answer": "expected rows as JSON, when fixed by the task",
    "instruction": "hidden instruction of an instruction-following user simulator (DySQL-Bench)",
    "metadata": "the task's free metadata, as JSON",
    "split": "train or test, by a stable hash of the task id",
    "tools": "JSON text: the action tools' schemas (ask_user, execute_sql, abstain, stop)",
    "answer": 'JSON text: the gold (`{"kind": "rows", "sql", "rows", "ordered"}`, '
    '`{"kind": "abstain", ...}` or `{"kind": "state", "sql", "actions", "digest"}`)',
    "data_source": "verl: the source name (`clarisql/SUITE`)",
    "env_class": "SkyRL: the registered environment (`clarisql`)",
    "reward_model": "verl: rule reward, ground truth = the task id the interaction replays",
    "reward_spec": "SkyRL: rule reward, ground truth = the task id the environment replays",
    "extra_info": "verl: `interaction_kwargs` for the clarisql interaction (task id, seed)",
}
_RUN_COLUMNS = {
    "task_id": "task id",
    "trial": "trial number (k trials per task)",
    "policy": "policy that acted",
    "suite": "suite the run used",
    "category": "task category",
    "db": "database reference of the task",
    "db_file": "file name of the task's SQLite database",
    "db_sha256": "SHA-256 of that file",
    "messages": "the episode's chat with structured tool calls: each action an assistant "
    "`tool_calls` item (arguments as JSON text) answered by a `tool` message (`tool_call_id`); "
    "a reply with no usable action stays text, answered by a `user` note",
    "messages_text": "the same chat as the environment kept it (text tool calls; results as "
    "`tool`, the user's answers as `user`)",
    "tools": "JSON text: the action tools' schemas (TRL's SFTTrainer reads it as is)",
    "answer": "JSON text: the task's gold (see the suite export)",
    "split": "train or test, by a stable hash of the task id",
    "reward": "episode reward (sum over turns) under the run's reward spec",
    "correct": "the episode reached the gold outcome (answer, state, or abstention)",
    "end": "how it ended: stop, abstain, truncated, user_stop",
    "turn_rewards": "reward of each action",
    "reward_components": "the reward split by component (sum over the episode)",
    "n_turns": "actions taken",
    "clarifications": "accepted ask_user actions",
    "final_sql": "the SQL whose result is the episode's answer",
    "gold_sql": "gold query (read tasks)",
    "gold_actions": "golden SQL actions (write tasks)",
    "answerable": "false: the agent should abstain",
    "writable": "the task changes the database",
    "seed": "environment seed of the episode",
}

_USAGE_SUITE = """```python
from datasets import load_from_disk
tasks = load_from_disk("{out}")["train"]   # or load_dataset("{out}/data", split="train")
# GRPO with the environment (TRL >= 1.0): keep task_id, blank the user turn (the env supplies it)
from clarisql.training.data import grpo_prompts_from_dataset
prompts = grpo_prompts_from_dataset(tasks, fmt)   # fmt: clarisql.policies.hf.ChatFormat
```"""
_USAGE_RUN = """```python
from datasets import load_from_disk
episodes = load_from_disk("{out}")["train"]  # or load_dataset("{out}/data", split="train")
good = episodes.filter(lambda r: r["correct"])
# SFT (TRL SFTTrainer): template-ready chats with tool calls, assistant-only loss mask
from clarisql.training.data import dataset_conversations, sft_dataset
convs = dataset_conversations(good, fmt)          # fmt: clarisql.policies.hf.ChatFormat
train = sft_dataset(tokenizer, convs, fmt)
```
`messages` (structured `tool_calls`) and `tools` (JSON text) are what TRL's `SFTTrainer`
takes as is: `SFTTrainer(model, train_dataset=episodes, ...)`; `messages_text` keeps the
environment's own text chat."""


def _splits(ds: Any) -> dict[str, Any]:
    """``{split: Dataset}`` of a ``DatasetDict`` (a single ``Dataset`` is ``train``)."""
    return dict(ds.items()) if hasattr(ds, "items") else {"train": ds}


def _front_matter(kind: str, ds: Any, name: str, parquet: bool) -> str:
    parts = _splits(ds)
    first = next(iter(parts.values()))
    total = sum(len(p) for p in parts.values())
    meta: dict[str, Any] = {
        "pretty_name": f"clarisql {kind}: {name}",
        "tags": [
            "text-to-sql",
            "clarification",
            "abstention",
            "reinforcement-learning",
            "clarisql",
        ],
        "task_categories": ["text-generation"],
        "size_categories": [_size(total)],
        "dataset_info": {
            "features": first.features._to_yaml_list(),
            "splits": [{"name": sp, "num_examples": len(p)} for sp, p in parts.items()],
        },
    }
    if parquet:
        meta["configs"] = [
            {
                "config_name": "default",
                "data_files": [{"split": sp, "path": f"data/{sp}-*.parquet"} for sp in parts],
            }
        ]
    return "---\n" + yaml.safe_dump(meta, sort_keys=False, allow_unicode=True) + "---\n"


def _size(n: int) -> str:
    for lim, label in ((1_000, "n<1K"), (10_000, "1K<n<10K"), (100_000, "10K<n<100K")):
        if n < lim:
            return label
    return "100K<n<1M"


def _type(feature: Any) -> str:
    return str(getattr(feature, "dtype", None) or type(feature).__name__)


def _describe_type(feature: Any) -> str:
    if isinstance(feature, dict):
        return "struct{" + ", ".join(f"{k}: {_describe_type(v)}" for k, v in feature.items()) + "}"
    inner = getattr(feature, "feature", None)
    if inner is not None:
        return f"list[{_describe_type(inner)}]"
    return _type(feature)


def dataset_card(
    kind: str, ds: Any, meta: Mapping[str, Any], *, parquet: bool, out: str = "OUT"
) -> str:
    """The card's Markdown for the exported ``ds`` (``kind``: ``"suite"`` or ``"run"``)."""
    cfg = meta.get("config") or {}
    parts_by_split = _splits(ds)
    n = sum(len(p) for p in parts_by_split.values())
    features = next(iter(parts_by_split.values())).features
    name = str(cfg.get("policy") or meta.get("source")) if kind == "run" else str(meta["source"])
    cols = _RUN_COLUMNS if kind == "run" else _SUITE_COLUMNS
    parts = [_front_matter(kind, ds, name, parquet), f"# clarisql {kind}: {name}", ""]
    if kind == "suite":
        parts += [
            f"{n} tasks of the clarisql suite `{meta['source']}`"
            f"{' ' + str(meta['suite_kwargs']) if meta.get('suite_kwargs') else ''}, one row per task: a text-to-SQL request over a real "
            "SQLite database that may need a clarifying question, an abstention or a write.",
        ]
    else:
        parts += [
            f"{n} episodes of policy `{cfg.get('policy')}` on suite `{cfg.get('suite')}` "
            f"({cfg.get('trials', 1)} trial(s) per task), one row per episode, scored with the "
            f"reward spec `{(cfg.get('reward') or {}).get('name') if isinstance(cfg.get('reward'), Mapping) else cfg.get('reward')}`.",
        ]
        m = meta.get("metrics") or {}
        if m:
            keys = ("pass@1", "phi_10", "ecr", "reward_mean")
            parts += [
                "",
                "Run metrics: "
                + ", ".join(f"{k} {m[k]:.3f}" for k in keys if isinstance(m.get(k), (int, float)))
                + ".",
            ]
    cats = Counter(c for p in parts_by_split.values() for c in p["category"])
    parts += ["", "## Rows per category", "", "| category | rows |", "|---|---|"]
    parts += [f"| {c} | {n} |" for c, n in sorted(cats.items())]
    parts += ["", "## Columns", "", "| column | type | meaning |", "|---|---|---|"]
    for col, feat in features.items():
        parts.append(f"| `{col}` | {_describe_type(feat)} | {cols.get(col, '')} |")
    parts += [
        "",
        "## Files",
        "",
        "- `train/`, `test/`, `dataset_dict.json`: `datasets.DatasetDict.save_to_disk` (splits "
        "by a stable hash of the task id: "
        + ", ".join(f"{sp} {len(p)} rows" for sp, p in parts_by_split.items())
        + ")",
    ]
    if parquet:
        parts.append("- `data/{train,test}-00000-of-00001.parquet`: the same rows as Parquet")
    parts += [
        "",
        "## Use",
        "",
        (_USAGE_RUN if kind == "run" else _USAGE_SUITE).format(out=out),
        "",
        "## Provenance",
        "",
        f"Exported by clarisql {__version__} (`clarisql export {meta.get('source')} --format hf`).",
    ]
    if kind == "suite":
        parts.append(
            "The databases are not included: `db` names the suite's database and `db_sha256` "
            "identifies the file; the suite loader builds or finds it."
        )
    return "\n".join(parts) + "\n"
