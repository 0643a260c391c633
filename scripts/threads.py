#!/usr/bin/env python3
"""Time to reach a fixed depth with 1 and 2 (or more) threads on the bench positions.

For each thread count and each position of src/bench.fen: `ucinewgame`, `position fen`,
`go depth D`; the time until `bestmove` is measured. Prints per-thread-count totals, the
speed-up, and the summed nodes (lazy SMP searches more nodes per depth; the speed-up is what
counts).

Example:
  scripts/threads.py --depth 12 --threads 1 2
"""
import os
import re
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import common  # noqa: E402  (scripts/common.py: the shared flags)
from uci_engine import UciEngine  # noqa: E402

ROOT = common.ROOT


def run(engine, threads, depth, fens, hash_mb):
    """Summed time to `bestmove` and nodes of `go depth` on each of `fens`."""
    eng = UciEngine([engine])
    eng.uci({"Threads": threads, "Hash": hash_mb})
    total_time = 0.0
    total_nodes = 0
    for fen in fens:
        eng.send("ucinewgame")
        eng.send(f"position fen {fen}")
        eng.sync()
        t0 = eng.send(f"go depth {depth}")
        t, _, lines = eng.until("bestmove", timeout=3600)
        nodes = [int(m.group(1)) for m in map(lambda l: re.search(r" nodes (\d+)", l), lines) if m]
        total_time += t - t0
        total_nodes += nodes[-1] if nodes else 0
    eng.quit()
    return total_time, total_nodes


def main():
    ap = common.parser(__doc__)
    common.add(ap, engine=True)
    ap.add_argument("--depth", type=int, default=12)
    ap.add_argument("--threads", type=int, nargs="+", default=[1, 2])
    ap.add_argument("--hash", type=int, default=64)
    args = ap.parse_args()
    args.engine = common.need_engine(args.engine)
    fens = [l.strip() for l in open(os.path.join(ROOT, "src", "bench.fen")) if l.strip() and not l.startswith("#")]
    base = None
    print(f"{len(fens)} bench positions, go depth {args.depth}, Hash {args.hash} MB")
    for t in args.threads:
        secs, nodes = run(args.engine, t, args.depth, fens, args.hash)
        base = base or secs
        print(f"  Threads {t}: {secs:7.2f} s, {nodes:>11} nodes, {nodes / secs:>10.0f} nps, "
              f"time-to-depth speed-up {base / secs:.2f}x")
    return 0


if __name__ == "__main__":
    sys.exit(main())
