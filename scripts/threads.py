#!/usr/bin/env python3
"""Time to reach a fixed depth with 1 and 2 (or more) threads on the bench positions.

For each thread count and each position of src/bench.fen: `ucinewgame`, `position fen`,
`go depth D`; the time until `bestmove` is measured. Prints per-thread-count totals, the
speed-up, and the summed nodes (lazy SMP searches more nodes per depth; the speed-up is what
counts).

With --movetime MS it measures instead how the threads of timed searches spread: each
position is searched for MS milliseconds with the largest --threads count, and the engine's
debug log (one line a search: each thread's completed depth, move and score, and the thread
whose move was played) is summed up: how often the helpers' moves differ from the main
thread's, the depth each helper completed relative to the main thread, and how often a
helper's move was played.

Example:
  scripts/threads.py --depth 12 --threads 1 2
  scripts/threads.py --movetime 250 --threads 2
"""
import collections
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


def spread(engine, threads, movetime, fens, hash_mb):
    """Timed searches of `fens` with `threads` threads: the engine's per-search debug lines
    of the threads' depths and moves, summed up as counters."""
    env = dict(os.environ, RUST_LOG="madhouse::search::smp=debug")
    eng = UciEngine([engine], env=env)
    eng.uci({"Threads": threads, "Hash": hash_mb})
    for fen in fens:
        eng.send("ucinewgame")
        eng.send(f"position fen {fen}")
        eng.sync()
        eng.until("bestmove", timeout=60 + movetime / 1000, send=f"go movetime {movetime}")
    eng.quit()
    counts = collections.Counter()
    searches = 0
    for line in eng.stderr:
        if "played: thread" not in line:
            continue
        searches += 1
        each = re.findall(r"(\d+): depth (-?\d+) (\S+) (-?\d+) nodes", line)
        main_depth, main_move = int(each[0][1]), each[0][2]
        for _, depth, move, _ in each[1:]:
            counts["helper moves differing" if move != main_move else "helper moves agreeing"] += 1
            diff = max(-3, min(3, int(depth) - main_depth))
            counts[f"helper depth {diff:+d} relative to main (clamped to 3)"] += 1
        counts[f"move played from thread {line.rsplit(' ', 1)[1]}"] += 1
    return searches, counts


def main():
    ap = common.parser(__doc__)
    common.add(ap, engine=True)
    ap.add_argument("--depth", type=int, default=12)
    ap.add_argument("--threads", type=int, nargs="+", default=[1, 2])
    ap.add_argument("--hash", type=int, default=64)
    ap.add_argument("--movetime", type=int, metavar="MS",
                    help="measure the threads' spread in timed searches instead (see above)")
    args = ap.parse_args()
    if args.movetime is not None and args.movetime < 1:
        ap.error(f"--movetime {args.movetime}: give milliseconds, at least 1")
    if args.movetime and max(args.threads) < 2:
        ap.error("--movetime measures how threads spread: give --threads 2 or more")
    args.engine = common.need_engine(args.engine)
    fens = [l.strip() for l in open(os.path.join(ROOT, "src", "bench.fen")) if l.strip() and not l.startswith("#")]
    if args.movetime:
        threads = max(args.threads)
        searches, counts = spread(args.engine, threads, args.movetime, fens, args.hash)
        print(f"{len(fens)} bench positions, go movetime {args.movetime}, Threads {threads}, "
              f"Hash {args.hash} MB: {searches} searches")
        for key in sorted(counts):
            print(f"  {key}: {counts[key]}")
        if not searches:
            print("threads.py: the engine logged no thread lines (a build before 5de1e90?)",
                  file=sys.stderr)
            return 1
        return 0
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
