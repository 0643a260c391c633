#!/usr/bin/env python3
"""Speed of Madhouse next to Fairy-Stockfish, in the same run on the same positions.

perft:  `go perft 5` through UCI on the crazyhouse start position and zh-middlegame, single
        thread; nodes per second of each engine and the ratio.
bench:  Madhouse `bench <depth>` and Fairy-Stockfish `bench 16 1 <fsf-depth> <file> depth` on
        Madhouse's bench positions (comments removed); nodes per second and the ratio.

Example:
  scripts/speed.py --engine target/release/madhouse --fsf /usr/games/fairy-stockfish
"""
import os
import re
import subprocess
import sys
import tempfile

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import common  # noqa: E402  (scripts/common.py: the shared flags)
from uci_engine import UciEngine  # noqa: E402

ROOT = common.ROOT
PERFT = [
    ("startpos", "startpos"),
    ("zh-middlegame", "fen r1bqk2r/pppp1ppp/2n1p3/4P3/1b1Pn3/2NB1N2/PPP2PPP/R1BQK2R[] b KQkq - 0 1"),
]


def uci_perft(cmd, position, depth, variant):
    """`go perft depth` in `position` through UCI: (nodes, seconds)."""
    eng = UciEngine(cmd)
    eng.uci({"UCI_Variant": "crazyhouse"} if variant else None)
    nodes, secs, _ = eng.perft(f"position {position}", depth)
    eng.quit()
    return nodes, secs


def main():
    ap = common.parser(__doc__)
    common.add(ap, engine=True, tools=("fsf",))
    ap.add_argument("--perft-depth", type=int, default=5)
    ap.add_argument("--bench-depth", type=int, default=10)
    ap.add_argument("--fsf-bench-depth", type=int, default=13)
    ap.add_argument("--skip-bench", action="store_true")
    args = ap.parse_args()
    args.engine = common.need_engine(args.engine)
    args.fsf = common.need_tool("fsf", args.fsf)

    print(f"perft {args.perft_depth}, single thread")
    for name, pos in PERFT:
        n1, t1 = uci_perft([args.engine], pos, args.perft_depth, False)
        n2, t2 = uci_perft([args.fsf], pos, args.perft_depth, True)
        if n1 != n2:
            print(f"  {name}: node counts differ: madhouse {n1}, fairy-stockfish {n2}")
        r1, r2 = n1 / t1, n2 / t2
        print(f"  {name:14} nodes {n1:>11}  madhouse {t1:7.3f} s {r1 / 1e6:8.1f} Mnps | "
              f"fairy-stockfish {t2:7.3f} s {r2 / 1e6:6.1f} Mnps | ratio {r1 / r2:5.1f}x")

    if args.skip_bench:
        return 0
    src = os.path.join(ROOT, "src", "bench.fen")
    fens = [l.strip() for l in open(src) if l.strip() and not l.startswith("#")]
    with tempfile.NamedTemporaryFile("w", suffix=".fen", delete=False) as f:
        f.write("\n".join(fens) + "\n")
        fenfile = f.name
    out = subprocess.run([args.engine, "bench", str(args.bench_depth)], capture_output=True, text=True).stdout
    mn = int(re.search(r"Nodes searched: (\d+)", out).group(1))
    mnps = int(re.search(r"Nodes/second: (\d+)", out).group(1))
    p = subprocess.run([args.fsf], input=f"setoption name UCI_Variant value crazyhouse\n"
                       f"bench 16 1 {args.fsf_bench_depth} {fenfile} depth\nquit\n",
                       capture_output=True, text=True)
    text = p.stdout + p.stderr
    fn = int(re.search(r"Nodes searched\s*:\s*(\d+)", text).group(1))
    fnps = int(re.search(r"Nodes/second\s*:\s*(\d+)", text).group(1))
    os.unlink(fenfile)
    print(f"bench on {len(fens)} positions, single thread")
    print(f"  madhouse        depth {args.bench_depth:2}: {mn:>11} nodes {mnps:>9} nps")
    print(f"  fairy-stockfish depth {args.fsf_bench_depth:2}: {fn:>11} nodes {fnps:>9} nps")
    print(f"  nps ratio madhouse / fairy-stockfish: {mnps / fnps:.2f}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
