#!/usr/bin/env python3
"""Measure Madhouse's resident memory over UCI (Linux: VmRSS and VmHWM from /proc/PID/status).

Phases:
  start     after `uci` / `isready`
  hash      for each Hash size (default 16 64 256 1024 MB): `setoption name Hash value N`,
            `isready`, `ucinewgame` (clears, so touches, the whole table), then a short search
            (`go depth 8 movetime 500`): RSS, peak, and RSS minus the table
  resize    Hash 1024 -> 16 -> 1024 -> 16 ... (5 rounds by default): RSS after each resize
            and search; RSS must stop growing (the second half of the rounds must be flat).
            Growth over the first rounds is reported as a note: glibc raises its mmap threshold
            when a large block is freed, so a later 16 MB table comes from the heap and the
            heap keeps some freed blocks (run with MALLOC_MMAP_THRESHOLD_=131072 to compare)
  games     300 short games in one process (`ucinewgame`, a random game position, `go nodes
            20000`): RSS sampled every 25 games; it must stay flat after the first samples

Fails (exit 1) if RSS ever exceeds the current Hash plus an overhead (default 64 MB), if RSS
still grows by more than --growth MB over the second half of the resize rounds, or if it grows
by more than --growth MB over the games (after the first 25). On other systems than Linux it prints that it is unsupported and exits 0.

Examples:
  scripts/memory.py                                  # the full run, about a minute
  scripts/memory.py --hash 16 64 --rounds 2 --games 60 --threads 2
  scripts/memory.py --engine /tmp/base/madhouse --overhead 48
"""
import os
import random
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import common  # noqa: E402  (scripts/common.py: the shared flags)
from uci_engine import UciEngine  # noqa: E402


def status(pid):
    """(VmRSS, VmHWM) of process `pid` in MB."""
    vals = {}
    with open(f"/proc/{pid}/status") as f:
        for line in f:
            k, _, v = line.partition(":")
            if k in ("VmRSS", "VmHWM"):
                vals[k] = int(v.split()[0]) / 1024
    return vals["VmRSS"], vals["VmHWM"]


def random_game(eng, rng, plies):
    """`position startpos moves ...` with up to `plies` random legal moves (from `go perft 1`)."""
    moves = []
    for _ in range(plies):
        legal = eng.legal_moves("position startpos moves " + " ".join(moves))
        if not legal:
            break
        moves.append(rng.choice(legal))
    return "position startpos moves " + " ".join(moves) if moves else "position startpos"


def main():
    ap = common.parser(__doc__)
    common.add(ap, engine=True)
    ap.add_argument("--hash", type=int, nargs="+", default=[16, 64, 256, 1024], help="Hash sizes, MB")
    ap.add_argument("--threads", type=int, default=1)
    ap.add_argument("--overhead", type=float, default=64.0, help="allowed RSS above Hash, MB (default 64)")
    ap.add_argument("--growth", type=float, default=8.0, help="allowed growth over resizes or games, MB (default 8)")
    ap.add_argument("--rounds", type=int, default=5, help="resize rounds (default 5)")
    ap.add_argument("--big", type=int, default=1024, help="large Hash of the resize rounds (default 1024)")
    ap.add_argument("--games", type=int, default=300, help="short games in one process (default 300)")
    ap.add_argument("--nodes", type=int, default=20000, help="nodes per game search (default 20000)")
    ap.add_argument("--seed", type=int, default=1)
    args = ap.parse_args()

    if not sys.platform.startswith("linux") or not os.path.exists("/proc/self/status"):
        print(f"memory.py: unsupported on {sys.platform} (needs Linux /proc/PID/status)")
        return 0
    args.engine = common.need_engine(args.engine)

    rng = random.Random(args.seed)
    eng = UciEngine([args.engine])
    rows = []
    problems = []
    hash_now = 16  # the engine's default

    def record(phase, what, hash_mb):
        rss, hwm = status(eng.pid)
        over = rss - hash_mb
        ok = rss <= hash_mb + args.overhead
        if not ok:
            problems.append(f"{phase} {what}: RSS {rss:.1f} MB > Hash {hash_mb} + {args.overhead:g} MB")
        rows.append((phase, what, hash_mb, rss, hwm, over, ok))
        print(f"  {phase:<7} {what:<28} Hash {hash_mb:>5}  RSS {rss:8.1f}  peak {hwm:8.1f}  RSS-Hash {over:7.1f} MB"
              f"{'' if ok else '  TOO MUCH'}", flush=True)
        return rss

    def search(cmd="go depth 8 movetime 500"):
        eng.until("bestmove", timeout=120, send=cmd)

    eng.send("uci")
    eng.until("uciok")
    eng.send(f"setoption name Threads value {args.threads}")
    eng.sync()
    print(f"engine {args.engine}, Threads {args.threads}")
    record("start", "after uci", hash_now)

    # Hash sizes, each with a cleared (touched) table and a short search.
    for mb in args.hash:
        eng.send(f"setoption name Hash value {mb}")
        eng.sync()
        hash_now = mb
        record("hash", f"{mb} MB set", mb)
        eng.send("ucinewgame")
        eng.send("position startpos moves e2e4 d7d5 e4d5 d8d5 b1c3")
        eng.sync()
        search()
        record("hash", f"{mb} MB, after a search", mb)

    # Resize rounds.
    by_size = {}
    for r in range(args.rounds):
        for mb in (args.big, 16):
            eng.send(f"setoption name Hash value {mb}")
            eng.send("ucinewgame")
            eng.sync()
            hash_now = mb
            search("go depth 6 movetime 300")
            rss = record("resize", f"round {r + 1}, {mb} MB", mb)
            by_size.setdefault(mb, []).append(rss)
    notes = []
    for mb, seq in by_size.items():
        if len(seq) < 3:
            notes.append(f"resize: {len(seq)} rounds are too few to tell a leak from allocator warm-up (use 3+)")
            break
        total = seq[-1] - seq[0]
        late = seq[-1] - seq[len(seq) // 2]
        if late > args.growth:
            problems.append(f"resize: RSS at Hash {mb} still grows: +{late:.1f} MB over rounds "
                            f"{len(seq) // 2 + 1}-{len(seq)} (+{total:.1f} MB in all)")
        elif total > args.growth:
            notes.append(f"resize: RSS at Hash {mb} grew {total:.1f} MB over the first rounds, then stayed "
                         f"flat (allocator retention, not a leak)")

    # Many short games in one process.
    eng.send("setoption name Hash value 16")
    eng.sync()
    hash_now = 16
    positions = [random_game(eng, rng, rng.randrange(0, 80)) for _ in range(40)]
    samples = []
    t = time.time()
    for g in range(1, args.games + 1):
        eng.send("ucinewgame")
        eng.send(rng.choice(positions))
        search(f"go nodes {args.nodes}")
        if g % 25 == 0 or g == args.games:
            samples.append((g, record("games", f"after {g} games", hash_now)))
    if len(samples) >= 3:
        base = samples[1][1]  # after warm-up
        grew = samples[-1][1] - base
        if grew > args.growth:
            problems.append(f"games: RSS grew {grew:.1f} MB from game {samples[1][0]} to {samples[-1][0]}")
    games_s = time.time() - t
    eng.quit()

    print()
    print(f"{'phase':<7} {'step':<28} {'Hash':>6} {'RSS':>9} {'peak':>9} {'RSS-Hash':>9}  ok")
    for phase, what, mb, rss, hwm, over, ok in rows:
        print(f"{phase:<7} {what:<28} {mb:>6} {rss:>9.1f} {hwm:>9.1f} {over:>9.1f}  {'yes' if ok else 'NO'}")
    print(f"\n{args.games} games in {games_s:.1f} s; RSS limit: Hash + {args.overhead:g} MB; growth limit {args.growth:g} MB")
    for n in notes:
        print("note: " + n)
    if problems:
        print("PROBLEMS:")
        for p in problems:
            print("  " + p)
        return 1
    print("no problems")
    return 0


if __name__ == "__main__":
    sys.exit(main())
