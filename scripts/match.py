#!/usr/bin/env python3
"""Play a cutechess-cli match between Madhouse and an opponent; print the score, the Elo
difference with its error bar, an optional SPRT verdict, and every forfeit or protocol problem.

--opponent CMD, by name (Debian/Ubuntu: `apt-get install fairy-stockfish sjeng sjaakii`; other
places: --fsf, --sjeng, --sjaakii PATH):
  fsf      Fairy-Stockfish 11.1 (UCI, UCI_Variant crazyhouse)
  sjaakii  SjaakII 1.4.1 (XBoard)
  sjeng    Sjeng 11.2 (XBoard; started from the PGN openings, as it ignores FEN holdings;
           run with a throwaway HOME so its learning files do not carry over between runs)
  self     Madhouse against Madhouse: the same binary (--engine), with --option settings for
           one side only, e.g. Threads=2 against the default 1
Any other value is an engine command, UCI unless --opponent-proto xboard: e.g. the previous
Madhouse build (for SPRT) or another engine.

Examples:
  scripts/match.py --opponent sjaakii --games 200 --tc 5+0.05 --concurrency 2
  scripts/match.py --opponent /tmp/base/madhouse --sprt 0 10 --games 4000
  scripts/match.py --opponent self --option Threads=2 --tc 2+0.02
  scripts/match.py --opponent fsf --proto xboard --games 50 --tc 2+0.02
  scripts/match.py --opponent /path/to/stockfish --tc 10+0.1 --opponent-tc 40+0.4
  scripts/match.py --opponent /path/to/stockfish --nodes 20000 --opponent-nodes 12000
"""
import math
import os
import re
import shutil
import subprocess
import sys
import tempfile

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import common  # noqa: E402  (scripts/common.py: the shared flags)

PROBLEMS = {
    "time forfeit": re.compile(r"loses on time|on time\}", re.I),
    "illegal move": re.compile(r"illegal move", re.I),
    "disconnect": re.compile(r"disconnects|connection stalls", re.I),
    "crash": re.compile(r"crash|terminated unexpectedly|Segmentation", re.I),
    "premature bestmove": re.compile(r"premature bestmove", re.I),
    "protocol warning": re.compile(r"Warning:|unknown command|Unknown command", re.I),
}


def sjeng_wrapper(tmp, sjeng):
    """A script that runs Sjeng with a fresh HOME (no learning files between games)."""
    path = os.path.join(tmp, "sjeng-fresh")
    with open(path, "w") as f:
        f.write(f'#!/bin/sh\nH=$(mktemp -d)\nHOME="$H" "{sjeng}" "$@"\nrc=$?\nrm -rf "$H"\nexit $rc\n')
    os.chmod(path, 0o755)
    return path


def elo(score):
    score = min(max(score, 1e-6), 1 - 1e-6)
    return -400 * math.log10(1 / score - 1)


def summarize(w, l, d):
    """Score, Elo and a 95% error bar from the trinomial standard error."""
    n = w + l + d
    if n == 0:
        return 0.0, 0.0, 0.0
    s = (w + d / 2) / n
    var = (w * (1 - s) ** 2 + l * (0 - s) ** 2 + d * (0.5 - s) ** 2) / n
    se = math.sqrt(var / n)
    lo, hi = elo(s - 1.96 * se), elo(s + 1.96 * se)
    return s, elo(s), (hi - lo) / 2


def main():
    ap = common.parser(__doc__)
    common.add(ap, engine=True, opponent="fsf, sjaakii, sjeng, self (Madhouse) or an engine command",
               opponent_default="sjaakii", cutechess=True, openings=True, concurrency=True,
               tools=("fsf", "sjeng", "sjaakii"))
    ap.add_argument("--name", default="madhouse")
    ap.add_argument("--proto", choices=["uci", "xboard"], default="uci", help="Madhouse's protocol")
    ap.add_argument("--option", action="append", default=[], help="Madhouse option, e.g. Threads=2")
    ap.add_argument("--opponent-proto", choices=["uci", "xboard"], help="the protocol of an --opponent command")
    ap.add_argument("--opponent-option", action="append", default=[])
    ap.add_argument("--tc", default="5+0.05")
    ap.add_argument("--opponent-tc", metavar="TC",
                    help="the opponent's clock, for time odds (e.g. --tc 10+0.1 --opponent-tc 40+0.4; default: --tc)")
    ap.add_argument("--nodes", type=int, help="fixed nodes per move instead of a clock (SPRT of logic changes)")
    ap.add_argument("--opponent-nodes", type=int, metavar="N",
                    help="the opponent's nodes per move, for node odds with --nodes (default: --nodes)")
    ap.add_argument("--games", type=int, default=200)
    ap.add_argument("--sprt", nargs=2, type=float, metavar=("ELO0", "ELO1"))
    ap.add_argument("--ponder", action="store_true")
    ap.add_argument("--pgnout")
    ap.add_argument("--log", help="write cutechess-cli's full output here (default: a file in the temporary directory)")
    ap.add_argument("--seed", type=int, default=None)
    args = ap.parse_args()
    if args.opponent_tc and args.nodes:
        ap.error("--opponent-tc gives the opponent a clock; it does not go with --nodes")
    if args.opponent_nodes is not None and args.nodes is None:
        ap.error("--opponent-nodes gives the opponent a node budget; it needs --nodes for Madhouse's")
    for flag, n in (("--nodes", args.nodes), ("--opponent-nodes", args.opponent_nodes)):
        if n is not None and n < 1:
            ap.error(f"{flag} must be at least 1, not {n}")

    engine = common.need_engine(args.engine)
    cutechess = common.find_cutechess(args.cutechess)
    opp = args.opponent
    openings = args.openings
    opp_opts = list(args.opponent_option)
    if opp == "fsf":
        opp_cmd, opp_proto, opp_name = common.need_tool("fsf", args.fsf), "uci", "fairy-stockfish"
        opp_opts.append("Threads=1")
    elif opp == "sjaakii":
        opp_cmd, opp_proto, opp_name = common.need_tool("sjaakii", args.sjaakii), "xboard", "sjaakii"
    elif opp == "sjeng":
        opp_cmd, opp_proto, opp_name = common.need_tool("sjeng", args.sjeng), "xboard", "sjeng"
        if openings == common.OPENINGS:
            openings = common.OPENINGS_PGN
    elif opp == "self":
        opp_cmd, opp_proto, opp_name = engine, "uci", "base"
    else:
        # A path (made absolute: cutechess-cli runs in a temporary directory) or a command.
        opp_cmd = os.path.abspath(opp) if os.path.exists(opp) else opp
        opp_proto = "uci"
        opp_name = os.path.splitext(os.path.basename(opp.split()[0]))[0] or "opponent"
        if opp_name == args.name:
            opp_name = "base"
    opp_proto = args.opponent_proto or opp_proto
    openings = common.need_file(openings, "--openings")
    fmt = "pgn" if openings.endswith(".pgn") else "epd"
    tmp = tempfile.mkdtemp(prefix="madhouse-match-")
    if opp == "sjeng":
        opp_cmd = sjeng_wrapper(tmp, opp_cmd)

    cmd = [cutechess, "-variant", "crazyhouse"]
    mine = ["-engine", f"name={args.name}", f"cmd={engine}", f"proto={args.proto}"]
    mine += [f"option.{o}" for o in args.option]
    theirs = ["-engine", f"name={opp_name}", f"cmd={opp_cmd}", f"proto={opp_proto}"]
    theirs += [f"option.{o}" for o in opp_opts]
    if args.opponent_tc:
        # Time odds: each engine's own clock instead of one for both.
        mine.append(f"tc={args.tc}")
        theirs.append(f"tc={args.opponent_tc}")
    if args.nodes:
        # Each engine's own node budget (node odds when --opponent-nodes differs).
        mine.append(f"nodes={args.nodes}")
        theirs.append(f"nodes={args.opponent_nodes or args.nodes}")
    cmd += mine + theirs
    if args.nodes:
        cmd += ["-each", "tc=inf", f"dir={tmp}"]
    elif args.opponent_tc:
        cmd += ["-each", "timemargin=0", f"dir={tmp}"]
    else:
        cmd += ["-each", f"tc={args.tc}", "timemargin=0", f"dir={tmp}"]
    if args.ponder:
        cmd += ["-each", "ponder"]
    cmd += ["-openings", f"file={openings}", f"format={fmt}", "order=random", "-repeat"]
    cmd += ["-games", "2", "-rounds", str(max(1, args.games // 2)), "-concurrency", str(args.concurrency)]
    cmd += ["-recover", "-ratinginterval", "20"]
    if args.seed is not None:
        cmd += ["-srand", str(args.seed)]
    if args.sprt:
        cmd += ["-sprt", f"elo0={args.sprt[0]}", f"elo1={args.sprt[1]}", "alpha=0.05", "beta=0.05"]
    if args.pgnout:
        # cutechess-cli runs in a temporary directory that is removed at the end: a relative
        # path is taken from where this script was started.
        cmd += ["-pgnout", os.path.abspath(args.pgnout)]
    print(" ".join(cmd), flush=True)

    problems = {k: 0 for k in PROBLEMS}
    w = l = d = 0
    sprt_line = None
    log_path = args.log or os.path.join(tempfile.gettempdir(), f"madhouse-match-{os.getpid()}.log")
    log = open(log_path, "w")
    print(f"cutechess-cli output: {log_path}", flush=True)
    proc = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, cwd=tmp)
    for line in proc.stdout:
        log.write(line)
        log.flush()
        m = re.match(r"Score of (\S+) vs (\S+): (\d+) - (\d+) - (\d+)", line)
        if m:
            w, l, d = int(m.group(3)), int(m.group(4)), int(m.group(5))
            if m.group(1) != args.name:
                w, l = l, w
            print(line.rstrip(), flush=True)
        if line.startswith("SPRT:"):
            sprt_line = line.strip()
            print(sprt_line, flush=True)
        if line.startswith("Finished game"):
            for k, rx in PROBLEMS.items():
                if rx.search(line):
                    problems[k] += 1
                    print("PROBLEM:", line.rstrip(), flush=True)
        elif any(rx.search(line) for k, rx in PROBLEMS.items() if k in ("protocol warning", "crash", "disconnect")):
            problems["protocol warning"] += 1
            print("PROBLEM:", line.rstrip(), flush=True)
    proc.wait()
    shutil.rmtree(tmp, ignore_errors=True)

    s, e, err = summarize(w, l, d)
    print()
    limit = f"{args.nodes} nodes/move" if args.nodes else args.tc
    if args.opponent_nodes:
        limit = f"{args.nodes} against {args.opponent_nodes} nodes/move"
    if args.opponent_tc:
        limit = f"{args.tc} against {args.opponent_tc}"
    print(f"Result: {args.name} vs {opp_name} at {limit}: +{w} -{l} ={d} ({w + l + d} games)")
    print(f"Score: {100 * s:.1f}%  Elo: {e:+.1f} +/- {err:.1f} (95%)")
    if sprt_line:
        print(sprt_line)
    print("Problems: " + ", ".join(f"{k} {v}" for k, v in problems.items()))
    return 0 if sum(problems.values()) == 0 else 1


if __name__ == "__main__":
    sys.exit(main())
