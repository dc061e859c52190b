"""``synthesize(config)``: SOURCEs -> lake database + ``tasks.jsonl`` + ``SUITE.md``.

Contract
- Steps: :func:`~.ingest.ingest` -> :func:`~.profile.profile_lake` -> :func:`~.discover.discover`
  (LLM-rescored with ``--llm``) -> answerable drafts (offline templates, or the LLM loop) ->
  the layers (clarification, unanswerable, writes) -> mixture, de-duplication, numbering ->
  ``out/tasks.jsonl`` beside ``out/lake.sqlite`` (task ``db`` = ``lake.sqlite``, relative to the
  task file, so ``clarisql eval --suite out/tasks.jsonl`` works) and ``out/SUITE.md``.
- ``config.tasks`` is the number of tasks in the suite. The mixture (:data:`DEFAULT_MIXTURE`,
  TrustSQL-like: half the suite unanswerable) is split by largest remainders; a category the
  data cannot fill is topped up with well-specified tasks and the shortfall is stated in
  SUITE.md (and in :class:`SynthResult`). Fewer than ``tasks`` are written only when even the
  well-specified drafts run out; that is stated too.
- Deterministic: each stage draws from its own ``random.Random(f"{seed}:{stage}")``; nothing
  time- or machine-dependent enters ``tasks.jsonl`` (timings go to SUITE.md), so the same
  SOURCEs, seed and options give a byte-identical file offline.
- Utterances are unique in the suite (whitespace- and case-insensitive).
- Bad input raises :class:`~clarisql.envs.synth.SynthError` (one line); an unreachable LLM
  endpoint falls back to the offline path and says so (``SynthResult.notes``, SUITE.md).
"""

from __future__ import annotations

import os
import random
import time
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from functools import partial
from pathlib import Path
from typing import Any

import apsw

from clarisql.envs.synth.answerable import DraftReport, make_drafts
from clarisql.envs.synth.config import (
    CARD_FILE,
    DEFAULT_MIXTURE,
    MIXTURE_ALIASES,
    TASKS_FILE,
    SynthConfig,
    SynthResult,
)
from clarisql.envs.synth.describe import dictionary_text, found_descriptions, load_descriptions
from clarisql.envs.synth.discover import DiscoveryStats, discover, index_lake
from clarisql.envs.synth.ingest import ingest
from clarisql.envs.synth.layers.common import state_tolerances
from clarisql.envs.synth.layers.freetext import freetext_tasks
from clarisql.envs.synth.llm import LLMError
from clarisql.envs.synth.names import clear_descriptions, set_descriptions, table_prefixed
from clarisql.envs.synth.profile import profile_lake
from clarisql.envs.synth.types import Draft, LakeProfile, SynthError
from clarisql.envs.synth.verify import Verifier
from clarisql.envs.tasks import Task, save_tasks


def parse_mixture(text: str) -> dict[str, float]:
    """``"well-specified=0.2,clarify=0.2,write=0.1,unanswerable=0.5"`` -> a mixture dict."""
    out: dict[str, float] = {}
    for part in text.split(","):
        if not part.strip():
            continue
        key, sep, val = part.partition("=")
        key = MIXTURE_ALIASES.get(key.strip().lower(), key.strip().lower())
        if not sep or key not in DEFAULT_MIXTURE:
            raise SynthError(
                f"--mixture {text!r}: expected NAME=SHARE,... with NAME in "
                f"{', '.join(DEFAULT_MIXTURE)}"
            )
        try:
            share = float(val)
        except ValueError:
            raise SynthError(f"--mixture {text!r}: {val!r} is not a number") from None
        if share < 0:
            raise SynthError(f"--mixture {text!r}: shares must be >= 0")
        out[key] = share
    return out


def split_counts(n: int, mixture: dict[str, float]) -> dict[str, int]:
    """Integer counts per category summing to ``n`` (largest remainders, ties by name)."""
    shares = {k: max(0.0, float(mixture.get(k, 0.0))) for k in DEFAULT_MIXTURE}
    total = sum(shares.values())
    if total <= 0:
        raise SynthError("the mixture gives every category a share of 0")
    raw = {k: n * s / total for k, s in shares.items()}
    counts = {k: int(v) for k, v in raw.items()}
    rest = n - sum(counts.values())
    for k in sorted(raw, key=lambda k: (-(raw[k] - counts[k]), k))[:rest]:
        counts[k] += 1
    return counts


def draft_task(d: Draft, db: str) -> Task:
    """A well-specified read task from a verified draft."""
    meta: dict[str, Any] = {
        "naive_sql": d.sql,
        "layer": "answerable",
        "difficulty": d.difficulty,
        "qtype": d.qtype,
        "tables": list(d.tables),
        "columns": list(d.columns),
        "operations": list(d.operations),
        "review_count": d.meta.get("review_count", 0),
        "tokens": d.meta.get("tokens", 0),
        "rejected": list(d.meta.get("rejected", [])),
    }
    for k in ("generation_time_s", "source"):
        if k in d.meta:
            meta[k] = d.meta[k]
    return Task(
        id="synth-draft",
        db=db,
        utterance=d.question,
        category="well-specified",
        gold_sql=d.sql,
        gold_ordered=d.ordered,
        metadata=meta,
    )


def _layers() -> dict[str, Callable[..., list[Task]] | None]:
    """The layer functions of :mod:`clarisql.envs.synth.layers` (``None`` where absent)."""
    try:
        from clarisql.envs.synth import layers
    except ImportError:
        return {"clarify": None, "unanswerable": None, "write": None}
    return {
        "clarify": getattr(layers, "clarify_tasks", None),
        "unanswerable": getattr(layers, "unanswerable_tasks", None),
        "write": getattr(layers, "write_tasks", None),
    }


def _coverage(lake: LakeProfile, tasks: list[Task]) -> list[str]:
    """The layers' lines on kinds the suite lacks and why (empty without the layers)."""
    try:
        from clarisql.envs.synth.layers import coverage_notes
    except ImportError:
        return []
    return list(coverage_notes(lake, tasks))


def _norm(text: str) -> str:
    return " ".join(text.split()).casefold()


def synthesize(config: SynthConfig) -> SynthResult:
    """Run the pipeline (see the module docstring); writes into ``config.out``."""
    # a data dictionary found beside the sources, then --describe FILE over it
    described, _ = found_descriptions(config.sources)
    if config.describe:
        described.update(load_descriptions(config.describe))
    set_descriptions(described)
    try:
        return _synthesize(config, described)
    finally:
        clear_descriptions()


def _synthesize(config: SynthConfig, described: dict[str, str]) -> SynthResult:
    if config.tasks < 1:
        raise SynthError(f"--tasks must be at least 1, got {config.tasks}")
    if config.workers is not None and config.workers < 1:
        raise SynthError(f"--workers must be at least 1, got {config.workers}")
    out = Path(config.out)
    timings: dict[str, float] = {}
    notes: list[str] = []
    t0 = time.perf_counter()
    db_path = ingest(config.sources, out)
    timings["ingest"] = time.perf_counter() - t0
    lake, stats, timings["profile"], timings["discover"] = _profile(config, db_path)
    # ``EntStageName`` of ``Entertainers`` is asked as "stage name" (the dictionary, if any,
    # still comes first)
    auto = table_prefixed({t.name: [c.name for c in t.columns] for t in lake.tables})
    set_descriptions({k: v for k, v in auto.items() if k not in described})
    set_descriptions(described)
    dictionary = out / (db_path.stem + ".description.md")
    if described and dictionary_text(lake, described):
        dictionary.write_text(dictionary_text(lake, described) + "\n", encoding="utf-8")
    elif dictionary.exists():
        dictionary.unlink()
    client = None
    if config.llm:
        from clarisql.envs.synth.llm import connect

        client, note = connect(config)
        if note:
            notes.append(note)
        if client is not None:
            try:
                lake = client.rescore(lake, config.llm_threshold)
            except LLMError as e:
                notes.append(f"{e}; offline pair scores kept, drafts made offline")
                client = None
    v = Verifier(
        db_path,
        config.time_budget_s,
        config.max_rows,
        workers=_workers(config),
        step_budget=config.step_budget,
    )
    wanted = split_counts(config.tasks, config.mixture)
    t = time.perf_counter()
    report = DraftReport()
    # drafts are only verified where they can be kept: the well-specified share, the third of
    # the clarify share that layers.clarify derives from drafts, and a margin for duplicates
    # (write and unanswerable tasks use none; `more` tops up if the suite still falls short)
    pool = wanted["well-specified"] + wanted["clarify"] // 3 + 20
    drafts = _drafts(config, lake, v, pool, report, client, notes)
    timings["drafts"] = time.perf_counter() - t

    def more(k: int) -> list[Draft]:
        taken = {" ".join(d.question.split()).casefold() for d in drafts}
        rng = random.Random(f"{config.seed}:more-drafts")
        return make_drafts(lake, v, rng, k, report, exclude=taken)

    tasks, made, shortfalls = _assemble(config, lake, v, drafts, wanted, timings, more)
    state_tolerances(tasks, v)  # each read task states the rounding it accepts
    v.close()
    if report.missing:
        for cell, why in sorted(report.missing.items()):
            shortfalls.setdefault(f"answerable {cell}", why)
    unusable = [tp.name for tp in lake.tables if not tp.usable()]
    if unusable:
        shortfalls["tables left out"] = (
            f"{', '.join(unusable)}: every column is low-information (OrQA's rule)"
        )
    for line in _coverage(lake, tasks):
        kind, _, why = line.partition(": ")
        shortfalls.setdefault(kind, why)
    t = time.perf_counter()
    tasks_path = save_tasks(tasks, out / TASKS_FILE)
    from clarisql.envs.synth.suite_card import write_card

    timings["total"] = time.perf_counter() - t0
    result = SynthResult(
        tasks_path,
        db_path,
        out / CARD_FILE,
        tasks,
        lake,
        wanted,
        made,
        shortfalls,
        notes,
        timings,
        report,
        stats,
    )
    write_card(result, config)
    return result


def _workers(config: SynthConfig) -> int:
    if config.workers is not None:
        return config.workers
    return max(1, min(4, os.cpu_count() or 1))


def _profile(
    config: SynthConfig, db_path: Path
) -> tuple[LakeProfile, DiscoveryStats, float, float]:
    t = time.perf_counter()
    try:
        lake = profile_lake(db_path, workers=_workers(config))
    except apsw.Error as e:
        raise SynthError(f"cannot read the lake database {db_path}: {e}") from None
    t_profile = time.perf_counter() - t
    if not any(tp.usable() for tp in lake.tables):
        names = ", ".join(tp.name for tp in lake.tables)
        raise SynthError(
            f"no usable column in table(s) {names}: every column is low-information "
            "(fewer than 10 distinct values in under 30 rows, or more than 80% missing)"
        )
    stats = DiscoveryStats()
    t = time.perf_counter()
    lake = discover(lake, exact_limit=config.exact_limit, stats=stats)
    index_lake(lake)
    return lake, stats, t_profile, time.perf_counter() - t


def _drafts(
    config: SynthConfig,
    lake: LakeProfile,
    v: Verifier,
    n: int,
    report: DraftReport,
    client: Any,
    notes: list[str],
) -> list[Draft]:
    rng = random.Random(f"{config.seed}:drafts")
    if client is not None:
        try:
            drafts = client.drafts(lake, v, rng, n)
        except LLMError as e:
            notes.append(f"{e}; drafts made offline instead")
            return make_drafts(lake, v, rng, n, report)
        u = client.usage
        notes.append(
            f"LLM {config.llm}: {u.requests} requests, {u.cache_hits} cache hits, "
            f"{u.prompt_tokens} prompt + {u.completion_tokens} completion tokens"
        )
        if len(drafts) < n:
            extra = make_drafts(lake, v, rng, n - len(drafts), report)
            if extra:
                notes.append(
                    f"the LLM gave {len(drafts)} verified drafts; {len(extra)} offline ones "
                    "filled the rest"
                )
            seen = {_norm(d.question) for d in drafts}
            drafts += [d for d in extra if _norm(d.question) not in seen]
        return drafts
    return make_drafts(lake, v, rng, n, report)


def _run_layer(
    fn: Callable[..., list[Task]],
    lake: LakeProfile,
    drafts: list[Draft],
    v: Verifier,
    seed: int,
    name: str,
    n: int,
    timings: dict[str, float],
) -> list[Task]:
    t = time.perf_counter()
    got = list(fn(lake, drafts, v, random.Random(f"{seed}:{name}"), n))[:n]
    timings[name] = time.perf_counter() - t
    return got


def _run_layers(
    config: SynthConfig,
    lake: LakeProfile,
    v: Verifier,
    drafts: list[Draft],
    wanted: dict[str, int],
    timings: dict[str, float],
) -> tuple[dict[str, list[Task]], dict[str, str]]:
    """The clarify, unanswerable and write layers' tasks, and their shortfalls."""
    layers = _layers()
    shortfalls: dict[str, str] = {}
    by_layer: dict[str, list[Task]] = {}
    runs: dict[str, Callable[[], list[Task]]] = {}
    for name in ("clarify", "unanswerable", "write"):
        fn, n = layers[name], wanted[name]
        by_layer[name] = []
        if n > 0 and fn is None:
            shortfalls[name] = "this layer is not available in this build"
        elif n > 0:
            timings[name] = 0.0  # (keeps the stages' order in SUITE.md)
            runs[name] = partial(_run_layer, fn, lake, drafts, v, config.seed, name, n, timings)
    # the layers are independent (own rng each; the verifier's cache is transparent): with
    # worker threads they run side by side, their results taken in this fixed order
    if v.workers > 1 and len(runs) > 1:
        with ThreadPoolExecutor(len(runs), thread_name_prefix="synth-layer") as ex:
            futures = {name: ex.submit(run) for name, run in runs.items()}
            done = {name: f.result() for name, f in futures.items()}
    else:
        done = {name: run() for name, run in runs.items()}
    for name, got in done.items():
        n = wanted[name]
        by_layer[name] = got
        if len(got) < n:
            shortfalls[name] = f"{len(got)} of {n}: the data allowed no more (see the layer notes)"
    return by_layer, shortfalls


def _assemble(
    config: SynthConfig,
    lake: LakeProfile,
    v: Verifier,
    drafts: list[Draft],
    wanted: dict[str, int],
    timings: dict[str, float],
    more: Callable[[int], list[Draft]],
) -> tuple[list[Task], dict[str, int], dict[str, str]]:
    db = db_name = Path(lake.db_path).name
    by_layer, shortfalls = _run_layers(config, lake, v, drafts, wanted, timings)
    # SUQL free-text tasks (ANSWER/SUMMARY) take up to half the well-specified and clarify shares
    free = freetext_tasks(
        lake,
        v,
        random.Random(f"{config.seed}:freetext"),
        wanted["well-specified"] // 2,
        wanted["clarify"] // 2,
    )
    shortfalls.update(free.notes)
    by_layer["clarify"] = free.clarify + by_layer["clarify"]
    seen: set[str] = set()
    chosen: list[Task] = []

    def take(ts: list[Task], limit: int) -> int:
        k = 0
        for task in ts:
            if k >= limit:
                break
            key = _norm(task.utterance)
            if key in seen:
                continue
            seen.add(key)
            task.db = db
            chosen.append(task)
            k += 1
        return k

    made = {
        name: take(by_layer[name], wanted[name]) for name in ("clarify", "unanswerable", "write")
    }
    want_ws = config.tasks - sum(made.values())
    made["well-specified"] = take(free.answer + [draft_task(d, db_name) for d in drafts], want_ws)
    if made["well-specified"] < want_ws:
        extra = more(want_ws - made["well-specified"] + 10)
        made["well-specified"] += take(
            [draft_task(d, db_name) for d in extra], want_ws - made["well-specified"]
        )
    if made["well-specified"] < want_ws:
        shortfalls["total"] = (
            f"{len(chosen)} of {config.tasks} tasks: the lake gave too few verified drafts"
        )
    elif made["well-specified"] > wanted["well-specified"]:
        extra = made["well-specified"] - wanted["well-specified"]
        shortfalls.setdefault("top-up", f"{extra} well-specified tasks fill the shortfalls above")
    rng = random.Random(f"{config.seed}:order")
    chosen.sort(key=lambda t: (t.category, _norm(t.utterance)))
    rng.shuffle(chosen)
    width = max(4, len(str(len(chosen))))
    for i, task in enumerate(chosen, 1):
        task.id = f"synth/{i:0{width}d}"
    return chosen, made, shortfalls


__all__ = [
    "DEFAULT_MIXTURE",
    "SynthConfig",
    "SynthResult",
    "draft_task",
    "parse_mixture",
    "split_counts",
    "synthesize",
]
