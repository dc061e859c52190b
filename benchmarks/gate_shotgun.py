"""Shotgun clarification against the gate: how often does one over-broad turn reveal every gold value?

    python benchmarks/gate_shotgun.py [SUITE ...] [--data-odutqa DIR] [--mapper lexical|offline]

SUITE is ``builtin``, ``odutqa``, ``dysql`` or a tasks.jsonl path (a synthesized suite). For every
underspecified task it plays, straight against the suite's Fixed-mode simulator (no episode, no
scoring: only what the replies reveal), policies that never see the gold:

- ``label-shotgun``: one clarify listing ``intent``, every slot as Missing, and every span of the
  request x every slot x {Error, Unmatch, not-exist} (slots: the ODUTQA-MDC slots and the schema's
  column names; spans: quoted strings, capitalised runs, numbers, word n-grams up to 4 words, and for
  Chinese every 2-8 character run);
- ``text-shotgun``: free-text turns "Which city, district and year do you mean?", "What exactly
  do you want to know?", "What do you mean by 'A', 'B', 'C'?" over the same spans, and (English)
  "Which COL1, COL2, ... do you mean?" over every column name;
- ``text-shotgun-1``: the same three questions as one message;
- ``label-guess``: within the bounds, ``intent`` + Missing year + Missing city on every task (what
  a guess that the bound allows still gets; unneeded labels are the reward's to charge);
- ``label-sweep-1``: one label per turn over 20 turns, in the label shotgun's order;
- ``text-kinds``: per named value, one question stating both problems ("does not match the
  data ... What is the full name of ...?");
- ``text-kind-sweep``: every named value asked as another value, then as a full name;
- ``text-guess``: within every per-turn bound, an anchored intent question, one question per
  named value with the problem its surface suggests (numbers: another value; names: the full
  name), then "Which year?" (what a per-turn gate cannot refuse; see ``gate_guess.py``);
- ``text-sweep``: one aspect per turn over 20 turns: the catalog slots, then every column in words;
- ``text-tables``: every table of the schema named in words in one question;
- ``text-values``: one turn per text column listing every value of the column (up to 40);
- ``text-rephrase``: "Could you tell me more about 'A'?", "Please clarify 'A' for me.", per value;
- ``oracle`` / ``oracle-text``: the honest references (the gold labels, the oracle's own questions).

It prints, per suite and policy, the share of underspecified tasks on which the replies revealed
every gold value (``all``) and the share of gold values revealed (``values``).
"""

from __future__ import annotations

import argparse
import json
import re
import sys

from clarisql.envs.sandbox.database import get_image
from clarisql.envs.schema import schema_summary
from clarisql.envs.simulators import DialogueContext, make_simulator, resolve_simulator
from clarisql.envs.simulators.gate.text import schema_identifiers
from clarisql.envs.suites import load_suite
from clarisql.envs.tasks import Label
from clarisql.policies.text_questions import is_chinese, questions_for

SLOTS = ("city", "district", "year", "enterprise", "project")
KINDS = ("Error", "Unmatch", "not-exist")
_QUOTED = re.compile(r"'([^']{1,80})'|\"([^\"]{1,80})\"|“([^”]{1,80})”")
_CAP = re.compile(r"\b[A-Z][\w'.-]*(?:\s+(?:of\s+|the\s+)?[A-Z][\w'.-]*)*")
_NUM = re.compile(r"\d+(?:\.\d+)?")
_WORD = re.compile(r"[\w'.-]+")


def spans(text: str) -> list[str]:
    """Candidate spans of a request: what a shotgun names without knowing the gold."""
    out = [a or b or c for a, b, c in _QUOTED.findall(text)]
    out += _CAP.findall(text) + _NUM.findall(text)
    if is_chinese(text):
        chars = re.sub(r"[^\u3400-\u9fff\w]", " ", text)
        for part in chars.split():
            for n in range(2, 9):
                out += [part[i : i + n] for i in range(0, max(0, len(part) - n + 1))]
    else:
        words = _WORD.findall(text)
        for n in range(1, 5):
            out += [" ".join(words[i : i + n]) for i in range(len(words) - n + 1)]
    seen, keep = set(), []
    for s in out:
        s = s.strip(" .,?!'\"")
        if s and s.casefold() not in seen:
            seen.add(s.casefold())
            keep.append(s)
    return keep


def columns(schema: str) -> list[str]:
    return sorted(i for i in schema_identifiers(schema) if not i.startswith("database"))


#: the most a turn may carry without a refusal, spent on the commonest needs: intent and the two
#: commonest Missing slots (a guess within the bounds, not a shotgun)
GUESS = [Label("intent"), Label("Missing", "", "year"), Label("Missing", "", "city")]


def label_shotgun(task, schema):
    slots = list(SLOTS) + columns(schema)
    labels = [Label("intent")] + [Label("Missing", "", s) for s in slots]
    labels += [Label(k, sp, s) for sp in spans(task.utterance) for s in slots for k in KINDS]
    return [("Could you clarify everything?", labels)]


def names(text: str) -> list[str]:
    """The entities a text shotgun names: quoted strings, capitalised runs, numbers; in Chinese
    the runs between function characters and punctuation."""
    if is_chinese(text):
        parts = re.split(r"[^\u3400-\u9fff\w]|[的和与在是了吗呢请问各自分别哪个多少]", text)
        return [p for p in dict.fromkeys(parts) if len(p) >= 2]
    out = [a or b or c for a, b, c in _QUOTED.findall(text)] + _CAP.findall(text)
    return list(dict.fromkeys(out + _NUM.findall(text)))


def text_questions(task, schema):
    sp = names(task.utterance)
    if is_chinese(task.utterance):
        named = "、".join(f"“{s}”" for s in sp)
        return [
            "请问是哪个城市、哪个区、哪一年？",
            "你具体想了解什么？",
            f"你说的{named}是指什么？",
        ]
    cols = ", ".join(c.replace("_", " ") for c in columns(schema))
    named = ", ".join(f"'{s}'" for s in sp)
    return [
        "Which city, district and year do you mean?",
        "What exactly do you want to know?",
        f"What do you mean by {named}?",
        f"Which {cols} do you mean?",
    ]


def _q(v: str) -> str:
    return f'"{v}"' if "'" in v else f"'{v}'"


def _is_number(v: str) -> bool:
    return bool(re.fullmatch(r"[\d.,:/ -]+", v))


WRONG_Q = "{v} does not match the data: which one did you mean instead?"
PARTIAL_Q = "What is the full name of {v}?"
WRONG_ZH = "“{v}”好像不对，应该是哪个？"
PARTIAL_ZH = "“{v}”的全称是什么？"


def kind_questions(task, kind: str) -> list[str]:
    """One question per named value of the request stating one problem (``wrong``/``partial``)
    or, with ``kind="both"``, both at once (enumerating the kinds)."""
    zh = is_chinese(task.utterance)
    out = []
    for v in names(task.utterance)[:4]:
        w = (WRONG_ZH if zh else WRONG_Q).format(v=v if zh else _q(v))
        pa = (PARTIAL_ZH if zh else PARTIAL_Q).format(v=v if zh else _q(v))
        out.append({"wrong": w, "partial": pa, "both": f"{w} {pa}"}[kind])
    return out


def guess_questions(task, schema) -> list[str]:
    """Within every per-turn bound: an anchored intent question, then per named value the kind
    its surface suggests (numbers: another value; names: the full name), then the year."""
    zh = is_chinese(task.utterance)
    from clarisql.policies.text_questions import anchor

    a = anchor(task.utterance)
    out = [
        f"关于{a}，你具体想了解哪方面的信息？"
        if zh
        else f"What exactly do you want to know about the {a}?"
    ]
    for v in names(task.utterance)[:3]:
        wrong = _is_number(v.rstrip("年"))
        tpl = (WRONG_ZH if wrong else PARTIAL_ZH) if zh else (WRONG_Q if wrong else PARTIAL_Q)
        out.append(tpl.format(v=v if zh else _q(v)))
    out.append("请问是哪一年？" if zh else "Which year do you mean?")
    return out


def sweep_questions(task, schema, turns: int = 20) -> list[str]:
    """One aspect per turn over many turns: the catalog slots, then every column in words."""
    from clarisql.envs.simulators.gate.schema_aspects import schema_phrases

    if is_chinese(task.utterance):
        return ["请问是哪一年？", "请问是哪个城市？", "请问是哪个区？", "请问企业全称是什么？"]
    slots = ["year", "city", "district", "company", "project"] + list(schema_phrases(schema))
    return [f"Which {s} do you mean?" for s in slots[:turns]]


def tables_question(schema: str) -> list[str]:
    """Every table of the schema named in words in one question."""
    from clarisql.envs.simulators.gate.schema_aspects import phrase

    tables = [phrase(m) for m in re.findall(r"^(?:VIEW )?([^\s(][^(\n]*?)\(", schema, re.M)]
    return [f"Which of the {', '.join(tables)} do you mean?"] if tables else []


def values_questions(db_path: str, turns: int = 6, most: int = 40) -> list[str]:
    """One turn per text column (up to ``turns``): every value of the column listed."""
    import sqlite3

    from clarisql.envs.simulators.gate.schema_aspects import phrase

    out = []
    con = sqlite3.connect(f"file:{db_path}?mode=ro", uri=True)
    try:
        for (t,) in con.execute("SELECT name FROM sqlite_master WHERE type='table'"):
            for col in con.execute(f'PRAGMA table_info("{t}")').fetchall():
                if "CHAR" not in col[2].upper() and "TEXT" not in col[2].upper():
                    continue
                vals = [
                    str(r[0])
                    for r in con.execute(
                        f'SELECT DISTINCT "{col[1]}" FROM "{t}" WHERE "{col[1]}" IS NOT NULL '
                        f"LIMIT {most + 1}"
                    )
                ]
                if 2 <= len(vals) <= most:
                    out.append(f"Which {phrase(col[1])} do you mean: {', '.join(vals)}?")
                if len(out) >= turns:
                    return out
    finally:
        con.close()
    return out


def rephrased_questions(task) -> list[str]:
    """The text shotgun's "what do you mean by" in other words, one value per turn."""
    zh = is_chinese(task.utterance)
    out = []
    for v in names(task.utterance)[:4]:
        out.append(f"能再说说“{v}”吗？" if zh else f"Could you tell me more about {_q(v)}?")
        out.append(f"请解释一下{v}。" if zh else f"Please clarify {_q(v)} for me.")
    return out


def label_sweep_one(task, schema, turns: int = 20) -> list[tuple[str, list[Label]]]:
    """One label per turn over many turns, in the label shotgun's order."""
    labels = label_shotgun(task, schema)[0][1]
    return [("Could you clarify this?", [lb]) for lb in labels[:turns]]


def run(suite_spec: str, mapper: str, **kw) -> dict[str, dict[str, float]]:
    suite = load_suite(suite_spec, **kw)
    spec, sim_kw = resolve_simulator(None, None, suite.metadata)
    if spec != "fixed":
        spec, sim_kw = "fixed", {}
    sims = {
        g: make_simulator(spec, **{**sim_kw, "gate": g, "mapper": mapper})
        for g in ("labels", "text")
    }
    schemas: dict[str, str] = {}
    values: dict[str, list[str]] = {}
    tasks = [t for t in suite.tasks if t.underspecs]
    res: dict[str, list[tuple[int, int]]] = {}
    for t in tasks:
        if t.db not in schemas:
            db = suite.database(t)
            schemas[t.db] = schema_summary(get_image(db.path, db.post_copy_sql), db.description)
            values[t.db] = values_questions(str(db.path))
        schema = schemas[t.db]
        plays = {
            "oracle": ("labels", [("Could you clarify?", [u.label for u in t.underspecs])]),
            "oracle-text": ("text", [(q, []) for q, _ in questions_for(t)]),
            "label-shotgun": ("labels", label_shotgun(t, schema)),
            "text-shotgun": ("text", [(q, []) for q in text_questions(t, schema)]),
            "text-shotgun-1": ("text", [(" ".join(text_questions(t, schema)), [])]),
            "label-guess": ("labels", [("Could you clarify?", GUESS)]),
            "label-sweep-1": ("labels", label_sweep_one(t, schema)),
            "text-kinds": ("text", [(q, []) for q in kind_questions(t, "both")]),
            "text-kind-sweep": (
                "text",
                [(q, []) for k in ("wrong", "partial") for q in kind_questions(t, k)],
            ),
            "text-guess": ("text", [(q, []) for q in guess_questions(t, schema)]),
            "text-sweep": ("text", [(q, []) for q in sweep_questions(t, schema)]),
            "text-tables": ("text", [(q, []) for q in tables_question(schema)]),
            "text-values": ("text", [(q, []) for q in values[t.db]]),
            "text-rephrase": ("text", [(q, []) for q in rephrased_questions(t)]),
        }
        for name, (gate, turns) in plays.items():
            sim = sims[gate]
            sim.reset(t, 0)
            history = [{"role": "user", "content": t.utterance}]
            told = ""
            for i, (q, labels) in enumerate(turns):
                ctx = DialogueContext(t, [dict(m) for m in history], i, schema=schema)
                r = sim.respond(q, labels, ctx)
                history += [
                    {"role": "assistant", "content": q},
                    {"role": "user", "content": r.text},
                ]
                told += " " + r.text
            got = sum(u.value in told for u in t.underspecs)
            res.setdefault(name, []).append((got, len(t.underspecs)))
    out = {}
    for name, rows in res.items():
        out[name] = {
            "all": round(sum(g == n for g, n in rows) / len(rows), 3),
            "values": round(sum(g for g, _ in rows) / sum(n for _, n in rows), 3),
            "tasks": len(rows),
        }
    return out


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("suites", nargs="*", default=["builtin"])
    ap.add_argument("--data-odutqa", default=None)
    ap.add_argument("--data-dysql", default=None)
    ap.add_argument("--mapper", default="lexical")
    a = ap.parse_args(argv)
    report = {}
    for s in a.suites:
        kw = {}
        if s == "odutqa" and a.data_odutqa:
            kw["data"] = a.data_odutqa
        if s == "dysql" and a.data_dysql:
            kw["data"] = a.data_dysql
        report[s] = run(s, a.mapper, **kw)
        for name, row in report[s].items():
            print(
                f"{s:40.40s} {name:15s} all={row['all']:.3f} values={row['values']:.3f} n={row['tasks']}"
            )
    print(json.dumps(report), file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())
