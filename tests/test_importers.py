"""Importers (Spider, BIRD, CoSQL, EHRSQL), Task.context / gold_alternatives and any-of scoring.

Every fixture is written here: tiny SQLite databases and tiny JSON files in each format.
"""

from __future__ import annotations

import json
import sqlite3
from pathlib import Path

import pytest

from clarisql.cli import main
from clarisql.envs.env import ClarifySQLEnv
from clarisql.envs.importers import ImportFormatError, import_dataset, make_safe
from clarisql.envs.suites import load_suite
from clarisql.envs.tasks import Label, Task, TaskFormatError, Underspec, load_tasks, save_tasks
from clarisql.rewards.record import EpisodeRecord
from clarisql.rewards.reliability import is_correct

SINGERS = [("Ana", "France", 31), ("Bo", "Japan", 25), ("Cy", "France", 42), ("Di", "Peru", 19)]


def make_db(path: Path) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    conn = sqlite3.connect(path)
    conn.execute(
        "CREATE TABLE singer (singer_id INTEGER PRIMARY KEY, name TEXT, country TEXT, age INT)"
    )
    conn.executemany("INSERT INTO singer (name, country, age) VALUES (?, ?, ?)", SINGERS)
    conn.commit()
    conn.close()
    return path


def write_json(path: Path, data: object) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(data), encoding="utf-8")


def run(env: ClarifySQLEnv, task_id: str, actions: list[dict]) -> dict:
    env.reset(options={"task_id": task_id})
    info: dict = {}
    for a in actions:
        _, _, term, trunc, info = env.step(a)
        if term or trunc:
            break
    return info["episode"]


# --- Spider -------------------------------------------------------------------------------------
@pytest.fixture
def spider(tmp_path: Path) -> Path:
    src = tmp_path / "spider"
    make_db(src / "database" / "concert" / "concert.sqlite")
    write_json(src / "tables.json", [{"db_id": "concert", "table_names": ["singer"]}])
    write_json(
        src / "dev.json",
        [
            {
                "db_id": "concert",
                "question": "How many singers are there?",
                "query": "SELECT count(*) FROM singer",
            },
            {
                "db_id": "concert",
                "question": "Names of singers from France?",
                "query": 'SELECT name FROM singer WHERE country = "France"',
            },
            {"db_id": "concert", "question": "Quoted column", "query": 'SELECT "name" FROM singer'},
            {"db_id": "concert", "question": "Broken gold", "query": "SELECT x FROM nowhere"},
            {"db_id": "missing_db", "question": "No database", "query": "SELECT 1"},
            {
                # the rewrite would turn the ORDER BY alias into a constant: caught and dropped
                "db_id": "concert",
                "question": "French singers by age",
                "query": 'SELECT name, age AS "years" FROM singer WHERE country = "France" '
                'ORDER BY "years" DESC',
            },
            {
                "db_id": "concert",
                "question": "Who are the oldest singers?",
                "queries": [
                    "SELECT name FROM singer ORDER BY age DESC LIMIT 1",
                    'SELECT name FROM singer WHERE age > 30 AND country = "France"',
                ],
            },
        ],
    )
    return src


def test_spider_import_rewrites_and_checks_gold(spider: Path, tmp_path: Path) -> None:
    out = tmp_path / "out"
    rep = import_dataset("spider", str(spider), str(out))
    assert rep.read == 7
    kept = {t.id: t for t in load_tasks(out / "tasks.jsonl")}
    assert set(kept) == {"dev/0", "dev/1", "dev/2", "dev/6"}
    assert kept["dev/1"].gold_sql == "SELECT name FROM singer WHERE country = 'France'"
    assert kept["dev/1"].metadata["original_sql"].endswith('"France"')
    assert kept["dev/2"].gold_sql == 'SELECT "name" FROM singer'  # a real identifier stays
    assert rep.rewritten == 2  # dev/1 and the alternative of dev/6
    reasons = {d["id"]: d["reason"] for d in rep.dropped}
    assert reasons["dev/3"].startswith("gold: the sandbox refuses it")
    assert reasons["dev/4"].startswith("database:")
    assert reasons["dev/5"] == "gold: the sandbox-safe rewrite changes the result set"
    report = json.loads((out / "import_report.json").read_text())
    assert report["kept"] == 4 and report["dropped"] == 3
    assert (out / "databases" / "concert.sqlite").is_file()
    assert not (out / "databases" / "missing_db.sqlite").exists()
    # the suite loads and its (rewritten) gold is correct in the sandbox
    env = ClarifySQLEnv(str(out / "tasks.jsonl"))
    ep = run(env, "dev/1", [{"type": "stop", "sql": kept["dev/1"].gold_sql}])
    assert ep["correct"]
    env.close()


def test_make_safe_keeps_what_the_sandbox_runs(tmp_path: Path) -> None:
    db = make_db(tmp_path / "d.sqlite")
    g = make_safe("SELECT name FROM singer WHERE age > 30", db)
    assert g.sql == "SELECT name FROM singer WHERE age > 30" and not g.rewritten
    g = make_safe("""SELECT name FROM singer WHERE name = "it's" OR country = 'say "hi"'""", db)
    assert g.sql == """SELECT name FROM singer WHERE name = 'it''s' OR country = 'say "hi"'"""
    assert g.rewritten and g.rows == []


def test_gold_alternatives_scored_any_of(spider: Path, tmp_path: Path) -> None:
    out = tmp_path / "out"
    import_dataset("spider", str(spider), str(out))
    task = load_suite(str(out / "tasks.jsonl")).task("dev/6")
    assert task.gold_alternatives == [
        "SELECT name FROM singer WHERE age > 30 AND country = 'France'"
    ]
    env = ClarifySQLEnv(str(out / "tasks.jsonl"))
    first = run(env, "dev/6", [{"type": "stop", "sql": "SELECT 'Cy'"}])
    second = run(
        env,
        "dev/6",
        [{"type": "stop", "sql": "SELECT name FROM singer WHERE name IN ('Ana', 'Cy')"}],
    )
    wrong = run(env, "dev/6", [{"type": "stop", "sql": "SELECT 'Ana'"}])
    env.close()
    assert first["correct"] and second["correct"] and not wrong["correct"]
    assert second["reward_components"].get("outcome", 1.0) > 0 or second["reward"] > wrong["reward"]
    rec = EpisodeRecord.from_dict(second["record"])  # saved records re-score any-of too
    assert is_correct(rec)
    rec.gold_alternatives = []
    assert not is_correct(rec)


# --- BIRD ---------------------------------------------------------------------------------------
def test_bird_import_with_evidence(tmp_path: Path) -> None:
    src = tmp_path / "bird"
    make_db(src / "dev_databases" / "music" / "music.sqlite")
    write_json(
        src / "dev.json",
        [
            {
                "question_id": 7,
                "db_id": "music",
                "question": "How many adult singers?",
                "evidence": "adult refers to age >= 21",
                "SQL": "SELECT COUNT(*) FROM singer WHERE age >= 21",
                "difficulty": "simple",
            }
        ],
    )
    rep = import_dataset("bird", str(src), str(tmp_path / "o1"))
    (t,) = load_tasks(tmp_path / "o1" / "tasks.jsonl")
    assert rep.kept == 1 and t.id == "dev/7"
    assert t.utterance == "How many adult singers? (Hint: adult refers to age >= 21)"
    assert t.metadata["difficulty"] == "simple"
    import_dataset("bird", str(src), str(tmp_path / "o2"), evidence="metadata")
    (t2,) = load_tasks(tmp_path / "o2" / "tasks.jsonl")
    assert t2.utterance == "How many adult singers?"
    assert t2.metadata["evidence"] == "adult refers to age >= 21"


# --- CoSQL --------------------------------------------------------------------------------------
@pytest.fixture
def cosql(tmp_path: Path) -> Path:
    src = tmp_path / "cosql"
    make_db(src / "database" / "concert" / "concert.sqlite")
    write_json(
        src / "cosql_dev.json",
        {
            "d1": {
                "db_id": "concert",
                "turns": [
                    {
                        "isUser": True,
                        "text": "How many singers are there?",
                        "dialogue_act": "INFORM_SQL",
                        "query": "SELECT count(*) FROM singer",
                    },
                    {"isUser": False, "text": "There are 4 singers.", "dialogue_act": "INFORM_SQL"},
                    {"isUser": True, "text": "Show me the old ones.", "dialogue_act": "AMBIGUOUS"},
                    {
                        "isUser": False,
                        "text": "Do you mean older than 30 or older than 40?",
                        "dialogue_act": "CLARIFY",
                    },
                    {
                        "isUser": True,
                        "text": "Older than 40.",
                        "dialogue_act": "INFORM_SQL",
                        "query": "SELECT name FROM singer WHERE age > 40",
                    },
                    {"isUser": False, "text": "Cy is older than 40.", "dialogue_act": "INFORM_SQL"},
                    {
                        "isUser": True,
                        "text": "What is Cy's favourite colour?",
                        "dialogue_act": "INFORM_SQL",
                    },
                    {
                        "isUser": False,
                        "text": "Sorry, the database does not say.",
                        "dialogue_act": "CANNOT_ANSWER",
                    },
                ],
            }
        },
    )
    return src


def test_cosql_clarification_turns_become_underspecified_tasks(cosql: Path, tmp_path: Path) -> None:
    out = tmp_path / "out"
    rep = import_dataset("cosql", str(cosql), str(out))
    tasks = {t.id: t for t in load_tasks(out / "tasks.jsonl")}
    assert rep.kept == 3 and set(tasks) == {"cosql_dev/d1/0", "cosql_dev/d1/2", "cosql_dev/d1/6"}
    first, clar, unans = tasks["cosql_dev/d1/0"], tasks["cosql_dev/d1/2"], tasks["cosql_dev/d1/6"]
    assert first.context == [] and first.category == "well-specified"
    assert clar.utterance == "Show me the old ones."  # not flattened
    assert clar.context == [
        {"role": "user", "content": "How many singers are there?"},
        {"role": "assistant", "content": "There are 4 singers."},
    ]
    assert clar.underspecs == [Underspec(Label("intent"), "Older than 40.")]
    assert clar.category == "select" and clar.gold_sql == "SELECT name FROM singer WHERE age > 40"
    assert clar.metadata["clarification"].startswith("Do you mean")
    assert not unans.answerable and unans.unanswerable_kind == "unknown"
    assert len(unans.context) == 6
    # the episode shows the earlier turns before the request, and the user answers the label
    env = ClarifySQLEnv(str(out / "tasks.jsonl"))
    obs, _ = env.reset(options={"task_id": "cosql_dev/d1/2"})
    assert obs["dialogue"].index("How many singers") < obs["dialogue"].index("Show me the old ones")
    assert obs["last"] == "Show me the old ones."
    obs, *_ = env.step({"type": "clarify", "question": "How old?", "labels": ["intent"]})
    assert "40" in obs["last"]
    env.close()
    only = import_dataset("cosql", str(cosql), str(tmp_path / "o2"), clarifications_only=True)
    assert only.kept == 1


def test_cosql_unresolved_clarification_is_dropped(tmp_path: Path) -> None:
    src = tmp_path / "c"
    make_db(src / "database" / "concert" / "concert.sqlite")
    turns = [
        {"isUser": True, "text": "Who is it?", "dialogue_act": "AMBIGUOUS"},
        {"isUser": False, "text": "Which singer?", "dialogue_act": "CLARIFY"},
        {"isUser": True, "text": "Never mind.", "dialogue_act": "NOT_RELATED"},
        {"isUser": True, "text": "Count them.", "query": "SELECT count(*) FROM singer"},
    ]
    write_json(src / "x.json", [{"db_id": "concert", "turns": turns}])
    rep = import_dataset("cosql", str(src), str(tmp_path / "o"))
    # the clarification is resolved by the turn with SQL: answers collected on the way
    (t,) = load_tasks(tmp_path / "o" / "tasks.jsonl")
    assert t.underspecs[0].value == "Never mind. Count them." and rep.kept == 1
    write_json(src / "x.json", [{"db_id": "concert", "turns": turns[:3]}])
    with pytest.raises(ImportFormatError, match="no task could be imported"):
        import_dataset("cosql", str(src), str(tmp_path / "o3"))


# --- EHRSQL -------------------------------------------------------------------------------------
def make_ehr(path: Path) -> Path:
    conn = sqlite3.connect(path)
    conn.execute("CREATE TABLE admissions (subject_id INT, admittime TEXT)")
    conn.executemany(
        "INSERT INTO admissions VALUES (?, ?)",
        [(1, "2105-06-01 10:00:00"), (2, "2100-01-01 08:00:00"), (3, "2105-12-01 00:00:00")],
    )
    conn.commit()
    conn.close()
    return path


def test_ehrsql_unanswerable_kinds_and_fixed_clock(tmp_path: Path) -> None:
    src = tmp_path / "ehr"
    src.mkdir()
    db = make_ehr(tmp_path / "mimic.sqlite")
    write_json(
        src / "valid.json",
        [
            {
                "id": "a1",
                "question": "How many admissions in the last year?",
                "query": "SELECT count(*) FROM admissions WHERE admittime >= datetime(current_time, '-1 year')",
                "is_impossible": False,
            },
            {
                "id": "u1",
                "question": "What is the patient's favourite food?",
                "query": "null",
                "is_impossible": True,
            },
            {
                "id": "u2",
                "question": "Plot admissions per month.",
                "query": None,
                "kind": "non-sql",
            },
        ],
    )
    rep = import_dataset("ehrsql", str(src), str(tmp_path / "out"), db=str(db))
    tasks = {t.id: t for t in load_tasks(tmp_path / "out" / "tasks.jsonl")}
    assert rep.kept == 3
    a = tasks["valid/a1"]
    assert "current_time" not in a.gold_sql and "'2105-12-31 23:59:00'" in a.gold_sql
    assert tasks["valid/u1"].unanswerable_kind == "unknown"
    assert tasks["valid/u1"].category == "unanswerable:unknown"
    assert tasks["valid/u2"].unanswerable_kind == "non-sql"
    env = ClarifySQLEnv(str(tmp_path / "out" / "tasks.jsonl"))
    assert run(env, "valid/a1", [{"type": "stop", "sql": "SELECT 2"}])["correct"]
    assert run(env, "valid/u1", [{"type": "abstain", "reason": "not in the data"}])["correct"]
    env.close()


def test_ehrsql_2024_layout(tmp_path: Path) -> None:
    src = tmp_path / "ehr"
    write_json(
        src / "valid" / "data.json",
        {
            "version": "x",
            "data": [
                {"id": "q1", "question": "Count admissions."},
                {"id": "q2", "question": "Weather?"},
            ],
        },
    )
    write_json(
        src / "valid" / "label.json", {"q1": "SELECT count(*) FROM admissions", "q2": "null"}
    )
    db = make_ehr(tmp_path / "m.sqlite")
    rep = import_dataset("ehrsql", str(src), str(tmp_path / "out"), db=str(db))
    assert rep.kept == 2 and rep.categories == {"well-specified": 1, "unanswerable:unknown": 1}


# --- CLI ----------------------------------------------------------------------------------------
def test_cli_import(spider: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    out = tmp_path / "cli_out"
    assert main(["import", "spider", str(spider), "--out", str(out)]) == 0
    text = capsys.readouterr().out
    assert "kept 4" in text and "tasks.jsonl" in text
    assert main(["import", "spider", str(spider), "--out", str(out)]) == 2  # not over a suite
    assert "already holds" in capsys.readouterr().err
    assert main(["import", "bird", str(tmp_path / "nope"), "--out", str(tmp_path / "o")]) == 2
    assert "not a folder" in capsys.readouterr().err
    assert main(["import", "bird", str(spider), "--out", str(tmp_path / "o4")]) == 2
    assert "no JSON file holds" in capsys.readouterr().err


# --- Task schema --------------------------------------------------------------------------------
def test_task_context_and_alternatives_round_trip(tmp_path: Path) -> None:
    plain = Task(id="p", db="d.sqlite", utterance="u", gold_sql="SELECT 1")
    d = plain.to_dict()
    assert d["schema_version"] == 1 and "context" not in d and "gold_alternatives" not in d
    rich = Task(
        id="r",
        db="d.sqlite",
        utterance="and the others?",
        gold_sql="SELECT 1",
        gold_alternatives=["SELECT 2"],
        context=[{"role": "user", "content": "hi"}, {"role": "assistant", "content": "hello"}],
    )
    assert rich.to_dict()["schema_version"] == 2
    p = save_tasks([plain, rich], tmp_path / "t.jsonl")
    assert load_tasks(p) == [plain, rich]
    assert Task.from_dict(rich.to_dict()) == rich
    bad = rich.to_dict() | {"schema_version": 1}
    with pytest.raises(TaskFormatError, match="need schema_version 2"):
        Task.from_dict(bad)
    with pytest.raises(TaskFormatError, match="not supported"):
        Task.from_dict(rich.to_dict() | {"schema_version": 3})
    with pytest.raises(TaskFormatError, match="context turn 0"):
        Task.from_dict(rich.to_dict() | {"context": [{"role": "system", "content": "x"}]})
    with pytest.raises(TaskFormatError, match="answerable read tasks only"):
        Task(
            id="w",
            db="d",
            utterance="u",
            answerable=False,
            unanswerable_kind="unknown",
            gold_alternatives=["SELECT 1"],
        )


def test_training_adapter_shows_the_context(cosql: Path, tmp_path: Path) -> None:
    from clarisql.training.env_adapter import ClarifySQLToolEnv

    out = tmp_path / "out"
    import_dataset("cosql", str(cosql), str(out))
    adapter = ClarifySQLToolEnv(str(out / "tasks.jsonl"))
    opening = adapter.reset(task_id="cosql_dev/d1/2")
    assert opening.startswith("User: How many singers are there?")
    assert opening.endswith("User: Show me the old ones.")
    assert adapter.reset(task_id="cosql_dev/d1/0") == "How many singers are there?"


def test_cosql_all_info_layout_with_labels_and_raw_sql(tmp_path: Path) -> None:
    """CoSQL's own layout: acts in ``label``, the SQL in the unlabelled turn after a request."""
    src = tmp_path / "cosql"
    make_db(src / "database" / "concert" / "concert.sqlite")
    turns = [
        {"isUser": True, "text": "Which singers are young?", "label": ["AMBIGUOUS"]},
        {"isUser": False, "text": "Younger than what age?", "label": ["CLARIFY"]},
        {"isUser": True, "text": "Under 30.", "label": ["INFORM_SQL"]},
        {
            "isUser": False,
            "text": "",
            "label": [],
            "rawSql": "SELECT name FROM singer WHERE age < 30",
        },
        {"isUser": False, "text": "Bo and Di are under 30.", "label": ["CONFIRM_SQL"]},
        {"isUser": True, "text": "And from Peru?", "label": ["INFORM_SQL"]},
        {
            "isUser": False,
            "text": "",
            "label": [],
            "rawSql": 'SELECT name FROM singer WHERE age < 30 AND country = "Peru"',
        },
        {"isUser": False, "text": "Di.", "label": ["CONFIRM_SQL"]},
    ]
    write_json(src / "cosql_all_info_dialogs.json", {"e7": {"db_id": "concert", "turns": turns}})
    rep = import_dataset("cosql", str(src), str(tmp_path / "out"))
    tasks = {t.id: t for t in load_tasks(tmp_path / "out" / "tasks.jsonl")}
    clar = tasks["cosql_all_info_dialogs/e7/0"]
    assert clar.underspecs == [Underspec(Label("intent"), "Under 30.")]
    assert clar.gold_sql == "SELECT name FROM singer WHERE age < 30" and clar.context == []
    follow = tasks["cosql_all_info_dialogs/e7/4"]
    assert follow.utterance == "And from Peru?"
    assert follow.gold_sql.endswith("country = 'Peru'") and rep.rewritten == 1
    assert [t["content"] for t in follow.context] == [
        "Which singers are young?",
        "Younger than what age?",
        "Under 30.",
        "Bo and Di are under 30.",
    ]  # the SQL turns are not part of what anyone said


def test_link_instead_of_copy(spider: Path, tmp_path: Path) -> None:
    out = tmp_path / "linked"
    rep = import_dataset("spider", str(spider), str(out), link=True)
    db = out / "databases" / "concert.sqlite"
    assert (
        db.is_symlink() and db.resolve() == (spider / "database/concert/concert.sqlite").resolve()
    )
    assert rep.kept == 4
    env = ClarifySQLEnv(str(out / "tasks.jsonl"))
    assert run(env, "dev/0", [{"type": "stop", "sql": "SELECT 4"}])["correct"]
    env.close()


def test_db_id_cannot_name_a_file_outside_the_source(tmp_path: Path) -> None:
    """A record's db_id is a name, not a path: an absolute or ``..`` db_id must not make the
    importer copy a database from elsewhere on disk into the suite."""
    outside = make_db(tmp_path / "elsewhere" / "private.sqlite")
    src = tmp_path / "spider"
    make_db(src / "database" / "concert" / "concert.sqlite")
    recs = [
        {
            "db_id": "concert",
            "question": "How many singers?",
            "query": "SELECT count(*) FROM singer",
        },
        {"db_id": str(outside.with_suffix("")), "question": "Abs?", "query": "SELECT 1"},
        {"db_id": "../../elsewhere/private", "question": "Dots?", "query": "SELECT 1"},
    ]
    write_json(src / "dev.json", recs)
    report = import_dataset("spider", str(src), str(tmp_path / "out"))
    assert report.kept == 1
    assert sorted(report.databases) == ["concert"]
    reasons = [d["reason"] for d in report.dropped]
    assert len(reasons) == 2 and all("database" in r for r in reasons)
