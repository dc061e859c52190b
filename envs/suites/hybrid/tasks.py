"""The hybrid suite's task templates and the checks every generated task must pass.

See :mod:`clarisql.envs.suites.hybrid` for the contract. Each maker draws from the generator's
``random.Random`` only and computes the gold answer from the recorded facts; :func:`verify_tasks`
runs every gold query (ANSWER with the offline backend) and keyword reading on the database.
"""

from __future__ import annotations

import random
from pathlib import Path
from typing import Any

from clarisql.envs.suites.hybrid.world import (
    CONCEPT_QUESTIONS,
    CUISINES,
    NEIGHBORHOODS,
    SLOT_Q,
    UNSUPPORTED,
    VAGUE,
    Draft,
    Place,
    q,
    vague_label,
)
from clarisql.envs.suql import lexicon as L
from clarisql.rewards.match import execution_match

CONCEPTS = [c.name for c in L.CONCEPTS]
KEYWORD = {c.name: c.keyword for c in L.CONCEPTS}


def _names(places: list[Place]) -> list[list[Any]]:
    return [[p.name] for p in sorted(places, key=lambda p: p.name)]


def _filter(concept: str) -> str:
    return f"ANSWER(reviews, {q(CONCEPT_QUESTIONS[concept][0])}) = 'Yes'"


def _slot_value(p: Place, slot: str) -> str:
    return {"chef": p.chef, "year opened": str(p.year), "signature dish": p.dish}[slot]


def make_tasks(rng: random.Random, places: list[Place]) -> list[Draft]:
    drafts: list[Draft] = []
    # 1. ANSWER in SELECT, structural WHERE
    for slot, (question, col, text) in SLOT_Q.items():
        for p in rng.sample(places, 3):
            drafts.append(
                Draft(
                    text.format(name=p.name),
                    f"SELECT ANSWER({col}, {q(question)}) FROM restaurants WHERE name = {q(p.name)}",
                    [[_slot_value(p, slot)]],
                    f"SELECT {col} FROM restaurants WHERE name = {q(p.name)}",
                    1,
                    shape="value",
                    question=question,
                )
            )
    # 2. ANSWER filter only
    for c in CONCEPTS:
        drafts.append(
            Draft(
                f"List the restaurants {CONCEPT_QUESTIONS[c][1]}.",
                f"SELECT name FROM restaurants WHERE {_filter(c)}",
                _names([p for p in places if p.concepts[c]]),
                f"SELECT name FROM restaurants WHERE reviews LIKE '%{KEYWORD[c]}%'",
                2,
                question=CONCEPT_QUESTIONS[c][0],
            )
        )
    # 3. ANSWER in SELECT and in WHERE; 4. structural + ANSWER filter
    for _ in range(12):
        c, cuisine = rng.choice(CONCEPTS), rng.choice(sorted(CUISINES))
        hits = [p for p in places if p.cuisine == cuisine and p.concepts[c]]
        if len([d for d in drafts if d.suql_type == 3]) < 6:
            drafts.append(
                Draft(
                    f"For the {cuisine} restaurants {CONCEPT_QUESTIONS[c][1]}, who is the chef?",
                    f"SELECT name, ANSWER(description, 'who is the chef?') FROM restaurants "
                    f"WHERE cuisine = {q(cuisine)} AND {_filter(c)}",
                    [[p.name, p.chef] for p in sorted(hits, key=lambda p: p.name)],
                    f"SELECT name, description FROM restaurants WHERE cuisine = {q(cuisine)} "
                    f"AND reviews LIKE '%{KEYWORD[c]}%'",
                    3,
                    question=CONCEPT_QUESTIONS[c][0],
                )
            )
        else:
            good = [p for p in hits if p.rating >= 4.0]
            drafts.append(
                Draft(
                    f"Which {cuisine} restaurants with a rating of at least 4 are "
                    f"{CONCEPT_QUESTIONS[c][1]}?",
                    f"SELECT name FROM restaurants WHERE cuisine = {q(cuisine)} AND rating >= 4 "
                    f"AND {_filter(c)}",
                    _names(good),
                    f"SELECT name FROM restaurants WHERE cuisine = {q(cuisine)} AND rating >= 4 "
                    f"AND reviews LIKE '%{KEYWORD[c]}%'",
                    4,
                    question=CONCEPT_QUESTIONS[c][0],
                )
            )
    # 5. aggregates over ANSWER
    year = "CAST(ANSWER(description, 'what year did it open?') AS INTEGER)"
    for cuisine in rng.sample(sorted(CUISINES), 3):
        mine = [p for p in places if p.cuisine == cuisine]
        drafts.append(
            Draft(
                f"Among the {cuisine} restaurants, what is the most recent year one opened?",
                f"SELECT MAX({year}) FROM restaurants WHERE cuisine = {q(cuisine)}",
                [[max(p.year for p in mine)]],
                f"SELECT MAX(rating) FROM restaurants WHERE cuisine = {q(cuisine)}",
                5,
                shape="value",
                question="what year did it open?",
            )
        )
    for nb in rng.sample(NEIGHBORHOODS, 3):
        c = rng.choice(CONCEPTS)
        drafts.append(
            Draft(
                f"How many restaurants in {nb} are {CONCEPT_QUESTIONS[c][1]}?",
                f"SELECT COUNT(*) FROM restaurants WHERE neighborhood = {q(nb)} AND {_filter(c)}",
                [[sum(p.neighborhood == nb and p.concepts[c] for p in places)]],
                f"SELECT COUNT(*) FROM restaurants WHERE neighborhood = {q(nb)} "
                f"AND reviews LIKE '%{KEYWORD[c]}%'",
                5,
                shape="value",
                question=CONCEPT_QUESTIONS[c][0],
            )
        )
    # 6. ORDER BY ANSWER
    for cuisine, desc in [(c, d) for c in sorted(CUISINES) for d in (False, True)]:
        mine = sorted((p for p in places if p.cuisine == cuisine), key=lambda p: p.year)
        if desc:
            mine.reverse()
        if len(mine) < 2 or mine[0].year == mine[1].year:
            continue
        ask = "opened most recently" if desc else "has been open the longest"
        drafts.append(
            Draft(
                f"Which {cuisine} restaurant {ask}?",
                f"SELECT name FROM restaurants WHERE cuisine = {q(cuisine)} "
                f"ORDER BY {year}{' DESC' if desc else ''} LIMIT 1",
                [[mine[0].name]],
                f"SELECT name FROM restaurants WHERE cuisine = {q(cuisine)} "
                "AND description LIKE '%opened%' ORDER BY rating DESC LIMIT 1",
                6,
                shape="value",
                question="what year did it open?",
            )
        )
    drafts += _underspecified(rng, places) + _unanswerable(rng, places)
    order = list(range(len(drafts)))
    rng.shuffle(order)
    return [drafts[i] for i in order]


def _underspecified(rng: random.Random, places: list[Place]) -> list[Draft]:
    out = []
    phrases = sorted(VAGUE)
    while len(out) < 12:
        phrase = phrases[len(out) % len(phrases)]
        slot, options = VAGUE[phrase]
        c = rng.choice(sorted(options))
        if phrase == "suited to my diet":
            scope, where = f"{rng.choice(sorted(CUISINES))}", "cuisine"
            text = f"Which {scope} restaurants are {phrase}?"
        else:
            scope, where = rng.choice(NEIGHBORHOODS), "neighborhood"
            verb = "have" if phrase.startswith("a ") else "are"
            text = f"Which restaurants in {scope} {verb} {phrase}?"
        hits = [p for p in places if getattr(p, where) == scope and p.concepts[c]]
        if not hits:
            continue
        word = phrase.split()[-1]
        out.append(
            Draft(
                text,
                f"SELECT name FROM restaurants WHERE {where} = {q(scope)} AND {_filter(c)}",
                _names(hits),
                f"SELECT name FROM restaurants WHERE {where} = {q(scope)} "
                f"AND reviews LIKE '%{word}%'",
                4,
                category="where",
                question=CONCEPT_QUESTIONS[c][0],
                underspecs=[vague_label(phrase, slot, options[c])],
            )
        )
    return out


def _unanswerable(rng: random.Random, places: list[Place]) -> list[Draft]:
    out = []
    for text, kw, kind in UNSUPPORTED:
        p = rng.choice(places)
        out.append(
            Draft(
                text.format(name=p.name, cuisine=p.cuisine),
                None,
                None,
                f"SELECT name FROM restaurants WHERE reviews LIKE '%{kw}%' "
                f"OR description LIKE '%{kw}%'",
                None,
                category=f"unanswerable:{kind}",
                question=text.format(name=p.name, cuisine=p.cuisine),
                unanswerable_kind=kind,
            )
        )
        for other in places:
            blob = " ".join([*other.reviews, other.description, other.popular]).lower()
            if kw in blob:
                raise RuntimeError(f"hybrid generator: text mentions unsupported '{kw}'")
    return out


def verify_tasks(db_path: str | Path, tasks: list[Any]) -> list[Any]:
    """The tasks to keep: every gold query must return the facts' answer (else the generator is
    broken: raise); tasks whose gold answer is trivial or whose keyword reading already gives it
    are dropped."""
    from clarisql.envs.sandbox.database import DatabaseImage, SessionLimits
    from clarisql.envs.suql import using

    img = DatabaseImage(db_path)
    limits = SessionLimits(timeout_s=60.0)
    kept = []
    with using(backend="offline", embedder="none"), img.session(False, limits) as s:
        for t in tasks:
            naive = s.execute(t.metadata["naive_sql"])
            if not naive.ok:
                raise RuntimeError(f"{t.id}: naive SQL fails: {naive.error}")
            if not t.answerable:
                kept.append(t)
                continue
            res = s.execute(t.gold_sql)
            if not res.ok or not execution_match([list(r) for r in res.rows], t.gold_answer):
                raise RuntimeError(
                    f"{t.id}: gold SQL {t.gold_sql!r} gives {res.rows or res.error}, "
                    f"facts say {t.gold_answer}"
                )
            trivial = not t.gold_answer or t.gold_answer == [[0]]
            if trivial or execution_match([list(r) for r in naive.rows], t.gold_answer):
                continue
            kept.append(t)
    return kept
