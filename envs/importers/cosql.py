"""CoSQL dialogues to a suite: clarification turns become underspecified tasks.

Input: ``SRC/*.json`` files holding dialogues (a list, or an object keyed by dialogue id), each
``{"db_id", "turns": [...]}`` as in CoSQL's ``cosql_all_info_dialogs.json``: turns ``{"isUser":
bool, "text": str, "label": [dialogue acts]}``, and the SQL of a user request in the unlabelled
turn after it (``{"rawSql": ...}``); a user turn may also carry its SQL itself (``query`` /
``sql``), and ``dialogue_act`` / ``DA`` / ``act`` are read as the acts too. SParC-style
``{"database_id", "interaction": [{"utterance", "query"}]}`` records (no clarification turns) are
read as user-only dialogues. Databases: ``SRC/database/<db_id>/<db_id>.sqlite``.

Per user turn, in dialogue order (``context`` = the turns before it, user and system, as
``{"role", "content"}``; never folded into the utterance):

- answered by the system with ``CLARIFY`` and resolved by later user turn(s) carrying SQL: an
  underspecified task, ``utterance`` = the unclear request, one label ``intent`` whose value is
  the user's answer (CoSQL does not say which clause was unclear, so the label is the SELECT-
  level one; ``metadata["clarification"]`` keeps the system's question), gold = the SQL that
  resolved it, category ``select``;
- carrying SQL itself: a well-specified task (a follow-up question needs its ``context``);
- answered by the system with ``CANNOT_ANSWER``: an unanswerable task of kind ``unknown`` (CoSQL
  does not say why), or the record's ``unanswerable_kind`` when it names one.

Every gold query is made sandbox-safe and checked (:func:`~.common.make_safe`).
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from clarisql.envs.importers.common import (
    ImportFormatError,
    ImportReport,
    SuiteWriter,
    check_source,
    find_database,
    prepare_out,
    read_json,
)
from clarisql.envs.tasks import ALL_UNANSWERABLE_KINDS, Label, Underspec


def _acts(turn: dict[str, Any]) -> set[str]:
    raw = turn.get("label", turn.get("dialogue_act", turn.get("DA", turn.get("act", []))))
    items = raw if isinstance(raw, list) else [raw]
    return {str(a).strip().upper() for a in items if a}


def _sql(turn: dict[str, Any]) -> str | None:
    q = turn.get("query", turn.get("sql", turn.get("rawSql")))
    return q if isinstance(q, str) and q.strip() else None


def _events(turns: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """The dialogue as user / assistant events; an unlabelled SQL turn (CoSQL's ``rawSql``)
    gives its SQL to the user request before it and is not itself a turn anyone said."""
    events: list[dict[str, Any]] = []
    for turn in turns:
        acts, sql = _acts(turn), _sql(turn)
        role = _role(turn)
        if sql and not acts and "rawSql" in turn:  # the annotator's SQL for the last request
            for ev in reversed(events):
                if ev["role"] == "user":
                    if ev["sql"] is None:
                        ev["sql"] = sql
                    break
            continue
        text = str(turn.get("text", "")).strip()
        if text:
            events.append(
                {
                    "role": role,
                    "text": text,
                    "acts": acts,
                    "sql": sql if role == "user" else None,
                    "raw": turn,
                }
            )
    return events


def _dialogues(data: Any) -> list[tuple[str, dict[str, Any]]]:
    if isinstance(data, dict):
        items = [(str(k), v) for k, v in data.items()]
    elif isinstance(data, list):
        items = [
            (str(d.get("dialogue_id", d.get("id", i))) if isinstance(d, dict) else str(i), d)
            for i, d in enumerate(data)
        ]
    else:
        return []
    out = []
    for did, d in items:
        if not isinstance(d, dict):
            continue
        if "turns" in d and isinstance(d["turns"], list):
            out.append((did, {"db_id": d.get("db_id", d.get("database_id")), "turns": d["turns"]}))
        elif "interaction" in d and isinstance(d["interaction"], list):  # SParC-style records
            turns = [
                {"isUser": True, "text": t.get("utterance", ""), "query": t.get("query")}
                for t in d["interaction"]
                if isinstance(t, dict)
            ]
            out.append((did, {"db_id": d.get("database_id", d.get("db_id")), "turns": turns}))
    return out


def _role(turn: dict[str, Any]) -> str:
    return "user" if turn.get("isUser", turn.get("role") == "user") else "assistant"


def import_cosql(
    src: str | Path,
    out: str | Path,
    *,
    files: list[str] | None = None,
    db_dir: str | Path | None = None,
    clarifications_only: bool = False,
    limit: int | None = None,
    link: bool = False,
) -> ImportReport:
    """Import CoSQL dialogues from ``src`` into suite folder ``out`` (see the module docstring)."""
    s = check_source(src)
    w = SuiteWriter("cosql", s, prepare_out(out), link=link)
    paths = [s / f for f in files] if files else sorted(s.glob("*.json"))
    dialogues = []
    for p in paths:
        found = _dialogues(read_json(p))
        if not found and files:
            raise ImportFormatError(f"{p}: holds no CoSQL dialogues ({{db_id, turns}})")
        dialogues += [(p.stem, did, d) for did, d in found]
    if not dialogues:
        raise ImportFormatError(f"{s}: no JSON file holds CoSQL dialogues ({{db_id, turns}})")
    for stem, did, d in dialogues[:limit] if limit else dialogues:
        _convert(w, s, stem, did, d, Path(db_dir) if db_dir else None, clarifications_only)
    return w.finish()


def _convert(
    w: SuiteWriter,
    src: Path,
    stem: str,
    did: str,
    d: dict[str, Any],
    db_dir: Path | None,
    clarifications_only: bool,
) -> None:
    db_id, turns = d["db_id"], d["turns"]
    base = f"{stem}/{did}"
    if not isinstance(db_id, str) or not all(
        isinstance(t, dict) and isinstance(t.get("text", ""), str) for t in turns
    ):
        w.report.read += 1
        w.drop(base, "record: needs a string 'db_id' and turns with string 'text'")
        return
    path = find_database(src, db_id, db_dir)
    if path is None:
        w.report.read += 1
        w.drop(base, f"database: {db_id}/{db_id}.sqlite not found")
        return
    ref = w.database(db_id, path)
    events = _events(turns)
    history: list[dict[str, str]] = []
    pending: dict[str, Any] | None = None  # an unclear request waiting for its resolution
    for i, ev in enumerate(events):
        role, text, sql = ev["role"], ev["text"], ev["sql"]
        nxt = events[i + 1] if i + 1 < len(events) else None
        next_acts = nxt["acts"] if nxt is not None and nxt["role"] == "assistant" else set()
        if role == "user":
            item = f"{base}/{i}"
            if pending is not None:
                pending["answers"].append(text)
                if sql:
                    w.report.read += 1
                    _emit_clarified(w, pending, sql, ref, db_id)
                    pending = None
            elif "CLARIFY" in next_acts and not sql:
                pending = {
                    "item": item,
                    "context": list(history),
                    "text": text,
                    "question": nxt["text"] if nxt is not None else "",
                    "answers": [],
                }
            elif sql and not clarifications_only:
                w.report.read += 1
                g = w.gold(item, sql, ref)
                if g is not None:
                    task = w.add(
                        id=item,
                        db=ref,
                        utterance=text,
                        gold_sql=g.sql,
                        context=list(history),
                        metadata=_meta(db_id, g.rewritten, sql),
                    )
                    if task is not None:
                        w.report.rewritten += g.rewritten
                        w.report.empty_gold += g.rows == []
            elif "CANNOT_ANSWER" in next_acts and not sql and not clarifications_only:
                w.report.read += 1
                kind = ev["raw"].get("unanswerable_kind")
                kind = kind if kind in ALL_UNANSWERABLE_KINDS else "unknown"
                w.add(
                    id=item,
                    db=ref,
                    utterance=text,
                    category=f"unanswerable:{kind}",
                    answerable=False,
                    unanswerable_kind=kind,
                    context=list(history),
                    metadata={
                        "source": "cosql",
                        "db_id": db_id,
                        "system_reply": nxt["text"] if nxt is not None else "",
                    },
                )
        history.append({"role": role, "content": text})
    if pending is not None:
        w.report.read += 1
        w.drop(pending["item"], "dialogue: the clarification is never resolved by a turn with SQL")


def _meta(db_id: str, rewritten: bool, sql: str) -> dict[str, Any]:
    m: dict[str, Any] = {"source": "cosql", "db_id": db_id}
    if rewritten:
        m["original_sql"] = sql
    return m


def _emit_clarified(w: SuiteWriter, p: dict[str, Any], sql: str, ref: str, db_id: str) -> None:
    g = w.gold(p["item"], sql, ref)
    if g is None:
        return
    meta = _meta(db_id, g.rewritten, sql)
    meta["clarification"] = p["question"]
    task = w.add(
        id=p["item"],
        db=ref,
        utterance=p["text"],
        category="select",
        gold_sql=g.sql,
        underspecs=[Underspec(Label("intent"), " ".join(p["answers"]))],
        context=p["context"],
        metadata=meta,
    )
    if task is not None:
        w.report.rewritten += g.rewritten
        w.report.empty_gold += g.rows == []
