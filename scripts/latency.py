#!/usr/bin/env python3
"""Measure how fast Madhouse answers `stop` and `ponderhit` over UCI.

For each thread count, on random game positions (--openings, continued with random legal
moves that the engine itself lists with `go perft 1`):

  infinite   `go infinite`, wait 5-300 ms, `stop`: time from `stop` to `bestmove`
  ponder     `go ponder wtime W btime W`, wait, `stop`: time from `stop` to `bestmove`
  ponderhit  `go ponder wtime W btime W`, wait, `ponderhit`: time from `ponderhit` to
             `bestmove`. With a tiny clock (W = 200 ms by default) the move must come soon;
             the goal for this kind is only that it comes within W ms.

It also checks that no `bestmove` arrives before `stop` or `ponderhit` (a premature bestmove,
which cutechess flags) and that every bestmove is one of the legal moves the engine listed.

Prints median, 95th percentile and maximum per kind and thread count. Goal for `stop`: median
under 10 ms and maximum under 50 ms. Exits 1 if a goal is missed or a check fails.

Examples:
  scripts/latency.py                               # 200 cycles per kind, Threads 1 and 2
  scripts/latency.py --cycles 30 --threads 1       # a quick check
  scripts/latency.py --engine /tmp/base/madhouse --cycles 500 --hash 64 --show-worst 5
"""
import os
import random
import statistics
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import common  # noqa: E402  (scripts/common.py: the shared flags)
from uci_engine import UciEngine  # noqa: E402


def random_positions(eng, n, rng, max_plies, openings):
    """`n` `position` commands: the start position or an opening of `openings`, plus random moves."""
    starts = ["startpos"]
    if openings:
        with open(openings) as f:
            # EPD: the first four FEN fields, then operations (`hmvc 0; fmvn 4; ...`).
            starts += ["fen " + " ".join(l.split()[:4]) for l in f if l.strip() and not l.startswith("#")]
    out = []
    while len(out) < n:
        start = rng.choice(starts)
        moves = []
        for _ in range(rng.randrange(max_plies + 1)):
            cmd = f"position {start}" + (" moves " + " ".join(moves) if moves else "")
            legal = eng.legal_moves(cmd)
            if not legal:
                break
            moves.append(rng.choice(legal))
        cmd = f"position {start}" + (" moves " + " ".join(moves) if moves else "")
        legal = eng.legal_moves(cmd)
        if legal:  # a position with a move to play
            out.append((cmd, set(legal)))
    return out


def pct(values, p):
    v = sorted(values)
    if not v:
        return float("nan")
    k = (len(v) - 1) * p / 100
    lo, hi = int(k), min(int(k) + 1, len(v) - 1)
    return v[lo] + (v[hi] - v[lo]) * (k - lo)


def cycle(eng, kind, position, legal, wait_ms, clock_ms, problems):
    """One cycle; returns the latency in ms."""
    eng.send(position)
    eng.sync()
    if kind == "infinite":
        eng.send("go infinite")
    else:
        eng.send(f"go ponder wtime {clock_ms} btime {clock_ms}")
    time.sleep(wait_ms / 1000)
    early = [l for _, l in eng.drain() if l.startswith("bestmove")]
    if early:
        problems.append(f"{kind}: premature '{early[0]}' before {'ponderhit' if kind == 'ponderhit' else 'stop'} ({position[:80]})")
        eng.sync()
        return None
    t0 = eng.send("ponderhit" if kind == "ponderhit" else "stop")
    t1, line, _ = eng.until("bestmove", timeout=60)
    toks = line.split()
    if len(toks) < 2 or toks[1] not in legal:
        problems.append(f"{kind}: illegal or malformed '{line}' in {position[:120]}")
    return (t1 - t0) * 1000


def main():
    ap = common.parser(__doc__)
    common.add(ap, engine=True, openings=True)
    ap.add_argument("--threads", type=int, nargs="+", default=[1, 2])
    ap.add_argument("--cycles", type=int, default=200, help="cycles per kind and thread count (default 200)")
    ap.add_argument("--kinds", nargs="+", default=["infinite", "ponder", "ponderhit"],
                    choices=["infinite", "ponder", "ponderhit"])
    ap.add_argument("--min-wait", type=int, default=5, help="ms before stop/ponderhit (default 5)")
    ap.add_argument("--max-wait", type=int, default=300, help="ms before stop/ponderhit (default 300)")
    ap.add_argument("--clock", type=int, default=200, help="wtime/btime of the ponder searches, ms (default 200)")
    ap.add_argument("--hash", type=int, default=16)
    ap.add_argument("--positions", type=int, default=100, help="distinct random positions (default 100)")
    ap.add_argument("--max-plies", type=int, default=60, help="random moves after the opening (default 60)")
    ap.add_argument("--median-goal", type=float, default=10.0)
    ap.add_argument("--max-goal", type=float, default=50.0)
    ap.add_argument("--show-worst", type=int, default=3, help="list the N slowest cycles per row")
    ap.add_argument("--seed", type=int, default=1)
    args = ap.parse_args()

    args.engine = common.need_engine(args.engine)
    openings = common.need_file(args.openings, "--openings")
    rng = random.Random(args.seed)
    eng = UciEngine([args.engine])
    eng.uci({"Hash": args.hash, "Ponder": "true"})
    t = time.perf_counter()
    positions = random_positions(eng, args.positions, rng, args.max_plies, openings)
    print(f"{len(positions)} random positions in {time.perf_counter() - t:.1f} s; "
          f"{args.cycles} cycles per kind, waits {args.min_wait}-{args.max_wait} ms, ponder clock {args.clock} ms",
          flush=True)

    rows = []
    problems = []
    failed = False
    for threads in args.threads:
        eng.send(f"setoption name Threads value {threads}")
        eng.sync()
        for kind in args.kinds:
            samples = []
            for _ in range(args.cycles):
                pos, legal = rng.choice(positions)
                wait = rng.uniform(args.min_wait, args.max_wait)
                ms = cycle(eng, kind, pos, legal, wait, args.clock, problems)
                if ms is not None:
                    samples.append((ms, pos, wait))
            lat = [s[0] for s in samples]
            med, p95, mx = statistics.median(lat), pct(lat, 95), max(lat)
            if kind == "ponderhit":
                ok = mx < args.clock
                goal = f"max < {args.clock} ms (the clock)"
            else:
                ok = med < args.median_goal and mx < args.max_goal
                goal = f"median < {args.median_goal:g}, max < {args.max_goal:g} ms"
            failed |= not ok
            rows.append((threads, kind, len(lat), med, p95, mx, "ok" if ok else "MISSED", goal))
            print(f"  Threads {threads} {kind:<9} n={len(lat):<4} median {med:7.2f}  p95 {p95:7.2f}  max {mx:8.2f} ms  "
                  f"{'ok' if ok else 'MISSED'}", flush=True)
            for ms, pos, wait in sorted(samples, reverse=True)[: args.show_worst]:
                print(f"      {ms:8.1f} ms after {wait:.0f} ms: {pos}")
    eng.quit()

    print()
    print(f"{'Threads':>7} {'kind':<10} {'n':>5} {'median':>9} {'p95':>9} {'max':>9}  result  goal")
    for threads, kind, n, med, p95, mx, res, goal in rows:
        print(f"{threads:>7} {kind:<10} {n:>5} {med:>9.2f} {p95:>9.2f} {mx:>9.2f}  {res:<6}  {goal}")
    if problems:
        print(f"\n{len(problems)} problems:")
        for p in problems[:20]:
            print("  " + p)
    panics = [l for l in eng.stderr if "panicked" in l]
    if panics:
        print("engine panics:", *panics[:5], sep="\n  ")
    return 1 if failed or problems or panics else 0


if __name__ == "__main__":
    sys.exit(main())
