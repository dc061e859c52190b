"""A frozen SQLite clock for writable sessions, so that golden replays are reproducible.

Why: some golden actions write the clock into the state (DySQL-Bench pagila tasks 18, 32, 48 run
``UPDATE rental SET return_date = CURRENT_TIMESTAMP ...`` on a column that is not volatile). With
a live clock the gold replay and the agent's episode see different seconds, so a correct agent
could score 0 (upstream DySQL-Bench has this flaw: it replays the gold at the end of the episode).
A frozen clock makes every writable session and every golden replay read the same instant.

How: SQLite reads the time for ``CURRENT_TIMESTAMP``/``CURRENT_DATE``/``CURRENT_TIME`` and the
``'now'`` modifier of the date functions from the connection's VFS (``xCurrentTimeInt64``). A VFS
that inherits everything from the default one and only answers the time differently is registered
once per process (apsw); the private in-memory copies of a database image (every writable
session, golden replays) are opened with it. In-memory databases do no file I/O through the VFS,
so this costs nothing measurable.

Contract: in a writable session ``SELECT CURRENT_TIMESTAMP`` returns :data:`FROZEN_NOW`
(UTC) on every call. Read-only sessions on a database file keep the real clock (their results
never enter a digest).
"""

from __future__ import annotations

import threading
from datetime import datetime, timezone

import apsw

#: The instant writable sessions see as "now" (UTC).
FROZEN_NOW = "2025-01-01 00:00:00"
VFS_NAME = "clarisql-frozen-clock"

_JULIAN_EPOCH_MS = 210_866_760_000_000  # Julian day 0 (noon, 4714 BC) to the Unix epoch, in ms
_FROZEN_UNIX_MS = int(
    datetime.strptime(FROZEN_NOW, "%Y-%m-%d %H:%M:%S").replace(tzinfo=timezone.utc).timestamp()
    * 1000
)


class _FrozenClockVFS(apsw.VFS):
    """The default VFS with a constant clock."""

    def __init__(self) -> None:
        super().__init__(VFS_NAME, base="")

    def xCurrentTimeInt64(self) -> int:  # noqa: N802 - SQLite's method name
        return _JULIAN_EPOCH_MS + _FROZEN_UNIX_MS

    def xCurrentTime(self) -> float:  # noqa: N802 - SQLite's method name
        return (_JULIAN_EPOCH_MS + _FROZEN_UNIX_MS) / 86_400_000.0


_VFS: _FrozenClockVFS | None = None
_LOCK = threading.Lock()


def frozen_clock_vfs() -> str:
    """Register the frozen-clock VFS (once per process) and return its name for ``vfs=``."""
    global _VFS
    with _LOCK:
        if _VFS is None:
            _VFS = _FrozenClockVFS()
    return VFS_NAME


__all__ = ["FROZEN_NOW", "VFS_NAME", "frozen_clock_vfs"]
