"""TrustSQL's evaluation mixtures: deterministic subsets of any suite by answerability.

TrustSQL reports each model on three mixtures of answerable (ANS) and unanswerable (UnANS)
questions; :func:`apply_mixture` cuts the same three out of any :class:`Suite`:

=================  =========================================  ===============================
mixture            tasks kept                                  unanswerable share (= the
                                                               score of abstain-all, φ_c)
=================  =========================================  ===============================
``ans``            every answerable task                        0 %
``ans+25``         answerable ``A``, unanswerable ``A/4``       20 %
``ans+unans50``    answerable ``A``, unanswerable ``A``         50 %
=================  =========================================  ===============================

``A`` is as large as the suite allows with the ratio exact (for ``ans+25``, a multiple of 4 no
larger than four times the unanswerable tasks). When a side must shrink, its tasks are drawn
without replacement, stratified by category (largest-remainder allocation, so every category
keeps its share) with a ``random.Random`` seeded by the suite name, the mixture and ``seed``:
the same suite, mixture and seed always give the same tasks, in the suite's order.
``None`` (or ``"all"``) keeps the suite as it is. A mixture that needs unanswerable tasks on a
suite without any raises :class:`ValueError`.
"""

from __future__ import annotations

import hashlib
import random
from collections import defaultdict
from collections.abc import Sequence

from clarisql.envs.suites.base import Suite
from clarisql.envs.tasks import Task

#: Mixture name -> unanswerable tasks per answerable task.
MIXTURES: dict[str, float] = {"ans": 0.0, "ans+25": 0.25, "ans+unans50": 1.0}


def _rng(suite: Suite, mixture: str, side: str, seed: int) -> random.Random:
    key = f"{suite.name}|{mixture}|{side}|{seed}".encode()
    return random.Random(int.from_bytes(hashlib.sha256(key).digest()[:8], "big"))


def stratified_sample(tasks: Sequence[Task], k: int, rng: random.Random) -> list[Task]:
    """``k`` of ``tasks`` drawn per category in proportion (largest remainder), suite order kept."""
    if k >= len(tasks):
        return list(tasks)
    groups: dict[str, list[Task]] = defaultdict(list)
    for t in tasks:
        groups[t.category].append(t)
    quota = {c: k * len(g) / len(tasks) for c, g in groups.items()}
    alloc = {c: int(q) for c, q in quota.items()}
    rest = sorted(groups, key=lambda c: (-(quota[c] - alloc[c]), c))
    for c in rest[: k - sum(alloc.values())]:
        alloc[c] += 1
    keep: set[str] = set()
    for c in sorted(groups):
        keep.update(t.id for t in rng.sample(groups[c], alloc[c]))
    return [t for t in tasks if t.id in keep]


def apply_mixture(suite: Suite, mixture: str | None, seed: int = 0) -> Suite:
    """The suite cut to ``mixture`` (see the module docstring); its metadata records the mixture."""
    if mixture is None or mixture == "all":
        return suite
    if mixture not in MIXTURES:
        raise ValueError(f"unknown mixture {mixture!r}: expected one of {[*MIXTURES, 'all']}")
    ratio = MIXTURES[mixture]
    ans = [t for t in suite.tasks if t.answerable]
    unans = [t for t in suite.tasks if not t.answerable]
    if ratio > 0 and not unans:
        raise ValueError(
            f"suite {suite.name!r} has no unanswerable tasks: mixture {mixture!r} needs some"
        )
    if not ans:
        raise ValueError(f"suite {suite.name!r} has no answerable tasks")
    if ratio == 0:
        n_ans, n_unans = len(ans), 0
    else:
        per = round(1 / ratio)  # answerable tasks per unanswerable one: 4 or 1
        n_unans = min(len(unans), len(ans) // per)
        n_ans = n_unans * per
        if n_unans == 0:
            raise ValueError(
                f"suite {suite.name!r}: {len(ans)} answerable task(s) are too few for {mixture!r}"
            )
    keep_a = stratified_sample(ans, n_ans, _rng(suite, mixture, "ans", seed))
    keep_u = stratified_sample(unans, n_unans, _rng(suite, mixture, "unans", seed))
    ids = {t.id for t in keep_a} | {t.id for t in keep_u}
    out = suite.subset([t.id for t in suite.tasks if t.id in ids])
    out.metadata["mixture"] = mixture
    return out


__all__ = ["MIXTURES", "apply_mixture", "stratified_sample"]
