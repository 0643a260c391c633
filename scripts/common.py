"""The flags every script in scripts/ shares, their defaults, and the messages for a missing tool.

Each script builds its parser with `parser()` and adds the common flags it uses through one
call, so that a flag has one name, one default and one help text everywhere:

  --engine PATH       the Madhouse binary (default: target/release/madhouse of this checkout,
                      madhouse.exe on Windows)
  --opponent CMD      the other side, where a script has one; `self` is Madhouse (--engine)
  --cutechess PATH    cutechess-cli (default: $CUTECHESS, else cutechess-cli on PATH)
  --openings FILE     match openings (default: scripts/openings/zh-small.epd, 50 positions)
  --concurrency N     games (or workers) at the same time (default: 1)

Reference engines are flags with the Debian/Ubuntu package paths as defaults: --fsf
(Fairy-Stockfish), --sjeng, --sjaakii. A missing tool ends the script with a message naming
the flag to set and how to get the tool.
"""
import argparse
import os
import shutil
import sys

SCRIPTS = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(SCRIPTS)
EXE = ".exe" if os.name == "nt" else ""

ENGINE = os.path.join(ROOT, "target", "release", "madhouse" + EXE)
TUNE_ENGINE = os.path.join(ROOT, "target", "tune", "release", "madhouse" + EXE)
OPENINGS = os.path.join(SCRIPTS, "openings", "zh-small.epd")
# The same 50 openings as moves, for engines that ignore holdings in a FEN (Sjeng).
OPENINGS_PGN = os.path.join(SCRIPTS, "openings", "zh-small.pgn")
CONCURRENCY = 1

FSF = "/usr/games/fairy-stockfish"
SJENG = "/usr/games/sjeng"
SJAAKII = "/usr/games/sjaakii"

GET_CUTECHESS = ("build cutechess-cli 1.4.0 from its source, https://github.com/cutechess/cutechess, "
                 "and set --cutechess or CUTECHESS")
GET_CHESS = "pip install chess"
# name, flag, default, how to get it
TOOLS = {
    "fsf": ("Fairy-Stockfish", "--fsf", FSF, "apt-get install fairy-stockfish, or https://github.com/fairy-stockfish/Fairy-Stockfish"),
    "sjeng": ("Sjeng", "--sjeng", SJENG, "apt-get install sjeng"),
    "sjaakii": ("SjaakII", "--sjaakii", SJAAKII, "apt-get install sjaakii"),
}


def shown(path):
    """`path` as the help shows it: relative to the checkout when inside it."""
    rel = os.path.relpath(path, ROOT)
    return path if rel.startswith("..") else rel


def parser(doc):
    """An argument parser whose description is the script's docstring, shown as written."""
    return argparse.ArgumentParser(description=doc, formatter_class=argparse.RawDescriptionHelpFormatter)


def add(ap, engine=False, engine_default=ENGINE, engine_help=None, opponent=None, opponent_default=None,
        cutechess=False, openings=False, concurrency=False, tools=()):
    """Adds the common flags a script uses, in one group of the help.

    opponent: the help text of --opponent (None: the script has no opponent); tools: names of
    TOOLS whose path flags the script takes (--fsf, --sjeng, --sjaakii)."""
    g = ap.add_argument_group("common flags (the same in every script)")
    if engine:
        g.add_argument("--engine", metavar="PATH", default=engine_default,
                       help=engine_help or f"the Madhouse binary (default: {shown(engine_default)})")
    if opponent is not None:
        g.add_argument("--opponent", metavar="CMD", default=opponent_default,
                       help=opponent + (" (default: %(default)s)" if opponent_default else ""))
    if cutechess:
        g.add_argument("--cutechess", metavar="PATH",
                       help="cutechess-cli (default: $CUTECHESS, else cutechess-cli on PATH)")
    if openings:
        g.add_argument("--openings", metavar="FILE", default=OPENINGS,
                       help=f"opening positions, EPD (default: {shown(OPENINGS)}, the first 50 of the "
                            "400 match openings)")
    if concurrency:
        g.add_argument("--concurrency", metavar="N", type=int, default=CONCURRENCY,
                       help="games played at the same time (default: %(default)s)")
    for t in tools:
        name, flag, default, _ = TOOLS[t]
        g.add_argument(flag, metavar="PATH", default=default, help=f"{name} (default: %(default)s)")
    return g


def program(path):
    """`path` if it names a program (a file, or a command on PATH), else None; on Windows a
    path without its .exe is found too."""
    if not path:
        return None
    for p in (path, path + EXE) if EXE and not path.endswith(EXE) else (path,):
        if os.path.isfile(p):
            return p
    return shutil.which(path)


def need_engine(path, flag="--engine"):
    """The Madhouse binary at `path` as an absolute path, or the end of the script."""
    found = program(path)
    if not found:
        build = "cargo build --release --features tune-search --target-dir target/tune" \
            if os.path.abspath(path) == TUNE_ENGINE else "cargo build --release"
        sys.exit(f"Madhouse not found at {path}: build it ({build}) or pass {flag} PATH")
    return os.path.abspath(found) if os.path.exists(found) else found


def need_tool(key, path):
    """The reference engine `key` (a TOOLS name) at `path`, or the end of the script."""
    name, flag, _, how = TOOLS[key]
    found = program(path)
    if not found:
        sys.exit(f"{name} not found at {path}: pass {flag} PATH ({how})")
    return os.path.abspath(found) if os.path.exists(found) else found


def find_cutechess(explicit=None):
    """The cutechess-cli to run: --cutechess if given, else $CUTECHESS, else cutechess-cli on
    PATH; or the end of the script with where to get it."""
    if explicit:
        found = program(explicit)
        if not found:
            sys.exit(f"cutechess-cli not found at {explicit} (--cutechess): {GET_CUTECHESS}")
        return found
    env = os.environ.get("CUTECHESS")
    if env:
        found = program(env)
        if not found:
            sys.exit(f"cutechess-cli not found at {env} ($CUTECHESS): {GET_CUTECHESS}")
        return found
    found = shutil.which("cutechess-cli")
    if not found:
        sys.exit(f"cutechess-cli not found (no --cutechess, no $CUTECHESS, none on PATH): {GET_CUTECHESS}")
    return found


def need_file(path, flag):
    """`path` as an absolute path if it is a file, else the end of the script naming `flag`."""
    if not os.path.isfile(path):
        sys.exit(f"{flag}: no such file: {path}")
    return os.path.abspath(path)


def import_chess(script):
    """python-chess, or the end of the script saying how to install it."""
    try:
        import chess  # noqa: F401
        import chess.pgn  # noqa: F401
        import chess.variant  # noqa: F401
    except ImportError:
        sys.exit(f"{script} needs python-chess: {GET_CHESS}")
    return chess
