"""The SQL watchdog wakes its thread only when a new deadline is earlier than its next wake-up;
an earlier deadline must still interrupt on time, and a cancelled one never."""

from __future__ import annotations

import time

import apsw
import pytest

from clarisql.envs.sandbox.limits import Watchdog

ENDLESS = "WITH RECURSIVE c(x) AS (SELECT 1 UNION ALL SELECT x+1 FROM c) SELECT count(*) FROM c"


def _bounded(conn: apsw.Connection, t0: float) -> apsw.Connection:
    """A safety stop at 6 s (so a watchdog that never fires fails the test, not hangs it)."""
    conn.set_progress_handler(lambda: time.monotonic() - t0 > 6.0, 10_000)
    return conn


def test_an_earlier_deadline_wakes_the_sleeping_thread() -> None:
    dog = Watchdog()
    idle, busy = apsw.Connection(":memory:"), apsw.Connection(":memory:")
    far = dog.watch(idle, time.monotonic() + 30)
    time.sleep(0.1)  # the thread is now asleep until the far deadline
    t0 = time.monotonic()
    dog.watch(busy, t0 + 0.2)
    with pytest.raises(apsw.InterruptError):
        _bounded(busy, t0).execute(ENDLESS).fetchall()
    assert time.monotonic() - t0 < 5.0
    dog.cancel(far)
    assert idle.execute("SELECT 1").fetchall() == [(1,)]


def test_later_deadlines_do_not_delay_an_earlier_one() -> None:
    dog = Watchdog()
    conns = [apsw.Connection(":memory:") for _ in range(3)]
    t0 = time.monotonic()
    dog.watch(conns[0], t0 + 0.2)
    tokens = [dog.watch(c, t0 + 20 + i) for i, c in enumerate(conns[1:])]  # no wake-up needed
    with pytest.raises(apsw.InterruptError):
        _bounded(conns[0], t0).execute(ENDLESS).fetchall()
    assert time.monotonic() - t0 < 5.0
    for t in tokens:
        dog.cancel(t)
    time.sleep(0.05)
    assert [c.execute("SELECT 2").fetchall() for c in conns[1:]] == [[(2,)], [(2,)]]


class _Probe:
    """Stands in for a connection: records when each interrupt started and ended."""

    def __init__(self) -> None:
        self.calls: list[tuple[float, float]] = []

    def interrupt(self) -> None:
        t0 = time.perf_counter()
        time.sleep(0.0005)  # widen the window in which a racing cancel() must wait
        self.calls.append((t0, time.perf_counter()))


def test_no_interrupt_is_issued_after_cancel_returns() -> None:
    # cancel() is lock-free unless the thread is firing: it must still never return while an
    # interrupt for its token is in progress, nor let one start later (deadlines due at once,
    # cancelled after 0 to 0.6 ms, so some cancels race the thread and some come after it fired)
    dog = Watchdog()
    seen: list[tuple[_Probe, float]] = []
    for i in range(300):
        probe = _Probe()
        token = dog.watch(probe, time.monotonic())
        end = time.perf_counter() + (i % 7) * 1e-4
        while time.perf_counter() < end:
            pass
        dog.cancel(token)
        seen.append((probe, time.perf_counter()))
    time.sleep(0.05)  # an interrupt wrongly left pending would be issued by now
    for probe, returned in seen:
        assert len(probe.calls) <= 1
        assert all(stop <= returned for _, stop in probe.calls)


def test_a_statement_after_many_cancelled_ones_is_interrupted_on_time() -> None:
    # the thread sleeps until the deadline armed last while nothing runs: a statement armed
    # after a stream of short (cancelled) ones, with the same budget, must still be stopped
    dog = Watchdog()
    short, busy = apsw.Connection(":memory:"), apsw.Connection(":memory:")
    end = time.monotonic() + 0.3
    while time.monotonic() < end:
        dog.cancel(dog.watch(short, time.monotonic() + 0.25))
    t0 = time.monotonic()
    dog.watch(busy, t0 + 0.25)
    with pytest.raises(apsw.InterruptError):
        _bounded(busy, t0).execute(ENDLESS).fetchall()
    assert time.monotonic() - t0 < 2.0
    assert short.execute("SELECT 3").fetchall() == [(3,)]


def test_a_deadline_armed_while_the_thread_scans_is_not_missed() -> None:
    """The thread snapshots the armed statements under its lock with its wake-up time set to
    ``-inf``; a statement armed after the snapshot reads that and takes the lock, which it gets
    once the thread waits, with the real wake-up time: it is stopped on time."""
    dog = Watchdog()
    conn = apsw.Connection(":memory:")
    with dog._lock:  # as the thread holds it while it scans (the first watch starts it)
        dog._thread = dog._thread or object()  # (no thread: the scan is simulated)
        dog._wake_at = float("-inf")
    calls = []
    dog._wake = calls.append  # type: ignore[method-assign]
    deadline = time.monotonic() + 0.2
    dog.watch(conn, deadline)
    assert calls == [deadline]
