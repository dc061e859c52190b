"""Train/test splits by a stable hash of the task id (the same split everywhere).

``split_of(task_id)`` is ``"test"`` for about ``test_fraction`` of all ids and ``"train"`` for
the rest, from the SHA-256 of the id alone: the same on every machine, Python version and run
(no ``hash()`` salt), independent of the suite's task order and of which other tasks exist, so
a task never moves between splits when a suite grows. The datasets export and the framework
adapters (:mod:`clarisql.envs.adapters`) use it.
"""

from __future__ import annotations

import hashlib

SPLITS = ("train", "test")
#: the share of task ids in the test split by default
TEST_FRACTION = 0.2


def split_of(task_id: str, test_fraction: float = TEST_FRACTION) -> str:
    """``"test"`` or ``"train"`` for ``task_id`` (see the module docstring)."""
    if not 0.0 <= test_fraction <= 1.0:
        raise ValueError(f"test_fraction must be within [0, 1], got {test_fraction!r}")
    h = int.from_bytes(hashlib.sha256(str(task_id).encode("utf-8")).digest()[:8], "big")
    return "test" if h / 2**64 < test_fraction else "train"


def in_split(task_id: str, split: str | None, test_fraction: float = TEST_FRACTION) -> bool:
    """Whether ``task_id`` belongs to ``split`` (``None`` or ``"all"``: every task)."""
    if split in (None, "all"):
        return True
    if split not in SPLITS:
        raise ValueError(f"split must be one of {SPLITS} or 'all', got {split!r}")
    return split_of(task_id, test_fraction) == split
