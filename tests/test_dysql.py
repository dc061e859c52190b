"""DySQL-Bench suite: loader, DySQL-compatible digest, success = same final state, scripted policies.

Every runnable task (162 on chinook, music, entertainment, pagila) is replayed in the env under the
``dysql_state`` reward: the golden actions score 1; replays that reach the same state by other SQL
(extra reads, a write rewritten, commuting writes swapped) score 1; a replay with one effective
write dropped or one written value changed scores 0. Each variant's expected outcome is checked
against an independent re-implementation of DySQL-Bench's own hash (sort every table), so the env
must take DySQL-Bench's decision every time.
"""

from __future__ import annotations

import json
import re
import warnings
from dataclasses import dataclass, field
from pathlib import Path

import apsw
import pytest
import sqlglot
from sqlglot import exp
from sqlglot.tokens import TokenType

from clarisql.envs.env import ClarifySQLEnv
from clarisql.envs.sandbox.clock import FROZEN_NOW
from clarisql.envs.sandbox.database import DatabaseImage, get_image
from clarisql.envs.simulators.offline import extract_facts
from clarisql.envs.state.deferred import image_state
from clarisql.envs.state.digest import DigestConfig, connection_digest, image_digest
from clarisql.envs.suites import load_suite
from clarisql.envs.suites.dysql import (
    VOLATILE_COLUMNS,
    BadRecordWarning,
    DySQLDataError,
    MissingDatabaseWarning,
    dysql_bench_hash,
    dysql_digest_config,
    dysql_suite,
    split_statements,
)
from clarisql.envs.tasks import Task, TaskFormatError
from clarisql.policies import make_policy
from clarisql.policies.scripted import ScriptError, ScriptPolicy
from clarisql.rollouts.episode import run_episode

DYSQL = Path(__file__).resolve().parents[1].parent / "shared" / "data" / "dysql"
RUNNABLE = {"chinook": 22, "music": 21, "entertainment": 66, "pagila": 53}

# DySQL-Bench's volatile-column rule (dysql_bench/envs/base.py), used to check our name list.
UPSTREAM_VOLATILE = re.compile(
    r"(?i)^(last_?update|updated_?at|update_?time|modified(_at)?|modification_?time|create(d)?_?at|timestamp)$"
)


def need_data() -> Path:
    if not (DYSQL / "envs.json").is_file():
        pytest.skip(f"{DYSQL} is absent: the DySQL data sits in ../shared beside the checkout")
    return DYSQL


@pytest.fixture(scope="module")
def suite():
    need_data()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", MissingDatabaseWarning)
        return dysql_suite(data=DYSQL)


@pytest.fixture(scope="module")
def env(suite):
    e = ClarifySQLEnv(suite, reward="dysql_state")
    yield e
    e.close()


# --- the loader ---------------------------------------------------------------------------------
def test_loader_reads_every_runnable_task(suite):
    assert len(suite) == sum(RUNNABLE.values()) == 162
    by_db: dict[str, int] = {}
    identity: list[bool] = []
    for t in suite.tasks:
        by_db[t.db] = by_db.get(t.db, 0) + 1
        assert t.id == f"{t.db}/{t.metadata['task_index']}"
        assert t.writable and t.category == "write" and t.answerable
        assert t.gold_actions and all(isinstance(a, str) and a.strip() for a in t.gold_actions)
        assert t.instruction and t.utterance
        # the opening holds the request, not the identity details (asked for later)
        facts = extract_facts(t.instruction)
        assert facts.requests and all(r in t.utterance for r in facts.requests)
        identity.append(bool(facts.identity) and not any(i in t.utterance for i in facts.identity))
        assert isinstance(t.metadata["user_id"], str)
    assert by_db == RUNNABLE
    assert sum(identity) >= 155, sum(identity)
    assert suite.metadata["simulator"] == "instruction" and suite.metadata["max_turns"] == 30
    spec = suite.databases["pagila"]
    assert spec.description and "CREATE TABLE" in spec.description
    assert spec.digest.only_tables is not None and "sqlite_sequence" not in spec.digest.only_tables
    assert suite.task("chinook/0").gold_actions[1].startswith("UPDATE invoices")


def test_missing_databases_are_skipped_with_a_warning_naming_them():
    need_data()
    with pytest.warns(
        MissingDatabaseWarning, match=r"bowling \(111 tasks\).*retail_world \(31 tasks\)"
    ):
        s = load_suite("dysql", data=DYSQL)
    assert s.metadata["missing_databases"]["eu_soccer"] == 215
    assert sorted(s.databases) == sorted(RUNNABLE)


def test_one_database_and_errors(tmp_path, monkeypatch):
    need_data()
    s = load_suite("dysql", data=str(DYSQL), db="music")
    assert len(s) == 21 and {t.db for t in s.tasks} == {"music"}
    assert len(dysql_suite(data=DYSQL, db="chinook,music")) == 43
    with pytest.raises(DySQLDataError, match="bowling.*not in this copy"):
        dysql_suite(data=DYSQL, db="bowling")
    with pytest.raises(ValueError, match="unknown DySQL database"):
        dysql_suite(data=DYSQL, db="nope")
    with pytest.raises(DySQLDataError, match="no envs.json"):
        dysql_suite(data=tmp_path)
    with pytest.raises(DySQLDataError, match="does not exist"):
        dysql_suite(data=tmp_path / "absent")
    monkeypatch.setenv("CLARISQL_DYSQL_DATA", str(DYSQL))
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", MissingDatabaseWarning)
        assert len(dysql_suite()) == 162
    monkeypatch.setenv("CLARISQL_DYSQL_DATA", str(tmp_path / "nowhere"))
    with pytest.raises(DySQLDataError, match="CLARISQL_DYSQL_DATA"):
        dysql_suite()


def test_extra_task_file(tmp_path):
    need_data()
    extra = tmp_path / "mine.json"
    extra.write_text(
        json.dumps(
            [
                {
                    "user_id": 7,
                    "instruction": "I am Luís Gonçalves (CustomerId 1). Set my company to 'X'.",
                    "actions": [
                        {
                            "name": "sql",
                            "kwargs": {
                                "sql": "SELECT 1; UPDATE Customer SET Company = 'X' WHERE CustomerId = 1;"
                            },
                        }
                    ],
                    "outputs": [],
                },
            ]
        ),
        encoding="utf-8",
    )
    s = load_suite("dysql", data=DYSQL, db="music", tasks_file=extra)
    (t,) = s.tasks
    assert t.id == "music/0" and t.metadata["user_id"] == "7"
    assert t.gold_actions == [
        "SELECT 1;",
        "UPDATE Customer SET Company = 'X' WHERE CustomerId = 1;",
    ]
    with pytest.raises(ValueError, match="pass db=NAME"):
        dysql_suite(data=DYSQL, tasks_file=extra)
    (tmp_path / "bad.json").write_text(
        json.dumps([{"instruction": "x", "actions": [{"name": "sql", "kwargs": {}}]}])
    )
    with pytest.raises(TaskFormatError, match=r"bad.json: task #0: action 0: 'kwargs.sql'"):
        dysql_suite(data=DYSQL, db="music", tasks_file=tmp_path / "bad.json")
    good = json.loads(extra.read_text(encoding="utf-8"))[0]
    (tmp_path / "mixed.json").write_text(
        json.dumps([{"instruction": "x", "actions": [{"name": "sql", "kwargs": {}}]}, good])
    )
    with pytest.warns(BadRecordWarning, match="1 malformed"):  # one bad record, not the suite
        mixed = dysql_suite(data=DYSQL, db="music", tasks_file=tmp_path / "mixed.json")
    assert [t.id for t in mixed.tasks] == ["music/1"]
    assert list(mixed.metadata["bad_records"]) == ["music/#0"]
    (tmp_path / "broken.json").write_text("[{")
    with pytest.raises(TaskFormatError, match="not valid JSON"):
        dysql_suite(data=DYSQL, db="music", tasks_file=tmp_path / "broken.json")
    with pytest.raises(DySQLDataError, match="does not exist"):
        dysql_suite(data=DYSQL, db="music", tasks_file=tmp_path / "absent.json")


def test_split_statements_uses_sqlite_tokenizer():
    sql = "SELECT 'a;b'; -- note\nUPDATE t SET x = 1 /* ; */ WHERE y = 2;  "
    assert split_statements(sql) == [
        "SELECT 'a;b';",
        "-- note\nUPDATE t SET x = 1 /* ; */ WHERE y = 2;",
    ]
    assert split_statements("SELECT 1") == ["SELECT 1"]
    assert split_statements("  -- only a comment\n") == []


# --- the DySQL-compatible digest ----------------------------------------------------------------
def test_volatile_columns_are_upstreams_rule():
    assert all(UPSTREAM_VOLATILE.match(c) for c in VOLATILE_COLUMNS)
    probes = [
        "last_update",
        "LastUpdate",
        "lastupdate",
        "updated_at",
        "UpdatedAt",
        "update_time",
        "modified",
        "Modified_At",
        "modification_time",
        "created_at",
        "CreatedAt",
        "create_at",
        "createat",
        "timestamp",
        "TIMESTAMP",
        "last_updated",
        "update",
        "created",
        "modified_by",
        "create_date",
        "payment_date",
        "timestamps",
        "updatetime",
        "modificationtime",
    ]
    for p in probes:
        assert bool(UPSTREAM_VOLATILE.match(p)) == (p.lower() in VOLATILE_COLUMNS), p


def _mini_db(path: Path) -> DatabaseImage:
    conn = apsw.Connection(str(path))
    conn.execute("""
        CREATE TABLE a(id INTEGER PRIMARY KEY AUTOINCREMENT, name TEXT, last_update TEXT);
        CREATE TABLE stamps(created_at TEXT, UpdatedAt TEXT);
        CREATE TABLE other(x);
        CREATE VIEW v AS SELECT name FROM a;
        INSERT INTO a(name, last_update) VALUES ('x', '2020'), ('y', '2021');
        INSERT INTO stamps VALUES ('1', '2'), ('3', '4');
        INSERT INTO other VALUES (1);
    """)
    conn.close()
    return DatabaseImage(path)


def test_digest_takes_dysql_decisions_on_a_small_database(tmp_path):
    img = _mini_db(tmp_path / "m.sqlite")
    order = ["a", "sqlite_sequence", "stamps", "v", "sqlite_stat1"]
    cfg = dysql_digest_config(order)
    base = image_digest(img, cfg)
    with img.reading() as master:
        base_ref = dysql_bench_hash(master, order)

    def both(*stmts: str) -> tuple[bool, bool]:
        with img.session(writable=True) as s:
            for q in stmts:
                assert s.execute(q).ok, q
            with s.trusted() as conn:
                return connection_digest(conn, cfg) == base, dysql_bench_hash(
                    conn, order
                ) == base_ref

    # the same decision as DySQL-Bench on each kind of change
    cases = {
        ("UPDATE a SET last_update = 'later'",): True,  # volatile column
        (
            "INSERT INTO a(name) VALUES ('z')",
            "DELETE FROM a WHERE name = 'z'",
        ): True,  # sequence only
        ("UPDATE stamps SET created_at = 'n'",): True,  # all-volatile table: row count only
        ("INSERT INTO stamps VALUES ('5', '6')",): False,
        ("UPDATE other SET x = 2",): True,  # not in the table list
        ("CREATE TABLE extra(y)", "INSERT INTO extra VALUES (1)"): True,
        ("DROP VIEW v",): True,  # views are not state
        ("UPDATE a SET name = 'X' WHERE name = 'x'",): False,
        ("UPDATE a SET name = 1 WHERE name = 'x'",): False,
        ("DELETE FROM a WHERE name = 'y'", "INSERT INTO a(id, name) VALUES (2, 'y')"): True,
        ("DROP TABLE stamps",): False,
    }
    for stmts, same in cases.items():
        assert both(*stmts) == (same, same), stmts
    # the session digest (dirty tables only) agrees with a full pass
    with img.session(writable=True) as s:
        s.execute("UPDATE a SET name = 'q' WHERE id = 1")
        from clarisql.envs.state.deferred import session_digest

        with s.trusted() as conn:
            assert session_digest(s, cfg) == connection_digest(conn, cfg)


def test_frozen_clock_in_writable_sessions(suite):
    spec = suite.databases["pagila"]
    img = get_image(spec.path, spec.post_copy_sql)
    with img.session(writable=True) as s:
        assert s.execute("SELECT CURRENT_TIMESTAMP, datetime('now')").rows == [
            (FROZEN_NOW, FROZEN_NOW)
        ]


# --- replay variants ------------------------------------------------------------------------------
@dataclass
class Stmt:
    sql: str
    reads: set[str] = field(default_factory=set)
    writes: set[str] = field(default_factory=set)
    changes: int = 0

    @property
    def is_write(self) -> bool:
        return bool(self.writes)


_READ_OPS = {apsw.SQLITE_READ}
_WRITE_OPS = {
    apsw.SQLITE_INSERT,
    apsw.SQLITE_UPDATE,
    apsw.SQLITE_DELETE,
    apsw.SQLITE_ALTER_TABLE,
    apsw.SQLITE_CREATE_TABLE,
    apsw.SQLITE_DROP_TABLE,
}


def analyse(image: DatabaseImage, task: Task) -> list[Stmt]:
    """Tables each golden statement reads and writes (triggers included), and rows it changed."""
    conn = image.fresh_copy()
    out: list[Stmt] = []
    cur: Stmt | None = None

    def auth(op, p1, p2, db, trig):
        if cur is not None and db != "temp":
            if op in _READ_OPS and p1 and not p1.startswith("sqlite_"):
                cur.reads.add(p1.lower())
            elif op in _WRITE_OPS:
                name = p2 if op == apsw.SQLITE_ALTER_TABLE else p1
                if name and not name.startswith("sqlite_"):
                    cur.writes.add(name.lower())
        return apsw.SQLITE_OK

    conn.authorizer = auth
    for sql in task.gold_actions:
        cur = Stmt(sql)
        before = conn.total_changes()
        conn.execute(sql).fetchall()
        cur.changes = conn.total_changes() - before
        out.append(cur)
    conn.close()
    return out


def _tokens(sql: str):
    return list(sqlglot.tokenize(sql, read="sqlite"))


def _top_level(sql: str, kind: TokenType) -> int | None:
    depth = 0
    for tok in _tokens(sql):
        if tok.token_type == TokenType.L_PAREN:
            depth += 1
        elif tok.token_type == TokenType.R_PAREN:
            depth -= 1
        elif depth == 0 and tok.token_type == kind:
            return tok.start
    return None


def rewrite_equivalent(sql: str) -> str | None:
    """The same write in other words: ``WHERE c`` -> ``WHERE rowid IN (SELECT rowid ... WHERE c)``,
    ``VALUES (..), (..)`` -> ``SELECT .. UNION ALL SELECT ..``; None when not applicable."""
    try:
        tree = sqlglot.parse_one(sql, read="sqlite")
    except sqlglot.errors.SqlglotError:
        return None
    body = sql.strip().rstrip(";").rstrip()
    if isinstance(tree, (exp.Update, exp.Delete)) and tree.args.get("where") is not None:
        if tree.args.get("from") or tree.args.get("joins") or tree.args.get("returning"):
            return None
        where = _top_level(body, TokenType.WHERE)
        table = tree.this if isinstance(tree, exp.Update) else tree.this
        if where is None or not isinstance(table, exp.Table) or table.alias:
            return None
        name = table.sql(dialect="sqlite")
        return f"{body[:where]}WHERE rowid IN (SELECT rowid FROM {name} {body[where:]})"
    if isinstance(tree, exp.Insert) and isinstance(tree.expression, exp.Values):
        if tree.args.get("conflict") or tree.args.get("alternative") or tree.args.get("returning"):
            return None
        at = _top_level(body, TokenType.VALUES)
        if at is None:
            return None
        rows = [
            "SELECT " + ", ".join(e.sql(dialect="sqlite") for e in row.expressions)
            for row in tree.expression.expressions
        ]
        return body[:at] + " UNION ALL ".join(rows)
    return None


def changed_values(sql: str) -> list[str]:
    """The write with one written literal changed, for each literal of its SET list, VALUES rows
    or INSERT ... SELECT list (DELETE writes no value: none)."""
    try:
        tree = sqlglot.parse_one(sql, read="sqlite")
    except sqlglot.errors.SqlglotError:
        return []
    if isinstance(tree, exp.Update):
        start, stops = TokenType.SET, {TokenType.WHERE, TokenType.FROM}
    elif isinstance(tree, exp.Insert) and isinstance(tree.expression, exp.Values):
        start, stops = TokenType.VALUES, set()
    elif isinstance(tree, exp.Insert) and isinstance(tree.expression, exp.Select):
        start, stops = TokenType.SELECT, {TokenType.FROM, TokenType.WHERE}
    else:
        return []
    out: list[str] = []
    inside, depth = False, 0
    for tok in _tokens(sql):
        if tok.token_type == TokenType.L_PAREN:
            depth += 1
        elif tok.token_type == TokenType.R_PAREN:
            depth -= 1
        if not inside:
            inside = tok.token_type == start
            base = depth
            continue
        if tok.token_type in stops and depth == base:
            break
        if tok.token_type == TokenType.STRING:
            new = "'" + tok.text.replace("'", "''") + " (changed)'"
        elif tok.token_type == TokenType.NUMBER:
            new = str(int(tok.text) + 7) if tok.text.isdigit() else str(float(tok.text) + 7.25)
        else:
            continue
        out.append(sql[: tok.start] + new + sql[tok.end + 1 :])
    return out


def play(
    env: ClarifySQLEnv, task_id: str, sqls: list[str], allow_errors: bool = False
) -> tuple[float, bool, dict]:
    """Run ``sqls`` as execute actions in the env, then stop; the reward and correctness."""
    env.reset(seed=0, options={"task_id": task_id})
    total = 0.0
    for q in sqls:
        _, r, term, trunc, info = env.step({"type": "execute", "sql": q})
        assert not (term or trunc)
        assert allow_errors or info["error"] is None, (task_id, q, info["error"])
        total += r
    _, r, term, _, info = env.step({"type": "stop"})
    assert term
    return total + r, info["episode"]["correct"], info


class Reference:
    """DySQL-Bench's decision (its own sort-every-table hash) for replays of one task."""

    def __init__(self, suite, task: Task):
        spec = suite.database(task)
        self.image = get_image(spec.path, spec.post_copy_sql)
        self.order = spec.digest.table_order
        self.gold_dirty, self._gold = self._replay(task.gold_actions, strict=True)

    def _replay(self, sqls: list[str], strict: bool = False):
        s = self.image.session(writable=True)
        for q in sqls:
            # a variant's statement may fail (a dropped INSERT leaves a NOT NULL total): like the
            # env and DySQL-Bench, the failed statement changes nothing
            assert s.execute(q).ok or not strict, q
        return set(s.dirty_tables), s

    def same_state(self, sqls: list[str]) -> bool:
        dirty, s = self._replay(sqls)
        # Tables neither replay touched are the image's in both: comparing the others decides.
        tables = [t for t in self.order if t.lower() in dirty | self.gold_dirty]
        with s.trusted() as a, self._gold.trusted() as b:
            same = dysql_bench_hash(a, tables) == dysql_bench_hash(b, tables)
        s.close()
        return same

    def close(self) -> None:
        self._gold.close()


@pytest.fixture(scope="module")
def analysed(suite):
    out = {}
    for t in suite.tasks:
        spec = suite.database(t)
        out[t.id] = analyse(get_image(spec.path, spec.post_copy_sql), t)
    return out


def test_golden_replay_scores_one_on_every_task(suite, env):
    policy = make_policy("replay")
    bad = []
    for t in suite.tasks:
        res = run_episode(env, policy, t.id, seed=0)
        rec = res.summary["record"]
        if not (res.correct and res.reward == 1.0 and rec["final_digest"] == rec["gold_digest"]):
            bad.append((t.id, res.reward, res.summary.get("gold_error")))
    assert bad == []


def test_noop_gold_tasks_are_known(suite, env):
    """Tasks whose golden actions leave the DySQL state as it was (reported, skipped below)."""
    noop = []
    for t in suite.tasks:
        spec = suite.database(t)
        img = get_image(spec.path, spec.post_copy_sql)
        _, _, info = play(env, t.id, [])
        if info["episode"]["correct"]:
            noop.append(t.id)
        assert info["episode"]["record"]["final_digest"] == image_state(img, spec.digest).key()
    # entertainment/16 changes nothing (SOURCE.md); the pagila ones match '.000' timestamps or
    # lower-case names this copy of the data lacks (SOURCE.md), so their writes change no row
    assert noop == [
        "entertainment/16",
        "pagila/4",
        "pagila/14",
        "pagila/24",
        "pagila/30",
        "pagila/34",
        "pagila/44",
    ]


def test_same_state_by_other_sql_scores_one(suite, env, analysed):
    """Extra reads inserted, one write rewritten, commuting writes swapped: all score 1."""
    bad: list[tuple[str, str]] = []
    counts = {"extra_reads": 0, "rewritten": 0, "reordered": 0}
    for t in suite.tasks:
        stmts = analysed[t.id]
        ref = Reference(suite, t)
        variants: dict[str, list[str]] = {}
        # (1) extra reads before every write and at the end
        sqls = ["SELECT name FROM sqlite_master WHERE type = 'table'"]
        for s in stmts:
            if s.is_write:
                table = sorted(s.writes)[0]
                sqls.append(f'SELECT count(*) FROM "{table}"')
            sqls.append(s.sql)
        sqls.append(
            f'SELECT * FROM "{sorted(stmts[-1].reads | stmts[-1].writes or {"sqlite_master"})[0]}" LIMIT 3'
        )
        variants["extra_reads"] = sqls
        # (2) the first rewritable write written differently
        for i, s in enumerate(stmts):
            new = rewrite_equivalent(s.sql) if s.is_write else None
            if new is not None and new != s.sql:
                variants["rewritten"] = (
                    [x.sql for x in stmts[:i]] + [new] + [x.sql for x in stmts[i + 1 :]]
                )
                break
        # (3) two consecutive writes that touch disjoint tables, swapped
        writes = [i for i, s in enumerate(stmts) if s.is_write]
        for i, j in zip(writes, writes[1:]):
            a, b = stmts[i], stmts[j]
            if not (a.writes & (b.reads | b.writes)) and not (b.writes & (a.reads | a.writes)):
                order = [x.sql for x in stmts]
                order[i], order[j] = order[j], order[i]
                variants["reordered"] = order
                break
        for kind, sqls in variants.items():
            counts[kind] += 1
            reward, correct, _ = play(env, t.id, sqls)
            if not (ref.same_state(sqls) and correct and reward == 1.0):
                bad.append((t.id, kind))
        ref.close()
    print("positive variants run:", counts)
    assert bad == []
    # every task has the extra-reads variant; most have a rewritable write; some commute
    assert counts["extra_reads"] == 162
    assert counts["rewritten"] >= 161, counts  # every task but one has an UPDATE/DELETE/INSERT
    assert counts["reordered"] >= 88, counts  # tasks with two consecutive commuting writes


def test_dropped_or_changed_write_scores_zero(suite, env, analysed):
    """One effective write dropped, or one written value changed: score 0 (as DySQL-Bench says)."""
    bad: list[tuple[str, str]] = []
    done = {"dropped": 0, "changed": 0}
    for t in suite.tasks:
        stmts = analysed[t.id]
        ref = Reference(suite, t)
        sqls = [s.sql for s in stmts]
        # drop: the last write whose removal changes DySQL-Bench's final state
        for i in reversed(range(len(stmts))):
            if not stmts[i].is_write or stmts[i].changes == 0:
                continue
            variant = sqls[:i] + sqls[i + 1 :]
            if ref.same_state(variant):
                continue  # a write whose effect a later one overwrites, or that changed nothing
            done["dropped"] += 1
            reward, correct, _ = play(env, t.id, variant, allow_errors=True)
            if correct or reward != 0.0:
                bad.append((t.id, f"dropped {i}"))
            break
        # change: one written literal of a write, the first that changes the final state
        variants = [
            sqls[:i] + [new] + sqls[i + 1 :]
            for i, st in enumerate(stmts)
            if st.is_write and st.changes
            for new in changed_values(st.sql)
        ]
        for variant in variants:
            if ref.same_state(variant):
                continue
            done["changed"] += 1
            reward, correct, _ = play(env, t.id, variant, allow_errors=True)
            if correct or reward != 0.0:
                bad.append((t.id, "changed a value"))
            break
        ref.close()
    print("negative variants run:", done)
    assert bad == []
    # every task but the 7 no-op ones has an effective write to drop; 15 more have no written
    # literal whose change reaches another state (DELETE-only tasks, for instance)
    assert done["dropped"] == 155, done
    assert done["changed"] >= 140, done


# --- env features on DySQL tasks --------------------------------------------------------------------
def test_instruction_user_stops_when_told_done_and_marks_hallucinations(suite, env):
    t = suite.task("chinook/0")
    obs, info = env.reset(seed=3, options={"task_id": t.id})
    assert obs["last"] == t.utterance and "bjorn.hansen@yahoo.no" not in obs["last"]
    assert info["simulator"]["backend"] == "offline"
    _, _, term, _, info = env.step(
        {"type": "clarify", "question": "To verify your identity, what is your e-mail?"}
    )
    assert not term
    assert "bjorn.hansen@yahoo.no" in env.messages[-1]["content"]
    assert info["simulator"]["intent"] == "identity"
    # a fabricated result before any query ran
    _, _, term, _, info = env.step(
        {
            "type": "clarify",
            "question": "I found you: <result>[(40, 'Bjorn')]</result>. Shall I proceed with the update?",
        }
    )
    assert not term and env.record.turns[-1].hallucinated
    assert env.messages[-1]["content"] == "Yes, please go ahead."
    for q in t.gold_actions:
        env.step({"type": "execute", "sql": q})
    # quoting a real result is not a hallucination; told the work is done, the user stops
    _, reward, term, _, info = env.step(
        {"type": "clarify", "question": "Updated: <result>[(4,)]</result> Anything else?"}
    )
    assert (
        term
        and info["simulator"]["intent"] == "done"
        and env.messages[-1]["content"] == "###STOP###"
    )
    ep = info["episode"]
    assert ep["record"]["end"] == "user_stop" and ep["correct"] and reward == 1.0
    assert [x["hallucinated"] for x in ep["record"]["turns"] if x["kind"] == "clarify"] == [
        False,
        True,
        False,
    ]
    assert ep["hallucinated_messages"] == 1 and ep["hallucination_rate"] == pytest.approx(1 / 3)


def test_user_stops_when_agent_declares_done_even_if_state_is_wrong(suite, env):
    env.reset(seed=0, options={"task_id": "music/0"})
    _, reward, term, _, info = env.step(
        {"type": "clarify", "question": "Your invoice has been updated successfully."}
    )
    assert term and info["simulator"]["intent"] == "done" and not info["episode"]["correct"]
    assert reward == 0.0


def test_env_turn_limits_come_from_the_suite(suite):
    e = ClarifySQLEnv(suite, reward="dysql_state")
    assert e.max_turns == 30 and e.max_clarifications == 30
    assert ClarifySQLEnv(suite, max_turns=5).max_turns == 5


# --- scripted policies -------------------------------------------------------------------------------
def test_script_policy_replays_saved_actions(suite, env, tmp_path):
    t = suite.task("music/1")
    script = {
        t.id: [{"type": "clarify", "question": "What is your customer id?"}]
        + [{"type": "execute", "sql": q} for q in t.gold_actions],
        "music/2": [
            '<tool_call>{"name": "execute_sql", "arguments": {"sql": "SELECT 1"}}</tool_call>'
        ],
    }
    path = tmp_path / "script.json"
    path.write_text(json.dumps(script), encoding="utf-8")
    policy = make_policy(f"script:{path}")
    assert isinstance(policy, ScriptPolicy)
    res = run_episode(env, policy, t.id, seed=0)
    assert res.correct and res.reward == 1.0
    assert [x["action"]["type"] for x in res.turns] == ["clarify"] + ["execute"] * len(
        t.gold_actions
    ) + ["stop"]
    res = run_episode(env, policy, "music/2", seed=0)
    assert not res.correct and [x["action"]["type"] for x in res.turns] == ["execute", "stop"]
    with pytest.raises(ScriptError, match="no actions for task 'music/3'"):
        run_episode(env, policy, "music/3", seed=0)


def test_script_policy_errors(tmp_path):
    with pytest.raises(ScriptError, match="does not exist"):
        ScriptPolicy(tmp_path / "nope.json")
    bad = tmp_path / "bad.json"
    bad.write_text("{not json")
    with pytest.raises(ScriptError, match="not valid JSON"):
        ScriptPolicy(bad)
    bad.write_text("[1, 2]")
    with pytest.raises(ScriptError, match="JSON object"):
        ScriptPolicy(bad)
    bad.write_text(json.dumps({"a/1": [{"type": "dance"}]}))
    with pytest.raises(ScriptError, match=r"task 'a/1': action 0: unknown action type"):
        ScriptPolicy(bad)
    bad.write_text(json.dumps({"a/1": {"type": "stop"}}))
    with pytest.raises(ScriptError, match="expected a list"):
        ScriptPolicy(bad)


def test_replay_policy_on_a_read_task_stops_with_the_gold_query():
    t = Task(id="r/1", db="x", utterance="how many?", gold_sql="SELECT 1")
    p = make_policy("replay")
    p.reset({}, {}, t)
    assert p.act({}, {}) == {"type": "stop", "sql": "SELECT 1"}
    w = Task(id="w/1", db="x", utterance="do", writable=True, gold_actions=["UPDATE t SET a = 1"])
    p.reset({}, {}, w)
    assert [p.act({}, {}) for _ in range(3)] == [
        {"type": "execute", "sql": "UPDATE t SET a = 1"},
        {"type": "stop", "sql": None},
        {"type": "stop", "sql": None},
    ]
    with pytest.raises(ValueError, match="privileged"):
        p.reset({}, {}, None)


def test_digest_config_is_hashable_and_distinct():
    a = dysql_digest_config(["x", "sqlite_sequence"])
    assert a.only_tables == ("x",) and a.table_order == ("x", "sqlite_sequence")
    assert a.key() != DigestConfig().key()
    hash(a)
