"""Export task suites and runs as Hugging Face ``datasets`` (Arrow + Parquet + dataset card).

Contract
- :func:`export_hf` writes ``OUT/`` with ``Dataset.save_to_disk`` (Arrow; ``datasets.load_from_disk
  (OUT)`` reads it back), ``OUT/data/train-00000-of-00001.parquet`` (the same rows, for
  ``load_dataset("parquet", ...)`` and the Hub) and ``OUT/README.md``, a dataset card with the
  typed schema, provenance and how to train on it. Columns have explicit :class:`datasets.Features`.
- A **suite** (a name such as ``builtin`` or a ``.jsonl`` task file) gives one row per task
  (:func:`suite_rows`): its database reference (``db``, file name and SHA-256), the question,
  the gold facts (labels as JSON strings, since a label mixes strings and lists, which Arrow
  cannot hold in one column), and ``prompt`` = [system, user] in chat format: with ``task_id``
  it is what TRL's ``GRPOTrainer(environment_factory=...)`` takes (see
  :func:`clarisql.training.data.grpo_prompts`).
- A **run** (a folder with ``trajectories.jsonl``) gives one row per episode (:func:`run_rows`):
  ``messages``, the episode's chat exactly as the environment kept it (:func:`episode_messages`:
  system prompt, the user's opening, each action as the assistant's text tool call, each result
  as a ``tool`` or ``user`` message), the episode reward, ``correct``, the per-turn rewards and
  the reward components. ``messages`` is what TRL's ``SFTTrainer`` takes;
  :func:`clarisql.training.data.dataset_conversations` turns it into template-ready chats.
- The system prompt is rebuilt from the suite named in ``run.json`` (as the environment builds
  it); ``include_system=False`` leaves it out when that suite is not available here.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from clarisql.envs.actions import ACTION_FORMAT_HELP, ActionError, parse_action
from clarisql.envs.suites import Suite, load_suite
from clarisql.envs.tasks import Task

PARQUET_FILE = "data/train-00000-of-00001.parquet"
#: Action kinds that end an episode: their result closes the chat as a ``tool`` message.
_TERMINAL = ("abstain", "stop")


# --- chats ---------------------------------------------------------------------------------------
def system_prompts(suite: Suite) -> Callable[[Task], str]:
    """A function giving each task's system prompt as the environment writes it (cached per
    database; no episode is started)."""
    from clarisql.envs.env import SYSTEM_PROMPT
    from clarisql.envs.sandbox.database import get_image
    from clarisql.envs.schema import schema_summary

    cache: dict[str, str] = {}

    def get(task: Task) -> str:
        if task.db not in cache:
            spec = suite.database(task)
            image = get_image(spec.path, spec.post_copy_sql)
            schema = schema_summary(image, spec.description)
            cache[task.db] = SYSTEM_PROMPT.format(actions=ACTION_FORMAT_HELP, schema=schema)
        return cache[task.db]

    return get


def _assistant_text(turn: Mapping[str, Any]) -> str:
    raw, act = turn.get("raw"), turn.get("action")
    if isinstance(raw, str):
        return raw
    if isinstance(act, Mapping):
        try:
            return parse_action(dict(act)).to_text()
        except ActionError:
            return json.dumps(act, ensure_ascii=False, default=str)
    return act if isinstance(act, str) else repr(act)[:2000]


def episode_messages(line: Mapping[str, Any], system: str | None = None) -> list[dict[str, str]]:
    """The chat of one trajectory line, as ``env.messages`` held it, closed by the final result.

    ``[system?, user opening, (assistant action, tool|user result)...]``: results of
    ``execute_sql`` and of the terminal ``abstain``/``stop`` are ``tool`` messages; the user's
    answers to ``ask_user`` and the environment's error notes after an invalid action are
    ``user`` messages (as the environment sends them).
    """
    msgs = [{"role": "system", "content": system}] if system is not None else []
    msgs.append({"role": "user", "content": str(line.get("opening") or "")})
    for t in line.get("turns") or []:
        msgs.append({"role": "assistant", "content": _assistant_text(t)})
        act = t.get("action")
        kind = act.get("type") if isinstance(act, Mapping) else None
        role = "tool" if kind == "execute" or kind in _TERMINAL else "user"
        msgs.append({"role": role, "content": str(t.get("observation", ""))})
    return msgs


# --- rows ----------------------------------------------------------------------------------------
def _sha256(path: Path) -> str | None:
    try:
        h = hashlib.sha256()
        with path.open("rb") as fh:
            for block in iter(lambda: fh.read(1 << 20), b""):
                h.update(block)
        return h.hexdigest()
    except OSError:
        return None


def suite_rows(suite: Suite) -> list[dict[str, Any]]:
    """One row per task of ``suite`` (see the module docstring)."""
    system = system_prompts(suite)
    digests: dict[str, str | None] = {}
    rows = []
    for t in suite.tasks:
        spec = suite.database(t)
        if t.db not in digests:
            digests[t.db] = _sha256(Path(spec.path))
        rows.append(
            {
                "task_id": t.id,
                "suite": suite.name,
                "category": t.category,
                "db": t.db,
                "db_file": Path(spec.path).name,
                "db_sha256": digests[t.db],
                "question": t.utterance,
                "prompt": [
                    {"role": "system", "content": system(t)},
                    {"role": "user", "content": t.utterance},
                ],
                "writable": t.writable,
                "answerable": t.answerable,
                "unanswerable_kind": t.unanswerable_kind,
                "gold_sql": t.gold_sql,
                "gold_actions": list(t.gold_actions),
                "gold_labels": [
                    json.dumps(u.label.to_json(), ensure_ascii=False) for u in t.underspecs
                ],
                "underspecs": [
                    {"label": json.dumps(u.label.to_json(), ensure_ascii=False), "value": u.value}
                    for u in t.underspecs
                ],
                "gold_answer": None
                if t.gold_answer is None
                else json.dumps(t.gold_answer, ensure_ascii=False, default=str),
                "instruction": t.instruction,
                "metadata": json.dumps(t.metadata, ensure_ascii=False, default=str),
            }
        )
    return rows


def _run_config(run_dir: Path) -> dict[str, Any]:
    try:
        return json.loads((run_dir / "run.json").read_text(encoding="utf-8")).get("config") or {}
    except (OSError, ValueError):
        return {}


def run_rows(
    run_dir: str | Path,
    *,
    lines: Sequence[Mapping[str, Any]] | None = None,
    include_system: bool = True,
) -> list[dict[str, Any]]:
    """One row per episode of the run in ``run_dir`` (see the module docstring).

    Raises ``FileNotFoundError`` when the folder holds no trajectories, and ``ValueError`` when
    ``include_system`` is set but the run's suite cannot be loaded here.
    """
    from clarisql.rollouts.store import read_trajectories

    d = Path(run_dir)
    if lines is None:
        f = d / "trajectories.jsonl"
        if not f.is_file():
            raise FileNotFoundError(f"{d} is not a run folder (no trajectories.jsonl)")
        lines = read_trajectories(f)
    cfg = _run_config(d)
    system: Callable[[Task], str] | None = None
    suite = None
    if include_system:
        try:
            suite = load_suite(cfg["suite"], **(cfg.get("suite_kwargs") or {}))
        except (KeyError, OSError, ValueError) as e:
            raise ValueError(
                f"{d}: cannot load the run's suite to rebuild system prompts ({e}); "
                "export without them (--no-system)"
            ) from None
        system = system_prompts(suite)
    rows = []
    for x in lines:
        summary = x.get("summary") or {}
        gold = x.get("gold") or {}
        turns = x.get("turns") or []
        task = suite.task(str(x["task_id"])) if suite is not None else None
        rows.append(
            {
                "task_id": str(x["task_id"]),
                "trial": int(x.get("trial", 0) or 0),
                "policy": str(cfg.get("policy", "")),
                "suite": str(cfg.get("suite", "")),
                "category": str(x.get("category")),
                "db": task.db if task is not None else None,
                "messages": episode_messages(x, system(task) if system and task else None),
                "reward": float(x.get("reward", 0.0)),
                "correct": bool(x.get("correct")),
                "end": x.get("end"),
                "turn_rewards": [float(t.get("reward") or 0.0) for t in turns],
                "reward_components": dict(summary.get("reward_components") or {}),
                "n_turns": len(turns),
                "clarifications": sum(
                    1
                    for t in turns
                    if isinstance(t.get("action"), Mapping)
                    and t["action"].get("type") == "clarify"
                    and not t.get("error")
                ),
                "final_sql": x.get("final_sql"),
                "gold_sql": gold.get("gold_sql"),
                "gold_actions": list(gold.get("gold_actions") or []),
                "answerable": bool(gold.get("answerable", True)),
                "writable": bool(gold.get("writable", False)),
                "seed": x.get("seed"),
            }
        )
    return rows


# --- features and datasets -----------------------------------------------------------------------
def _chat_feature() -> Any:
    from datasets import List, Value

    return List({"role": Value("string"), "content": Value("string")})


def suite_features() -> Any:
    """The typed schema of :func:`suite_rows`."""
    from datasets import Features, List, Value

    s = Value("string")
    return Features(
        {
            "task_id": s,
            "suite": s,
            "category": s,
            "db": s,
            "db_file": s,
            "db_sha256": s,
            "question": s,
            "prompt": _chat_feature(),
            "writable": Value("bool"),
            "answerable": Value("bool"),
            "unanswerable_kind": s,
            "gold_sql": s,
            "gold_actions": List(s),
            "gold_labels": List(s),
            "underspecs": List({"label": s, "value": s}),
            "gold_answer": s,
            "instruction": s,
            "metadata": s,
        }
    )


def run_features(components: Iterable[str]) -> Any:
    """The typed schema of :func:`run_rows` (``components``: the reward component names)."""
    from datasets import Features, List, Value

    s, f = Value("string"), Value("float64")
    feats: dict[str, Any] = {
        "task_id": s,
        "trial": Value("int32"),
        "policy": s,
        "suite": s,
        "category": s,
        "db": s,
        "messages": _chat_feature(),
        "reward": f,
        "correct": Value("bool"),
        "end": s,
        "turn_rewards": List(f),
        "reward_components": {c: f for c in components},
        "n_turns": Value("int32"),
        "clarifications": Value("int32"),
        "final_sql": s,
        "gold_sql": s,
        "gold_actions": List(s),
        "answerable": Value("bool"),
        "writable": Value("bool"),
        "seed": Value("int64"),
    }
    if not feats["reward_components"]:
        del feats["reward_components"]  # Arrow has no empty struct
    return Features(feats)


def suite_dataset(suite: str | Path | Suite, **suite_kwargs: Any) -> Any:
    """A ``datasets.Dataset`` with one row per task (:func:`suite_rows`, :func:`suite_features`)."""
    from datasets import Dataset

    rows = suite_rows(load_suite(suite, **suite_kwargs))
    return Dataset.from_list(rows, features=suite_features())


def run_dataset(run_dir: str | Path, *, include_system: bool = True) -> Any:
    """A ``datasets.Dataset`` with one row per episode (:func:`run_rows`, :func:`run_features`)."""
    from datasets import Dataset

    rows = run_rows(run_dir, include_system=include_system)
    comps = sorted({k for r in rows for k in r["reward_components"]})
    for r in rows:
        if comps:
            r["reward_components"] = {c: float(r["reward_components"].get(c, 0.0)) for c in comps}
        else:
            r.pop("reward_components")
    return Dataset.from_list(rows, features=run_features(comps))


# --- writing -------------------------------------------------------------------------------------
@dataclass
class ExportResult:
    """What :func:`export_hf` wrote."""

    kind: str  # "suite" or "run"
    out_dir: Path
    n_rows: int
    parquet: Path | None
    card: Path


def is_run_dir(source: str | Path) -> bool:
    return (Path(source) / "trajectories.jsonl").is_file()


def export_hf(
    source: str | Path,
    out: str | Path,
    *,
    parquet: bool = True,
    include_system: bool = True,
    suite_kwargs: Mapping[str, Any] | None = None,
) -> ExportResult:
    """Write the suite or run ``source`` as a Hugging Face dataset in ``out`` (module docstring).

    ``source`` is a run folder (one with ``trajectories.jsonl``) or a suite spec (name or task
    file, with ``suite_kwargs``). Raises ``FileNotFoundError``/``KeyError``/``ValueError`` for
    an unknown source, and ``ValueError`` when ``out`` exists and is not empty.
    """
    from clarisql.rollouts.export_card import dataset_card

    dest = Path(out)
    if dest.exists() and (not dest.is_dir() or any(dest.iterdir())):
        raise ValueError(f"{dest} exists and is not empty: choose a new --out folder")
    if is_run_dir(source):
        kind, ds = "run", run_dataset(source, include_system=include_system)
        meta = {"config": _run_config(Path(source)), "source": str(source)}
        metrics = Path(source) / "metrics.json"
        if metrics.is_file():
            try:
                meta["metrics"] = json.loads(metrics.read_text(encoding="utf-8"))
            except ValueError:
                pass
    else:
        kind, ds = "suite", suite_dataset(source, **dict(suite_kwargs or {}))
        meta = {"source": str(source), "suite_kwargs": dict(suite_kwargs or {})}
    dest.mkdir(parents=True, exist_ok=True)
    ds.save_to_disk(str(dest))
    pq = None
    if parquet:
        pq = dest / PARQUET_FILE
        pq.parent.mkdir(parents=True, exist_ok=True)
        ds.to_parquet(str(pq))
    card = dest / "README.md"
    card.write_text(
        dataset_card(kind, ds, meta, parquet=pq is not None, out=str(dest)), encoding="utf-8"
    )
    return ExportResult(kind, dest, len(ds), pq, card)
