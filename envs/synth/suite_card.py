"""``SUITE.md``: what a synthesized suite holds and how it was made.

:func:`write_card` writes counts per category, unanswerable kind, underspecification label kind,
difficulty, type and table; the mixture asked for and what was made; the discovered join and
union pairs; the shortfalls (which categories the data did not allow, and why); notes (LLM
fallback) and the time each stage took. It is a report for people: unlike ``tasks.jsonl`` it
holds timings and is not byte-identical between runs.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from clarisql.envs.synth.config import SynthConfig, SynthResult


def _table(title: str, counts: Counter, total: int) -> list[str]:
    lines = [f"### {title}", "", "| value | tasks | share |", "|---|---:|---:|"]
    for k, n in sorted(counts.items(), key=lambda kv: (-kv[1], str(kv[0]))):
        lines.append(f"| {k} | {n} | {n / max(1, total):.1%} |")
    return [*lines, ""]


def _counts(values: Iterable[object]) -> Counter:
    return Counter(str(v) for v in values)


def card_text(result: SynthResult, config: SynthConfig) -> str:
    tasks = result.tasks
    n = len(tasks)
    md = [t.metadata for t in tasks]
    lines = [
        "# Synthesized suite",
        "",
        f"{n} tasks over `{result.db_path.name}` ({len(result.lake.tables)} tables), "
        f"made by `clarisql synth` from {', '.join(f'`{s}`' for s in config.sources)} "
        f"with seed {config.seed}, {'LLM ' + config.llm if config.llm else 'offline templates'}.",
        "",
        "Run it: `clarisql eval --suite tasks.jsonl --policy oracle --out RUN` "
        "(also `naive`, `abstain-all`).",
        "",
        "## How it was made",
        "",
        "1. Ingest: the sources became one SQLite database (raw values kept; SQL casts).",
        "2. Profile: per-column kind, distinct count, missing share, samples, key candidates; "
        "OrQA's low-information columns skipped.",
        f"3. Discovery: {len(result.lake.joins)} joinable column pairs and "
        f"{len(result.lake.unions)} unionable table pairs ({result.discovery.method}, "
        f"{result.discovery.columns} candidate columns).",
        _withheld_line(result),
        "4. Answerable drafts at three difficulties x three types, every gold query executed "
        f"in the sandbox (at most {config.step_budget // 2:,} SQLite steps, half the episode's "
        f"statement budget; at most {config.max_rows} rows).",
        "5. Layers: underspecified (ODUTQA-MDC), unanswerable (TrustSQL's five kinds), writes "
        "(DySQL-style), each checked on the data.",
        "",
        "## Mixture",
        "",
        "| category group | asked | made |",
        "|---|---:|---:|",
    ]
    for k in result.wanted:
        lines.append(f"| {k} | {result.wanted[k]} | {result.made.get(k, 0)} |")
    lines += ["", "## Counts", ""]
    lines += _table("Category", _counts(t.category for t in tasks), n)
    kinds = [t.unanswerable_kind for t in tasks if t.unanswerable_kind]
    if kinds:
        lines += _table("Unanswerable kind", _counts(kinds), len(kinds))
    labels = [u.label.kind for t in tasks for u in t.underspecs]
    if labels:
        lines += _table("Underspecification label kind", _counts(labels), len(labels))
    lines += _table("Difficulty", _counts(m.get("difficulty", "-") for m in md), n)
    lines += _table("Type", _counts(m.get("qtype", "-") for m in md), n)
    lines += _table("Layer", _counts(m.get("layer", "-") for m in md), n)
    lines += _table("Tables", _counts(tb for m in md for tb in m.get("tables", [])), n)
    lines += _pairs(result)
    lines += ["## Shortfalls", ""]
    if result.shortfalls:
        lines += [f"- **{k}**: {v}" for k, v in sorted(result.shortfalls.items())]
    else:
        lines.append("None: every category and cell the mixture asked for was filled.")
    lines += ["", "## Notes and timings", ""]
    lines += [f"- {note}" for note in result.notes]
    lines += [f"- {k}: {v:.2f} s" for k, v in result.timings.items()]
    r = result.draft_report
    lines.append(f"- draft attempts: {r.attempts}; rejected: {dict(r.rejected.most_common(5))}")
    return "\n".join(lines) + "\n"


def _withheld_line(result: SynthResult) -> str:
    got = result.lake.withheld
    if not got:
        return "   Withheld: no column (column-related requests ask what the rows' kind has in the world)."
    cols = ", ".join(f"`{t}.{c}` ({w or 'not asked'})" for t, c, w in got)
    return (
        f"   Withheld: {len(got)} column(s) dropped from `{result.db_path.name}` (the sources keep "
        f"them) for column-related requests to ask: {cols}."
    )


def _pairs(result: SynthResult) -> list[str]:
    lines = ["## Discovered pairs (top 10 each)", ""]
    for j in result.lake.joins[:10]:
        lines.append(
            f"- join `{j.left[0]}.{j.left[1]}` -> `{j.right[0]}.{j.right[1]}`: "
            f"containment {j.containment:.2f}, score {j.score:.1f}/10"
        )
    for u in result.lake.unions[:10]:
        lines.append(
            f"- union `{u.left}` + `{u.right}` ({len(u.column_map)} columns): score {u.score:.1f}/10"
        )
    if not result.lake.joins and not result.lake.unions:
        lines.append("- none")
    return [*lines, ""]


def write_card(result: SynthResult, config: SynthConfig) -> None:
    """Write ``result.card_path``."""
    result.card_path.write_text(card_text(result, config), encoding="utf-8")


__all__ = ["card_text", "write_card"]
