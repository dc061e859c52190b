"""Counted session slots, addressable HTTP sessions, and the records of expired episodes.

Contract
- :class:`Slots` counts every environment the server makes, whatever made it (a WebSocket, an
  HTTP session, OpenEnv's stateless ``/reset``/``/step``, an MCP session): a slot is taken
  *before* the environment is built (refused past ``max_sessions`` or while the process's
  resident memory is over the budget) and given back only when its ``close()`` has returned (or
  the object is collected unclosed). The count cannot drift: the slot belongs to the
  environment object, not to the path that made it.
- :class:`SessionRegistry` holds HTTP sessions by id; :meth:`SessionRegistry.reap` closes those
  idle past the timeout, run by a timer (:meth:`SessionRegistry.run_reaper`), not only when a
  session is opened.
- An episode ended by expiry is never reported as ``done`` with a reward: its id stays known in
  :class:`ExpiredRecords` (bounded), so a later request is answered ``410`` with what happened
  and the episode's public record (no gold facts).
"""

from __future__ import annotations

import asyncio
import logging
import threading
import time
import uuid
import weakref
from collections import OrderedDict
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

_log = logging.getLogger("clarisql.serve")


class UnknownSession(KeyError):
    """No live session has this id."""


class AtCapacity(RuntimeError):
    """No slot: ``max_sessions`` environments are live, or memory is over the budget."""


def resident_bytes() -> int:
    """This process's resident memory (``/proc/self/statm``; 0 where unknown)."""
    try:
        with open("/proc/self/statm", "rb") as f:
            return int(f.read().split()[1]) * 4096
    except (OSError, ValueError, IndexError):
        return 0


class Slot:
    """One counted environment; :meth:`release` is idempotent."""

    __slots__ = ("_slots", "__weakref__")

    def __init__(self, slots: Slots):
        self._slots: Slots | None = slots

    def release(self) -> None:
        slots, self._slots = self._slots, None
        if slots is not None:
            slots._give_back()

    @property
    def held(self) -> bool:
        return self._slots is not None


class Slots:
    """At most ``max_sessions`` live environments, none opened above ``memory_budget`` bytes."""

    def __init__(
        self,
        max_sessions: int,
        memory_budget: int | None = None,
        rss: Callable[[], int] = resident_bytes,
    ):
        if max_sessions < 1:
            raise ValueError(f"max_sessions must be at least 1, got {max_sessions}")
        self.max = int(max_sessions)
        self.memory_budget = memory_budget
        self._rss = rss
        self._live = 0
        self._lock = threading.Lock()

    @property
    def live(self) -> int:
        return self._live

    def acquire(self) -> Slot:
        with self._lock:
            if self._live >= self.max:
                raise AtCapacity(f"{self._live} sessions are live (max_sessions={self.max})")
            if self.memory_budget is not None:
                rss = self._rss()
                if rss > self.memory_budget:
                    raise AtCapacity(
                        f"the server's memory ({rss >> 20} MB) is over its budget "
                        f"({self.memory_budget >> 20} MB): no new session until some close"
                    )
            self._live += 1
        return Slot(self)

    def bind(self, owner: object, slot: Slot) -> None:
        """Give ``slot`` back when ``owner`` is collected unclosed (a safety net)."""
        weakref.finalize(owner, slot.release)

    def _give_back(self) -> None:
        with self._lock:
            self._live -= 1


def public_record(env: Any, reason: str, idle_s: float | None = None) -> dict[str, Any]:
    """What an expired episode's client may still learn: task, turns taken, how it ended (no
    gold rows or digests)."""
    inner = getattr(env, "env", env)
    rec = getattr(inner, "record", None)
    out: dict[str, Any] = {"end": "expired", "reason": reason}
    if idle_s is not None:
        out["idle_s"] = round(idle_s, 1)
    if rec is not None:
        out["task_id"] = rec.task_id
        out["turns"] = len(rec.turns)
        out["episode_end"] = rec.end  # "running" unless it had ended before expiring
    return out


class ExpiredRecords:
    """The last ``limit`` expired sessions' public records, by id (oldest forgotten first)."""

    def __init__(self, limit: int = 4096):
        self._limit = limit
        self._records: OrderedDict[str, dict[str, Any]] = OrderedDict()
        self._lock = threading.Lock()

    def add(self, sid: str, record: dict[str, Any]) -> None:
        with self._lock:
            self._records[sid] = record
            while len(self._records) > self._limit:
                self._records.popitem(last=False)
        _log.warning("session %s expired: %s", sid, record)

    def get(self, sid: str) -> dict[str, Any] | None:
        with self._lock:
            return self._records.get(sid)


@dataclass
class _Entry:
    env: Any
    last_used: float
    busy: int = 0


class SessionRegistry:
    """Live HTTP sessions by id; idle ones (no request for ``idle_timeout_s``) are closed."""

    def __init__(
        self,
        factory: Callable[[], Any],
        idle_timeout_s: float | None,
        expired: ExpiredRecords | None = None,
    ):
        self._factory = factory
        self._idle = idle_timeout_s
        self._live: dict[str, _Entry] = {}
        self._lock = threading.Lock()
        self.expired = expired if expired is not None else ExpiredRecords()

    def __len__(self) -> int:
        return len(self._live)

    def open(self) -> tuple[str, Any]:
        """A new session (the factory takes its slot: :class:`AtCapacity` when none is free)."""
        self.reap()
        env = self._factory()
        sid = uuid.uuid4().hex
        with self._lock:
            self._live[sid] = _Entry(env, time.monotonic())
        return sid, env

    def get(self, sid: str) -> Any:
        with self._lock:
            entry = self._live.get(sid)
            if entry is None:
                raise UnknownSession(sid)
            entry.last_used = time.monotonic()
            return entry.env

    def using(self, sid: str) -> _Using:
        """``with registry.using(sid) as env``: the session, not reaped while in use."""
        return _Using(self, sid)

    def close(self, sid: str) -> None:
        with self._lock:
            entry = self._live.pop(sid, None)
        if entry is None:
            raise UnknownSession(sid)
        entry.env.close()

    def reap(self) -> int:
        """Close sessions idle longer than the timeout (keeping their records); how many."""
        if self._idle is None:
            return 0
        now = time.monotonic()
        cutoff = now - self._idle
        with self._lock:
            old = [s for s, e in self._live.items() if e.busy == 0 and e.last_used < cutoff]
            entries = [(s, self._live.pop(s)) for s in old]
        for sid, e in entries:
            reason = f"no request for {self._idle:g} s (idle timeout): the episode ended unscored"
            self.expired.add(sid, public_record(e.env, reason, now - e.last_used))
            e.env.close()
        return len(entries)

    async def run_reaper(self) -> None:
        """Reap on a timer (every quarter of the timeout, at most every 5 s) until cancelled."""
        if self._idle is None:
            return
        interval = min(max(self._idle / 4, 0.05), 5.0)
        while True:
            await asyncio.sleep(interval)
            try:
                await asyncio.to_thread(self.reap)
            except Exception as e:  # (a failing close must not stop the timer)
                _log.warning("idle-session reaper: %s: %s", type(e).__name__, e)

    def close_all(self) -> None:
        with self._lock:
            entries = list(self._live.values())
            self._live.clear()
        for e in entries:
            e.env.close()


class _Using:
    def __init__(self, registry: SessionRegistry, sid: str):
        self._r, self._sid = registry, sid

    def __enter__(self) -> Any:
        with self._r._lock:
            entry = self._r._live.get(self._sid)
            if entry is None:
                raise UnknownSession(self._sid)
            entry.busy += 1
            entry.last_used = time.monotonic()
            self._entry = entry
            return entry.env

    def __exit__(self, *exc: object) -> None:
        with self._r._lock:
            self._entry.busy -= 1
            self._entry.last_used = time.monotonic()
