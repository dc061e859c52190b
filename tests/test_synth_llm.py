"""The LLM path of `clarisql synth` against the local fake OpenAI-compatible server.

Real SQLite throughout: the coder's SQL is executed by the Verifier; the fake server only
plays the model (coder, question writer, reviewer, pair scorer).
"""

from __future__ import annotations

import hashlib
import json
import re
import threading
from pathlib import Path

import pytest

from clarisql.envs.synth.pipeline import SynthConfig, synthesize
from clarisql.envs.synth.types import SynthError
from clarisql.envs.tasks import load_tasks
from clarisql.rollouts.runner import RunConfig, run_eval

from ._fake_openai import HANG, FakeOpenAI, completion
from ._synth_lake import write_lake


class Model:
    """Plays the four roles; the first request fails (500) to exercise retries."""

    def __init__(self) -> None:
        self.reviews = 0
        self.coder_calls = 0

    def __call__(self, body: dict, n: int) -> tuple[int, bytes, float]:
        if n == 1:  # the first request after the probe: a server error, retried by the client
            return 500, b'{"error": {"message": "overloaded"}}', 0.0
        system = body["messages"][0]["content"]
        user = body["messages"][1]["content"]
        if system.startswith("Reply with OK"):
            text = "OK"
        elif system.startswith("Rate"):
            text = "8"
        elif system.startswith("You write one SQLite"):
            self.coder_calls += 1
            k = int(re.search(r"variant (\d+)", user).group(1))
            if self.coder_calls == 1:
                text = 'SELECT "nope" FROM "orders"'
            else:  # after a reviewer's request the coder changes its query
                extra = ' AND "order_id" < 1000' if "reviewer asked" in user else ""
                text = f'```sql\nSELECT COUNT(*) FROM "orders" WHERE "order_id" > {k}{extra}\n```'
        elif system.startswith("You write the natural-language"):
            k = re.search(r"> (\d+)", user).group(1)
            text = f"How many orders have an order id above {k}?"
        else:
            self.reviews += 1
            text = "REVISE: say 'orders'" if self.reviews == 1 else "ACCEPT"
        reply = completion(text)
        reply["usage"] = {"prompt_tokens": 11, "completion_tokens": 3, "total_tokens": 14}
        return 200, json.dumps(reply).encode(), 0.0


@pytest.fixture(scope="module")
def csv_lake(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return write_lake(tmp_path_factory.mktemp("lake") / "csv")


def test_llm_loop_retries_rejections_tokens_cache(csv_lake: Path, tmp_path: Path) -> None:
    model = Model()
    mix = {"well-specified": 1.0}
    with FakeOpenAI(model) as srv:
        cfg = SynthConfig(
            sources=[csv_lake],
            out=tmp_path / "a",
            tasks=4,
            mixture=mix,
            llm=f"openai:fake@{srv.url}",
            llm_cache_dir=tmp_path / "cache",
        )
        res = synthesize(cfg)
        n_first = len(srv.requests)
        assert srv.requests[1] == srv.requests[2]  # the 500 was retried with the same request
        tasks = load_tasks(res.tasks_path)
        llm_tasks = [t for t in tasks if t.metadata.get("source") == "llm"]
        assert len(tasks) == 4 and len(llm_tasks) == 4
        # no clock in tasks.jsonl: the generation time is in SUITE.md
        assert all(t.metadata["tokens"] > 0 for t in llm_tasks)
        assert not any("generation_time_s" in t.metadata for t in tasks)
        assert "s each on average" in res.card_path.read_text()
        first = next(t for t in llm_tasks if t.metadata["rejected"])
        assert first.metadata["rejected"][0].startswith("no such column")
        assert max(t.metadata["review_count"] for t in llm_tasks) == 2  # one REVISE, then ACCEPT
        assert all(t.metadata["review_count"] <= 3 for t in llm_tasks)
        assert "LLM openai:fake" in " ".join(res.notes) and "prompt" in res.card_path.read_text()
        # the pair scorer ran (score 8 >= threshold 6 keeps the pairs, with the LLM's score)
        assert res.lake.joins and all(j.score == 8.0 for j in res.lake.joins)
        # a second run with the same cache sends only the probe
        res2 = synthesize(SynthConfig(**{**cfg.__dict__, "out": tmp_path / "b"}))
        assert len(srv.requests) == n_first + 1
        assert res2.tasks_path.read_bytes().count(b'"source": "llm"') == 4
    m = run_eval(
        RunConfig(suite=str(res.tasks_path), policy="oracle"), tmp_path / "run", progress=False
    )
    assert m.metrics["pass@1"] == 1.0


class Writers:
    """Plays the coder, both writers and both reviewers, each reply decided by the request's own
    text (so the suite cannot depend on the order requests arrive in, or on threads).

    The question writer leaks the hidden value on its first try whenever the brief lists one
    (the pipeline's checks must send it back), and marks every request it writes ("Hi! ...",
    "Hi again! ..." after a reviewer's REVISE): a task of any category that bypassed the writer
    has no mark. The reviewer rejects about one request in five and asks for a revision of
    another fifth, by a hash of the request: a rejected or unrevised request in the suite means
    the reviewer was ignored.
    """

    def __init__(self, score: str = "8") -> None:
        self.score = score
        self.lock = threading.Lock()
        self.rejected: list[str] = []
        self.revised: list[str] = []
        self.leaks = 0
        self.written = 0

    def __call__(self, body: dict, n: int) -> tuple[int, bytes, float]:
        system = body["messages"][0]["content"]
        user = body["messages"][1]["content"]
        if system.startswith("Reply with OK"):
            text = "OK"
        elif system.startswith("Rate"):
            text = self.score
        elif system.startswith("You write one SQLite"):
            k = int(re.search(r"variant (\d+)", user).group(1))
            # the coder gives 4 drafts: template drafts fill in (and are reviewed)
            text = f'SELECT COUNT(*) FROM "orders" WHERE "order_id" > {k}'
            if k > 4:
                text = 'SELECT "nope" FROM "orders"'
        elif system.startswith("You write the natural-language"):
            k = re.search(r"> (\d+)", user).group(1)
            text = f"How many orders have an order id above {k}?"
        elif system.startswith("You review a text-to-SQL pair"):
            text = "ACCEPT"
        elif system.startswith("You rewrite a database request"):
            draft = re.search(r"^Draft: (.*)$", user, re.M).group(1)
            hide = re.search(r'^Never say: "([^"]*)"', user, re.M)
            feedback = re.search(r"^Feedback on your last request: (.*)$", user, re.M)
            with self.lock:
                self.written += 1
                if hide and not feedback:
                    self.leaks += 1
                    text = f"Hi! {draft} I mean {hide.group(1)}."
                elif feedback and "friendlier" in feedback.group(1):
                    text = f"Hi again! {draft}"
                else:
                    text = f"Hi! {draft}"
        elif system.startswith("You review one synthesized"):
            request = re.search(r"^Request: (.*)$", user, re.M).group(1)
            h = int(hashlib.sha256(request.encode()).hexdigest(), 16) % 5
            with self.lock:
                if request.startswith("Hi again!") or h > 1:
                    text = "ACCEPT"
                elif h == 0:
                    self.rejected.append(request)
                    text = "REJECT: nobody would ask this"
                else:
                    self.revised.append(request)
                    text = "REVISE: make it friendlier"
        else:
            return 400, b'{"error": {"message": "unknown role"}}', 0.0
        reply = completion(text)
        reply["usage"] = {"prompt_tokens": 5, "completion_tokens": 2, "total_tokens": 7}
        return 200, json.dumps(reply).encode(), 0.0


def test_every_question_goes_through_the_writer_and_the_reviewer(
    csv_lake: Path, tmp_path: Path
) -> None:
    model = Writers()
    with FakeOpenAI(model, max_requests=5000) as srv:
        cfg = SynthConfig(
            sources=[csv_lake],
            out=tmp_path / "a",
            tasks=48,
            seed=1,
            llm=f"openai:fake@{srv.url}",
            llm_cache_dir=tmp_path / "cache",
        )
        res = synthesize(cfg)
        rejected = len(model.rejected)
        # the same suite on one thread and without the cache: replies depend on the text only
        fresh = {"out": tmp_path / "b", "llm_cache_dir": tmp_path / "c2", "llm_workers": 1}
        one = synthesize(SynthConfig(**{**cfg.__dict__, **fresh}))
    assert one.tasks_path.read_bytes() == res.tasks_path.read_bytes()
    tasks = load_tasks(res.tasks_path)
    assert len(tasks) == 48 and res.made == res.wanted, (res.made, res.shortfalls)
    groups = {t.category.split(":")[0] for t in tasks}
    assert {"well-specified", "unanswerable", "write"} <= groups
    assert groups & {"select", "from", "where", "mixed"}
    by_coder = 0
    for t in tasks:
        if t.metadata.get("source") == "llm":  # written and reviewed in the coder's loop
            by_coder += 1
            assert t.metadata["review_count"] >= 1
            continue
        # every other task, whatever its category or layer, was written by the writer ...
        assert t.utterance.startswith(("Hi! ", "Hi again! ")), (t.category, t.utterance)
        review = t.metadata["llm_review"]
        assert review["reviews"] >= 1 and review["draft"] in t.utterance
        # ... and what the reviewer rejected or asked to revise is not in the suite
        assert t.utterance not in model.rejected and t.utterance not in model.revised
        # the writer's leaks were caught: no hidden clarification value is said
        for u in t.underspecs:
            if u.label.kind != "intent" and u.value not in review["draft"]:
                assert u.value.casefold() not in t.utterance.casefold(), t.utterance
        if t.instruction:  # the simulated user's instruction quotes the request as written now
            assert t.utterance in t.instruction
    assert 0 < by_coder < sum(t.category == "well-specified" for t in tasks)
    assert model.rejected and model.revised and model.leaks
    assert any(t.utterance.startswith("Hi again! ") for t in tasks)
    card = res.card_path.read_text()
    assert f"{rejected} rejected" in card, card
    assert "checks failed" in card
    for cat in {t.category for t in tasks}:
        assert f"LLM review, {cat}:" in card or cat == "well-specified" and by_coder
    # the suite still plays: the oracle solves every task
    m = run_eval(
        RunConfig(suite=str(res.tasks_path), policy="oracle"), tmp_path / "run", progress=False
    )
    assert m.metrics["pass@1"] == 1.0


def test_llm_threshold_drops_low_scored_pairs(csv_lake: Path, tmp_path: Path) -> None:
    with FakeOpenAI(Writers(score="2"), max_requests=5000) as srv:
        res = synthesize(
            SynthConfig(sources=[csv_lake], out=tmp_path, tasks=5, llm=f"openai:fake@{srv.url}")
        )
    assert res.lake.joins == () and res.lake.unions == ()
    assert len(load_tasks(res.tasks_path)) == 5


def test_an_endpoint_that_fails_mid_run_stops_with_one_line(csv_lake: Path, tmp_path: Path) -> None:
    """No suite half written by the LLM and half offline: the error names the cache."""
    model = Writers()

    def dies(body: dict, n: int) -> tuple[int, bytes, float]:
        if body["messages"][0]["content"].startswith("You review one synthesized"):
            return 400, b'{"error": {"message": "bad request"}}', 0.0
        return model(body, n)

    with FakeOpenAI(dies, max_requests=5000) as srv:
        cfg = SynthConfig(
            sources=[csv_lake], out=tmp_path / "o", tasks=10, llm=f"openai:fake@{srv.url}"
        )
        with pytest.raises(SynthError) as e:
            synthesize(cfg)
    msg = str(e.value)
    assert "\n" not in msg and "bad request" in msg and "run again to resume" in msg
    assert not (tmp_path / "o" / "tasks.jsonl").exists()


def test_llm_endpoint_down_is_an_error(csv_lake: Path, tmp_path: Path) -> None:
    srv = FakeOpenAI()
    url = srv.url
    srv.close()  # nothing listens there any more
    with pytest.raises(SynthError, match="leave out --llm"):
        synthesize(
            SynthConfig(
                sources=[csv_lake], out=tmp_path, tasks=5, llm=f"openai:fake@{url}", llm_retries=0
            )
        )


def test_a_category_the_reviewer_thins_out_is_refilled_from_its_layer(
    csv_lake: Path, tmp_path: Path
) -> None:
    """Past the spares, the layer is asked for more candidates (deterministically)."""
    model = Writers()

    def strict(body: dict, n: int) -> tuple[int, bytes, float]:
        user = body["messages"][-1]["content"]
        if body["messages"][0]["content"].startswith("You review one synthesized") and (
            "underspecified" in user
        ):
            request = re.search(r"^Request: (.*)$", user, re.M).group(1)
            if int(hashlib.sha256(request.encode()).hexdigest(), 16) % 3:  # 2 in 3 rejected
                with model.lock:
                    model.rejected.append(request)
                return 200, json.dumps(completion("REJECT: no")).encode(), 0.0
        return model(body, n)

    with FakeOpenAI(strict, max_requests=5000) as srv:
        cfg = SynthConfig(
            sources=[csv_lake], out=tmp_path / "a", tasks=40, seed=4, llm=f"openai:fake@{srv.url}"
        )
        res = synthesize(cfg)
    assert res.made["clarify"] == res.wanted["clarify"], res.shortfalls
    clarify = [t for t in load_tasks(res.tasks_path) if t.underspecs and not t.writable]
    assert len(clarify) >= res.wanted["clarify"]
    assert not any(t.utterance in model.rejected for t in clarify)
    # (without the refill, 1 of 8: the spares alone do not cover a reviewer this strict)


def test_an_endpoint_that_never_answers_is_an_error_too(
    csv_lake: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A server that accepts and hangs fails the probe at its deadline, before any work."""
    from clarisql.envs.synth import llm

    monkeypatch.setattr(llm, "PROBE_S", 0.5)
    with FakeOpenAI(lambda body, n: (HANG, b"", 30.0)) as srv:
        cfg = SynthConfig(sources=[csv_lake], out=tmp_path / "o", llm=f"openai:m@{srv.url}")
        with pytest.raises(SynthError, match="deadline.*leave out --llm"):
            synthesize(cfg)
    assert not (tmp_path / "o" / "lake.sqlite").exists()
