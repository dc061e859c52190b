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
- Framework columns (rows of both kinds): ``tools``, the JSON text of the action tools' schemas
  (``ask_user``, ``execute_sql``, ``abstain``, ``stop``; TRL's ``SFTTrainer`` reads a JSON-text
  ``tools`` column as is); ``answer``, the gold as JSON text (``{"kind": "rows", "sql", "rows",
  "ordered"}`` for a read task, ``{"kind": "abstain", "unanswerable_kind"}``, or ``{"kind":
  "state", "sql", "actions", "digest"}`` for a write task); the database reference ``db``,
  ``db_file``, ``db_sha256``. Suite rows add verl's and SkyRL's columns (``data_source``,
  ``reward_model``, ``extra_info`` with ``interaction_kwargs``; ``env_class``, ``reward_spec``):
  each names the task id the adapters of :mod:`clarisql.envs.adapters` replay.
- Run rows' ``messages`` are structured chat (OpenAI form): each action is an assistant
  message with one ``tool_calls`` item (``arguments`` as JSON text) and its result a ``tool``
  message with that ``tool_call_id``; a reply with no usable action stays assistant text,
  answered by the env's ``user`` note. ``messages_text`` is the same chat as the environment
  kept it (text tool calls).
- Splits: ``train`` and ``test`` by a stable hash of the task id
  (:func:`clarisql.envs.splits.split_of`; every episode of a task in its task's split), saved as
  a ``DatasetDict`` and as ``data/{split}-00000-of-00001.parquet``.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from clarisql.envs.actions import ACTION_FORMAT_HELP, TOOL_NAMES, ActionError, parse_action
from clarisql.envs.splits import SPLITS, split_of
from clarisql.envs.suites import Suite, load_suite
from clarisql.envs.tasks import Task
from clarisql.envs.tool_schemas import tool_schemas

PARQUET_FILE = "data/train-00000-of-00001.parquet"
#: where each split's Parquet file goes
PARQUET_FILES = {split: f"data/{split}-00000-of-00001.parquet" for split in SPLITS}
#: the name verl's interaction config and SkyRL's registry know the environment by
ENV_NAME = "clarisql"
#: Action kinds that end an episode: their result closes the chat as a ``tool`` message.
_TERMINAL = ("abstain", "stop")


# --- chats ---------------------------------------------------------------------------------------
def system_prompts(
    suite: Suite, table_search: bool | None = None, gate: str | None = None
) -> Callable[[Task], str]:
    """A function giving each task's system prompt as the environment writes it (cached per
    database; no episode is started): ``table_search`` and ``gate`` as ``ClarifySQLEnv`` takes
    them (``None``: the env's default, table search on for a suite with a large database when
    bm25s is installed), so the prompt is the env's own. Its ``table_search`` attribute says
    whether the prompt offers ``search_tables``."""
    from clarisql.envs.env import SYSTEM_PROMPT
    from clarisql.envs.env_tools import extra_help, resolve_table_search
    from clarisql.envs.retrieval import compact_schema
    from clarisql.envs.sandbox.database import get_image
    from clarisql.envs.schema import schema_summary

    cache: dict[str, str] = {}
    images: dict[str, Any] = {}

    def image_for(task: Task) -> Any:
        if task.db not in images:
            spec = suite.database(task)
            images[task.db] = get_image(spec.path, spec.post_copy_sql)
        return images[task.db]

    search = resolve_table_search(table_search, suite, image_for)
    gate = gate or suite.metadata.get("gate")
    actions = ACTION_FORMAT_HELP + extra_help(search, gate)

    def get(task: Task) -> str:
        if task.db not in cache:
            desc = suite.database(task).description
            image = image_for(task)
            schema = compact_schema(image, desc) if search else schema_summary(image, desc)
            cache[task.db] = SYSTEM_PROMPT.format(actions=actions, schema=schema)
        return cache[task.db]

    get.table_search = search  # type: ignore[attr-defined]  (the tools the prompt offers)
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


def tool_call(action: Mapping[str, Any], call_id: str) -> dict[str, Any] | None:
    """A parsed action dict as one OpenAI ``tool_calls`` item (``arguments`` as JSON text), or
    ``None`` when it is not a valid action."""
    try:
        act = parse_action(dict(action))
    except ActionError:
        return None
    args = act.to_dict()
    kind = args.pop("type")
    if kind == "stop" and args.get("sql") is None:
        args = {}
    return {
        "id": call_id,
        "type": "function",
        "function": {"name": TOOL_NAMES[kind], "arguments": json.dumps(args, ensure_ascii=False)},
    }


def episode_chat(line: Mapping[str, Any], system: str | None = None) -> list[dict[str, Any]]:
    """The chat of one trajectory line with structured tool calls (see the module docstring):
    ``[system?, user opening, (assistant tool call, tool result | assistant text, user note)...]``.
    Every message has ``role``, ``content``, ``tool_calls``, ``tool_call_id`` and ``name``
    (empty where they do not apply: one Arrow type for every message)."""

    def msg(role: str, content: str, calls: list | None = None, cid: str = "", name: str = ""):
        return {
            "role": role,
            "content": content,
            "tool_calls": calls or [],
            "tool_call_id": cid,
            "name": name,
        }

    msgs = [msg("system", system)] if system is not None else []
    msgs.append(msg("user", str(line.get("opening") or "")))
    for i, t in enumerate(line.get("turns") or []):
        act = t.get("action")
        call = tool_call(act, f"call_{i}") if isinstance(act, Mapping) else None
        obs = str(t.get("observation", ""))
        if call is None:
            msgs.append(msg("assistant", _assistant_text(t)))
            msgs.append(msg("user", obs))
        else:
            msgs.append(msg("assistant", "", [call]))
            msgs.append(msg("tool", obs, cid=call["id"], name=call["function"]["name"]))
    return msgs


def task_answer(task: Task, suite: Suite) -> str:
    """The gold of ``task`` as JSON text (the ``answer`` column; see the module docstring)."""
    from clarisql.envs.sandbox.database import get_image
    from clarisql.envs.state import gold

    if not task.answerable:
        return json.dumps({"kind": "abstain", "unanswerable_kind": task.unanswerable_kind})
    if task.writable:
        return json.dumps(
            {
                "kind": "state",
                "sql": task.gold_sql,
                "actions": list(task.gold_actions),
                "digest": task.gold_digest,
            },
            ensure_ascii=False,
            default=str,
        )
    out: dict[str, Any] = {"kind": "rows", "sql": task.gold_sql, "rows": None, "ordered": None}
    try:
        spec = suite.database(task)
        out["rows"] = gold.gold_rows(task, get_image(spec.path, spec.post_copy_sql))
        out["ordered"] = gold.gold_ordered(task)
    except Exception as e:  # the row is kept; the gold that cannot be computed is named
        out["error"] = f"{type(e).__name__}: {e}"
    return json.dumps(out, ensure_ascii=False, default=_jsonable_value)


def _jsonable_value(v: Any) -> Any:
    if isinstance(v, (bytes, bytearray, memoryview)):
        return bytes(v).hex()
    return str(v)


def _tools_json(table_search: bool) -> str:
    """The ``tools`` column: the episode's tools as JSON text (``search_tables`` with table
    search on, as the environment offers it)."""
    return json.dumps(tool_schemas(table_search), ensure_ascii=False)


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
    tools = _tools_json(system.table_search)
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
                "split": split_of(t.id),
                "tools": tools,
                "answer": task_answer(t, suite),
                "data_source": f"{ENV_NAME}/{suite.name}",
                "env_class": ENV_NAME,
                "reward_model": {"style": "rule", "ground_truth": t.id},
                "reward_spec": {"method": "rule", "ground_truth": t.id},
                "extra_info": {
                    "task_id": t.id,
                    "interaction_kwargs": {"name": ENV_NAME, "task_id": t.id, "seed": 0},
                },
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
        system = system_prompts(suite, cfg.get("table_search"), cfg.get("gate"))
    tools = _tools_json(bool(getattr(system, "table_search", cfg.get("table_search"))))
    rows = []
    digests: dict[str, str | None] = {}
    answers: dict[str, str] = {}
    for x in lines:
        summary = x.get("summary") or {}
        gold = x.get("gold") or {}
        turns = x.get("turns") or []
        task = suite.task(str(x["task_id"])) if suite is not None else None
        db_file = db_sha = None
        if task is not None and suite is not None:
            path = Path(suite.database(task).path)
            db_file = path.name
            if task.db not in digests:
                digests[task.db] = _sha256(path)
            db_sha = digests[task.db]
            if task.id not in answers:
                answers[task.id] = task_answer(task, suite)
        sys_prompt = system(task) if system and task else None
        rows.append(
            {
                "task_id": str(x["task_id"]),
                "trial": int(x.get("trial", 0) or 0),
                "policy": str(cfg.get("policy", "")),
                "suite": str(cfg.get("suite", "")),
                "category": str(x.get("category")),
                "db": task.db if task is not None else None,
                "db_file": db_file,
                "db_sha256": db_sha,
                "messages": episode_chat(x, sys_prompt),
                "messages_text": episode_messages(x, sys_prompt),
                "tools": tools,
                "answer": answers.get(task.id) if task is not None else _line_answer(gold),
                "split": split_of(str(x["task_id"])),
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


def _line_answer(gold: Mapping[str, Any]) -> str:
    """The ``answer`` of an episode whose suite is not available here (from its gold facts)."""
    if not gold.get("answerable", True):
        return json.dumps({"kind": "abstain", "unanswerable_kind": gold.get("unanswerable_kind")})
    kind = "state" if gold.get("writable") else "rows"
    out = {"kind": kind, "sql": gold.get("gold_sql")}
    if kind == "state":
        out["actions"] = list(gold.get("gold_actions") or [])
    return json.dumps(out, ensure_ascii=False, default=str)


# --- features and datasets -----------------------------------------------------------------------
def _chat_feature() -> Any:
    from datasets import List, Value

    return List({"role": Value("string"), "content": Value("string")})


def _tool_chat_feature() -> Any:
    from datasets import List, Value

    s = Value("string")
    call = {"id": s, "type": s, "function": {"name": s, "arguments": s}}
    return List({"role": s, "content": s, "tool_calls": List(call), "tool_call_id": s, "name": s})


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
            "split": s,
            "tools": s,
            "answer": s,
            "data_source": s,
            "env_class": s,
            "reward_model": {"style": s, "ground_truth": s},
            "reward_spec": {"method": s, "ground_truth": s},
            "extra_info": {
                "task_id": s,
                "interaction_kwargs": {"name": s, "task_id": s, "seed": Value("int64")},
            },
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
        "db_file": s,
        "db_sha256": s,
        "messages": _tool_chat_feature(),
        "messages_text": _chat_feature(),
        "tools": s,
        "answer": s,
        "split": s,
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
    parquet: Path | None  # the train split's Parquet file
    card: Path
    splits: dict[str, int] = field(default_factory=dict)  # rows per split
    parquet_files: dict[str, Path] = field(default_factory=dict)


def split_dataset(ds: Any) -> Any:
    """``ds`` (with a ``split`` column) as a ``DatasetDict`` of ``train`` and ``test``; a split
    no row falls in is left out (``datasets`` cannot load an empty saved split back), so a
    small suite may export one split only."""
    from datasets import DatasetDict

    col = ds["split"]
    parts = {sp: [i for i, v in enumerate(col) if v == sp] for sp in SPLITS}
    if not any(parts.values()):
        return DatasetDict({"train": ds})
    return DatasetDict({sp: ds.select(idx) for sp, idx in parts.items() if idx})


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
    if dest.exists() and not dest.is_dir():
        raise ValueError(f"{dest} exists and is not a folder: choose a new --out folder")
    if dest.exists() and any(dest.iterdir()):
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
    dd = split_dataset(ds)
    dd.save_to_disk(str(dest))
    files: dict[str, Path] = {}
    if parquet:
        for sp, part in dd.items():
            files[sp] = dest / PARQUET_FILES[sp]
            files[sp].parent.mkdir(parents=True, exist_ok=True)
            part.to_parquet(str(files[sp]))
    card = dest / "README.md"
    card.write_text(
        dataset_card(kind, dd, meta, parquet=bool(files), out=str(dest)), encoding="utf-8"
    )
    return ExportResult(
        kind,
        dest,
        len(ds),
        files.get("train"),
        card,
        {sp: len(part) for sp, part in dd.items()},
        files,
    )
