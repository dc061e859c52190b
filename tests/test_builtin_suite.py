"""The built-in suite: generated database and tasks, checked on real SQLite (apsw, DQS off)."""

from __future__ import annotations

import json
import re
import sqlite3
import subprocess
import sys
from collections import Counter
from pathlib import Path

import apsw
import pytest

from clarisql.envs.suites import Suite, load_suite
from clarisql.envs.suites.builtin import (
    DB_FILE,
    GENERATOR_VERSION,
    TASKS_FILE,
    build_builtin,
    builtin_folder,
    builtin_suite,
    default_cache_dir,
    generator_fingerprint,
    source_fingerprint,
)
from clarisql.envs.synth.domain import CARD_FILE
from clarisql.envs.tasks import (
    CATEGORIES,
    SCOPE_KINDS,
    UNANSWERABLE_KINDS,
    Task,
)

#: Every year a seed's finance tables may cover (four consecutive ones, by seed).
FIN_YEARS = ("2018", "2019", "2020", "2021", "2022", "2023")


# --- helpers -------------------------------------------------------------------------------
def _connect(path: Path) -> apsw.Connection:
    conn = apsw.Connection(str(path), flags=apsw.SQLITE_OPEN_READONLY)
    _harden(conn)
    return conn


def _harden(conn: apsw.Connection) -> None:
    # As the engine does: "double quoted" strings are identifiers only.
    conn.config(apsw.SQLITE_DBCONFIG_DQS_DML, 0)
    conn.config(apsw.SQLITE_DBCONFIG_DQS_DDL, 0)


def _fresh_copy(image: bytes) -> apsw.Connection:
    conn = apsw.Connection(":memory:")
    conn.deserialize("main", image)
    _harden(conn)
    return conn


def _rows(conn: apsw.Connection, sql: str) -> list[tuple]:
    return [tuple(r) for r in conn.execute(sql).fetchall()]


def _key(rows: list[tuple]) -> list[str]:
    return sorted(repr(r) for r in rows)


def _trivial(rows: list[tuple]) -> bool:
    return not rows or all(all(v is None or v == 0 for v in r) for r in rows)


def _tables(conn: apsw.Connection) -> list[str]:
    return [
        r[0]
        for r in conn.execute(
            "SELECT name FROM sqlite_master WHERE type = 'table' AND name NOT LIKE 'sqlite_%' "
            "ORDER BY name"
        )
    ]


def _dump(conn: apsw.Connection, tables: list[str]) -> dict[str, list[str]]:
    return {t: _key(_rows(conn, f"SELECT * FROM {t}")) for t in tables}


def _touched(actions: list[str], all_tables: list[str]) -> list[str]:
    text = " ".join(actions)
    return [t for t in all_tables if re.search(rf"\b{re.escape(t)}\b", text)]


def _run_all(conn: apsw.Connection, actions: list[str]) -> None:
    for a in actions:
        conn.execute(a).fetchall()


# --- fixtures ------------------------------------------------------------------------------
@pytest.fixture(scope="module")
def built(tmp_path_factory: pytest.TempPathFactory) -> tuple[Suite, Path]:
    cache = tmp_path_factory.mktemp("cache")
    return builtin_suite(seed=0, cache_dir=cache), cache


@pytest.fixture(scope="module")
def suite(built: tuple[Suite, Path]) -> Suite:
    return built[0]


@pytest.fixture(scope="module")
def db_path(suite: Suite) -> Path:
    return suite.databases["builtin"].path


@pytest.fixture(scope="module")
def conn(db_path: Path) -> apsw.Connection:
    return _connect(db_path)


@pytest.fixture(scope="module")
def image(db_path: Path) -> bytes:
    return db_path.read_bytes()


# --- shape -----------------------------------------------------------------------------------
def test_suite_shape(suite: Suite, db_path: Path) -> None:
    assert suite.name == "builtin"
    assert set(suite.databases) == {"builtin"}
    spec = suite.databases["builtin"]
    assert spec.name == "builtin" and spec.path.is_file() and spec.path.name == DB_FILE
    assert spec.description and "property_sales_" in spec.description
    assert db_path.stat().st_size < 5 * 1024 * 1024
    assert len(suite) >= 300
    ids = [t.id for t in suite.tasks]
    assert len(set(ids)) == len(ids)
    assert all(re.fullmatch(r"builtin/\d{4}", i) for i in ids)
    for t in suite.tasks:
        assert t.db == "builtin"
        assert t.writable == (t.category == "write")
        assert t.gold_answer is None and t.gold_ordered is None
        assert t.answerable == (t.unanswerable_kind is None)
        if t.answerable and not t.writable:
            assert t.gold_sql
        if t.writable:
            assert t.gold_actions and t.answerable


def test_every_category_and_kind(suite: Suite) -> None:
    cats = Counter(t.category for t in suite.tasks)
    assert set(cats) == set(CATEGORIES)
    for kind in UNANSWERABLE_KINDS:
        assert cats[f"unanswerable:{kind}"] >= 8
    assert cats["well-specified"] >= 50 and cats["select"] >= 30 and cats["from"] >= 50
    assert cats["where"] >= 30 and cats["mixed"] >= 20 and cats["write"] >= 30
    labels = [u.label for t in suite.tasks for u in t.underspecs]
    scope = Counter((lab.kind, lab.slot) for lab in labels if lab.kind in SCOPE_KINDS)
    for kind in SCOPE_KINDS:
        assert sum(n for (k, _), n in scope.items() if k == kind) >= 15
    assert {s for _, s in scope} == {"city", "district", "year"}
    # no ("Error", "city"): a misspelled city has one nearest city (an explorer finds it)
    for pair in [("Missing", "year"), ("Missing", "district"), ("Missing", "city"),
                 ("Error", "district"), ("Unmatch", "year"),
                 ("Unmatch", "city"), ("Unmatch", "district")]:  # fmt: skip
        assert scope[pair] > 0, pair
    cond = Counter(lab.slot for lab in labels if lab.kind == "not-exist")
    assert cond["enterprise"] > 0 and cond["project"] > 0
    # category <-> labels
    for t in suite.tasks:
        clauses = [u.label.clause for u in t.underspecs]
        if t.category == "well-specified" or t.category.startswith("unanswerable:"):
            assert not t.underspecs
        elif t.category == "select":
            assert clauses == ["select"]
        elif t.category == "from":
            assert clauses == ["from"]
        elif t.category == "where":
            assert clauses == ["where"]
        elif t.category == "mixed":
            assert len(t.underspecs) >= 2
    assert any(t.underspecs for t in suite.tasks if t.category == "write")


def test_unanswerable_kinds_as_trustsql_defines_them(suite: Suite, conn: apsw.Connection) -> None:
    """non-sql: about columns the database has (the literal SQL over them runs and returns rows)
    but asking for what SQL cannot do; out-of-domain: outside the database's subject."""
    beyond_sql = re.compile(
        r"\b(chart|plot|histogram|forecast|predict|model|cluster|k-means|regression)\b", re.I
    )
    by_kind: dict[str, list[Task]] = {}
    for t in suite.tasks:
        if t.unanswerable_kind:
            by_kind.setdefault(t.unanswerable_kind, []).append(t)
    assert set(by_kind) == set(UNANSWERABLE_KINDS)
    for t in by_kind["non-sql"]:
        assert beyond_sql.search(t.utterance), t.utterance
        assert _rows(conn, t.metadata["naive_sql"]), t.id  # the columns asked about exist
    ood = [t.utterance for t in by_kind["out-of-domain"]]
    assert not any(beyond_sql.search(u) for u in ood)
    # both sides of TrustSQL's out-of-domain: off-topic requests and outside knowledge
    assert any(
        re.search(r"poem|joke|translate|tips|names|explain|summarise|email", u, re.I) for u in ood
    )
    assert any(
        re.search(r"national|exchange rate|inflation|share price|central bank|credit", u, re.I)
        for u in ood
    )


def test_round_trip(suite: Suite) -> None:
    for t in suite.tasks:
        d = t.to_dict()
        assert Task.from_dict(json.loads(json.dumps(d))) == t
    folder = Path(suite.metadata["folder"])
    lines = (folder / TASKS_FILE).read_text(encoding="utf-8").splitlines()
    assert [json.loads(x)["id"] for x in lines] == [t.id for t in suite.tasks]


# --- database --------------------------------------------------------------------------------
def test_database_layout(conn: apsw.Connection) -> None:
    tables = _tables(conn)
    assert {"cities", "districts"} <= set(tables)
    fin = [t for t in tables if t.startswith("enterprise_finance_")]
    start = int(fin[0].rsplit("_", 1)[1])
    assert str(start) in FIN_YEARS and fin == [
        f"enterprise_finance_{y}" for y in range(start, start + 4)
    ]
    sales = [t for t in tables if t.startswith("property_sales_")]
    auctions = [t for t in tables if t.startswith("land_auctions_")]
    assert len(sales) == len(auctions) >= 30
    cities = [r[0] for r in _rows(conn, "SELECT city FROM cities")]
    assert len(cities) == 8
    per_city = Counter(r[0] for r in _rows(conn, "SELECT city FROM districts"))
    assert all(4 <= n <= 6 for n in per_city.values())
    listed = _rows(conn, "SELECT property_sales_table, land_auctions_table FROM districts")
    assert sorted(r[0] for r in listed) == sales and sorted(r[1] for r in listed) == auctions
    for t in tables:
        assert re.fullmatch(r"[a-z][a-z0-9_]*", t)
        for col in conn.execute(f"PRAGMA table_info({t})"):
            assert re.fullmatch(r"[a-z][a-z0-9_]*", col[1]), (t, col[1])
    for t in sales + auctions:
        assert 20 <= _rows(conn, f"SELECT COUNT(*) FROM {t}")[0][0] <= 60
    companies = _rows(conn, "SELECT COUNT(*) FROM enterprise_finance_2021")[0][0]
    assert 50 <= companies <= 70
    long_names = _rows(
        conn, "SELECT COUNT(*) FROM enterprise_finance_2021 WHERE company_name LIKE '%Ltd.'"
    )[0][0]
    assert long_names > 20
    assert _rows(conn, "PRAGMA journal_mode")[0][0] == "delete"


# --- gold ----------------------------------------------------------------------------------
def test_gold_sql_returns_rows(suite: Suite, conn: apsw.Connection) -> None:
    for t in suite.tasks:
        if t.writable or not t.answerable:
            continue
        assert '"' not in t.gold_sql
        rows = _rows(conn, t.gold_sql)
        assert rows and not _trivial(rows), (t.id, t.gold_sql)


def test_gold_actions_change_state(suite: Suite, image: bytes) -> None:
    for t in suite.tasks:
        if not t.writable:
            continue
        c = _fresh_copy(image)
        touched = _touched(t.gold_actions, _tables(c))
        assert touched, t.id
        before = _dump(c, touched)
        _run_all(c, t.gold_actions)
        assert _dump(c, touched) != before, t.id
        c.close()


# --- naive (answering without clarifying) ---------------------------------------------------
def test_naive_sql_differs_from_gold(suite: Suite, conn: apsw.Connection) -> None:
    for t in suite.tasks:
        if t.writable:
            continue
        naive = t.metadata["naive_sql"]
        assert naive and '"' not in naive
        got = _rows(conn, naive)
        if not t.answerable:
            assert not _trivial(got), t.id  # a real (wrong) answer
        elif t.underspecs:
            assert _key(got) != _key(_rows(conn, t.gold_sql)), (t.id, naive)
        else:
            assert naive == t.gold_sql


def test_naive_actions_differ_from_gold(suite: Suite, image: bytes) -> None:
    for t in suite.tasks:
        if not t.writable:
            continue
        naive = t.metadata["naive_actions"]
        assert isinstance(naive, list) and naive
        if not t.underspecs:
            assert naive == t.gold_actions
            continue
        gold_c, naive_c = _fresh_copy(image), _fresh_copy(image)
        touched = _touched(t.gold_actions + naive, _tables(gold_c))
        _run_all(gold_c, t.gold_actions)
        _run_all(naive_c, naive)
        assert _dump(gold_c, touched) != _dump(naive_c, touched), t.id
        gold_c.close()
        naive_c.close()


# --- labels ----------------------------------------------------------------------------------
def test_labels_match_utterances(suite: Suite, conn: apsw.Connection) -> None:
    cities = {r[0] for r in _rows(conn, "SELECT city FROM cities")}
    districts = {r[0] for r in _rows(conn, "SELECT district FROM districts")}
    for t in suite.tasks:
        text = t.utterance.casefold()
        golds = " ".join([t.gold_sql or "", *t.gold_actions])
        for u in t.underspecs:
            lab = u.label
            assert u.value.strip(), t.id
            if lab.kind == "intent":
                assert lab.content == "" and lab.slot == ""
                continue
            if lab.kind == "Missing":
                assert lab.content == ""
            else:
                assert lab.content and lab.content.casefold() in text, (t.id, lab)
                assert lab.content.casefold() != u.value.casefold()
            if lab.slot == "year":
                assert u.value in FIN_YEARS and f"enterprise_finance_{u.value}" in golds
                if lab.kind == "Missing":
                    assert not re.search(r"\b(19|20)\d\d\b", t.utterance), t.id
                else:  # a year with no finance table in this database
                    assert f"enterprise_finance_{lab.content}" not in _tables(conn)
            elif lab.slot == "city":
                assert u.value in cities
                if lab.kind != "Missing":
                    assert lab.content not in cities
            elif lab.slot == "district":
                assert u.value in districts
                if lab.kind == "Unmatch":
                    assert lab.content not in districts
            elif lab.kind == "not-exist":
                assert lab.slot in ("enterprise", "project")
                quoted = "'" + u.value.replace("'", "''") + "'"
                assert quoted in golds, t.id
                assert "'" + lab.content.replace("'", "''") + "'" not in golds
                assert u.value not in t.utterance
            else:  # pragma: no cover
                pytest.fail(f"{t.id}: unexpected label {lab}")


def test_metadata(suite: Suite, conn: apsw.Connection) -> None:
    tables = set(_tables(conn))
    for t in suite.tasks:
        m = t.metadata
        assert isinstance(m["template"], str) and m["template"]
        assert isinstance(m["tables"], list) and set(m["tables"]) <= tables
        if t.answerable:
            assert m["tables"]
            for table in m["tables"]:
                assert table in " ".join([t.gold_sql or "", *t.gold_actions])
        assert ("naive_actions" in m) == t.writable
        assert ("naive_sql" in m) == (not t.writable)
    assert len({t.metadata["template"] for t in suite.tasks}) >= 60


# --- determinism and the cache -------------------------------------------------------------
def _contents(path: Path) -> dict[str, list[tuple]]:
    c = sqlite3.connect(path)
    try:
        names = [
            r[0]
            for r in c.execute("SELECT name FROM sqlite_master WHERE type = 'table' ORDER BY name")
        ]
        return {n: c.execute(f"SELECT * FROM {n} ORDER BY rowid").fetchall() for n in names}
    finally:
        c.close()


def test_deterministic(built: tuple[Suite, Path], tmp_path: Path) -> None:
    first = builtin_folder(0, built[1])
    again = builtin_suite(seed=0, cache_dir=tmp_path / "again")
    second = Path(again.metadata["folder"])
    assert second != first
    assert (first / TASKS_FILE).read_bytes() == (second / TASKS_FILE).read_bytes()
    assert _contents(first / DB_FILE) == _contents(second / DB_FILE)
    other = builtin_suite(seed=1, cache_dir=tmp_path / "again")
    third = Path(other.metadata["folder"])
    assert third.name.endswith("seed1") and third != second
    assert (third / TASKS_FILE).read_bytes() != (first / TASKS_FILE).read_bytes()
    assert _contents(third / DB_FILE) != _contents(first / DB_FILE)
    assert len(other) >= 300


#: sha256 of seed 0's tasks.jsonl per GENERATOR_VERSION: a change of the generated tasks must come
#: with a bumped version (the cache folder's name), and a refactoring must keep the bytes.
#: v3: minimal pairs (optional attributes per seed), look-alike families, finance years per seed,
#: ambiguity no explorer can rank (issue 22 items 3-4): the bytes changed deliberately.
#: v4: readings from the surface and every candidate, the gold drawn uniformly among them.
TASKS_SHA256 = {
    2: "c12316a8ecb08dab83b3a09c7e5fccbcc1648325c9b233e1e01213b8bcfa34ae",
    3: "dbb1d88fa641977baa749c504a0c14240317b6e68d89d9ae5db1d9970fb05612",
    4: "330ff6d27af6759c06e59c85fc493a43d0da64aed4a35b774fb85023c8540f53",
}


def test_output_pinned_per_generator_version(built: tuple[Suite, Path]) -> None:
    import hashlib

    data = (builtin_folder(0, built[1]) / TASKS_FILE).read_bytes()
    assert GENERATOR_VERSION in TASKS_SHA256, "new version: add its tasks.jsonl digest here"
    assert hashlib.sha256(data).hexdigest() == TASKS_SHA256[GENERATOR_VERSION], (
        "the built-in tasks changed: bump GENERATOR_VERSION (and re-measure the README numbers)"
    )


def test_cache_is_reused(tmp_path: Path) -> None:
    s1 = builtin_suite(seed=3, cache_dir=tmp_path)
    folder = builtin_folder(3, tmp_path)
    assert Path(s1.metadata["folder"]) == folder
    stamps = {p.name: p.stat().st_mtime_ns for p in folder.iterdir()}
    assert set(stamps) == {DB_FILE, TASKS_FILE, CARD_FILE}  # no temporary files left behind
    s2 = builtin_suite(seed=3, cache_dir=str(tmp_path))
    assert {p.name: p.stat().st_mtime_ns for p in folder.iterdir()} == stamps
    assert [t.to_dict() for t in s2.tasks] == [t.to_dict() for t in s1.tasks]
    # A half-present cache (tasks file missing) is rebuilt, not trusted.
    (folder / TASKS_FILE).unlink()
    s3 = builtin_suite(seed=3, cache_dir=tmp_path)
    assert [t.to_dict() for t in s3.tasks] == [t.to_dict() for t in s1.tasks]


def test_default_cache_dir(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    monkeypatch.setenv("CLARISQL_CACHE_DIR", str(tmp_path / "env-cache"))
    assert default_cache_dir() == tmp_path / "env-cache"
    assert builtin_folder(5).parent == tmp_path / "env-cache"
    assert builtin_folder(5).name == f"builtin-v{GENERATOR_VERSION}-{generator_fingerprint()}-seed5"
    monkeypatch.delenv("CLARISQL_CACHE_DIR")
    assert default_cache_dir() == Path.home() / ".cache" / "clarisql"


def test_changed_generator_gets_a_new_cache_folder(tmp_path: Path) -> None:
    """A suite cached by another generator (an older release, an edited checkout) is never
    served: the folder name carries a hash of the generator's source files."""
    import clarisql.envs.suites.builtin as gen

    here = Path(gen.__file__).parent
    copy = tmp_path / "src"
    copy.mkdir()
    for name in gen.GENERATOR_SOURCES:
        (copy / name).write_bytes((here / name).read_bytes())
    fp = generator_fingerprint()
    assert re.fullmatch(r"[0-9a-f]{12}", fp) and source_fingerprint(copy) == fp
    assert fp in builtin_folder(0, tmp_path).name
    with (copy / "db.py").open("a") as fh:
        fh.write("\n# an edit\n")
    assert source_fingerprint(copy) != fp


def test_concurrent_builders(tmp_path: Path) -> None:
    code = (
        "import sys; from clarisql.envs.suites.builtin import builtin_suite; "
        "print(len(builtin_suite(seed=7, cache_dir=sys.argv[1])))"
    )
    procs = [
        subprocess.Popen(
            [sys.executable, "-c", code, str(tmp_path)],
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
        )
        for _ in range(3)
    ]
    outs = [p.communicate(timeout=120) for p in procs]
    assert all(p.returncode == 0 for p in procs), outs
    assert len({o.strip() for o, _ in outs}) == 1
    folder = builtin_folder(7, tmp_path)
    assert sorted(p.name for p in folder.iterdir()) == sorted([DB_FILE, TASKS_FILE, CARD_FILE])
    ref = build_builtin(tmp_path / "ref", seed=7)
    assert (folder / TASKS_FILE).read_bytes() == ref[1].read_bytes()


def test_load_suite_builtin(tmp_path: Path) -> None:
    s = load_suite("builtin", cache_dir=tmp_path)
    assert isinstance(s, Suite) and s.name == "builtin" and len(s) >= 300
    assert s.databases["builtin"].path.is_file()
    t = s.tasks[0]
    assert s.database(t).name == "builtin" and s.task(t.id) is t
