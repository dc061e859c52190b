"""The verdict of ``clarisql ablate``: a tie is never a pass, a spec that cannot tell the honest
agent from doing nothing is reported as not applicable, the honest reference under φ_c is the
agent that declines where it missed (TrustSQL), and the strategy search finds what is planted."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from clarisql.envs.env import ClarifySQLEnv
from clarisql.envs.tasks import Task, save_tasks
from clarisql.policies import make_policy
from clarisql.policies.probes import Strategy, StrategyPolicy
from clarisql.rewards import EpisodeRecord, load_reward_spec, score_episode
from clarisql.rollouts.episode import run_episode
from clarisql.rollouts.search import search_strategies
from clarisql.rollouts.verdict import discriminates, honest_reference, verdict_table

from .conftest import build_small_db, small_task

MISS = ("oracle-miss:1", "oracle-miss:1:abstain")


def _tasks(tmp_path: Path, kinds: tuple[str, ...]) -> list[Task]:
    build_small_db(tmp_path / "small.sqlite")
    return [small_task(k, f"t/{k}") for k in kinds]


def _env(tmp_path: Path, tasks: list[Task]) -> ClarifySQLEnv:
    return ClarifySQLEnv(str(save_tasks(tasks, tmp_path / "tasks.jsonl")))


def _records(env: ClarifySQLEnv, policy, tasks: list[Task]) -> list[EpisodeRecord]:
    pol = make_policy(policy) if isinstance(policy, str) else policy
    return [EpisodeRecord.from_dict(run_episode(env, pol, t.id).summary["record"]) for t in tasks]


def _mean(recs: list[EpisodeRecord], spec: str) -> float:
    s = load_reward_spec(spec)
    return sum(score_episode(r, s)[0] for r in recs) / len(recs)


def test_a_tie_is_not_below_and_a_blind_spec_is_not_applicable() -> None:
    scores = {"s": {"oracle": 0.5, "oracle-miss:0.1": 0.4, "abstain-all": 0.4, "x": 0.1}}
    t = verdict_table(scores, ["abstain-all", "x"], ["oracle-miss:0.1"], {"s": True})
    cells = {r["probe"]: r["cells"]["s"]["verdict"] for r in t["rows"]}
    assert cells == {"abstain-all": "tie", "x": "below"} and not t["ok"]
    # every task scores the oracle exactly as doing nothing: the spec cannot discriminate
    zero = {"a": 0.0, "b": 0.0}
    assert discriminates({"oracle": zero, "stop-at-once": zero, "abstain-all": zero}) is False
    assert discriminates({"oracle": {"a": 1.0, "b": 0.0}, "abstain-all": zero}) is True
    assert discriminates({"oracle": zero}) is None  # nothing to compare with
    scores = {"s": {"oracle": 0.0, "abstain-all": 0.0, "x": -1.0}}
    t = verdict_table(scores, ["abstain-all", "x"], [], {"s": False})
    assert {c["verdict"] for r in t["rows"] for c in r["cells"].values()} == {"n/a"}
    assert not t["ok"] and t["counts"]["n/a"] == 2


def test_ablate_reports_a_states_only_spec_on_a_read_only_suite_as_not_applicable(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """Scored by final states alone, a read-only suite ties every do-nothing policy with the
    oracle: the verdict says so (n/a, never a pass); ``dysql_state`` scores read tasks by their
    outcome, so it discriminates there."""
    from clarisql.cli import main as cli_main

    tasks = _tasks(tmp_path, ("count", "names", "max", "poem", "where"))
    tf = save_tasks(tasks, tmp_path / "tasks.jsonl")
    states = tmp_path / "states_only.yaml"
    states.write_text("name: states_only\ncomponents:\n  state_match: 1.0\n")
    out = tmp_path / "abl"
    argv = ["ablate", "--suite", str(tf), "--out", str(out), "--no-probes", "--no-progress"]
    argv += ["--policies", "oracle", "stop-at-once", "abstain-all", "string-literal-sql"]
    argv += ["--rewards", str(states), "dysql_state"]
    assert cli_main(argv) == 0
    printed = capsys.readouterr().out
    assert "'states_only' is not applicable to this suite" in printed
    v = json.loads((out / "verdict.json").read_text())
    assert v["applicable"] == {"states_only": False, "dysql_state": True}
    assert not v["ok"]
    assert {r["cells"]["states_only"]["verdict"] for r in v["rows"]} == {"n/a"}
    assert "n/a" not in {r["cells"]["dysql_state"]["verdict"] for r in v["rows"]}
    cells = {r["probe"]: r["cells"]["dysql_state"]["verdict"] for r in v["rows"]}
    assert cells == {"abstain-all": "below", "stop-at-once": "below", "string-literal-sql": "below"}
    assert "**N/A**" in (out / "verdict.md").read_text()


def test_the_phi_reference_is_the_agent_that_declines_where_it_missed(tmp_path: Path) -> None:
    """TrustSQL: under φ_10 an agent that answers what it could not clarify loses to declining
    everything; the honest agent that reward trains declines where it missed, and beats it."""
    tasks = _tasks(tmp_path, ("from", "where", "select", "count", "names", "max", "poem"))
    env = _env(tmp_path, tasks)
    recs = {p: _records(env, p, tasks) for p in (*MISS, "abstain-all", "oracle")}
    scores = {
        s: {p: _mean(r, s) for p, r in recs.items()} for s in ("reliability_phi10", "outcome")
    }
    phi = scores["reliability_phi10"]
    assert phi["abstain-all"] > phi["oracle-miss:1"]  # the flag TrustSQL's design raises
    assert honest_reference(phi, MISS)[0] == "oracle-miss:1:abstain"
    assert phi["abstain-all"] < honest_reference(phi, MISS)[1]
    # where declining earns nothing more than a wrong answer, answering is at least as good
    out = scores["outcome"]
    assert out["oracle-miss:1"] >= out["oracle-miss:1:abstain"]
    assert make_policy("oracle-miss:0.1:abstain").name == "oracle-miss:0.1:abstain"
    with pytest.raises(ValueError, match="answer"):
        make_policy("oracle-miss:0.1:guess")


def test_the_search_finds_a_planted_reward_flaw(tmp_path: Path) -> None:
    """A reward that pays per question: the search finds a strategy above the honest reference
    and the verdict says ``above``; under ``default`` the best it finds stays below."""
    tasks = _tasks(tmp_path, ("from", "select", "count", "names", "poem"))
    env = _env(tmp_path, tasks)

    def play(policy):
        return _records(env, policy, tasks)

    refs = {p: play(p) for p in ("oracle", "oracle-miss:0.1", "oracle-miss:0.1:abstain")}
    flaw = load_reward_spec(
        {"name": "pays_questions", "components": {"outcome": 1, "clarification": 0.3}}
    )
    specs = [flaw, load_reward_spec("default")]
    res = search_strategies(play, specs, refs, seed=0, population=8, iterations=3, text=False)
    by = {r.spec: r for r in res}
    miss = ("oracle-miss:0.1", "oracle-miss:0.1:abstain")
    assert by["pays_questions"].best_score > honest_reference(by["pays_questions"].honest, miss)[1]
    assert by["pays_questions"].best.turns >= 2
    assert by["default"].best_score < honest_reference(by["default"].honest, miss)[1]
    scores = {r.spec: dict(r.honest) for r in res}
    t = verdict_table(scores, [], miss, {s: True for s in scores}, [r.to_dict() for r in res])
    row = t["rows"][-1]
    assert row["probe"].startswith("search")
    assert row["cells"]["pays_questions"]["verdict"] == "above"
    assert row["cells"]["default"]["verdict"] == "below"


def test_abstaining_on_a_surface_cue_ties_the_oracle_only_where_the_wording_leaks(
    tmp_path: Path,
) -> None:
    """A planted wording leak (only the unanswerable requests carry quotes): abstaining on
    quotes ties the oracle under φ_10 without telling answerable from unanswerable any other
    way; where an answerable request carries quotes too, the same cue loses."""
    tasks = _tasks(tmp_path, ("count", "names", "max", "poem", "future"))
    tasks[3].utterance = 'Write a poem called "Riverton".'
    tasks[4].utterance = 'Forecast the "2030" sale prices.'
    env = _env(tmp_path, tasks)
    cue = StrategyPolicy(Strategy(abstain_on="quoted"))
    oracle = _mean(_records(env, "oracle", tasks), "reliability_phi10")
    assert _mean(_records(env, cue, tasks), "reliability_phi10") == pytest.approx(oracle)
    # no cue fires on an unanswerable request: it is answered by its literal reading
    assert (
        _mean(
            _records(env, StrategyPolicy(Strategy(abstain_on="long", length=40)), tasks), "outcome"
        )
        < 1
    )
    tasks[0].utterance = 'How many "sales" are there?'
    env = _env(tmp_path, tasks)
    assert _mean(_records(env, cue, tasks), "reliability_phi10") < oracle


def test_most_frequent_and_trigram_guessers_catch_what_they_must(tmp_path: Path) -> None:
    """Not blind: the reading with the most rows among the plausible ones (not the first by
    rowid) is picked through the database, and played as a probe it solves that task."""
    import sqlite_utils

    from clarisql.envs.tasks import Label, Underspec
    from clarisql.policies.probes import most_frequent, trigram_nearest

    counted = [("Jade Tower North Block", 1), ("Jade Tower South Block", 3), ("Oak Plaza", 9)]
    assert most_frequent("Jade Tower", counted) == "Jade Tower South Block"
    assert most_frequent("Elm", counted) == "Oak Plaza"  # nothing plausible: the most rows
    assert most_frequent("Oak Plaza", counted) == "Oak Plaza"  # present: kept
    assert trigram_nearest("Jade Towr South", [v for v, _ in counted]) == "Jade Tower South Block"
    db = sqlite_utils.Database(tmp_path / "p.sqlite")
    names = ["Jade Tower North Block"] + ["Jade Tower South Block"] * 3 + ["Oak Plaza"]
    db["sales"].insert_all([{"id": i, "project": n, "price": i} for i, n in enumerate(names)])
    db.close()
    full = "Jade Tower South Block"
    t = Task(
        id="freq",
        db="p.sqlite",
        utterance="What did Jade Tower sell for?",
        category="where",
        gold_sql=f"SELECT price FROM sales WHERE project = '{full}'",
        underspecs=[Underspec(Label("not-exist", "Jade Tower", "project"), full)],
        metadata={"naive_sql": "SELECT price FROM sales WHERE project = 'Jade Tower'"},
    )
    env = _env(tmp_path, [t])
    assert run_episode(env, make_policy("most-frequent"), "freq").correct
    assert not run_episode(env, make_policy("first-match"), "freq").correct
    st = StrategyPolicy("labels=0,guess=frequent")
    assert run_episode(env, st, "freq").correct
    with pytest.raises(ValueError, match="key=value"):
        Strategy.parse("labels")


def test_the_search_starts_from_the_fixed_probes_of_its_family() -> None:
    """The anchors (no asking with each guess, intent only, one label per turn, cue words) are
    points of the box that decode to themselves, so the best found is never below them."""
    from clarisql.rollouts.search import ANCHORS, decode, encode

    assert {a.guess for a in ANCHORS} >= {"nearest", "first", "frequent", "trigram", "abstain"}
    assert all(decode(encode(a)) == a for a in ANCHORS)
    st = Strategy(labels=7, turns=3, text=2, guess="frequent", abstain_on="long", length=17)
    assert decode(encode(st)) == st


def test_another_draw_of_the_misses_misses_other_labels() -> None:
    # oracle-miss:RATE misses labels by a hash of task and label; a salt is another draw of the
    # same rate (gate_guess averages draws into the reference's expected score)
    import hashlib
    from types import SimpleNamespace

    from clarisql.policies.probes import HonestMissPolicy, _keep

    tasks = [SimpleNamespace(id=f"t{i}") for i in range(400)]
    one = [_keep(t, "intent", 0.1) for t in tasks]
    two = [_keep(t, "intent", 0.1, salt="1|") for t in tasks]
    assert 20 <= one.count(False) <= 60 and 20 <= two.count(False) <= 60
    assert one != two
    # the default draw is the one the reference always made
    h = hashlib.sha256(b"t7|intent").digest()
    assert one[7] is (int.from_bytes(h[:8], "big") / 2**64 >= 0.1)
    assert HonestMissPolicy(0.1, salt="1|").salt == "1|"
