#!/usr/bin/env python3
"""Stress Madhouse with cutechess-cli games across configurations and report every problem.

The grid (each axis can be narrowed on the command line):
  --tc        1+0.01 2+0.02
  --threads   1 2                 (UCI option Threads; XBoard `cores`)
  --ponder    off on
  --proto     uci xboard          (Madhouse's protocol)
  --opponent  sjaakii self        (SjaakII 1.4.1 over XBoard, or a second Madhouse process with
                                   the same protocol and threads; a path instead of `self`
                                   plays another Madhouse build the same way)

For each configuration, cutechess-cli plays --games-per-config games (from --openings, both
colours), with Madhouse's stderr kept. Then cutechess's output, the PGN and the
stderr are searched for: time forfeits ("loses on time"), illegal moves, crashes (engine
panics, "terminates"/"crashed"), disconnects and stalled connections, "Premature bestmove", and
every cutechess "Warning:". Problems are attributed to Madhouse or to the opponent.

Prints a table per configuration (games, W/L/D from Madhouse's side, in self-play the first
instance's, and the problem counts) and the problem lines. Exits 1 if Madhouse had any problem (or a game did not finish); the
opponent's own problems are shown but do not fail the run.

Mind the CPU: each game runs two engines, pondering doubles the load and Threads 2 doubles it
again; with more threads than cores, time forfeits measure the machine, not the engine. The
script warns when concurrency * threads * (2 if ponder) * 2 engines exceeds the cores.

Examples:
  scripts/stress.py --games-per-config 2 --tc 1+0.01 --threads 1 --ponder off   # 4 configs
  scripts/stress.py --games-per-config 20                                       # all 32
  scripts/stress.py --games-per-config 10 --proto xboard --opponent self --ponder on
  scripts/stress.py --games-per-config 4 --opponent /tmp/base/madhouse --out /tmp/stress
  scripts/stress.py --games-per-config 2 --tc 1+0.01 --proto uci --opponent sjaakii --debug --out /tmp/s

Logs, PGNs and Madhouse's stderr go to --out (by default a temporary directory, kept if there
were problems); with --debug, each cutechess.log has every engine line with its time in ms.
"""
import itertools
import os
import re
import shutil
import subprocess
import sys
import tempfile
import threading
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import common  # noqa: E402  (scripts/common.py: the shared flags)

FINISHED = re.compile(r"^Finished game (\d+) \((.+) vs (.+)\): (\S+) \{(.*)\}")
KINDS = ["forfeits", "illegal", "crashes", "disconnects", "premature", "warnings", "unfinished"]


def classify_reason(reason):
    """The problem kind a game-end reason names, if any."""
    r = reason.lower()
    if "loses on time" in r or "time forfeit" in r:
        return "forfeits"
    if "illegal move" in r:
        return "illegal"
    if "disconnects" in r or "connection stalls" in r or "stalled connection" in r or "disconnection" in r:
        return "disconnects"
    return None


def loser_name(result, reason, white, black):
    """Who the reason blames: from 'White loses on time' etc., or from the result."""
    if reason.startswith("White"):
        return white
    if reason.startswith("Black"):
        return black
    if result == "1-0":
        return black
    if result == "0-1":
        return white
    return None


def parse_pgn(path):
    """(Result, Termination, White, Black) per game of a PGN file."""
    games = []
    if not os.path.exists(path):
        return games
    cur = {}
    with open(path, errors="replace") as f:
        for line in f:
            m = re.match(r'\[(\w+) "(.*)"\]', line)
            if m:
                if m.group(1) == "Event" and cur:
                    games.append(cur)
                    cur = {}
                cur[m.group(1)] = m.group(2)
    if cur:
        games.append(cur)
    return games


def opponent_tag(opp):
    """The opponent as a configuration's name shows it: sjaakii, self, or a build's file name."""
    return opp if opp in ("sjaakii", "self") else "build-" + os.path.basename(opp)


def run_config(cfg, args, cutechess, outdir):
    tc, threads, ponder, proto, opp = cfg
    tag = f"tc{tc}-t{threads}-{'ponder' if ponder else 'noponder'}-{proto}-{opponent_tag(opp)}"
    d = os.path.join(outdir, tag)
    os.makedirs(d, exist_ok=True)
    pgn = os.path.join(d, "games.pgn")
    log = os.path.join(d, "cutechess.log")
    mine_err = os.path.join(d, "madhouse.stderr")
    names = ["madhouse"]
    threads_opt = f"option.Threads={threads}" if proto == "uci" else f"option.cores={threads}"
    cmd = [cutechess, "-variant", "crazyhouse"]
    cmd += ["-engine", "name=madhouse", f"cmd={os.path.abspath(args.engine)}", f"proto={proto}",
            threads_opt, f"stderr={mine_err}"]
    if opp == "sjaakii":
        cmd += ["-engine", "name=sjaakii", f"cmd={args.sjaakii}", "proto=xboard"]
    else:
        names.append("madhouse2")
        other = args.engine if opp == "self" else opp
        cmd += ["-engine", "name=madhouse2", f"cmd={other}",
                f"proto={proto}", threads_opt, f"stderr={os.path.join(d, 'madhouse2.stderr')}"]
    # One -each: cutechess-cli refuses a second one ("Multiple instances of option").
    cmd += ["-each", f"tc={tc}", f"timemargin={args.timemargin}", f"dir={d}"] + (["ponder"] if ponder else [])
    fmt = "pgn" if args.openings.endswith(".pgn") else "epd"
    cmd += ["-openings", f"file={args.openings}", f"format={fmt}", "order=random", "-repeat"]
    rounds = max(1, (args.games_per_config + 1) // 2)
    cmd += ["-games", "2", "-rounds", str(rounds), "-concurrency", str(args.concurrency)]
    cmd += ["-recover", "-pgnout", pgn, "-srand", str(args.seed)]
    if args.debug:
        cmd += ["-debug"]
    base = float(tc.split("+")[0])
    inc = float(tc.split("+")[1]) if "+" in tc else 0
    # Generous: every game to 200 plies, at full clock use, over the concurrency, plus startup.
    limit = 60 + rounds * 2 * (2 * base + 200 * inc + 5) * 3 / max(1, args.concurrency)

    t = time.time()
    with open(log, "w") as logf:
        proc = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, cwd=d)
        killer = threading.Timer(limit, proc.kill)  # a silent hang must not block us forever
        killer.start()
        out_lines = []
        for line in proc.stdout:
            logf.write(line)
            out_lines.append(line.rstrip("\n"))
        proc.wait()
        timed_out = not killer.is_alive()
        killer.cancel()
    secs = time.time() - t

    st = {"config": tag, "games": 0, "W": 0, "L": 0, "D": 0, "secs": secs}
    for k in KINDS:
        st[k] = 0
        st["opp_" + k] = 0
    lines = []

    def hit(kind, who_is_mine, text):
        key = kind if who_is_mine else "opp_" + kind
        st[key] += 1
        lines.append(("" if who_is_mine else "(opponent) ") + text)

    def mine(text):
        return any(n in text for n in names)

    last_warning_mine = True
    for line in out_lines:
        m = FINISHED.match(line)
        if m:
            _, white, black, result, reason = m.groups()
            st["games"] += 1
            me_white = white == "madhouse"
            if result == "1/2-1/2":
                st["D"] += 1
            elif result in ("1-0", "0-1"):
                won = (result == "1-0") == me_white
                st["W" if won else "L"] += 1
            else:
                hit("unfinished", True, line)
            kind = classify_reason(reason)
            if kind:
                loser = loser_name(result, reason, white, black)
                hit(kind, loser in names if loser else True, line)
            continue
        if line.startswith("Warning:"):
            if line.startswith("Warning: PV:"):
                is_mine = last_warning_mine  # continues an "Illegal PV move" warning
            elif mine(line):
                is_mine = True
            else:
                is_mine = opp not in line  # a warning naming no engine counts against us
            last_warning_mine = is_mine
            if "Premature bestmove" in line:
                hit("premature", is_mine, line)
            else:
                hit("warnings", is_mine, line)
            continue
        if re.match(r"\d+ [<>]", line):
            continue  # engine I/O in --debug mode
        low = line.lower()
        if "terminated" in low or "crashed" in low or "segmentation" in low:
            hit("crashes", mine(line), line)
    if timed_out:
        hit("unfinished", True, f"cutechess-cli did not finish within {limit:.0f} s; killed")
    expected = 2 * rounds
    if st["games"] < expected and not timed_out:
        hit("unfinished", True, f"only {st['games']} of {expected} games finished")

    # Engine stderr: panics and fatal errors are crashes; other lines are kept as warnings.
    for n in names:
        path = os.path.join(d, ("madhouse" if n == "madhouse" else "madhouse2") + ".stderr")
        if os.path.exists(path):
            with open(path, errors="replace") as f:
                for l in f:
                    l = l.rstrip("\n")
                    if "panicked" in l or "fatal runtime error" in l or "SIGSEGV" in l:
                        hit("crashes", True, f"{n} stderr: {l}")
                    elif re.search(r"\b(WARN|ERROR)\b", l):
                        hit("warnings", True, f"{n} stderr: {l}")

    # Cross-check the PGN: every game's Termination and result.
    games = parse_pgn(pgn)
    for g in games:
        term = g.get("Termination", "")
        if g.get("Result") == "*" or term == "unterminated":
            hit("unfinished", True, f"PGN: unfinished game {g.get('White')} vs {g.get('Black')}")
    pgn_problems = sum(1 for g in games if g.get("Termination") in ("time forfeit", "illegal move", "abandoned",
                                                                     "stalled connection"))
    logged = sum(st[k] + st["opp_" + k] for k in ("forfeits", "illegal", "disconnects"))
    if pgn_problems != logged:
        hit("warnings", True, f"PGN lists {pgn_problems} forfeits/illegal/abandoned games, the log {logged}")
    return st, lines


def main():
    ap = common.parser(__doc__)
    g = common.add(ap, engine=True, cutechess=True, openings=True, concurrency=True, tools=("sjaakii",))
    g.add_argument("--opponent", metavar="CMD", nargs="+", default=["sjaakii", "self"],
                   help="the opponents, an axis of the grid: sjaakii, self (Madhouse, --engine) or the "
                        "path of another Madhouse build (default: sjaakii self)")
    ap.add_argument("--games-per-config", type=int, default=10, help="games per configuration, rounded up to even")
    ap.add_argument("--tc", nargs="+", default=["1+0.01", "2+0.02"])
    ap.add_argument("--threads", type=int, nargs="+", default=[1, 2])
    ap.add_argument("--ponder", nargs="+", choices=["off", "on"], default=["off", "on"])
    ap.add_argument("--proto", nargs="+", choices=["uci", "xboard"], default=["uci", "xboard"])
    ap.add_argument("--timemargin", type=int, default=0, help="ms cutechess tolerates over the clock (default 0)")
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--out", help="keep logs, PGNs and engine stderr here (default: a temporary directory, "
                                  "kept only if there were problems)")
    ap.add_argument("--debug", action="store_true",
                    help="pass -debug to cutechess-cli: every engine line, timed, in each cutechess.log")
    ap.add_argument("--show", type=int, default=10, help="problem lines shown per configuration")
    args = ap.parse_args()

    args.engine = common.need_engine(args.engine)
    args.opponent = [o if o in ("sjaakii", "self") else common.need_engine(o, "--opponent") for o in args.opponent]
    if "sjaakii" in args.opponent:
        args.sjaakii = common.need_tool("sjaakii", args.sjaakii)
    args.openings = common.need_file(args.openings, "--openings")
    cutechess = common.find_cutechess(args.cutechess)
    configs = list(itertools.product(args.tc, args.threads, [p == "on" for p in args.ponder], args.proto,
                                     args.opponent))
    cores = os.cpu_count() or 1
    heavy = [c for c in configs if args.concurrency * c[1] * (2 if c[2] else 1) * 2 > cores]
    if heavy:
        print(f"note: {len(heavy)} of {len(configs)} configurations run more search threads than the {cores} cores "
              f"(concurrency {args.concurrency}); time forfeits there may be the machine's", flush=True)
    outdir = args.out or tempfile.mkdtemp(prefix="madhouse-stress-")
    os.makedirs(outdir, exist_ok=True)
    print(f"{len(configs)} configurations, {args.games_per_config} games each; logs in {outdir}", flush=True)

    results = []
    for cfg in configs:
        st, lines = run_config(cfg, args, cutechess, outdir)
        results.append((st, lines))
        bad = sum(st[k] for k in KINDS)
        print(f"  {st['config']:<40} {st['games']:>3} games  +{st['W']} -{st['L']} ={st['D']}  "
              f"{bad} problems  ({st['secs']:.0f} s)", flush=True)
        for l in lines[: args.show]:
            print("      " + l)
        if len(lines) > args.show:
            print(f"      ... {len(lines) - args.show} more in {os.path.join(outdir, st['config'])}")

    print()
    head = f"{'configuration':<40} {'games':>5} {'W':>4} {'L':>4} {'D':>4} " + " ".join(f"{k[:10]:>10}" for k in KINDS) \
        + f" {'opponent':>9}"
    print(head)
    print("-" * len(head))
    total_bad = 0
    for st, _ in results:
        opp = sum(st["opp_" + k] for k in KINDS)
        total_bad += sum(st[k] for k in KINDS)
        print(f"{st['config']:<40} {st['games']:>5} {st['W']:>4} {st['L']:>4} {st['D']:>4} "
              + " ".join(f"{st[k]:>10}" for k in KINDS) + f" {opp:>9}")
    games = sum(st["games"] for st, _ in results)
    print(f"\n{games} games; Madhouse problems: {total_bad}; opponent problems: "
          f"{sum(st['opp_' + k] for st, _ in results for k in KINDS)} (columns count Madhouse's; "
          f"'opponent' counts the opponent's, which do not fail the run)")
    if total_bad == 0 and not args.out:
        shutil.rmtree(outdir, ignore_errors=True)
    elif total_bad:
        print(f"logs, PGNs and engine stderr: {outdir}")
    return 1 if total_bad else 0


if __name__ == "__main__":
    sys.exit(main())
