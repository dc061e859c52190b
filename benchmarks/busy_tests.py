"""Run the test suite with every core saturated: a check that no test depends on an idle machine.

Run: ``python benchmarks/busy_tests.py [--burners N] [--max-minutes 40] [-- PYTEST ARGS...]``
(default: one CPU-bound burner process per core, then ``pytest -q -p no:cacheprovider tests``).

The burners are plain busy loops in their own processes, at the same priority as the tests,
each ending by itself at the deadline (``--max-minutes``) even if this script is killed; they are
stopped as soon as pytest returns. The exit status is pytest's. The load average while the tests
ran is printed at the end (a check that the machine really was saturated).
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
import time

_BURN = "import time, sys\nend = time.monotonic() + float(sys.argv[1])\nwhile time.monotonic() < end:\n    pass\n"


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--burners", type=int, default=os.cpu_count() or 2)
    ap.add_argument("--max-minutes", type=float, default=40.0)
    ap.add_argument("pytest_args", nargs="*", default=["-q", "-p", "no:cacheprovider", "tests"])
    args = ap.parse_args(argv)
    seconds = args.max_minutes * 60
    burners = [
        subprocess.Popen([sys.executable, "-c", _BURN, str(seconds)]) for _ in range(args.burners)
    ]
    t0 = time.monotonic()
    try:
        rc = subprocess.call(
            [sys.executable, "-m", "pytest", *args.pytest_args], timeout=seconds + 60
        )
    finally:
        for b in burners:
            b.terminate()
        for b in burners:
            b.wait(timeout=30)
    load = os.getloadavg() if hasattr(os, "getloadavg") else (float("nan"),) * 3
    print(
        f"busy_tests: pytest exit {rc} after {time.monotonic() - t0:.0f} s with "
        f"{args.burners} burner(s); load average {load[0]:.1f} / {load[1]:.1f} / {load[2]:.1f}"
    )
    return rc


if __name__ == "__main__":
    raise SystemExit(main())
