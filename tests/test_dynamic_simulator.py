"""ODUTQA-MDC Dynamic mode: gated like Fixed mode, paraphrased by a model, values kept."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from clarisql.envs.env import ClarifySQLEnv
from clarisql.envs.simulators import DialogueContext, DynamicSimulator, make_simulator
from clarisql.envs.tasks import Label, Task, Underspec, save_tasks

from ._fake_openai import FakeOpenAI, completion
from .conftest import build_small_db

TASK = Task(
    id="t",
    db="small.sqlite",
    utterance="Total sales price in Riverton?",
    category="mixed",
    gold_sql="SELECT sum(price) FROM sales WHERE city_id = 1 AND year = 2020",
    underspecs=[
        Underspec(Label("Missing", "", "year"), "2020"),
        Underspec(Label("not-exist", "Projekt 3", "project"), "Project 3"),
    ],
)
YEAR = [["", "year", "Missing"]]


def sim(server: FakeOpenAI, **kw) -> DynamicSimulator:
    s = make_simulator(
        "dynamic", backend=f"openai:para@{server.url}", backend_kwargs={"timeout_s": 2.0}, **kw
    )
    assert isinstance(s, DynamicSimulator)
    s.reset(TASK, seed=3)
    return s


def respond(s: DynamicSimulator, labels: list, turn: int = 1):
    return s.respond("?", [Label.parse(x) for x in labels], DialogueContext(TASK, [], turn=turn))


def test_paraphrase_is_used_when_the_value_survives() -> None:
    with FakeOpenAI() as server:
        server.script = [(200, {"reply": "Oh, I meant the year 2020."}, 0.0)]
        r = respond(sim(server), YEAR)
        assert r.earned and r.text == "Oh, I meant the year 2020."
        assert r.info == {"paraphrase": "model", "attempts": 1}
        body = server.requests[0]
        assert (
            body["messages"][1]["content"] == "The year I mean is 2020."
        )  # the template is what gets rewritten


def test_paraphrases_that_drop_the_value_are_retried_then_the_template_is_used() -> None:
    with FakeOpenAI() as server:
        server.script = [(200, {"reply": "That year, you know."}, 0.0)] * 2 + [
            (200, {"reply": "It's 2020!"}, 0.0)
        ]
        r = respond(sim(server), YEAR)
        assert r.text == "It's 2020!" and r.info["attempts"] == 3
    with FakeOpenAI() as server:
        server.script = [(200, {"reply": "Some year or other."}, 0.0)]
        r = respond(sim(server), YEAR)
        assert r.text == "The year I mean is 2020." and r.info["paraphrase"] == "template"
        assert len(server.requests) == 5  # ODUTQA-MDC's five tries
    with FakeOpenAI() as server:
        server.script = [(200, {"reply": "2020, yes."}, 0.0)]
        r = respond(sim(server, retries=2), [["Projekt 3", "project", "not-exist"], *YEAR])
        # both revealed values must survive: "Project 3" is missing, so the template wins
        # ("Projekt 3" is misspelled, not cut short: the reply says so, gate/kinds.py)
        assert (
            r.text == "The year I mean is 2020. Sorry, I got the project wrong: I meant Project 3."
            and len(server.requests) == 2
        )


def test_unearned_questions_are_never_sent_to_the_model() -> None:
    with FakeOpenAI() as server:
        r = respond(sim(server), [["", "city", "Missing"]])
        assert not r.earned and "2020" not in r.text and server.requests == []


def test_backend_failure_falls_back_to_the_template() -> None:
    with FakeOpenAI(lambda body, n: (500, b"{}", 0.0), max_requests=20) as server:
        r = respond(sim(server), YEAR)
    assert r.text == "The year I mean is 2020." and "backend failed" in r.info["reason"]


def test_replies_are_seeded_and_cached() -> None:
    def by_seed(body: dict, n: int) -> tuple[int, bytes, float]:
        return 200, json.dumps(completion(f"Year 2020 (seed {body['seed']})")).encode(), 0.0

    with FakeOpenAI(by_seed) as server:
        s = sim(server)
        a = respond(s, YEAR).text
        assert respond(s, YEAR).text == a and len(server.requests) == 1  # cached
        s.reset(TASK, seed=3)
        assert respond(s, YEAR).text == a
        s.reset(TASK, seed=4)
        assert respond(s, YEAR).text != a


def test_in_an_episode(tmp_path: Path) -> None:
    build_small_db(tmp_path / "small.sqlite")
    p = save_tasks([TASK], tmp_path / "t.jsonl")
    with FakeOpenAI() as server:
        server.script = [(200, {"reply": "Sorry, 2020."}, 0.0)]
        env = ClarifySQLEnv(
            str(p), simulator="dynamic", simulator_kwargs={"backend": f"openai:para@{server.url}"}
        )
        env.reset(seed=0)
        obs, *_, info = env.step({"type": "clarify", "question": "Which year?", "labels": YEAR})
        assert obs["last"] == "Sorry, 2020." and info["simulator"]["paraphrase"] == "model"


def test_needs_a_model() -> None:
    with pytest.raises(ValueError, match="model backend"):
        DynamicSimulator("offline")
