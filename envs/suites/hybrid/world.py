"""The hybrid suite's invented world: restaurants, their free-text reviews and descriptions, the
concepts and vague criteria the tasks ask about, and the database writer.

Contract: deterministic for a ``random.Random``; imports nothing of the suite's loader or task
makers (:mod:`clarisql.envs.suites.hybrid` and :mod:`clarisql.envs.suites.hybrid.tasks` import it).
"""

from __future__ import annotations

import json
import random
import sqlite3
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from clarisql.envs.suql import lexicon as L
from clarisql.envs.tasks import UNANSWERABLE_KINDS, Label, Task, Underspec

DB_KEY = "hybrid"
N_RESTAURANTS = 160

DESCRIPTION = (
    "Restaurants of one invented city. restaurants(name, cuisine, neighborhood, price ('$' to "
    "'$$$$'), rating (1-5)) plus free-text columns: description (about the place, its chef and "
    "history), reviews (a JSON array of guest reviews) and popular_dishes. Free text can be "
    "queried inside SQL: ANSWER(text_or_texts, question) returns the answer ('Yes'/'No' for "
    "yes/no questions) and SUMMARY(text_or_texts) a summary, e.g. SELECT name FROM restaurants "
    "WHERE ANSWER(reviews, 'is it good for a romantic date?') = 'Yes'."
)

CUISINES = {
    "Italian": ("wild mushroom risotto", "veal saltimbocca", "lemon ricotta gnocchi"),
    "Thai": ("crab fried rice", "green curry with duck", "pad see ew"),
    "Mexican": ("mole poblano", "fish tacos", "chile relleno"),
    "Japanese": ("black cod miso", "chirashi bowl", "tonkotsu ramen"),
    "Indian": ("lamb rogan josh", "paneer tikka", "goan fish curry"),
    "Greek": ("grilled octopus", "lamb kleftiko", "spanakopita"),
}
NEIGHBORHOODS = ("Harbor", "Old Mill", "Uptown", "Riverside", "Market Square")
PRICES = ("$", "$$", "$$$", "$$$$")
FIRST = ("Ana", "Ben", "Carla", "Dev", "Elif", "Femi", "Gus", "Hana", "Ivo", "Jun", "Kemal", "Lena")
LAST = ("Moreau", "Okafor", "Petrov", "Quinn", "Rossi", "Sato", "Tan", "Umar", "Varga", "Wolfe")
NAME_A = ("Golden", "Blue", "Little", "Olive", "Copper", "Silver", "Red", "Green", "Salt", "Wild")
NAME_B = (
    "Fig",
    "Lantern",
    "Spoon",
    "Harbor",
    "Table",
    "Kettle",
    "Garden",
    "Pepper",
    "Oak",
    "Ember",
    "Vine",
    "Anchor",
    "Sparrow",
    "Basil",
    "Clove",
    "Saffron",
)
FILLERS = (
    "The food came out hot and well seasoned.",
    "Service was friendly and attentive.",
    "Prices felt fair for the portions.",
    "The bread basket alone is worth the visit.",
    "Desserts were a little too sweet for me.",
    "We will be back soon.",
    "Solid cooking, nothing fancy.",
    "The staff remembered our names.",
)

#: concept -> (question ANSWER is asked, the request's wording)
CONCEPT_QUESTIONS = {
    "romantic": ("is it good for a romantic date?", "good for a romantic date"),
    "quiet": ("is it quiet enough for a business meal?", "quiet enough for a business meal"),
    "live music": ("does it have live music?", "with live music"),
    "outdoor seating": ("does it have outdoor seating?", "with outdoor seating"),
    "vegan": ("does it have vegan options?", "with vegan options"),
    "family": ("is it good for families with kids?", "good for families with kids"),
}
#: vague request wording -> (slot, {concept: the user's clarification})
VAGUE = {
    "a nice atmosphere": (
        "atmosphere",
        {
            "romantic": "romantic, for a date",
            "quiet": "quiet, for a business meal",
            "live music": "lively, with live music",
        },
    ),
    "the right fit for my occasion": (
        "occasion",
        {
            "romantic": "a romantic date",
            "quiet": "a quiet business meal",
            "family": "a family outing with kids",
        },
    ),
    "suited to my diet": ("diet", {"vegan": "I eat vegan"}),
}
#: criteria no column or text supports (TrustSQL): (utterance, keyword, kind). Kinds by index
#: into UNANSWERABLE_KINDS (1: column-related, a column that would fit this table but does not
#: exist; 2: column-unrelated, a column from another domain), so a rename of the names merges.
UNSUPPORTED = (
    ("Which restaurants offer valet service?", "valet", UNANSWERABLE_KINDS[1]),
    ("Which restaurants have a Michelin star?", "michelin", UNANSWERABLE_KINDS[1]),
    ("What is the wifi password at {name}?", "wifi", UNANSWERABLE_KINDS[1]),
    ("Which {cuisine} restaurants deliver after midnight?", "deliver", UNANSWERABLE_KINDS[1]),
    ("What is the stock ticker of {name}?", "ticker", UNANSWERABLE_KINDS[2]),
    ("Which restaurants have a chef who holds a pilot licence?", "pilot", UNANSWERABLE_KINDS[2]),
)
SLOT_Q = {
    "chef": ("who is the chef?", "description", "Who is the chef at {name}?"),
    "year opened": ("what year did it open?", "description", "When did {name} open?"),
    "signature dish": (
        "what is the signature dish?",
        "popular_dishes",
        "What dish is {name} known for?",
    ),
}


@dataclass
class Place:
    id: int
    name: str
    cuisine: str
    neighborhood: str
    price: str
    rating: float
    concepts: dict[str, bool] = field(default_factory=dict)
    chef: str = ""
    year: int = 0
    dish: str = ""
    reviews: list[str] = field(default_factory=list)
    description: str = ""
    popular: str = ""


def _slot(name: str) -> L.Slot:
    return next(s for s in L.SLOTS if s.name == name)


def _make_world(rng: random.Random) -> list[Place]:
    names = [f"The {a} {b}" for a in NAME_A for b in NAME_B]
    rng.shuffle(names)
    chefs = [f"{first} {last}" for first in FIRST for last in LAST]
    rng.shuffle(chefs)
    places = []
    for i in range(N_RESTAURANTS):
        cuisine = rng.choice(sorted(CUISINES))
        p = Place(
            i + 1,
            names[i],
            cuisine,
            rng.choice(NEIGHBORHOODS),
            rng.choice(PRICES),
            round(rng.uniform(3.0, 5.0), 1),
        )
        p.concepts = {c.name: rng.random() < 0.3 for c in L.CONCEPTS}
        p.chef, p.year = chefs[i % len(chefs)], rng.randint(1985, 2023)
        p.dish = rng.choice(CUISINES[cuisine])
        _write_texts(p, rng)
        places.append(p)
    return places


def _write_texts(p: Place, rng: random.Random) -> None:
    n_reviews = rng.randint(2, 3)
    reviews: list[list[str]] = [[rng.choice(FILLERS)] for _ in range(n_reviews)]
    for c in L.CONCEPTS:
        if p.concepts[c.name]:
            words = rng.choice(c.positive)
        elif rng.random() < 0.3:
            words = rng.choice(c.negative)
        else:
            continue
        reviews[rng.randrange(n_reviews)].append(words[0].upper() + words[1:] + ".")
    for r in reviews:
        rng.shuffle(r)
    p.reviews = [" ".join(r) for r in reviews]
    p.description = " ".join(
        [
            f"{p.name} serves {p.cuisine} food in {p.neighborhood}.",
            L.write_slot(_slot("chef"), p.chef, rng.randrange(3)),
            L.write_slot(_slot("year opened"), str(p.year), rng.randrange(3)),
        ]
    )
    others = [d for d in CUISINES[p.cuisine] if d != p.dish]
    p.popular = " ".join(
        [
            L.write_slot(_slot("signature dish"), p.dish, rng.randrange(3)),
            f"Some also like the {rng.choice(others)}.",
        ]
    )


def _write_db(path: str | Path, places: list[Place]) -> None:
    conn = sqlite3.connect(str(path), isolation_level=None)
    try:
        conn.execute(
            "CREATE TABLE restaurants (id INTEGER PRIMARY KEY, name TEXT NOT NULL, cuisine TEXT, "
            "neighborhood TEXT, price TEXT, rating REAL, description TEXT, reviews TEXT, "
            "popular_dishes TEXT)"
        )
        conn.execute("BEGIN")  # one transaction: no sync per row
        conn.executemany(
            "INSERT INTO restaurants VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)",
            [
                (
                    p.id,
                    p.name,
                    p.cuisine,
                    p.neighborhood,
                    p.price,
                    p.rating,
                    p.description,
                    json.dumps(p.reviews),
                    p.popular,
                )
                for p in places
            ],
        )
        conn.execute("COMMIT")
    finally:
        conn.close()


def q(text: str) -> str:
    """An SQL string literal."""
    return "'" + text.replace("'", "''") + "'"


@dataclass
class Draft:
    utterance: str
    gold_sql: str | None
    gold: list[list[Any]] | None
    naive_sql: str
    suql_type: int | None = None
    category: str = "well-specified"
    shape: str = "list"
    question: str = ""
    underspecs: list[Underspec] = field(default_factory=list)
    unanswerable_kind: str | None = None

    def to_task(self, tid: str) -> Task:
        md: dict[str, Any] = {
            "tables": ["restaurants"],
            "naive_sql": self.naive_sql,
            "answer_shape": self.shape,
            "question": self.question,
        }
        if self.suql_type is not None:
            md["suql_type"] = self.suql_type
        return Task(
            id=tid,
            db=DB_KEY,
            utterance=self.utterance,
            category=self.category,
            gold_sql=self.gold_sql,
            gold_answer=self.gold,
            gold_ordered=False if self.gold is not None else None,
            answerable=self.unanswerable_kind is None,
            unanswerable_kind=self.unanswerable_kind,
            underspecs=list(self.underspecs),
            metadata=md,
        )


def vague_label(phrase: str, slot: str, value: str) -> Underspec:
    return Underspec(Label("not-exist", phrase, slot), value)
