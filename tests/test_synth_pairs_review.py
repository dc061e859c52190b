"""What a reviewer of the synthesized suites found, each now a mechanism (a test that fails
without it):

- a column request is made only with its answerable twin: a table no lookup may ask anything of
  but its name would be asked about only as unanswerable, and its rows would tell the kind;
  a low-information column (one of nine agents' cities) is a fact a lookup may ask;
- the record a request names is one a user can type: no value on two lines;
- one attribute, one kind: what column-unrelated requests ask is never what column-related
  ones ask;
- a ranking ("one of the 3 largest numbers of ...") that keeps most of its rows is no draft;
- the verb agrees with a plural attribute ("What are the address details of ...");
- a table is asked no more different absent attributes than its twins may ask columns (at
  least two): the unanswerable side's words as varied as the answerable side's.
"""

from __future__ import annotations

import random
import sqlite3
from collections.abc import Iterator
from pathlib import Path

import pytest

from clarisql.envs.synth.discover import discover
from clarisql.envs.synth.drafting import Candidate, DraftContext
from clarisql.envs.synth.layers.common import tidy, typeable
from clarisql.envs.synth.layers.unanswerable import (
    K_RELATED,
    K_UNRELATED,
    MIN_RELATED,
    _UnansGen,
    unrelated_attributes,
)
from clarisql.envs.synth.names import (
    CUE_ATTRIBUTES,
    CUE_PERSONAL,
    PERSONAL_ATTRIBUTES,
    WORLD_ATTRIBUTES,
    attributes_of,
)
from clarisql.envs.synth.profile import profile_lake
from clarisql.envs.synth.verify import Verifier

CITIES = ("Redmond", "Seattle", "Bellevue")


@pytest.fixture
def lake_gen(tmp_path: Path) -> Iterator[tuple[object, _UnansGen, Path]]:
    path = tmp_path / "agency.sqlite"
    conn = sqlite3.connect(path)
    conn.executescript(
        """
        CREATE TABLE agents (agent_id INTEGER PRIMARY KEY, agent_name TEXT, city TEXT);
        CREATE TABLE departments (department_id INTEGER PRIMARY KEY, department_name TEXT);
        CREATE TABLE addresses (address_id INTEGER PRIMARY KEY, address_details TEXT,
                                postcode TEXT);
        CREATE TABLE visits (visit_id INTEGER PRIMARY KEY, agent_id INTEGER, fee REAL);
        """
    )
    for i in range(1, 10):  # nine agents: every column but the name is low-information
        conn.execute(
            "INSERT INTO agents VALUES (?, ?, ?)", (i, f"Agent {'ABCDEFGHI'[i - 1]}", CITIES[i % 3])
        )
    for i, n in enumerate(("purchasing", "marketing", "advertising", "managing", "sales"), 1):
        conn.execute("INSERT INTO departments VALUES (?, ?)", (i, n))
    for i in range(1, 31):  # every address but one on two lines, as address books keep them
        details = f"{i} Elm Street" + (", Springfield" if i == 30 else "\nSpringfield")
        conn.execute("INSERT INTO addresses VALUES (?, ?, ?)", (i, details, f"P{i:03d}"))
    rng = random.Random(0)
    for i in range(1, 61):
        conn.execute(
            "INSERT INTO visits VALUES (?, ?, ?)",
            (i, 1 if i <= 20 else 2 + i % 8, round(rng.uniform(5, 90), 2)),
        )
    conn.commit()
    conn.close()
    lake = discover(profile_lake(path))
    v = Verifier(path)
    yield lake, _UnansGen(lake, v, random.Random(0)), path
    v.close()


def test_a_column_request_is_made_only_with_its_twin(lake_gen) -> None:
    lake, gen, _ = lake_gen
    departments = lake.table("departments")  # nothing but a name: no lookup asks it anything
    assert gen.twin_columns(departments, {"department_name"}) == []
    for _ in range(20):
        assert gen.attr_task(K_RELATED, departments, "founding date", {}) is None
    agents = lake.table("agents")  # nine rows: their city is low-information, still a fact
    assert any(c.name == "city" for c in gen.twin_columns(agents, set()))
    made = [gen.attr_task(K_RELATED, agents, "nationality", {}) for _ in range(20)]
    made = [m for m in made if m is not None]
    assert made and all(m.meta["twin"]["utterance"] for m in made)
    assert all("city" in m.meta["twin"]["gold_sql"] for m in made)


def test_the_record_a_request_names_is_one_a_user_can_type(lake_gen) -> None:
    lake, gen, _ = lake_gen
    addresses = lake.table("addresses")
    said = set()
    for _ in range(40):
        got = gen.subject(addresses)
        if got is not None and got[0].name == "address_details":
            said.add(got[1])
    assert said == {"30 Elm Street, Springfield"}  # (the 29 on two lines are never named)
    assert typeable("30 Elm Street") and typeable(30)
    assert not typeable("30 Elm Street\nSpringfield") and not typeable(" 30 Elm Street")
    assert not typeable("30  Elm Street") and not typeable("30 Elm\tStreet")


def test_one_attribute_one_kind() -> None:
    cues: list[str | None] = [None, *CUE_ATTRIBUTES, "staff", "customer"]
    for kind in WORLD_ATTRIBUTES:
        for cue in cues:
            related = set(attributes_of(kind, cue))
            unrelated = set(unrelated_attributes(kind, cue))
            assert not related & unrelated, (kind, cue, related & unrelated)
            own = CUE_PERSONAL[cue] if cue in CUE_PERSONAL else PERSONAL_ATTRIBUTES.get(kind, ())
            assert unrelated <= set(own)
    # ("motto" is something organisations record: never column-unrelated; a book has no
    # soundtrack)
    assert "motto" not in unrelated_attributes("organisation")
    assert "soundtrack" not in unrelated_attributes("work", "book")


def test_column_unrelated_asks_only_what_few_databases_record(lake_gen) -> None:
    lake, gen, _ = lake_gen
    asked = [m for m in (gen.column_unrelated() for _ in range(60)) if m is not None]
    assert asked
    for m in asked:
        kind = m.meta["entity_kind"]
        assert m.meta["requested"] in unrelated_attributes(kind, m.meta["entity_cue"])
        assert m.category.endswith(K_UNRELATED)


def test_a_ranking_that_keeps_most_of_its_rows_is_no_draft(lake_gen) -> None:
    lake, _, path = lake_gen
    v = Verifier(path)
    try:
        cx = DraftContext(lake, v, random.Random(0))
        inner = (
            "SELECT agent_id, COUNT(*) AS n, DENSE_RANK() OVER (ORDER BY COUNT(*) DESC) AS rk "
            "FROM visits GROUP BY agent_id"
        )
        cols = [lake.table("visits").column("agent_id")]

        def cand(k: int, q: str) -> Candidate:
            return Candidate(
                f"SELECT agent_id, n FROM ({inner}) WHERE rk <= {k}",
                q,
                "challenging",
                "join",
                cols,
                ("window",),
                False,
                {"ranked": f"SELECT COUNT(*) FROM ({inner})"},
            )

        # agent 1 has 20 visits, the other eight 5 each: "one of the 2 largest" is every agent
        assert cx.check(cand(2, "Which agents have one of the 2 largest numbers?")) is None
        assert "a ranking that keeps most of its rows" in cx.rejected
        kept = cx.check(cand(1, "Which agents have the most visits?"))
        assert kept is not None and "ranked" not in kept.slots
    finally:
        v.close()


def test_the_verb_agrees_with_a_plural_attribute() -> None:
    assert tidy("What is the address details of the address whose address ID is 2?") == (
        "What are the address details of the address whose address ID is 2?"
    )
    assert tidy('I need the latitude of the address whose address details is "1 Elm St".') == (
        'I need the latitude of the address whose address details are "1 Elm St".'
    )
    for same in (
        "What is the status of the order whose order ID is 3?",
        "What is the address of the customer whose name is Ann?",
        'What is the price of the product whose name is "The items is here"?',
    ):
        assert tidy(same) == same


def test_a_table_is_asked_no_more_absent_attributes_than_its_twins_ask(lake_gen) -> None:
    lake, gen, _ = lake_gen
    asked: dict[str, set[str]] = {}
    for _ in range(120):
        m = gen.column_related()
        if m is not None:
            asked.setdefault(m.meta["tables"][0], set()).add(m.meta["requested"])
    assert asked
    for table, attrs in asked.items():
        bound = max(MIN_RELATED, len(gen.twin_columns(lake.table(table), set())))
        assert len(attrs) <= bound, (table, attrs)
    assert any(len(a) == max(MIN_RELATED, 1) for a in asked.values())  # (and it is reached)
