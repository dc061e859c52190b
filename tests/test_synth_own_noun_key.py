"""A record whose key column is only its own noun (the ``address`` of an address, the ``city`` of
a city) is said as the record itself ("the address "1002 Ahmadnagar Manor""), never as having a
name; the audit counts a planted "the address whose name is ..."."""

from __future__ import annotations

import random
import sqlite3
from pathlib import Path

from clarisql.envs.synth.audit import audit_tasks
from clarisql.envs.synth.discover import discover
from clarisql.envs.synth.layers.common import tidy
from clarisql.envs.synth.phrasing import OWN_NOUN, key_words, pick
from clarisql.envs.synth.profile import profile_lake
from clarisql.envs.synth.verify import Verifier
from clarisql.envs.tasks import Task

FRAMES = (
    "What is the {attr} of the {subj} whose {key} is {v}?",
    "Tell me the {attr} for the {subj} with {key} {v}.",
    "For the {subjs} whose {key} is {v}, list their different {attrs}.",
)


def test_own_noun_key_is_said_as_the_record() -> None:
    k = key_words("address", "address")
    for f in FRAMES:
        got = pick((f,), random.Random(0), attr="district", attrs="districts", subj="address",
                   subjs="addresses", key=k, v='"1002 Ahmadnagar Manor"')  # fmt: skip
        assert "name" not in got and OWN_NOUN not in got, got
        assert 'address "1002 Ahmadnagar Manor"' in got or 'addresses "1002' in got, got
    # a frame that cannot drop the key keeps the word, never the mark
    assert tidy(f"they have each other's {k}.") == "They have each other's name."
    # a key that is a name of its own stays one
    assert key_words("customer name", "customer") == "name"
    assert pick((FRAMES[0],), random.Random(0), attr="city", subj="customer",
                key=key_words("customer name", "customer"), v='"Bob"') == (
        'What is the city of the customer whose name is "Bob"?')  # fmt: skip


def test_audit_counts_an_address_with_a_name(tmp_path: Path) -> None:
    db = tmp_path / "a.sqlite"
    conn = sqlite3.connect(db)
    conn.execute(
        "CREATE TABLE address (address_id INTEGER PRIMARY KEY, address TEXT, district TEXT)"
    )
    for i in range(1, 30):
        conn.execute("INSERT INTO address VALUES (?, ?, ?)", (i, f"{i} Main Street", f"D{i % 4}"))
    conn.commit()
    conn.close()
    lake, v = discover(profile_lake(db)), Verifier(db)

    def t(i: int, text: str) -> Task:
        return Task(id=f"a{i}", db="a.sqlite", utterance=text, category="well-specified",
                    gold_sql="SELECT district FROM address WHERE address = '1 Main Street'")  # fmt: skip

    tasks = [
        t(1, 'What is the district of the address whose name is "1 Main Street"?'),
        t(2, 'What is the district of the address "1 Main Street"?'),
    ]
    report = audit_tasks(tasks, lake, v)
    assert report.total("own-noun-called-name") == 1, report.examples
