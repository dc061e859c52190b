"""Synthesis work in forked child processes, where forking is safe.

Contract
- :func:`fork_safe`: this process may fork: Linux, no thread but the caller's (the sandbox's
  SQL watchdog excepted: a forked child starts its own), no module loaded whose native thread
  pools or device state do not survive a fork (:data:`NO_FORK_MODULES`). The rollout engines
  apply the same rule to their worker processes.
- :class:`Forked`: ``fn(*args)`` in one forked child; :meth:`Forked.result` is its value, or
  ``None`` when the child failed (the caller then does the work itself). :meth:`Forked.start`
  gives ``None`` where forking is unsafe.
- :func:`fork_pool`: a process pool of forked workers (``None`` where forking is unsafe), for
  ``map`` over independent jobs whose results come back in order.
- Why processes: the synthesizer's stages are as much Python as SQLite, and threads of one
  process share its GIL (a thread returning from SQLite waits for it while another runs Python),
  so on threads alone two cores stay half idle. Whatever runs in a child is a pure function of
  what it inherits at the fork, so the output is the same as in-process, byte for byte.
"""

from __future__ import annotations

import os
import sys
import threading
from collections.abc import Callable
from concurrent.futures import ProcessPoolExecutor
from typing import Any

#: Modules whose native threads or device state do not survive a fork once loaded.
NO_FORK_MODULES = ("torch", "tensorflow", "jax", "vllm")
#: the sandbox's watchdog thread (a forked child starts its own: envs/sandbox/limits.py)
_WATCHDOG = "clarisql-sql-watchdog"


def fork_safe() -> bool:
    """Whether this process may fork (see the module docstring)."""
    if not sys.platform.startswith("linux") or not hasattr(os, "fork"):
        return False
    if any(m in sys.modules for m in NO_FORK_MODULES):
        return False
    me = threading.current_thread()
    return all(t is me or t.name == _WATCHDOG for t in threading.enumerate())


def _flush() -> None:
    for stream in (sys.stdout, sys.stderr):  # (a child must not print this buffer again)
        try:
            stream.flush()
        except (AttributeError, OSError, ValueError):
            pass


class Forked:
    """``fn(*args)`` in a forked child process (see the module docstring)."""

    def __init__(self, proc: Any, conn: Any):
        self.proc, self.conn = proc, conn

    @classmethod
    def start(cls, fn: Callable[..., Any], *args: Any) -> Forked | None:
        """The child running ``fn(*args)``; ``None`` where forking is unsafe or fails."""
        if not fork_safe():
            return None
        import multiprocessing as mp

        ctx = mp.get_context("fork")
        mine, theirs = ctx.Pipe(duplex=False)
        _flush()
        proc = ctx.Process(target=_call, args=(theirs, fn, args), name="synth-fork")
        try:
            proc.start()
        except OSError:
            mine.close()
            return None
        finally:
            theirs.close()
        return cls(proc, mine)

    def result(self) -> tuple[Any] | None:
        """``(fn's value,)``; ``None`` if the child failed (raised, died, sent nothing)."""
        try:
            got = self.conn.recv()
        except (EOFError, OSError):
            got = None
        self.close()
        return (got[1],) if got is not None and got[0] == "ok" else None

    def close(self) -> None:
        """Stop the child (if still running) and reap it. Idempotent."""
        self.conn.close()
        if self.proc.is_alive():
            self.proc.kill()
        self.proc.join()


def _call(conn: Any, fn: Callable[..., Any], args: tuple) -> None:
    """In the child: ``fn(*args)``, sent to the parent (``("failed", why)`` on any error)."""
    try:
        got = fn(*args)
        conn.send(("ok", got))
    except BaseException as e:  # (the parent does the work itself)
        try:
            conn.send(("failed", f"{type(e).__name__}: {e}"))
        except Exception:
            pass
    finally:
        conn.close()


def fork_pool(workers: int) -> ProcessPoolExecutor | None:
    """A pool of ``workers`` forked processes (the caller shuts it down), or ``None`` where
    forking is unsafe or ``workers < 1``."""
    if workers < 1 or not fork_safe():
        return None
    import multiprocessing as mp

    _flush()
    return ProcessPoolExecutor(workers, mp_context=mp.get_context("fork"))


__all__ = ["NO_FORK_MODULES", "Forked", "fork_pool", "fork_safe"]
