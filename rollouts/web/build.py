"""Build the self-contained report page: read run folders, compact their episodes, inline all.

The page is plain HTML + CSS + vanilla JavaScript kept as package data beside this module. The
episode data goes in once as JSON; the page renders the list one page at a time and each episode
only when it is opened, so a large run stays responsive.
"""

from __future__ import annotations

import base64
import hashlib
import html
import json
import math
import re
from collections.abc import Mapping, Sequence
from importlib import resources
from pathlib import Path
from typing import Any

from clarisql.rollouts.metrics import compute_metrics
from clarisql.rollouts.store import read_trajectories

#: Observations longer than this are cut in the page (the trajectory file keeps them whole).
MAX_OBS_CHARS = 4000
#: Answer / gold rows shown per episode.
MAX_ROWS = 20
#: Metrics copied into the page per run (and per category).
HEADLINE_KEYS = (
    "n_episodes",
    "n_tasks",
    "trials",
    "pass@1",
    "phi_0",
    "phi_10",
    "phi_N",
    "ecr",
    "table_f1",
    "clarifications_per_episode",
    "turns_per_episode",
    "sql_errors_per_episode",
    "invalid_actions_per_episode",
    "abstain_rate",
    "hallucination_rate",
    "reward_mean",
)
PAGE_VERSION = 1


def _finite(v: Any) -> Any:
    """JSON has no NaN/inf: such floats become ``None``."""
    if isinstance(v, float) and not math.isfinite(v):
        return None
    if isinstance(v, dict):
        return {k: _finite(x) for k, x in v.items()}
    if isinstance(v, (list, tuple)):
        return [_finite(x) for x in v]
    return v


def _clip(text: Any, n: int = MAX_OBS_CHARS) -> str:
    s = "" if text is None else str(text)
    return s if len(s) <= n else s[:n] + f"\n… ({len(s) - n} more characters)"


def _rows(rows: Any) -> Any:
    if not isinstance(rows, list):
        return None
    return {"n": len(rows), "rows": rows[:MAX_ROWS]}


def compact_episode(line: Mapping[str, Any], run: int) -> dict[str, Any]:
    """One trajectory line as the page stores it (short keys; gold facts kept per task).

    Keys: ``r`` run index, ``t`` task id, ``k`` trial, ``c`` category, ``ok`` correct (0/1),
    ``e`` end reason, ``w`` reward, ``q`` clarifications asked, ``o`` opening message, ``f``
    final SQL, ``u`` turns (``a`` action, ``o`` observation, ``w`` reward, ``rc`` components,
    ``x`` error), ``rc`` episode reward components, ``rv`` revealed labels, ``ans`` / ``gr``
    answer and gold rows (``{"n", "rows"}``), ``sd`` state difference (write tasks), ``ge``
    gold error.
    """
    summary = line.get("summary")
    summary = summary if isinstance(summary, Mapping) else {}
    record = summary.get("record")
    record = record if isinstance(record, Mapping) else {}
    raw_turns = line.get("turns")
    turns = []
    asked = 0
    for t in raw_turns if isinstance(raw_turns, list) else []:
        if not isinstance(t, Mapping):
            continue
        act = t.get("action")
        if isinstance(act, Mapping) and act.get("type") == "clarify" and not t.get("error"):
            asked += 1
        turn: dict[str, Any] = {"a": act, "o": _clip(t.get("observation")), "w": t.get("reward")}
        turn["w"] = _num(turn["w"])
        if t.get("reward_components"):
            turn["rc"] = _nums(t["reward_components"])
        if t.get("error"):
            turn["x"] = t["error"]
        turns.append(turn)
    ep: dict[str, Any] = {
        "r": run,
        "t": str(line.get("task_id")),
        "k": _int(line.get("trial")),
        "c": str(line.get("category")),
        "ok": 1 if line.get("correct") else 0,
        "e": _str(line.get("end") or record.get("end")),
        "w": _num(line.get("reward")) or 0.0,
        "q": asked,
        "o": str(line.get("opening") or ""),
        "f": _str(line.get("final_sql")),
        "u": turns,
        "rc": _nums(summary.get("reward_components")),
    }
    if summary.get("revealed"):
        ep["rv"] = summary["revealed"]
    if record.get("answer_rows") is not None:
        ep["ans"] = _rows(record["answer_rows"])
    if record.get("gold_rows") is not None:
        ep["gr"] = _rows(record["gold_rows"])
    if summary.get("state_diff"):
        ep["sd"] = summary["state_diff"]
    if summary.get("gold_error"):
        ep["ge"] = summary["gold_error"]
    return ep


def _int(v: Any) -> int:
    return v if isinstance(v, int) and not isinstance(v, bool) else 0


def _read_json(path: Path) -> dict[str, Any]:
    try:
        obj = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return {}
    return obj if isinstance(obj, dict) else {}


#: Plots ``clarisql eval`` writes whose data the page draws itself (as SVG, in the theme's
#: colours), so their PNG files are not embedded.
DRAWN_IN_PAGE = frozenset({"category_metrics.png", "reward_components.png"})
#: A plot larger than this is not embedded (a run's own plots are ~50 KB).
MAX_PLOT_BYTES = 4 * 1024 * 1024
_PNG_MAGIC = b"\x89PNG\r\n\x1a\n"


def _plots(run_dir: Path, metrics: Mapping[str, Any]) -> list[dict[str, str]]:
    """Extra PNG plots named in ``metrics["plots"]``, as ``data:`` URIs.

    Only a plain file name or relative path that resolves (symbolic links followed) to a PNG file
    inside ``run_dir``, at most :data:`MAX_PLOT_BYTES`, is embedded: a tampered ``metrics.json``
    cannot pull another file of the machine into the page. The run's own two plots are drawn by
    the page instead (:data:`DRAWN_IN_PAGE`).
    """
    names = metrics.get("plots")
    if not isinstance(names, list):
        return []
    try:
        root = run_dir.resolve(strict=True)
    except OSError:
        return []
    out = []
    for name in names:
        if not isinstance(name, str) or not name or name in DRAWN_IN_PAGE:
            continue
        rel = Path(name)
        if rel.is_absolute() or ".." in rel.parts or rel.suffix.lower() != ".png":
            continue
        try:
            p = (root / rel).resolve(strict=True)
            if not p.is_relative_to(root) or not p.is_file():
                continue
            if p.stat().st_size > MAX_PLOT_BYTES:
                continue
            data = p.read_bytes()
        except OSError:
            continue
        if not data.startswith(_PNG_MAGIC):
            continue
        uri = "data:image/png;base64," + base64.b64encode(data).decode("ascii")
        out.append({"name": rel.stem.replace("_", " "), "src": uri})
    return out


def _num(v: Any) -> float | int | None:
    """A metric value as the page shows it: a finite number, else ``None``."""
    if isinstance(v, bool) or not isinstance(v, (int, float)):
        return None
    return v if math.isfinite(v) else None


def _nums(d: Any) -> dict[str, Any]:
    """A mapping of metric name -> number (nested mappings kept, anything else dropped)."""
    if not isinstance(d, Mapping):
        return {}
    out: dict[str, Any] = {}
    for k, v in d.items():
        out[str(k)] = _nums(v) if isinstance(v, Mapping) else _num(v)
    return out


def _run_summary(
    run_dir: Path, lines: Sequence[Mapping[str, Any]], name: str, filtered: bool
) -> dict[str, Any]:
    cfg = _read_json(run_dir / "run.json").get("config") or {}
    metrics = {} if filtered else _read_json(run_dir / "metrics.json")
    if not metrics or metrics.get("n_episodes") != len(lines):
        metrics = compute_metrics(lines) if lines else {}
    reward = cfg.get("reward")
    by_category = metrics.get("by_category")
    by_category = by_category if isinstance(by_category, Mapping) else {}
    return {
        "name": name,
        "dir": str(run_dir),
        "policy": _str(cfg.get("policy")),
        "suite": _str(cfg.get("suite")),
        "reward_spec": _str(reward.get("name") if isinstance(reward, Mapping) else reward),
        "headline": {k: _num(metrics.get(k)) for k in HEADLINE_KEYS if k in metrics},
        "pass_k": {"at": _nums(metrics.get("pass@k")), "hat": _nums(metrics.get("pass^k"))},
        "by_category": {
            str(cat): {k: _num(m.get(k)) for k in HEADLINE_KEYS if k in m}
            | {
                "detection": {
                    cl: _nums(_nums(m.get("detection")).get(cl))
                    for cl in ("select", "from", "where")
                }
            }
            for cat, m in by_category.items()
            if isinstance(m, Mapping)
        },
        "detection": _nums(metrics.get("detection")),
        "end_reasons": _nums(metrics.get("end_reasons")),
        "reward_components": _nums(metrics.get("reward_components")),
        "plots": [] if filtered else _plots(run_dir, metrics),
    }


def _str(v: Any) -> str | None:
    return None if v is None else str(v)


def _run_names(run_dirs: Sequence[Path]) -> list[str]:
    names = []
    for d in run_dirs:
        pol = (_read_json(d / "run.json").get("config") or {}).get("policy")
        names.append(str(pol) if pol else d.name)
    dup = {n for n in names if names.count(n) > 1}
    return [f"{n} ({d.name})" if n in dup else n for n, d in zip(names, run_dirs)]


def page_data(
    run_dirs: Sequence[str | Path],
    *,
    lines_by_run: Sequence[Sequence[Mapping[str, Any]] | None] | None = None,
    select: Any = None,
) -> dict[str, Any]:
    """The JSON object the page reads.

    ``{"v", "runs": [run summary...], "gold": {task_id: gold facts}, "episodes": [compact
    episode...]}`` (see :func:`compact_episode`). ``lines_by_run`` gives the trajectory lines
    instead of reading ``RUN/trajectories.jsonl`` (``None`` for a run: read its file); ``select``, when given, is a callable that
    filters each run's lines (the run's metrics are then recomputed on what is kept).
    """
    dirs = [Path(d) for d in run_dirs]
    if not dirs:
        raise ValueError("no run folder given")
    names = _run_names(dirs)
    runs, episodes, gold = [], [], {}
    for i, d in enumerate(dirs):
        if lines_by_run is not None and lines_by_run[i] is not None:
            lines = list(lines_by_run[i])
        else:
            f = d / "trajectories.jsonl"
            if not f.is_file():
                raise FileNotFoundError(f"{d} is not a run folder (no trajectories.jsonl)")
            lines = read_trajectories(f)
        if select is not None:
            kept = list(select(lines))
            filtered = len(kept) != len(lines)
            lines = kept
        else:
            filtered = False
        runs.append(_run_summary(d, lines, names[i], filtered))
        for x in lines:
            episodes.append(compact_episode(x, i))
            gold.setdefault(str(x.get("task_id")), x.get("gold") or {})
    return _finite({"v": PAGE_VERSION, "runs": runs, "gold": gold, "episodes": episodes})


def _asset(name: str) -> str:
    return resources.files("clarisql.rollouts.web").joinpath(name).read_text(encoding="utf-8")


_PLACEHOLDERS = re.compile(r"/\*CSS\*/|/\*JS\*/|/\*DATA\*/|__TITLE__|__CSP__")


def content_security_policy(script: str) -> str:
    """The page's Content-Security-Policy: only its own inline script (by SHA-256) runs; no
    network at all; images only as ``data:`` URIs; inline styles allowed (no script in them)."""
    digest = base64.b64encode(hashlib.sha256(script.encode("utf-8")).digest()).decode("ascii")
    return (
        f"default-src 'none'; script-src 'sha256-{digest}'; style-src 'unsafe-inline'; "
        "img-src data:; base-uri 'none'; form-action 'none'"
    )


def render_page(data: Mapping[str, Any], title: str | None = None) -> str:
    """The page's HTML for :func:`page_data`'s object (everything inlined).

    Every string from the run folders travels as JSON data and is escaped by the page before it
    is shown; the Content-Security-Policy (:func:`content_security_policy`) lets only the page's
    own script run, so markup that slipped through still could not execute.
    """
    # "<" escaped everywhere so no string in the data can close the <script> block
    blob = json.dumps(data, ensure_ascii=False, separators=(",", ":"), default=str)
    blob = blob.replace("<", "\\u003c").replace("\u2028", "\\u2028").replace("\u2029", "\\u2029")
    if title is None:
        title = "clarisql · " + " vs ".join(str(r["name"]) for r in data["runs"])
    script = _asset("page.js")
    parts = {
        "/*CSS*/": _asset("page.css"),
        "/*JS*/": script,
        "/*DATA*/": blob,
        "__TITLE__": html.escape(title),
        "__CSP__": html.escape(content_security_policy(script)),
    }
    # one pass over the template: nothing inserted is scanned for placeholders again
    return _PLACEHOLDERS.sub(lambda m: parts[m.group(0)], _asset("page.html"))


def build_report(
    run_dirs: Sequence[str | Path],
    out: str | Path,
    *,
    title: str | None = None,
    lines_by_run: Sequence[Sequence[Mapping[str, Any]] | None] | None = None,
    select: Any = None,
) -> int:
    """Write the page for ``run_dirs`` to ``out``; return the number of episodes it holds."""
    data = page_data(run_dirs, lines_by_run=lines_by_run, select=select)
    path = Path(out)
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(render_page(data, title), encoding="utf-8")
    return len(data["episodes"])
