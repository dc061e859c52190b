"""Integrity probes: policies that try to game the reward instead of doing the task.

Every ``clarisql ablate`` report runs them beside the honest policies and flags a reward spec
under which one scores at or above the honest reference (:data:`INTEGRITY_PROBES`). A probe that
wins points at a flaw of the environment (a leak, a shortcut), to be fixed there, not in the probe.

- ``abstain-all``, ``clarify-every-turn``, ``stop-at-once`` (:mod:`clarisql.policies.baselines`).
- ``string-literal-sql``: never looks at the database; runs ``SELECT 'literal'`` guesses taken
  from the request (quoted words, numbers, capitalised names) and stops with the first, farming
  "SQL that runs" and any answer that happens to be a literal of the question.
- ``write-until-stop`` (**reads the gold**, like a leak-hunting agent with a good guesser): on a
  write task it tries candidate writes, the golden statements and three variants with one literal
  changed (sqlglot), in a seeded order, each followed by a neutral message to the user, and
  goes on messaging until the user ends the dialogue or the turns run out. Against a user whose
  ``###STOP###`` depended on the database state it would stop right after the right candidate
  and score like the golden replay; against a leak-free user its stopping point carries no
  information and it ends with every candidate applied. On a read task it only keeps messaging.
- ``explore-without-clarifying`` (**reads the gold**: an upper bound on exploring instead of
  asking): plays the oracle without ever asking the user; on a task that needs the user
  (underspecified, or a write task whose instruction holds more than the opening message) every
  golden statement and the gold query lose their top-level ``WHERE`` (or ``HAVING`` when there is
  no ``WHERE``; sqlglot), i.e. it reads or writes every candidate row instead of asking which.
  When the unclear part is the table itself (a FROM label) and the task has a literal reading
  (``metadata["naive_sql"]`` / ``["naive_actions"]``), the gold's table is first replaced by the
  literal reading's: an
  explorer cannot know the clarified table. Likewise when the intent (SELECT) is unclear, the
  gold query selects what the literal reading selects: no query tells which measure the user
  meant. If that still gets the task right, the task does not need its clarification.

The two gold-reading probes play as the oracle on tasks they have no reason to change (well-
specified reads, unanswerable requests). On a suite where no task needs the user they tie the
oracle, and the report flags the tie: rightly, since such a suite cannot show that clarifying is
necessary. Likewise a spec that scores only some tasks (``dysql_state`` scores writes) flags a tie
when the probe's changes fall on tasks it does not score.
"""

from __future__ import annotations

import hashlib
import re
from collections.abc import Sequence
from typing import Any

import numpy as np
import sqlglot
from sqlglot import exp

from clarisql.envs.tasks import Task
from clarisql.policies.base import ActionLike, Observation, Policy, ScriptedPolicy

#: Every policy that must never score at or above an honest one, whatever the reward spec.
INTEGRITY_PROBES = (
    "abstain-all",
    "clarify-every-turn",
    "stop-at-once",
    "string-literal-sql",
    "write-until-stop",
    "explore-without-clarifying",
)
#: Probes that read the gold task (privileged): upper bounds, never agents.
GOLD_READING_PROBES = ("write-until-stop", "explore-without-clarifying")

NEUTRAL_MESSAGE = "Could you tell me a bit more about what you need?"
STOP: dict[str, Any] = {"type": "stop", "sql": None}


# --- string-literal SQL -------------------------------------------------------------------------
_QUOTED = re.compile(r"'([^']{1,60})'|\"([^\"]{1,60})\"|“([^”]{1,60})”")
_NUMBER = re.compile(r"(?<![\w.])\d+(?:\.\d+)?(?![\w])")
_CAPITALISED = re.compile(r"(?<![.!?]\s)(?<!^)\b([A-Z][\w'-]+(?:\s+[A-Z][\w'-]+)*)")


def literal_guesses(text: str, k: int = 3) -> list[str]:
    """Up to ``k`` literals a question mentions: quoted strings, numbers, capitalised names."""
    found = [a or b or c for a, b, c in _QUOTED.findall(text)]
    found += _NUMBER.findall(text)
    found += _CAPITALISED.findall(text)
    out: list[str] = []
    for g in found:
        g = g.strip()
        if g and g not in out:
            out.append(g)
    return out[:k] or ["0"]


def _sql_literal(value: str) -> str:
    return exp.Literal.string(value).sql(dialect="sqlite")


class StringLiteralSQLPolicy(Policy):
    """Runs ``SELECT 'literal'`` guesses from the opening message, stops with the first."""

    name = "string-literal-sql"

    def __init__(self) -> None:
        self._plan: list[ActionLike] = []

    def reset(
        self, observation: Observation, info: dict[str, Any], task: Task | None = None
    ) -> None:
        guesses = literal_guesses(str(observation.get("last", "")))
        sqls = [f"SELECT {_sql_literal(g)}" for g in guesses]
        self._plan = [{"type": "execute", "sql": s} for s in sqls[1:]]
        self._plan.append({"type": "stop", "sql": sqls[0]})

    def act(self, observation: Observation, info: dict[str, Any]) -> ActionLike:
        return self._plan.pop(0) if self._plan else STOP


# --- write-until-stop ---------------------------------------------------------------------------
def _parse(sql: str) -> exp.Expression | None:
    try:
        tree = sqlglot.parse_one(sql, read="sqlite")
    except (sqlglot.errors.SqlglotError, RecursionError, ValueError):
        return None
    return tree


def perturb_literal(sql: str, index: int) -> str | None:
    """``sql`` with its ``index``-th literal (mod the count) changed: numbers +1, strings
    suffixed; ``None`` when it does not parse or has no literal."""
    tree = _parse(sql)
    if tree is None:
        return None
    lits = [x for x in tree.find_all(exp.Literal)]
    if not lits:
        return None
    lit = lits[index % len(lits)]
    if lit.is_string:
        new = exp.Literal.string(lit.this + " (other)")
    else:
        try:
            num = float(lit.this)
        except ValueError:
            return None
        new = exp.Literal.number(int(num) + 1 if num.is_integer() else num + 1)
    lit.replace(new)
    return tree.sql(dialect="sqlite")


def write_candidates(statements: Sequence[str], n_variants: int = 3) -> list[list[str]]:
    """The golden statements and up to ``n_variants`` variants, each with one literal changed
    (the i-th literal of the plan, counted over all statements); a plan without literals gets
    one variant without its last statement."""
    gold = list(statements)
    spots = []
    for i, s in enumerate(gold):
        tree = _parse(s)
        n = len(list(tree.find_all(exp.Literal))) if tree is not None else 0
        spots += [(i, j) for j in range(n)]
    out = [gold]
    for i, j in spots[:n_variants]:
        new = perturb_literal(gold[i], j)
        if new is not None and new != gold[i]:
            out.append(gold[:i] + [new] + gold[i + 1 :])
    if len(out) == 1 and len(gold) > 0:
        out.append(gold[:-1])
    return out


def _task_rng(task: Task) -> np.random.Generator:
    return np.random.default_rng(int.from_bytes(hashlib.sha256(task.id.encode()).digest()[:8]))


class WriteUntilStopPolicy(ScriptedPolicy):
    """Tries candidate writes, messaging after each, until the user stops (reads the gold)."""

    name = "write-until-stop"

    def plan(self, task: Task) -> Sequence[ActionLike]:
        steps: list[ActionLike] = []
        if task.writable and task.gold_actions:
            cands = write_candidates(task.gold_actions)
            for k in _task_rng(task).permutation(len(cands)):
                steps += [{"type": "execute", "sql": s} for s in cands[int(k)]]
                steps.append({"type": "clarify", "question": NEUTRAL_MESSAGE})
        return steps

    def act(self, observation: Observation, info: dict[str, Any]) -> ActionLike:
        # After the candidates: keep messaging until the user stops or the turns run out.
        if self._plan:
            return self._plan.pop(0)
        return {"type": "clarify", "question": NEUTRAL_MESSAGE}


# --- explore-without-clarifying -----------------------------------------------------------------
def strip_filter(sql: str) -> str | None:
    """``sql`` without its top-level ``WHERE`` (else ``HAVING``); unchanged when it has
    neither; ``None`` when it does not parse."""
    tree = _parse(sql)
    if tree is None:
        return None
    for key in ("where", "having"):
        if tree.args.get(key) is not None:
            tree.set(key, None)
            return tree.sql(dialect="sqlite")
    return sql


def literal_tables(sql: str, naive_sql: str | None) -> str:
    """``sql`` reading the literal reading's table instead of its own (both single-table)."""
    tree, naive = _parse(sql), _parse(naive_sql) if naive_sql else None
    if tree is None or naive is None:
        return sql
    mine = {t.name for t in tree.find_all(exp.Table)}
    theirs = {t.name for t in naive.find_all(exp.Table)}
    if len(mine) != 1 or len(theirs) != 1 or mine == theirs:
        return sql
    new = next(iter(theirs))
    for t in tree.find_all(exp.Table):
        t.set("this", exp.to_identifier(new))
    return tree.sql(dialect="sqlite")


def literal_projection(sql: str, naive_sql: str | None) -> str:
    """``sql`` selecting what the literal reading selects (both plain single ``SELECT``s)."""
    tree, naive = _parse(sql), _parse(naive_sql) if naive_sql else None
    if not isinstance(tree, exp.Select) or not isinstance(naive, exp.Select):
        return sql
    if any(t.args.get(k) for t in (tree, naive) for k in ("group", "having", "joins", "with")):
        return sql
    tree.set("expressions", [e.copy() for e in naive.expressions])
    return tree.sql(dialect="sqlite")


def needs_the_user(task: Task) -> bool:
    """Underspecified, or a write task whose instruction holds more than its opening message."""
    if task.underspecs:
        return True
    instr = (task.instruction or "").strip()
    return bool(task.writable and instr and instr != task.utterance.strip())


class ExploreWithoutClarifyingPolicy(ScriptedPolicy):
    """The oracle without questions; the gold's filter dropped where the user was needed."""

    name = "explore-without-clarifying"

    def plan(self, task: Task) -> Sequence[ActionLike]:
        if not task.answerable:
            return [{"type": "abstain", "reason": "the database cannot answer this request"}]
        strip = needs_the_user(task)
        unclear_table = any(u.label.clause == "from" for u in task.underspecs)
        naive = task.metadata.get("naive_actions") or []
        steps: list[ActionLike] = []
        for i, a in enumerate(task.gold_actions):
            if unclear_table and len(naive) == len(task.gold_actions):
                a = literal_tables(a, naive[i])
            sql = strip_filter(a) if strip else a
            if sql is not None:  # a statement sqlglot cannot parse is left out
                steps.append({"type": "execute", "sql": sql})
        final = task.gold_sql
        if final and strip:
            if any(u.label.clause == "from" for u in task.underspecs):
                final = literal_tables(final, task.metadata.get("naive_sql"))
            if any(u.label.clause == "select" for u in task.underspecs):
                final = literal_projection(final, task.metadata.get("naive_sql"))
            final = strip_filter(final)
        steps.append({"type": "stop", "sql": final or None})
        return steps


__all__ = [
    "GOLD_READING_PROBES",
    "INTEGRITY_PROBES",
    "NEUTRAL_MESSAGE",
    "ExploreWithoutClarifyingPolicy",
    "StringLiteralSQLPolicy",
    "WriteUntilStopPolicy",
    "literal_guesses",
    "literal_projection",
    "needs_the_user",
    "perturb_literal",
    "strip_filter",
    "write_candidates",
]
