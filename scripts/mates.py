#!/usr/bin/env python3
"""Run the crazyhouse mate suite through UCI and count the mates an engine proves.

For each case (`<FEN> ;mate N ;bm MOVE ;id NAME`) the engine gets `ucinewgame`,
`position fen <FEN>` and `go movetime <ms>` (1 thread). A case is *solved* when the last
exact `score mate M` before `bestmove` has 1 <= M <= N and the best move is the listed one; it is
*mate found* when M <= N with any first move (other mates can be just as short).

The engine defaults to this checkout's target/release/madhouse; --engine runs another build
or another UCI engine (with --variant-option for Fairy-Stockfish).

Examples:
  scripts/mates.py tests/data/zh-mates.epd
  scripts/mates.py tests/data/zh-mates.epd --engine /tmp/base/madhouse
  scripts/mates.py tests/data/zh-mates.epd --variant-option --engine /usr/games/fairy-stockfish
  scripts/mates.py tests/data/zh-mates.epd --option MATE_SOLVER_MAX_REPLIES=6 --engine target/tune/release/madhouse
"""
import os
import re
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import common  # noqa: E402  (scripts/common.py: the shared flags)
from uci_engine import UciEngine  # noqa: E402


def cases(path):
    with open(path, encoding="utf-8") as f:
        for line in f:
            line = line.strip()
            if not line or line.startswith("#"):
                continue
            fen, *ops = [p.strip() for p in line.split(";")]
            d = {}
            for op in ops:
                k, _, v = op.partition(" ")
                d[k] = v.strip()
            yield fen, int(d["mate"]), d["bm"], d.get("id", "?")


def main():
    ap = common.parser(__doc__)
    common.add(ap, engine=True, engine_help="the UCI engine to test (default: Madhouse, "
               f"{common.shown(common.ENGINE)})")
    ap.add_argument("suite", help="EPD mate suite, e.g. tests/data/zh-mates.epd")
    ap.add_argument("--movetime", type=int, default=100)
    ap.add_argument("--nodes", type=int, help="search a node budget instead (deterministic, for tuning)")
    ap.add_argument("--variant-option", action="store_true", help="send UCI_Variant crazyhouse (Fairy-Stockfish)")
    ap.add_argument("--option", action="append", default=[],
                    help="UCI option NAME=VALUE, e.g. a tunable of the tuning build (repeatable)")
    ap.add_argument("--verbose", action="store_true")
    args = ap.parse_args()
    engine = common.need_engine(args.engine)
    common.need_file(args.suite, "suite")

    e = UciEngine([engine])
    options = {"Threads": 1}
    if args.variant_option:
        options["UCI_Variant"] = "crazyhouse"
    options.update(o.split("=", 1) for o in args.option)
    e.uci(options)
    total = solved = found = 0
    for fen, n, bm, name in cases(args.suite):
        total += 1
        e.send("ucinewgame")
        e.sync()
        e.send(f"position fen {fen}")
        go = f"go nodes {args.nodes}" if args.nodes else f"go movetime {args.movetime}"
        _, last, lines = e.until("bestmove", send=go)
        best = last.split()[1]
        mate = None
        for l in lines:
            if l.startswith("info") and " score " in l and "bound" not in l:
                m = re.search(r" score mate (-?\d+)", l)
                mate = int(m.group(1)) if m else None
        ok_mate = mate is not None and 1 <= mate <= n
        found += ok_mate
        solved += ok_mate and best == bm
        if args.verbose or not ok_mate:
            print(f"{name:28} mate {n} bm {bm:6} -> best {best:6} score mate {mate}")
    e.quit()
    print(f"Mate found within the stated distance: {found}/{total}")
    print(f"Solved (mate within distance and the listed first move): {solved}/{total}")


if __name__ == "__main__":
    sys.exit(main())
