"""Training data from the environment: task splits, oracle (SFT) conversations, GRPO prompts.

- :func:`split_tasks`: a seeded train/held-out split of a suite's task ids, stratified by category
  so every category appears on both sides.
- :func:`oracle_conversations`: run a privileged scripted policy (``oracle`` by default) through
  :func:`clarisql.rollouts.episode.run_episode` and turn ``env.messages`` into template-ready
  conversations (:meth:`ChatFormat.conversation`), closed the way a TRL tool-calling rollout ends:
  the terminal action's observation as a tool message and an empty assistant turn (the model
  learns to end its turn once the episode is over).
- :func:`sft_dataset`: those conversations tokenized with the chat template (tools included) and
  an assistant-token mask, as a ``datasets.Dataset`` with ``input_ids``/``assistant_masks`` —
  TRL's ``SFTTrainer`` takes pre-tokenized data as is. Pre-tokenizing is needed because tool-call
  arguments mix types (``labels`` holds strings and lists), which Arrow columns cannot hold.
- :func:`dataset_conversations` / :func:`grpo_prompts_from_dataset`: the same from datasets
  exported by ``clarisql export`` (a run's ``messages``; a suite's ``prompt`` and ``task_id``).
- :func:`grpo_prompts`: one row per task: ``prompt`` = [system message, empty user message] and
  ``task_id``; the environment adapter's ``reset(task_id=...)`` returns the user's opening message,
  which TRL appends to the empty user message.
"""

from __future__ import annotations

import random
from collections import defaultdict
from collections.abc import Iterable, Mapping, Sequence
from typing import Any

from clarisql.envs.env import ClarifySQLEnv
from clarisql.envs.suites import Suite
from clarisql.policies import make_policy
from clarisql.policies.hf import ChatFormat
from clarisql.rollouts.episode import run_episode
from clarisql.rollouts.export import episode_messages, suite_rows


def split_tasks(
    suite: Suite,
    eval_fraction: float = 0.2,
    seed: int = 0,
    *,
    categories: Sequence[str] | None = None,
) -> tuple[list[str], list[str]]:
    """(train ids, held-out ids): per category, a seeded ``eval_fraction`` share is held out."""
    if not 0.0 <= eval_fraction < 1.0:
        raise ValueError(f"eval_fraction must be in [0, 1), got {eval_fraction}")
    by_cat: dict[str, list[str]] = defaultdict(list)
    for t in suite.tasks:
        if categories is None or t.category in categories or t.category.split(":")[0] in categories:
            by_cat[t.category].append(t.id)
    rng = random.Random(seed)
    train: list[str] = []
    held: list[str] = []
    for cat in sorted(by_cat):
        ids = sorted(by_cat[cat])
        rng.shuffle(ids)
        n_eval = int(round(len(ids) * eval_fraction))
        if eval_fraction > 0 and n_eval == 0 and len(ids) > 1:
            n_eval = 1
        held += ids[:n_eval]
        train += ids[n_eval:]
    rng.shuffle(train)
    rng.shuffle(held)
    return train, held


def interleave(ids: Sequence[str], suite: Suite, seed: int = 0) -> list[str]:
    """``ids`` reordered round-robin over categories (so a short prefix covers every category)."""
    by_cat: dict[str, list[str]] = defaultdict(list)
    for i in ids:
        by_cat[suite.task(i).category].append(i)
    rng = random.Random(seed)
    queues = [list(v) for _, v in sorted(by_cat.items())]
    rng.shuffle(queues)
    out: list[str] = []
    while any(queues):
        for q in queues:
            if q:
                out.append(q.pop(0))
    return out


def _closed(conv: list[dict[str, Any]]) -> list[dict[str, Any]]:
    if conv and conv[-1]["role"] != "assistant":
        conv.append({"role": "assistant", "content": ""})
    return conv


def oracle_conversations(
    env: ClarifySQLEnv,
    task_ids: Sequence[str],
    fmt: ChatFormat,
    *,
    policy: str = "oracle",
    seed: int = 0,
    only_correct: bool = True,
    progress: bool = False,
) -> list[list[dict[str, Any]]]:
    """Template-ready conversations of ``policy`` on ``task_ids`` (see the module docstring).
    ``progress``: log the collection as it goes (:mod:`clarisql.training.progress`).

    Each episode's chat is rebuilt from its trajectory line by
    :func:`clarisql.rollouts.export.episode_messages`, the path ``clarisql export`` uses, so
    training on a live rollout and on an exported run see the same messages.
    """
    import time

    from clarisql.training.progress import report_item

    pol = make_policy(policy)
    convs = []
    t0 = time.perf_counter()
    for k, tid in enumerate(task_ids):
        res = run_episode(env, pol, tid, seed=seed + k)
        if progress:
            report_item(f"{policy} trajectories", k + 1, len(task_ids), t0)
        if only_correct and not res.correct:
            continue
        msgs = episode_messages(res.to_dict(), system=env.messages[0]["content"])
        convs.append(_closed(fmt.conversation(msgs)))
    return convs


def dataset_conversations(
    dataset: Iterable[Mapping[str, Any]], fmt: ChatFormat, *, only_correct: bool = False
) -> list[list[dict[str, Any]]]:
    """Template-ready conversations from the text chat of an exported run (``messages_text``,
    else ``messages``; ``clarisql export RUN --format hf``, :func:`clarisql.rollouts.export.run_dataset`)."""
    return [
        _closed(fmt.conversation(row.get("messages_text") or row["messages"]))
        for row in dataset
        if not only_correct or row.get("correct")
    ]


def training_chat_template(tokenizer: Any) -> str | None:
    """A chat template with ``{% generation %}`` markers for assistant masks (TRL's training
    variant when the tokenizer's own lacks them); ``None`` means the tokenizer's own will do."""
    from trl.chat_template_utils import get_training_chat_template, has_generation_markers

    if tokenizer.chat_template is not None and has_generation_markers(tokenizer.chat_template):
        return None
    tmpl = get_training_chat_template(tokenizer)
    if tmpl is None:
        raise ValueError(
            "the tokenizer's chat template has no {% generation %} markers and TRL knows no training "
            "variant of it: add the markers to compute assistant-only SFT loss"
        )
    return tmpl


def tokenize_conversations(
    tokenizer: Any,
    convs: Sequence[Sequence[Mapping[str, Any]]],
    fmt: ChatFormat,
    *,
    max_length: int | None = None,
) -> dict[str, list[list[int]]]:
    """``input_ids`` and ``assistant_masks`` (1 on tokens the assistant produced) per conversation.

    Conversations longer than ``max_length`` tokens are dropped (truncating would cut tool calls).
    """
    tmpl = training_chat_template(tokenizer)
    kw = fmt.render_kwargs()
    ids_out: list[list[int]] = []
    masks: list[list[int]] = []
    for conv in convs:
        out = tokenizer.apply_chat_template(
            list(conv),
            chat_template=tmpl,
            tokenize=True,
            return_dict=True,
            return_assistant_tokens_mask=True,
            **kw,
        )
        ids = list(out["input_ids"])
        mask = [int(x) for x in out["assistant_masks"]]
        if not any(mask):
            raise ValueError(
                "the chat template produced no assistant tokens: cannot compute the SFT loss mask"
            )
        if max_length is not None and len(ids) > max_length:
            continue
        ids_out.append(ids)
        masks.append(mask)
    return {"input_ids": ids_out, "assistant_masks": masks}


def sft_dataset(
    tokenizer: Any,
    convs: Sequence[Sequence[Mapping[str, Any]]],
    fmt: ChatFormat,
    *,
    max_length: int | None = None,
) -> Any:
    """A pre-tokenized ``datasets.Dataset`` for TRL's ``SFTTrainer`` (see the module docstring)."""
    from datasets import Dataset

    data = tokenize_conversations(tokenizer, convs, fmt, max_length=max_length)
    if not data["input_ids"]:
        raise ValueError(
            "no SFT examples: every conversation was dropped (too long, or the oracle failed)"
        )
    return Dataset.from_dict(data)


def grpo_prompts_from_dataset(dataset: Iterable[Mapping[str, Any]], fmt: ChatFormat) -> Any:
    """GRPO prompts from an exported suite (``clarisql export SUITE --format hf``): ``prompt`` =
    [the format's system message, empty user message] and ``task_id``."""
    from datasets import Dataset

    prompts, ids = [], []
    for row in dataset:
        system = fmt.system_text(row["prompt"][0]["content"])
        prompts.append([{"role": "system", "content": system}, {"role": "user", "content": ""}])
        ids.append(row["task_id"])
    return Dataset.from_dict({"prompt": prompts, "task_id": ids})


def grpo_prompts(env: ClarifySQLEnv, task_ids: Sequence[str], fmt: ChatFormat) -> Any:
    """A ``datasets.Dataset`` with ``prompt`` (system + empty user message) and ``task_id``,
    built from the suite's export rows (:func:`clarisql.rollouts.export.suite_rows`)."""
    rows = {r["task_id"]: r for r in suite_rows(env.suite.subset(list(dict.fromkeys(task_ids))))}
    return grpo_prompts_from_dataset([rows[t] for t in task_ids], fmt)


__all__ = [
    "dataset_conversations",
    "grpo_prompts",
    "grpo_prompts_from_dataset",
    "interleave",
    "oracle_conversations",
    "sft_dataset",
    "split_tasks",
    "tokenize_conversations",
    "training_chat_template",
]
