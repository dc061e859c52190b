"""Questions a user would write: nouns inflected by a library, names judged against a word
list of the question language, unanswerable attributes plausible for the entity, out-of-domain
requests about what a row is (never a table's name), join lists and scoped writes in plain
words."""

from __future__ import annotations

import random
import re
import sqlite3
from pathlib import Path

import pytest

from clarisql.envs.synth import SynthConfig, synthesize
from clarisql.envs.synth.layers.unanswerable import foreign_word, plausible, words
from clarisql.envs.synth.layers.writes import (
    _SCOPE_DELETE,
    _SCOPE_UPDATE,
    _SWAP,
    _UPDATE,
)
from clarisql.envs.synth.names import (
    ENTITY_CUES,
    PERSONAL_ATTRIBUTES,
    WORLD_ATTRIBUTES,
    attributes_of,
    entity_cue,
    language_word,
    speakable,
    table_speakable,
)
from clarisql.envs.synth.phrasing import (
    JOIN_LIST,
    OWN_NOUN,
    agg_words,
    key_words,
    plural,
    singular,
)
from clarisql.envs.tasks import Task


def test_plural_and_singular_of_irregular_and_collective_nouns() -> None:
    assert plural("staff") == "staff members" and singular("staff") == "staff member"
    assert plural("person") == "people" and singular("people") == "person"
    assert plural("child") == "children" and plural("mouse") == "mice"
    assert singular("criteria") == "criterion" and plural("analysis") == "analyses"
    assert plural("order ID") == "order IDs" and plural("country") == "countries"
    assert plural("data") == "data" and singular("series") == "series"
    assert singular("addresses") == "address" and singular("status") == "status"
    assert singular("alias") == "alias" and plural("invoice items") == "invoice items"
    assert plural("date assigned to") == "dates assigned to"
    assert plural("customer orders") == "customer orders"  # a plural stays


def test_key_words_drop_the_subjects_own_noun() -> None:
    assert key_words("customer name", "customer") == "name"
    assert key_words("staff name", "staff member") == "name"
    assert key_words("store email", "department store") == "email"
    # a key that is only the record's noun: marked, and said as the record (plain_key)
    assert key_words("city", "city") == OWN_NOUN + "name"
    assert key_words("customer ID", "customer") == "customer ID"  # "whose ID" says less
    assert key_words("address details", "address") == "address details"
    assert key_words("last name", "actor") == "last name"


def test_names_in_another_language_cannot_be_put_in_words() -> None:
    for name in ("hauptfach", "lebenserwartung", "gehalt", "nachname", "ofsplit", "ipouts"):
        assert not speakable(name), name
    for name in ("Milliseconds", "PlaylistId", "genres", "zip_postcode", "UnitPrice",
                 "replacement_cost", "September", "hoteldetails", "student_enrolment_id"):  # fmt: skip
        assert speakable(name), name
    assert language_word("playlist") and not language_word("hersteller")


def _write_mixed(path: Path, seed: int = 0) -> Path:
    """Countries with English and German column names; cities and shops; a link table."""
    rng = random.Random(seed)
    with sqlite3.connect(path) as c:
        c.execute("CREATE TABLE countries (country_id INTEGER PRIMARY KEY, country_name TEXT, "
                  "continent TEXT, population INTEGER, lebenserwartung REAL, "
                  "hauptstadt TEXT)")  # fmt: skip
        c.execute("CREATE TABLE staff (staff_id INTEGER PRIMARY KEY, staff_name TEXT, "
                  "country_id INTEGER REFERENCES countries(country_id), salary REAL, "
                  "role TEXT)")  # fmt: skip
        c.execute("CREATE TABLE suppliers (supplier_id INTEGER PRIMARY KEY, supplier_name "
                  "TEXT, rating INTEGER)")  # fmt: skip
        c.execute("CREATE TABLE product_suppliers (product_supplier_id INTEGER PRIMARY KEY, "
                  "supplier_id INTEGER REFERENCES suppliers(supplier_id), product_label TEXT, "
                  "price REAL, supplied_units INTEGER)")  # fmt: skip
        continents = ["Europe", "Asia", "Africa", "Oceania"]
        syll = ["ka", "lo", "mi", "ra", "te", "su", "vo", "ne", "di", "pa"]
        for i in range(1, 41):
            name = "".join(rng.choice(syll) for _ in range(3)).title() + f"ia {i}"
            c.execute("INSERT INTO countries VALUES (?, ?, ?, ?, ?, ?)",
                      (i, name, rng.choice(continents), rng.randint(10**5, 10**8),
                       round(rng.uniform(50, 85), 1), f"Stadt {i}"))  # fmt: skip
        first = ["Ana", "Bo", "Cy", "Dora", "Emil", "Farah", "Gil", "Hedda", "Ines", "Jonas"]
        for i in range(1, 61):
            c.execute("INSERT INTO staff VALUES (?, ?, ?, ?, ?)",
                      (i, f"{rng.choice(first)} {i}", rng.randint(1, 40),
                       round(rng.uniform(2e4, 9e4), 2), rng.choice(["clerk", "driver", "buyer"])))  # fmt: skip
        for i in range(1, 21):
            c.execute("INSERT INTO suppliers VALUES (?, ?, ?)",
                      (i, f"Supplier {i}", rng.randint(1, 5)))  # fmt: skip
        for i in range(1, 121):
            c.execute("INSERT INTO product_suppliers VALUES (?, ?, ?, ?, ?)",
                      (i, rng.randint(1, 20), f"item {rng.randint(1, 30)}",
                       round(rng.uniform(1, 90), 2), rng.randint(1, 500)))  # fmt: skip
    return path


@pytest.fixture(scope="module")
def mixed(tmp_path_factory: pytest.TempPathFactory) -> list[Task]:
    out = tmp_path_factory.mktemp("prose")
    src = _write_mixed(out / "mixed.sqlite")
    return synthesize(SynthConfig([src], out / "suite", tasks=160, seed=0)).tasks


def test_a_foreign_language_column_is_not_asked_about(mixed: list[Task]) -> None:
    assert mixed
    for t in mixed:
        text = t.utterance.lower()
        assert "lebenserwartung" not in text and "hauptstadt" not in text, t.utterance


def test_no_attribute_is_unanswerable_where_a_column_speaks_another_language(
    mixed: list[Task],
) -> None:
    """``countries`` has ``lebenserwartung`` (life expectancy); ``staff`` reaches it: what such
    a column holds cannot be told, so neither is asked for a missing attribute."""
    for t in mixed:
        if t.unanswerable_kind in ("column-surface", "column-related", "column-unrelated"):
            assert not {"countries", "staff"} & set(t.metadata["tables"]), t.utterance
    assert foreign_word("lebenserwartung") and not foreign_word("salary")
    assert (
        not foreign_word("hbp") and not foreign_word("AgtCity") and foreign_word("arbeitnehmer_id")
    )


def test_unanswerable_attributes_are_plausible_for_the_entity(mixed: list[Task]) -> None:
    asked = [t for t in mixed if t.unanswerable_kind in ("column-related", "column-unrelated")]
    assert asked
    vocab = {"country", "countries", "staff", "supplier", "suppliers", "product", "price",
             "rating", "salary", "role", "population", "continent", "name", "label", "units"}  # fmt: skip
    for t in asked:
        if t.metadata.get("withheld"):  # (a column of the table the suite's data left out)
            continue
        kind, cue = t.metadata["entity_kind"], t.metadata.get("entity_cue")
        assert t.metadata["requested"] in plausible(kind, cue), t.utterance
    for t in asked:
        if t.unanswerable_kind == "column-unrelated":  # unrelated to every schema word
            assert not words(t.metadata["requested"]) & vocab, t.utterance
    # no attribute of another kind of entity: a country has no mayor, a product no breed
    assert "mayor" not in attributes_of("place", "country")
    assert "breed" not in plausible("product") and "mayor" not in plausible("transaction")
    assert set(PERSONAL_ATTRIBUTES) == set(WORLD_ATTRIBUTES)


def test_out_of_domain_never_takes_a_table_name(mixed: list[Task]) -> None:
    ood = [t for t in mixed if t.unanswerable_kind == "out-of-domain"]
    assert ood
    cues = set().union(*ENTITY_CUES.values())
    for t in ood:
        about = t.metadata["about"]
        noun = about.removesuffix(" member")
        assert noun in cues or " " not in about, t.utterance  # a kind's word, never a name
        assert "product supplier" not in t.utterance.lower(), t.utterance
    assert entity_cue("product_suppliers") == ("organisation", "supplier")


def test_join_lists_and_scoped_writes_read_as_plain_requests(mixed: list[Task]) -> None:
    sql_speak = re.compile(r"\bvalues occur\b|\blist each once\b|\bdistinct\b", re.I)
    for f in JOIN_LIST:
        assert not sql_speak.search(f) and "{attrs}" in f
    for f in _SCOPE_UPDATE + _SCOPE_DELETE:
        assert " there " not in f and "all its" not in f
    for f in _SWAP + _UPDATE:
        assert "({k})" not in f  # no "(track ID)" tag
    for t in mixed:
        assert not sql_speak.search(t.utterance), t.utterance
        assert not re.search(r"\bstaffs\b", t.utterance), t.utterance


def test_an_aggregate_is_not_said_twice() -> None:
    assert agg_words("sum", "total") == "the sum of the totals"  # not "the total of the total"
    assert agg_words("avg", "unit price") == "the average unit price"
    assert agg_words("max", "highest score") == "the largest highest score"


def test_tables_named_in_another_language_are_no_subject() -> None:
    assert table_speakable("tblEmployees") and table_speakable("invoice_items")
    assert not table_speakable("adressen") and not table_speakable("mitarbeiter")
