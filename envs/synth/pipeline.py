"""``synthesize(config)``: SOURCEs -> lake database + ``tasks.jsonl`` + ``SUITE.md``.

Contract
- Steps: :func:`~.ingest.ingest` -> :func:`~.profile.profile_lake` -> :func:`~.discover.discover`
  (LLM-rescored with ``--llm``) -> :func:`~.withhold.withhold` (columns dropped from the
  suite's copy of the data for column-related requests to ask; ``--withhold N``) ->
  answerable drafts (offline templates, or the LLM loop) -> the layers (clarification,
  unanswerable, writes) -> mixture, de-duplication, numbering -> ``out/tasks.jsonl`` beside
  ``out/lake.sqlite`` (task ``db`` = ``lake.sqlite``, relative to the task file, so
  ``clarisql eval --suite out/tasks.jsonl`` works) and ``out/SUITE.md``.
- ``config.tasks`` is the number of tasks in the suite. The mixture (:data:`DEFAULT_MIXTURE`,
  TrustSQL-like: half the suite unanswerable) is split by largest remainders; a category the
  data cannot fill is topped up with well-specified tasks and the shortfall is stated in
  SUITE.md (and in :class:`SynthResult`). Fewer than ``tasks`` are written only when even the
  well-specified drafts run out; that is stated too.
- Deterministic: each stage draws from its own ``random.Random(f"{seed}:{stage}")``; nothing
  time- or machine-dependent enters ``tasks.jsonl`` (timings go to SUITE.md), so the same
  SOURCEs, seed and options give a byte-identical file offline.
- Parallel: with more than one worker, the offline drafting and the unanswerable and write
  layers run in forked processes where forking is safe (:class:`_Forked`,
  :mod:`~clarisql.envs.synth.forked`), beside the clarify layer; the same bytes.
- Minimal pairs: up to half the well-specified share are the answerable twins
  (:mod:`~.layers.twins`) of the unanswerable column kinds and value-unclear reads chosen,
  taken in turn with drafted and free-text reads.
- Utterances are unique in the suite (whitespace- and case-insensitive).
- With ``--llm``, every task of every category (the drafts' and every layer's) goes through
  OrQA's question writer and reviewer (:mod:`.llm_review`) before it is taken: a rejected or
  never-accepted task is dropped and the next candidate of its category taken instead (the
  layers make spare candidates, and are asked again for twice as many, :data:`REFILLS` times,
  when the reviewer drops more), and SUITE.md counts what the reviewer did per category.
- Bad input raises :class:`~clarisql.envs.synth.SynthError` (one line); so does an LLM
  endpoint that does not answer, at the start or mid-run (the reply cache keeps what was done).
"""

from __future__ import annotations

import json
import os
import random
import threading
import time
from collections import Counter
from collections.abc import Callable, Sequence
from concurrent.futures import ThreadPoolExecutor
from functools import partial
from pathlib import Path
from typing import Any

import apsw

from clarisql.envs.sandbox.database import get_image
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
from clarisql.envs.synth.forked import Forked
from clarisql.envs.synth.ingest import ingest
from clarisql.envs.synth.layers.common import state_tolerances
from clarisql.envs.synth.layers.freetext import freetext_tasks
from clarisql.envs.synth.layers.twins import twin_tasks
from clarisql.envs.synth.llm import LLMError
from clarisql.envs.synth.names import clear_descriptions, set_descriptions, table_prefixed
from clarisql.envs.synth.profile import profile_lake
from clarisql.envs.synth.types import Draft, LakeProfile, SynthError
from clarisql.envs.synth.verify import Verifier
from clarisql.envs.synth.withhold import default_count, withhold
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
    if "source" in d.meta:  # (the generation time goes to SUITE.md: no clock in tasks.jsonl)
        meta["source"] = d.meta["source"]
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


def _gold_key(task: Task) -> str | None:
    """What makes two tasks the same exercise: the category and the gold (the golden action
    list, else the gold SQL); ``None`` for a task without one (an abstention)."""
    gold = json.dumps(task.gold_actions) if task.gold_actions else task.gold_sql
    return f"{task.category}\x00{' '.join(gold.split())}" if gold else None


def _round_robin(*lists: list[Task]) -> list[Task]:
    """One from each list in turn (``a[0], b[0], c[0], a[1], ...``), then the longer ones' rest."""
    out: list[Task] = []
    for i in range(max(map(len, lists), default=0)):
        for xs in lists:
            out += xs[i : i + 1]
    return out


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
    if config.withhold is not None and config.withhold < 0:
        raise SynthError(f"--withhold must be at least 0, got {config.withhold}")
    out = Path(config.out)
    timings: dict[str, float] = {}
    notes: list[str] = []
    t0 = time.perf_counter()
    client = None
    if config.llm:  # (before the work: a dead endpoint fails in seconds, not after ingest)
        from clarisql.envs.synth.llm import connect

        client = connect(config)
    db_path = ingest(config.sources, out, workers=_workers(config))
    timings["ingest"] = time.perf_counter() - t0
    lake, stats, timings["profile"], timings["discover"] = _profile(config, db_path)
    # ``EntStageName`` of ``Entertainers`` is asked as "stage name" (the dictionary, if any,
    # still comes first)
    auto = table_prefixed({t.name: [c.name for c in t.columns] for t in lake.tables})
    set_descriptions({k: v for k, v in auto.items() if k not in described})
    set_descriptions(described)
    t = time.perf_counter()  # (after the descriptions: a withheld column is asked in their words)
    wanted = split_counts(config.tasks, config.mixture)
    k = default_count(wanted["unanswerable"]) if config.withhold is None else config.withhold
    lake = withhold(lake, db_path, k, config.seed)
    timings["withhold"] = time.perf_counter() - t
    dictionary = out / (db_path.stem + ".description.md")
    if described and dictionary_text(lake, described):
        dictionary.write_text(dictionary_text(lake, described) + "\n", encoding="utf-8")
    elif dictionary.exists():
        dictionary.unlink()
    if client is not None:
        try:
            lake = client.rescore(lake, config.llm_threshold)
        except LLMError as e:
            raise _llm_failed(e, client) from None
    v = Verifier(
        db_path,
        config.time_budget_s,
        config.max_rows,
        workers=_workers(config),
        step_budget=config.step_budget,
    )
    t = time.perf_counter()
    report = DraftReport()
    # drafts are only verified where they can be kept: the well-specified share, the third of
    # the clarify share that layers.clarify derives from drafts, and a margin for duplicates
    # (write and unanswerable tasks use none; `more` tops up if the suite still falls short)
    pool = wanted["well-specified"] + wanted["clarify"] // 3 + 20
    runs = _LayerRuns(config, lake, v, wanted, timings, reviewed=client is not None)
    pending = _PendingDrafts()
    # with worker threads, the offline drafting and the layers that need no drafts run in
    # forked processes where that is safe (forked before any thread starts: see _Forked)
    child = _Forked.start(v, _offline_drafts, config, lake, v, pool) if client is None else None
    try:
        runs.start(DRAFT_FREE_LAYERS, [], fork=client is None)
        if runs.pool is not None:  # the clarify layer's recipes run beside the drafting
            runs.start(("clarify",), pending)
        got = child.result() if child is not None else None
        if got is not None:
            (drafts, child_report), results = got
            vars(report).update(vars(child_report))
            v.remember(results)
        else:  # (no process, or it failed: the same drafts, made here)
            drafts = _drafts(config, lake, v, pool, report, client, notes)
    except BaseException:
        pending.give([])  # (a layer waiting for the drafts finishes, so the pool can close)
        runs.close()
        v.close()
        raise
    finally:
        if child is not None:
            child.close()
    pending.give(drafts)
    timings["drafts"] = time.perf_counter() - t

    def more(k: int) -> list[Draft]:
        taken = {" ".join(d.question.split()).casefold() for d in drafts}
        rng = random.Random(f"{config.seed}:more-drafts")
        return make_drafts(lake, v, rng, k, report, exclude=taken)

    reviewer = None
    if client is not None:
        from clarisql.envs.synth.llm_review import QuestionReviewer

        reviewer = QuestionReviewer(
            client, lake, v, max_rounds=client.max_reviews, workers=config.llm_workers
        )
    try:
        tasks, made, shortfalls = _assemble(
            config, lake, v, drafts, wanted, timings, more, runs, reviewer
        )
        state_tolerances(tasks, v)  # each read task states the rounding it accepts
    except LLMError as e:
        raise _llm_failed(e, client) from None
    finally:
        runs.close()
        v.close()
    if reviewer is not None:
        notes += reviewer.stats.lines()
        u = client.usage
        notes.append(
            f"LLM {config.llm}: {u.requests} requests, {u.cache_hits} cache hits, "
            f"{u.prompt_tokens} prompt + {u.completion_tokens} completion tokens"
        )
    if report.missing:
        for cell, why in sorted(report.missing.items()):
            shortfalls.setdefault(f"answerable {cell}", why)
    unusable = [tp.name for tp in lake.tables if not tp.usable()]
    if unusable:
        shortfalls["tables left out"] = (
            f"{', '.join(unusable)}: every column is low-information (OrQA's rule)"
        )
    from clarisql.envs.synth.names import table_speakable

    unsaid = [tp.name for tp in lake.tables if tp.usable() and not table_speakable(tp.name)]
    if unsaid:
        shortfalls["tables not asked about"] = (
            f"{', '.join(unsaid)}: the name cannot be put in English words (another language?); "
            "--describe FILE can give them descriptions to use"
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


def _llm_failed(e: LLMError, client: Any) -> SynthError:
    cache = getattr(client, "cache_dir", None)
    where = f"; the replies so far are cached in {cache}: run again to resume" if cache else ""
    return SynthError(f"{e}{where}")


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
            raise _llm_failed(e, client) from None
        times = [d.meta["generation_time_s"] for d in drafts if "generation_time_s" in d.meta]
        if times:
            notes.append(
                f"LLM coder: {len(times)} drafts, {sum(times) / len(times):.2f} s each on average"
            )
        if len(drafts) < n:  # (their questions go through the writer and reviewer later)
            extra = make_drafts(lake, v, rng, n - len(drafts), report)
            if extra:
                notes.append(
                    f"the LLM coder gave {len(drafts)} verified drafts; {len(extra)} template "
                    "drafts filled the rest, their questions rewritten and reviewed"
                )
            seen = {_norm(d.question) for d in drafts}
            drafts += [d for d in extra if _norm(d.question) not in seen]
        return drafts
    return make_drafts(lake, v, rng, n, report)


class _Forked:
    """A stage (the offline drafting, a layer that needs no drafts) in a forked child
    (:class:`~.forked.Forked`), beside the layers' threads of this process.

    The child inherits the lake, the descriptions and the options as they are at the fork, runs
    the stage with its own SQLite connections (a verifier's pooled connections stay the
    parent's), and sends back the result and its verifier's cached results
    (:meth:`~.verify.Verifier.remember`: later stages re-run the drafts' and layers' queries).
    A result does not depend on the process that computed it (each stage draws from its own
    rng; a statement's answer depends on the database only), so the suite is byte-identical;
    where forking is unsafe, with one worker, or if the child fails (:meth:`result` gives
    ``None``), the caller runs the stage in this process instead.
    """

    def __init__(self, child: Forked):
        self.child = child

    @classmethod
    def start(
        cls, v: Verifier, fn: Callable[..., Any], *args: Any, nice: int = 0
    ) -> _Forked | None:
        """The child running ``fn(*args)``, ``nice`` steps below this process's priority."""
        if v.workers < 2:
            return None
        child = Forked.start(_with_verifier, v, fn, args, nice)
        return cls(child) if child is not None else None

    def result(self) -> tuple[Any, dict] | None:
        """``(fn's result, the child verifier's results)``; ``None`` if the child failed."""
        got = self.child.result()
        return got[0] if got is not None else None

    def close(self) -> None:
        self.child.close()


def _with_verifier(
    v: Verifier, fn: Callable[..., Any], args: tuple, nice: int = 0
) -> tuple[Any, dict]:
    """In a forked child (:class:`_Forked`): ``fn(*args)`` and ``v``'s cached results."""
    if nice:  # (before any thread of the child starts: they inherit it)
        try:
            os.nice(nice)
        except OSError:
            pass
    v.image = get_image(v.db_path)  # (the parent's pooled connections stay the parent's)
    # (no v.close(): it would wait for statements drawn ahead that nobody reads; the child
    # exits once the result is sent, and the parent reaps it)
    return fn(*args), v.results()


def _offline_drafts(
    config: SynthConfig, lake: LakeProfile, v: Verifier, n: int
) -> tuple[list[Draft], DraftReport]:
    """The offline drafts and their report, as :func:`_drafts` makes them without an LLM."""
    report = DraftReport()
    return make_drafts(lake, v, random.Random(f"{config.seed}:drafts"), n, report), report


class _PendingDrafts(Sequence):
    """The verified drafts before they exist: a layer started beside the drafting reads them
    only when it needs them, and waits until :meth:`give` hands over the whole list (so what
    it reads never depends on how far the drafting got: the same bytes on any machine)."""

    def __init__(self) -> None:
        self._ready = threading.Event()
        self._drafts: list[Draft] = []

    def give(self, drafts: list[Draft]) -> None:
        self._drafts = list(drafts)
        self._ready.set()

    def _get(self) -> list[Draft]:
        self._ready.wait()
        return self._drafts

    def __getitem__(self, i):  # type: ignore[override]
        return self._get()[i]

    def __len__(self) -> int:
        return len(self._get())

    def __iter__(self):
        return iter(self._get())


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


def _timed(*args: Any) -> tuple[list[Task], float]:
    """:func:`_run_layer`'s tasks and time (``args`` without ``timings``; in a forked child,
    :class:`_Forked`)."""
    timings: dict[str, float] = {}
    got = _run_layer(*args, timings)
    return got, timings[args[5]]


def spare(n: int) -> int:
    """Candidates asked of a layer for ``n`` tasks when the LLM reviewer may drop some."""
    return n + n // 4 + 4 if n > 0 else 0


#: How many times a layer is asked for twice as many candidates when the LLM reviewer dropped
#: more of its tasks than the spares cover.
REFILLS = 2
#: Priority steps below the pipeline's at which the layers that take no drafts run when forked:
#: the drafting is the longest chain (the clarify layer and the suite wait for it), so where the
#: cores are short it gets them first, and these layers take what is left (their results are
#: needed only at the end). Priorities move time only, never a result.
LAYER_NICE = 5
#: Layers that take no drafts (they accept the argument for the shared signature): with worker
#: threads they start beside the drafting, and so does the clarify layer, which reads the drafts
#: (:class:`_PendingDrafts`) only after its recipes.
DRAFT_FREE_LAYERS = ("unanswerable", "write")


class _LayerRuns:
    """The clarify, unanswerable and write layers' tasks (with spares when ``reviewed``) and
    their shortfalls. The layers are independent (own rng each; the verifier's cache is
    transparent): with worker threads they run side by side, and beside the drafting, their
    results taken in a fixed order; on one thread one after the other."""

    NAMES = ("clarify", "unanswerable", "write")

    def __init__(
        self,
        config: SynthConfig,
        lake: LakeProfile,
        v: Verifier,
        wanted: dict[str, int],
        timings: dict[str, float],
        reviewed: bool,
    ):
        self.config, self.lake, self.v = config, lake, v
        self.wanted, self.timings, self.reviewed = wanted, timings, reviewed
        self.layers = _layers()
        self.shortfalls: dict[str, str] = {}
        self.done: dict[str, list[Task]] = {}
        self.futures: dict[str, Any] = {}
        self.forked: dict[str, tuple[_Forked, Callable[[], list[Task]]]] = {}
        self.pool = (
            ThreadPoolExecutor(len(self.NAMES), thread_name_prefix="synth-layer")
            if v.workers > 1
            else None
        )
        for name in self.NAMES:  # (keeps the stages' order in SUITE.md)
            if wanted[name] > 0 and self.layers[name] is not None:
                timings[name] = 0.0

    def start(self, names: tuple[str, ...], drafts: list[Draft], fork: bool = False) -> None:
        """Start the layers ``names``; with ``fork``, each in a forked process where that is
        safe (:class:`_Forked`; call it before any thread of this process starts)."""
        for name in names:
            fn, n = self.layers[name], self.wanted[name]
            if self.reviewed:
                n = spare(n)
            if n > 0 and fn is None:
                self.shortfalls[name] = "this layer is not available in this build"
            elif n > 0:
                args = (fn, self.lake, drafts, self.v, self.config.seed, name, n)
                run = partial(_run_layer, *args, self.timings)
                child = _Forked.start(self.v, _timed, *args, nice=LAYER_NICE) if fork else None
                if child is not None:
                    self.forked[name] = (child, run)
                elif self.pool is not None:
                    self.futures[name] = self.pool.submit(run)
                else:
                    self.done[name] = run()

    def results(self) -> tuple[dict[str, list[Task]], dict[str, str]]:
        for name, (child, run) in self.forked.items():
            got = child.result()
            if got is None:  # (the child failed: the same tasks, made here)
                self.done[name] = run()
                continue
            (self.done[name], self.timings[name]), results = got
            self.v.remember(results)
        for name, f in self.futures.items():
            self.done[name] = f.result()
        self.close()
        by_layer: dict[str, list[Task]] = {}
        for name in self.NAMES:
            got = by_layer[name] = self.done.get(name, [])
            n = self.wanted[name]
            if n > 0 and name not in self.shortfalls and len(got) < n and not self.reviewed:
                self.shortfalls[name] = (
                    f"{len(got)} of {n}: the data allowed no more (see the layer notes)"
                )
        return by_layer, self.shortfalls

    def rerun(self, name: str, n: int, drafts: list[Draft]) -> list[Task]:
        """Layer ``name`` again for ``n`` candidates, on this thread (a refill)."""
        fn = self.layers[name]
        if fn is None or n <= 0:
            return []
        spent: dict[str, float] = {}
        got = _run_layer(fn, self.lake, drafts, self.v, self.config.seed, name, n, spent)
        self.timings[name] = self.timings.get(name, 0.0) + spent[name]
        return got

    def close(self) -> None:
        for child, _ in self.forked.values():
            child.close()
        if self.pool is not None:
            self.pool.shutdown(wait=True, cancel_futures=True)


def _keep_unanswerable_share(
    chosen: list[Task],
    made: dict[str, int],
    shortfalls: dict[str, str],
    wanted: dict[str, int],
    n: int,
) -> None:
    """TrustSQL's share of unanswerable requests (half, by default) holds in the suite made,
    not only in the suite asked for: where the answerable categories fell short (a lake mostly
    named in another language), the unanswerable tasks beyond their share of what was made are
    left out, evenly over their kinds (round-robin, each kind in its order)."""
    n_un = wanted["unanswerable"]
    if not 0 < n_un < n:
        return
    un = [t for t in chosen if not t.answerable]
    cap = (len(chosen) - len(un)) * n_un // (n - n_un)
    if len(un) <= cap:
        return
    by_kind: dict[str, list[Task]] = {}
    for t in un:
        by_kind.setdefault(t.category, []).append(t)
    keep: set[int] = set()
    queues = list(by_kind.values())
    while len(keep) < cap:
        for q in queues:
            if q and len(keep) < cap:
                keep.add(id(q.pop(0)))
    chosen[:] = [t for t in chosen if t.answerable or id(t) in keep]
    shortfalls["unanswerable"] = (
        f"{cap} of {n_un}: no more than the mixture's share of the {len(chosen)} tasks made "
        f"({len(un) - cap} left out)"
    )
    made["unanswerable"] = cap


def _assemble(
    config: SynthConfig,
    lake: LakeProfile,
    v: Verifier,
    drafts: list[Draft],
    wanted: dict[str, int],
    timings: dict[str, float],
    more: Callable[[int], list[Draft]],
    runs: _LayerRuns,
    reviewer: Any = None,
) -> tuple[list[Task], dict[str, int], dict[str, str]]:
    db = db_name = Path(lake.db_path).name
    reviewed = reviewer is not None
    if "clarify" not in runs.futures:
        runs.start(("clarify",), drafts)
    by_layer, shortfalls = runs.results()
    # SUQL free-text tasks (ANSWER/SUMMARY) take up to half the well-specified and clarify shares
    n_answer, n_clarify = wanted["well-specified"] // 2, wanted["clarify"] // 2
    if reviewed:
        n_answer, n_clarify = spare(n_answer), spare(n_clarify)
    free = freetext_tasks(lake, v, random.Random(f"{config.seed}:freetext"), n_answer, n_clarify)
    shortfalls.update(free.notes)
    by_layer["clarify"] = free.clarify + by_layer["clarify"]
    seen: set[str] = set()
    golds: set[str] = set()  # a second task with the same gold is a near-duplicate (_gold_key)
    chosen: list[Task] = []

    def new_gold(task: Task) -> bool:
        if "pair" in task.metadata:  # a twin repeats its partner's frame on purpose
            return True
        g = _gold_key(task)
        if g is not None and g in golds:
            return False
        if g is not None:
            golds.add(g)
        return True

    drafts_seen: set[str] = set()
    t_review = time.perf_counter()

    def take(ts: list[Task], limit: int) -> int:
        if reviewer is None:
            k = 0
            for task in ts:
                if k >= limit:
                    break
                key = _norm(task.utterance)
                if key in seen or not new_gold(task):
                    continue
                seen.add(key)
                task.db = db
                chosen.append(task)
                k += 1
            return k
        # every candidate goes through the writer and the reviewer; a dropped one is replaced
        # by the next, in batches of exactly as many as are still missing (the same batches,
        # hence the same suite, with any number of threads)
        k, i = 0, 0
        while k < limit and i < len(ts):
            batch: list[Task] = []
            while i < len(ts) and len(batch) < limit - k:
                task = ts[i]
                i += 1
                key = _norm(task.utterance)
                if key in drafts_seen or key in seen:
                    continue
                drafts_seen.add(key)
                if task.metadata.get("source") == "llm":  # the coder's loop wrote and reviewed it
                    if not new_gold(task):
                        continue
                    task.db = db
                    seen.add(key)
                    chosen.append(task)
                    k += 1
                    continue
                batch.append(task)
            for task in reviewer.review_many(batch):
                if task is None or k >= limit:
                    continue
                key = _norm(task.utterance)
                if key in seen or not new_gold(task):
                    continue
                seen.add(key)
                task.db = db
                chosen.append(task)
                k += 1
        return k

    made = {
        name: take(by_layer[name], wanted[name]) for name in ("clarify", "unanswerable", "write")
    }
    if reviewed:  # the reviewer dropped more than the spares: ask the layer for more, twice
        for name in ("clarify", "unanswerable", "write"):
            ask = spare(wanted[name])
            for _ in range(REFILLS):
                if made[name] >= wanted[name]:
                    break
                ask *= 2
                fresh = [
                    t
                    for t in runs.rerun(name, ask, drafts)
                    if _norm(t.utterance) not in drafts_seen and _norm(t.utterance) not in seen
                ]
                if not fresh:
                    break
                made[name] += take(fresh, wanted[name] - made[name])
    want_ws = config.tasks - sum(made.values())
    # minimal pairs (layers.twins): up to half the well-specified share are the answerable twins
    # of tasks the schema or the data decides, taken in turn with drafted and free-text reads
    twins = twin_tasks(chosen, v, want_ws // 2, set(seen))
    ws = _round_robin(twins, [draft_task(d, db_name) for d in drafts], free.answer)
    made["well-specified"] = take(ws, want_ws)
    if made["well-specified"] < want_ws:
        extra = more(want_ws - made["well-specified"] + 10)
        made["well-specified"] += take(
            [draft_task(d, db_name) for d in extra], want_ws - made["well-specified"]
        )
    _keep_unanswerable_share(chosen, made, shortfalls, wanted, config.tasks)
    # a twin the suite did not take (its wording already in, or no room left) leaves its
    # partner without one: the pair marker goes too, so every marked pair is whole
    paired = Counter(t.metadata["pair"] for t in chosen if "pair" in t.metadata)
    for task in chosen:
        if "pair" in task.metadata and paired[task.metadata["pair"]] < 2:
            del task.metadata["pair"]
    if reviewed:
        timings["llm review"] = time.perf_counter() - t_review
        for name in ("clarify", "unanswerable", "write"):
            if made[name] < wanted[name]:
                shortfalls[name] = (
                    f"{made[name]} of {wanted[name]}: the data allowed no more candidates the "
                    "reviewer accepted (see the LLM review counts in the notes)"
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
