"""The shared chat client against misbehaving local servers (127.0.0.1, bounded): a whole-request
deadline, odd replies, and the circuit breaker shared across episodes."""

from __future__ import annotations

import json
import time

import pytest

from clarisql.envs.endpoints.chat_http import (
    ChatClient,
    ChatHTTPError,
    ChatReplyError,
    CircuitBreaker,
    CircuitOpenError,
)
from clarisql.envs.simulators.instruction import InstructionSimulator
from clarisql.envs.tasks import Task
from clarisql.policies.openai_compat import EndpointError, OpenAIPolicy

from ._fake_openai import DRIP, HANG, FakeOpenAI, completion, raw_reply

BODY = {"model": "m", "messages": [{"role": "user", "content": "hi"}]}


def client(srv: FakeOpenAI, **kw) -> ChatClient:
    kw.setdefault("api_key_env", None)
    kw.setdefault("breaker", CircuitBreaker())
    return ChatClient(srv.url + "/chat/completions", **kw)


def _elapsed(fn) -> float:
    t0 = time.monotonic()
    fn()
    return time.monotonic() - t0


@pytest.mark.parametrize("what", ["headers", "body"])
def test_dripping_server_is_cut_at_the_deadline(what: str) -> None:
    reply = raw_reply(completion("x" * 200))
    with FakeOpenAI(lambda body, n: (DRIP, reply, 0.05)) as srv:  # 20 bytes/s: never in time
        if what == "body":
            srv.drip_from = reply.index(b"\r\n\r\n") + 4
        c = client(srv, timeout_s=0.8, max_retries=1, backoff_s=0.0)
        t = _elapsed(lambda: pytest.raises(ChatHTTPError, c.complete, BODY))
        # a per-read timeout never fires. A dripping body is cut 0.8 s into each attempt; dripping
        # headers are cut by the call's deadline (both attempts, + 0.5 s); + slack for a busy CI
        limit = 2 * 0.8 + 0.3 if what == "body" else c.deadline_s
        assert t < limit + 0.5, (t, limit)
        if what == "body":
            assert c.last_call.attempts == 2


def test_hanging_server_costs_one_deadline_per_call_then_breaker_opens() -> None:
    with FakeOpenAI(lambda body, n: (HANG, b"", 30.0)) as srv:
        breaker = CircuitBreaker(fail_max=2, reset_s=60)
        c = client(srv, timeout_s=0.4, max_retries=0, breaker=breaker)
        for _ in range(2):
            t = _elapsed(lambda: pytest.raises(ChatHTTPError, c.complete, BODY))
            assert 0.3 < t < 1.5, t
        assert breaker.state == "open"
        t = _elapsed(lambda: pytest.raises(CircuitOpenError, c.complete, BODY))
        assert t < 0.1 and len(srv.requests) == 2


def test_half_open_trial_is_one_attempt_and_success_closes() -> None:
    with FakeOpenAI() as srv:
        srv.script = [(503, {"error": "down"}, 0.0)] * 4 + [(200, {"reply": "back"}, 0.0)]
        breaker = CircuitBreaker(fail_max=1, reset_s=0.2)
        c = client(srv, timeout_s=2, max_retries=2, backoff_s=0.0, breaker=breaker)
        pytest.raises(ChatHTTPError, c.complete, BODY)  # 3 attempts, then open
        assert len(srv.requests) == 3 and breaker.state == "open"
        pytest.raises(CircuitOpenError, c.complete, BODY)
        time.sleep(0.25)
        pytest.raises(ChatHTTPError, c.complete, BODY)  # the trial: one attempt, fails
        assert len(srv.requests) == 4 and breaker.state == "open"
        time.sleep(0.25)
        assert c.complete(BODY)["choices"][0]["message"]["content"] == "back"
        assert breaker.state == "closed"


@pytest.mark.parametrize(
    "payload",
    [
        b'{"choices": [{"message": {"content": ' + b"9" * 5000 + b"}}]}",
        b'{"choices": ' + b"[" * 100_000 + b"]" * 100_000 + b"}",
        b"\xff\xfe not utf-8",
        b"[1, 2]",
    ],
    ids=["huge-int", "deep-nesting", "not-utf8", "not-object"],
)
def test_odd_replies_are_reply_errors(payload: bytes) -> None:
    with FakeOpenAI() as srv:
        srv.script = [(200, payload, 0.0)]
        c = client(srv, timeout_s=2, max_retries=2)
        with pytest.raises(ChatReplyError):
            c.complete(BODY)
        assert len(srv.requests) == 1  # a 2xx reply is not retried


def test_policy_turns_odd_replies_into_invalid_actions() -> None:
    deep_args = json.dumps({"sql": "x"})[:-1] + ', "n": ' + "[" * 50_000 + "]" * 50_000 + "}"
    with FakeOpenAI() as srv:
        srv.script = [
            (200, b'{"choices": [{"message": {"content": ' + b"9" * 5000 + b"}}]}", 0.0),
            (
                200,
                {
                    "choices": [
                        {
                            "message": {
                                "role": "assistant",
                                "content": None,
                                "tool_calls": [
                                    {
                                        "id": "c1",
                                        "type": "function",
                                        "function": {"name": "execute_sql", "arguments": deep_args},
                                    }
                                ],
                            }
                        }
                    ]
                },
                0.0,
            ),
        ]
        pol = OpenAIPolicy(f"m@{srv.url}", tools=True, max_retries=0, api_key_env="NO_SUCH_KEY")
        info = {"messages": [{"role": "system", "content": "s"}, {"role": "user", "content": "u"}]}
        pol.reset({"last": "u"}, info)
        first = pol.act({"last": "u"}, info)
        assert "unusable reply" in first
        second = pol.act({"last": "invalid"}, {"action": None})
        assert isinstance(second, str)
        assert pol.stats["unusable_replies"] >= 1


def test_policy_fails_fast_once_the_breaker_is_open() -> None:
    with FakeOpenAI(lambda body, n: (HANG, b"", 30.0)) as srv:
        pol = OpenAIPolicy(f"m@{srv.url}", timeout_s=0.3, max_retries=0, api_key_env="NO_SUCH_KEY")
        pol.client.breaker.fail_max = 2
        pol.reset({"last": "u"}, {"messages": [{"role": "user", "content": "u"}]})
        for _ in range(2):
            with pytest.raises(EndpointError, match="failed after 1 tries"):
                pol.act({"last": "u"}, {})
        t0 = time.monotonic()
        with pytest.raises(EndpointError, match="circuit open"):
            pol.act({"last": "u"}, {})
        assert time.monotonic() - t0 < 0.1


INSTR = "You are Ana. You want to know your invoice total for invoice 7."


def test_hanging_simulator_endpoint_falls_back_with_bounded_cost_per_episode() -> None:
    """After the breaker opens, each episode costs at most one request deadline (here: none
    until the half-open window), and every episode is answered by the offline user."""
    with FakeOpenAI(lambda body, n: (HANG, b"", 30.0)) as srv:
        sims = [
            InstructionSimulator(
                "openai", model="u", base_url=srv.url, timeout_s=0.4, max_retries=1, backoff_s=0.0
            )
            for _ in range(6)  # one simulator per episode, as separate env instances would have
        ]
        task = Task(
            id="t",
            db="x.sqlite",
            utterance=INSTR,
            instruction=INSTR,
            writable=True,
            gold_actions=["x"],
        )
        costs = []
        for sim in sims:
            t0 = time.monotonic()
            sim.reset(task, seed=0)
            costs.append(time.monotonic() - t0)
            assert sim.reset_info["fallback"] and sim.reset_info["backend"] == "offline"
        # counted, not timed: three calls of two attempts each reached the server, then the open
        # breaker answered the rest without a request; none waited the 30 s hang out
        assert all(c < 25.0 for c in costs), costs
        assert "circuit open" in sims[-1].reset_info["fallback_reason"]
        assert len(srv.requests) == 6


def test_run_completes_with_a_hanging_simulator_and_reports_the_fallback(tmp_path) -> None:
    from clarisql.envs.tasks import save_tasks
    from clarisql.rollouts.runner import RunConfig, run_eval

    from .conftest import build_small_db, small_task

    build_small_db(tmp_path / "small.sqlite")
    kinds = ["from", "where", "select", "count", "names", "max"]
    save_tasks([small_task(k, f"t/{k}") for k in kinds], tmp_path / "tasks.jsonl")
    with FakeOpenAI(lambda body, n: (HANG, b"", 30.0)) as srv:
        config = RunConfig(
            suite=str(tmp_path / "tasks.jsonl"),
            policy="oracle",
            simulator="instruction",
            simulator_kwargs={
                "backend": "openai",
                "model": "u",
                "base_url": srv.url,
                "timeout_s": 0.3,
                "max_retries": 0,
            },
        )
        t0 = time.monotonic()
        out = run_eval(config, tmp_path / "run", progress=False)
        elapsed = time.monotonic() - t0
    assert out.complete and out.n_done == len(kinds)
    # three calls cost one deadline each, then the breaker answers at once: counted in requests
    # (no request waited the hang out: that alone would take 30 s; a wide margin, not a timing)
    assert len(srv.requests) == 3
    assert elapsed < 25.0, elapsed
    report = (tmp_path / "run" / "report.md").read_text()
    assert "User simulator fallback" in report and "circuit open" in report


# --- replies read with a byte cap; Retry-After honoured and reported ------------------------------
def _raw(status: int, body: bytes, headers: str = "") -> bytes:
    return (
        f"HTTP/1.1 {status} X\r\nContent-Type: application/json\r\n{headers}"
        f"Content-Length: {len(body)}\r\nConnection: close\r\n\r\n"
    ).encode() + body


def test_a_huge_reply_is_cut_at_the_byte_cap_and_not_retried() -> None:
    big = json.dumps(completion("x" * (8 << 20))).encode()  # 8 MB
    with FakeOpenAI() as srv:
        srv.script = [(-1, _raw(200, big), 0.0)]
        c = client(srv, max_reply_bytes=1 << 20, max_retries=3, backoff_s=0.0)
        with pytest.raises(ChatReplyError, match="larger than 1048576 bytes"):
            c.complete(BODY)
        assert c.last_call.attempts == 1 and len(srv.requests) == 1
        srv.script = [(200, completion("fine"), 0.0)]
        assert c.complete(BODY)["choices"][0]["message"]["content"] == "fine"


def test_retry_after_longer_than_the_call_may_wait_is_reported_not_waited() -> None:
    err = json.dumps({"error": {"message": "slow down"}}).encode()
    with FakeOpenAI() as srv:
        srv.script = [(-1, _raw(429, err, "Retry-After: 30\r\n"), 0.0)]
        slept: list[float] = []
        c = client(srv, max_retries=2, timeout_s=5.0, deadline_s=10.0, sleep=slept.append)
        with pytest.raises(ChatHTTPError) as info:
            c.complete(BODY)
        e = info.value
        assert e.status == 429 and e.retry_after == 30 and "Retry-After" in str(e)
        assert "deadline" not in str(e) and slept == [] and c.last_call.attempts == 1
        # a short Retry-After is waited (the fake sleep records it) and the retry succeeds
        srv.script = [
            (-1, _raw(429, err, "Retry-After: 2\r\n"), 0.0),
            (200, completion("ok"), 0.0),
        ]
        srv.requests.clear()
        assert c.complete(BODY)["choices"][0]["message"]["content"] == "ok"
        assert slept == [2.0]
