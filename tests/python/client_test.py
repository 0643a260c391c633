#!/usr/bin/env python3
"""End-to-end client test: madhouse driven by python-chess (the library lichess-bot uses).

Usage: python3 tests/python/client_test.py target/release/madhouse

Needs python-chess 1.11 (`pip install chess~=1.11`). Plays complete crazyhouse games of the
engine against itself through `chess.engine.SimpleEngine.popen_uci` and `popen_xboard`, from the
start position and from positions with pockets and promoted pieces, and checks:

- every move the engine plays is in `CrazyhouseBoard.legal_moves`;
- every PV (`info["pv"]`) replays legally on a copy of the board, and is non-empty whenever the
  reported depth is above 1;
- UCI: lichess-bot's default `uci_options` (Threads 1 instead of 4 on a two-core machine) are
  accepted by `configure`; with `UCI_ShowWDL` the info carries `wdl` summing to 1000;
  `analyse(..., multipv=3)` gives three distinct first moves with non-increasing scores;
- XBoard: games under `st` (Limit(time=...)), `level` (clock limits) and node limits (`nps` +
  `st`), and `analyse` with a time limit;
- one game per protocol with `ponder=True`;
- python-chess logs no warning or error about the engine's output (the `stat01:` reply to `.`
  excepted, which python-chess does not parse but the CECP specification allows).

python-chess 1.11.2 has a bug that breaks XBoard crazyhouse games when the caller keeps one
board for the whole game: `CrazyhouseBoard.root()` hands out the pocket objects stored in the
board's move stack (`_CrazyhouseBoardState.restore` assigns them without copying), and the
XBoard protocol pushes the game's moves onto that root (`XBoardProtocol._new`), so every capture
is also added to the stored start pockets. The next `play` then sees a different root, sends
`new` + `setboard` with the corrupted pockets, and engine and client disagree about the
position. (`b = CrazyhouseBoard(); [b.push_uci(m) for m in "e2e4 d7d5 e4d5 d8d5".split()];
r = b.root(); [r.push(m) for m in b.move_stack]; b.root().fen()` ends in `[Pp] w`.) So, like
lichess-bot, which rebuilds its board from the move list for each move, this script hands
python-chess a freshly built board for every call (`fresh_board`).

Games are capped at 200 plies and searches kept short, so the whole run takes well under three
minutes on two cores. Prints a summary; exits 1 on any problem.
"""

import logging
import sys
import time

import chess
import chess.engine
import chess.variant

MAX_PLIES = 200

START_FENS = [
    chess.variant.CrazyhouseBoard.starting_fen,
    "r1bqkbnr/pppp1ppp/2n5/8/3P4/2N5/PPP2PPP/R1BQKBNR[Pp] b KQkq - 0 4",
    "4k3/1Q~6/8/8/4b3/8/Kpp5/8[] b - - 0 1",
]

LICHESS_BOT_OPTIONS = {
    "Move Overhead": 100,
    "Threads": 1,
    "Hash": 64,
    "SyzygyPath": "",
    "UCI_ShowWDL": True,
}

problems = []


def problem(msg):
    problems.append(msg)
    print(f"PROBLEM: {msg}", flush=True)


class WarningCounter(logging.Handler):
    """Records python-chess warnings and errors about the engine."""

    def __init__(self):
        super().__init__(level=logging.WARNING)
        self.records = []

    def emit(self, record):
        msg = record.getMessage()
        if "stat01:" in msg:
            return
        self.records.append(msg)


def check_pv(board, info, where):
    """Replays info['pv'] on a copy of board; checks depth > 1 implies a non-empty PV."""
    pv = info.get("pv") or []
    depth = info.get("depth", 0)
    if depth > 1 and not pv and "score" in info:
        problem(f"{where}: depth {depth} but empty PV: {info}")
    b = board.copy(stack=False)
    for i, m in enumerate(pv):
        if m not in b.legal_moves:
            problem(f"{where}: PV move {i + 1} {m} illegal in {b.fen()} (pv {pv})")
            return
        b.push(m)


def check_wdl(info, where):
    wdl = info.get("wdl")
    if wdl is None:
        if "score" in info:
            problem(f"{where}: UCI_ShowWDL set but no wdl in {info}")
        return
    w = wdl.relative
    if w.wins + w.draws + w.losses != 1000:
        problem(f"{where}: wdl {w} does not sum to 1000")


def fresh_board(fen, moves):
    """A new board from `fen` with `moves` played (see the module docstring for why)."""
    board = chess.variant.CrazyhouseBoard(fen)
    for m in moves:
        board.push(m)
    return board


def play_game(white, black, fen, limits, proto, label, wdl=False, ponder=False):
    """Plays one game; `limits` maps colour -> function(board) -> Limit. With `ponder`, each
    engine ponders on the other's time (UCI `go ponder` + `stop`; XBoard `hard`, `Hint:` and a
    `ping` mid-ponder). Returns (plies, result)."""
    board = chess.variant.CrazyhouseBoard(fen)
    engines = {chess.WHITE: white, chess.BLACK: black}
    while not board.is_game_over() and board.ply() < MAX_PLIES + 1000:
        if len(board.move_stack) >= MAX_PLIES:
            break
        engine = engines[board.turn]
        where = f"{proto} {label} ply {len(board.move_stack) + 1} ({board.fen()})"
        try:
            result = engine.play(
                fresh_board(fen, board.move_stack),
                limits[board.turn](board),
                info=chess.engine.INFO_ALL,
                ponder=ponder,
            )
        except chess.engine.EngineError as e:
            problem(f"{where}: EngineError {e}")
            return len(board.move_stack), "error"
        if result.move is None:
            problem(f"{where}: no move in a position with legal moves")
            return len(board.move_stack), "error"
        if result.move not in board.legal_moves:
            problem(f"{where}: illegal move {result.move}")
            return len(board.move_stack), "error"
        check_pv(board, result.info, where)
        if wdl:
            check_wdl(result.info, where)
        if result.ponder is not None:
            after = board.copy(stack=False)
            after.push(result.move)
            if result.ponder not in after.legal_moves:
                problem(f"{where}: illegal ponder move {result.ponder}")
        board.push(result.move)
    outcome = board.outcome()
    res = outcome.result() if outcome else "*"
    return len(board.move_stack), res


def uci_part(path, summary):
    a = chess.engine.SimpleEngine.popen_uci(path, timeout=30)
    b = chess.engine.SimpleEngine.popen_uci(path, timeout=30)
    try:
        for e in (a, b):
            opts = e.options
            for name in list(LICHESS_BOT_OPTIONS) + ["Ponder", "MultiPV", "UCI_Variant", "UCI_AnalyseMode"]:
                if name not in opts:
                    problem(f"UCI option {name} not advertised")
            if "crazyhouse" not in (opts["UCI_Variant"].var or []):
                problem("UCI_Variant lacks var crazyhouse")
            try:
                e.configure(LICHESS_BOT_OPTIONS)
            except Exception as ex:  # noqa: BLE001
                problem(f"configure(lichess-bot defaults) raised {ex!r}")

        # Move Overhead 100 leaves 50 ms of a 150 ms movetime.
        by_time = {c: (lambda board: chess.engine.Limit(time=0.15)) for c in chess.COLORS}
        by_clock = {
            c: (lambda board: chess.engine.Limit(white_clock=1.0, black_clock=1.0, white_inc=0, black_inc=0))
            for c in chess.COLORS
        }
        mixed = {
            chess.WHITE: lambda board: chess.engine.Limit(nodes=4000),
            chess.BLACK: lambda board: chess.engine.Limit(depth=4),
        }
        for i, (fen, lim) in enumerate(zip(START_FENS, [by_time, by_clock, mixed])):
            t0 = time.time()
            plies, res = play_game(a, b, fen, lim, "uci", f"game {i + 1}", wdl=True, ponder=i == 1)
            summary.append(("uci", i + 1, plies, res, time.time() - t0))

        # MultiPV analysis, as lichess-bot / analysis tools ask for it.
        for fen in START_FENS:
            board = chess.variant.CrazyhouseBoard(fen)
            infos = a.analyse(board, chess.engine.Limit(depth=8), multipv=3)
            if len(infos) != 3:
                problem(f"multipv=3 gave {len(infos)} lines for {fen}")
                continue
            firsts = [i["pv"][0] if i.get("pv") else None for i in infos]
            if None in firsts or len(set(firsts)) != 3:
                problem(f"multipv first moves not distinct: {firsts} ({fen})")
            scores = [i["score"].pov(board.turn).score(mate_score=100000) for i in infos]
            if scores != sorted(scores, reverse=True):
                problem(f"multipv scores not ordered: {scores} ({fen})")
            for k, info in enumerate(infos):
                check_pv(board, info, f"uci multipv {k + 1} {fen}")
                check_wdl(info, f"uci multipv {k + 1} {fen}")
        # A time-limited analysis and a mate search with a drop.
        board = chess.variant.CrazyhouseBoard("6k1/5ppp/8/8/8/8/8/K7[R] w - - 0 1")
        info = a.analyse(board, chess.engine.Limit(mate=1))
        pv = info.get("pv") or []
        if not pv or pv[0].drop != chess.ROOK:
            problem(f"mate in 1 by a drop not found: {info}")
        elif info["score"].relative != chess.engine.Mate(1):
            problem(f"mate in 1 scored {info['score']}")
        info = a.analyse(chess.variant.CrazyhouseBoard(), chess.engine.Limit(time=0.2))
        check_pv(chess.variant.CrazyhouseBoard(), info, "uci analyse time=0.2")
    finally:
        a.quit()
        b.quit()


def xboard_part(path, summary):
    a = chess.engine.SimpleEngine.popen_xboard(path, timeout=30)
    b = chess.engine.SimpleEngine.popen_xboard(path, timeout=30)
    try:
        for e in (a, b):
            feats = e.protocol.features
            for k, want in [("ping", 1), ("setboard", 1), ("usermove", 1), ("san", 0), ("reuse", 1)]:
                if feats.get(k) != want:
                    problem(f"xboard feature {k}={feats.get(k)!r}, want {want}")
            if "crazyhouse" not in feats.get("variants", "").split(","):
                problem(f"xboard variants {feats.get('variants')!r} lack crazyhouse")
            try:
                e.configure({"memory": 64, "cores": 1})
            except Exception as ex:  # noqa: BLE001
                problem(f"xboard configure(memory, cores) raised {ex!r}")

        by_time = {c: (lambda board: chess.engine.Limit(time=0.05)) for c in chess.COLORS}
        by_clock = {
            c: (lambda board: chess.engine.Limit(white_clock=1.0, black_clock=1.0, white_inc=0, black_inc=0))
            for c in chess.COLORS
        }
        mixed = {
            chess.WHITE: lambda board: chess.engine.Limit(nodes=4000),
            chess.BLACK: lambda board: chess.engine.Limit(time=0.05, depth=4),
        }
        for i, (fen, lim) in enumerate(zip(START_FENS, [by_time, by_clock, mixed])):
            t0 = time.time()
            plies, res = play_game(a, b, fen, lim, "xboard", f"game {i + 1}", ponder=i == 1)
            summary.append(("xboard", i + 1, plies, res, time.time() - t0))

        for fen in START_FENS:
            board = chess.variant.CrazyhouseBoard(fen)
            info = a.analyse(board, chess.engine.Limit(time=0.3))
            if not info.get("pv"):
                problem(f"xboard analyse gave no PV for {fen}: {info}")
            check_pv(board, info, f"xboard analyse {fen}")
    finally:
        a.quit()
        b.quit()


def main():
    if len(sys.argv) != 2:
        print(__doc__)
        return 2
    path = sys.argv[1]
    counter = WarningCounter()
    logging.basicConfig(level=logging.ERROR)
    for h in logging.getLogger().handlers:
        h.setLevel(logging.ERROR)  # warnings are counted (and listed) by `counter`
    chess_logger = logging.getLogger("chess.engine")
    chess_logger.setLevel(logging.WARNING)
    chess_logger.addHandler(counter)
    summary = []
    t0 = time.time()
    for part in (uci_part, xboard_part):
        try:
            part(path, summary)
        except Exception as ex:  # noqa: BLE001
            problem(f"{part.__name__} raised {ex!r}")
    for msg in counter.records:
        problem(f"python-chess warning: {msg}")
    print()
    print(f"{'protocol':8} {'game':>4} {'plies':>5} {'result':>7} {'secs':>6}")
    for proto, n, plies, res, secs in summary:
        print(f"{proto:8} {n:>4} {plies:>5} {res:>7} {secs:>6.1f}")
    total = sum(s[2] for s in summary)
    print(f"{len(summary)} games, {total} plies, {time.time() - t0:.1f} s, {len(problems)} problems")
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())
