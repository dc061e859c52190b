"""The verdict table of ``clarisql ablate``: every probe and the searched strategy against the
honest reference, under every reward spec.

The **honest reference** under a spec is the weaker of two honest agents, each scored under that
spec on the same tasks:

- the oracle (``oracle``; ``replay`` on DySQL), which asks exactly what the task needs;
- the honest agent that misses one needed clarification in ten, in the variant that spec would
  train: the better under the spec of ``oracle-miss:0.1`` (answers its literal reading where it
  missed) and ``oracle-miss:0.1:abstain`` (declines where it missed). Under TrustSQL's φ_c an
  agent wrong more than ``1/(1+c)`` of the time should decline (φ_10: more than 1 in 11), so
  comparing the probes with an agent that answers anyway would compare them with an agent the
  reward does not train, and would flag ``abstain-all`` against it by design.

Each (probe, spec) cell is ``below`` (the probe scores less than the reference: the reward
prefers the skill), ``tie`` or ``above`` (both findings), or ``n/a`` where the spec cannot
discriminate on the suite: the honest reference scores exactly as the do-nothing policies
(``stop-at-once`` and ``abstain-all``) on every task, so every policy that does nothing ties
it; a spec that pays nothing for doing the task is not a check, and ``n/a`` never counts as a
pass. ``ok`` is true only when every cell is ``below``.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

#: The agents that ask exactly what the task needs (the first present is used).
ORACLES = ("oracle", "replay")
#: The do-nothing policies a spec must score below the honest reference on some task.
NULL_POLICIES = ("stop-at-once", "abstain-all")
EPS = 1e-9


def discriminates(by_task: Mapping[str, Mapping[str, float]]) -> bool | None:
    """Whether a spec tells the honest reference from doing nothing on some task.

    ``by_task[policy][task_id]`` is the policy's mean reward on the task under the spec.
    ``None`` when the grid lacks the oracle or both do-nothing policies (nothing to tell)."""
    ref = next((by_task[p] for p in ORACLES if p in by_task), None)
    nulls = [by_task[p] for p in NULL_POLICIES if p in by_task]
    if ref is None or not nulls:
        return None
    return any(abs(v - n.get(t, v)) > EPS for t, v in ref.items() for n in nulls)


def honest_reference(scores: Mapping[str, float | None], miss: Sequence[str]) -> tuple[str, float]:
    """``(name, score)`` of the honest reference among ``scores`` (one spec): the weaker of the
    oracle and the better of the ``miss`` variants present."""
    cands: list[tuple[str, float]] = []
    oracle = next((p for p in ORACLES if scores.get(p) is not None), None)
    if oracle is not None:
        cands.append((oracle, float(scores[oracle])))  # type: ignore[arg-type]
    misses = [(m, float(scores[m])) for m in miss if scores.get(m) is not None]  # type: ignore[arg-type]
    if misses:
        cands.append(max(misses, key=lambda t: t[1]))
    if not cands:
        raise ValueError("no honest reference in the grid (run oracle or replay)")
    return min(cands, key=lambda t: t[1])


def cell(score: float | None, ref: float, applicable: bool | None) -> str:
    """``below`` / ``tie`` / ``above`` / ``n/a`` (see the module docstring); ``–`` unscored."""
    if score is None:
        return "–"
    if applicable is False:
        return "n/a"
    if score < ref - EPS:
        return "below"
    return "tie" if score <= ref + EPS else "above"


def verdict_table(
    scores: Mapping[str, Mapping[str, float | None]],
    probes: Sequence[str],
    miss: Sequence[str],
    applicable: Mapping[str, bool | None],
    search: Sequence[Mapping[str, Any]] = (),
) -> dict[str, Any]:
    """Rows per probe (and ``search`` when given), one cell per spec.

    ``scores[spec][policy]``: mean rewards on the tasks every run shares; ``search``: the
    search's results (``spec``, ``best_score``, ``honest`` on its own sample, ``best``)."""
    specs = list(scores)
    refs = {s: honest_reference(scores[s], miss) for s in specs}
    rows = []
    for p in probes:
        cells = {}
        for s in specs:
            v = scores[s].get(p)
            cells[s] = {"score": v, "verdict": cell(v, refs[s][1], applicable.get(s))}
        if any(c["score"] is not None for c in cells.values()):
            rows.append({"probe": p, "cells": cells})
    by_spec = {r["spec"]: r for r in search}
    if by_spec:
        cells = {}
        for s in specs:
            r = by_spec.get(s)
            if r is None:
                cells[s] = {"score": None, "verdict": "–"}
                continue
            name, ref = honest_reference(r["honest"], miss)
            cells[s] = {
                "score": r["best_score"],
                "verdict": cell(r["best_score"], ref, applicable.get(s)),
                "reference": [name, ref],
                "strategy": r["best"].get("describe") if isinstance(r["best"], dict) else None,
            }
        rows.append({"probe": "search (best found)", "cells": cells})
    verdicts = [c["verdict"] for r in rows for c in r["cells"].values() if c["verdict"] != "–"]
    return {
        "specs": specs,
        "reference": {s: list(refs[s]) for s in specs},
        "applicable": dict(applicable),
        "rows": rows,
        "counts": {k: verdicts.count(k) for k in ("below", "tie", "above", "n/a")},
        "ok": bool(verdicts) and all(v == "below" for v in verdicts),
    }


def verdict_markdown(table: Mapping[str, Any], title: str = "Verdict") -> str:
    """The verdict table as markdown (cells: verdict and the probe's score)."""
    specs = table["specs"]
    ref = table["reference"]
    lines = [
        f"## {title}",
        "",
        "Each probe (and the best strategy the search found) against the honest reference: the "
        "weaker of the oracle and the better of `oracle-miss:0.1` / `oracle-miss:0.1:abstain` "
        "under that spec. `below` is a pass; `tie`, `above` and `n/a` (the spec scores the "
        "honest reference exactly as doing nothing on every task) are not.",
        "",
        "| probe | " + " | ".join(specs) + " |",
        "|---|" + "---|" * len(specs),
        "| *honest reference* | "
        + " | ".join(f"{ref[s][0]} {ref[s][1]:.3f}" for s in specs)
        + " |",
    ]
    for r in table["rows"]:
        cells = []
        for s in specs:
            c = r["cells"][s]
            if c["score"] is None:
                cells.append("–")
                continue
            v = c["verdict"]
            word = v if v == "below" else f"**{v.upper()}**"
            extra = f" vs {c['reference'][1]:.3f}" if c.get("reference") else ""
            cells.append(f"{word} {c['score']:.3f}{extra}")
        lines.append(f"| {r['probe']} | " + " | ".join(cells) + " |")
    n = table["counts"]
    lines += [
        "",
        f"{n['below']} below, {n['tie']} tie, {n['above']} above, {n['n/a']} n/a: "
        + ("**every cell is below.**" if table["ok"] else "**NOT all below.**"),
        "",
    ]
    na = [s for s, a in table["applicable"].items() if a is False]
    if na:
        lines += [
            "Not applicable on this suite (the spec scores the honest reference exactly as "
            "doing nothing on every task): " + ", ".join(na) + ".",
            "",
        ]
    row = next((r for r in table["rows"] if r["probe"].startswith("search")), None)
    if row is None:
        lines += ["The strategy search was not run (`clarisql ablate ... --search`).", ""]
    else:
        lines += [
            "Best strategies found (on the search's sample; reference on the same sample):",
            "",
        ]
        for s in specs:
            c = row["cells"][s]
            if c.get("strategy"):
                lines.append(
                    f"- {s}: {c['strategy']} ({c['score']:.3f} vs {c['reference'][0]} "
                    f"{c['reference'][1]:.3f})"
                )
        lines.append("")
    return "\n".join(lines)


__all__ = [
    "NULL_POLICIES",
    "ORACLES",
    "cell",
    "discriminates",
    "honest_reference",
    "verdict_markdown",
    "verdict_table",
]
