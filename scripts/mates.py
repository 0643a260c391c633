#!/usr/bin/env python3
"""Run the crazyhouse mate suite through UCI and count the mates an engine proves.

For each case (`<FEN> ;mate N ;bm MOVE ;id NAME`) the engine gets `ucinewgame`,
`position fen <FEN>` and `go movetime <ms>` (1 thread). A case is *solved* when the last
exact `score mate M` before `bestmove` has 1 <= M <= N and the best move is the listed one; it is
*mate found* when M <= N with any first move (other mates can be just as short).

Examples:
  scripts/mates.py tests/data/zh-mates.epd -- target/release/madhouse
  scripts/mates.py tests/data/zh-mates.epd --variant-option -- /usr/games/fairy-stockfish
"""
import argparse
import queue
import re
import subprocess
import sys
import threading
import time


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


class Engine:
    def __init__(self, cmd):
        self.p = subprocess.Popen(cmd, stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True, bufsize=1)
        self.q = queue.Queue()
        threading.Thread(target=self._pump, daemon=True).start()

    def _pump(self):
        for line in self.p.stdout:
            self.q.put(line.strip())
        self.q.put(None)

    def send(self, s):
        self.p.stdin.write(s + "\n")
        self.p.stdin.flush()

    def until(self, pred, timeout=30):
        end = time.time() + timeout
        lines = []
        while True:
            line = self.q.get(timeout=max(0.01, end - time.time()))
            if line is None:
                raise RuntimeError("engine exited")
            lines.append(line)
            if pred(line):
                return lines


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("suite")
    ap.add_argument("--movetime", type=int, default=100)
    ap.add_argument("--nodes", type=int, help="search a node budget instead (deterministic, for tuning)")
    ap.add_argument("--variant-option", action="store_true", help="send UCI_Variant crazyhouse (Fairy-Stockfish)")
    ap.add_argument("--verbose", action="store_true")
    ap.add_argument("cmd", nargs="+")
    args = ap.parse_args()

    e = Engine(args.cmd)
    e.send("uci")
    e.until(lambda l: l == "uciok")
    e.send("setoption name Threads value 1")
    if args.variant_option:
        e.send("setoption name UCI_Variant value crazyhouse")
    total = solved = found = 0
    for fen, n, bm, name in cases(args.suite):
        total += 1
        e.send("ucinewgame")
        e.send("isready")
        e.until(lambda l: l == "readyok")
        e.send(f"position fen {fen}")
        e.send(f"go nodes {args.nodes}" if args.nodes else f"go movetime {args.movetime}")
        lines = e.until(lambda l: l.startswith("bestmove"))
        best = lines[-1].split()[1]
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
    e.send("quit")
    print(f"Mate found within the stated distance: {found}/{total}")
    print(f"Solved (mate within distance and the listed first move): {solved}/{total}")


if __name__ == "__main__":
    sys.exit(main())
