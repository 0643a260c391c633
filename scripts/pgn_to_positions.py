#!/usr/bin/env python3
"""Turn crazyhouse PGN games (e.g. from cutechess-cli -pgnout) into tuning positions.

Writes `<FEN> | <result>` lines, the result from white's view, for every position after the
first --skip plies in which the side to move is not in check and the move played is not a
capture or promotion (quiet positions, as `madhouse datagen` writes them). Unfinished games
are skipped. Needs python-chess (`pip install chess`).

Example:
  scripts/pgn_to_positions.py games.pgn >> data/fsf.txt
"""
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import common  # noqa: E402  (scripts/common.py: the shared flags and messages)

RESULTS = {"1-0": "1", "0-1": "0", "1/2-1/2": "0.5"}


def main():
    ap = common.parser(__doc__)
    ap.add_argument("pgn", nargs="+")
    ap.add_argument("--skip", type=int, default=4, help="plies skipped at the start of each game")
    args = ap.parse_args()
    chess = common.import_chess("pgn_to_positions.py")
    games = positions = 0
    for path in args.pgn:
        with open(path, encoding="utf-8", errors="replace") as f:
            while True:
                game = chess.pgn.read_game(f)
                if game is None:
                    break
                result = RESULTS.get(game.headers.get("Result", "*"))
                if result is None:
                    continue
                board = game.board()
                if not isinstance(board, chess.variant.CrazyhouseBoard):
                    fen = game.headers.get("FEN")
                    board = chess.variant.CrazyhouseBoard(fen) if fen else chess.variant.CrazyhouseBoard()
                games += 1
                for ply, move in enumerate(game.mainline_moves()):
                    quiet = not board.is_check() and not board.is_capture(move) and move.promotion is None
                    if ply >= args.skip and quiet:
                        print(f"{board.fen()} | {result}")
                        positions += 1
                    board.push(move)
    print(f"{games} games, {positions} positions", file=sys.stderr)


if __name__ == "__main__":
    main()
