//! UCI over pipes: the transcripts of `shared/docs/protocols.md` §1.1 and §5 (cutechess-cli and
//! python-chess / lichess-bot), replayed against the built binary.
//!
//! Every reply is checked: `bestmove` legal (by the crate's own `Position::parse_uci`) and
//! written as python-chess's `UCI_REGEX` wants it (drops upper case); every PV legal when
//! replayed; an exact-score `info` line right before `bestmove`; no `bestmove` before `stop` or
//! `ponderhit` in `go infinite` and `go ponder`; answers to `stop`, `isready` and `quit`
//! mid-search. Deadlines only catch hangs (a loaded CI machine must not fail them); how fast
//! the engine answers is measured by `scripts/latency.py`. Searches are short (depth <= 8, movetime <= 200 ms, small clocks), so the file
//! runs in seconds with tests in parallel on two cores.

mod proto;

use std::time::{Duration, Instant};

use madhouse::core::{Position, Variant};

use proto::{
    check_search, engine_move, play, pos, replay, startpos, Engine, NoLine, Score, SearchOutput,
    HANG, T,
};

fn ms(n: u64) -> Duration {
    Duration::from_millis(n)
}

fn ok(e: &Engine, r: Result<(), String>) {
    if let Err(msg) = r {
        e.fail(&msg);
    }
}

/// Lines that arrived while the engine should be silent about `bestmove`.
fn assert_no_bestmove(e: &Engine, lines: &[String], what: &str) {
    if let Some(l) = lines.iter().find(|l| l.starts_with("bestmove")) {
        e.fail(&format!("premature '{l}' during {what}"));
    }
}

/// cutechess-cli (§1.1): options, then per game `UCI_Variant` before `ucinewgame`, `debug on`,
/// `Ponder`, `UCI_Opponent`, `isready`; `position startpos moves ... P@e4`; `go wtime btime
/// winc binc`. Plays eight plies on a 3+0.1 s clock.
#[test]
fn cutechess_game() {
    let (mut e, _) = Engine::uci();
    e.send("setoption name Hash value 16");
    e.send("setoption name Threads value 1");
    let stray = e.sync();
    e.check(stray.is_empty(), "output after valid setoption commands");

    e.send("setoption name UCI_Variant value crazyhouse");
    e.send("debug on");
    e.send("ucinewgame");
    e.send("setoption name Ponder value true");
    e.send("setoption name UCI_Opponent value none none computer Opponent 1.0");
    let stray = e.sync();
    e.check(stray.is_empty(), "output after the new-game commands");

    let mut moves: Vec<String> =
        ["e2e4", "d7d5", "e4d5", "d8d5", "P@e4"].iter().map(|s| s.to_string()).collect();
    let mut p = replay(&startpos(), &moves).unwrap();
    let (mut wtime, mut btime) = (3000i64, 3000i64);
    for _ in 0..8 {
        e.send(&format!("position startpos moves {}", moves.join(" ")));
        let t0 = Instant::now();
        let out = e.go(&format!("go wtime {wtime} btime {btime} winc 100 binc 100"), T);
        let used = t0.elapsed().as_millis() as i64;
        ok(&e, check_search(&p, &out));
        if out.best == "(none)" {
            break;
        }
        // The clock runs as a GUI's would (time use itself is measured by the scripts).
        let clock = if p.turn() == madhouse::core::Color::White { &mut wtime } else { &mut btime };
        *clock = (*clock - used).max(0) + 100;
        p = p.after(engine_move(&p, &out.best).unwrap());
        moves.push(out.best.clone());
    }
    e.send("quit");
    let st = e.wait_exit(HANG);
    e.check(st.is_some_and(|s| s.success()), "no clean exit after quit");
}

/// `ucinewgame` keeps `UCI_Variant` (cutechess sends the variant first).
#[test]
fn ucinewgame_keeps_variant() {
    let (mut e, _) = Engine::uci();
    e.send("setoption name UCI_Variant value loop");
    e.send("ucinewgame");
    e.send("position startpos");
    e.send("d");
    let lines = e.sync();
    e.check(lines.iter().any(|l| l == "Variant: loop"), "ucinewgame reset UCI_Variant");
    e.send("setoption name UCI_Variant value crazyhouse");
    e.send("ucinewgame");
    e.send("d");
    let lines = e.sync();
    e.check(lines.iter().any(|l| l == "Variant: crazyhouse"), "UCI_Variant crazyhouse not set");
}

/// A normal search whose `bestmove` carries a ponder move, for the ponder tests.
fn first_move_with_ponder(e: &mut Engine) -> (Vec<String>, proto::SearchOutput) {
    e.send("setoption name Ponder value true");
    e.send("ucinewgame");
    e.sync();
    let moves = vec!["e2e4".to_string()];
    e.send("position startpos moves e2e4");
    let out = e.go("go wtime 2000 btime 2000", T);
    let p = play(&startpos(), &["e2e4"]);
    ok(e, check_search(&p, &out));
    (moves, out)
}

/// Pondering, cutechess / python-chess style: `position ... X Y`, `isready`, `go ponder` with a
/// tiny clock (a search that ignored the ponder flag would be done at once), silence, then
/// `ponderhit` → `bestmove`.
#[test]
fn ponder_then_ponderhit() {
    let (mut e, _) = Engine::uci();
    let (mut moves, out) = first_move_with_ponder(&mut e);
    let mut p = replay(&startpos(), &moves).unwrap();
    p = p.after(engine_move(&p, &out.best).unwrap());
    moves.push(out.best.clone());
    let reply = match &out.ponder {
        Some(r) => r.clone(),
        None => p.legal_moves().as_slice()[0].to_string(),
    };
    p = p.after(engine_move(&p, &reply).unwrap());
    moves.push(reply);

    e.send(&format!("position startpos moves {}", moves.join(" ")));
    e.sync();
    e.send("go ponder wtime 300 btime 300 winc 0 binc 0");
    let early = e.collect_for(ms(800));
    assert_no_bestmove(&e, &early, "go ponder");
    e.send("ponderhit");
    let out = e.read_search(HANG);
    let mut all = early;
    all.extend(out.lines.iter().cloned());
    let all = SearchOutput::parse(&all).unwrap_or_else(|m| e.fail(&m));
    ok(&e, check_search(&p, &all));
}

/// `go ponder` then `stop` (the opponent played another move): `bestmove` only after `stop`,
/// and legal in the ponder position.
#[test]
fn ponder_then_stop() {
    let (mut e, _) = Engine::uci();
    let (mut moves, out) = first_move_with_ponder(&mut e);
    let mut p = replay(&startpos(), &moves).unwrap();
    p = p.after(engine_move(&p, &out.best).unwrap());
    moves.push(out.best.clone());
    let reply = p.legal_moves().as_slice()[0].to_string();
    p = p.after(engine_move(&p, &reply).unwrap());
    moves.push(reply);

    e.send(&format!("position startpos moves {}", moves.join(" ")));
    e.sync();
    e.send("go ponder wtime 200 btime 200 winc 0 binc 0");
    let early = e.collect_for(ms(600));
    assert_no_bestmove(&e, &early, "go ponder");
    e.send("stop");
    let out = e.read_search(HANG);
    let mut all = early;
    all.extend(out.lines.iter().cloned());
    let all = SearchOutput::parse(&all).unwrap_or_else(|m| e.fail(&m));
    ok(&e, check_search(&p, &all));
    // The engine is idle again and takes the real next position.
    e.send("position startpos moves e2e4");
    let out = e.go("go depth 3", T);
    ok(&e, check_search(&play(&startpos(), &["e2e4"]), &out));
}

/// `go infinite`: info lines but no `bestmove` until `stop`; `isready` answered mid-search;
/// `stop` answered.
#[test]
fn go_infinite_isready_and_stop() {
    let (mut e, _) = Engine::uci();
    let moves = ["e2e4", "d7d5", "e4d5", "d8d5", "P@e4"];
    e.send(&format!("position startpos moves {}", moves.join(" ")));
    e.send("go infinite");
    let mut early = e.collect_for(ms(500));
    assert_no_bestmove(&e, &early, "go infinite");

    e.send("isready");
    let lines = e.read_until(|l| l == "readyok", HANG);
    assert_no_bestmove(&e, &lines, "go infinite");
    early.extend(lines.into_iter().filter(|l| l != "readyok"));
    let more = e.collect_for(ms(300));
    assert_no_bestmove(&e, &more, "go infinite");
    early.extend(more);

    e.send("stop");
    let out = e.read_search(HANG);
    early.extend(out.lines.iter().cloned());
    let all = SearchOutput::parse(&early).unwrap_or_else(|m| e.fail(&m));
    ok(&e, check_search(&play(&startpos(), &moves), &all));
    let after = e.collect_for(ms(200));
    assert_no_bestmove(&e, &after, "idle (a second bestmove)");
}

/// `quit` during a search ends the process cleanly.
#[test]
fn quit_during_search_exits() {
    let (mut e, _) = Engine::uci();
    e.send("position startpos");
    e.send("go infinite");
    e.collect_for(ms(200));
    e.send("quit");
    let st = e.wait_exit(HANG);
    e.check(st.is_some_and(|s| s.success()), &format!("no clean exit after quit: {st:?}"));
}

/// End of input exits cleanly, idle or mid-search.
#[test]
fn eof_exits_cleanly() {
    let (mut e, _) = Engine::uci();
    e.sync();
    e.close_stdin();
    let st = e.wait_exit(HANG);
    e.check(st.is_some_and(|s| s.success()), &format!("no clean exit at EOF: {st:?}"));

    let (mut e, _) = Engine::uci();
    e.send("go infinite");
    e.collect_for(ms(200));
    e.close_stdin();
    let st = e.wait_exit(HANG);
    e.check(st.is_some_and(|s| s.success()), &format!("no clean exit at EOF mid-search: {st:?}"));
    e.check(!e.stderr().contains("panicked"), "panic at EOF");
}

/// python-chess / lichess-bot (§1.1): LB's default `uci_options` (Threads 1 here: two cores),
/// per-game `Ponder`/`MultiPV`/`UCI_AnalyseMode`, `ucinewgame`, `UCI_Opponent`, `isready`,
/// `UCI_Variant` without a following `isready`, `position fen <root FEN with []> moves ...`,
/// `go movetime` first, then `go wtime .. winc 0 ..`, and `searchmoves 0000`. With
/// `UCI_ShowWDL` every scored info line carries `wdl` summing to 1000.
#[test]
fn lichess_bot_game() {
    let (mut e, _) = Engine::uci();
    for opt in [
        "setoption name Move Overhead value 100",
        "setoption name Threads value 1",
        "setoption name Hash value 64",
        "setoption name SyzygyPath value ",
        "setoption name UCI_ShowWDL value true",
    ] {
        e.send(opt);
    }
    let stray = e.sync();
    e.check(stray.is_empty(), "output after lichess-bot's default options");

    e.send("setoption name Ponder value false");
    e.send("setoption name MultiPV value 1");
    e.send("setoption name UCI_AnalyseMode value false");
    e.send("ucinewgame");
    e.send("setoption name UCI_Opponent value BOT 2650 computer some-bot");
    let stray = e.sync();
    e.check(stray.is_empty(), "output after the per-game commands");
    e.send("setoption name UCI_Variant value crazyhouse");

    let root = "rnbqkbnr/pppppppp/8/8/8/8/PPPPPPPP/RNBQKBNR[] w KQkq - 0 1";
    let mut moves: Vec<String> = Vec::new();
    let mut p = startpos();
    for ply in 0..8 {
        let pos_cmd = if moves.is_empty() {
            format!("position fen {root}")
        } else {
            format!("position fen {root} moves {}", moves.join(" "))
        };
        e.send(&pos_cmd);
        let go = match ply {
            0 => "go movetime 200".to_string(),
            5 => "go movetime 150 searchmoves 0000".to_string(),
            _ => "go wtime 4000 btime 4000 winc 0 binc 0".to_string(),
        };
        let out = e.go(&go, T);
        ok(&e, check_search(&p, &out));
        for i in out.infos.iter().filter(|i| i.score.is_some()) {
            e.check(i.wdl.is_some(), &format!("UCI_ShowWDL on but no wdl: {}", i.raw));
        }
        if out.best == "(none)" {
            break;
        }
        p = p.after(engine_move(&p, &out.best).unwrap());
        moves.push(out.best);
    }
}

/// `searchmoves` restricts the root.
#[test]
fn searchmoves_restricts_root() {
    let (mut e, _) = Engine::uci();
    e.send("position startpos moves e2e4 d7d5 e4d5 d8d5");
    let out = e.go("go depth 5 searchmoves P@e4 a2a3", T);
    let p = play(&startpos(), &["e2e4", "d7d5", "e4d5", "d8d5"]);
    ok(&e, check_search(&p, &out));
    e.check(out.best == "P@e4" || out.best == "a2a3", "bestmove outside searchmoves");
}

/// `bestmove (none)` with `score mate 0` when checkmated, `score cp 0` in stalemate, also
/// under `go infinite` (after `stop`).
#[test]
fn no_legal_move() {
    let (mut e, _) = Engine::uci();
    let mated = "rnb1kbnr/pppp1ppp/8/4p3/6Pq/5P2/PPPPP2P/RNBQKBNR[] w KQkq - 1 3";
    let stalemate = "k7/8/1Q6/8/8/8/8/7K[] b - - 0 1";
    // Crazyhouse mate: a contact check cannot be blocked by a drop, although the side to move
    // holds a full pocket (python-chess: checkmate, no legal move).
    let zh_mated = "4k3/4Q3/4K3/8/8/8/8/8[rrbbnnpp] b - - 0 1";
    for (fen, want) in
        [(mated, Score::Mate(0)), (stalemate, Score::Cp(0)), (zh_mated, Score::Mate(0))]
    {
        e.send(&format!("position fen {fen}"));
        let out = e.go("go depth 5", T);
        ok(&e, check_search(&pos(fen), &out));
        e.check(out.best == "(none)", "expected bestmove (none)");
        e.check(out.ponder.is_none(), "ponder move with no legal move");
        let last = out.last_scored().unwrap();
        e.check(last.score == Some(want), &format!("expected {want:?}: {}", last.raw));
    }
    e.send(&format!("position fen {mated}"));
    e.send("go infinite");
    let early = e.collect_for(ms(300));
    assert_no_bestmove(&e, &early, "go infinite in a mated position");
    e.send("stop");
    let out = e.read_search(HANG);
    e.check(out.best == "(none)", "expected bestmove (none) after stop");
}

/// `go mate N` finds a drop mate, for both colours, with `score mate 1`.
#[test]
fn go_mate_finds_drop_mate() {
    let (mut e, _) = Engine::uci();
    for fen in ["6k1/5ppp/8/8/8/8/8/K7[R] w - - 0 1", "k7/8/8/8/8/8/5PPP/6K1[r] b - - 0 1"] {
        for go in ["go mate 1", "go mate 3"] {
            e.send(&format!("position fen {fen}"));
            let out = e.go(go, T);
            let p = pos(fen);
            ok(&e, check_search(&p, &out));
            e.check(out.best.starts_with("R@"), &format!("expected a rook drop: {}", out.best));
            let after = p.after(engine_move(&p, &out.best).unwrap());
            e.check(after.in_check() && !after.has_legal_move(), "bestmove does not mate");
            let last = out.last_scored().unwrap();
            e.check(last.score == Some(Score::Mate(1)), &format!("want mate 1: {}", last.raw));
        }
    }
}

/// `go depth N` stops at depth N; `go nodes N` stays near N.
#[test]
fn go_depth_and_nodes() {
    let (mut e, _) = Engine::uci();
    e.send("position startpos moves e2e4 d7d5 e4d5 d8d5 P@e4");
    let p = play(&startpos(), &["e2e4", "d7d5", "e4d5", "d8d5", "P@e4"]);
    for d in [1, 4, 7] {
        let out = e.go(&format!("go depth {d}"), T);
        ok(&e, check_search(&p, &out));
        e.check(out.max_depth() == d, &format!("go depth {d}: deepest info {}", out.max_depth()));
    }
    for n in [5_000u64, 30_000] {
        let out = e.go(&format!("go nodes {n}"), T);
        ok(&e, check_search(&p, &out));
        let nodes = out.infos.iter().filter_map(|i| i.nodes).max().unwrap_or(0);
        // Node limits are checked every few hundred nodes per thread.
        e.check(nodes <= n + 2048, &format!("go nodes {n} searched {nodes}"));
    }
}

/// MultiPV 3: at the final depth, lines multipv 1, 2, 3 with distinct first moves and
/// non-increasing scores.
#[test]
fn multipv_three() {
    let (mut e, _) = Engine::uci();
    e.send("setoption name MultiPV value 3");
    for (start, moves) in [
        ("startpos", vec![]),
        ("startpos", vec!["e2e4", "d7d5", "e4d5", "d8d5", "P@e4"]),
        ("fen r1bqkbnr/pppp1ppp/2n5/8/3P4/2N5/PPP2PPP/R1BQKBNR[Pp] b KQkq - 0 4", vec![]),
    ] {
        let cmd = if moves.is_empty() {
            format!("position {start}")
        } else {
            format!("position {start} moves {}", moves.join(" "))
        };
        e.send(&cmd);
        let base = match start.strip_prefix("fen ") {
            Some(f) => pos(f),
            None => startpos(),
        };
        let p = play(&base, &moves);
        let out = e.go("go depth 6", T);
        ok(&e, check_search(&p, &out));
        let final_depth = out
            .infos
            .iter()
            .filter(|i| i.multipv == Some(3) && i.bound.is_none())
            .filter_map(|i| i.depth)
            .max()
            .unwrap_or_else(|| e.fail("no multipv 3 line"));
        let mut lines = Vec::new();
        for k in 1..=3 {
            let l = out
                .infos
                .iter()
                .rev()
                .find(|i| i.depth == Some(final_depth) && i.multipv == Some(k) && i.bound.is_none())
                .unwrap_or_else(|| e.fail(&format!("no multipv {k} at depth {final_depth}")));
            e.check(!l.pv.is_empty(), "empty multipv line");
            lines.push(l.clone());
        }
        let firsts: Vec<&String> = lines.iter().map(|l| &l.pv[0]).collect();
        e.check(
            firsts[0] != firsts[1] && firsts[1] != firsts[2] && firsts[0] != firsts[2],
            &format!("multipv first moves not distinct: {firsts:?}"),
        );
        let keys: Vec<i64> = lines.iter().map(|l| l.score.unwrap().order_key()).collect();
        e.check(keys[0] >= keys[1] && keys[1] >= keys[2], &format!("scores not ordered: {keys:?}"));
        e.check(out.best == *firsts[0], "bestmove is not multipv 1's move");
    }
}

/// Options parsed the way python-chess parses them (PC engine.py `_option`): name up to
/// `type`, then `default`, `min`, `max`, `var` values; every combo default among its vars,
/// every spin default within range, only known types; lichess-bot's default `uci_options` and
/// the options clients set all present; `UCI_Variant` has `var crazyhouse`. Nothing but `id`,
/// `option` and blank lines before `uciok`.
#[test]
fn uci_options_like_python_chess() {
    let (e, lines) = Engine::uci();
    e.check(lines.first().is_some_and(|l| l.starts_with("id name ")), "first line is not id name");
    let mut opts = std::collections::HashMap::new();
    for l in &lines[..lines.len() - 1] {
        if l.trim().is_empty() || l.starts_with("id name ") || l.starts_with("id author ") {
            continue;
        }
        e.check(l.starts_with("option name "), &format!("unexpected line before uciok: {l}"));
        // python-chess: split at the keywords; a keyword opens its part only while that part
        // is still empty (`var` always opens a new entry).
        let mut parts: std::collections::HashMap<&str, String> = std::collections::HashMap::new();
        let mut vars: Vec<String> = Vec::new();
        let mut cur = "";
        for t in l["option".len()..].split_whitespace() {
            let is_key = ["name", "type", "default", "min", "max"].contains(&t);
            if t == "var" || (is_key && parts.get(t).is_none_or(String::is_empty)) {
                cur = t;
                if t == "var" {
                    vars.push(String::new());
                } else {
                    parts.entry(t).or_default();
                }
                continue;
            }
            let slot = if cur == "var" {
                vars.last_mut().unwrap()
            } else if cur.is_empty() {
                e.fail(&format!("bad option line: {l}"))
            } else {
                parts.get_mut(cur).unwrap()
            };
            if !slot.is_empty() {
                slot.push(' ');
            }
            slot.push_str(t);
        }
        let get = |k: &str| parts.get(k).cloned().unwrap_or_default();
        let (name, typ, default) = (get("name"), get("type"), get("default"));
        let int = |k: &str| -> Option<i64> {
            let v = get(k);
            (!v.is_empty()).then(|| v.parse().unwrap_or_else(|_| e.fail(&format!("bad {k}: {l}"))))
        };
        let (min, max) = (int("min"), int("max"));
        match typ.as_str() {
            "spin" => {
                let d: i64 =
                    default.parse().unwrap_or_else(|_| e.fail(&format!("bad default: {l}")));
                e.check(min.is_none_or(|m| m <= d), &format!("spin default below min: {l}"));
                e.check(max.is_none_or(|m| d <= m), &format!("spin default above max: {l}"));
            }
            "combo" => e.check(vars.contains(&default), &format!("combo default not in vars: {l}")),
            "check" => {
                e.check(default == "true" || default == "false", &format!("bad check default: {l}"))
            }
            "button" | "string" => {}
            other => e.fail(&format!("type '{other}' would make python-chess raise: {l}")),
        }
        opts.insert(name, (typ, vars));
    }
    for name in [
        "Hash",
        "Threads",
        "Move Overhead",
        "SyzygyPath",
        "UCI_ShowWDL",
        "Ponder",
        "MultiPV",
        "UCI_Variant",
        "UCI_AnalyseMode",
    ] {
        e.check(opts.contains_key(name), &format!("option {name} not advertised"));
    }
    let (typ, vars) = &opts["UCI_Variant"];
    e.check(typ.as_str() == "combo", "UCI_Variant is not a combo");
    e.check(vars.iter().any(|v| v == "crazyhouse"), "UCI_Variant lacks var crazyhouse");
}

/// `position fen` in every dialect of §5 test 2 gives the same internal state (`d`'s `Fen:`).
#[test]
fn fen_dialects_agree() {
    let (mut e, _) = Engine::uci();
    let groups: &[&[&str]] = &[
        &[
            "rnbqkbnr/pppppppp/8/8/8/8/PPPPPPPP/RNBQKBNR[] w KQkq - 0 1",
            "rnbqkbnr/pppppppp/8/8/8/8/PPPPPPPP/RNBQKBNR[-] w KQkq - 0 1",
            "rnbqkbnr/pppppppp/8/8/8/8/PPPPPPPP/RNBQKBNR/ w KQkq - 0 1",
            "rnbqkbnr/pppppppp/8/8/8/8/PPPPPPPP/RNBQKBNR[] w KQkq -",
        ],
        &[
            "rnbqkbnr/pppppppp/8/8/8/8/PPPPPPPP/RNBQKBNR[QRpp] w KQkq - 0 1",
            "rnbqkbnr/pppppppp/8/8/8/8/PPPPPPPP/RNBQKBNR[pRpQ] w KQkq - 0 1",
            "rnbqkbnr/pppppppp/8/8/8/8/PPPPPPPP/RNBQKBNR[QR2p] w KQkq - 0 1",
            "rnbqkbnr/pppppppp/8/8/8/8/PPPPPPPP/RNBQKBNR/QRpp w KQkq - 0 1",
        ],
        &[
            "rnbqkbnr/pppppppp/8/8/8/8/PPPPPPPP/RNBQKBNR[2P] w KQkq - 0 1",
            "rnbqkbnr/pppppppp/8/8/8/8/PPPPPPPP/RNBQKBNR[PP] w KQkq - 0 1",
            "rnbqkbnr/pppppppp/8/8/8/8/PPPPPPPP/RNBQKBNR/PP w KQkq - 0 1",
        ],
        &[
            "4k3/1Q~6/8/8/4b3/8/Kpp5/8[] b - - 0 1",
            "4k3/1Q~6/8/8/4b3/8/Kpp5/8[-] b - - 0 1",
            "4k3/1Q~6/8/8/4b3/8/Kpp5/8/ b - - 0 1",
            "4k3/1Q~6/8/8/4b3/8/Kpp5/8[] b -",
        ],
        &[
            // python-chess writes the en-passant square after every double step.
            "rnbqkbnr/pppppppp/8/8/4P3/8/PPPP1PPP/RNBQKBNR[] b KQkq e3 0 1",
            "rnbqkbnr/pppppppp/8/8/4P3/8/PPPP1PPP/RNBQKBNR[-] b KQkq - 0 1",
        ],
    ];
    let mut seen = Vec::new();
    for group in groups {
        let mut fens = Vec::new();
        for fen in *group {
            e.send(&format!("position fen {fen}"));
            let stray = e.sync();
            e.check(stray.is_empty(), &format!("position fen {fen} refused: {stray:?}"));
            fens.push(e.fen());
        }
        e.check(fens.iter().all(|f| *f == fens[0]), &format!("dialects disagree: {fens:?}"));
        let lib = pos(group[0]).fen();
        e.check(fens[0] == lib, &format!("engine {} vs library {lib}", fens[0]));
        e.check(!seen.contains(&fens[0]), "two groups gave the same position");
        seen.push(fens[0].clone());
    }
    // The promoted mark is kept: capturing Q~ puts a pawn in hand, capturing Q a queen.
    e.send("position fen 4k3/1Q~6/8/8/4b3/8/Kpp5/8[] b - - 0 1 moves e4b7");
    let fen = e.fen();
    e.check(fen.contains("[p]"), &format!("captured Q~ did not become a pawn: {fen}"));
    e.send("position fen 4k3/1Q6/8/8/4b3/8/Kpp5/8[] b - - 0 1 moves e4b7");
    let fen = e.fen();
    e.check(fen.contains("[q]"), &format!("captured Q did not stay a queen: {fen}"));
    // Lower-case drops and promotion letters are accepted on input.
    e.send("position startpos moves e2e4 d7d5 e4d5 d8d5 p@e4");
    let lower = e.fen();
    e.send("position startpos moves e2e4 d7d5 e4d5 d8d5 P@e4");
    let upper = e.fen();
    e.check(upper == lower, "lower-case drop read differently");
    e.send("position fen 8/4P2k/8/8/8/8/8/K7[] w - - 0 1 moves e7e8q");
    let promo = e.fen();
    e.check(promo.starts_with("4Q~3/"), &format!("promotion not marked: {promo}"));
}

/// A position with full pockets, where drops fill the PVs: every drop in every PV and in
/// `bestmove`/`ponder` is written `P@e4` style (upper case) and legal.
#[test]
fn drops_in_pv_are_upper_case() {
    let (mut e, _) = Engine::uci();
    let fen = "r1b1k2r/ppp2ppp/2n5/3q4/8/8/PPP2PPP/R1BQK2R[NBPPnbpp] b KQkq - 0 10";
    e.send(&format!("position fen {fen}"));
    let out = e.go("go depth 6", T);
    ok(&e, check_search(&pos(fen), &out));
    let drops = out.infos.iter().flat_map(|i| i.pv.iter()).filter(|m| m.contains('@')).count();
    eprintln!("drops seen in PVs: {drops}");
    e.check(drops > 0, "no drop in any PV: the position no longer tests drops");
}

/// `stop`, `ponderhit`, `isready` when idle; `go` while searching is refused without a second
/// `bestmove`.
#[test]
fn idle_and_concurrent_commands() {
    let (mut e, _) = Engine::uci();
    e.send("stop");
    e.send("ponderhit");
    let stray = e.sync();
    e.check(!stray.iter().any(|l| l.starts_with("bestmove")), "bestmove from an idle stop");
    e.send("position startpos");
    e.send("go infinite");
    e.collect_for(ms(100));
    e.send("go depth 2");
    e.send("position startpos moves e2e4");
    // `ucinewgame` mid-search (a GUI should not send it) may end the search; either way
    // exactly one bestmove comes.
    e.send("ucinewgame");
    e.send("stop");
    let out = e.read_search(HANG);
    e.check(out.best != "(none)", "no move");
    let after = e.collect_for(ms(300));
    assert_no_bestmove(&e, &after, "idle (second bestmove)");
    match e.try_line(ms(10)) {
        Err(NoLine::Timeout) => {}
        other => e.fail(&format!("unexpected {other:?}")),
    }
    e.assert_healthy();
}

/// `go` right after `stop`, before the stopped search's `bestmove` is out (a GUI that sends
/// `stop` and starts the next search at once): the old search ends with its `bestmove`, then
/// the new one runs and ends with its own. Every `go` gets exactly one `bestmove`.
#[test]
fn go_right_after_stop() {
    let (mut e, _) = Engine::uci();
    e.send("position startpos moves e2e4");
    for _ in 0..5 {
        e.send("go infinite");
        e.send("stop");
    }
    e.send("go depth 3");
    let mut count = 0;
    while count < 6 {
        e.read_until(|l| l.starts_with("bestmove"), HANG);
        count += 1;
    }
    let rest = e.sync();
    assert_no_bestmove(&e, &rest, "idle (a seventh bestmove)");
    e.assert_healthy();
}

/// A search stopped at once still completes depth 1, so `bestmove` always follows an
/// `info ... score` line (cutechess and python-chess read the score from it).
#[test]
fn immediate_stop_still_reports_a_score() {
    let (mut e, _) = Engine::uci();
    e.send("position startpos moves e2e4");
    for _ in 0..20 {
        e.send("go infinite");
        e.send("stop");
        let out = e.read_search(HANG);
        let p = play(&startpos(), &["e2e4"]);
        ok(&e, check_search(&p, &out));
    }
}

/// Each variant over UCI: after `UCI_Variant`, `go perft` counts positions where the three
/// variants differ (Fairy-Stockfish's counts, as in `tests/data/variants.epd`), and a search
/// plays a move legal in that variant.
#[test]
fn each_variant_over_uci() {
    let (mut e, _) = Engine::uci();
    let promoted = "rnbqkbnr/ppp1pppp/3Q~4/8/8/8/PPPPPPPP/RNB1KBNR[] b KQkq - 0 1";
    let pawns = "4k3/8/8/8/8/8/8/4K3[Pp] w - - 0 1";
    for (variant, fen, nodes) in [
        (Variant::Crazyhouse, promoted, 31232),
        (Variant::Loop, promoted, 31328),
        (Variant::Chessgi, promoted, 31328),
        (Variant::Crazyhouse, pawns, 28213),
        (Variant::Loop, pawns, 28213),
        (Variant::Chessgi, pawns, 36702),
    ] {
        e.send(&format!("setoption name UCI_Variant value {variant}"));
        e.send(&format!("position fen {fen}"));
        e.send("go perft 3");
        let total = e.read_until(|l| l.starts_with("Nodes searched"), T).pop().unwrap();
        e.check(
            total == format!("Nodes searched: {nodes}"),
            &format!("{variant} {fen}: '{total}', Fairy-Stockfish counts {nodes}"),
        );
        let out = e.go("go depth 3", T);
        let p = Position::from_fen(fen, variant).unwrap();
        ok(&e, check_search(&p, &out));
    }
}

/// Chess.com's FEN as users paste it, pocket and promoted squares trailing the counters, read
/// by `position fen` as the bracket form python-chess writes for the same position; the
/// promoted mark holds (the queen on h2 returns to hand as a pawn).
#[test]
fn chesscom_fen_through_position() {
    let (mut e, _) = Engine::uci();
    let chesscom = "r1b1k2r/ppp2ppp/2n5/8/4P3/8/PPP2PPq/R1B1K2R w KQkq - 0 26 NNBRpr h2";
    // python-chess 1.11, from the bracket form with `q~` on h2.
    let want = "r1b1k2r/ppp2ppp/2n5/8/4P3/8/PPP2PPq~/R1B1K2R[RBNNrp] w KQkq - 0 26";
    let after_capture = "r1b1k2r/ppp2ppp/2n5/8/4P3/8/PPP2PPR/R1B1K3[RBNNPrp] b Qkq - 0 26";
    e.send(&format!("position fen {chesscom}"));
    let stray = e.sync();
    e.check(stray.is_empty(), &format!("refused: {stray:?}"));
    let fen = e.fen();
    e.check(same_position(&fen, want), &format!("engine {fen}, python-chess {want}"));
    e.send(&format!("position fen {chesscom} moves h1h2"));
    let fen = e.fen();
    e.check(same_position(&fen, after_capture), &format!("after h1h2: {fen}"));
}

/// Two FENs of one position, pocket letters in any order.
fn same_position(a: &str, b: &str) -> bool {
    let norm = |f: &str| {
        let (board, rest) = f.split_once('[').unwrap_or((f, ""));
        let (pocket, rest) = rest.split_once(']').unwrap_or(("", rest));
        let mut letters: Vec<char> = pocket.chars().collect();
        letters.sort_unstable();
        (board.to_string(), letters, rest.trim().to_string())
    };
    norm(a) == norm(b)
}
