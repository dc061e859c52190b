"""CLI subcommands of the rollout layer: ``eval``, ``view``, ``rescore``, ``ablate``.

``add_commands(subparsers)`` registers them on the ``clarisql`` parser (see :mod:`clarisql.cli`).
Every handler returns an exit status: 0 on success, 1 when a run finished with failed episodes
(re-run the same command to retry them), 2 for an error the user can fix (missing file, bad
spec, a different run in ``--out``, unreachable endpoint), printed as one line.

    clarisql eval --suite SUITE --policy POLICY [--trials K] [--workers W] [--max-episodes N]
                  [--reward SPEC] [--data DIR] [--db NAME] [--tasks-file FILE]
                  [--simulator MODE] [--simulator-backend openai:MODEL@URL|hf:PATH] --out DIR
    clarisql view DIR [DIR ...] [--task ID] [--category C] [--failed] [--limit N] [--html FILE]
    clarisql rescore DIR --rewards SPEC.yaml [SPEC2.yaml ...]
    clarisql ablate --out DIR --rewards SPEC ... (--runs RUN_DIR ... | --suite SUITE --policies P ...)
"""

from __future__ import annotations

import argparse
import hashlib
import json
import math
import re
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

RUN_POLICY_OPTIONS = (
    "temperature",
    "top_p",
    "max_tokens",
    "api_key_env",
    "timeout_s",
    "max_retries",
    "tools",
    "prompt",
)


def _fail(cmd: str, msg: Any) -> int:
    print(f"clarisql {cmd}: error: {msg}", file=sys.stderr)
    return 2


def _guard(
    cmd: str, fn: Callable[[argparse.Namespace], int]
) -> Callable[[argparse.Namespace], int]:
    """Turn the errors a user can fix into one line and exit status 2."""
    from clarisql.policies.openai_compat import EndpointError
    from clarisql.rollouts.store import TrajectoryFileError

    def handler(args: argparse.Namespace) -> int:
        import os

        try:
            return fn(args)
        except (
            EndpointError,
            TrajectoryFileError,
            FileNotFoundError,
            ValueError,
            KeyError,
            OSError,
        ) as e:
            if os.environ.get("CLARISQL_DEBUG"):
                raise
            msg = e.args[0] if isinstance(e, KeyError) and e.args else e
            return _fail(cmd, msg)

    return handler


# --- shared options --------------------------------------------------------------------------
def _add_run_options(p: argparse.ArgumentParser, single_policy: bool) -> None:
    p.add_argument(
        "--suite",
        required=single_policy,
        metavar="SUITE",
        help="builtin, dysql, odutqa, hybrid, or a .jsonl task file",
    )
    if single_policy:
        p.add_argument(
            "--policy",
            required=True,
            metavar="SPEC",
            help="policy spec: oracle, naive, abstain-all, random:SEED, "
            "replay, script:FILE, hf:PATH, openai:MODEL@URL, ...",
        )
    p.add_argument(
        "--mixture",
        choices=("ans", "ans+25", "ans+unans50"),
        default=None,
        help="TrustSQL mixture: answerable tasks only, plus 25%% unanswerable, or 50/50 "
        "(default: every task)",
    )
    p.add_argument("--trials", type=int, default=1, metavar="N", help="trials per task (default 1)")
    p.add_argument(
        "--workers",
        type=int,
        default=1,
        metavar="N",
        help="worker processes, or Ray actors (default 1)",
    )
    p.add_argument(
        "--engine",
        choices=("local", "ray"),
        default="local",
        help="where episodes run: local processes, or a Ray cluster (needs the ray extra)",
    )
    p.add_argument(
        "--address",
        default=None,
        metavar="ADDRESS",
        help="Ray cluster address for --engine ray (default: local)",
    )
    p.add_argument(
        "--concurrency",
        type=int,
        default=None,
        metavar="N",
        help="episodes in flight per process, on threads (default 1; 8 for openai: policies)",
    )
    p.add_argument(
        "--batch-size",
        type=int,
        default=1,
        metavar="N",
        help="episodes in lockstep with one batched policy (hf:), in this process (default 1)",
    )
    p.add_argument(
        "--max-episodes",
        type=int,
        default=None,
        metavar="N",
        help="only N tasks (the first N; see --sample)",
    )
    p.add_argument(
        "--sample",
        action="store_true",
        help="with --max-episodes: a seeded random sample of N tasks",
    )
    p.add_argument(
        "--seed",
        type=int,
        default=0,
        metavar="N",
        help="run seed; episode seeds derive from (seed, task, trial)",
    )
    p.add_argument(
        "--data",
        default=None,
        metavar="DIR",
        help="suite data folder (dysql: the DySQL-Bench folder; odutqa: the records)",
    )
    p.add_argument(
        "--db", default=None, metavar="NAME", help="suite database name (dysql: one database)"
    )
    p.add_argument("--tasks-file", default=None, metavar="FILE", help="suite task file (dysql)")
    p.add_argument(
        "--max-turns",
        type=int,
        default=None,
        metavar="N",
        help="actions per episode (default: the suite's, else 20)",
    )
    p.add_argument(
        "--max-clarifications",
        type=int,
        default=None,
        metavar="N",
        help="clarification questions per episode (default: the suite's, else 5)",
    )
    p.add_argument(
        "--simulator",
        default=None,
        metavar="MODE",
        help="user simulator: fixed, dynamic, instruction (default: the suite's choice)",
    )
    p.add_argument(
        "--simulator-backend",
        default=None,
        metavar="SPEC",
        help="model for the simulator (dynamic, instruction): openai:MODEL@URL or hf:PATH",
    )
    p.add_argument(
        "--simulator-arg",
        action="append",
        default=[],
        metavar="KEY=VALUE",
        help="any other simulator keyword (VALUE parsed as JSON when it can be), e.g. retries=3",
    )
    p.add_argument(
        "--gate",
        choices=("labels", "text", "both"),
        default=None,
        help="what the user simulator answers: the agent's labels, its free-text question, or both",
    )
    p.add_argument(
        "--gate-mapper",
        default=None,
        metavar="SPEC",
        help="question mapper for --gate text/both: offline (default), lexical, llm:MODEL@URL",
    )
    p.add_argument(
        "--table-search",
        action=argparse.BooleanOptionalAction,
        default=None,
        help="compact schema plus the search_tables tool (default: on for suites with > 50 tables)",
    )
    p.add_argument(
        "--max-errors",
        type=int,
        default=20,
        metavar="N",
        help="stop after this many failed episodes (default 20)",
    )
    p.add_argument("--no-progress", action="store_true", help="no progress bar")
    g = p.add_argument_group("model policy options (openai:, hf:)")
    g.add_argument(
        "--temperature",
        type=float,
        default=None,
        metavar="T",
        help="sampling temperature (default: the policy's, greedy for hf:)",
    )
    g.add_argument(
        "--top-p", type=float, default=None, metavar="P", help="nucleus sampling threshold"
    )
    g.add_argument(
        "--max-tokens", type=int, default=None, metavar="N", help="tokens per model reply"
    )
    g.add_argument(
        "--max-episode-tokens",
        type=int,
        default=None,
        metavar="N",
        help="hf: new tokens one episode may generate in all; then the policy stops the episode",
    )
    g.add_argument(
        "--api-key-env",
        default=None,
        metavar="VAR",
        help="environment variable holding the API key (default OPENAI_API_KEY)",
    )
    g.add_argument(
        "--request-timeout",
        dest="timeout_s",
        type=float,
        default=None,
        metavar="SECONDS",
        help="deadline in seconds of one request attempt, the whole exchange (a server that "
        "drips bytes is cut); retries and the endpoint's circuit breaker come on top",
    )
    g.add_argument(
        "--retries",
        dest="max_retries",
        type=int,
        default=None,
        metavar="N",
        help="retries per request",
    )
    g.add_argument(
        "--tools", action="store_true", default=None, help="openai: use function calling"
    )
    g.add_argument(
        "--prompt",
        default=None,
        metavar="NAME_OR_FILE",
        help="ready prompt: qwen, llama3, generic, auto (from the model name) or a YAML file",
    )
    g.add_argument(
        "--policy-arg",
        action="append",
        default=[],
        metavar="KEY=VALUE",
        help="any other policy keyword (VALUE parsed as JSON when it can be)",
    )


def _suite_kwargs(args: argparse.Namespace) -> dict[str, Any]:
    kw = {}
    for name in ("data", "db", "tasks_file", "mixture"):
        v = getattr(args, name, None)
        if v is not None:
            kw[name] = v
    return kw


def _key_values(items: list[str], option: str) -> dict[str, Any]:
    kw: dict[str, Any] = {}
    for item in items:
        key, sep, val = item.partition("=")
        if not sep or not key.strip():
            raise ValueError(f"{option} {item!r}: expected KEY=VALUE")
        try:
            kw[key.strip().replace("-", "_")] = json.loads(val)
        except json.JSONDecodeError:
            kw[key.strip().replace("-", "_")] = val
    return kw


def _policy_kwargs(args: argparse.Namespace) -> dict[str, Any]:
    kw: dict[str, Any] = {
        k: getattr(args, k) for k in RUN_POLICY_OPTIONS if getattr(args, k, None) is not None
    }
    if str(getattr(args, "policy", "")).startswith("hf:"):  # bounded, with progress
        if getattr(args, "max_episode_tokens", None) is not None:
            kw["max_episode_tokens"] = args.max_episode_tokens
        kw.setdefault("progress", not getattr(args, "no_progress", False))
    kw.update(_key_values(args.policy_arg, "--policy-arg"))
    return kw


def _simulator_kwargs(args: argparse.Namespace) -> dict[str, Any]:
    """``--simulator-arg`` pairs plus ``--simulator-backend`` as the ``backend`` keyword."""
    kw = _key_values(args.simulator_arg, "--simulator-arg")
    if args.simulator_backend:
        kw["backend"] = args.simulator_backend
    return kw


def _config(args: argparse.Namespace, policy: str, reward: Any) -> Any:
    from clarisql.rollouts.runner import RunConfig

    return RunConfig(
        suite=args.suite,
        policy=policy,
        suite_kwargs=_suite_kwargs(args),
        policy_kwargs=_policy_kwargs(args),
        reward=reward,
        trials=args.trials,
        max_episodes=args.max_episodes,
        sample=args.sample,
        seed=args.seed,
        max_turns=args.max_turns,
        max_clarifications=args.max_clarifications,
        simulator=args.simulator,
        simulator_kwargs=_simulator_kwargs(args),
        gate=args.gate,
        gate_mapper=args.gate_mapper,
        table_search=args.table_search,
    )


def _run(config: Any, out: Path, args: argparse.Namespace) -> Any:
    from clarisql.rollouts.runner import run_eval

    return run_eval(
        config,
        out,
        workers=args.workers,
        concurrency=args.concurrency,
        batch_size=args.batch_size,
        progress=not args.no_progress,
        max_errors=args.max_errors,
        engine=getattr(args, "engine", "local"),
        address=getattr(args, "address", None),
    )


def _outcome_line(o: Any) -> str:
    m = o.metrics
    head = f"{o.n_done}/{o.n_planned} episodes ({o.n_new} new) in {o.elapsed_s:.1f}s"
    if m:
        head += "  " + "  ".join(
            f"{k} {m[k]:.3f}"
            for k in ("pass@1", "phi_10", "ecr")
            if isinstance(m.get(k), (int, float))
        )
    return head


# --- eval ------------------------------------------------------------------------------------
def _eval(args: argparse.Namespace) -> int:
    if args.policy.startswith("hf:") and not args.no_progress:
        per_action = args.max_tokens or "the policy's max_new_tokens (256)"
        turns = args.max_turns or "the env's"
        budget = args.max_episode_tokens or "no"
        print(
            f"{args.policy}: at most {turns} turns x {per_action} new tokens per action, "
            f"{budget} episode token budget; generation progress every 15 s on stderr",
            file=sys.stderr,
        )
    o = _run(_config(args, args.policy, args.rewards), Path(args.out), args)
    print(_outcome_line(o))
    print(
        f"wrote {o.out_dir / 'trajectories.jsonl'}"
        + (f", {o.out_dir / 'metrics.json'}, {o.out_dir / 'report.md'}" if o.metrics else "")
    )
    if o.aborted:
        print(f"clarisql eval: stopped: {o.aborted}", file=sys.stderr)
    if o.n_errors:
        print(
            f"clarisql eval: {o.n_errors} episode(s) failed (see {o.out_dir / 'errors.jsonl'}); "
            "run the same command again to retry them",
            file=sys.stderr,
        )
    return 0 if o.complete else 1


# --- view --------------------------------------------------------------------------------------
def _view(args: argparse.Namespace) -> int:
    from clarisql.rollouts.view import export_html, view_run

    dirs = [Path(x) for x in args.dir]
    for d in dirs:
        if not (d / "trajectories.jsonl").is_file():
            raise FileNotFoundError(f"{d} is not a run folder (no trajectories.jsonl)")
    filters = {
        "task": args.task,
        "category": args.category,
        "failed": args.failed,
        "trial": args.trial,
    }
    if args.html:
        n = export_html(dirs, args.html, limit=args.limit, **filters)
        print(f"wrote {n} episode(s) of {len(dirs)} run(s) to {args.html}")
    else:
        for d in dirs:
            view_run(d, limit=args.limit if args.limit is not None else 20, **filters)
    return 0


# --- rescore -------------------------------------------------------------------------------------
def _rescore(args: argparse.Namespace) -> int:
    from rich.console import Console
    from rich.table import Table

    from clarisql.rewards import load_reward_spec
    from clarisql.rollouts.metrics import rescore
    from clarisql.rollouts.report import _write_text, md_table
    from clarisql.rollouts.store import read_trajectories

    d = Path(args.dir)
    lines = read_trajectories(d / "trajectories.jsonl")
    specs = [load_reward_spec(s) for s in args.rewards]
    results = [rescore(lines, s) for s in specs]
    cats = sorted({c for r in results for c in r["by_category"]})
    comps = sorted({c for r in results for c in r["reward_components"]})
    table = Table(title=f"{d}: {len(lines)} episodes re-scored")
    for col in ["spec", "mean reward", *comps, *cats]:
        table.add_column(col, justify="left" if col == "spec" else "right")
    rows = []
    for r in results:
        row = [
            r["spec"],
            r["reward_mean"],
            *(r["reward_components"].get(c, 0.0) for c in comps),
            *(r["by_category"].get(c) for c in cats),
        ]
        rows.append(row)
        table.add_row(*[v if isinstance(v, str) else "–" if v is None else f"{v:.3f}" for v in row])
    Console().print(table)
    if not args.no_write:
        out = Path(args.out) if args.out else d / "rescore.json"
        for r in results:
            r.pop("by_task", None)
        _write_text(out, json.dumps({"run": str(d), "results": results}, indent=2) + "\n")
        _write_text(
            out.with_suffix(".md"),
            f"# Re-scored {d} ({len(lines)} episodes)\n\n"
            + md_table(["spec", "mean reward", *comps, *cats], rows)
            + "\n",
        )
        print(f"wrote {out} and {out.with_suffix('.md')}")
    return 0


# --- ablate --------------------------------------------------------------------------------------
def policy_slug(spec: str) -> str:
    """A folder name for a policy spec (readable part plus a short hash when characters were lost)."""
    slug = re.sub(r"[^A-Za-z0-9._-]+", "_", spec).strip("_")[:60] or "policy"
    if slug != spec:
        slug += "-" + hashlib.sha256(spec.encode()).hexdigest()[:6]
    return slug


def _ablate(args: argparse.Namespace) -> int:
    from clarisql.policies.probes import HONEST_MISS_VARIANTS, INTEGRITY_PROBES, TEXT_PROBES
    from clarisql.rewards import load_reward_spec
    from clarisql.rewards.spec import preset_dir
    from clarisql.rollouts.report import write_ablation
    from clarisql.rollouts.store import read_trajectories

    out = Path(args.out)
    spec_args = args.rewards or sorted(p.stem for p in preset_dir().glob("*.yaml"))
    specs = [load_reward_spec(s) for s in spec_args]
    names = [s.name for s in specs]
    if len(set(names)) != len(names):
        raise ValueError(f"reward specs need distinct names, got {names}")
    run_dirs: dict[str, Path] = {}
    status = 0
    if args.runs:
        if args.policies:
            raise ValueError(
                "give either --runs (re-score existing runs) or --policies (run them), not both"
            )
        for r in args.runs:
            d = Path(r)
            try:
                pol = json.loads((d / "run.json").read_text(encoding="utf-8"))["config"]["policy"]
            except (OSError, ValueError, KeyError):
                raise FileNotFoundError(f"{d} is not a run folder (no readable run.json)") from None
            if pol in run_dirs:
                pol = f"{pol} ({d.name})"
            run_dirs[pol] = d
    else:
        if not args.policies or not args.suite:
            raise ValueError("ablate needs --runs RUN_DIR ..., or --suite and --policies to run")
        policies = list(args.policies)
        if not args.no_probes:  # every report checks every integrity probe
            policies += [p for p in INTEGRITY_PROBES if p not in policies]
            # the honest agents that miss some clarifications (answering, or declining, there)
            policies += [p for p in HONEST_MISS_VARIANTS if p not in policies]
        for pol in policies:
            d = out / "runs" / policy_slug(pol)
            print(f"== {pol} -> {d}")
            cfg = _config(args, pol, spec_args[0])
            if pol in TEXT_PROBES and cfg.gate in (None, "labels") and _gated(cfg):
                cfg.gate = "both"  # a free-text probe is blind under a labels-only gate
            o = _run(cfg, d, args)
            print(_outcome_line(o))
            if not o.complete:
                status = 1
                print(
                    f"clarisql ablate: {pol}: {o.n_errors} episode(s) failed; re-run to retry",
                    file=sys.stderr,
                )
            run_dirs[pol] = d
    runs = {pol: read_trajectories(d / "trajectories.jsonl") for pol, d in run_dirs.items()}
    rep = write_ablation(out, runs, specs)
    from rich.console import Console
    from rich.table import Table

    t = Table(title=f"mean episode reward on {rep['n_common_tasks']} shared tasks")
    t.add_column("policy")
    for s in rep["specs"]:
        t.add_column(s, justify="right")
    for p in rep["policies"]:  # one row per policy: the grid has many more policies than specs
        t.add_row(
            p,
            *[
                "–" if rep["scores"][s].get(p) is None else f"{rep['scores'][s][p]:.3f}"
                for s in rep["specs"]
            ],
        )
    Console(width=max(120, 24 + 22 * len(rep["specs"]))).print(t)
    for f in rep["integrity"]:
        if f["flagged"]:
            print(
                f"INTEGRITY: under {f['spec']!r}, {f['degenerate']} scores {f['score']:.3f} >= "
                f"{f['honest_policy']} {f['honest_score']:.3f}"
            )
    if rep.get("probes_missing"):
        print("integrity probes not checked: " + ", ".join(rep["probes_missing"]))
    miss_present = [p for p in HONEST_MISS_VARIANTS if p in rep["policies"]]
    if miss_present:  # every probe must also lose to an imperfect honest agent
        from clarisql.rollouts.report import integrity_check

        miss = []
        for spec_name, by_pol in rep["scores"].items():
            best = max(miss_present, key=lambda p: by_pol.get(p) or -math.inf)
            miss += integrity_check({spec_name: by_pol}, INTEGRITY_PROBES, honest=best)
        (out / "integrity_miss.json").write_text(json.dumps(miss, indent=2), encoding="utf-8")
        for f in miss:
            if f["flagged"]:
                print(
                    f"INTEGRITY: under {f['spec']!r}, {f['degenerate']} scores {f['score']:.3f} >= "
                    f"{f['honest_policy']} {f['honest_score']:.3f}"
                )
    search = None
    if args.search:
        if not args.suite:
            raise ValueError("ablate --search needs --suite (it plays strategies on the suite)")
        search = _search(args, specs, out)
    _verdict(out, rep, search)
    print(
        f"wrote {out / 'ablation.md'}, {out / 'ablation.json'}"
        + (f", {out / 'ablation.png'}" if rep.get("plot") else "")
    )
    return status


def _gated(cfg: Any) -> bool:
    """The run's user reveals per label (not DySQL's instruction-following user)."""
    from clarisql.rollouts.plan import load_run_suite

    sim = cfg.simulator or load_run_suite(cfg).metadata.get("simulator") or "fixed"
    return sim != "instruction"


def _verdict(out: Path, rep: dict[str, Any], search: list[dict[str, Any]] | None) -> None:
    """Print and write the verdict table (``verdict.md`` / ``verdict.json``)."""
    from rich.console import Console
    from rich.table import Table

    from clarisql.policies.probes import HONEST_MISS_VARIANTS, INTEGRITY_PROBES
    from clarisql.rollouts.report import _write_text
    from clarisql.rollouts.verdict import honest_reference, verdict_markdown, verdict_table

    try:
        honest_reference(next(iter(rep["scores"].values()), {}), HONEST_MISS_VARIANTS)
    except ValueError:
        print("verdict skipped: no honest reference (oracle or replay) in the grid")
        return
    table = verdict_table(
        rep["scores"], INTEGRITY_PROBES, HONEST_MISS_VARIANTS, rep["applicable"], search or ()
    )
    _write_text(out / "verdict.json", json.dumps(table, indent=2, default=str) + "\n")
    _write_text(out / "verdict.md", verdict_markdown(table))
    t = Table(title="verdict: probe / search vs the honest reference")
    t.add_column("probe")
    for s in table["specs"]:
        t.add_column(s, justify="right")
    t.add_row(
        "honest reference",
        *[f"{n} {v:.3f}" for n, v in (table["reference"][s] for s in table["specs"])],
    )
    for r in table["rows"]:
        t.add_row(
            r["probe"],
            *[
                "–" if (c := r["cells"][s])["score"] is None else f"{c['verdict']} {c['score']:.3f}"
                for s in table["specs"]
            ],
        )
    Console(width=max(120, 24 + 22 * len(table["specs"]))).print(t)
    n = table["counts"]
    print(
        f"VERDICT: {n['below']} below, {n['tie']} tie, {n['above']} above, {n['n/a']} n/a"
        + (
            (
                " -- every probe and the search stay below"
                if search
                else " -- every probe stays below"
            )
            if table["ok"]
            else " -- NOT all below"
        )
        + ("" if search else " (the strategy search was not run: add --search)")
    )
    for s, a in table["applicable"].items():
        if a is False:
            print(
                f"VERDICT: {s!r} is not applicable to this suite: it scores the honest "
                "reference exactly as doing nothing on every task (not a pass)"
            )


def _search(args: argparse.Namespace, specs: list[Any], out: Path) -> list[dict[str, Any]]:
    """``ablate --search``: CEM over the strategy family against the honest references."""
    import numpy as np

    from clarisql.envs.suites import load_suite
    from clarisql.policies import make_policy
    from clarisql.policies.probes import HONEST_MISS_VARIANTS
    from clarisql.rewards import EpisodeRecord
    from clarisql.rollouts.engines.worker import build_env
    from clarisql.rollouts.episode import run_episode
    from clarisql.rollouts.search import search_markdown, search_strategies
    from clarisql.rollouts.verdict import honest_reference

    cfg = _config(args, "oracle", specs[0])
    gated = _gated(cfg)
    suite = load_suite(cfg.suite, **cfg.suite_kwargs)
    env = build_env(cfg, suite)
    # as in the grid: the references and label strategies under the suite's gate, strategies
    # with free-text questions under one that reads text (an ungated user, DySQL's instruction
    # user, reads the text of every question anyway)
    text_env = env
    if gated and cfg.gate in (None, "labels"):
        import copy

        text_cfg = copy.copy(cfg)
        text_cfg.gate = "both"
        text_env = build_env(text_cfg, suite)
    text = text_env is not env or cfg.gate in ("text", "both") or not gated
    ids = [t.id for t in suite.tasks]
    n = min(len(ids), max(1, int(args.search_tasks)))
    rng = np.random.default_rng(args.seed)
    sample = [ids[i] for i in sorted(rng.choice(len(ids), size=n, replace=False).tolist())]

    def play(policy: Any) -> list[Any]:
        e = text_env if getattr(getattr(policy, "strategy", None), "text", 0) else env
        return [
            EpisodeRecord.from_dict(run_episode(e, policy, t, seed=args.seed).summary["record"])
            for t in sample
        ]

    refs = {name: play(make_policy(name)) for name in ("oracle", *HONEST_MISS_VARIANTS)}
    results = search_strategies(
        play,
        specs,
        refs,
        seed=args.seed,
        population=args.search_population,
        iterations=args.search_iterations,
        text=text,
    )
    env.close()
    if text_env is not env:
        text_env.close()
    md = search_markdown(results, n, args.seed)
    (out / "search.md").write_text(md, encoding="utf-8")
    (out / "search.json").write_text(
        json.dumps([r.to_dict() for r in results], indent=2), encoding="utf-8"
    )
    print(md)
    for r in results:
        name, ref = honest_reference(r.honest, HONEST_MISS_VARIANTS)
        if r.best_score >= ref:
            print(
                f"INTEGRITY: under {r.spec!r}, the searched strategy ({r.best.describe()}) scores "
                f"{r.best_score:.3f} >= the honest reference {name} {ref:.3f}"
            )
    print(f"wrote {out / 'search.md'}, {out / 'search.json'}")
    return [r.to_dict() for r in results]


def add_commands(subparsers: Any) -> None:
    """Register ``eval``, ``view``, ``rescore`` and ``ablate``."""
    p = subparsers.add_parser(
        "eval",
        help="run a policy on a suite (parallel, resumable) and write reports",
        description="Run a policy on a suite and write its trajectories, metrics and reports.",
        epilog="The run folder gets trajectories.jsonl, metrics.json, report.md and plots;\n"
        "re-run the same command to resume.\n\n"
        "examples:\n"
        "  clarisql eval --suite builtin --policy oracle --out runs/oracle\n"
        "  clarisql eval --suite builtin --policy openai:MODEL@http://127.0.0.1:8000/v1 "
        "--out runs/model\n"
        "  clarisql eval --suite dysql --data DIR --policy replay --trials 3 --out runs/dysql",
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    _add_run_options(p, single_policy=True)
    p.add_argument(
        "--reward",
        "--rewards",
        dest="rewards",
        default="default",
        metavar="SPEC",
        help="reward spec: preset name or YAML file (default: default)",
    )
    p.add_argument(
        "--out",
        required=True,
        metavar="DIR",
        help="run folder (re-run the same command to resume)",
    )
    p.set_defaults(func=_guard("eval", _eval))

    p = subparsers.add_parser(
        "view",
        help="read runs' trajectories in the terminal, or as one self-contained web page",
        description="Read runs' episodes in the terminal, or as one self-contained web page.",
        epilog="examples:\n"
        "  clarisql view runs/oracle --failed\n"
        "  clarisql view runs/oracle runs/naive --html report.html",
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    p.add_argument(
        "dir",
        nargs="+",
        metavar="RUN",
        help="run folder(s); several runs are compared in the page",
    )
    p.add_argument("--task", default=None, metavar="ID", help="task id (or part of one)")
    p.add_argument(
        "--category", default=None, metavar="CATEGORY", help="only episodes of this category"
    )
    p.add_argument(
        "--trial", type=int, default=None, metavar="N", help="only episodes of this trial"
    )
    p.add_argument("--failed", action="store_true", help="only episodes that were not correct")
    p.add_argument(
        "--limit",
        type=int,
        default=None,
        metavar="N",
        help="episodes to show (terminal default 20, HTML all)",
    )
    p.add_argument(
        "--html",
        default=None,
        metavar="FILE",
        help="write one self-contained HTML report page (metrics, plots, episodes; no server)",
    )
    p.set_defaults(func=_guard("view", _view))

    p = subparsers.add_parser(
        "rescore",
        help="re-score a saved run under other reward specs (no re-run)",
        description="Re-score a saved run under other reward specs, without running it again.",
        epilog="example:\n  clarisql rescore runs/oracle --rewards reliability_phi10 my_spec.yaml",
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    p.add_argument("dir", metavar="RUN", help="run folder")
    p.add_argument(
        "--rewards",
        "--reward",
        dest="rewards",
        nargs="+",
        required=True,
        metavar="SPEC",
        help="reward specs: preset names or YAML files",
    )
    p.add_argument(
        "--out",
        default=None,
        metavar="FILE",
        help="JSON file to write (default RUN/rescore.json, plus .md)",
    )
    p.add_argument("--no-write", action="store_true", help="only print the table")
    p.set_defaults(func=_guard("rescore", _rescore))

    p = subparsers.add_parser(
        "ablate",
        help="policies × reward specs: one comparison table, chart and integrity check",
        description="Compare policies × reward specs in one table, chart and integrity check.",
        epilog="The integrity probes are added; a probe at or above the honest reference\n"
        "is flagged.\n\n"
        "examples:\n"
        "  clarisql ablate --suite builtin --policies oracle naive random --out runs/ablation\n"
        "  clarisql ablate --runs runs/oracle runs/naive --rewards default outcome "
        "--out runs/ablation",
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    p.add_argument(
        "--out",
        required=True,
        metavar="DIR",
        help="ablation folder (runs go to DIR/runs/<policy>)",
    )
    p.add_argument(
        "--rewards",
        "--reward",
        dest="rewards",
        nargs="+",
        default=None,
        metavar="SPEC",
        help="reward specs: preset names or YAML files (default: every preset)",
    )
    p.add_argument(
        "--runs",
        nargs="+",
        default=None,
        metavar="RUN",
        help="existing run folders to re-score (no running)",
    )
    p.add_argument(
        "--policies",
        nargs="+",
        default=None,
        metavar="SPEC",
        help="policies to run (with --suite); the integrity probes are added to them",
    )
    p.add_argument(
        "--no-probes",
        action="store_true",
        help="do not add the integrity probes (the report then says they were not checked)",
    )
    p.add_argument(
        "--search",
        action="store_true",
        help="also search a strategy family (cross-entropy method, seeded) for one that beats "
        "the honest references under each spec (needs --suite)",
    )
    p.add_argument(
        "--search-tasks",
        type=int,
        metavar="N",
        default=60,
        help="tasks the search plays on (default 60)",
    )
    p.add_argument(
        "--search-population",
        type=int,
        metavar="N",
        default=12,
        help="strategies per iteration (default 12)",
    )
    p.add_argument(
        "--search-iterations",
        type=int,
        metavar="N",
        default=4,
        help="CEM iterations per spec (default 4)",
    )
    _add_run_options(p, single_policy=False)
    p.set_defaults(func=_guard("ablate", _ablate))
