"""Run reports: ``metrics.json``, ``report.md`` and PNG plots; ablation tables and the reward
integrity check.

Plots need matplotlib (the ``report`` extra). It is imported lazily with the Agg backend; when it
is missing the plots are skipped and the report says so.
"""

from __future__ import annotations

import json
import math
import os
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from clarisql.policies.probes import INTEGRITY_PROBES
from clarisql.rollouts.metrics import CLAUSES, compute_metrics, episode_stats

#: Policies that must never beat an honest one: they exist to show a reward cannot be gamed
#: (the integrity probes of :mod:`clarisql.policies.probes`; ``clarisql ablate`` runs them all).
DEGENERATE_POLICIES = INTEGRITY_PROBES


def _fmt(v: Any, digits: int = 3) -> str:
    if v is None:
        return "–"
    if isinstance(v, bool):
        return str(v)
    if isinstance(v, int):
        return str(v)
    if isinstance(v, float):
        return "nan" if math.isnan(v) else f"{v:.{digits}f}"
    return str(v)


def md_table(header: Sequence[str], rows: Sequence[Sequence[Any]]) -> str:
    """A GitHub-flavoured Markdown table (cells formatted with 3 decimals)."""

    def cell(v: Any) -> str:
        return _fmt(v).replace("|", "\\|").replace("\n", " ")

    out = ["| " + " | ".join(header) + " |", "|" + "|".join("---" for _ in header) + "|"]
    out += ["| " + " | ".join(cell(v) for v in r) + " |" for r in rows]
    return "\n".join(out)


def _matplotlib() -> Any | None:
    try:
        import matplotlib

        matplotlib.use("Agg", force=True)
        import matplotlib.pyplot as plt
    except ImportError:
        return None
    return plt


# --- one run ---------------------------------------------------------------------------------
def write_run_reports(
    out_dir: str | Path, lines: Sequence[Mapping[str, Any]], config: Mapping[str, Any] | None = None
) -> dict[str, Any]:
    """Compute the metrics of ``lines`` and write ``metrics.json``, ``report.md`` and plots."""
    out = Path(out_dir)
    stats = [episode_stats(x) for x in lines]  # once, for the metrics and the plots
    metrics = compute_metrics(lines, stats=stats)
    plots, note = write_run_plots(out, lines, metrics, stats=stats)
    metrics["plots"] = plots
    _write_text(
        out / "metrics.json", json.dumps(metrics, indent=2, ensure_ascii=False, default=str) + "\n"
    )
    _write_text(out / "report.md", run_report_md(metrics, config, plots, note))
    return metrics


def _write_text(path: Path, text: str) -> None:
    tmp = path.with_name(path.name + ".tmp")
    tmp.write_text(text, encoding="utf-8")
    os.replace(tmp, path)


_MAIN_COLS = (
    ("episodes", "n_episodes"),
    ("Pass@1", "pass@1"),
    ("φ_0", "phi_0"),
    ("φ_10", "phi_10"),
    ("φ_N", "phi_N"),
    ("ECR", "ecr"),
    ("table F1", "table_f1"),
    ("clarif./ep", "clarifications_per_episode"),
    ("turns/ep", "turns_per_episode"),
    ("SQL err/ep", "sql_errors_per_episode"),
    ("invalid/ep", "invalid_actions_per_episode"),
    ("abstain", "abstain_rate"),
    ("halluc.", "hallucination_rate"),
    ("reward", "reward_mean"),
)


def run_report_md(
    metrics: Mapping[str, Any],
    config: Mapping[str, Any] | None = None,
    plots: Sequence[str] = (),
    plot_note: str | None = None,
) -> str:
    """The Markdown report of one run (overall, per category, Pass@k/Pass^k, detection)."""
    parts = ["# clarisql evaluation report", ""]
    if config:
        reward = config.get("reward")
        reward_name = reward.get("name") if isinstance(reward, Mapping) else reward
        parts += [
            f"- policy: `{config.get('policy')}`",
            f"- suite: `{config.get('suite')}` {config.get('suite_kwargs') or ''}",
            f"- trials: {config.get('trials')}, max episodes: {config.get('max_episodes')}, seed: {config.get('seed')}",
            f"- reward spec: `{reward_name}`",
            "",
        ]
    parts += [
        "## Overall",
        "",
        md_table([c for c, _ in _MAIN_COLS], [[metrics.get(k) for _, k in _MAIN_COLS]]),
        "",
    ]
    ks = sorted(metrics.get("pass@k", {}), key=int)
    if ks:
        parts += [
            "## Pass@k and Pass^k",
            "",
            md_table(
                ["k", "Pass@k", "Pass^k"],
                [[int(k), metrics["pass@k"][k], metrics["pass^k"].get(k)] for k in ks],
            ),
            "",
        ]
    cats = metrics.get("by_category", {})
    if cats:
        parts += [
            "## By category",
            "",
            md_table(
                ["category"] + [c for c, _ in _MAIN_COLS],
                [[cat] + [m.get(k) for _, k in _MAIN_COLS] for cat, m in cats.items()],
            ),
            "",
        ]
    det = metrics.get("detection")
    if det:
        rows = [
            [
                cl.upper(),
                det[cl]["accuracy"],
                det[cl]["precision"],
                det[cl]["recall"],
                det[cl]["f1"],
                det[cl]["support"],
                det[cl]["predicted"],
            ]
            for cl in CLAUSES
        ]
        lab = det["labels"]
        rows.append(
            [
                "exact labels",
                None,
                lab["precision"],
                lab["recall"],
                lab["f1"],
                lab["support"],
                lab["predicted"],
            ]
        )
        parts += [
            "## Underspecification detection (per clause; ODUTQA-MDC)",
            "",
            md_table(
                ["clause", "accuracy", "precision", "recall", "F1", "gold positives", "flagged"],
                rows,
            ),
            "",
        ]
        crow = []
        for cat, m in cats.items():
            d = m.get("detection") or {}
            crow.append(
                [cat]
                + [(d.get(cl) or {}).get("f1") for cl in CLAUSES]
                + [(d.get(cl) or {}).get("accuracy") for cl in CLAUSES]
            )
        if crow:
            parts += [
                "Detection by category (F1, then accuracy):",
                "",
                md_table(
                    [
                        "category",
                        "F1 SELECT",
                        "F1 FROM",
                        "F1 WHERE",
                        "acc SELECT",
                        "acc FROM",
                        "acc WHERE",
                    ],
                    crow,
                ),
                "",
            ]
    if metrics.get("model_queries") is not None:
        parts += [
            "## Free-text functions (SUQL ANSWER/SUMMARY)",
            "",
            md_table(
                ["", "per episode", "per query", "total", "queries", "cache hit rate"],
                [
                    [
                        "model calls",
                        metrics.get("model_calls_per_episode"),
                        metrics.get("model_calls_per_query"),
                        metrics.get("model_calls"),
                        metrics.get("model_queries"),
                        metrics.get("model_cache_hit_rate"),
                    ]
                ],
            ),
            "",
        ]
    comps = metrics.get("reward_components") or {}
    if comps:
        parts += [
            "## Reward components (mean per episode)",
            "",
            md_table(list(comps), [list(comps.values())]),
            "",
        ]
    ends = metrics.get("end_reasons") or {}
    if ends:
        parts += ["## How episodes ended", "", md_table(list(ends), [list(ends.values())]), ""]
    fb = metrics.get("simulator_fallback")
    if fb:
        parts += [
            "## User simulator fallback",
            "",
            f"{fb['episodes']} episode(s) had replies from the offline user because the model "
            "backend failed. Most common reasons:",
            "",
            *[f"- {n} x {reason}" for reason, n in fb["reasons"].items()],
            "",
        ]
    if plots:
        parts += ["## Plots", ""] + [f"![{Path(p).stem}]({p})" for p in plots] + [""]
    if plot_note:
        parts += [f"_{plot_note}_", ""]
    parts += [
        "Definitions: see `clarisql.rollouts.metrics` (Pass^k = mean over tasks of C(c,k)/C(n,k); "
        "ECR, detection and table F1 as ODUTQA-MDC defines them, see "
        "`clarisql.rollouts.odutqa_metrics`: ECR = share of answer queries that execute; "
        "detection accuracy over all episodes, P/R/F1 macro over the underspecified ones).",
        "",
    ]
    return "\n".join(parts)


def write_run_plots(
    out: Path,
    lines: Sequence[Mapping[str, Any]],
    metrics: Mapping[str, Any],
    stats: Sequence[Any] | None = None,
) -> tuple[list[str], str | None]:
    """``category_metrics.png`` (Pass@1, φ_10, ECR per category) and ``reward_components.png``
    (per-episode distributions); returns the file names written and a note when skipped."""
    plt = _matplotlib()
    if plt is None:
        return [], "Plots skipped: matplotlib is not installed (pip install 'clarisql[report]')."
    written = []
    cats = metrics.get("by_category") or {}
    if cats:
        names = list(cats)
        series = [("Pass@1", "pass@1"), ("φ_10 / 10", "phi_10"), ("ECR", "ecr")]
        fig, ax = plt.subplots(figsize=(max(6.0, 0.9 * len(names) + 2), 4.2))
        width = 0.8 / len(series)
        for j, (label, key) in enumerate(series):
            vals = [cats[c].get(key) for c in names]
            vals = [(v / 10 if key == "phi_10" else v) if v is not None else 0.0 for v in vals]
            ax.bar(
                [i + (j - (len(series) - 1) / 2) * width for i in range(len(names))],
                vals,
                width,
                label=label,
            )
        ax.set_xticks(range(len(names)))
        ax.set_xticklabels(names, rotation=30, ha="right", fontsize=8)
        ax.axhline(0, color="black", linewidth=0.6)
        ax.set_title("Per-category metrics")
        ax.legend(fontsize=8)
        fig.tight_layout()
        fig.savefig(out / "category_metrics.png", dpi=110)
        plt.close(fig)
        written.append("category_metrics.png")
    if stats is None:
        stats = [episode_stats(x) for x in lines]
    comp_names = sorted({k for s in stats for k in s.reward_components})
    series_data = [("total reward", [s.reward for s in stats])]
    series_data += [(k, [s.reward_components.get(k, 0.0) for s in stats]) for k in comp_names]
    fig, axes = plt.subplots(
        1, len(series_data), figsize=(3.0 * len(series_data) + 1, 3.4), squeeze=False
    )
    for ax, (name, vals) in zip(axes[0], series_data):
        ax.hist(vals, bins=min(30, max(5, len(set(vals)))), color="#4C72B0")
        ax.set_title(name, fontsize=9)
        ax.set_xlabel("per episode", fontsize=8)
    axes[0][0].set_ylabel("episodes")
    fig.suptitle("Reward and reward-component distributions")
    fig.tight_layout()
    fig.savefig(out / "reward_components.png", dpi=110)
    plt.close(fig)
    written.append("reward_components.png")
    return written, None


# --- ablations ---------------------------------------------------------------------------------
def common_tasks(runs: Mapping[str, Sequence[Mapping[str, Any]]]) -> set[str]:
    """Task ids present in every run (the integrity check compares policies on the same tasks)."""
    sets = [{str(x["task_id"]) for x in lines} for lines in runs.values()]
    return set.intersection(*sets) if sets else set()


def integrity_check(
    scores: Mapping[str, Mapping[str, float | None]],
    degenerate: Sequence[str] = DEGENERATE_POLICIES,
    honest: str | Sequence[str] = ("oracle", "replay"),
) -> list[dict[str, Any]]:
    """Flag reward specs under which a degenerate policy scores at or above an honest one.

    ``scores[spec][policy]`` is the policy's mean reward under the spec on the same tasks. The
    honest reference is the first of ``honest`` (the oracle, else the golden replay) present,
    else the best policy that is not degenerate. One finding per (spec, degenerate policy) with ``flagged`` true when
    ``degenerate_score >= honest_score``; ``honest_policy`` is ``None`` (and nothing is flagged)
    when the grid has no honest policy.
    """
    out = []
    for spec, by_pol in scores.items():
        valid = {p: v for p, v in by_pol.items() if v is not None}
        refs = [honest] if isinstance(honest, str) else list(honest)
        ref = next((h for h in refs if h in valid), None)
        if ref is None:
            cands = {p: v for p, v in valid.items() if p not in degenerate}
            ref = max(cands, key=cands.get) if cands else None  # type: ignore[arg-type]
        for pol in degenerate:
            if pol not in valid:
                continue
            ref_score = valid[ref] if ref is not None else None
            out.append(
                {
                    "spec": spec,
                    "degenerate": pol,
                    "score": valid[pol],
                    "honest_policy": ref,
                    "honest_score": ref_score,
                    "flagged": ref_score is not None and valid[pol] >= ref_score - 1e-12,
                }
            )
    return out


def ablation_report(
    runs: Mapping[str, Sequence[Mapping[str, Any]]], specs: Sequence[Any]
) -> dict[str, Any]:
    """Re-score every run under every spec on the tasks all runs share; with the integrity check.

    ``runs``: policy name -> trajectory lines; ``specs``: :class:`RewardSpec` objects.
    """
    from clarisql.rollouts.metrics import compute_metrics as _cm
    from clarisql.rollouts.metrics import rescore
    from clarisql.rollouts.verdict import discriminates

    tasks = common_tasks(runs)
    scores: dict[str, dict[str, float | None]] = {}
    per_task: dict[str, dict[str, dict[str, float]]] = {}
    by_cat: dict[str, dict[str, dict[str, float]]] = {}
    outcome: dict[str, dict[str, Any]] = {}
    for pol, lines in runs.items():
        kept = [x for x in lines if str(x["task_id"]) in tasks]
        m = _cm(kept)
        outcome[pol] = {
            k: m.get(k)
            for k in (
                "n_episodes",
                "pass@1",
                "phi_0",
                "phi_10",
                "phi_N",
                "ecr",
                "clarifications_per_episode",
                "turns_per_episode",
            )
        }
        for spec in specs:
            r = rescore(kept, spec)
            scores.setdefault(spec.name, {})[pol] = r["reward_mean"]
            by_cat.setdefault(spec.name, {})[pol] = r["by_category"]
            per_task.setdefault(spec.name, {})[pol] = r["by_task"]
    return {
        "n_common_tasks": len(tasks),
        "policies": list(runs),
        "specs": [s.name for s in specs],
        "scores": scores,
        "by_category": by_cat,
        "outcome": outcome,
        "integrity": integrity_check(scores),
        "probes_missing": [p for p in DEGENERATE_POLICIES if p not in runs],
        # per spec: does it score the honest reference differently from doing nothing on some
        # task (``None``: the grid cannot tell; ``False``: every do-nothing policy ties it)
        "applicable": {s: discriminates(per_task.get(s, {})) for s in scores},
    }


def ablation_md(rep: Mapping[str, Any]) -> str:
    pols = rep["policies"]
    parts = [
        "# clarisql reward ablation",
        "",
        f"{len(pols)} policies × {len(rep['specs'])} reward specs, on the {rep['n_common_tasks']} tasks every run shares.",
        "",
        "## Mean episode reward (rows: reward spec, columns: policy)",
        "",
        md_table(
            ["spec"] + pols, [[s] + [rep["scores"][s].get(p) for p in pols] for s in rep["specs"]]
        ),
        "",
        "## Outcome metrics (independent of the reward spec)",
        "",
        md_table(
            ["policy", "episodes", "Pass@1", "φ_0", "φ_10", "φ_N", "ECR", "clarif./ep", "turns/ep"],
            [[p] + list(rep["outcome"][p].values()) for p in pols],
        ),
        "",
        "## Reward integrity check",
        "",
    ]
    findings = rep["integrity"]
    if not findings:
        parts += [
            "No degenerate policy ("
            + ", ".join(DEGENERATE_POLICIES)
            + ") in the grid: nothing to check.",
            "",
        ]
    else:
        flagged = [f for f in findings if f["flagged"]]
        parts += [
            md_table(
                [
                    "spec",
                    "degenerate policy",
                    "its reward",
                    "honest policy",
                    "honest reward",
                    "verdict",
                ],
                [
                    [
                        f["spec"],
                        f["degenerate"],
                        f["score"],
                        f["honest_policy"] or "–",
                        f["honest_score"],
                        "**FLAGGED: gameable**"
                        if f["flagged"]
                        else ("ok" if f["honest_policy"] else "no honest policy"),
                    ]
                    for f in findings
                ],
            ),
            "",
        ]
        if flagged:
            parts += [
                "**Warning:** under "
                + ", ".join(sorted({f["spec"] for f in flagged}))
                + " a degenerate policy scores at or above the honest reference: an agent trained on "
                "that reward can game it on these tasks.",
                "",
            ]
        else:
            parts += ["No reward spec lets a degenerate policy match the honest reference.", ""]
    missing = rep.get("probes_missing") or []
    if missing:
        parts += [
            "Integrity probes not in this grid (not checked): " + ", ".join(missing) + ".",
            "",
        ]
    parts += ["![ablation](ablation.png)", ""]
    return "\n".join(parts)


def plot_ablation(rep: Mapping[str, Any], path: Path) -> bool:
    """One panel per reward spec, one bar per policy (degenerate policies hatched)."""
    plt = _matplotlib()
    if plt is None:
        return False
    specs, pols = rep["specs"], rep["policies"]
    ncols = min(3, len(specs))
    nrows = -(-len(specs) // ncols)
    panel_w = max(4.0, 0.6 * len(pols) + 1.5)
    fig, axes = plt.subplots(nrows, ncols, figsize=(panel_w * ncols, 4.0 * nrows), squeeze=False)
    flat = [ax for row in axes for ax in row]
    for ax in flat[len(specs) :]:
        ax.set_visible(False)
    for ax, spec in zip(flat, specs):
        vals = [rep["scores"][spec].get(p) or 0.0 for p in pols]
        bars = ax.bar(
            range(len(pols)),
            vals,
            color=["#C44E52" if p in DEGENERATE_POLICIES else "#4C72B0" for p in pols],
        )
        for b, p in zip(bars, pols):
            if p in DEGENERATE_POLICIES:
                b.set_hatch("//")
        ax.set_xticks(range(len(pols)))
        ax.set_xticklabels(pols, rotation=35, ha="right", fontsize=8)
        ax.axhline(0, color="black", linewidth=0.6)
        ax.set_title(spec, fontsize=10)
    for row in axes:
        row[0].set_ylabel("mean episode reward")
    fig.suptitle("Reward ablation (hatched: degenerate policies)")
    fig.tight_layout()
    fig.savefig(path, dpi=110)
    plt.close(fig)
    return True


def write_ablation(
    out_dir: str | Path, runs: Mapping[str, Sequence[Mapping[str, Any]]], specs: Sequence[Any]
) -> dict[str, Any]:
    """Write ``ablation.json``, ``ablation.md`` and ``ablation.png`` into ``out_dir``."""
    out = Path(out_dir)
    out.mkdir(parents=True, exist_ok=True)
    rep = ablation_report(runs, specs)
    rep["plot"] = "ablation.png" if plot_ablation(rep, out / "ablation.png") else None
    _write_text(
        out / "ablation.json", json.dumps(rep, indent=2, ensure_ascii=False, default=str) + "\n"
    )
    md = ablation_md(rep)
    if rep["plot"] is None:
        md = md.replace(
            "![ablation](ablation.png)", "_Chart skipped: matplotlib is not installed._"
        )
    _write_text(out / "ablation.md", md)
    return rep
