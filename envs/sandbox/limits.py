"""SQLite's own resource limits for agent sessions, and a watchdog that enforces deadlines.

Contract
- :func:`apply_connection_limits` sets a connection's per-connection limits for one session:
  ``SQLITE_LIMIT_LENGTH`` (no string, blob or row longer than ``max_value_bytes``; SQLite refuses
  to build one, so a 500 MB ``randomblob`` fails at once instead of being allocated), and for
  writable sessions ``max_page_count`` on ``main`` and ``temp`` (the database may grow by at most
  ``max_growth_bytes`` over the image; a write past it fails with SQLITE_FULL and only that
  statement is undone).
- :func:`ensure_soft_heap_limit` sets SQLite's process-wide soft heap limit once (SQLite then
  gives back cache memory first when the heap grows past it; it is advisory, never a failure).
- :class:`Watchdog` is one daemon thread per process that calls ``Connection.interrupt()`` on a
  connection whose statement is still running at its deadline. SQLite checks the interrupt flag
  inside long single operations (sorts, big scans) that a progress handler, which runs only
  between VM operations, may not reach in time. :meth:`Watchdog.cancel` returns only when no
  interrupt for that statement can still be issued.
- :class:`SliceGuard` (one per thread that runs statements inline, :func:`slice_guard`) stops a
  statement soon after a short time slice, also inside one long operation, without a lock or a
  thread switch per statement (a ticker thread that runs only while slices are in use).
- :func:`trim_heap` asks glibc to give freed heap pages back to the OS (after a big session).
- :func:`wall_cap_s` is the wall-clock safety cap a statement gets when :class:`SessionLimits`
  names none: long enough that a statement that meets its step budget meets it first even
  when the machine runs :data:`WALL_SLOWDOWN` times slower than a quiet one, so the verdict is
  the step count's, whatever the load.

Why a hand-written watchdog: Python has no timer primitive that is cheap per statement
(``threading.Timer`` starts a thread per call); this is one thread, a dict of the statements
armed now and a condition variable. Arming a deadline is a lock-free dict store; it wakes the
thread only when it is earlier than the thread's next wake-up (with nothing running the thread
sleeps until the deadline armed last, which later statements' deadlines follow), so a statement
costs two dict operations, not a thread switch; each wake-up scans only the statements running
then. (A heap of deadlines, cancelled ones kept until due, grew to ~100k entries per 2 s budget
under a fast loop and stalled statements for ~100 ms while the thread drained it.)
"""

from __future__ import annotations

import ctypes
import itertools
import os
import threading
import time
import weakref
from dataclasses import dataclass
from typing import Any

import apsw

#: SQLite's process-wide soft heap limit (bytes) set by :func:`ensure_soft_heap_limit`.
SOFT_HEAP_LIMIT = 1 << 30

#: A quiet machine's cost of one SQLite VM step, in ns, rounded up from the costliest common
#: statements measured (string functions on every row of a cross join: ~18 ns; a group-by
#: ~12 ns; a bare recursive count or a sort ~6-8 ns).
QUIET_NS_PER_STEP = 20
#: How many times slower than a quiet one the machine may run before the wall-clock cap could
#: stop a statement ahead of its step budget (a load of 20 per core).
WALL_SLOWDOWN = 20
#: The smallest wall-clock cap (and the cap of a statement without a step budget).
MIN_WALL_CAP_S = 2.0


def wall_cap_s(max_vm_steps: int | None) -> float:
    """The wall-clock safety cap for a statement budget of ``max_vm_steps`` SQLite VM steps:
    ``max_vm_steps`` x :data:`QUIET_NS_PER_STEP` x :data:`WALL_SLOWDOWN` (100 M steps: 40 s,
    against 0.6-1.8 s on a quiet machine), at least :data:`MIN_WALL_CAP_S`."""
    if max_vm_steps is None:
        return MIN_WALL_CAP_S
    return max(MIN_WALL_CAP_S, max_vm_steps * QUIET_NS_PER_STEP * WALL_SLOWDOWN / 1e9)


def apply_connection_limits(
    conn: apsw.Connection,
    *,
    max_value_bytes: int,
    writable: bool,
    image_pages: int,
    page_size: int,
    max_growth_bytes: int,
) -> None:
    """Set the session's SQLite limits on ``conn`` (see the module docstring).

    A pooled connection keeps its limits between sessions: the page-count pragmas are issued
    only when they change (they cost more than the rest of opening a session).
    """
    conn.limit(apsw.SQLITE_LIMIT_LENGTH, max(1, int(max_value_bytes)))
    if writable:
        growth = max(1, int(max_growth_bytes) // int(page_size))
        key = (int(image_pages) + growth, growth)
        if _APPLIED.get(conn) != key:
            conn.execute(f"PRAGMA main.max_page_count = {key[0]}")
            conn.execute(f"PRAGMA temp.max_page_count = {key[1]}")
            _APPLIED[conn] = key


class ConnectionMap:
    """A map keyed by connection that does not keep its connections alive.

    ``weakref.WeakKeyDictionary`` does the same, but its lookups run in Python and make a
    weak reference each (~1 µs, paid per session); this one is a plain dict by ``id()`` whose
    entries a weak-reference callback removes when the connection is freed (before its id can
    be reused).
    """

    def __init__(self) -> None:
        self._d: dict[int, tuple[weakref.ref[Any], Any]] = {}

    def get(self, conn: Any, default: Any = None) -> Any:
        entry = self._d.get(id(conn))
        return default if entry is None or entry[0]() is not conn else entry[1]

    def __setitem__(self, conn: Any, value: Any) -> None:
        key, d = id(conn), self._d
        entry = d.get(key)
        if entry is not None and entry[0]() is conn:
            d[key] = (entry[0], value)
            return

        def forget(ref: weakref.ref[Any], key: int = key) -> None:
            if d.get(key, (None,))[0] is ref:
                del d[key]

        d[key] = (weakref.ref(conn, forget), value)


#: connection -> the page-count limits last set on it (closed connections drop out)
_APPLIED = ConnectionMap()


def ensure_soft_heap_limit(limit: int = SOFT_HEAP_LIMIT) -> None:
    """Set SQLite's soft heap limit unless something already set one.

    Cheap to call per session: once a limit is seen in place it is only re-read when another
    caller asks for a different one."""
    global _HEAP_LIMIT_SEEN
    if _HEAP_LIMIT_SEEN == limit:
        return
    if apsw.soft_heap_limit(-1) == 0:
        apsw.soft_heap_limit(int(limit))
    _HEAP_LIMIT_SEEN = limit


_HEAP_LIMIT_SEEN: int | None = None


def trim_heap() -> None:
    """Give freed heap memory back to the OS where the C library can (glibc); else do nothing."""
    try:
        ctypes.CDLL("libc.so.6").malloc_trim(0)
    except (OSError, AttributeError):
        pass


def _interrupt(conn: Any) -> None:
    try:
        conn.interrupt()
    except Exception:  # a closed connection: nothing to stop
        pass


#: the watchdog's wake-up time while its thread scans the armed statements
_SCANNING = float("-inf")


class Watchdog:
    """Interrupts connections whose statement runs past its deadline (see the module docstring)."""

    def __init__(self) -> None:
        self._lock = threading.Lock()  # a plain lock: taken only off the common path
        self._cv = threading.Condition(self._lock)
        #: token -> (deadline, connection) of each statement armed and not yet cancelled
        self._live: dict[int, tuple[float, Any]] = {}
        self._ids = itertools.count()
        self._thread: threading.Thread | None = None
        #: when the thread wakes next at the latest; ``-inf`` while it scans, ``inf`` when it
        #: is not running or sleeps with nothing armed
        self._wake_at = float("inf")
        #: the deadline armed last (the thread sleeps until it when nothing is live)
        self._last = float("-inf")
        #: set (under the lock) while the thread takes a due token and interrupts its connection
        self._firing = False

    def watch(self, conn: Any, deadline: float) -> int:
        """Interrupt ``conn`` at ``deadline`` (``time.monotonic()``) unless cancelled first.

        Lock-free unless ``deadline`` is earlier than the thread's next wake-up or the thread
        is scanning: the entry is stored first (an atomic ``dict`` store), then the wake-up time
        is read; the thread publishes ``-inf`` there before it snapshots the entries and its
        real wake-up time only after, so an entry its snapshot may have missed reads ``-inf``
        and takes the lock, which it gets once the thread waits, with the real wake-up time to
        compare against.
        """
        token = next(self._ids)
        self._live[token] = (deadline, conn)
        self._last = deadline
        wake_at = self._wake_at
        if deadline < wake_at or wake_at == _SCANNING:
            self._wake(deadline)
        return token

    def _wake(self, deadline: float) -> None:
        # Waking the thread costs a context switch and a GIL hand-off (~30 µs, more than a
        # small statement): only when it would otherwise sleep past this deadline. Statements
        # share one budget, so deadlines mostly arrive in increasing order and the thread wakes
        # about once per budget, not once per statement.
        with self._lock:
            if self._thread is None:  # (the thread clears it, under the lock, when it exits)
                self._thread = threading.Thread(
                    target=self._run, name="clarisql-sql-watchdog", daemon=True
                )
                self._wake_at = float("inf")
                self._thread.start()
            elif deadline < self._wake_at:
                self._wake_at = deadline
                self._cv.notify()

    def cancel(self, token: int) -> None:
        """Forget ``token``; afterwards no interrupt for it will be issued.

        Lock-free unless the thread is firing: ``dict.pop`` is atomic, so either this call or
        the thread takes the token; the thread sets ``_firing`` before taking one and clears it
        after the interrupt, so a cancel that lost the token waits on the lock until then.
        """
        self._live.pop(token, None)
        if self._firing:
            with self._lock:
                pass

    def _run(self) -> None:
        try:
            self._loop()
        finally:  # (only an unexpected error leaves the thread registered here)
            with self._lock:
                if self._thread is threading.current_thread():
                    self._thread = None
                    self._wake_at = float("inf")

    def _loop(self) -> None:
        # One scan per wake-up, O(statements running now): no per-statement structure to drain.
        inf = float("inf")
        with self._cv:
            while True:
                self._wake_at = _SCANNING  # armed from here on: watch() takes the lock
                live = self._live.copy()  # (atomic)
                now = time.monotonic()
                due = [t for t, (d, _) in live.items() if d <= now]
                for token in due:
                    self._fire(token)
                nxt = min((d for d, _ in live.values() if d > now), default=inf)
                if nxt == inf and self._last > now:
                    nxt = self._last  # later statements' deadlines come after it: no wake-ups
                if nxt < inf:
                    self._wake_at = nxt
                    self._cv.wait(nxt - now)
                    continue
                self._wake_at = inf  # nothing armed: the next watch() wakes the thread
                self._cv.wait(30.0)
                if not self._live and self._wake_at == inf:
                    self._thread = None  # under the lock: the next watch() starts one
                    return

    def _fire(self, token: int) -> None:
        """Interrupt ``token``'s connection unless it was cancelled (called under the lock)."""
        self._firing = True  # before taking the token: see cancel()
        try:
            entry = self._live.pop(token, None)
            if entry is not None:  # under the lock: cancel() cannot return while this is issued
                _interrupt(entry[1])
        finally:
            self._firing = False


WATCHDOG = Watchdog()
if hasattr(os, "register_at_fork"):  # a forked child has no watchdog thread: it starts its own
    os.register_at_fork(after_in_child=WATCHDOG.__init__)


class SliceGuard:
    """Interrupts a statement run inline (on an event loop) soon after its short time slice.

    A statement's progress handler ends it at its slice's end (:meth:`Session.execute_inline`);
    this thread covers one SQLite operation that runs long between two progress calls (e.g.
    ``instr()`` over a 1 MB value: tens of milliseconds, more for worse), which would stall the
    loop for the whole statement budget if only the :class:`Watchdog` were armed. While slices
    are in use the thread looks at the one armed slot every ``tick`` seconds, so arming is a
    plain attribute write (no lock, no thread switch; one inline statement runs at a time per
    loop thread: the slot is per guard, one guard per thread that runs inline). After
    ``idle_s`` with nothing armed the thread sleeps until the next :meth:`arm` wakes it.
    :meth:`disarm` returns only when no interrupt for that slot can still be issued (the
    Watchdog's protocol: ``_firing`` is set before the slot is read and the interrupt is issued
    under the lock).
    """

    def __init__(self, tick_s: float = 0.005, idle_s: float = 1.0) -> None:
        self.tick_s, self.idle_s = tick_s, idle_s
        self._slot: tuple[Any, float] | None = None  # (connection, deadline)
        self._last = 0.0  # the last armed deadline
        self._lock = threading.Lock()
        self._wake = threading.Event()
        self._sleeping = True
        self._firing = False
        self._thread: threading.Thread | None = None

    def arm(self, conn: Any, deadline: float) -> None:
        """Interrupt ``conn`` soon after ``deadline`` (``time.monotonic()``) unless disarmed."""
        self._slot = (conn, deadline)
        self._last = deadline
        if self._sleeping:  # (read after the slot is written: see _run)
            with self._lock:
                if self._thread is None:
                    self._thread = threading.Thread(
                        target=self._run, name="clarisql-slice-guard", daemon=True
                    )
                    self._thread.start()
            self._wake.set()

    def disarm(self) -> None:
        self._slot = None
        if self._firing:
            with self._lock:
                pass

    def _run(self) -> None:
        while True:
            if self._slot is None and time.monotonic() - self._last > self.idle_s:
                self._sleeping = True
                if self._slot is None:  # re-read after publishing _sleeping: arm() sees one
                    self._wake.wait()
                self._wake.clear()
                self._sleeping = False
                continue
            time.sleep(self.tick_s)
            with self._lock:
                self._firing = True
                try:
                    slot = self._slot
                    if slot is not None and time.monotonic() > slot[1]:
                        _interrupt(slot[0])
                finally:
                    self._firing = False


_GUARDS = threading.local()


def slice_guard() -> SliceGuard:
    """This thread's :class:`SliceGuard` (made on first use)."""
    guard = getattr(_GUARDS, "guard", None)
    if guard is None:
        guard = _GUARDS.guard = SliceGuard()
    return guard


__all__ = [
    "ConnectionMap",
    "SessionLimits",
    "SOFT_HEAP_LIMIT",
    "SliceGuard",
    "WATCHDOG",
    "Watchdog",
    "apply_connection_limits",
    "ensure_soft_heap_limit",
    "slice_guard",
    "trim_heap",
    "wall_cap_s",
]


@dataclass(frozen=True)
class SessionLimits:
    """Per-statement budget, result caps and the session's resource caps.

    ``max_vm_steps`` is the statement's budget, counted in SQLite VM steps (the progress
    handler's calls, every ``progress_steps`` steps): the same statement over the same database
    takes the same steps on any machine under any load, so whether it fits never depends on the
    clock (``None``: no step budget). ``timeout_s`` is a wall-clock safety cap above it
    (progress handler, plus a watchdog interrupt ``watchdog_grace_s`` (at most 4 % of the cap)
    after the deadline for long single operations); left out (``None``), it is derived from the
    step budget (:func:`wall_cap_s`: never reached before the step budget even on a machine 20x
    slower than a quiet one), so the step count alone decides. A statement stopped by either
    gets the same message, naming both budgets, so the text never says which one the clock
    reached. (:func:`dataclasses.replace` keeps a derived cap; pass ``timeout_s=None`` to derive
    it again for another step budget.)
    ``max_rows``/``max_bytes`` cap what one statement may return (the rest is dropped and the
    result is marked ``truncated``); ``max_sql_chars`` refuses huge statements up front.
    ``max_value_bytes`` is SQLite's ``SQLITE_LIMIT_LENGTH`` (longest string, blob or row);
    ``max_growth_bytes`` caps how far a writable session's ``main`` and ``temp`` databases may
    grow; ``max_statement_memory_bytes`` caps how much one statement may grow SQLite's heap
    (sorts, temporary b-trees; measured process-wide, so concurrent sessions share it).
    A statement that writes is stopped ``write_reserve`` (a share of ``timeout_s``) before the
    deadline: SQLite then undoes what it wrote, which takes time roughly in proportion to it
    (about a quarter of the writing time here), so the step still ends within its budget.
    """

    timeout_s: float = None  # type: ignore[assignment]  # (None: wall_cap_s(max_vm_steps))
    max_rows: int = 10_000
    max_bytes: int = 4_000_000
    max_sql_chars: int = 100_000
    max_value_bytes: int = 1_000_000
    progress_steps: int = 1_000
    max_vm_steps: int | None = 100_000_000
    max_growth_bytes: int = 64_000_000
    max_statement_memory_bytes: int = 192_000_000
    watchdog_grace_s: float = 0.05
    write_reserve: float = 0.2

    def __post_init__(self) -> None:
        if self.timeout_s is None:
            object.__setattr__(self, "timeout_s", wall_cap_s(self.max_vm_steps))
