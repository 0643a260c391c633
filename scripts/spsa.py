#!/usr/bin/env python3
"""SPSA tuning of Madhouse's search and time constants over cutechess-cli.

Needs the tuning build, whose UCI options include every row of the `tunables!` table in
src/params.rs and whose `tune` command gives each one's SPSA step:

  cargo build --release --features tune-search --target-dir target/tune

Each iteration is one game pair: every tuned parameter is moved by +c_k or -c_k (random signs),
the engine with theta + c_k*delta plays the one with theta - c_k*delta from an opening of the
openings (--openings), once with each colour, and theta steps toward the winner:
theta += a_k / c_k * (wins - losses) * delta (Spall's gains, as fishtest uses them:
c_k = c_end * (N / k)^gamma, a_k = r_end * c_end^2 * ((A + N) / (A + k))^alpha, A = N / 10).
--concurrency workers (default 1; one per core is the usual choice) play pairs at the same
time, each from the theta of its start; results are applied as they come in.

Every finished pair is logged (stdout, and one JSON line in STATE.log) and the state file
(JSON) is rewritten, so an interrupted run resumes where it stopped with the same command. The
summary gives games per hour and the tuned values as rows of the params.rs table
(--write-params puts them in src/params.rs).

Examples:
  scripts/spsa.py --state spsa.json --iterations 20000 --tc 2+0.02
  scripts/spsa.py --state spsa.json --iterations 20000 --params '^(RFP|NMP|LMR)_'
  scripts/spsa.py --state spsa.json --show --write-params

cutechess-cli: --cutechess PATH, else $CUTECHESS, else cutechess-cli on PATH.
"""
import json
import os
import random
import re
import shutil
import subprocess
import sys
import tempfile
import threading
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import common  # noqa: E402  (scripts/common.py: the shared flags)
from match import PROBLEMS  # noqa: E402  (scripts/match.py)
from uci_engine import UciEngine  # noqa: E402

ROOT = common.ROOT
PARAMS_RS = os.path.join(ROOT, "src", "params.rs")

OPTION_RE = re.compile(r"option name (\S+) type spin default (-?\d+) min (-?\d+) max (-?\d+)$")
TUNE_RE = re.compile(r"tune (\S+) default (-?\d+) min (-?\d+) max (-?\d+) step (\d+)$")
ROW_RE = r"^(\s*){name}: (\w+) = (-?\d+), (-?\d+)\.\.=(-?\d+), step (\d+);"
SCORE_RE = re.compile(r"Score of (\S+) vs (\S+): (\d+) - (\d+) - (\d+)")


def read_tunables(engine):
    """{name: (default, min, max, step)} from the engine's spin options and its `tune` lines."""
    eng = UciEngine([engine])
    try:
        spins = {}
        for line in eng.until(lambda l: l == "uciok", send="uci")[2]:
            m = OPTION_RE.match(line)
            if m:
                spins[m.group(1)] = tuple(int(x) for x in m.groups()[1:])
        eng.send("tune")
        tune = {}
        for line in eng.sync():
            m = TUNE_RE.match(line)
            if m:
                tune[m.group(1)] = tuple(int(x) for x in m.groups()[1:])
    finally:
        eng.quit()
    if not tune:
        sys.exit(f"{engine} lists no tunables: build it with "
                 "`cargo build --release --features tune-search --target-dir target/tune`")
    for name, (d, lo, hi, _) in tune.items():
        if spins.get(name) != (d, lo, hi):
            sys.exit(f"`tune` and the spin option disagree on {name}: {tune[name]} / {spins.get(name)}")
    return tune


def c_k(p, k, n, gamma):
    """Perturbation of parameter `p` at iteration `k` (1-based) of `n`."""
    return p["c_end"] * (n / k) ** gamma


def a_k(p, k, n, alpha, r_end):
    """Gain of parameter `p` at iteration `k` (1-based) of `n`."""
    big_a = 0.1 * n
    return r_end * p["c_end"] ** 2 * ((big_a + n) / (big_a + k)) ** alpha


def clamp(v, p):
    return min(max(v, p["min"]), p["max"])


class Run:
    """The SPSA state, its file and log, and the workers that play the pairs."""

    def __init__(self, args, state):
        self.args = args
        self.s = state
        self.lock = threading.Lock()
        self.next_k = state["done"] + 1
        self.session_games = 0
        self.session_start = time.time()
        self.stopping = False
        self.procs = set()
        self.log = open(args.state + ".log", "a")
        with open(state["openings"]) as f:
            self.openings = sum(1 for line in f if line.strip() and not line.startswith("#"))

    def save(self):
        tmp = self.args.state + ".tmp"
        with open(tmp, "w") as f:
            json.dump(self.s, f, indent=1, sort_keys=True)
        os.replace(tmp, self.args.state)

    def games_per_hour(self):
        hours = max(time.time() - self.session_start, 1e-9) / 3600
        return self.session_games / hours

    def take(self):
        """The next batch to play: (k, signs, c_k by name, plus values, minus values, opening)."""
        s = self.s
        with self.lock:
            if self.stopping or self.next_k > s["iterations"]:
                return None
            k = self.next_k
            self.next_k += s["batch"]
            rng = random.Random(f"{s['seed']}:{k}")
            signs, cks, plus, minus = {}, {}, {}, {}
            for name, p in sorted(s["params"].items()):
                signs[name] = rng.choice((-1, 1))
                cks[name] = c_k(p, k, s["iterations"], s["gamma"])
                plus[name] = round(clamp(p["theta"] + cks[name] * signs[name], p))
                minus[name] = round(clamp(p["theta"] - cks[name] * signs[name], p))
            return k, signs, cks, plus, minus, rng.randrange(self.openings)

    def play(self, plus, minus, opening):
        """One cutechess-cli run of `batch` pairs; returns (wins, losses, draws) of `plus`, the
        problems seen and the output lines."""
        s, a = self.s, self.args
        tmp = tempfile.mkdtemp(prefix="madhouse-spsa-")
        cmd = [a.cutechess, "-variant", "crazyhouse"]
        for name, values in (("plus", plus), ("minus", minus)):
            cmd += ["-engine", f"name={name}", f"cmd={s['engine']}", "proto=uci"]
            cmd += [f"option.{n}={v}" for n, v in sorted(values.items())]
        cmd += ["-each", "option.Threads=1", f"option.Hash={s['hash']}", f"dir={tmp}"]
        cmd += [f"option.{o}" for o in s["options"]]
        if s["nodes"]:
            cmd += ["tc=inf", f"nodes={s['nodes']}"]
        else:
            cmd += [f"tc={s['tc']}", "timemargin=0"]
        cmd += ["-openings", f"file={s['openings']}", "format=epd", "order=sequential",
                f"start={opening + 1}", "-repeat"]
        cmd += ["-games", "2", "-rounds", str(s["batch"]), "-concurrency", "1"]
        proc = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, cwd=tmp)
        with self.lock:
            self.procs.add(proc)
        out, _ = proc.communicate()
        with self.lock:
            self.procs.discard(proc)
        shutil.rmtree(tmp, ignore_errors=True)
        lines = out.splitlines()
        wld = None
        problems = []
        for line in lines:
            m = SCORE_RE.match(line)
            if m:
                w, l, d = int(m.group(3)), int(m.group(4)), int(m.group(5))
                wld = (w, l, d) if m.group(1) == "plus" else (l, w, d)
            if line.startswith("Finished game"):
                problems += [k for k, rx in PROBLEMS.items() if rx.search(line)]
        return wld, problems, lines

    def finish(self, k, signs, cks, wld, problems):
        """Applies a played batch to theta, logs it and saves the state."""
        s = self.s
        w, l, d = wld
        result = w - l
        with self.lock:
            for name, p in s["params"].items():
                gain = a_k(p, k, s["iterations"], s["alpha"], s["r_end"])
                p["theta"] = clamp(p["theta"] + gain / cks[name] * result * signs[name], p)
            s["done"] += s["batch"]
            s["wins"] += w
            s["losses"] += l
            s["draws"] += d
            for prob in problems:
                s["problems"][prob] = s["problems"].get(prob, 0) + 1
            self.session_games += w + l + d
            entry = {"k": k, "plus_score": [w, l, d], "result": result, "done": s["done"],
                     "theta": {n: round(p["theta"], 3) for n, p in sorted(s["params"].items())},
                     "problems": problems, "time": round(time.time(), 1)}
            self.log.write(json.dumps(entry) + "\n")
            self.log.flush()
            self.save()
            gph = self.games_per_hour()
            left = s["iterations"] - s["done"]
            eta = left * 2 / gph if gph > 0 else float("inf")
            moved = sorted(s["params"].items(), key=lambda kv: -abs(kv[1]["theta"] - kv[1]["default"])
                           / kv[1]["c_end"])[:3]
            trend = " ".join(f"{n}={p['theta']:.1f}" for n, p in moved)
            print(f"iter {k}/{s['iterations']}: plus +{w} -{l} ={d}  total +{s['wins']} -{s['losses']} "
                  f"={s['draws']}  {gph:.0f} games/h  ~{eta:.1f} h left  {trend}", flush=True)
            if problems:
                print(f"PROBLEM in iteration {k}: {', '.join(problems)}", flush=True)

    def worker(self):
        while True:
            job = self.take()
            if job is None:
                return
            k, signs, cks, plus, minus, opening = job
            wld, problems, lines = self.play(plus, minus, opening)
            if self.stopping:
                return  # a batch cut short by an interruption counts for nothing
            if wld is None:
                if not self.stopping:
                    print(f"iteration {k}: no score from cutechess-cli; last lines:\n  "
                          + "\n  ".join(lines[-8:]), flush=True)
                    with self.lock:
                        self.stopping = True
                return
            self.finish(k, signs, cks, wld, problems)

    def stop(self):
        with self.lock:
            self.stopping = True
            for p in self.procs:
                p.terminate()


def new_state(args):
    tunables = read_tunables(args.engine)
    want = re.compile(args.params) if args.params else None
    skip = re.compile(args.exclude) if args.exclude else None
    params = {}
    for name, (d, lo, hi, step) in tunables.items():
        if (want and not want.search(name)) or (skip and skip.search(name)):
            continue
        params[name] = {"theta": float(d), "default": d, "min": lo, "max": hi, "c_end": float(step)}
    if not params:
        sys.exit("no parameter left to tune (see --params / --exclude)")
    if not args.iterations:
        sys.exit("a new run needs --iterations")
    return {
        "version": 1, "engine": os.path.abspath(args.engine), "params": params,
        "iterations": args.iterations, "done": 0, "batch": args.batch,
        "alpha": args.alpha, "gamma": args.gamma, "r_end": args.r_end, "seed": args.seed,
        "tc": args.tc, "nodes": args.nodes, "hash": args.hash, "options": args.option,
        "openings": common.need_file(args.openings, "--openings"),
        "wins": 0, "losses": 0, "draws": 0, "problems": {}, "seconds": 0.0,
    }


def tuned_rows(params, path=PARAMS_RS):
    """The params.rs rows of the tuned parameters with theta (rounded) as their default."""
    text = open(path).read()
    rows = {}
    for name, p in sorted(params.items()):
        m = re.search(ROW_RE.format(name=re.escape(name)), text, re.M)
        if not m:
            print(f"warning: no row for {name} in {path}", file=sys.stderr)
            continue
        indent, typ, _, lo, hi, step = m.groups()
        rows[name] = (m.group(0), f"{indent}{name}: {typ} = {round(p['theta'])}, {lo}..={hi}, step {step};")
    return rows


def summary(s, run=None):
    n = s["wins"] + s["losses"] + s["draws"]
    print(f"\n{s['done']}/{s['iterations']} iterations, {n} games "
          f"(plus +{s['wins']} -{s['losses']} ={s['draws']}), "
          f"{'fixed ' + str(s['nodes']) + ' nodes' if s['nodes'] else s['tc']}; "
          f"problems: {s['problems'] or 'none'}")
    if run is not None:
        print(f"this session: {run.session_games} games, {run.games_per_hour():.0f} games/h")
    elif s["seconds"] > 0:
        print(f"overall: {3600 * n / s['seconds']:.0f} games/h")
    print("\nname                         default   tuned    (min..max, step)")
    for name, p in sorted(s["params"].items()):
        print(f"{name:28} {p['default']:7} {p['theta']:9.2f}  ({p['min']}..{p['max']}, {p['c_end']:g})")
    print("\nparams.rs rows (rounded):")
    for _, new in tuned_rows(s["params"]).values():
        print(new)


def write_params(s, path=PARAMS_RS):
    text = open(path).read()
    changed = 0
    for old, new in tuned_rows(s["params"], path).values():
        if old != new:
            text = text.replace(old, new, 1)
            changed += 1
    with open(path, "w") as f:
        f.write(text)
    print(f"\n{path}: {changed} default(s) rewritten; rebuild, run `madhouse bench`, verify with a match")


def main():
    ap = common.parser(__doc__)
    common.add(ap, engine=True, engine_default=common.TUNE_ENGINE,
               engine_help=f"the tuning build of Madhouse (default: {common.shown(common.TUNE_ENGINE)})",
               cutechess=True, openings=True, concurrency=True)
    ap.add_argument("--state", required=True, help="JSON state file (created, or resumed if it exists)")
    ap.add_argument("--iterations", type=int, help="game pairs in the run (N); on resume: extend to this")
    ap.add_argument("--params", help="regex: tune only the matching tunables (default: all)")
    ap.add_argument("--exclude", help="regex: leave the matching tunables at their defaults")
    ap.add_argument("--tc", default="5+0.05")
    ap.add_argument("--nodes", type=int, help="fixed nodes per move instead of a clock")
    ap.add_argument("--hash", type=int, default=16)
    ap.add_argument("--option", action="append", default=[], help="UCI option for both sides, e.g. 'Use NNUE=true'")
    ap.add_argument("--batch", type=int, default=1, help="game pairs per cutechess-cli run (one SPSA step)")
    ap.add_argument("--r-end", type=float, default=0.002, help="final learning rate (fishtest's r_end)")
    ap.add_argument("--alpha", type=float, default=0.602)
    ap.add_argument("--gamma", type=float, default=0.101)
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--show", action="store_true", help="print the state's summary and rows; play nothing")
    ap.add_argument("--write-params", action="store_true",
                    help="at the end, write the tuned values into src/params.rs")
    args = ap.parse_args()
    if not args.show:
        args.cutechess = common.find_cutechess(args.cutechess)

    if os.path.exists(args.state):
        with open(args.state) as f:
            s = json.load(f)
        if args.iterations and args.iterations != s["iterations"]:
            print(f"resuming with {args.iterations} iterations instead of {s['iterations']}")
            s["iterations"] = args.iterations
        print(f"resuming {args.state}: {s['done']}/{s['iterations']} iterations done "
              f"(its engine, parameters, control and gains apply)")
    elif args.show:
        sys.exit(f"no state file {args.state}")
    else:
        args.engine = common.need_engine(args.engine)
        s = new_state(args)
        print(f"new run {args.state}: {len(s['params'])} parameters, {s['iterations']} iterations")
    if args.show:
        summary(s)
        if args.write_params:
            write_params(s)
        return 0

    run = Run(args, s)
    run.save()
    workers = [threading.Thread(target=run.worker, daemon=True) for _ in range(max(1, args.concurrency))]
    print(f"{len(workers)} workers, {s['tc'] if not s['nodes'] else str(s['nodes']) + ' nodes'}, "
          f"openings {s['openings']}", flush=True)
    for t in workers:
        t.start()
    try:
        for t in workers:
            while t.is_alive():
                t.join(0.5)
    except KeyboardInterrupt:
        print("\ninterrupted: games in progress are dropped; the same command resumes", flush=True)
        run.stop()
    with run.lock:
        s["seconds"] += time.time() - run.session_start
        run.save()
    summary(s, run)
    if args.write_params:
        write_params(s)
    return 0 if not s["problems"] else 1


if __name__ == "__main__":
    sys.exit(main())
