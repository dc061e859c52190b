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

Probes that never read the gold to ask or to guess (what they change is how they ask, or that
they guess instead; the SQL they finally run comes from an ideal writer: the oracle's statements
when the user's replies told every gold value, or the task needs none, and the oracle's
abstention on unanswerable tasks, else the literal reading, ``metadata["naive_sql"]``; each is
an upper bound on an agent that asks or guesses that way):

- ``label-shotgun``: one clarify listing ``intent``, every slot as Missing and every utterance
  span × slot × {Error, Unmatch, not-exist} (:func:`candidate_labels`; slots: ODUTQA's five
  plus the column names the schema summary lists).
- ``text-shotgun``: free-text questions naming every aspect and every entity of the request
  (:func:`shotgun_questions`).
- ``label-sweep``: the shotgun's labels a few per turn (3) over many turns (8).
- ``nearest-value``: no asking; reads each compared column's values through SQL
  (:func:`values_query`) and replaces every value of the literal reading the column lacks by
  the nearest one (a value it is a prefix of, else the least edit distance).
- ``first-match``: likewise, with the first value by rowid that starts with, contains, or
  holds in order the characters of the look-alike (rows stored gold-first would give it away).
- ``most-frequent``: likewise, with the plausible reading that has the most rows
  (:func:`most_frequent`); ``trigram-value``: the most trigram-similar value.
- members of the searched family (:class:`Strategy`) run as fixed probes:
  ``intent-then-guess`` (asks only the intent, guesses the rest by the nearest value),
  ``label-per-turn`` (one label per turn over many turns), ``cue-abstain`` (abstains on
  surface cue words, else guesses); any member runs as ``strategy:labels=1,turns=8,...``.

The two gold-reading probes play as the oracle on tasks they have no reason to change (well-
specified reads, unanswerable requests). On a suite where no task needs the user they tie the
oracle, and the report flags the tie: rightly, since such a suite cannot show that clarifying is
necessary. Likewise a spec that scores only some tasks flags a tie when the probe's changes fall
on tasks it does not score (``dysql_state`` scores read tasks by their outcome for this reason).
"""

from __future__ import annotations

import hashlib
import re
from collections.abc import Sequence
from dataclasses import dataclass
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
    "label-shotgun",
    "text-shotgun",
    "label-sweep",
    "nearest-value",
    "first-match",
    "most-frequent",
    "trigram-value",
    "intent-then-guess",
    "label-per-turn",
    "cue-abstain",
)
#: Probes that ask in free text: ``ablate`` runs them under a gate that reads the text.
TEXT_PROBES = ("text-shotgun",)
#: The honest reference that misses one needed clarification in ten (``ablate`` runs it too).
HONEST_MISS = "oracle-miss:0.1"
#: The same agent, calibrated: it declines where it missed (TrustSQL's point under φ_c).
HONEST_MISS_ABSTAIN = "oracle-miss:0.1:abstain"
#: The honest agents that miss; under each reward spec the probes are compared with the better.
HONEST_MISS_VARIANTS = (HONEST_MISS, HONEST_MISS_ABSTAIN)
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
    """``sql`` without the ``WHERE`` (else ``HAVING``) of the statement and of every ``SELECT``
    in it: each branch of a ``UNION`` and every subquery (a ``FROM`` subquery or a scalar one
    in the select list); unchanged when none has one; ``None`` when it does not parse."""
    tree = _parse(sql)
    if tree is None:
        return None
    nodes = [tree, *(x for x in tree.find_all(exp.Select) if x is not tree)]
    changed = False
    for node in nodes:
        for key in ("where", "having"):
            if node.args.get(key) is not None:
                node.set(key, None)
                changed = True
                break
    return tree.sql(dialect="sqlite") if changed else sql


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


# --- probes that never read the gold to ask (shotgun, sweep) or to resolve values ---------------
# What these probes change is how they ask, or that they guess instead: the SQL they finally run
# comes from an ideal writer (:class:`_IdealWriter`), the gold statement when the replies told
# every gold value (or the task needs none), else the literal reading of the request, so a
# probe's score is an upper bound on an agent with the same asking strategy.
SLOTS = ("city", "district", "year", "enterprise", "project")
KINDS = ("Error", "Unmatch", "not-exist")
MAX_LABELS = 30000
_WORD = re.compile(r"[\w][\w'&.-]*", re.U)
_CJK = re.compile(r"[\u3400-\u9fff]")
_SCHEMA_NAME = re.compile(r"\b([A-Za-z_][A-Za-z0-9_]*)\s*\(")
_COLS = re.compile(r"\(([^()]*)\)")


def utterance_spans(text: str, max_words: int = 4, max_chars: int = 10) -> list[str]:
    """Every span a label's content could be, in order of appearance: word n-grams (up to
    ``max_words``) and quoted strings; for text without spaces (Chinese), every character run
    of 2..``max_chars`` characters."""
    out: dict[str, None] = {}
    for a, b, c in _QUOTED.findall(text):
        out[(a or b or c).strip()] = None
    if _CJK.search(text):
        runs = re.findall(r"[\u3400-\u9fff\w]+", text)
        for run in runs:
            for i in range(len(run)):
                for j in range(i + 2, min(len(run), i + max_chars) + 1):
                    out[run[i:j]] = None
    else:
        words = [w.strip(".'-") for w in _WORD.findall(text)]
        words = [w for w in words if w]
        for i in range(len(words)):
            for n in range(1, max_words + 1):
                if i + n <= len(words):
                    out[" ".join(words[i : i + n])] = None
    return [s for s in out if s]


def schema_slots(schema: str) -> list[str]:
    """Slot names a label could use: the usual ODUTQA slots plus column names the schema
    summary lists (as far as it lists them), and ``<column> year`` for date-like columns."""
    out = dict.fromkeys(SLOTS)
    for cols in _COLS.findall(schema or ""):
        for c in cols.split(","):
            name = c.strip().split(" ")[0].strip('"`[]')
            if name and len(out) < 80:
                out[name] = None
                if re.search(r"date|time|day|week|month|start|end", c, re.I):  # a date: its year
                    out[f"{name} year"] = None
    return list(out)


def candidate_labels(text: str, schema: str = "", kinds: Sequence[str] = KINDS) -> list[Any]:
    """Every label a shotgun would send, in a fixed surface order (never the gold): ``intent``,
    every slot as Missing, then every span × slot × kind (capped at :data:`MAX_LABELS`)."""
    slots = schema_slots(schema)
    out: list[Any] = ["intent", *(["", s, "Missing"] for s in slots)]
    for span in utterance_spans(text):
        for s in slots:
            for k in kinds:
                out.append([span, s, k])
                if len(out) >= MAX_LABELS:
                    return out
    return out


def hidden_values(task: Task) -> list[str]:
    """What a task's gold needs that its opening message does not say: the gold labels' values,
    and for a write task whose instruction holds more than its opening message (DySQL), the
    golden statements' string literals (2+ characters) and numbers (2+ digits) the opening lacks."""
    out = [u.value for u in task.underspecs if u.value]
    if not task.underspecs and task.answerable and needs_the_user(task):
        said = task.utterance
        for sql in task.gold_actions:
            tree = _parse(sql)
            for lit in tree.find_all(exp.Literal) if tree is not None else []:
                v = str(lit.this)
                if (len(v) >= 2 if lit.is_string else sum(c.isdigit() for c in v) >= 2) and (
                    v not in said
                ):
                    out.append(v)
    return list(dict.fromkeys(out))


class _IdealWriter:
    """The SQL half of a probe: the oracle's statements when the replies told every value the
    gold needs beyond the opening message (:func:`hidden_values`; unanswerable tasks are
    abstained on as the oracle does), else the literal reading (``naive_sql`` /
    ``naive_actions``; a DySQL task without one: no write at all), optionally rewritten."""

    @staticmethod
    def finish(task: Task, told: str, rewrite: Any = None) -> list[ActionLike]:
        from clarisql.policies.baselines import AnswerWithoutClarifyingPolicy, OraclePolicy

        if all(v in told for v in hidden_values(task)):
            plan = list(OraclePolicy().plan(task))
        elif task.underspecs or task.metadata.get("naive_actions") is not None:
            plan = list(AnswerWithoutClarifyingPolicy().plan(task))
            if rewrite is not None:
                plan = [rewrite(a) for a in plan]
        else:  # the instruction's facts were not told and nothing literal to write
            plan = [STOP]
        return [a for a in plan if not (isinstance(a, dict) and a["type"] == "clarify")]


class _AskThenWrite(Policy):
    """Plays a list of clarify actions built from what the agent sees, then the ideal writer."""

    privileged = True  # for the writer only: the questions never read the gold

    def __init__(self) -> None:
        self._task: Task | None = None
        self._asks: list[ActionLike] = []
        self._plan: list[ActionLike] | None = None
        self._told = ""
        self._asked = False

    def asks(self, request: str, schema: str) -> list[ActionLike]:
        raise NotImplementedError

    def reset(
        self, observation: Observation, info: dict[str, Any], task: Task | None = None
    ) -> None:
        if task is None:
            raise ValueError(f"policy {self.name!r} needs the task for its SQL writer")
        self._task, self._plan, self._told, self._asked = task, None, "", False
        self._asks = self.asks(str(observation.get("last", "")), str(observation.get("schema", "")))

    def act(self, observation: Observation, info: dict[str, Any]) -> ActionLike:
        assert self._task is not None
        if self._plan is None:
            if self._asked:  # the last observation is the user's reply
                self._told += "\n" + str(observation.get("last", ""))
            if self._asks:
                self._asked = True
                return self._asks.pop(0)
            self._plan = _IdealWriter.finish(self._task, self._told)
        return self._plan.pop(0) if self._plan else STOP


class LabelShotgunPolicy(_AskThenWrite):
    """One clarify listing ``intent``, every slot as Missing and every utterance span × slot ×
    {Error, Unmatch, not-exist}: as many as one valid action may carry
    (:data:`clarisql.envs.actions.MAX_LABELS`; more is an invalid action, refused unread)."""

    name = "label-shotgun"

    def asks(self, request: str, schema: str) -> list[ActionLike]:
        from clarisql.envs.actions import MAX_LABELS as ACTION_MAX_LABELS

        labels = candidate_labels(request, schema)[:ACTION_MAX_LABELS]
        return [
            {"type": "clarify", "question": "Could you clarify all of these?", "labels": labels}
        ]


class LabelSweepPolicy(_AskThenWrite):
    """A few labels per turn (``per_turn``) over many turns (``turns``), in the shotgun's order."""

    name = "label-sweep"

    def __init__(self, per_turn: int = 3, turns: int = 8) -> None:
        super().__init__()
        self.per_turn, self.turns = max(1, int(per_turn)), max(1, int(turns))

    def asks(self, request: str, schema: str) -> list[ActionLike]:
        labels = candidate_labels(request, schema)
        out: list[ActionLike] = []
        for i in range(0, min(len(labels), self.per_turn * self.turns), self.per_turn):
            chunk = labels[i : i + self.per_turn]
            out.append({"type": "clarify", "question": "Could you clarify these?", "labels": chunk})
        return out


def shotgun_questions(request: str, schema: str = "") -> list[str]:
    """Free-text questions naming every aspect and entity of the request (no labels)."""
    chinese = bool(_CJK.search(request))
    names = [s for s in utterance_spans(request, max_words=3) if s[:1].isupper() or s.isdigit()]
    names = names[:12]
    if chinese:
        runs = re.findall(r"[\u3400-\u9fff]{2,}", request)
        quoted = "、".join(f"“{r}”" for r in runs[:8])
        return [
            "是哪个城市、哪个区、哪一年？企业和项目的全称是什么？",
            "你具体想了解什么？",
            f"你说的{quoted}分别是指什么？" if quoted else "你说的名字分别是指什么？",
        ]
    quoted = ", ".join(f"'{n}'" for n in names) or "the names"
    return [
        "Which city, district and year do you mean, and what are the full names of the "
        "companies and projects?",
        "What exactly do you want to know?",
        f"What do you mean by {quoted}?",
    ]


class TextShotgunPolicy(_AskThenWrite):
    """Free-text questions naming every aspect and every entity of the request."""

    name = "text-shotgun"

    def asks(self, request: str, schema: str) -> list[ActionLike]:
        return [
            {"type": "clarify", "question": q, "labels": []}
            for q in shotgun_questions(request, schema)
        ]


# --- guessing values instead of asking ----------------------------------------------------------
def levenshtein(a: str, b: str, cap: int = 10**9) -> int:
    """Edit distance (insert, delete, substitute), stopping early past ``cap``."""
    if len(a) < len(b):
        a, b = b, a
    prev = list(range(len(b) + 1))
    for i, ca in enumerate(a, 1):
        cur = [i]
        for j, cb in enumerate(b, 1):
            cur.append(min(prev[j] + 1, cur[j - 1] + 1, prev[j - 1] + (ca != cb)))
        if min(cur) > cap:
            return cap + 1
        prev = cur
    return prev[-1]


def _subsequence(short: str, long: str) -> bool:
    it = iter(long)
    return all(ch in it for ch in short)


def nearest_value(value: str, candidates: Sequence[str]) -> str:
    """The database value a look-alike most likely means: itself if present, else the shortest
    value it is a prefix of, else the nearest by edit distance (first by rowid on ties)."""
    if not candidates or value in candidates:
        return value
    v = value.casefold()
    pref = [c for c in candidates if c.casefold().startswith(v)]
    if pref:
        return min(pref, key=len)
    best, best_d = value, 10**9
    for c in candidates:
        d = levenshtein(v, c.casefold(), best_d)
        if d < best_d:
            best, best_d = c, d
    return best


def first_match(value: str, candidates: Sequence[str]) -> str:
    """The first value by rowid that the look-alike could mean: equal, else it starts with it,
    else it contains it, else it holds its characters in order, else every word of it."""
    if not candidates or value in candidates:
        return value
    v = value.casefold()
    low = [c.casefold() for c in candidates]
    words = v.split()
    tests = (
        lambda c: c.startswith(v),
        lambda c: v in c,
        lambda c: _subsequence(v, c),
        lambda c: bool(words) and all(w in c for w in words),
    )
    for test in tests:
        for c, lc in zip(candidates, low):
            if test(lc):
                return c
    return value


def string_literals(sql: str) -> list[tuple[str, str, str]]:
    """``(table, column, value)`` for each string literal compared by ``=`` or ``IN`` with a
    column of a named table (unqualified columns: the statement's only table)."""
    tree = _parse(sql)
    if tree is None:
        return []
    tables = {t.alias_or_name: t.name for t in tree.find_all(exp.Table)}
    only = next(iter(set(tables.values()))) if len(set(tables.values())) == 1 else None
    out: list[tuple[str, str, str]] = []
    for node in tree.find_all(exp.EQ, exp.In):
        col = node.this if isinstance(node.this, exp.Column) else node.expression
        if not isinstance(col, exp.Column):
            continue
        table = tables.get(col.table) if col.table else only
        if not table:
            continue
        lits = [node.expression] if isinstance(node, exp.EQ) else node.expressions
        for lit in lits:
            if isinstance(lit, exp.Literal) and lit.is_string:
                out.append((table, col.name, lit.this))
    return out


def replace_literals(sql: str, picks: dict[tuple[str, str, str], str]) -> str:
    """``sql`` with the string literals of :func:`string_literals` replaced as ``picks`` says."""
    tree = _parse(sql)
    if tree is None or not picks:
        return sql
    tables = {t.alias_or_name: t.name for t in tree.find_all(exp.Table)}
    only = next(iter(set(tables.values()))) if len(set(tables.values())) == 1 else None
    for node in list(tree.find_all(exp.EQ, exp.In)):
        col = node.this if isinstance(node.this, exp.Column) else node.expression
        if not isinstance(col, exp.Column):
            continue
        table = tables.get(col.table) if col.table else only
        lits = [node.expression] if isinstance(node, exp.EQ) else node.expressions
        for lit in lits:
            if isinstance(lit, exp.Literal) and lit.is_string:
                new = picks.get((str(table), col.name, lit.this))
                if new is not None and new != lit.this:
                    lit.replace(exp.Literal.string(new))
    return tree.sql(dialect="sqlite")


def values_query(table: str, column: str) -> str:
    """One-row query listing a column's distinct values in rowid order (ASCII 30 between)."""
    t, c = (
        exp.to_identifier(table, quoted=True).sql("sqlite"),
        exp.to_identifier(column, quoted=True).sql("sqlite"),
    )
    return (
        f"SELECT group_concat(v, char(30)) AS vals FROM (SELECT CAST({c} AS TEXT) AS v "
        f"FROM {t} WHERE {c} IS NOT NULL GROUP BY {c} ORDER BY min(rowid))"
    )


def parse_values(last: str) -> list[str]:
    """The values a :func:`values_query` observation shows (empty when it failed)."""
    lines = last.split("\n")
    if not lines or not lines[0].startswith("OK"):
        return []
    cell = "\n".join(lines[2:]).split("\n... ")[0]
    return [] if cell in ("", "NULL") else cell.split("\x1e")


def value_counts_query(table: str, column: str) -> str:
    """One-row query listing a column's distinct values with their row counts, in rowid order
    (ASCII 31 between a value and its count, ASCII 30 between values)."""
    t, c = (
        exp.to_identifier(table, quoted=True).sql("sqlite"),
        exp.to_identifier(column, quoted=True).sql("sqlite"),
    )
    return (
        f"SELECT group_concat(v || char(31) || n, char(30)) AS vals FROM (SELECT CAST({c} AS "
        f"TEXT) AS v, COUNT(*) AS n FROM {t} WHERE {c} IS NOT NULL GROUP BY {c} "
        f"ORDER BY min(rowid))"
    )


def parse_value_counts(last: str) -> list[tuple[str, int]]:
    """The ``(value, rows)`` pairs a :func:`value_counts_query` observation shows."""
    out = []
    for item in parse_values(last):
        v, _, n = item.rpartition("\x1f")
        out.append((v, int(n)) if n.isdigit() else (item, 1))
    return out


def _loose_matches(value: str, candidates: Sequence[str]) -> list[str]:
    """The values a look-alike could plausibly mean without asking: those it starts, is in, or
    spells in order, those sharing a word with it, and those within two edits (rowid order)."""
    v = value.casefold()
    words = set(v.split())
    out = []
    for c in candidates:
        lc = c.casefold()
        if (
            lc.startswith(v)
            or v in lc
            or (len(v) >= 3 and _subsequence(v, lc))
            or (words & set(lc.split()))
            or levenshtein(v, lc, 2) <= 2
        ):
            out.append(c)
    return out


def most_frequent(value: str, counted: Sequence[tuple[str, int]]) -> str:
    """The look-alike read as the value with the most rows among those it could plausibly mean
    (:func:`_loose_matches`; none: among every value), the first by rowid on ties."""
    cands = [v for v, _ in counted]
    if not cands or value in cands:
        return value
    pool = set(_loose_matches(value, cands)) or set(cands)
    best = max((n for v, n in counted if v in pool), default=0)
    return next(v for v, n in counted if v in pool and n == best)


def _trigram_set(s: str) -> set[str]:
    s = f"  {s.casefold()} "
    return {s[i : i + 3] for i in range(len(s) - 2)}


def trigram_nearest(value: str, candidates: Sequence[str]) -> str:
    """The look-alike read as the value most similar in character trigrams (Jaccard; a cheap
    string embedding), the first by rowid on ties."""
    if not candidates or value in candidates:
        return value
    tv = _trigram_set(value)

    def sim(c: str) -> float:
        tc = _trigram_set(c)
        return len(tv & tc) / max(1, len(tv | tc))

    return max(candidates, key=sim)


class _GuessValues(Policy):
    """Reads the literal reading's compared columns through SQL, replaces every value the
    column lacks by :meth:`pick`'s guess, and answers without asking (abstaining as the oracle
    does on unanswerable tasks: the probe isolates guessing values)."""

    privileged = True  # the literal reading and the writer; the guesses read only the database

    def pick(self, value: str, candidates: Sequence[str]) -> str:
        raise NotImplementedError

    def pick_counted(self, value: str, counted: Sequence[tuple[str, int]]) -> str:
        """:meth:`pick` given each value's row count too (the default ignores the counts)."""
        return self.pick(value, [v for v, _ in counted])

    def reset(
        self, observation: Observation, info: dict[str, Any], task: Task | None = None
    ) -> None:
        if task is None:
            raise ValueError(f"policy {self.name!r} needs the task for its SQL writer")
        self._task = task
        self._plan: list[ActionLike] | None = None
        self._values: dict[tuple[str, str], list[tuple[str, int]]] = {}
        self._pending: list[tuple[str, str]] = []
        self._reading: list[ActionLike] = []
        hidden = hidden_values(task)
        md = task.metadata
        if hidden and (md.get("naive_sql") or md.get("naive_actions")):
            self._reading = _IdealWriter.finish(task, "")  # the literal reading
        if not self._reading:  # nothing to guess in: what the writer does untold
            self._plan = _IdealWriter.finish(task, "")
            return
        lits = {(t, c) for a in self._reading for t, c, _ in string_literals(_sql_of(a))}
        self._pending = sorted(lits)
        self._asked: tuple[str, str] | None = None

    def act(self, observation: Observation, info: dict[str, Any]) -> ActionLike:
        if self._plan is None:
            if self._asked is not None:
                last = str(observation.get("last", ""))
                self._values[self._asked] = parse_value_counts(last)
                self._asked = None
            if self._pending:
                self._asked = self._pending.pop(0)
                return {"type": "execute", "sql": value_counts_query(*self._asked)}
            self._plan = [self._rewrite(a) for a in self._reading]
        return self._plan.pop(0) if self._plan else STOP

    def _rewrite(self, action: ActionLike) -> ActionLike:
        sql = _sql_of(action)
        if not sql or not isinstance(action, dict):
            return action
        picks = {
            (t, c, v): self.pick_counted(v, self._values.get((t, c), []))
            for t, c, v in string_literals(sql)
        }
        return {**action, "sql": replace_literals(sql, picks)}


def _sql_of(action: ActionLike) -> str:
    return str(action.get("sql") or "") if isinstance(action, dict) else ""


class NearestValuePolicy(_GuessValues):
    """Replaces look-alike values by the nearest database value (prefix, then edit distance)."""

    name = "nearest-value"

    def pick(self, value: str, candidates: Sequence[str]) -> str:
        return nearest_value(value, candidates)


class FirstMatchPolicy(_GuessValues):
    """Replaces look-alike values by the first matching row's value (by rowid)."""

    name = "first-match"

    def pick(self, value: str, candidates: Sequence[str]) -> str:
        return first_match(value, candidates)


class MostFrequentPolicy(_GuessValues):
    """Replaces look-alike values by the plausible reading with the most rows
    (:func:`most_frequent`: the majority reading an explorer would bet on)."""

    name = "most-frequent"

    def pick(self, value: str, candidates: Sequence[str]) -> str:  # without counts: the first
        return most_frequent(value, [(c, 1) for c in candidates])

    def pick_counted(self, value: str, counted: Sequence[tuple[str, int]]) -> str:
        return most_frequent(value, counted)


class TrigramPolicy(_GuessValues):
    """Replaces look-alike values by the most trigram-similar database value."""

    name = "trigram-value"

    def pick(self, value: str, candidates: Sequence[str]) -> str:
        return trigram_nearest(value, candidates)


# --- the honest reference that misses, and the searched strategy family -----------------------
def _keep(task: Task, label: Any, rate: float, salt: str = "") -> bool:
    """Seeded per task and label (and ``salt``: another draw of the same rate): ``False`` for
    about ``rate`` of the labels."""
    h = hashlib.sha256(f"{salt}{task.id}|{label}".encode()).digest()
    return int.from_bytes(h[:8], "big") / 2**64 >= rate


class HonestMissPolicy(_AskThenWrite):
    """The honest reference that misses some needed clarifications: asks exactly the gold
    labels (one turn, as the oracle) but leaves out each with probability ``rate`` (seeded by
    task and label), then answers as the others do (the gold when told every value, else the
    literal reading). ``oracle-miss:0.1`` misses one needed label in ten.

    ``oracle-miss:RATE:abstain`` is the same agent calibrated as TrustSQL asks of a model: it
    declines (``abstain``) where it left a needed clarification out instead of answering a
    reading it is unsure of. Under φ_c with a large ``c`` an agent that is wrong more than
    ``1/(1+c)`` of the time should decline, so this is the honest agent such a reward trains;
    ``ablate`` compares the probes with the better of the two variants under each reward spec
    (:data:`HONEST_MISS_VARIANTS`)."""

    name = "oracle-miss"

    def __init__(self, rate: float | str = 0.1, unsure: str = "answer", salt: str = "") -> None:
        super().__init__()
        self.salt = salt  # (another draw of which labels are missed; "" is the default one)
        if isinstance(rate, str) and ":" in rate:
            rate, _, unsure = rate.partition(":")
        try:
            self.rate = float(rate)
        except ValueError:
            raise ValueError(f"oracle-miss: the miss rate must be a number, got {rate!r}") from None
        if not 0.0 <= self.rate <= 1.0:
            raise ValueError(f"oracle-miss: the miss rate must be in [0, 1], got {rate!r}")
        if unsure not in ("answer", "abstain"):
            raise ValueError(
                f"oracle-miss: after a missed clarification it can 'answer' or 'abstain', "
                f"got {unsure!r}"
            )
        self.unsure = unsure
        self._missed = False
        self.name = f"oracle-miss:{self.rate:g}" + (":abstain" if unsure == "abstain" else "")

    def act(self, observation: Observation, info: dict[str, Any]) -> ActionLike:
        task = self._task
        assert task is not None
        if not task.underspecs and self._plan is None:  # nothing to miss: the oracle
            from clarisql.policies.baselines import OraclePolicy

            self._plan = list(OraclePolicy().plan(task))
        if self.unsure == "abstain" and self._missed and self._plan is None and not self._asks:
            self._plan = [
                {"type": "abstain", "reason": "I could not clarify every part of the request"}
            ]
        return super().act(observation, info)

    def asks(self, request: str, schema: str) -> list[ActionLike]:
        task = self._task
        assert task is not None
        self._missed = False
        if not task.answerable:
            return []
        gold = [u.label.to_json() for u in task.underspecs]
        labels = [lb for lb in gold if _keep(task, lb, self.rate, self.salt)]
        self._missed = len(labels) < len(gold)
        if not labels:
            return []
        return [{"type": "clarify", "question": "Could you clarify this?", "labels": labels}]


#: Words that mark a request no SQL over the database answers (the surface cue a cheap
#: classifier would learn); a strategy of the family may abstain on them.
CUE_WORDS = re.compile(
    r"\b(poem|haiku|song|joke|story|essay|translate|email|e-mail|recipe|weather|forecast|"
    r"predict|will .* next year|tomorrow|opinion|feel|why do|should i|advice|password|"
    r"phone number|photo|picture|draw|summari[sz]e the news)\b",
    re.I,
)


_QUOTE_MARK = re.compile(r"['\"“”‘’«»「」]")
#: One attribute of the records a name or a value picks out ("What is the X of the Y whose K is
#: V?", "List the X of every Y with K V."): the frame column requests share with their twins
_LOOKUP = re.compile(
    r"\bthe [\w' -]+? (?:of|for) (?:the|every|each) [\w' -]+? (?:whose|with) ", re.I
)


def _words(text: str) -> int:
    return len(_WORD.findall(text)) + len(_CJK.findall(text))


#: Surface cues a strategy may abstain on (the request only; what a cheap classifier of the
#: wording would learn): cue words, a quoted name or none, the length in words above or at most
#: a threshold, a number or none, one attribute of a named record (the lookup frame) or not, a
#: question mark or none.
CUES: dict[str, Any] = {
    "none": lambda text, n: False,
    "words": lambda text, n: bool(CUE_WORDS.search(text)),
    "quoted": lambda text, n: bool(_QUOTE_MARK.search(text)),
    "unquoted": lambda text, n: not _QUOTE_MARK.search(text),
    "long": lambda text, n: _words(text) > n,
    "short": lambda text, n: _words(text) <= n,
    "digits": lambda text, n: bool(re.search(r"\d", text)),
    "no-digits": lambda text, n: not re.search(r"\d", text),
    "lookup": lambda text, n: bool(_LOOKUP.search(text)),
    "no-lookup": lambda text, n: not _LOOKUP.search(text),
    "question": lambda text, n: text.rstrip().endswith(("?", "？")),
    "no-question": lambda text, n: not text.rstrip().endswith(("?", "？")),
}
#: What a strategy does with values the replies did not give: nothing (the literal reading),
#: guess them by an explorer (nearest / first by rowid / most rows / trigrams), or abstain.
GUESSES = ("none", "nearest", "first", "frequent", "trigram", "abstain")


@dataclass(frozen=True)
class Strategy:
    """One member of the searched family (``clarisql ablate --search``): ``labels`` labels per
    clarify turn over ``turns`` turns (in :func:`candidate_labels` order, ``intent`` first: one
    label over one turn is "ask only the intent"; 0 turns: no asking), ``text`` free-text
    shotgun questions first (0..3), ``guess`` what to do with values the replies did not give
    (:data:`GUESSES`), and ``abstain_on`` a surface cue of the request (:data:`CUES`; ``length``
    is the word threshold of ``long`` / ``short``). With a cue, the cue alone decides declining:
    an unanswerable request without it is answered by its literal reading; without one
    (``none``) the strategy declines as the oracle does (an upper bound on telling answerable
    from unanswerable by any means)."""

    labels: int = 0
    turns: int = 0
    text: int = 0
    guess: str = "none"
    abstain_on: str = "none"
    length: int = 12

    def __post_init__(self) -> None:
        if self.guess not in GUESSES:
            raise ValueError(f"strategy: guess must be one of {list(GUESSES)}, got {self.guess!r}")
        if self.abstain_on not in CUES:
            raise ValueError(f"strategy: abstain_on must be one of {list(CUES)}")

    def describe(self) -> str:
        parts = [
            f"{self.labels} labels x {self.turns} turns"
            if self.turns and self.labels
            else "no labels"
        ]
        if self.text:
            parts.append(f"{self.text} text question(s)")
        parts.append(f"guess {self.guess}")
        if self.abstain_on != "none":
            cue = self.abstain_on + (
                f" (>{self.length} words)" if self.abstain_on == "long" else ""
            )
            cue += f" (<={self.length} words)" if self.abstain_on == "short" else ""
            parts.append(f"abstain on {cue}")
        return ", ".join(parts)

    @classmethod
    def parse(cls, text: str) -> Strategy:
        """A strategy from ``key=value,...`` (``labels=1,turns=1,guess=nearest``)."""
        kw: dict[str, Any] = {}
        for part in filter(None, (p.strip() for p in text.split(","))):
            k, eq, v = part.partition("=")
            if not eq or k not in ("labels", "turns", "text", "guess", "abstain_on", "length"):
                raise ValueError(
                    f"strategy: expected key=value pairs of labels, turns, text, guess, "
                    f"abstain_on, length; got {part!r}"
                )
            if k in ("guess", "abstain_on"):
                kw[k] = v
            else:
                try:
                    kw[k] = max(0, int(v))
                except ValueError:
                    raise ValueError(f"strategy: {k} must be a whole number, got {v!r}") from None
        return cls(**kw)


_GUESSERS: dict[str, type[_GuessValues]] = {
    "nearest": NearestValuePolicy,
    "first": FirstMatchPolicy,
    "frequent": MostFrequentPolicy,
    "trigram": TrigramPolicy,
}


class StrategyPolicy(Policy):
    """Plays a :class:`Strategy` (the questions and guesses never read the gold; the writer is
    the probes' ideal writer). As a policy spec: ``strategy:labels=1,turns=1,guess=nearest``."""

    privileged = True
    name = "strategy"

    def __init__(self, strategy: Strategy | str = Strategy()) -> None:
        if isinstance(strategy, str):
            strategy = Strategy.parse(strategy)
        self.strategy = strategy
        self._guess: _GuessValues | None = (
            _GUESSERS[strategy.guess]() if strategy.guess in _GUESSERS else None
        )
        self._phase = "ask"

    def reset(
        self, observation: Observation, info: dict[str, Any], task: Task | None = None
    ) -> None:
        if task is None:
            raise ValueError("a strategy needs the task for its SQL writer")
        st, request = self.strategy, str(observation.get("last", ""))
        schema = str(observation.get("schema", ""))
        self._task, self._told, self._asked, self._phase = task, "", False, "ask"
        self._abstain = bool(CUES[st.abstain_on](request, st.length))
        asks: list[ActionLike] = [
            {"type": "clarify", "question": q, "labels": []}
            for q in shotgun_questions(request, schema)[: st.text]
        ]
        if st.labels and st.turns:
            labels = candidate_labels(request, schema)[: st.labels * st.turns]
            for i in range(0, len(labels), st.labels):
                chunk = labels[i : i + st.labels]
                asks.append(
                    {"type": "clarify", "question": "Could you clarify these?", "labels": chunk}
                )
        self._asks = asks
        self._plan: list[ActionLike] | None = None
        self._obs0, self._info0 = observation, info

    def act(self, observation: Observation, info: dict[str, Any]) -> ActionLike:
        task = self._task
        if self._abstain:
            return {
                "type": "abstain",
                "reason": "the request does not look like a database question",
            }
        if self._phase == "ask":
            if self._asked:
                self._told += "\n" + str(observation.get("last", ""))
            if self._asks:
                self._asked = True
                return self._asks.pop(0)
            told_all = all(v in self._told for v in hidden_values(task))
            if not told_all and self.strategy.guess == "abstain":
                self._phase, self._plan = (
                    "plan",
                    [{"type": "abstain", "reason": "I could not settle every part of the request"}],
                )
            elif self.strategy.abstain_on != "none" and not task.answerable:
                # the cue alone decides declining: where it did not fire, the strategy answers
                # its literal reading (it cannot tell an unanswerable request any other way)
                from clarisql.policies.baselines import AnswerWithoutClarifyingPolicy

                self._phase = "plan"
                self._plan = [
                    a
                    for a in AnswerWithoutClarifyingPolicy().plan(task)
                    if not (isinstance(a, dict) and a["type"] == "clarify")
                ]
            elif told_all or self._guess is None:
                self._phase = "plan"
                self._plan = _IdealWriter.finish(task, self._told)
            else:
                self._phase = "guess"
                self._guess.reset(self._obs0, self._info0, task)
        if self._phase == "guess":
            assert self._guess is not None
            return self._guess.act(observation, info)
        return self._plan.pop(0) if self._plan else STOP


class IntentThenGuessPolicy(StrategyPolicy):
    """Asks only the intent, then guesses every untold value by the nearest database value."""

    name = "intent-then-guess"

    def __init__(self) -> None:
        super().__init__(Strategy(labels=1, turns=1, guess="nearest"))


class LabelPerTurnPolicy(StrategyPolicy):
    """One label per turn over as many turns as the episode allows (eight at most)."""

    name = "label-per-turn"

    def __init__(self) -> None:
        super().__init__(Strategy(labels=1, turns=8))


class CueAbstainPolicy(StrategyPolicy):
    """Abstains on surface cue words (:data:`CUE_WORDS`), else guesses the nearest values."""

    name = "cue-abstain"

    def __init__(self) -> None:
        super().__init__(Strategy(guess="nearest", abstain_on="words"))


__all__ = [
    "CUE_WORDS",
    "CUES",
    "GUESSES",
    "MostFrequentPolicy",
    "IntentThenGuessPolicy",
    "LabelPerTurnPolicy",
    "CueAbstainPolicy",
    "TrigramPolicy",
    "most_frequent",
    "trigram_nearest",
    "value_counts_query",
    "parse_value_counts",
    "hidden_values",
    "HONEST_MISS",
    "HONEST_MISS_ABSTAIN",
    "HONEST_MISS_VARIANTS",
    "TEXT_PROBES",
    "FirstMatchPolicy",
    "HonestMissPolicy",
    "Strategy",
    "StrategyPolicy",
    "GOLD_READING_PROBES",
    "LabelShotgunPolicy",
    "LabelSweepPolicy",
    "NearestValuePolicy",
    "TextShotgunPolicy",
    "candidate_labels",
    "first_match",
    "levenshtein",
    "nearest_value",
    "parse_values",
    "replace_literals",
    "shotgun_questions",
    "string_literals",
    "utterance_spans",
    "values_query",
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
