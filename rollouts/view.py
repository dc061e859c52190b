"""Reading saved trajectories: in the terminal (rich) and as one self-contained HTML page.

The terminal view renders episodes with rich; the HTML page (:func:`export_html`) is built by
:mod:`clarisql.rollouts.web`: headline metrics, plots, filterable episode list, episode view and,
for several runs, a comparison. It needs no server and no network.
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from rich.console import Console, Group, RenderableType
from rich.markup import escape
from rich.panel import Panel
from rich.syntax import Syntax
from rich.table import Table
from rich.text import Text

from clarisql.rollouts.store import read_trajectories

MAX_OBS_CHARS = 1500


def select_lines(
    lines: Sequence[Mapping[str, Any]],
    *,
    task: str | None = None,
    category: str | None = None,
    failed: bool = False,
    trial: int | None = None,
    limit: int | None = None,
) -> list[Mapping[str, Any]]:
    """Filter trajectory lines: ``task`` is an exact id or a substring of one."""
    out = []
    for x in lines:
        tid = str(x.get("task_id"))
        if task is not None and tid != task and task not in tid:
            continue
        if category is not None and x.get("category") != category:
            continue
        if failed and x.get("correct"):
            continue
        if trial is not None and int(x.get("trial", 0)) != trial:
            continue
        out.append(x)
        if limit is not None and len(out) >= limit:
            break
    return out


def _clip(text: str, n: int = MAX_OBS_CHARS) -> str:
    return text if len(text) <= n else text[:n] + f"\n… ({len(text) - n} more characters)"


def _sql(sql: Any) -> RenderableType:
    return Syntax(str(sql), "sql", word_wrap=True, background_color="default")


def render_episode(line: Mapping[str, Any]) -> Panel:
    """One episode as a rich panel: the dialogue, every action with its result and reward."""
    ok = bool(line.get("correct"))
    parts: list[RenderableType] = [
        Text.from_markup(f"[bold cyan]User:[/] {escape(str(line.get('opening', '')))}")
    ]
    for i, t in enumerate(line.get("turns") or [], 1):
        act = t.get("action")
        comps = t.get("reward_components") or {}
        rew = f"  [dim]reward {t.get('reward', 0.0):+.3f} {escape(json.dumps(comps)) if comps else ''}[/]"
        if isinstance(act, Mapping):
            kind = act.get("type")
            if kind == "clarify":
                labels = ", ".join(
                    json.dumps(lb, ensure_ascii=False) for lb in act.get("labels") or []
                )
                parts.append(
                    Text.from_markup(
                        f"[bold magenta]{i}. ask_user:[/] {escape(str(act.get('question', '')))}"
                        + (f"  [yellow]labels: {escape(labels)}[/]" if labels else "")
                        + rew
                    )
                )
            elif kind == "execute":
                parts.append(Text.from_markup(f"[bold magenta]{i}. execute_sql[/]" + rew))
                parts.append(_sql(act.get("sql")))
            elif kind == "abstain":
                parts.append(
                    Text.from_markup(
                        f"[bold magenta]{i}. abstain:[/] {escape(str(act.get('reason', '')))}" + rew
                    )
                )
            else:
                parts.append(Text.from_markup(f"[bold magenta]{i}. stop[/]" + rew))
                if act.get("sql"):
                    parts.append(_sql(act["sql"]))
        else:
            parts.append(
                Text.from_markup(
                    f"[bold red]{i}. invalid action:[/] {escape(_clip(str(act), 500))}" + rew
                )
            )
        obs = _clip(str(t.get("observation", "")))
        style = (
            "red"
            if t.get("error")
            else "green"
            if isinstance(act, Mapping) and act.get("type") == "execute"
            else "cyan"
        )
        who = (
            "User"
            if isinstance(act, Mapping) and act.get("type") == "clarify" and not t.get("error")
            else "Env"
        )
        parts.append(Text(f"   {who}: " + obs.replace("\n", "\n   "), style=style))
    gold = line.get("gold") or {}
    facts = Table.grid(padding=(0, 1))
    facts.add_column(style="bold")
    facts.add_column()
    if gold.get("labels"):
        facts.add_row("gold labels", json.dumps(gold["labels"], ensure_ascii=False))
    if not gold.get("answerable", True):
        facts.add_row("gold", f"unanswerable ({gold.get('unanswerable_kind')})")
    if gold.get("gold_sql"):
        facts.add_row("gold SQL", _sql(gold["gold_sql"]))
    if gold.get("gold_actions"):
        facts.add_row("gold actions", _sql(";\n".join(gold["gold_actions"])))
    if line.get("final_sql"):
        facts.add_row("final SQL", _sql(line["final_sql"]))
    revealed = (line.get("summary") or {}).get("revealed")
    if revealed:
        facts.add_row("revealed", json.dumps(revealed, ensure_ascii=False))
    facts.add_row(
        "reward",
        f"{line.get('reward', 0.0):+.3f}  {json.dumps((line.get('summary') or {}).get('reward_components') or {})}",
    )
    parts += [Text(""), facts]
    title = (
        f"{'✓' if ok else '✗'} {escape(str(line.get('task_id')))} · trial {line.get('trial', 0)} · "
        f"{escape(str(line.get('category')))} · {line.get('end')} · reward {line.get('reward', 0.0):+.3f}"
    )
    return Panel(
        Group(*parts), title=title, title_align="left", border_style="green" if ok else "red"
    )


def render_header(run_dir: Path, n_shown: int, n_total: int) -> RenderableType:
    cfg = {}
    run_file = run_dir / "run.json"
    if run_file.is_file():
        try:
            cfg = json.loads(run_file.read_text(encoding="utf-8")).get("config", {})
        except ValueError:
            cfg = {}
    t = Table(title=f"clarisql run {run_dir}", show_header=False, box=None)
    t.add_column(style="bold")
    t.add_column()
    for k in ("policy", "suite", "trials"):
        if k in cfg:
            t.add_row(k, str(cfg[k]))
    mfile = run_dir / "metrics.json"
    if mfile.is_file():
        try:
            m = json.loads(mfile.read_text(encoding="utf-8"))
            t.add_row(
                "metrics",
                "  ".join(
                    f"{k} {m[k]:.3f}"
                    for k in ("pass@1", "phi_10", "ecr")
                    if isinstance(m.get(k), (int, float))
                ),
            )
        except ValueError:
            pass
    t.add_row("episodes", f"{n_shown} shown of {n_total}")
    return t


def view_run(run_dir: str | Path, console: Console | None = None, **filters: Any) -> int:
    """Print the selected episodes of a run; return how many were shown."""
    d = Path(run_dir)
    lines = read_trajectories(d / "trajectories.jsonl")
    con = console or Console()
    where = d / "trajectories.jsonl"
    try:
        chosen = select_lines(lines, **filters)
        header = render_header(d, len(chosen), len(lines))
    except (AttributeError, TypeError, ValueError, KeyError) as e:
        raise ValueError(f"{where}: malformed episode lines ({type(e).__name__})") from None
    con.print(header)
    for x in chosen:
        try:  # (a line of the wrong shape, e.g. edited by hand: one line, not a traceback)
            panel = render_episode(x)
        except (AttributeError, TypeError, ValueError, KeyError) as e:
            task = str(x.get("task_id"))[:80] if isinstance(x, Mapping) else "?"
            raise ValueError(
                f"{where}: episode {task!r} is malformed ({type(e).__name__}: "
                f"{str(e)[:120]}): a field has the wrong type"
            ) from None
        con.print(panel)
    return len(chosen)


def export_html(
    run_dirs: str | Path | Sequence[str | Path], html_file: str | Path, **filters: Any
) -> int:
    """Write the report page of one or several runs (:func:`clarisql.rollouts.web.build_report`)
    to ``html_file``; ``filters`` (those of :func:`select_lines`) narrow each run's episodes.
    Returns how many episodes the page holds."""
    from clarisql.rollouts.web import build_report

    dirs = [run_dirs] if isinstance(run_dirs, (str, Path)) else list(run_dirs)
    active = {k: v for k, v in filters.items() if v not in (None, False)}
    select = (lambda lines: select_lines(lines, **active)) if active else None
    return build_report(dirs, html_file, select=select)
