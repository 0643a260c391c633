#!/usr/bin/env python3
"""Nodes a second of two Madhouse builds, measured in pairs.

Each round runs `bench <depth>` of both builds at the same time, one on each of the first two
cores (pinned with `taskset` where it exists), and swaps the cores the next round. Both runs of
a pair share whatever else the machine is doing, so their ratio is steady where single runs
one after the other are not (on a virtual machine, runs of one build minutes apart differ by
20%). Prints each round's nodes a second and ratio, then the mean ratio, the lowest and the
highest. The two builds should search the same tree (equal `Nodes searched`): otherwise the
ratio compares different work, and the script stops unless --different-trees says that is
meant (a build against an older release whose search differs, as a speed target asks).

Example (a candidate against the head, datagen stopped first):
  scripts/nps_pair.py --engine target/release/madhouse --base /path/to/head/madhouse --rounds 8
"""
import os
import re
import shutil
import subprocess
import sys
import threading

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import common  # noqa: E402  (scripts/common.py: the shared flags)


def bench(engine, depth, core, out, key):
    """Runs `engine bench depth` pinned to `core` if possible; stores (nodes, nps) in out[key]."""
    cmd = [engine, "bench", str(depth)]
    if core is not None:
        cmd = ["taskset", "-c", str(core)] + cmd
    text = subprocess.run(cmd, capture_output=True, text=True, check=True).stdout
    nodes = re.search(r"Nodes searched: (\d+)", text)
    nps = re.search(r"Nodes/second: (\d+)", text)
    if not nodes or not nps:
        sys.exit(f"{engine}: no bench result in its output:\n{text}")
    out[key] = (int(nodes.group(1)), int(nps.group(1)))


def main():
    ap = common.parser(__doc__)
    common.add(ap, engine=True)
    ap.add_argument("--base", metavar="PATH", required=True,
                    help="the build to compare against (the ratio is engine / base)")
    ap.add_argument("--rounds", type=int, default=6, help="pairs of runs (default: %(default)s)")
    ap.add_argument("--depth", type=int, default=12, help="bench depth (default: %(default)s)")
    ap.add_argument("--different-trees", action="store_true",
                    help="compare nodes a second even when the builds search different trees")
    args = ap.parse_args()
    engine = common.need_engine(args.engine)
    base = common.need_engine(args.base, "--base")
    pin = shutil.which("taskset") is not None and (os.cpu_count() or 1) >= 2
    if not pin:
        print("no taskset or fewer than two cores: the pairs run unpinned", file=sys.stderr)
    ratios = []
    print(f"bench {args.depth}: base nodes/s, engine nodes/s, engine / base")
    for i in range(args.rounds):
        cores = (i % 2, 1 - i % 2) if pin else (None, None)
        out = {}
        runs = [threading.Thread(target=bench, args=(base, args.depth, cores[0], out, "base")),
                threading.Thread(target=bench, args=(engine, args.depth, cores[1], out, "engine"))]
        for t in runs:
            t.start()
        for t in runs:
            t.join()
        if set(out) != {"base", "engine"}:
            sys.exit("a bench run failed")
        (bn, bnps), (en, enps) = out["base"], out["engine"]
        if bn != en and not args.different_trees:
            sys.exit(f"the builds search different trees ({bn} against {en} nodes): no ratio "
                     "(--different-trees compares them anyway)")
        ratios.append(enps / bnps)
        print(f"  {bnps:>9} {enps:>9}  {ratios[-1]:.4f}")
    mean = sum(ratios) / len(ratios)
    print(f"mean ratio {mean:.4f} over {len(ratios)} pairs (lowest {min(ratios):.4f}, "
          f"highest {max(ratios):.4f})")
    return 0


if __name__ == "__main__":
    sys.exit(main())
