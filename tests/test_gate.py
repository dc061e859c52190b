"""Free-text gating: the question mapper, the gate's no-leak rules, the env option and probes."""

from __future__ import annotations

import pytest

from clarisql.envs.env import ClarifySQLEnv
from clarisql.envs.simulators import DialogueContext, FixedSimulator
from clarisql.envs.simulators.gate import GateContext, GateRules, addressed, make_mapper
from clarisql.envs.tasks import Label, Task, Underspec
from clarisql.policies import make_policy
from clarisql.rollouts.episode import run_episode

REQUEST = "How many property sales were recorded in the Universty district of Riverton?"
TASK = Task(
    id="t/1",
    db="x",
    utterance=REQUEST,
    category="mixed",
    gold_sql="SELECT 1",
    underspecs=[
        Underspec(Label("Missing", "", "year"), "2021"),
        Underspec(Label("Error", "Universty", "district"), "University"),
    ],
)
SCHEMA = (
    "Database tables:\nsales(sale_id INTEGER, project_name TEXT, developer TEXT, property_type "
    "TEXT, sale_date TEXT, area_sqm REAL, unit_price INTEGER, total_price INTEGER, status TEXT)"
)


@pytest.fixture(scope="module")
def lexical():
    return make_mapper("lexical")


def sim(gate: str = "text") -> FixedSimulator:
    return FixedSimulator(gate=gate, mapper="lexical")


def ctx(task: Task = TASK) -> DialogueContext:
    return DialogueContext(task, [{"role": "user", "content": task.utterance}], schema=SCHEMA)


@pytest.mark.parametrize(
    ("question", "values"),
    [
        ("Which year do you mean?", ["2021"]),
        ("For what year?", ["2021"]),
        ("Is 'Universty' a typo?", ["University"]),
        ("Universty is not in the data. Which district is it?", ["University"]),
        ("Which year, and is Universty a typo?", ["2021", "University"]),
    ],
)
def test_free_text_questions_earn_the_labels_they_address(question, values) -> None:
    reply = sim().respond(question, [], ctx())
    assert reply.earned
    assert [u.value for u in reply.revealed] == values
    for v in values:
        assert v in reply.text


@pytest.mark.parametrize(
    "question",
    [
        "Anything unclear?",
        "Tell me everything.",
        "Is there anything I should know before I answer?",
        "Which city do you mean?",  # a real aspect, but not one of this task's gold labels
        "Do you want sale_id, project_name, developer, property_type, unit_price or status?",
        "Which city, district, year, company and project do you mean, and what do you want?",
        f"What do you mean by '{REQUEST}'?",
        # a value named with no problem stated asks nothing specific about it
        "What do you mean by 'Universty'?",
        "Could you tell me more about Universty?",
        # the wrong problem: Universty is a typo, not part of a longer name
        "What is the full name of 'Universty'?",
    ],
)
def test_questions_that_point_at_nothing_reveal_nothing(question) -> None:
    reply = sim().respond(question, [], ctx())
    assert not reply.earned and not reply.revealed
    assert "2021" not in reply.text and "University" not in reply.text


def test_the_mapper_never_sees_gold(lexical) -> None:
    # the same question and request map to the same aspects whatever the gold labels are
    other = Task(**{**TASK.__dict__, "underspecs": [Underspec(Label("intent"), "the price")]})
    g = GateContext(REQUEST, SCHEMA)
    assert lexical.map("Which year do you mean?", g) == lexical.map("Which year do you mean?", g)
    hits_a, _ = addressed("Which year?", lexical.map("Which year?", g), TASK.underspecs, g)
    hits_b, _ = addressed("Which year?", lexical.map("Which year?", g), other.underspecs, g)
    assert [u.value for u in hits_a] == ["2021"] and hits_b == []


def test_gate_modes_labels_text_both() -> None:
    labels = [Label("Missing", "", "year")]
    assert sim("labels").respond("Which year do you mean?", [], ctx()).revealed == []
    assert sim("text").respond("Hmm?", labels, ctx()).revealed == []
    both = sim("both").respond("Is Universty misspelled?", labels, ctx())
    assert [u.value for u in both.revealed] == ["2021", "University"]
    with pytest.raises(ValueError, match="gate must be one of"):
        FixedSimulator(gate="words")


def test_gate_rules_limit_aspects_per_question(lexical) -> None:
    g = GateContext(REQUEST, SCHEMA)
    q = "Which city, district and year do you mean?"
    hits, why = addressed(q, lexical.map(q, g), TASK.underspecs, g, GateRules(max_aspects=2))
    assert hits == [] and "3 aspects" in why
    rules = GateRules(max_aspects=3, max_things=3)
    hits, why = addressed(q, lexical.map(q, g), TASK.underspecs, g, rules)
    assert [u.value for u in hits] == ["2021"] and why is None
    with pytest.raises(ValueError, match="unknown key"):
        GateRules.from_dict({"max_aspect": 2})


def test_chinese_questions(lexical) -> None:
    task = Task(
        id="t/2",
        db="x",
        utterance="请告知空港城市发展集团和济南轨道集团各自的负债情况。",
        category="mixed",
        gold_sql="SELECT 1",
        underspecs=[
            Underspec(Label("Missing", "", "year"), "2019年"),
            Underspec(Label("not-exist", "济南轨道集团", "enterprise"), "济南轨道交通集团有限公司"),
        ],
    )
    s = FixedSimulator(gate="text", mapper="lexical")
    r = s.respond("请问是哪一年？“济南轨道集团”的全称是什么？", [], ctx(task))
    assert [u.value for u in r.revealed] == ["2019年", "济南轨道交通集团有限公司"]
    assert s.respond("还有什么不清楚的吗？", [], ctx(task)).revealed == []
    assert s.respond(f"你说的“{task.utterance}”是什么意思？", [], ctx(task)).revealed == []


@pytest.fixture(scope="module")
def text_env():
    return ClarifySQLEnv("builtin", gate="text", gate_mapper="lexical", table_search=False)


def test_oracle_in_free_text_is_perfect_and_the_probes_lose(text_env) -> None:
    tasks = [t for t in text_env.suite.tasks if t.underspecs]
    ids = [t.id for t in tasks]
    scores = {}
    for spec in ("oracle-text", "ask-everything", "clarify-every-turn"):
        pol = make_policy(spec)
        eps = [run_episode(text_env, pol, i, seed=0) for i in ids]
        scores[spec] = (
            sum(e.correct for e in eps) / len(eps),
            sum(e.reward for e in eps) / len(eps),
        )
    assert scores["oracle-text"][0] == 1.0
    assert scores["ask-everything"][1] < scores["oracle-text"][1]
    assert scores["clarify-every-turn"][1] < scores["oracle-text"][1]
    assert scores["ask-everything"][0] < 0.5


def test_env_rejects_a_gate_the_simulator_lacks() -> None:
    with pytest.raises(ValueError, match="gate must be one of"):
        ClarifySQLEnv("builtin", gate="nope", table_search=False)


def test_odutqa_oracle_in_free_text_chinese_is_perfect() -> None:
    from pathlib import Path

    from .conftest import need_shared

    need_shared(Path(__file__).resolve().parents[1].parent / "shared" / "data" / "odutqa")
    env = ClarifySQLEnv("odutqa", gate="text", gate_mapper="lexical")
    pol = make_policy("oracle-text")
    for t in env.suite.tasks:
        ep = run_episode(env, pol, t.id, seed=0)
        assert ep.correct, t.id
        asks = [x["action"]["question"] for x in ep.turns if x["action"].get("type") == "clarify"]
        hidden = [u.value for u in t.underspecs if u.value and u.value not in t.utterance]
        assert not any(v in q for v in hidden for q in asks)  # it asks, it does not tell


def test_cli_gate_and_table_search_options(tmp_path, capsys) -> None:
    import json

    from clarisql.cli import main

    out = tmp_path / "run"
    args = ["eval", "--suite", "builtin", "--policy", "oracle-text", "--gate", "text"]
    args += ["--gate-mapper", "lexical", "--no-table-search", "--max-episodes", "6"]
    assert main([*args, "--no-progress", "--out", str(out)]) == 0
    cfg = json.loads((out / "run.json").read_text())["config"]
    assert (cfg["gate"], cfg["gate_mapper"], cfg["table_search"]) == ("text", "lexical", False)
    assert "pass@1 1.000" in capsys.readouterr().out
    bad = ["eval", "--suite", "builtin", "--policy", "openai:m@http://127.0.0.1:9/v1"]
    assert main([*bad, "--prompt", "gpt9", "--out", str(tmp_path / "b")]) == 2
    assert "unknown prompt" in capsys.readouterr().err


def test_both_answers_precise_labels_beside_a_broad_text() -> None:
    """Gate ``both``: the oracle's labels with a summary question naming all of them are
    answered from the labels; the too-broad text adds nothing. Text alone stays refused."""
    from clarisql.envs.simulators.gate import REFUSAL_REPLY

    broad = "Which year, and what is the full name of 'A', 'B' and 'Universty'?"
    labels = [u.label for u in TASK.underspecs]
    r = sim("both").respond(broad, labels, ctx())
    assert [u.value for u in r.revealed] == ["2021", "University"]
    r = sim("both").respond(broad, [], ctx())
    assert r.revealed == [] and r.text == REFUSAL_REPLY
