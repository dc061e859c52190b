"""Progress lines for every phase of a training run (log ``clarisql.training``, INFO).

A run announces each phase (``[2/4] SFT warm start``) and its end with the time it took; long
loops inside a phase report as they go: trainer steps (:class:`StepProgress`, a
``transformers.TrainerCallback``: step, loss or reward, seconds per step, time left), oracle
trajectory collection and held-out evaluation (:func:`every`: about ten lines per loop, and the
first and last item). ``clarisql train`` sends the log to stderr.
"""

from __future__ import annotations

import logging
import time
from collections.abc import Sequence
from typing import Any

log = logging.getLogger("clarisql.training")


class Phases:
    """Numbered phases of one run: ``start(name)`` logs ``[k/N] name``, ``done()`` its time."""

    def __init__(self, names: Sequence[str]) -> None:
        self.names = list(names)
        self._t0 = time.perf_counter()
        self._started: dict[str, tuple[float, float]] = {}
        self.seconds: dict[str, float] = {}
        #: CPU seconds of this process per phase (the wall time of a busy machine says little)
        self.cpu_seconds: dict[str, float] = {}

    def start(self, name: str, detail: str = "") -> None:
        k = self.names.index(name) + 1 if name in self.names else len(self.names)
        self._started[name] = (time.perf_counter(), time.process_time())
        log.info("[%d/%d] %s%s", k, len(self.names), name, f": {detail}" if detail else "")

    def done(self, name: str, detail: str = "") -> float:
        t0, c0 = self._started.get(name, (self._t0, 0.0))
        s, cpu = time.perf_counter() - t0, time.process_time() - c0
        self.seconds[name], self.cpu_seconds[name] = s, cpu
        total = time.perf_counter() - self._t0
        log.info(
            "      %s done in %.1f s (%.1f s CPU)%s (run %.1f s)",
            name,
            s,
            cpu,
            f", {detail}" if detail else "",
            total,
        )
        return s


def every(n: int, lines: int = 10) -> int:
    """Report every this many items of an ``n``-item loop (about ``lines`` reports)."""
    return max(1, -(-n // lines))


def report_item(what: str, i: int, n: int, t0: float, extra: str = "") -> None:
    """Log item ``i`` (1-based) of ``n`` when it is the first, the last or on the ``every`` grid."""
    if i == 1 or i == n or i % every(n) == 0:
        el = time.perf_counter() - t0
        left = el / i * (n - i)
        log.info("      %s %d/%d (%.1f s, ~%.0f s left)%s", what, i, n, el, left, extra)


def step_progress(label: str) -> Any:
    """A ``transformers.TrainerCallback`` that logs ``label`` step i/N with loss/reward and ETA."""
    from transformers import TrainerCallback

    class StepProgress(TrainerCallback):
        def __init__(self) -> None:
            self.t0 = time.perf_counter()

        def on_train_begin(self, args: Any, state: Any, control: Any, **kw: Any) -> None:
            self.t0 = time.perf_counter()
            log.info("      %s: %d steps", label, state.max_steps)

        def on_log(self, args: Any, state: Any, control: Any, logs: Any = None, **kw: Any) -> None:
            step, n = state.global_step, max(state.max_steps, 1)
            if not logs or not (step == 1 or step == n or step % every(n) == 0):
                return
            el = time.perf_counter() - self.t0
            shown = []
            for key in ("loss", "reward", "rewards/mean", "grad_norm"):
                if isinstance(logs.get(key), (int, float)):
                    shown.append(f"{key} {logs[key]:.3f}")
            log.info(
                "      %s step %d/%d %s(%.1f s/step, ~%.0f s left)",
                label,
                step,
                n,
                (" ".join(shown) + " ") if shown else "",
                el / max(step, 1),
                el / max(step, 1) * (n - step),
            )

    return StepProgress()


__all__ = ["Phases", "every", "report_item", "step_progress"]
