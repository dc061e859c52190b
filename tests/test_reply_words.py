"""The simulated user's replies say columns and aggregates in words, as the questions do: never
a column's identifier, a SQL function's name or "(AVG)" ("The billing state I mean is WA.",
"I want the average total."), in every suite the Fixed simulator plays; the built-in suites'
replies are the same as before (their slots are words already); the audit's reply check
catches a planted SQL-speaking reply (a probe that reports 0 must not be blind)."""

from __future__ import annotations

import random
import sqlite3
from pathlib import Path

import pytest

from clarisql.envs.simulators import DialogueContext, FixedSimulator
from clarisql.envs.suites import load_suite
from clarisql.envs.synth.audit import (
    audit_folder,
    audit_tasks,
    reply_sql_speak,
    schema_identifiers,
)
from clarisql.envs.synth.discover import discover
from clarisql.envs.synth.names import in_words
from clarisql.envs.synth.pipeline import SynthConfig, synthesize
from clarisql.envs.synth.profile import profile_lake
from clarisql.envs.synth.verify import Verifier
from clarisql.envs.tasks import Label, Task, Underspec

from .conftest import SHARED_DATA, need_shared

COUNTRIES = ("Germany", "France", "Brazil", "Canada", "India", "Norway", "Chile", "Japan")
STATES = ("WA", "CA", "NY", "TX", "FL", "AZ")
FIRST = ("Heather", "Michael", "Laura", "Robert", "Roberto", "Astrid", "Emma", "Frank", "Hugh")
LAST = ("Leacock", "Mitchell", "Gruber", "Silva", "Almeida", "Gordon", "Schneider", "Hansen")


@pytest.fixture(scope="module")
def camel_db(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """An invoices database whose columns are all identifiers (``BillingCountry``)."""
    path = tmp_path_factory.mktemp("camel") / "shop.sqlite"
    rng = random.Random(3)
    conn = sqlite3.connect(path)
    conn.executescript(
        """
        CREATE TABLE Customer (CustomerId INTEGER PRIMARY KEY, FirstName TEXT, LastName TEXT,
                               Country TEXT);
        CREATE TABLE Invoice (InvoiceId INTEGER PRIMARY KEY, CustomerId INTEGER
                              REFERENCES Customer (CustomerId), InvoiceYear INTEGER,
                              BillingCountry TEXT, BillingState TEXT, UnitCount INTEGER,
                              Total REAL, G INTEGER);
        """
    )
    for i in range(1, 49):
        conn.execute(
            "INSERT INTO Customer VALUES (?, ?, ?, ?)",
            (i, FIRST[i % len(FIRST)], LAST[i % len(LAST)], COUNTRIES[i % len(COUNTRIES)]),
        )
    for i in range(1, 401):
        c = rng.randint(1, 48)
        conn.execute(
            "INSERT INTO Invoice VALUES (?, ?, ?, ?, ?, ?, ?, ?)",
            (i, c, rng.randint(2009, 2013), COUNTRIES[c % len(COUNTRIES)], rng.choice(STATES),
             rng.randint(1, 14), round(rng.uniform(0.99, 25.86), 2), rng.randint(0, 5)),
        )  # fmt: skip
    conn.commit()
    conn.close()
    return path


def test_a_slot_is_said_in_words() -> None:
    sim = FixedSimulator()
    state = Underspec(Label("Missing", "", "BillingState"), "WA")
    assert sim.render(state) == "The billing state I mean is WA."
    name = Underspec(Label("Error", "Reesse", "first_name"), "Reese")
    assert sim.render(name) == "Sorry, I got the first name wrong: I meant Reese."
    # the task's own words (what its questions call the column) come first ...
    task = Task(
        id="t",
        db="x",
        utterance="?",
        gold_sql="SELECT 1",
        metadata={"slot_words": {"EntStageName": "stage name"}},
    )
    stage = Underspec(Label("Missing", "", "EntStageName"), "Jazz Times")
    assert sim.render(stage, task) == "The stage name I mean is Jazz Times."
    assert sim.render(stage) == "The ent stage name I mean is Jazz Times."  # (words, no metadata)
    # ... and a suite's own slot names (a language's words) before them
    zh = FixedSimulator(
        slot_names={"city": "城市"}, templates={"Missing": "我指的{slot}是{value}。"}
    )
    assert zh.render(Underspec(Label("Missing", "", "city"), "北京")) == "我指的城市是北京。"
    assert FixedSimulator().render(Underspec(Label("Missing", "", "城市"), "北京")) == (
        "The 城市 I mean is 北京."
    )


def test_a_reply_reveals_only_the_label_it_answers() -> None:
    """The words of a slot are said only for the label the agent earned: asking about the
    intent says nothing of the billing state, a wrong slot gets the neutral reply."""
    task = Task(
        id="t",
        db="x",
        utterance="I need a quick figure on the invoices.",
        gold_sql="SELECT 1",
        underspecs=[
            Underspec(Label("intent"), "I want the average total."),
            Underspec(Label("Missing", "", "BillingState"), "WA"),
        ],
        metadata={"slot_words": {"BillingState": "billing state"}},
    )
    ctx = DialogueContext(task=task, history=[], turn=1)
    sim = FixedSimulator()
    sim.reset(task)
    got = sim.respond("", [Label("intent")], ctx)
    assert got.text == "I want the average total." and "billing" not in got.text.lower()
    sim.reset(task)
    got = sim.respond("", [Label("Missing", "", "BillingState")], ctx)
    assert got.text == "The billing state I mean is WA." and "average" not in got.text
    sim.reset(task)
    got = sim.respond("", [Label("Missing", "", "BillingCity")], ctx)
    assert not got.earned and "billing" not in got.text.lower() and "WA" not in got.text


@pytest.mark.parametrize("suite", ["builtin", "hybrid", "odutqa"])
def test_the_built_in_suites_replies_are_unchanged(suite: str, tmp_path: Path) -> None:
    """Their slots are words already (or the suite names them, in Chinese): each reply says its
    slot exactly as before."""
    if suite == "odutqa":
        from clarisql.envs.suites.odutqa import odutqa_suite

        s = odutqa_suite(need_shared(SHARED_DATA / "odutqa"), cache_dir=tmp_path / "c")
    else:
        s = load_suite(suite)
    sim = FixedSimulator(**(s.metadata.get("simulator_kwargs") or {}))
    slots = [(t, u.label.slot) for t in s.tasks for u in t.underspecs if u.label.kind != "intent"]
    assert slots
    for t, slot in slots:
        assert sim.slot_words(slot, t) == sim.slot_names.get(slot, slot)


def test_the_reply_check_catches_planted_sql_speak(camel_db: Path) -> None:
    ids = schema_identifiers(["Invoice", "BillingState", "first_name", "Total", "year", "rating"])
    assert ids == {"Invoice", "BillingState", "first_name", "Total"}
    planted = [
        ("I want the average of Total (AVG).", ()),
        ("I want the number of rows (COUNT).", ()),
        ("The BillingState I mean is WA.", ("WA",)),
        ("Sorry, I got the first_name wrong: I meant REESE.", ("REESE",)),
        ("I want avg(total).", ()),
        ("Total = 5, please.", ()),
    ]
    for text, said in planted:
        assert reply_sql_speak(text, ids, said) is not None, text
    fine = [
        ("I want the average total.", ()),
        ("I just want to know how many there are.", ()),
        ("The billing state I mean is WA.", ("WA",)),
        ("Total sales, I mean.", ()),  # a capitalised word that starts a sentence
        ("The full name is first_name MAX.", ("first_name MAX",)),  # (the value is data)
        ("My mistake, I meant the year 2012.", ("2012",)),
    ]
    for text, said in fine:
        assert reply_sql_speak(text, ids, said) is None, text
    # through the audit: the reply the simulator renders for each label of each task
    lake = discover(profile_lake(camel_db))
    v = Verifier(camel_db, max_rows=5000)
    sql = "SELECT AVG(Total) FROM Invoice WHERE BillingState = 'WA'"
    tasks = [
        Task(id=f"t{i}", db="shop.sqlite", utterance="I need a quick figure on the invoices.",
             gold_sql=sql, category="mixed", underspecs=us, metadata=md)
        for i, (us, md) in enumerate([
            ([Underspec(Label("intent"), "I want the average of Total (AVG).")], {}),
            ([Underspec(Label("Missing", "", "BillingState"), "WA")],
             {"slot_words": {"BillingState": "BillingState"}}),  # (words that are not words)
            ([Underspec(Label("intent"), "I want the average total."),
              Underspec(Label("Missing", "", "BillingState"), "WA")], {}),
            ([Underspec(Label("Missing", "", "G"), "3")], {}),  # "The g I mean is 3."
        ])
    ]  # fmt: skip
    report = audit_tasks(tasks, lake, v)
    v.close()
    assert report.total("reply-sql-speak") == 3, report.examples
    assert all("t2:" not in ex for ex in report.examples["reply-sql-speak"])


def test_a_synthesized_suite_replies_in_words(camel_db: Path, tmp_path: Path) -> None:
    res = synthesize(SynthConfig(sources=[camel_db], out=tmp_path / "s", tasks=80, seed=0))
    report, tasks = audit_folder(res.tasks_path.parent)
    assert report.total("reply-sql-speak") == 0, report.examples["reply-sql-speak"]
    sim = FixedSimulator()
    labelled = [(t, u) for t in tasks for u in t.underspecs]
    intents = [u.value for _, u in labelled if u.label.kind == "intent"]
    named = [(t, u) for t, u in labelled if u.label.kind != "intent" and in_words(u.label.slot)
             != u.label.slot]  # fmt: skip
    assert intents and named  # (the check saw replies it could have caught)
    ids = schema_identifiers(
        n for t in discover(profile_lake(res.db_path)).tables
        for n in (t.name, *(c.name for c in t.columns))
    )  # fmt: skip
    said = 0
    for t, u in named:
        text = sim.render(u, t)
        assert u.label.slot not in text, text  # ("The full name is Robert." says no slot)
        said += in_words(u.label.slot) in text
        assert t.metadata["slot_words"][u.label.slot] == in_words(u.label.slot)
    assert said
    for text in intents:
        assert reply_sql_speak(text, ids) is None and "(" not in text, text
