"""Action parsing is bounded by counts, not by luck: caps refuse before the work is done."""

from __future__ import annotations

import json

import pytest

from clarisql.envs import actions
from clarisql.envs.actions import (
    MAX_JSON_TRIES,
    MAX_LABELS,
    MAX_QUERY_CHARS,
    MAX_REASON_CHARS,
    ActionError,
    parse_action,
)


class _CountingDecoder(json.JSONDecoder):
    calls = 0

    def raw_decode(self, s, idx=0):  # type: ignore[override]
        type(self).calls += 1
        return super().raw_decode(s, idx)


@pytest.mark.parametrize(
    "text",
    [
        ("```json\n" + "{" * 64 + "\n```\n") * 64,  # many fences, many candidates each
        "<tool_call>" + '{"a": [' * 64 + "x" * 1000,
        ("{" * 64 + "```") * 64 + " {" * 5000,
    ],
)
def test_json_attempts_per_text_are_capped(text: str, monkeypatch) -> None:
    _CountingDecoder.calls = 0
    monkeypatch.setattr(actions.json, "JSONDecoder", _CountingDecoder)
    with pytest.raises(ActionError):
        parse_action(text)
    assert 0 < _CountingDecoder.calls <= MAX_JSON_TRIES


def test_too_many_labels_refused_before_any_is_parsed(monkeypatch) -> None:
    parsed = []
    real = actions.Label.parse
    monkeypatch.setattr(actions.Label, "parse", staticmethod(lambda x: parsed.append(x) or real(x)))
    many = {"type": "clarify", "question": "q", "labels": [["a", "city", "Missing"]] * 400_000}
    with pytest.raises(ActionError, match=f"at most {MAX_LABELS} labels"):
        parse_action(many)
    assert parsed == []
    ok = {"type": "clarify", "question": "q", "labels": [["a", "city", "Missing"]] * MAX_LABELS}
    assert len(parse_action(ok).labels) == MAX_LABELS


def test_long_query_and_reason_refused() -> None:
    with pytest.raises(ActionError, match="query is longer"):
        parse_action({"type": "search_tables", "query": "w " * MAX_QUERY_CHARS})
    with pytest.raises(ActionError, match="reason is longer"):
        parse_action({"type": "abstain", "reason": "r" * (MAX_REASON_CHARS + 1)})
    assert parse_action({"type": "abstain", "reason": "r" * MAX_REASON_CHARS}).type == "abstain"


def test_refused_long_sql_is_not_echoed_back_whole() -> None:
    from clarisql.envs.env import ClarifySQLEnv

    env = ClarifySQLEnv("builtin")
    env.reset(seed=0, options={"task_index": 0})
    sql = "SELECT '" + "x" * 1_000_000 + "'"
    obs, _, _, _, info = env.step({"type": "execute", "sql": sql})
    assert "longer than" in info["error"]
    assert len(obs["dialogue"]) < 5_000 and len(obs["last"]) < 1_000
    assert f"{len(sql)} characters" in obs["dialogue"]
    env.close()
