"""ODUTQA-MDC gold records: label conversion, gated replies in Chinese, a runnable suite."""

from __future__ import annotations

import json

import pytest

from clarisql.envs.env import ClarifySQLEnv
from clarisql.envs.simulators import DialogueContext, FixedSimulator
from clarisql.envs.simulators.gate import REFUSAL_REPLY_ZH, label_breadth
from clarisql.envs.suites.odutqa import (
    NEUTRAL_CN,
    SLOT_NAMES_CN,
    TEMPLATES_CN,
    baseline_scope_prediction,
    load_records,
    odutqa_suite,
    record_to_task,
)
from clarisql.envs.suites.odutqa.literal import exploration_probe
from clarisql.envs.tasks import Label, Task
from clarisql.policies import make_policy
from clarisql.rollouts.episode import run_episode

from .conftest import SHARED_DATA, need_shared

ODUTQA = SHARED_DATA / "odutqa"


@pytest.fixture(scope="module")
def records() -> list[dict]:
    need_shared(ODUTQA)
    return load_records(ODUTQA)[0]


@pytest.fixture(scope="module")
def suite(tmp_path_factory: pytest.TempPathFactory):
    need_shared(ODUTQA)
    return odutqa_suite(ODUTQA, cache_dir=tmp_path_factory.mktemp("odutqa"))


@pytest.fixture(scope="module")
def probe(suite) -> dict:
    return exploration_probe(suite)


def test_every_record_converts_with_its_labels(records: list[dict]) -> None:
    assert len(records) == 151
    for i, rec in enumerate(records):
        task = record_to_task(rec, i)
        assert Task.from_dict(task.to_dict()) == task
        scope = [s for s in rec["scope_ambiguity"] if s[2] != "Correct"]
        assert len(task.scope_labels) == len(scope)
        assert len(task.condition_labels) == len(rec["condition_ambiguity"])
        assert task.intent_underspecified == bool(rec["intent_ambiguity"])
        for u in task.underspecs:
            assert u.value, (task.id, u)
            if u.label.kind == "intent":
                assert u.value in rec["SELECT_clarification"].values()
            elif u.label.clause == "from":
                assert u.value in rec["FROM_clarification"]
            else:
                assert u.value in rec["WHERE_clarification"]
                assert u.label.slot in ("enterprise", "project")


def test_gate_on_the_published_baseline_predictions(records: list[dict]) -> None:
    """The MAIC-TQA baseline's predicted scope triples earn exactly the gold ones they match."""
    sim = FixedSimulator(TEMPLATES_CN, NEUTRAL_CN, SLOT_NAMES_CN)
    earned = total = 0
    for i, rec in enumerate(records):
        task = record_to_task(rec, i)
        pred = [Label.parse(t) for t in baseline_scope_prediction(rec) if t[2] != "Correct"]
        if not pred:
            continue
        total += 1
        reply = sim.respond("?", pred, DialogueContext(task, []))
        if label_breadth(pred) is not None:  # too broad (e.g. 6 labels, overlapping spans)
            assert not reply.earned and reply.revealed == [] and reply.text == REFUSAL_REPLY_ZH
            continue
        gold_keys = {u.label.key() for u in task.scope_labels}
        hits = [p for p in pred if p.key() in gold_keys]
        assert reply.earned == bool(hits)
        assert {u.label.key() for u in reply.revealed} == {p.key() for p in hits}
        if hits:
            earned += 1
            assert all(u.value in reply.text for u in reply.revealed)
        else:
            assert reply.text == NEUTRAL_CN
            assert not any(u.value in reply.text for u in task.underspecs)
    assert total > 50 and 0 < earned < total  # the baseline is right on some, wrong on others


def test_runnable_suite_over_hundreds_of_tables(suite, probe) -> None:
    assert suite.metadata["tables"] == 209
    assert len(suite) >= 0.95 * 151 and len(suite) + len(suite.metadata["skipped"]) == 151
    assert sum(len(t.metadata["tables"]) > 1 for t in suite.tasks) >= 20  # multi-table records
    env = ClarifySQLEnv(suite, table_search=False)  # the full schema (search is on by default)
    obs, _ = env.reset(seed=0)
    assert obs["schema"].count("\n") >= 209  # every caption is a table the agent must choose from
    oracle = [run_episode(env, make_policy("oracle"), t.id) for t in suite.tasks]
    assert all(r.correct for r in oracle), [r.task_id for r in oracle if not r.correct][:5]
    naive = [run_episode(env, make_policy("answer-without-clarifying"), t.id) for t in suite.tasks]
    right = {r.task_id for r in naive if r.correct}
    vague = {t.id for t in suite.tasks if t.underspecs}
    # the literal reading is right on every well-specified task and (almost) no other
    assert {t.id for t in suite.tasks if not t.underspecs} <= right
    assert right & vague == set(probe["literal_solved"]) and len(right & vague) <= 1


def test_exploring_instead_of_asking_does_not_solve_underspecified_tasks(probe) -> None:
    """Gold SQL without its WHERE, or with every vague part relaxed, misses the gold answer."""
    assert probe["underspecified"] >= 100 and probe["exploration_failed"] == []
    # one task stays solvable: its only label is a missing city, and its district exists in one
    # city only, so the database cannot make the city matter
    assert len(probe["exploration_solved"]) <= 1, probe["solved_by"]


def test_database_is_the_same_whichever_set_is_loaded(tmp_path, records) -> None:
    """Every record file feeds the database; loading another set reuses the same file."""
    data = tmp_path / "data"
    (data / "datasets" / "table_captions").mkdir(parents=True)
    cap = "datasets/table_captions/all_table_captions.json"
    (data / cap).write_bytes((ODUTQA / cap).read_bytes())
    (data / "records_dev.jsonl").write_bytes((ODUTQA / "records_dev.jsonl").read_bytes())
    other = [{**r, "uuid": f"other-{r['uuid']}"} for r in records[:12]]
    (data / "records_other.jsonl").write_text(
        "\n".join(json.dumps(r, ensure_ascii=False) for r in other), encoding="utf-8"
    )
    dev = odutqa_suite(data, cache_dir=tmp_path / "c")
    oth = odutqa_suite(data, cache_dir=tmp_path / "c", split="other")
    assert dev.databases["odutqa"].path == oth.databases["odutqa"].path
    assert len(list((tmp_path / "c").iterdir())) == 1
    assert oth.tasks and oth.tasks[0].id.startswith("odutqa-other/")


def test_chinese_replies_and_the_quoted_identifier_trap(suite) -> None:
    env = ClarifySQLEnv(suite)
    task = next(t for t in suite.tasks if any(u.label.kind == "Missing" for u in t.underspecs))
    env.reset(options={"task_id": task.id})
    missing = next(u for u in task.underspecs if u.label.kind == "Missing")
    obs, *_ = env.step({"type": "clarify", "question": "?", "labels": [missing.label.to_json()]})
    assert obs["last"].startswith("正确的") and missing.value in obs["last"]
    # gold SQL quotes Chinese identifiers; a misspelled one must fail, not become a string
    bad = task.gold_sql.replace('"项目名称"', '"项目明称"').replace('"企业名称"', '"企业明称"')
    assert bad != task.gold_sql
    *_, info = env.step({"type": "execute", "sql": bad})
    assert info["error"] and "no such column" in info["error"]


def test_literal_reading_and_exploration_queries(tmp_path) -> None:
    """Rewrites of a gold SQL from the labels alone, run on a real SQLite file."""
    import sqlite3

    from clarisql.envs.suites.odutqa.literal import exploration_sqls, literal_sql
    from clarisql.envs.tasks import Underspec

    caps = ["全国企业2019年财务表", "全国企业2020年财务表", "北京市海淀区土地成交信息表"]
    db = sqlite3.connect(tmp_path / "t.sqlite")
    for c in caps[:2]:
        db.execute(f'CREATE TABLE "{c}" ("企业名称" TEXT, "负债合计" REAL, "营业利润" REAL)')
        db.executemany(
            f'INSERT INTO "{c}" VALUES (?, ?, ?)',
            [("济南轨道交通集团有限公司", 1.0, 2.0), ("济南轨道交通集团投资有限公司", 3.0, 4.0)],
        )
    full = "济南轨道交通集团有限公司"
    task = Task(
        id="x/0",
        db="x",
        utterance="济南轨道集团的负债情况？",
        category="mixed",
        gold_sql=f'SELECT "企业名称","负债合计" FROM "全国企业2020年财务表" WHERE "企业名称" = \'{full}\';',
        underspecs=[
            Underspec(Label("intent"), "负债合计"),
            Underspec(Label("Missing", "", "year"), "2020年"),
            Underspec(Label("not-exist", "济南轨道集团", "enterprise"), full),
        ],
    )
    lit = literal_sql(task, caps)
    assert "SELECT *" in lit and "'济南轨道集团'" in lit and lit.count("UNION ALL") == 1
    assert db.execute(lit).fetchall() == []  # the abbreviation, taken literally, matches nothing
    ex = exploration_sqls(task, caps)
    assert "WHERE" not in ex["no_where"] and len(db.execute(ex["no_where"]).fetchall()) == 2
    assert "LIKE '%济%南%轨%道%集%团%'" in ex["relaxed"]
    assert ex["relaxed"].startswith('SELECT "企业名称"')
    assert len(db.execute(ex["relaxed"]).fetchall()) == 4  # two names, two years: ambiguous
    # a wrong district is read as written: a table that does not exist
    land = Task(
        id="x/1",
        db="x",
        utterance="海定区的X项目容积率？",
        category="from",
        gold_sql='SELECT "容积率" FROM "北京市海淀区土地成交信息表" WHERE "项目名称" = \'X\'',
        underspecs=[Underspec(Label("Error", "海定区", "district"), "海淀区")],
    )
    assert "FROM 北京市海定区土地成交信息表 AS" in literal_sql(land, caps)
    assert "FROM 北京市海淀区土地成交信息表 AS" in exploration_sqls(land, caps)["relaxed"]


def test_bad_records_are_skipped_and_counted_never_the_suite(tmp_path, records) -> None:
    """Records with a NULL in the gold answer (or a line that is not JSON) crashed the database
    build, so no task of any set loaded: now each is left out and counted with its reason."""
    data = tmp_path / "data"
    (data / "datasets" / "table_captions").mkdir(parents=True)
    cap = "datasets/table_captions/all_table_captions.json"
    (data / cap).write_bytes((ODUTQA / cap).read_bytes())
    (data / "records_dev.jsonl").write_bytes((ODUTQA / "records_dev.jsonl").read_bytes())
    bad = []
    for r in records:  # enterprise finance records: their figures feed the generator's sums
        ans = r.get("SQL_answer") or []
        if "财务表" in str(r.get("table_caption")) and ans and isinstance(ans[0][-1], float):
            rows = [list(x) for x in ans]
            rows[0][-1] = None
            bad.append(json.dumps({**r, "uuid": f"null-{r['uuid']}", "SQL_answer": rows}))
    assert len(bad) >= 3
    lines = [*bad[:3], "{not json", json.dumps(records[0], ensure_ascii=False)]
    (data / "records_null.jsonl").write_text("\n".join(lines), encoding="utf-8")
    dev = odutqa_suite(data, cache_dir=tmp_path / "c")
    assert len(dev) + len(dev.metadata["skipped"]) == len(records) and len(dev) >= 140
    nul = odutqa_suite(data, cache_dir=tmp_path / "c", split="null")
    assert [t.id for t in nul.tasks] == ["odutqa-null/004"]
    reasons = nul.metadata["bad_records"]
    assert sorted(reasons) == [f"odutqa-null/{i:03d}" for i in range(4)]
    assert all("NULL" in reasons[f"odutqa-null/{i:03d}"] for i in range(3))
    assert "not valid JSON" in reasons["odutqa-null/003"]
