"""A value's problem is decided by the data, not guessable from its surface.

The free-text gate asks a question about a written value to state its problem. That problem
follows what is wrong with the written value relative to the value meant: cut short (the value
meant contains it) is ``partial`` ("the full name"), misspelled or outside the data is ``wrong``
("another value"), whatever the label's kind. The generator writes names and text scope values
cut short or misspelled about equally often, so neither the kind nor the look of the surface
gives the problem away.
"""

from __future__ import annotations

import random
import sqlite3
from collections import Counter
from pathlib import Path

from clarisql.envs.simulators.gate import addressed, make_mapper
from clarisql.envs.simulators.gate.kinds import PARTIAL, WRONG, value_problem
from clarisql.envs.simulators.gate.types import GateContext
from clarisql.envs.synth.discover import discover
from clarisql.envs.synth.layers import clarify as C
from clarisql.envs.synth.layers import clarify_tasks
from clarisql.envs.synth.layers import surfaces as S
from clarisql.envs.synth.profile import profile_lake
from clarisql.envs.synth.verify import Verifier
from clarisql.envs.tasks import Label, Task, Underspec
from clarisql.policies.text_questions import questions_for

SCHEMA = "Database tables:\npeople(id INTEGER, name TEXT, country TEXT, salary REAL)"
LEXICAL = make_mapper("lexical")
FULL = "What is the full name of '{v}'?"
OTHER = "'{v}' does not match the data: which one did you mean instead?"


def _hit(surface: str, meant: str, kind: str, question: str) -> bool:
    request = f"What is the average salary of the people named '{surface}'?"
    gold = [Underspec(Label(kind, surface, "name"), meant)]
    ctx = GateContext(request=request, schema=SCHEMA)
    q = question.format(v=surface)
    got, _ = addressed(q, LEXICAL.map(q, ctx), gold, ctx)
    return bool(got)


def test_value_problem_follows_the_surface_and_the_value_meant() -> None:
    assert value_problem("not-exist", "Eric", "Eric Clapton") == PARTIAL
    assert value_problem("not-exist", "Blue Note", "Blue Note Records") == PARTIAL
    assert value_problem("not-exist", "Erci Clapton", "Eric Clapton") == WRONG
    assert value_problem("Error", "Aust", "Australia") == PARTIAL
    assert value_problem("Error", "Asutralia", "Australia") == WRONG
    assert value_problem("Unmatch", "2017", "2015") == WRONG
    # nothing to compare: the kind decides
    assert value_problem("not-exist", "Eric", "") == PARTIAL
    assert value_problem("Missing", "", "2015") is None


def test_gate_asks_a_misspelled_name_for_another_value() -> None:
    # a not-exist name misspelled: "the full name" is the wrong problem now
    assert _hit("Erci Clapton", "Eric Clapton", "not-exist", OTHER)
    assert not _hit("Erci Clapton", "Eric Clapton", "not-exist", FULL)
    # a cut-off name: the full name, as before
    assert _hit("Eric", "Eric Clapton", "not-exist", FULL)
    assert not _hit("Eric", "Eric Clapton", "not-exist", OTHER)


def test_gate_asks_a_cut_off_scope_value_for_the_full_name() -> None:
    assert _hit("Aust", "Australia", "Error", FULL)
    assert not _hit("Aust", "Australia", "Error", OTHER)
    assert _hit("Asutralia", "Australia", "Error", OTHER)


def test_oracle_text_states_the_problem_the_gate_wants() -> None:
    for surface, meant, kind in (
        ("Erci Clapton", "Eric Clapton", "not-exist"),
        ("Aust", "Australia", "Error"),
        ("Eric", "Eric Clapton", "not-exist"),
    ):
        gold = [Underspec(Label(kind, surface, "name"), meant)]
        task = Task(
            id="t",
            db="x.sqlite",
            utterance=f"What is the average salary of the people named '{surface}'?",
            underspecs=gold,
            gold_sql="SELECT AVG(salary) FROM people",
        )
        ((q, _),) = questions_for(task)
        ctx = GateContext(request=task.utterance, schema=SCHEMA)
        got, _ = addressed(q, LEXICAL.map(q, ctx), gold, ctx)
        assert got == gold, q


FIRST = "Ada Alma Anna Bela Bert Carl Cora Dana Dora Emil Emma Erik Hana Hans Ida Igor Jan Jana"
LAST = "Moreau Morel Novak Nowak Perez Peres Rossi Rossa Sato Satou Tanaka Tanaki Berg Borg"


def _people(path: Path) -> Path:
    rng = random.Random(5)
    con = sqlite3.connect(path)
    con.execute(
        "CREATE TABLE people (id INTEGER PRIMARY KEY, name TEXT, country TEXT, salary REAL)"
    )
    countries = ("Austria", "Australia", "Germany", "Georgia", "Canada", "Cambodia")
    rows = []
    for f in FIRST.split():
        for last in LAST.split():
            if rng.random() < 0.6:
                for _ in range(rng.randint(2, 3)):  # a name many rows hold (aggregates)
                    rows.append((f"{f} {last}", rng.choice(countries), rng.uniform(1e3, 9e3)))
    con.executemany("INSERT INTO people (name, country, salary) VALUES (?, ?, ?)", rows)
    con.commit()
    con.close()
    return path


def test_generator_writes_names_cut_short_and_misspelled_about_equally(tmp_path: Path) -> None:
    db = _people(tmp_path / "people.sqlite")
    lake, v = discover(profile_lake(db)), Verifier(db)
    probs: Counter = Counter()
    words: Counter = Counter()
    for seed in range(3):
        for t in clarify_tasks(lake, [], v, random.Random(seed), 40):
            for u in t.underspecs:
                if u.label.kind in ("not-exist", "Error"):
                    p = value_problem(u.label.kind, u.label.content, u.value)
                    probs[p] += 1
                    words[p, len(u.label.content.split()) > 1] += 1
    n = probs[PARTIAL] + probs[WRONG]
    assert n >= 20, probs
    # both problems, neither far more common than the other
    assert min(probs[PARTIAL], probs[WRONG]) >= 0.3 * n, probs
    # a misspelled or misremembered value of one word occurs: "one word -> cut off" is no rule
    assert words[WRONG, False] >= 1, words


def test_want_balances_the_problems() -> None:
    gen = C._ClarifyGen.__new__(C._ClarifyGen)
    gen.rng, gen.made_problems = random.Random(0), {("name", PARTIAL): 3}
    assert gen.want("name") == WRONG
    gen.made_problems[("name", WRONG)] = 5
    assert gen.want("name") == PARTIAL
    # the other problem is a fallback only while it leads by less than MAX_LEAD
    assert gen.problems("name") == (PARTIAL, WRONG)
    gen.made_problems[("name", WRONG)] = 3 + C.MAX_LEAD
    assert gen.problems("name") == (PARTIAL,)


def test_surfaces_have_the_problem_they_are_made_for() -> None:
    rng = random.Random(0)
    for cut in S.cut_offs(rng, "Blue Note Records"):
        assert S.problem_of(cut, "Blue Note Records") == PARTIAL
    assert "Blue Note" in S.cut_offs(rng, "Blue Note Records")
    for typo in S.misspellings("Australia"):
        assert S.problem_of(typo, "Australia") == WRONG


def test_no_name_clarification_on_credit_lists_or_a_left_out_number() -> None:
    credits = ["Eddie Cochran/Jerry Capehart", "Eddie Vedder", "A, B & C", "Jimmy Page, Robert"]
    assert S.listed(credits)
    assert not S.listed(["Eddie Vedder", "Pearl Jam", "Earth, Wind & Fire", *"abcdefgh"])
    # "Suite" for "Suite 239": what is left out is only a number
    assert "Suite" not in S.cut_offs(random.Random(0), "Suite 239")
    assert "Suite" in S.cut_offs(random.Random(0), "Suite Life")


def test_the_reply_names_the_problem_the_value_has() -> None:
    from clarisql.envs.simulators.fixed import FixedSimulator

    sim = FixedSimulator()
    typo = Underspec(Label("not-exist", "Erci Clapton", "Composer"), "Eric Clapton")
    cut = Underspec(Label("not-exist", "Eric", "Composer"), "Eric Clapton")
    short = Underspec(Label("Error", "Aust", "Country"), "Australia")
    assert "wrong" in sim.render(typo) and "full name" not in sim.render(typo)
    assert sim.render(cut) == "The full name is Eric Clapton."
    assert sim.render(short) == "The full name is Australia."
