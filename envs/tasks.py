"""The task model: one versioned, JSON-serialisable schema for every episode kind.

A :class:`Task` describes one episode: which database, whether the agent may write, what the user
says first, the gold answer or golden action list, whether the request can be answered at all, and
how it is underspecified (ODUTQA-MDC's labels, each with the value that resolves it).

JSONL files load and save losslessly: ``Task.from_dict(t.to_dict()) == t`` for every task, and
``save_tasks(load_tasks(p), q)`` writes the same records again. Loading a broken record raises
:class:`TaskFormatError` naming the file, the line and the field.

Schema versions: version 1 is the original record; version 2 adds ``context`` (earlier dialogue
turns) and ``gold_alternatives`` (other acceptable gold queries). A record is written with the
lowest version that holds it (a task without the new fields is byte-identical to a version-1
record), so older readers keep reading what they can and refuse, by version, what they cannot.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Iterator
from dataclasses import dataclass, field, fields
from pathlib import Path
from typing import Any

#: The newest task schema this code reads and writes (see the module docstring).
SCHEMA_VERSION = 2
#: Every schema version :meth:`Task.from_dict` accepts.
SUPPORTED_SCHEMA_VERSIONS = (1, 2)
#: Roles of a ``context`` turn: what the user said and what the system (agent) said.
CONTEXT_ROLES = ("user", "assistant")

#: TrustSQL's kinds of unanswerable request: schema-incompatible (a column that looks like an
#: existing one, a related one the schema lacks, an unrelated one), ``non-sql`` (about existing
#: columns but beyond SQL: charts, forecasts, models) and ``out-of-domain`` (outside the
#: database's subject, or needing outside knowledge).
UNANSWERABLE_KINDS = (
    "column-surface",
    "column-related",
    "column-unrelated",
    "non-sql",
    "out-of-domain",
)
#: For imported data that marks a question unanswerable without saying why (EHRSQL, CoSQL's
#: CANNOT_ANSWER); generators never produce it, so it is not one of :data:`UNANSWERABLE_KINDS`.
UNKNOWN_KIND = "unknown"
#: Every kind a task may carry: TrustSQL's five and :data:`UNKNOWN_KIND`.
ALL_UNANSWERABLE_KINDS = (*UNANSWERABLE_KINDS, UNKNOWN_KIND)
#: Old kind names still accepted when loading task files, mapped to the current ones.
UNANSWERABLE_KIND_ALIASES = {"external-knowledge": "out-of-domain"}

#: ODUTQA-MDC's FROM-clause (scope) problem kinds and WHERE-clause (condition) kind.
SCOPE_KINDS = ("Missing", "Error", "Unmatch")
CONDITION_KINDS = ("not-exist",)

#: Categories used in reports. ``unanswerable:<kind>`` is used for unanswerable tasks.
CATEGORIES = (
    "well-specified",
    "select",
    "from",
    "where",
    "mixed",
    "write",
    *(f"unanswerable:{k}" for k in UNANSWERABLE_KINDS),
)


class TaskFormatError(ValueError):
    """A task record or task file is malformed; the message names where and what."""


@dataclass(frozen=True)
class Label:
    """One underspecification label in ODUTQA-MDC's form.

    - ``kind == "intent"``: the SELECT clause is unclear (content and slot are ``""``).
    - ``kind in SCOPE_KINDS``: a FROM-clause scope triple ``[content, slot, kind]``, e.g.
      ``["", "year", "Missing"]`` or ``["Fengtai", "district", "Error"]``.
    - ``kind == "not-exist"``: a WHERE-clause condition triple ``[content, slot, "not-exist"]``,
      e.g. ``["Airport City Group", "enterprise", "not-exist"]``.

    Agents send labels in the same form (without ``value``); the simulator compares
    :meth:`key` values, so matching is exact up to surrounding white space and letter case.
    """

    kind: str
    content: str = ""
    slot: str = ""

    @property
    def clause(self) -> str:
        """The SQL clause this label is about: ``select``, ``from`` or ``where``."""
        if self.kind == "intent":
            return "select"
        if self.kind in SCOPE_KINDS:
            return "from"
        return "where"

    def key(self) -> tuple[str, str, str]:
        return (
            self.kind.strip().lower(),
            self.content.strip().casefold(),
            self.slot.strip().lower(),
        )

    def to_json(self) -> list[str] | str:
        return "intent" if self.kind == "intent" else [self.content, self.slot, self.kind]

    @classmethod
    def parse(cls, obj: Any) -> Label:
        """Parse ``"intent"``, ``[content, slot, kind]`` or ``{"kind", "content", "slot"}``.

        ODUTQA-MDC's Chinese kind and slot names (:data:`CHINESE_KINDS`, :data:`CHINESE_SLOTS`)
        are mapped, e.g. ``["X", "企业名称", "不存在"]`` is ``["X", "enterprise", "not-exist"]``.
        Raises ``ValueError`` with a readable message on anything else.
        """
        if isinstance(obj, Label):
            return obj
        if isinstance(obj, str):
            if (
                obj.strip().lower() in ("intent", "select")
                or CHINESE_KINDS.get(obj.strip()) == "intent"
            ):
                return cls("intent")
            raise ValueError(f"label {obj!r}: a string label must be 'intent'")
        if isinstance(obj, (list, tuple)):
            if len(obj) == 1 and isinstance(obj[0], str):
                return cls.parse(obj[0])
            if len(obj) != 3 or not all(isinstance(x, str) for x in obj):
                raise ValueError(f"label {obj!r}: expected [content, slot, kind] of three strings")
            content, slot, kind = obj
            return cls(_canonical_kind(kind), content, _canonical_slot(slot))
        if isinstance(obj, dict):
            kind = obj.get("kind")
            if not isinstance(kind, str):
                raise ValueError(f"label {obj!r}: needs a string 'kind'")
            content, slot = obj.get("content", ""), obj.get("slot", "")
            if not isinstance(content, str) or not isinstance(slot, str):
                raise ValueError(f"label {obj!r}: 'content' and 'slot' must be strings")
            return cls(_canonical_kind(kind), content, _canonical_slot(slot))
        raise ValueError(f"label {obj!r}: expected 'intent', [content, slot, kind] or a dict")


#: ODUTQA-MDC's Chinese label names, mapped to the schema's: kinds (its condition triples say
#: ``不存在``; the scope kinds are English in the dataset, Chinese forms accepted too) and slot
#: types (its condition slots are ``企业名称`` / ``项目名称``, its FROM-clarification slots
#: ``城市`` / ``区域`` / ``年份``).
CHINESE_KINDS = {
    "不存在": "not-exist",
    "缺失": "Missing",
    "错误": "Error",
    "不匹配": "Unmatch",
    "意图": "intent",
    "意图不明": "intent",
}
CHINESE_SLOTS = {
    "企业名称": "enterprise",
    "项目名称": "project",
    "城市": "city",
    "区域": "district",
    "年份": "year",
}


def _canonical_slot(slot: str) -> str:
    return CHINESE_SLOTS.get(slot.strip(), slot)


def _canonical_kind(kind: str) -> str:
    k = kind.strip()
    if k in CHINESE_KINDS:
        return CHINESE_KINDS[k]
    low = k.lower().replace("_", "-").replace(" ", "-")
    for known in (*SCOPE_KINDS, *CONDITION_KINDS, "intent"):
        if low == known.lower():
            return known
    if low in ("notexist", "not-exists", "nonexistent"):
        return "not-exist"
    raise ValueError(
        f"label kind {kind!r}: expected one of intent, Missing, Error, Unmatch, not-exist"
    )


@dataclass(frozen=True)
class Underspec:
    """A gold label together with the clarification value that resolves it."""

    label: Label
    value: str

    def to_dict(self) -> dict[str, Any]:
        return {"label": self.label.to_json(), "value": self.value}

    @classmethod
    def from_dict(cls, d: Any) -> Underspec:
        if not isinstance(d, dict) or "label" not in d or "value" not in d:
            raise ValueError(f"underspecification {d!r}: expected {{'label': ..., 'value': ...}}")
        if not isinstance(d["value"], str):
            raise ValueError(f"underspecification {d!r}: 'value' must be a string")
        return cls(Label.parse(d["label"]), d["value"])


@dataclass
class Task:
    """One episode's specification (schema version :data:`SCHEMA_VERSION`).

    Fields
    - ``id``: unique within a suite (DySQL tasks use ``<db>/<task_index>``).
    - ``db``: database reference: a path to an SQLite file, or ``suite:NAME`` for a database a
      suite provides (``builtin`` resolves to the generated built-in database).
    - ``writable``: the episode may change the database (CRUD); read-only episodes refuse writes.
    - ``utterance``: what the user says first (a question or an instruction).
    - ``category``: one of :data:`CATEGORIES` (free strings are kept, reports group by them).
    - ``gold_sql``: the query whose result is the gold answer (read tasks).
    - ``gold_actions``: golden SQL action list, replayed in order (write tasks).
    - ``gold_answer``: expected answer rows (lists); ``None`` means "compute from gold_sql".
    - ``gold_ordered``: whether row order matters; ``None`` means "derive from gold_sql".
    - ``gold_digest``: expected final-state digest (an absolute digest,
      :func:`clarisql.envs.state.digest.connection_digest` of the target state, or a ``delta:`` state
      key); ``None`` means "replay gold_actions" (cached).
    - ``answerable`` / ``unanswerable_kind``: TrustSQL answerability (one of
      :data:`UNANSWERABLE_KINDS`, or ``unknown`` for imported data that does not say; the old name ``external-knowledge`` is read as ``out-of-domain``).
    - ``underspecs``: the gold labels with their clarification values.
    - ``instruction``: hidden instruction for an instruction-following user (DySQL-Bench).
    - ``context``: earlier dialogue turns, shown before ``utterance`` (schema version 2), each
      ``{"role": "user" | "assistant", "content": str}``: CoSQL's turns before a clarification.
    - ``gold_alternatives``: other gold queries, each an acceptable reading (AmbiQT/AMBROSIA;
      schema version 2); a read answer is correct when it matches ``gold_sql``'s rows or any
      alternative's (:func:`clarisql.rewards.alternatives.matches_any_gold`).
    - ``metadata``: free, JSON-serialisable.
    - ``schema_version``: the version the record was read as; :meth:`to_dict` writes the lowest
      version that holds the task (:meth:`required_schema_version`).
    """

    id: str
    db: str
    utterance: str
    category: str = "well-specified"
    writable: bool = False
    gold_sql: str | None = None
    gold_actions: list[str] = field(default_factory=list)
    gold_answer: list[list[Any]] | None = None
    gold_ordered: bool | None = None
    gold_digest: str | None = None
    answerable: bool = True
    unanswerable_kind: str | None = None
    underspecs: list[Underspec] = field(default_factory=list)
    instruction: str | None = None
    metadata: dict[str, Any] = field(default_factory=dict)
    schema_version: int = 1
    context: list[dict[str, str]] = field(default_factory=list)
    gold_alternatives: list[str] = field(default_factory=list)

    def __post_init__(self) -> None:
        old = self.unanswerable_kind
        if isinstance(old, str) and old in UNANSWERABLE_KIND_ALIASES:  # an older task file
            self.unanswerable_kind = UNANSWERABLE_KIND_ALIASES[old]
            if self.category == f"unanswerable:{old}":
                self.category = f"unanswerable:{self.unanswerable_kind}"
        if (
            isinstance(self.schema_version, int)
            and self.schema_version in SUPPORTED_SCHEMA_VERSIONS
        ):
            self.schema_version = max(self.schema_version, self.required_schema_version())
        self.validate()

    # --- derived views -------------------------------------------------------------------
    @property
    def intent_underspecified(self) -> bool:
        return any(u.label.kind == "intent" for u in self.underspecs)

    @property
    def scope_labels(self) -> list[Underspec]:
        return [u for u in self.underspecs if u.label.clause == "from"]

    @property
    def condition_labels(self) -> list[Underspec]:
        return [u for u in self.underspecs if u.label.clause == "where"]

    @property
    def gold_clauses(self) -> frozenset[str]:
        """The clauses with at least one gold label (``select``, ``from``, ``where``)."""
        return frozenset(u.label.clause for u in self.underspecs)

    # --- validation and (de)serialisation -------------------------------------------------
    def validate(self) -> None:
        """Raise :class:`TaskFormatError` if the task is inconsistent."""

        def bad(msg: str) -> TaskFormatError:
            return TaskFormatError(f"task {self.id!r}: {msg}")

        if not isinstance(self.id, str) or not self.id:
            raise TaskFormatError(f"task id must be a non-empty string, got {self.id!r}")
        for name in ("db", "utterance", "category"):
            if not isinstance(getattr(self, name), str):
                raise bad(f"'{name}' must be a string")
        if not self.db:
            raise bad("'db' is empty")
        if not isinstance(self.writable, bool) or not isinstance(self.answerable, bool):
            raise bad("'writable' and 'answerable' must be booleans")
        if self.gold_sql is not None and not isinstance(self.gold_sql, str):
            raise bad("'gold_sql' must be a string or null")
        if not isinstance(self.gold_actions, list) or not all(
            isinstance(a, str) for a in self.gold_actions
        ):
            raise bad("'gold_actions' must be a list of SQL strings")
        if self.gold_answer is not None and not (
            isinstance(self.gold_answer, list)
            and all(isinstance(r, (list, tuple)) for r in self.gold_answer)
        ):
            raise bad("'gold_answer' must be a list of rows (lists) or null")
        if self.answerable:
            if self.unanswerable_kind is not None:
                raise bad("an answerable task has no 'unanswerable_kind'")
        elif self.unanswerable_kind not in ALL_UNANSWERABLE_KINDS:
            raise bad(
                f"unanswerable task needs 'unanswerable_kind' in {ALL_UNANSWERABLE_KINDS}, "
                f"got {self.unanswerable_kind!r}"
            )
        if (
            self.answerable
            and not self.writable
            and self.gold_sql is None
            and self.gold_answer is None
        ):
            raise bad("an answerable read task needs 'gold_sql' or 'gold_answer'")
        if self.writable and self.answerable and not self.gold_actions and self.gold_digest is None:
            raise bad("an answerable write task needs 'gold_actions' or 'gold_digest'")
        if not all(isinstance(u, Underspec) for u in self.underspecs):
            raise bad("'underspecs' must hold Underspec items")
        if not isinstance(self.metadata, dict):
            raise bad("'metadata' must be an object")
        if self.schema_version not in SUPPORTED_SCHEMA_VERSIONS:
            raise bad(
                f"schema_version {self.schema_version} is not supported "
                f"(expected one of {SUPPORTED_SCHEMA_VERSIONS})"
            )
        if not isinstance(self.context, list):
            raise bad("'context' must be a list of {'role', 'content'} turns")
        for i, turn in enumerate(self.context):
            if (
                not isinstance(turn, dict)
                or set(turn) != {"role", "content"}
                or turn["role"] not in CONTEXT_ROLES
                or not isinstance(turn["content"], str)
            ):
                raise bad(
                    f"context turn {i} must be {{'role': 'user' | 'assistant', 'content': str}}, "
                    f"got {turn!r}"
                )
        if not isinstance(self.gold_alternatives, list) or not all(
            isinstance(a, str) and a.strip() for a in self.gold_alternatives
        ):
            raise bad("'gold_alternatives' must be a list of non-empty SQL strings")
        if self.gold_alternatives and (self.writable or not self.answerable):
            raise bad("'gold_alternatives' are for answerable read tasks only")
        if self.gold_alternatives and not self.gold_sql:
            raise bad("'gold_alternatives' need a 'gold_sql' (the first reading)")

    def required_schema_version(self) -> int:
        """The lowest schema version that can hold this task (2 when it uses the new fields)."""
        return 2 if (self.context or self.gold_alternatives) else 1

    def to_dict(self) -> dict[str, Any]:
        d = {f.name: getattr(self, f.name) for f in fields(self)}
        d["underspecs"] = [u.to_dict() for u in self.underspecs]
        d["gold_answer"] = None if self.gold_answer is None else [list(r) for r in self.gold_answer]
        d["gold_actions"] = list(self.gold_actions)
        d["metadata"] = dict(self.metadata)
        d["schema_version"] = max(self.schema_version, self.required_schema_version())
        if self.context:
            d["context"] = [dict(t) for t in self.context]
        else:
            del d["context"]
        if self.gold_alternatives:
            d["gold_alternatives"] = list(self.gold_alternatives)
        else:
            del d["gold_alternatives"]
        return d

    @classmethod
    def from_dict(cls, d: Any) -> Task:
        if not isinstance(d, dict):
            raise TaskFormatError(f"a task record must be a JSON object, got {type(d).__name__}")
        known = {f.name for f in fields(cls)}
        unknown = set(d) - known
        if unknown:
            raise TaskFormatError(f"task {d.get('id')!r}: unknown field(s) {sorted(unknown)}")
        for required in ("id", "db", "utterance"):
            if required not in d:
                raise TaskFormatError(f"task {d.get('id')!r}: missing field '{required}'")
        kw = dict(d)
        try:
            kw["underspecs"] = [Underspec.from_dict(u) for u in d.get("underspecs") or []]
        except ValueError as e:
            raise TaskFormatError(f"task {d.get('id')!r}: {e}") from None
        if kw.get("gold_answer") is not None and isinstance(kw["gold_answer"], list):
            kw["gold_answer"] = [
                list(r) if isinstance(r, (list, tuple)) else r for r in kw["gold_answer"]
            ]
        version = kw.get("schema_version", 1)
        if version == 1 and (kw.get("context") or kw.get("gold_alternatives")):
            raise TaskFormatError(
                f"task {d.get('id')!r}: 'context' and 'gold_alternatives' need schema_version 2"
            )
        if isinstance(kw.get("context"), list):
            kw["context"] = [dict(t) if isinstance(t, dict) else t for t in kw["context"]]
        try:
            return cls(**kw)
        except TypeError as e:
            raise TaskFormatError(f"task {d.get('id')!r}: {e}") from None


def iter_tasks(path: str | Path) -> Iterator[Task]:
    """Yield tasks from a JSONL file (one JSON object a line; blank lines skipped)."""
    p = Path(path)
    try:
        fh = p.open(encoding="utf-8")
    except OSError as e:
        raise TaskFormatError(f"cannot read task file {p}: {e.strerror or e}") from None
    with fh:
        lineno = 0
        try:
            for lineno, line in enumerate(fh, 1):
                if not line.strip():
                    continue
                try:
                    obj = json.loads(line)
                except (json.JSONDecodeError, RecursionError, ValueError) as e:
                    msg = e.msg if isinstance(e, json.JSONDecodeError) else type(e).__name__
                    raise TaskFormatError(f"{p}:{lineno}: not valid JSON ({msg})") from None
                try:
                    yield Task.from_dict(obj)
                except TaskFormatError as e:
                    raise TaskFormatError(f"{p}:{lineno}: {e}") from None
        except UnicodeDecodeError:
            raise TaskFormatError(f"{p}:{lineno + 1}: not UTF-8 text") from None


def load_tasks(path: str | Path) -> list[Task]:
    """Load every task of a JSONL file; ids must be unique."""
    tasks = list(iter_tasks(path))
    seen: set[str] = set()
    for t in tasks:
        if t.id in seen:
            raise TaskFormatError(f"{path}: duplicate task id {t.id!r}")
        seen.add(t.id)
    return tasks


def save_tasks(tasks: Iterable[Task], path: str | Path) -> Path:
    """Write tasks as JSONL (UTF-8, one object a line, keys in schema order)."""
    p = Path(path)
    p.parent.mkdir(parents=True, exist_ok=True)
    with p.open("w", encoding="utf-8") as fh:
        for t in tasks:
            fh.write(json.dumps(t.to_dict(), ensure_ascii=False) + "\n")
    return p


__all__ = [
    "ALL_UNANSWERABLE_KINDS",
    "UNKNOWN_KIND",
    "CATEGORIES",
    "CONDITION_KINDS",
    "CONTEXT_ROLES",
    "SCHEMA_VERSION",
    "SUPPORTED_SCHEMA_VERSIONS",
    "SCOPE_KINDS",
    "UNANSWERABLE_KINDS",
    "UNANSWERABLE_KIND_ALIASES",
    "Label",
    "Task",
    "TaskFormatError",
    "Underspec",
    "iter_tasks",
    "load_tasks",
    "save_tasks",
]
