"""Task schema round trips and the tolerant action parser."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from clarisql.envs.actions import Action, ActionError, parse_action
from clarisql.envs.tasks import Label, Task, TaskFormatError, Underspec, load_tasks, save_tasks


def sample_tasks() -> list[Task]:
    return [
        Task(
            id="a",
            db="x.sqlite",
            utterance="Sales in 区域?",
            gold_sql="SELECT 1",
            category="mixed",
            gold_answer=[[1, "二"], [None, 2.5]],
            gold_ordered=True,
            underspecs=[
                Underspec(Label("intent"), "I want the price"),
                Underspec(Label("Missing", "", "year"), "2020"),
                Underspec(Label("not-exist", "ACME", "enterprise"), "ACME Holdings Co., Ltd."),
            ],
            metadata={"naive_sql": "SELECT 2", "nested": {"k": [1, 2]}},
        ),
        Task(
            id="b",
            db="x.sqlite",
            utterance="Add it",
            writable=True,
            gold_actions=["INSERT INTO t VALUES (1)"],
            gold_digest="abc",
            category="write",
            instruction="You are Bob.",
        ),
        Task(
            id="c",
            db="x.sqlite",
            utterance="Poem?",
            answerable=False,
            unanswerable_kind="non-sql",
            category="unanswerable:non-sql",
        ),
    ]


def test_jsonl_round_trip_is_lossless(tmp_path: Path) -> None:
    tasks = sample_tasks()
    p = save_tasks(tasks, tmp_path / "t.jsonl")
    loaded = load_tasks(p)
    assert loaded == tasks
    q = save_tasks(loaded, tmp_path / "u.jsonl")
    assert p.read_bytes() == q.read_bytes()
    assert all(Task.from_dict(t.to_dict()) == t for t in tasks)
    assert loaded[0].intent_underspecified and loaded[0].gold_clauses == {"select", "from", "where"}


@pytest.mark.parametrize(
    "line,match",
    [
        ("{not json", "not valid JSON"),
        ('{"id": "x", "db": "d"}', "missing field 'utterance'"),
        ('{"id": "x", "db": "d", "utterance": "u", "gold_sql": "S", "colour": 1}', "unknown field"),
        ('{"id": "x", "db": "d", "utterance": "u", "answerable": false}', "unanswerable_kind"),
        ('{"id": "x", "db": "d", "utterance": "u"}', "needs 'gold_sql'"),
        (
            '{"id": "x", "db": "d", "utterance": "u", "gold_sql": "S", "underspecs": [{"label": ["a", "b", "Wrong"], "value": "v"}]}',
            "label kind",
        ),
        (
            '{"id": "x", "db": "d", "utterance": "u", "gold_sql": "S", "schema_version": 99}',
            "schema_version",
        ),
        ("[1, 2]", "JSON object"),
    ],
)
def test_broken_task_files_name_line_and_problem(tmp_path: Path, line: str, match: str) -> None:
    p = tmp_path / "bad.jsonl"
    good = json.dumps(sample_tasks()[2].to_dict())
    p.write_text(good + "\n\n" + line + "\n")
    with pytest.raises(TaskFormatError, match=match) as e:
        load_tasks(p)
    assert "bad.jsonl:3" in str(e.value)


def test_duplicate_ids_and_missing_file(tmp_path: Path) -> None:
    t = sample_tasks()[2]
    p = save_tasks([t, t], tmp_path / "d.jsonl")
    with pytest.raises(TaskFormatError, match="duplicate"):
        load_tasks(p)
    with pytest.raises(TaskFormatError, match="cannot read"):
        load_tasks(tmp_path / "none.jsonl")


@pytest.mark.parametrize(
    "raw,expected",
    [
        ({"type": "execute", "sql": "SELECT 1"}, Action("execute", sql="SELECT 1")),
        ({"type": "stop"}, Action("stop")),
        ({"type": "stop", "sql": "  "}, Action("stop")),
        ({"type": "abstain", "reason": "no"}, Action("abstain", reason="no")),
        (
            {"type": "clarify", "question": "Which year?", "labels": [["", "year", "Missing"]]},
            Action("clarify", question="Which year?", labels=[Label("Missing", "", "year")]),
        ),
        (
            {"type": "clarify", "question": "?", "labels": ["", "year", "missing"]},
            Action("clarify", question="?", labels=[Label("Missing", "", "year")]),
        ),
        (
            {"type": "clarify", "question": "?", "labels": "intent"},
            Action("clarify", question="?", labels=[Label("intent")]),
        ),
        (
            '<tool_call>{"name": "execute_sql", "arguments": {"sql": "SELECT 2"}}</tool_call>',
            Action("execute", sql="SELECT 2"),
        ),
        (
            '<tool_call>\n{"name": "ask_user", "arguments": {"question": "Q", "labels": [{"kind": "not-exist", "content": "X", "slot": "project"}]}}\n</tool_call>',
            Action("clarify", question="Q", labels=[Label("not-exist", "X", "project")]),
        ),
        (
            '<tool_call>{"name": "stop", "arguments": "{\\"sql\\": \\"SELECT 3\\"}"}',
            Action("stop", sql="SELECT 3"),
        ),
        (
            'I think so.\n```json\n{"type": "abstain", "reason": "r"}\n```',
            Action("abstain", reason="r"),
        ),
        ('{"type": "submit", "sql": "SELECT 4"}', Action("stop", sql="SELECT 4")),
        ("Here:\n```sql\nSELECT 5\n```", Action("execute", sql="SELECT 5")),
    ],
)
def test_parse_action(raw, expected: Action) -> None:
    assert parse_action(raw) == expected


def test_canonical_text_round_trips() -> None:
    for a in (
        Action("execute", sql="SELECT 'a' || \"b\""),
        Action("stop"),
        Action("stop", sql="SELECT 1"),
        Action("abstain", reason="x"),
        Action("clarify", question="Q?", labels=[Label("intent"), Label("Error", "Nrth", "city")]),
    ):
        assert parse_action(a.to_text()) == a


@pytest.mark.parametrize(
    "raw,match",
    [
        ("", "empty"),
        ("hello", "could not find"),
        ({"type": "dance"}, "unknown action type"),
        (3, "dict or text"),
        ({"type": "execute"}, "'sql' must be"),
        ({"type": "clarify"}, "give a 'question'"),
        ({"type": "clarify", "question": "?", "labels": [["a", "b", "c"]]}, "label kind"),
        ("<tool_call>nope</tool_call>", "JSON object"),
    ],
)
def test_parse_errors_are_readable(raw, match: str) -> None:
    with pytest.raises(ActionError, match=match):
        parse_action(raw)
