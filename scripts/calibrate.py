#!/usr/bin/env python3
"""Calibrate the strength limit: play the ladder of issue 15 and print the table of levels,
measured Elo, games and error bars for docs/strength-limit.md.

The ladder:
  1. anchors: the anchor level (default `Skill Level` 15) against Sjeng 11.2 (taken as 2300)
     and SjaakII 1.4.1 (taken as 2350), each match from --openings (Sjeng from
     --sjeng-openings, PGN, as it ignores holdings in setboard);
  2. rungs: each level against the next one down the list (default 19, 17, ..., 1, 0) and the
     strongest limited level (`UCI_LimitStrength` with `UCI_Elo` at its maximum, shown as
     level 20) against the top of the list; `--games` games a pair.
Elo differences are chained from the anchor level (its Elo is the inverse-variance mean of
the two anchor estimates); error bars are 95%, the chained ones adding the variances along
the chain (the anchors' own ratings are taken as exact).

Every match runs through scripts/match.py (cutechess-cli: --cutechess or $CUTECHESS) in chunks of
`--chunk` games; the state file records each finished chunk, so an interrupted run resumes
where it stopped when started again with the same arguments (`--table` only prints the
table from the state). The published calibration (docs/strength-limit.md) used the 400 match
openings (--openings zh-openings.epd --sjeng-openings zh-openings.pgn) and --concurrency 2.
Levels whose measured Elo is more than 100 from the mapping
(LEVEL_ELO in src/search/skill.rs) are flagged, and a corrected LEVEL_ELO is printed: fix the
mapping, not the table.

Examples:
  scripts/calibrate.py                                  # the full ladder, 100 games a pair
  scripts/calibrate.py --table                          # the table so far
  scripts/calibrate.py --levels 3,1 --anchor-level 3 --games 2 --chunk 2 --tc 2+0.02 \\
      --no-top --state /tmp/smoke.json                  # a smoke test: 6 games
"""
import json
import math
import os
import re
import subprocess
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import common  # noqa: E402  (scripts/common.py: the shared flags)
import match  # noqa: E402  (scripts/match.py: Elo and error bar of a score)
from uci_engine import UciEngine  # noqa: E402

ROOT = common.ROOT
ANCHORS = {"sjeng": 2300, "sjaakii": 2350}
TOP = 20  # the strongest limited level: UCI_LimitStrength with UCI_Elo at its maximum
FLAG_ELO = 100


def level_elo_table():
    """LEVEL_ELO from src/search/skill.rs (the mapping the option uses)."""
    text = open(os.path.join(ROOT, "src", "search", "skill.rs")).read()
    m = re.search(r"pub const LEVEL_ELO: \[i64; LEVEL_ROWS\] = \[([^\]]*)\]", text)
    if not m:
        sys.exit("LEVEL_ELO not found in src/search/skill.rs")
    return [int(x) for x in re.findall(r"-?\d+", m.group(1))]


def elo_max(engine):
    """UCI_Elo's maximum as the engine advertises it."""
    eng = UciEngine([engine])
    try:
        _, _, lines = eng.until(lambda l: l == "uciok", send="uci")
    finally:
        eng.quit()
    for l in lines:
        m = re.match(r"option name UCI_Elo type spin default \d+ min \d+ max (\d+)", l)
        if m:
            return int(m.group(1))
    sys.exit("the engine does not advertise UCI_Elo")


def level_options(level, top_elo):
    if level == TOP:
        return ["UCI_LimitStrength=true", f"UCI_Elo={top_elo}"]
    return [f"Skill Level={level}"]


def matches(args):
    """(key, level, opponent, opponent level or None) for every match of the ladder."""
    out = [(f"L{args.anchor_level}-{a}", args.anchor_level, a, None) for a in ANCHORS]
    levels = list(args.levels)
    if args.top:
        levels = [TOP] + levels
    for hi, lo in zip(levels, levels[1:]):
        out.append((f"L{hi}-L{lo}", hi, "self", lo))
    return out


def play_chunk(args, key, level, opponent, opp_level, games, seed, top_elo):
    """One chunk of a match through match.py; returns (wins, losses, draws, problems)."""
    cmd = [sys.executable, os.path.join(ROOT, "scripts", "match.py"), "--engine", args.engine,
           "--name", f"L{level}", "--opponent", opponent, "--games", str(games), "--tc", args.tc,
           "--concurrency", str(args.concurrency), "--seed", str(seed), "--cutechess", args.cutechess,
           "--openings", args.sjeng_openings if opponent == "sjeng" else args.openings,
           "--sjeng", args.sjeng, "--sjaakii", args.sjaakii,
           "--log", os.path.join(args.logdir, f"{key}-{seed}.log")]
    for o in level_options(level, top_elo):
        cmd += ["--option", o]
    if opp_level is not None:
        for o in level_options(opp_level, top_elo):
            cmd += ["--opponent-option", o]
    print("  " + " ".join(f"'{c}'" if " " in c else c for c in cmd), flush=True)
    proc = subprocess.run(cmd, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    m = re.search(r"^Result: .*: \+(\d+) -(\d+) =(\d+)", proc.stdout, re.M)
    if not m:
        print(proc.stdout[-3000:])
        sys.exit(f"{key}: match.py gave no result (exit {proc.returncode})")
    problems = re.search(r"^Problems: (.*)$", proc.stdout, re.M)
    problem_count = sum(int(n) for n in re.findall(r" (\d+)", problems.group(1))) if problems else 0
    return int(m.group(1)), int(m.group(2)), int(m.group(3)), problem_count


def load(path):
    if os.path.exists(path):
        with open(path) as f:
            return json.load(f)
    return {"config": None, "matches": {}}


def save(path, state):
    tmp = path + ".tmp"
    with open(tmp, "w") as f:
        json.dump(state, f, indent=1, sort_keys=True)
    os.replace(tmp, path)


def diff(rec):
    """Elo of the first side against the second and its standard error (Elo); None when no
    game was played or one side scored everything (the difference is unbounded)."""
    w, l, d = rec["w"], rec["l"], rec["d"]
    if w + l + d == 0 or w + d == 0 or l + d == 0:
        return None
    _, e, err95 = match.summarize(w, l, d)
    return e, err95 / 1.96


def solve(args, state):
    """Elo and standard error of every level reached from the anchors."""
    recs = state["matches"]
    est = []
    for a, rating in ANCHORS.items():
        d = diff(recs.get(f"L{args.anchor_level}-{a}", {"w": 0, "l": 0, "d": 0}))
        if d:
            est.append((rating + d[0], d[1]))
    if not est:
        return {}
    wsum = sum(1 / se ** 2 for _, se in est)
    anchor = sum(v / se ** 2 for v, se in est) / wsum
    elo = {args.anchor_level: (anchor, math.sqrt(1 / wsum))}
    rungs = [(k, lv, ol) for k, lv, opp, ol in matches(args) if ol is not None]
    changed = True
    while changed:
        changed = False
        for key, hi, lo in rungs:
            d = diff(recs.get(key, {"w": 0, "l": 0, "d": 0}))
            if not d:
                continue
            e, se = d
            if hi in elo and lo not in elo:
                elo[lo] = (elo[hi][0] - e, math.hypot(elo[hi][1], se))
                changed = True
            elif lo in elo and hi not in elo:
                elo[hi] = (elo[lo][0] + e, math.hypot(elo[lo][1], se))
                changed = True
    return elo


def table(args, state):
    mapping = level_elo_table()
    elo = solve(args, state)
    recs = state["matches"]
    tc = (state.get("config") or {}).get("tc", args.tc)
    print(f"\nStrength limit calibration, {tc}, 1 thread, Skill Seed 0; anchors "
          + ", ".join(f"{a} = {r}" for a, r in ANCHORS.items()) + "; error bars 95%\n")
    print("| level | option Elo (LEVEL_ELO) | measured Elo | 95% | games | matches |")
    print("|---|---|---|---|---|---|")
    flagged = []
    levels = sorted({lv for _, lv, _, _ in matches(args)} | {ol for *_, ol in matches(args) if ol is not None})
    for lv in sorted(levels, reverse=True):
        games = 0
        parts = []
        for key, hi, opp, lo in matches(args):
            if lv not in (hi, lo):
                continue
            rec = recs.get(key, {"w": 0, "l": 0, "d": 0, "games": 0})
            games += rec["games"]
            if rec["games"]:
                w, l, d = (rec["w"], rec["l"], rec["d"]) if lv == hi else (rec["l"], rec["w"], rec["d"])
                other = opp if lo is None else f"L{lo if lv == hi else hi}"
                parts.append(f"{other} +{w} -{l} ={d}")
        name = f"{lv} (UCI_Elo max)" if lv == TOP else str(lv)
        if lv in elo:
            e, se = elo[lv]
            shown = f"{e:.0f}"
            bar = f"+/- {1.96 * se:.0f}"
            if abs(e - mapping[lv]) > FLAG_ELO:
                flagged.append(lv)
                shown += " (!)"
        else:
            shown, bar = "not yet measured", ""
        print(f"| {name} | {mapping[lv]} | {shown} | {bar} | {games} | {'; '.join(parts)} |")
    problems = sum(r.get("problems", 0) for r in recs.values())
    print(f"\nForfeits, illegal moves, crashes and protocol warnings over all games: {problems}")
    for key, rec in recs.items():
        if rec["games"] and not diff(rec):
            print(f"warning: {key} ended +{rec['w']} -{rec['l']} ={rec['d']}: the Elo difference is "
                  "unbounded and left out; use closer rungs (--levels, --anchor-level)")
    if flagged:
        print(f"\nMore than {FLAG_ELO} Elo from the mapping: levels {flagged}. Corrected mapping "
              "(measured levels, interpolated between them, kept increasing):")
        print("pub const LEVEL_ELO: [i64; LEVEL_ROWS] = " + str(corrected(mapping, elo)) + ";")


def corrected(mapping, elo):
    """LEVEL_ELO with measured levels set and the rest interpolated (or shifted at the ends)."""
    known = sorted((lv, e) for lv, (e, _) in elo.items())
    out = []
    for lv in range(len(mapping)):
        below = [(l, e) for l, e in known if l <= lv]
        above = [(l, e) for l, e in known if l >= lv]
        if below and above:
            (l0, e0), (l1, e1) = below[-1], above[0]
            v = e0 if l1 == l0 else e0 + (e1 - e0) * (lv - l0) / (l1 - l0)
        elif below:
            v = below[-1][1] + mapping[lv] - mapping[below[-1][0]]
        elif above:
            v = above[0][1] + mapping[lv] - mapping[above[0][0]]
        else:
            v = mapping[lv]
        out.append(int(round(v)))
    for i in range(1, len(out)):
        out[i] = max(out[i], out[i - 1] + 1)
    return out


def main():
    ap = common.parser(__doc__)
    common.add(ap, engine=True, cutechess=True, openings=True, concurrency=True, tools=("sjeng", "sjaakii"))
    ap.add_argument("--sjeng-openings", metavar="FILE", default=common.OPENINGS_PGN,
                    help=f"Sjeng's openings, PGN (default: {common.shown(common.OPENINGS_PGN)})")
    ap.add_argument("--state", default=os.path.join(ROOT, "data", "calibration.json"))
    ap.add_argument("--logdir", help="cutechess logs (default: beside the state file)")
    ap.add_argument("--tc", default="10+0.1")
    ap.add_argument("--games", type=int, default=100, help="games a pair")
    ap.add_argument("--chunk", type=int, default=20, help="games between saves of the state")
    ap.add_argument("--anchor-level", type=int, default=15)
    ap.add_argument("--levels", default="19,17,15,13,11,9,7,5,3,1,0",
                    help="the ladder, strongest first; neighbours play each other")
    ap.add_argument("--no-top", dest="top", action="store_false",
                    help="leave out the strongest limited level (UCI_Elo at its maximum)")
    ap.add_argument("--table", action="store_true", help="only print the table from the state")
    args = ap.parse_args()
    args.levels = [int(x) for x in args.levels.split(",")]
    if sorted(args.levels, reverse=True) != args.levels or not all(0 <= l < TOP for l in args.levels):
        sys.exit("--levels: levels from 19 down to 0, strongest first")
    if args.anchor_level not in args.levels:
        sys.exit("--anchor-level must be one of --levels")
    if not args.table:
        args.engine = common.need_engine(args.engine)
        args.cutechess = common.find_cutechess(args.cutechess)
        args.openings = common.need_file(args.openings, "--openings")
        args.sjeng_openings = common.need_file(args.sjeng_openings, "--sjeng-openings")
        for tool in ANCHORS:
            setattr(args, tool, common.need_tool(tool, getattr(args, tool)))
    os.makedirs(os.path.dirname(os.path.abspath(args.state)), exist_ok=True)
    args.logdir = args.logdir or os.path.splitext(os.path.abspath(args.state))[0] + "-logs"
    os.makedirs(args.logdir, exist_ok=True)

    state = load(args.state)
    config = {"tc": args.tc, "anchor_level": args.anchor_level, "levels": args.levels, "top": args.top}
    if state["config"] not in (None, config) and not args.table:
        sys.exit(f"{args.state} holds a run with {state['config']}; use another --state")
    state["config"] = state["config"] or config
    if args.table:
        return table(args, state)

    top_elo = elo_max(args.engine)
    todo = matches(args)
    started = time.time()
    played = 0
    for i, (key, level, opp, opp_level) in enumerate(todo):
        rec = state["matches"].setdefault(key, {"w": 0, "l": 0, "d": 0, "games": 0, "chunks": 0, "problems": 0})
        while rec["games"] < args.games:
            n = min(args.chunk, args.games - rec["games"])
            n += n % 2  # pairs of games: each opening with both colours
            seed = 1000 * (i + 1) + rec["chunks"]
            print(f"{key}: games {rec['games'] + 1}-{rec['games'] + n} of {args.games}", flush=True)
            t0 = time.time()
            w, l, d, problems = play_chunk(args, key, level, opp, opp_level, n, seed, top_elo)
            for k, v in (("w", w), ("l", l), ("d", d), ("games", w + l + d), ("chunks", 1), ("problems", problems)):
                rec[k] += v
            save(args.state, state)
            played += w + l + d
            print(f"{key}: +{rec['w']} -{rec['l']} ={rec['d']} after {rec['games']} games "
                  f"({time.time() - t0:.0f} s for {w + l + d}; {time.time() - started:.0f} s this run)",
                  flush=True)
    print(f"\n{played} games played in this run, {time.time() - started:.0f} s")
    table(args, state)


if __name__ == "__main__":
    main()
