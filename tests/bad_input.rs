//! Bad input over UCI: malformed FENs, illegal and garbage moves, unknown commands and
//! options, out-of-range values, `go` with garbage, empty, very long and binary lines, and a
//! 400-ply `position`. After each, the engine must still answer `isready`, must not have
//! panicked, and its position (`d`'s `Fen:`) must be unchanged where the command was refused.
//! Problems are reported as `info string ...`, never by crashing or by silence where a reply
//! is due (every `go` still gets exactly one `bestmove`).

mod proto;

use std::time::Duration;

use madhouse::core::{Position, Variant};
use proto::{
    check_search, engine_move, random_game, replay, startpos, Engine, SearchOutput, HANG, T,
};

const SETUP: &str = "position startpos moves e2e4 d7d5 e4d5 d8d5 P@e4";

fn ms(n: u64) -> Duration {
    Duration::from_millis(n)
}

/// Sends `cmd`; the engine must answer with at least one `info string` and nothing else, stay
/// healthy, and keep the position `before`.
fn refused(e: &mut Engine, cmd: &str, before: &str) {
    e.send(cmd);
    let lines = e.sync();
    let shown: String = cmd.chars().take(120).collect();
    e.check(
        !lines.is_empty() && lines.iter().all(|l| l.starts_with("info string ")),
        &format!("'{shown}' not answered by info string only: {lines:?}"),
    );
    e.assert_healthy();
    let now = e.fen();
    e.check(now == before, &format!("'{shown}' changed the position to {now}"));
}

/// Sends `cmd`; the engine must print nothing but `info string` lines and stay healthy.
fn tolerated(e: &mut Engine, cmd: &str) -> Vec<String> {
    e.send(cmd);
    let lines = e.sync();
    let shown: String = cmd.chars().take(120).collect();
    e.check(
        lines.iter().all(|l| l.starts_with("info string ")),
        &format!("'{shown}' printed more than info strings: {lines:?}"),
    );
    e.assert_healthy();
    lines
}

fn setup() -> (Engine, String) {
    let (mut e, _) = Engine::uci();
    e.send(SETUP);
    let fen = e.fen();
    (e, fen)
}

/// Every FEN is refused by the engine exactly when the library refuses it; refused FENs leave
/// the position alone, accepted ones give the library's position.
#[test]
fn malformed_fens() {
    let (mut e, before) = setup();
    let start = "rnbqkbnr/pppppppp/8/8/8/8/PPPPPPPP/RNBQKBNR";
    let must_refuse = [
        String::new(),
        "garbage".into(),
        "8/8/8/8/8/8/8/8[] w - - 0 1".into(),
        format!("{start}[] x KQkq - 0 1"),
        "rnbqkbnr/pppppppp/8/8/8/8/PPPPPPPP[] w KQkq - 0 1".into(),
        "rnbqkbnr/pppppppp/9/8/8/8/PPPPPPPP/RNBQKBNR[] w KQkq - 0 1".into(),
        "rnbqkbnr/pppppppp/8/8/8/8/8/8/PPPPPPPP/RNBQKBNR[] w KQkq - 0 1".into(),
        "rnbqkbnr/ppppppppp/8/8/8/8/PPPPPPPP/RNBQKBNR[] w KQkq - 0 1".into(),
        format!("{start}[K] w KQkq - 0 1"),
        format!("{start}[Z] w KQkq - 0 1"),
        format!("{start}[ w KQkq - 0 1"),
        format!("{start}[P w KQkq - 0 1"),
        format!("{start}[99999999999999999999P] w KQkq - 0 1"),
        format!("{start}[] w KQkq z9 0 1"),
        format!("{start}[] w XYZ - 0 1"),
        "k7/8/8/8/8/8/8/K6r[] b - - 0 1".into(),
        "kk6/8/8/8/8/8/8/K7[] w - - 0 1".into(),
        "8/8/8/8/8/8/8/K7[] w - - 0 1".into(),
        "P3k3/8/8/8/8/8/8/4K3[] w - - 0 1".into(),
        "4k3/8/8/8/8/8/8/p3K3[] w - - 0 1".into(),
        "\u{2654}\u{265a}/8/8/8/8/8/8/8 w - - 0 1".into(),
        "~~~~~~~~".into(),
        "[]".into(),
        "/////// w".into(),
        "rnbqkbnr/pppppppp/8/8/8/8/PPPPPPPP/RNBQKBNR/ZZ w KQkq - 0 1".into(),
    ];
    let odd = [
        format!("{start}[] w KQkq - -1 1"),
        format!("{start}[] w KQkq - 0 0"),
        format!("{start}[] w KQkq - 0 99999999999999999999999"),
        format!("{start}[] w KQkq - 99999 1"),
        format!("{start}[] w - - 0 1 extra tokens"),
        format!("{start}[PPPPPPPPPPPPPPPPPPPPPPPPPPPPPPPPPPPPPPPPPPPPPPPPPPPPPPPP] w KQkq - 0 1"),
        format!("{start}[20Q] w KQkq - 0 1"),
        format!("{start}[] W KQkq - 0 1"),
        format!("{start}[] w kqKQ - 0 1"),
        format!("{start}[] w AHah - 0 1"),
        format!("{start}[] w KQkq e3 0 1"),
        "4k3/8/8/8/8/8/8/R3K2R~[] w KQ - 0 1".into(),
        "4k3/8/8/8/8/8/8/4K2R[] w KQkq - 0 1".into(),
        "4k3/8/8/8/8/8/8/4K3~[] w - - 0 1".into(),
        "4k3/8/8/8/8/8/8/4K3[] b - - 0 1".into(),
        "K7/8/8/8/8/8/8/7k[] w - - 0 1".into(),
        "4k3/8/8/8/8/8/8/4K3[] w - -".into(),
        "4k3/8/8/8/8/8/8/4K3[] w".into(),
        "4k3/8/8/8/8/8/8/4K3".into(),
        "4k3/8/8/8/8/8/8/4K3 w - - 0 1".into(),
        "4k3/8/8/8/8/8/8/4K3/ w - - 0 1".into(),
        "4k3/8/8/8/8/8/8/4K3[]w - - 0 1".into(),
        "Q7/Q7/Q7/Q7/Q7/Q7/Q7/K6k[QQQQ] w - - 0 1".into(),
    ];
    for fen in must_refuse.iter() {
        let lib = Position::from_fen(fen, Variant::Crazyhouse);
        e.check(lib.is_err(), &format!("the library accepts the invalid FEN '{fen}'"));
        refused(&mut e, &format!("position fen {fen}"), &before);
    }
    for fen in odd.iter() {
        e.send(SETUP);
        match Position::from_fen(fen, Variant::Crazyhouse) {
            Err(_) => refused(&mut e, &format!("position fen {fen}"), &before),
            Ok(p) => {
                let lines = tolerated(&mut e, &format!("position fen {fen}"));
                e.check(lines.is_empty(), &format!("accepted '{fen}' with a complaint"));
                let now = e.fen();
                e.check(now == p.fen(), &format!("'{fen}': engine {now}, library {}", p.fen()));
                // The engine can search it (or says there is no move).
                let out = e.go("go depth 2", T);
                if let Err(m) = check_search(&p, &out) {
                    e.fail(&format!("'{fen}': {m}"));
                }
            }
        }
    }
    refused(&mut e, "position", &before);
    refused(&mut e, "position fen", &before);
    refused(&mut e, "position fen moves e2e4", &before);
    refused(&mut e, "position foo", &before);
    refused(&mut e, "position moves e2e4", &before);
}

/// Illegal and garbage moves in `position` refuse the whole command.
#[test]
fn bad_moves_in_position() {
    let (mut e, before) = setup();
    for moves in [
        "e2e5",
        "e2e4 e2e4",
        "P@e4",
        "e2e4 e7e5 P@e4",
        "K@e4",
        "e1g1",
        "e7e8q",
        "zzzz",
        "e2e4x",
        "e2-e4",
        "E2E4",
        "0000",
        "e2",
        "@",
        "P@",
        "Q@i9",
        "e2e4 d7d5 e4d5 d8d5 P@d5",
        // A pawn drop on an empty square of the last rank (d8, emptied by the queen).
        "e2e4 d7d5 e4d5 d8d5 P@d8",
        "e2e4 d7d5 e4d5 d8d5 P@e4 d5e4 e1e2 e4e2",
        // The king walked (f1 and back) with f1 and g1 cleared: no castling right is left, so
        // e1g1 is refused although the squares are free (python-chess: no castling move there).
        "g1f3 g8f6 e2e4 e7e5 f1c4 f8c5 e1f1 e8f8 f1e1 f8e8 e1g1",
    ] {
        refused(&mut e, &format!("position startpos moves {moves}"), &before);
    }
    // Castling out of, through or into check; moves of the side not to move; a drop of a
    // piece the pocket does not hold; pawn drops on the empty squares of both back ranks, by
    // each side (python-chess refuses all of them).
    let castle = "r3k2r/8/8/8/2b5/8/8/R3K2R[Pp] w KQkq - 0 1";
    let black = castle.replace(" w ", " b ");
    for (fen, m) in [
        (castle, "e1g1"),
        ("r3k2r/8/8/8/8/8/8/R3K2R[Q] w KQkq - 0 1 moves Q@e6", "e8c8"),
        ("r3k2r/8/8/8/8/8/6q1/R3K2R w KQkq - 0 1", "e1g1"),
        ("r3k2r/8/8/8/4q3/8/8/R3K2R w KQkq - 0 1", "e1c1"),
        (castle, "c4b5"),
        (castle, "N@e4"),
        (castle, "P@b8"),
        (castle, "P@b1"),
        (&black, "P@b1"),
        (&black, "P@b8"),
    ] {
        let cmd = match fen.split_once(" moves ") {
            Some((f, ms)) => format!("position fen {f} moves {ms} {m}"),
            None => format!("position fen {fen} moves {m}"),
        };
        refused(&mut e, &cmd, &before);
    }
    // Controls for the cases above: the same castling without the king's walk, and pawn
    // drops next to the refused ones, are accepted.
    for cmd in [
        "position startpos moves g1f3 g8f6 e2e4 e7e5 f1c4 f8c5 e1g1".to_string(),
        format!("position fen {castle} moves P@b7"),
        format!("position fen {black} moves P@b2"),
    ] {
        let lines = tolerated(&mut e, &cmd);
        e.check(lines.is_empty(), &format!("'{cmd}' refused: {lines:?}"));
    }
    // An empty move list is the start position itself.
    e.send("position startpos moves");
    let fen = e.fen();
    e.check(fen == startpos().fen(), &format!("'moves' with nothing after: {fen}"));
}

/// Unknown commands (also as the very first line, which still selects UCI).
#[test]
fn unknown_commands() {
    let mut e = Engine::start();
    e.send("hello engine");
    let lines = e.read_until(|l| l.starts_with("info string"), T);
    e.check(lines.len() == 1, &format!("garbage first line: {lines:?}"));
    e.send("uci");
    e.read_until(|l| l == "uciok", T);
    e.send(SETUP);
    let before = e.fen();
    for cmd in ["foo", "xyzzy 1 2 3", "UCI", "ISREADY", "go1", "positionstartpos", "setoptionname"]
    {
        refused(&mut e, cmd, &before);
    }
}

/// Unknown options and out-of-range values are refused with `info string`, and the old value
/// stays.
#[test]
fn bad_options() {
    let (mut e, before) = setup();
    for cmd in [
        "setoption name Foo value 1",
        "setoption name Hash value 0",
        "setoption name Hash value 99999999999",
        "setoption name Hash value -5",
        "setoption name Hash value abc",
        "setoption name Hash value",
        "setoption name Threads value 9999",
        "setoption name Threads value 0",
        "setoption name MultiPV value -1",
        "setoption name MultiPV value 0",
        "setoption name MultiPV value 501",
        "setoption name Move Overhead value 99999",
        "setoption name UCI_Variant value chess",
        "setoption name UCI_Variant value Crazyhouse2",
        "setoption name UCI_Variant value",
        "setoption name Ponder value maybe",
        "setoption name UCI_ShowWDL value 2",
        "setoption name",
        "setoption",
        "setoption Hash 64",
        "setoption value 3",
    ] {
        refused(&mut e, cmd, &before);
    }
    // Nothing changed: one PV line per depth, no wdl, still crazyhouse.
    let out = e.go("go depth 3", T);
    let p = replay(&startpos(), &split(SETUP)).unwrap();
    if let Err(m) = check_search(&p, &out) {
        e.fail(&m);
    }
    e.check(out.infos.iter().all(|i| i.multipv.unwrap_or(1) == 1), "MultiPV changed");
    e.check(out.infos.iter().all(|i| i.wdl.is_none()), "UCI_ShowWDL changed");
    e.send("d");
    let lines = e.sync();
    e.check(lines.iter().any(|l| l == "Variant: crazyhouse"), "UCI_Variant changed");
    // Valid but unusual: button without value, option names in another case.
    for cmd in [
        "setoption name Clear Hash",
        "setoption name hash value 8",
        "setoption name MULTIPV value 1",
        "setoption name UCI_Opponent value",
        "setoption name SyzygyPath value /no/such/dir",
    ] {
        let lines = tolerated(&mut e, cmd);
        e.check(lines.is_empty(), &format!("'{cmd}' refused: {lines:?}"));
    }
}

fn split(cmd: &str) -> Vec<String> {
    let toks: Vec<&str> = cmd.split_whitespace().collect();
    let at = toks.iter().position(|t| *t == "moves").map_or(toks.len(), |i| i + 1);
    toks[at..].iter().map(|s| s.to_string()).collect()
}

/// `go` with garbage: unknown tokens and bad values are skipped with an `info string`; the
/// rest of the line counts, and every `go` gets exactly one legal `bestmove` (after `stop`
/// when nothing limits the search).
#[test]
fn go_with_garbage() {
    let (mut e, _) = setup();
    let p = replay(&startpos(), &split(SETUP)).unwrap();
    for (go, complains) in [
        ("go foo", true),
        ("go depth", true),
        ("go depth x", true),
        ("go depth 3 foo", true),
        ("go foo depth 3", true),
        ("go depth movetime 100", true),
        ("go depth 99999999999999999999", true),
        ("go wtime abc btime 1000", true),
        ("go searchmoves zzzz e2e4 P@d4", true),
        ("go searchmoves", false),
        ("go wtime -100 btime -100", false),
        ("go wtime 0 btime 0 winc 0 binc 0", false),
        ("go movetime 0", false),
        ("go movetime -5", false),
        ("go depth 0", false),
        ("go depth -5", false),
        ("go nodes 0", false),
        ("go movestogo 0 wtime 100 btime 100", false),
        ("go mate 0", false),
        ("go mate -3", false),
        ("go infinite infinite", false),
        ("go depth 2 depth 3", false),
        ("go\tdepth\t2", false),
    ] {
        e.send(go);
        let mut lines = e.collect_for(ms(150));
        e.send("stop");
        if !lines.iter().any(|l| l.starts_with("bestmove")) {
            lines.extend(e.read_until(|l| l.starts_with("bestmove"), HANG));
        }
        let out = SearchOutput::parse(&lines).unwrap_or_else(|m| e.fail(&format!("{go}: {m}")));
        if let Err(m) = check_search(&p, &out) {
            e.fail(&format!("{go}: {m}"));
        }
        e.check(
            out.strings.is_empty() != complains,
            &format!("'{go}': info strings {:?}", out.strings),
        );
        let extra = e.sync();
        e.check(!extra.iter().any(|l| l.starts_with("bestmove")), &format!("{go}: 2 bestmoves"));
        e.assert_healthy();
    }
    // The searchmoves restriction keeps its valid moves only.
    e.send("go depth 3 searchmoves zzzz a7a6");
    let out = e.read_search(T);
    e.check(out.best == "a7a6", &format!("searchmoves with garbage: {}", out.best));
}

/// Empty and blank lines, CR-LF endings, tabs.
#[test]
fn blank_lines_and_line_endings() {
    let (mut e, before) = setup();
    for l in ["", "   ", "\t", "\r", " \t \r"] {
        let lines = tolerated(&mut e, l);
        e.check(lines.is_empty(), &format!("blank line {l:?} answered: {lines:?}"));
    }
    e.send_bytes(b"isready\r\n");
    e.read_until(|l| l == "readyok", T);
    e.send_bytes(b"position\tstartpos  moves\te2e4 \t d7d5\r\n");
    e.send_bytes(b"\r\n\r\n");
    let fen = e.fen();
    let want = replay(&startpos(), &["e2e4".into(), "d7d5".into()]).unwrap().fen();
    e.check(fen == want, &format!("tabs and CR-LF: {fen}"));
    e.send(SETUP);
    let again = e.fen();
    e.check(again == before, "position changed");
}

/// 100 KB lines of garbage, of moves, of option names; a line over the 1 MB input cap;
/// binary bytes and invalid UTF-8.
#[test]
fn long_and_binary_lines() {
    let (mut e, before) = setup();
    refused(&mut e, &"x".repeat(100_000), &before);
    refused(&mut e, &format!("position startpos moves {}", "e2e4 ".repeat(20_000)), &before);
    refused(&mut e, &format!("position fen {}", "p".repeat(100_000)), &before);
    refused(&mut e, &format!("setoption name {} value 1", "a".repeat(100_000)), &before);
    refused(&mut e, &format!("setoption name Hash value {}", "9".repeat(100_000)), &before);
    // Over the input cap: dropped whole.
    e.send(&"y".repeat(2 << 20));
    e.sync();
    e.assert_healthy();
    // A long but valid go.
    e.send(&format!("go {}", "depth 1 ".repeat(10_000)));
    let out = e.read_search(T);
    let p = replay(&startpos(), &split(SETUP)).unwrap();
    if let Err(m) = check_search(&p, &out) {
        e.fail(&m);
    }

    let mut rng = proto::Rng::new(7);
    for _ in 0..20 {
        let n = 1 + rng.below(3000);
        let mut bytes: Vec<u8> = (0..n).map(|_| rng.next_u64() as u8).collect();
        bytes.retain(|&b| b != b'\n');
        bytes.push(b'\n');
        e.send_bytes(&bytes);
        let lines = e.sync();
        e.check(
            lines.iter().all(|l| l.starts_with("info string ")),
            &format!("binary line answered with {lines:?}"),
        );
        e.assert_healthy();
    }
    for raw in [
        &b"\xff\xfe\xfd\n"[..],
        b"\0\0\0\n",
        b"isready\0\n",
        b"\x1b[2J\x1b[H\n",
        b"position startpos moves e2e4\xff\n",
        b"go \xc3\x28 depth 1\n",
    ] {
        e.send_bytes(raw);
        e.sync();
        e.assert_healthy();
    }
    e.collect_for(ms(200));
    e.send(SETUP);
    let now = e.fen();
    e.check(now == before, "position lost");
    // Binary garbage as the very first line still leaves a working UCI engine.
    let mut e = Engine::start();
    e.send_bytes(b"\xff\x00\x13garbage\xfe\n");
    e.send("uci");
    e.read_until(|l| l == "uciok", T);
    e.sync();
    e.assert_healthy();
}

/// A `position` with 400 legal plies (and one with 1000), generated with the library.
#[test]
fn very_long_move_lists() {
    let (mut e, _) = Engine::uci();
    for plies in [400, 1000] {
        let (moves, last) = random_game(plies, 2024);
        let cmd = format!("position startpos moves {}", moves.join(" "));
        let lines = tolerated(&mut e, &cmd);
        e.check(lines.is_empty(), &format!("{plies} plies refused: {lines:?}"));
        let fen = e.fen();
        e.check(fen == last.fen(), &format!("{plies} plies: engine {fen}, library {}", last.fen()));
        let out = e.go("go depth 4", T);
        if let Err(m) = check_search(&last, &out) {
            e.fail(&m);
        }
        // One illegal move at the end refuses the whole list.
        let bad = format!("{cmd} e1e1");
        refused(&mut e, &bad, &fen);
        let m = engine_move(&last, &out.best).unwrap();
        e.send(&format!("{cmd} {}", out.best));
        let now = e.fen();
        e.check(now == last.after(m).fen(), "appending the engine's move");
    }
}

/// Commands at odd moments: `go` while searching, `setoption Hash` mid-search (applied
/// later), `position` mid-search, `ucinewgame` twice, `quit` with arguments.
#[test]
fn odd_moments() {
    let (mut e, _) = setup();
    e.send("go infinite");
    let mut lines = e.collect_for(ms(100));
    e.send("go depth 1");
    e.send("setoption name Hash value 8");
    e.send("setoption name Threads value 2");
    e.send("isready");
    lines.extend(e.read_until(|l| l == "readyok", HANG));
    e.check(!lines.iter().any(|l| l.starts_with("bestmove")), "go mid-search gave a bestmove");
    lines.retain(|l| l != "readyok");
    e.send("stop");
    lines.extend(e.read_until(|l| l.starts_with("bestmove"), HANG));
    let out = SearchOutput::parse(&lines).unwrap_or_else(|m| e.fail(&m));
    let p = replay(&startpos(), &split(SETUP)).unwrap();
    if let Err(m) = check_search(&p, &out) {
        e.fail(&m);
    }
    e.send("ucinewgame");
    e.send("ucinewgame");
    e.sync();
    e.send(SETUP);
    let out = e.go("go depth 4", T);
    if let Err(m) = check_search(&p, &out) {
        e.fail(&m);
    }
    e.send("quit now please");
    let st = e.wait_exit(HANG);
    e.check(st.is_some_and(|s| s.success()), "quit with arguments");
}
