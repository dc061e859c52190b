"""Synthesized wording gives nothing away where the database decides: minimal pairs, one phrasing
pool for every category, unanswerable attributes that fit the entity, out-of-domain requests from
the database's own domain."""

from __future__ import annotations

import difflib
import random
import re
import sqlite3
from pathlib import Path

import pytest

from clarisql.envs.synth import SynthConfig, synthesize
from clarisql.envs.synth.layers.twins import value_twin_text
from clarisql.envs.synth.layers.unanswerable import unrelated_attributes, words
from clarisql.envs.synth.names import attributes_of, entity_kind
from clarisql.envs.synth.phrasing import AGGREGATE, ATTR_OF_RECORD, ATTR_WHERE
from clarisql.envs.tasks import Label, Task, Underspec
from tests._synth_lake import write_lake

COLUMN_KINDS = ("column-surface", "column-related", "column-unrelated")


def write_library(path: Path, seed: int = 0) -> Path:
    """A small library: authors, books (by author), loans (of books) - a domain unlike the csv lake."""
    rng = random.Random(seed)
    first = ["Ana", "Bo", "Cy", "Dora", "Emil", "Farah", "Gil", "Hedda", "Ines", "Jonas"]
    last = ["Alder", "Birch", "Cedar", "Dogwood", "Elm", "Fir", "Gum", "Hazel"]
    genres = ["Mystery", "Poetry", "History", "Travel", "Science"]
    with sqlite3.connect(path) as c:
        c.execute("CREATE TABLE authors (author_id INTEGER PRIMARY KEY, author_name TEXT, "
                  "country TEXT)")  # fmt: skip
        c.execute("CREATE TABLE books (book_id INTEGER PRIMARY KEY, title TEXT, author_id "
                  "INTEGER REFERENCES authors(author_id), genre TEXT, pages INTEGER, "
                  "price REAL)")  # fmt: skip
        c.execute("CREATE TABLE loans (loan_id INTEGER PRIMARY KEY, book_id INTEGER "
                  "REFERENCES books(book_id), borrower TEXT, loan_date TEXT, days INTEGER)")  # fmt: skip
        names = [f"{f} {la}" for f in first for la in last]
        rng.shuffle(names)
        for i in range(1, 41):
            c.execute("INSERT INTO authors VALUES (?, ?, ?)",
                      (i, names[i], rng.choice(["Norway", "Chile", "Japan", "Kenya"])))  # fmt: skip
        words_ = ["Silent", "River", "Glass", "Winter", "Garden", "Harbor", "Lantern", "Stone"]
        for i in range(1, 201):
            title = f"The {rng.choice(words_)} {rng.choice(words_)} {i}"
            c.execute("INSERT INTO books VALUES (?, ?, ?, ?, ?, ?)",
                      (i, title, rng.randint(1, 40), rng.choice(genres), rng.randint(80, 900),
                       round(rng.uniform(5, 60), 2)))  # fmt: skip
        for i in range(1, 401):
            c.execute("INSERT INTO loans VALUES (?, ?, ?, ?, ?)",
                      (i, rng.randint(1, 200), rng.choice(names),
                       f"202{rng.randint(1, 4)}-{rng.randint(1, 12):02d}-{rng.randint(1, 28):02d}",
                       rng.randint(1, 60)))  # fmt: skip
    return path


_SUITES: dict[str, list[Task]] = {}


def suite(name: str, tmp_path_factory: pytest.TempPathFactory) -> list[Task]:
    if name not in _SUITES:
        out = tmp_path_factory.mktemp(f"wording-{name}")
        src = write_lake(out / "csv") if name == "csv" else write_library(out / "library.sqlite")
        res = synthesize(SynthConfig([src], out / "suite", tasks=160, seed=0))
        _SUITES[name] = res.tasks
    return _SUITES[name]


@pytest.fixture(params=["csv", "library"], scope="module")
def tasks(request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory) -> list[Task]:
    return suite(request.param, tmp_path_factory)


def _pairs(tasks: list[Task]) -> list[tuple[Task, Task]]:
    by: dict[str, list[Task]] = {}
    for t in tasks:
        if "pair" in t.metadata:
            by.setdefault(t.metadata["pair"], []).append(t)
    out = []
    for key, group in sorted(by.items()):
        assert len(group) == 2, key
        twin = [t for t in group if t.category == "well-specified" and t.answerable]
        other = [t for t in group if t not in twin]
        assert len(twin) == 1 and len(other) == 1, key
        out.append((other[0], twin[0]))
    return out


def _diff(a: str, b: str) -> list[tuple[list[str], list[str]]]:
    """The word spans where ``a`` and ``b`` differ."""
    wa, wb = a.split(), b.split()
    ops = difflib.SequenceMatcher(None, wa, wb, autojunk=False).get_opcodes()
    return [(wa[i1:i2], wb[j1:j2]) for op, i1, i2, j1, j2 in ops if op != "equal"]


def test_twins_differ_only_in_what_the_database_decides(tasks: list[Task]) -> None:
    pairs = _pairs(tasks)
    column = [(t, w) for t, w in pairs if t.unanswerable_kind in COLUMN_KINDS]
    value = [(t, w) for t, w in pairs if t.answerable]
    assert len(column) >= 5, len(column)  # a suite is written as minimal pairs
    for t, w in column:
        spans = _diff(t.utterance, w.utterance)
        assert len(spans) == 1, (t.utterance, w.utterance)  # one template, one phrasing
        asked = words(" ".join(spans[0][0]))  # the words only the unanswerable twin has
        assert asked and asked <= words(t.metadata["requested"]), (t.utterance, w.utterance)
        assert w.gold_sql and not t.gold_sql
    for t, w in value:
        assert w.gold_sql == t.gold_sql and not w.underspecs
        spans = _diff(t.utterance, w.utterance)
        said = " ".join(" ".join(a) for a, _ in spans)
        meant = " ".join(" ".join(b) for _, b in spans)
        for u in t.underspecs:  # only the value as written and the value meant differ
            assert words(u.label.content) <= words(said) and words(u.value) <= words(meant)


def _frame_of(text: str, frames: tuple[str, ...]) -> int | None:
    for i, f in enumerate(frames):
        rx = re.escape(f)
        rx = re.sub(r"\\\{[a-z]+\\\}", ".+", rx)
        if re.fullmatch(rx, text):
            return i
    return None


def test_one_phrasing_pool_for_every_category(tasks: list[Task]) -> None:
    """The frames the unanswerable column kinds use are the answerable lookups' and listings',
    each used by both; aggregates are phrased from one pool for answerable and unclear ones."""
    frames = ATTR_OF_RECORD + ATTR_WHERE
    used: dict[bool, set[int]] = {True: set(), False: set()}
    for t in tasks:
        if t.unanswerable_kind in COLUMN_KINDS or (t.category == "well-specified"):
            i = _frame_of(t.utterance, frames)
            if i is not None:
                used[t.answerable].add(i)
    assert len(used[False] & used[True]) >= 3, used
    agg_ws = {_frame_of(t.utterance, AGGREGATE) for t in tasks if t.category == "well-specified"}
    agg_cl = {_frame_of(t.utterance, AGGREGATE) for t in tasks if t.category in ("from", "where")}
    assert agg_cl - {None} and agg_ws - {None}


def test_out_of_domain_requests_come_from_the_database(
    tmp_path_factory: pytest.TempPathFactory,
) -> None:
    a, b = (suite(n, tmp_path_factory) for n in ("csv", "library"))
    ood = {
        n: {t.utterance for t in ts if t.unanswerable_kind == "out-of-domain"}
        for n, ts in (("csv", a), ("library", b))
    }
    assert ood["csv"] and ood["library"] and not ood["csv"] & ood["library"]
    for t in [*a, *b]:
        if t.unanswerable_kind == "out-of-domain":
            about, record = t.metadata["about"], t.metadata.get("record", "")
            own = words(about) | words(about + "s") | words(record)  # a table, or one record
            assert own & words(t.utterance), t.utterance


def test_column_related_attributes_fit_the_entity(tasks: list[Task]) -> None:
    related = [t for t in tasks if t.unanswerable_kind == "column-related"]
    assert related
    for t in related:
        if t.metadata.get("withheld"):  # (a column of the table the suite's data left out)
            continue
        kind, cue = t.metadata["entity_kind"], t.metadata.get("entity_cue")
        assert t.metadata["requested"] in attributes_of(kind, cue), t.utterance
    unrelated = [t for t in tasks if t.unanswerable_kind == "column-unrelated"]
    for t in unrelated:  # the same kind's attribute, never another kind's ("the mayor of a book")
        kind, cue = t.metadata["entity_kind"], t.metadata.get("entity_cue")
        assert t.metadata["requested"] in unrelated_attributes(kind, cue), t.utterance


def test_entity_kinds() -> None:
    assert entity_kind("customers") == "person" and entity_kind("tblEmployees") == "person"
    assert entity_kind("invoices") == "transaction" and entity_kind("cities") == "place"
    assert entity_kind("department_stores") == "site" and entity_kind("addresses") == "address"
    assert entity_kind("tracks") == "work" and entity_kind("film_actor") == "person"
    assert entity_kind("readings", ["first_name", "x"]) == "person"
    assert entity_kind("ztblWeeks") == "thing"


def test_value_twin_text_writes_the_value_meant_as_the_user_wrote_it() -> None:
    def task(text: str, *labels: tuple[str, str, str, str]) -> Task:
        uss = [Underspec(Label(k, c, s), v) for k, c, s, v in labels]
        return Task(id="x", db="d", utterance=text, category="where", gold_sql="SELECT 1",
                    underspecs=uss)  # fmt: skip

    t = task('Tell me the lowest bytes of the tracks with composer "Eric".',
             ("not-exist", "Eric", "Composer", "Eric Clapton"))  # fmt: skip
    assert (
        value_twin_text(t) == 'Tell me the lowest bytes of the tracks with composer "Eric Clapton".'
    )
    t = task("What is the highest total of the invoices in 2017?",
             ("Unmatch", "2017", "year", "2011"))  # fmt: skip
    assert value_twin_text(t) == "What is the highest total of the invoices in 2011?"
    twice = task('Count "Eric" and "Eric".', ("not-exist", "Eric", "c", "Eric C"))
    assert value_twin_text(twice) is None  # the surface must be written once
    missing = task("I mean one country: count them.", ("Missing", "", "country", "Peru"))
    assert value_twin_text(missing) is None  # the database does not decide a Missing slot
