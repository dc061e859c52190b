"""The plug-in seam: a hand-written domain run through the synthesis engine's checks.

A *domain* is what only its author knows: an invented database, the questions people ask about
it and how they phrase them. Everything else (drafting with quotas, verification on the data,
dedup, ids, a deterministic order, the cache folder and its card) is the engine's, shared with
``clarisql synth``. The built-in suite (:mod:`clarisql.envs.suites.builtin`) is one domain.

Contract
- A domain (:class:`Domain`) supplies ``name`` (suite name and id prefix), ``db_key`` (every
  task's ``db``), ``build_database(path, rng)`` (writes the SQLite file, returns the domain's
  own description of what it made, its *world*), ``plan(run)`` (an ordered list of
  :class:`Quota`: a label, an exact count and maker callables that return a :class:`DomainDraft`
  or ``None``), and ``tidy(text)`` (its phrasing clean-up).
- The engine (:func:`generate_domain`) builds the database from ``random.Random(seed)``, asks the
  plan for its quotas and calls each quota's makers round-robin (after every third rejected
  draft the next maker takes the turn) until the count is met; a quota it cannot meet raises
  :class:`DomainError` (a domain bug, never a short suite). Each draft is verified by
  :func:`check_draft` on the database, through the same read-only sandbox and the same answer
  comparison (:func:`~clarisql.envs.synth.verify.same_answer`) and state digest the environment
  uses:

  * labels: a ``Missing`` label has empty content; every other non-intent label's content is
    written in the utterance;
  * reads: the optional ``check`` query is true; the gold answer is not trivial; on an
    underspecified task the literal reading (``naive_sql``) runs and gives a different answer;
  * unanswerable (TrustSQL's five kinds): the literal reading runs and answers something; the
    three column kinds name the requested ``attribute``, which is no column of the database, and
    for column-unrelated none of its words is a word of a column name; when an out-of-domain
    request names what it is about (``attribute``, e.g. a poem), that shares no content word with
    the table or column names (outside-knowledge requests about the data's own subjects, such as
    an exchange rate for a price, name none);
  * writes: every gold write changes at least one row and every gold read returns rows; the
    golden list changes the final-state digest; on an underspecified write the literal list
    (``naive_actions``) ends in a different state;
  * no utterance repeats (whitespace- and case-insensitive).

  The accepted drafts are shuffled with the same ``rng`` and numbered ``<name>/0001``...; the same
  domain code and seed give byte-identical tasks. SQL errors in a domain's queries raise
  :class:`DomainError` (a template bug fails loudly).
- :func:`build_domain_folder` writes ``<db_file>``, ``tasks.jsonl`` and ``SUITE.md`` into a folder
  through temporary files and :func:`os.replace`, so concurrent builders never expose a
  half-written file.
"""

from __future__ import annotations

import os
import random
import re
import tempfile
from collections import Counter
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Protocol

from clarisql.envs.state.deferred import session_state
from clarisql.envs.synth.layers.common import misspell_word
from clarisql.envs.synth.layers.unanswerable import words
from clarisql.envs.synth.verify import Verifier, echoes_question, is_trivial, same_answer
from clarisql.envs.tasks import UNANSWERABLE_KINDS, Task, Underspec, save_tasks

K_SURFACE, K_RELATED, K_UNRELATED, K_NONSQL, K_OOD = UNANSWERABLE_KINDS[:5]
COLUMN_KINDS = (K_SURFACE, K_RELATED, K_UNRELATED)
CARD_FILE = "SUITE.md"
_WRITE_VERBS = ("INSERT", "UPDATE", "DELETE", "REPLACE")


class DomainError(RuntimeError):
    """A domain's plan cannot be met, or one of its queries fails (a bug in the domain)."""


@dataclass
class DomainDraft:
    """One task a domain's maker proposes (before the engine's checks and numbering).

    ``category`` is a Task category (``unanswerable:<kind>`` for unanswerable ones, ``write`` for
    writes); ``tables`` are the gold tables read or written; ``attribute`` is the column a
    column-surface / -related / -unrelated request asks for, or what an out-of-domain one is
    about; ``check`` an optional query whose
    first value must be true for the draft to be kept (e.g. no tie for first place).
    """

    template: str
    category: str
    utterance: str
    tables: list[str]
    gold_sql: str | None = None
    naive_sql: str | None = None
    gold_actions: list[str] = field(default_factory=list)
    naive_actions: list[str] = field(default_factory=list)
    underspecs: list[Underspec] = field(default_factory=list)
    unanswerable_kind: str | None = None
    check: str | None = None
    attribute: str | None = None

    @property
    def writable(self) -> bool:
        return self.category == "write"

    def to_task(self, db: str, task_id: str) -> Task:
        """The task (metadata: ``template``, ``tables``, ``naive_sql`` or ``naive_actions``)."""
        meta: dict[str, Any] = {"template": self.template, "tables": list(self.tables)}
        if self.writable:
            meta["naive_actions"] = list(self.naive_actions or self.gold_actions)
        else:
            meta["naive_sql"] = self.naive_sql if self.naive_sql is not None else self.gold_sql
        return Task(
            id=task_id,
            db=db,
            utterance=self.utterance,
            category=self.category,
            writable=self.writable,
            gold_sql=self.gold_sql,
            gold_actions=list(self.gold_actions),
            answerable=self.unanswerable_kind is None,
            unanswerable_kind=self.unanswerable_kind,
            underspecs=list(self.underspecs),
            metadata=meta,
        )


Maker = Callable[[], "DomainDraft | None"]


@dataclass(frozen=True)
class Quota:
    """``count`` drafts from ``makers`` (called round-robin), reported as ``label``."""

    label: str
    count: int
    makers: Sequence[Maker]


class DomainRun:
    """What a domain's makers get from the engine: the seeded ``rng``, the domain's ``world``,
    reads of the database (:meth:`rows`, :meth:`col`) and the utterances taken so far."""

    def __init__(self, rng: random.Random, world: Any, verifier: Verifier):
        self.rng = rng
        self.world = world
        self.verifier = verifier
        self._taken: set[str] = set()
        self._schema: tuple[frozenset[str], frozenset[str], frozenset[str]] | None = None

    def rows(self, sql: str) -> list[tuple]:
        """The statement's rows (read-only sandbox); :class:`DomainError` when it fails."""
        out = self.verifier.rows(sql)
        if out is None:
            raise DomainError(f"{sql}: {self.verifier.last_error}")
        return out

    def col(self, sql: str) -> list[Any]:
        """The first column of :meth:`rows`."""
        return [r[0] for r in self.rows(sql)]

    def taken(self, utterance: str) -> bool:
        """Whether an accepted task already has this utterance (whitespace, case ignored)."""
        return _norm(utterance) in self._taken

    def take(self, utterance: str) -> None:
        self._taken.add(_norm(utterance))

    def schema(self) -> tuple[frozenset[str], frozenset[str], frozenset[str]]:
        """(normalised column names, words of column names, words of table and column names)."""
        if self._schema is None:
            tables = self.col("SELECT name FROM sqlite_master WHERE type = 'table' ORDER BY 1")
            cols = self.col(
                "SELECT DISTINCT p.name FROM sqlite_master AS m, pragma_table_info(m.name) AS p "
                "WHERE m.type = 'table' ORDER BY 1"
            )
            col_words = frozenset(w for c in cols for w in words(c))
            all_words = col_words | {w for t in tables for w in words(t)}
            self._schema = (frozenset(_ident(c) for c in cols), col_words, all_words)
        return self._schema


class Domain(Protocol):
    """What a domain supplies (see the module docstring)."""

    name: str
    db_key: str

    def build_database(self, path: Path, rng: random.Random) -> Any:
        """Write the domain's SQLite database to ``path`` (new or empty); return its world."""
        ...

    def plan(self, run: DomainRun) -> list[Quota]:
        """The quotas, in the order they are drafted."""
        ...

    def tidy(self, text: str) -> str:
        """An utterance as the user writes it (spacing, capitals)."""
        ...


def _norm(text: str) -> str:
    return " ".join(text.split()).casefold()


def _ident(name: str) -> str:
    return re.sub(r"[^0-9a-z]", "", name.casefold())


# --- the engine's checks ---------------------------------------------------------------------------
def check_draft(run: DomainRun, d: DomainDraft, tidy: Callable[[str], str]) -> bool:
    """Whether ``d`` passes the engine's checks (module docstring); tidies its utterance and
    marks it taken when it does. :class:`DomainError` on a label or SQL bug of the domain."""
    d.utterance = tidy(d.utterance)
    if run.taken(d.utterance):
        return False
    for u in d.underspecs:
        lab = u.label
        if lab.kind == "Missing" and lab.content:
            raise DomainError(f"{d.template}: a Missing label names {lab.content!r}")
        if lab.kind not in ("Missing", "intent") and lab.content.casefold() not in (
            d.utterance.casefold()
        ):
            raise DomainError(f"{d.template}: {lab.content!r} is not in {d.utterance!r}")
    ok = _check_write(run, d) if d.writable else _check_read(run, d)
    if ok:
        run.take(d.utterance)
    return ok


def _check_read(run: DomainRun, d: DomainDraft) -> bool:
    if d.check is not None and not run.rows(d.check)[0][0]:
        return False
    naive = run.rows(d.naive_sql or d.gold_sql or "")
    if d.unanswerable_kind is not None:
        return not is_trivial(naive) and _unanswerable_on_schema(run, d)
    gold = run.rows(d.gold_sql or "")
    if is_trivial(gold) or echoes_question(gold, d.utterance):
        return False
    return not (d.underspecs and same_answer(gold, naive))


def _unanswerable_on_schema(run: DomainRun, d: DomainDraft) -> bool:
    """TrustSQL's kinds checked against the schema (module docstring)."""
    names, col_words, all_words = run.schema()
    kind, attr = d.unanswerable_kind, d.attribute
    if kind in COLUMN_KINDS and not attr:
        return False
    if attr and _ident(attr) in names:
        return False
    if kind == K_UNRELATED:
        return not (words(attr or "") & col_words)
    if kind == K_OOD and attr:
        return not (words(attr) & all_words)
    return True


def _state(run: DomainRun, actions: list[str], strict: bool) -> str:
    """Final-state key (:meth:`~clarisql.envs.state.deferred.StateDigest.key`, as
    :meth:`Verifier.base_digest`) after ``actions`` in a private writable session; ``""`` when ``strict``
    and a write changes no row or a read returns none."""
    v = run.verifier
    with v.image.session(writable=True, limits=v.write_limits) as s:
        for a in actions:
            res = s.execute(a)
            if not res.ok:
                raise DomainError(f"{a}: {res.error}")
            is_write = a.lstrip().split(" ", 1)[0].upper() in _WRITE_VERBS
            if strict and (res.changes < 1 if is_write else not res.rows):
                return ""
        return session_state(s, v.digest_config).key()


def _check_write(run: DomainRun, d: DomainDraft) -> bool:
    gold = _state(run, d.gold_actions, strict=True)
    if not gold or gold == run.verifier.base_digest():
        return False
    return not (d.underspecs and _state(run, d.naive_actions, strict=False) == gold)


# --- drafting ---------------------------------------------------------------------------------------
def fill_quota(run: DomainRun, quota: Quota, tidy: Callable[[str], str]) -> list[DomainDraft]:
    """Exactly ``quota.count`` checked drafts; :class:`DomainError` after too many failures."""
    out: list[DomainDraft] = []
    fails = 0
    makers = quota.makers
    while len(out) < quota.count:
        if fails > 60 * quota.count + 200:
            raise DomainError(f"cannot make {quota.count} {quota.label} tasks")
        d = makers[(len(out) + fails // 3) % len(makers)]()
        if d is not None and check_draft(run, d, tidy):
            out.append(d)
        else:
            fails += 1
    return out


def generate_domain(domain: Domain, db_path: str | Path, seed: int = 0) -> list[Task]:
    """Write ``domain``'s database to ``db_path`` and return its checked, shuffled, numbered tasks."""
    rng = random.Random(seed)
    world = domain.build_database(Path(db_path), rng)
    run = DomainRun(rng, world, Verifier(Path(db_path), max_rows=100_000))
    drafts: list[DomainDraft] = []
    for quota in domain.plan(run):
        drafts += fill_quota(run, quota, domain.tidy)
    rng.shuffle(drafts)
    return [d.to_task(domain.db_key, f"{domain.name}/{i:04d}") for i, d in enumerate(drafts, 1)]


def misspell(rng: random.Random, text: str, forbidden: Sequence[str]) -> str | None:
    """A one-letter misspelling (swap, drop or double) of one word of ``text`` (of >= 5 letters
    if it has one, else >= 4) that equals neither ``text`` nor any of ``forbidden`` (12 tries)."""
    ws = text.split(" ")
    idxs = [i for i, w in enumerate(ws) if len(w) >= 5 and w.isalpha()]
    idxs = idxs or [i for i, w in enumerate(ws) if len(w) >= 4 and w.isalpha()]
    if not idxs:
        return None
    bad = {f.casefold() for f in forbidden} | {text.casefold()}
    for _ in range(12):
        i = rng.choice(idxs)
        nw = misspell_word(rng, ws[i])
        cand = " ".join([*ws[:i], nw, *ws[i + 1 :]])
        if cand.casefold() not in bad:
            return cand
    return None


# --- the suite folder ------------------------------------------------------------------------------
def card_text(domain: Domain, tasks: Sequence[Task], seed: int, version: object) -> str:
    """SUITE.md of a domain suite: how it was made and its counts per category and kind."""
    lines = [
        f"# Suite `{domain.name}`",
        "",
        f"Made by the domain plug-in `{type(domain).__module__}.{type(domain).__name__}` "
        f"(generator version {version}, seed {seed}) through clarisql's synthesis engine "
        "(clarisql.envs.synth.domain): every task checked on the database.",
        "",
        f"{len(tasks)} tasks, {len({t.metadata.get('template') for t in tasks})} templates, "
        f"{len({x for t in tasks for x in t.metadata.get('tables', [])})} tables used.",
        "",
        "| category | tasks | underspecified | writes |",
        "|---|---:|---:|---:|",
    ]
    cats = Counter(t.category for t in tasks)
    for cat in sorted(cats):
        ts = [t for t in tasks if t.category == cat]
        under = sum(bool(t.underspecs) for t in ts)
        lines.append(f"| {cat} | {cats[cat]} | {under} | {sum(t.writable for t in ts)} |")
    kinds = Counter(u.label.kind for t in tasks for u in t.underspecs)
    lines += ["", "Labels: " + ", ".join(f"{k} {n}" for k, n in sorted(kinds.items())), ""]
    return "\n".join(lines)


def publish(tmp: str | Path, final: Path) -> None:
    """Move a finished temporary file into place atomically (readable by all)."""
    os.chmod(tmp, 0o644)  # mkstemp makes 0600 files; the cache may be shared
    try:
        os.replace(tmp, final)
    except PermissionError:  # pragma: no cover - Windows: another process has it open
        if not final.exists():
            raise


def build_domain_folder(
    domain: Domain,
    folder: str | Path,
    seed: int,
    db_file: str,
    tasks_file: str = "tasks.jsonl",
    version: object = "",
) -> tuple[Path, Path]:
    """Generate ``domain`` for ``seed`` into ``folder`` (atomically); return (db, tasks) paths.

    ``SUITE.md`` (:func:`card_text`) is published first and the database last, so a folder whose
    database and task file are both present is complete.
    """
    folder = Path(folder)
    folder.mkdir(parents=True, exist_ok=True)
    tmps = []
    for prefix, suffix in ((".db-", ".sqlite.tmp"), (".tasks-", ".jsonl.tmp"), (".card-", ".tmp")):
        fd, p = tempfile.mkstemp(prefix=prefix, suffix=suffix, dir=folder)
        os.close(fd)
        tmps.append(p)
    tmp_db, tmp_tasks, tmp_card = tmps
    try:
        tasks = generate_domain(domain, tmp_db, seed)
        save_tasks(tasks, tmp_tasks)
        Path(tmp_card).write_text(card_text(domain, tasks, seed, version), encoding="utf-8")
        db_path, tasks_path = folder / db_file, folder / tasks_file
        publish(tmp_card, folder / CARD_FILE)
        publish(tmp_tasks, tasks_path)
        publish(tmp_db, db_path)
    finally:
        for p in tmps:
            if os.path.exists(p):
                os.unlink(p)
    return db_path, tasks_path


__all__ = [
    "CARD_FILE",
    "Domain",
    "DomainDraft",
    "DomainError",
    "DomainRun",
    "Maker",
    "Quota",
    "build_domain_folder",
    "card_text",
    "check_draft",
    "fill_quota",
    "generate_domain",
    "misspell",
    "publish",
]
