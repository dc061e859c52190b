"""A CSV lake with a free-text column (support tickets with agents' notes), written by tests."""

from __future__ import annotations

import csv
import random
from pathlib import Path

CUSTOMERS = ("Ada", "Ben", "Cleo", "Dev", "Eli", "Fay", "Gus", "Hana", "Ivo", "Jade", "Kai", "Lena")
REGIONS = ("North", "South", "East")
ISSUES = {
    "delivery": ("late", "damaged", "missed"),
    "refund": ("partial", "delayed"),
    "screen": ("cracked", "flickering"),
    "battery": ("swollen", "weak"),
}
FILLERS = (
    "The customer called twice.",
    "Follow-up promised within a week.",
    "Escalated to the second line.",
    "Customer was polite throughout.",
    "Closed after confirmation by email.",
)


def write_ticket_lake(folder: Path, rows: int = 120, seed: int = 3, notes: bool = True) -> Path:
    """``tickets.csv``: ticket_id, customer, region, priority, notes (two to four sentences,
    each note unique: it names its ticket number and one or two issues in the agent's words);
    ``notes=False`` leaves the free-text column out."""
    rng = random.Random(seed)
    folder.mkdir(parents=True, exist_ok=True)
    with (folder / "tickets.csv").open("w", newline="", encoding="utf-8") as fh:
        w = csv.writer(fh)
        w.writerow(["ticket_id", "customer", "region", "priority", "notes"][: 5 if notes else 4])
        for i in range(1, rows + 1):
            sents = [f"Ticket {1000 + i} was opened by phone."]
            for head in rng.sample(sorted(ISSUES), rng.choice((1, 1, 2))):
                mod = rng.choice(ISSUES[head])
                if rng.random() < 0.8:
                    sents.append(f"The customer reports a {mod} {head}.")
                else:  # the head word alone, without the kind: a LIKE reading matches it
                    sents.append(f"Asked how the {head} process works.")
            sents.append(rng.choice(FILLERS))
            name = f"{rng.choice(CUSTOMERS)} {1000 + i}"
            row = [
                1000 + i,
                name,
                rng.choice(REGIONS),
                rng.choice(("low", "high")),
                " ".join(sents),
            ]
            w.writerow(row[: 5 if notes else 4])
    return folder
