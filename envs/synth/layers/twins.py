"""Minimal pairs: the answerable twin of a task whose category the database decides.

Contract
- :func:`twin_tasks` ``(tasks, v, limit)`` returns at most ``limit`` well-specified read tasks,
  each the *twin* of one task of ``tasks`` (the twin and its task share
  ``metadata["pair"]``), drawn from the two kinds of twin below in proportion to how many
  tasks of each kind there are (so both kinds get twins), in the order of ``tasks`` within each:

  * an unanswerable column kind (column-surface, -related, -unrelated) carries its twin in
    ``metadata["twin"]`` (:mod:`.unanswerable`): the same frame, subject, key and value with a
    column the table has; the key is removed from every task of ``tasks``, twinned or not;
  * an underspecified read whose every unclear part is a value (WHERE ``not-exist``, FROM
    ``Error`` / ``Unmatch``, each written in the utterance) gets the utterance with each value
    as the user wrote it replaced by the value meant, written the same way (or the utterance
    its layer wrote in ``metadata["twin"]`` with ``same_gold``: free-text "a particular kind of
    "delivery"" -> ""late delivery""); the gold query is the task's own (it already reads the
    value meant), frozen answers (SUQL) included.

- Each twin is checked on the data: its gold runs and is not trivial, its answer is not written
  in its utterance, its utterance says nothing no question may
  (:func:`~clarisql.envs.synth.phrasing.wording_flaw`: "the address for the address") and
  is new (``seen``, case- and whitespace-insensitive; taken
  ones are added).
- So only the attribute or the value, which the schema or the data decides, tells a task from its
  twin: frame, subject, quoting and length are shared.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from itertools import zip_longest
from typing import Any

from clarisql.envs.synth.phrasing import quote, wording_flaw
from clarisql.envs.synth.verify import Verifier, echoes_question, is_trivial
from clarisql.envs.tasks import Task

#: label kinds whose content is a value the data decides
VALUE_KINDS = frozenset({"not-exist", "Error", "Unmatch"})


def _norm(text: str) -> str:
    return " ".join(text.split()).casefold()


def _written(v: Any) -> list[str]:
    """The ways a value may be written in an utterance, the quoted ones first."""
    s = str(v)
    return [quote(s), f"'{s}'", s]


def value_twin_text(task: Task) -> str | None:
    """The utterance with every value label's surface replaced by the value meant (each surface
    written exactly once, quoted or bare, and the value written the same way); ``None`` when a
    label is not a value kind or its surface is not found once."""
    if not task.underspecs or task.writable or not task.answerable:
        return None
    text = task.utterance
    for u in task.underspecs:
        lab = u.label
        if lab.kind not in VALUE_KINDS or not lab.content or u.value is None:
            return None
        for form in _written(lab.content):
            pat = re.compile(r"(?<![\w.])" + re.escape(form) + r"(?![\w]|\.\d)")
            hits = pat.findall(text)
            if len(hits) > 1:
                return None
            if hits:
                mark = form[0] if form[0] in "\"'" and form != str(lab.content) else ""
                new = f"{mark}{u.value}{mark}"
                text = pat.sub(lambda _, new=new: new, text)
                break
        else:
            return None
    return text if _norm(text) != _norm(task.utterance) else None


def _twin(task: Task, text: str, sql: str, extra: dict[str, Any]) -> Task:
    meta = {
        "layer": "twin",
        "difficulty": task.metadata.get("difficulty", "simple"),
        "qtype": task.metadata.get("qtype", "single"),
        "tables": list(task.metadata.get("tables", [])),
        "columns": list(task.metadata.get("columns", [])),
        "operations": list(task.metadata.get("operations", [])),
        "naive_sql": sql,
        **extra,
    }
    return Task(
        id="synth-twin",
        db=task.db,
        utterance=text,
        category="well-specified",
        gold_sql=sql,
        gold_ordered=task.gold_ordered if extra.get("value_twin") else False,
        metadata=meta,
    )


def twin_tasks(
    tasks: Sequence[Task], v: Verifier, limit: int, seen: set[str] | None = None
) -> list[Task]:
    """Twins of ``tasks`` (see the module docstring); sets ``metadata["pair"]`` on both."""
    seen = seen if seen is not None else {_norm(t.utterance) for t in tasks}
    column: list[tuple[Task, Task]] = []
    value: list[tuple[Task, Task]] = []
    written: list[tuple[Task, Task]] = []  # value twins a layer wrote itself (free text)
    for t in tasks:
        spec = t.metadata.pop("twin", None)
        if isinstance(spec, dict) and not t.answerable:
            tw = _twin(
                t,
                spec["utterance"],
                spec["gold_sql"],
                {"tables": spec.get("tables", []), "columns": spec.get("columns", [])},
            )
            tw.metadata["operations"] = ["filter"]
            column.append((t, tw))
            continue
        own = isinstance(spec, dict) and bool(spec.get("same_gold")) and bool(t.gold_sql)
        if own and isinstance(spec, dict):
            text: str | None = spec["utterance"]  # the layer wrote the twin itself
        else:
            text = value_twin_text(t) if t.gold_sql else None
        if text is not None:
            tw = _twin(t, text, t.gold_sql or "", {"value_twin": True})
            if t.gold_answer is not None:
                tw.gold_answer = [list(r) for r in t.gold_answer]
            if "suql_backend" in t.metadata:
                tw.metadata["suql_backend"] = t.metadata["suql_backend"]
            (written if own else value).append((t, tw))
    # a labelled value (not-exist, Error, Unmatch) and a layer's own twin (free text) in turn
    value = [p for pair in zip_longest(value, written) for p in pair if p is not None]
    out: list[Task] = []
    queues = [value, column]
    sizes = [max(1, len(value)), max(1, len(column))]
    taken = [0, 0]
    while len(out) < limit and any(queues):
        # the kind with the smaller share of its tasks twinned so far (ties: value first)
        k = min((i for i in (0, 1) if queues[i]), key=lambda i: (taken[i] / sizes[i], i))
        t, tw = queues[k].pop(0)
        taken[k] += 1
        key = _norm(tw.utterance)
        if key in seen or wording_flaw(tw.utterance):  # ("the address for the address")
            continue
        rows = (
            [tuple(r) for r in tw.gold_answer]
            if tw.gold_answer is not None
            else v.rows(tw.gold_sql or "")
        )
        if is_trivial(rows) or echoes_question(rows or [], tw.utterance):
            continue
        seen.add(key)
        pair = f"pair-{len(out):04d}"
        t.metadata["pair"] = tw.metadata["pair"] = pair
        out.append(tw)
    return out


__all__ = ["VALUE_KINDS", "twin_tasks", "value_twin_text"]
