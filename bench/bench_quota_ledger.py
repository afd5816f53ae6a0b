"""How long does a quota take hold the ledger, and how long does a request wait for it?

    python bench/bench_quota_ledger.py                       # 2, 8 and 40 processes
    python bench/bench_quota_ledger.py --processes 40 --takes 200
    python bench/bench_quota_ledger.py --code /work/main     # another checkout's ledger

Each of --processes processes (the workers of `serve --workers N`, every one taking at once,
more than any server has) makes --takes quota takes on one ledger file in a temp dir, as fast
as it can, for its own identity; reported per process count: the wall time of one take (the
lock wait included: what a request waits) at the median, 99th percentile and worst. Then
the wait a request has when another process holds the lock (a ``sqlite3`` shell left in a
transaction): the old 10 s and the new ``BUSY_WAIT_S``, one take each. ``BUSY_WAIT_S`` must
sit far above the worst contended take and far below a lane's patience.
"""

from __future__ import annotations

import argparse
import multiprocessing
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

_CODE = sys.argv[sys.argv.index("--code") + 1] if "--code" in sys.argv else \
    str(Path(__file__).resolve().parents[1])
sys.path.insert(0, _CODE)

from mindgraph.errors import StoreError  # noqa: E402
from mindgraph.quotas import ledger as ledger_module  # noqa: E402
from mindgraph.quotas.ledger import QuotaLedger  # noqa: E402

BUSY_WAIT_S = getattr(ledger_module, "BUSY_WAIT_S", None)     # None: a checkout before it


def _worker(path: str, who: str, takes: int, start, out) -> None:
    ledger = QuotaLedger(Path(path))
    ledger.take("llm_calls", who, 1, 10**9, 3600.0)         # the file made, the schema read
    start.wait()
    times = []
    for _ in range(takes):
        began = time.perf_counter()
        ledger.take("llm_calls", who, 1, 10**9, 3600.0)
        times.append(time.perf_counter() - began)
    out.put(times)


def contended(processes: int, takes: int) -> list[float]:
    with tempfile.TemporaryDirectory() as tmp:
        path = str(Path(tmp) / "quotas.sqlite")
        QuotaLedger(Path(path)).take("llm_calls", "setup", 1, 1, 1.0)
        start = multiprocessing.Barrier(processes)
        out: multiprocessing.Queue = multiprocessing.Queue()
        workers = [multiprocessing.Process(target=_worker, args=(path, f"t/a{n}", takes,
                                                                   start, out))
                   for n in range(processes)]
        for worker in workers:
            worker.start()
        times = [t for _ in workers for t in out.get()]
        for worker in workers:
            worker.join()
        return times


HOLDER = ("import sqlite3, sys, time\ndb = sqlite3.connect(sys.argv[1], isolation_level=None)\n"
          "db.execute('BEGIN IMMEDIATE')\nprint('locked', flush=True)\ntime.sleep(60)\n")


def held(wait_s: float) -> float:
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / "quotas.sqlite"
        QuotaLedger(path).take("llm_calls", "setup", 1, 1, 1.0)
        holder = subprocess.Popen([sys.executable, "-c", HOLDER, str(path)],
                                  stdout=subprocess.PIPE, text=True)
        try:
            holder.stdout.readline()
            began = time.perf_counter()
            try:
                QuotaLedger(path, busy_wait_s=wait_s).take("llm_calls", "t/a", 1, 5, 3600.0)
            except StoreError:
                pass
            return time.perf_counter() - began
        finally:
            holder.terminate()
            holder.wait()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--processes", type=int, nargs="*", default=[2, 8, 40])
    parser.add_argument("--takes", type=int, default=100)
    parser.add_argument("--code", default=_CODE, help="the checkout whose ledger is measured")
    args = parser.parse_args()
    print(f"ledger of {args.code}")
    print(f"{'processes':>9} {'takes':>6} {'p50 ms':>8} {'p99 ms':>8} {'max ms':>8}")
    for processes in args.processes:
        times = sorted(contended(processes, args.takes))
        p99 = times[min(len(times) - 1, int(len(times) * 0.99))]
        print(f"{processes:>9} {len(times):>6} {statistics.median(times) * 1e3:>8.2f} "
              f"{p99 * 1e3:>8.2f} {times[-1] * 1e3:>8.2f}")
    if BUSY_WAIT_S is None:
        return
    for wait in (10.0, BUSY_WAIT_S):
        print(f"lock held by another process: a request waited {held(wait):.2f} s "
              f"(busy wait {wait:g} s)")


if __name__ == "__main__":
    main()
