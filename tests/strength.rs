//! The strength limit through the protocols (`Skill Level`, `UCI_LimitStrength`, `UCI_Elo`,
//! `Skill Seed`; XBoard's `SkillLevel`, `LimitStrength`, `Elo`, `SkillSeed`).
//!
//! - The options are advertised in both protocols, and bad values get each protocol's error
//!   form (UCI `info string`, XBoard `Error (bad option value)`).
//! - A weak level plays a move other than its own search's best in some of the bench
//!   positions, always one of the lines it reported, never one losing more than the level
//!   allows, and never an illegal one (checked with shakmaty, not Madhouse's move generator).
//!   The last `multipv 1` line before `bestmove` is the move's own, and only the lines the
//!   GUI asked for are shown.
//! - The same seed replays the same game; another seed plays another.
//! - Switching the limit off gives exactly the full-strength search (same node count and
//!   move as an engine that never had the limit).
//! - `go ponder` waits for `ponderhit` or `stop`; `go infinite` and `UCI_AnalyseMode` search
//!   at full strength; a clock search ends. Deadlines only catch hangs.

mod proto;

use std::time::Duration;

use madhouse::search::skill::{ELO_MAX, ELO_MIN, LEVELS, SEED_MAX};
use proto::{check_search, Engine, InfoLine, Score, SearchOutput, HANG, T};
use shakmaty::fen::Fen;
use shakmaty::uci::UciMove;
use shakmaty::variant::Crazyhouse;
use shakmaty::{CastlingMode, Position as _, PositionError};

/// Is `mv` legal after `moves` from `fen`, by shakmaty's crazyhouse rules?
fn shakmaty_legal(fen: &str, moves: &[String], mv: &str) -> bool {
    let parsed: Fen = fen.parse().unwrap_or_else(|e| panic!("shakmaty cannot read {fen}: {e}"));
    let mut pos: Crazyhouse = parsed
        .into_position(CastlingMode::Standard)
        // Bench positions with a promoted queen: shakmaty counts the pawn it was as well.
        .or_else(PositionError::ignore_too_much_material)
        .unwrap_or_else(|e| panic!("shakmaty refuses {fen}: {e}"));
    for m in moves {
        let played = UciMove::from_ascii(m.as_bytes())
            .ok()
            .and_then(|u| u.to_move(&pos).ok())
            .unwrap_or_else(|| panic!("{m} is not legal in {fen} after {moves:?}"));
        pos.play_unchecked(played);
    }
    UciMove::from_ascii(mv.as_bytes()).ok().and_then(|u| u.to_move(&pos).ok()).is_some()
}

/// The crazyhouse start position.
const START: &str = "rnbqkbnr/pppppppp/8/8/8/8/PPPPPPPP/RNBQKBNR[] w KQkq - 0 1";

fn bench_fens() -> Vec<&'static str> {
    madhouse::bench::positions().collect()
}

/// The scored `info` lines of a search that the iterations reported: all but a final line
/// that repeats `multipv 1` for the move chosen.
fn iteration_lines(out: &SearchOutput) -> &[InfoLine] {
    let n = out.infos.len();
    let last = &out.infos[n - 1];
    let repeated = n >= 2
        && last.multipv == Some(1)
        && out.infos[..n - 1]
            .iter()
            .rev()
            .take_while(|i| i.depth == last.depth)
            .any(|i| i.multipv == Some(1));
    if repeated {
        &out.infos[..n - 1]
    } else {
        &out.infos
    }
}

/// Checks the rules every limited search keeps: legal move, the last `multipv 1` line is the
/// move's own with an exact score, no line beyond the MultiPV shown.
fn check_limited(e: &Engine, fen: &str, moves: &[String], out: &SearchOutput, shown: u32) {
    e.check(
        shakmaty_legal(fen, moves, &out.best),
        &format!("bestmove {} is illegal (shakmaty) in {fen} after {moves:?}", out.best),
    );
    let last = out.infos.iter().rev().find(|i| i.multipv == Some(1));
    let last = last.unwrap_or_else(|| e.fail("no multipv 1 line"));
    e.check(
        last.bound.is_none() && last.pv.first() == Some(&out.best),
        &format!("the last multipv 1 line is not the move's exact line: {}", last.raw),
    );
    e.check(
        out.infos.iter().all(|i| i.multipv.unwrap_or(1) <= shown),
        &format!("a line beyond MultiPV {shown} was shown"),
    );
}

#[test]
fn options_over_uci() {
    let (mut e, lines) = Engine::uci();
    for want in [
        "option name UCI_LimitStrength type check default false".to_string(),
        format!("option name UCI_Elo type spin default {ELO_MAX} min {ELO_MIN} max {ELO_MAX}"),
        "option name Skill Level type spin default 20 min 0 max 20".to_string(),
        format!("option name Skill Seed type spin default 0 min 0 max {SEED_MAX}"),
    ] {
        e.check(lines.contains(&want), &format!("'{want}' not advertised"));
    }
    e.check(SEED_MAX == i32::MAX as i64, "Skill Seed's range fits a 32-bit GUI field");
    for good in [
        "setoption name UCI_LimitStrength value true",
        "setoption name UCI_Elo value 2000",
        "setoption name skill level value 7",
        "setoption name Skill Seed value 2147483647",
        "setoption name UCI_LimitStrength value false",
    ] {
        e.send(good);
        let out = e.sync();
        e.check(out.is_empty(), &format!("'{good}' answered {out:?}"));
    }
    for (bad, want) in [
        ("Skill Level value 21", "invalid value '21' for Skill Level: expected 0..20"),
        ("Skill Level value -1", "invalid value '-1' for Skill Level: expected 0..20"),
        ("Skill Level value x", "invalid value 'x' for Skill Level: expected 0..20"),
        (
            "UCI_Elo value 100",
            &format!("invalid value '100' for UCI_Elo: expected {ELO_MIN}..{ELO_MAX}"),
        ),
        (
            "UCI_LimitStrength value 1",
            "invalid value '1' for UCI_LimitStrength: expected true or false",
        ),
        (
            "Skill Seed value -5",
            &format!("invalid value '-5' for Skill Seed: expected 0..{SEED_MAX}"),
        ),
    ] {
        e.send(&format!("setoption name {bad}"));
        let out = e.sync();
        let want = format!("info string {want}");
        e.check(out == [want.clone()], &format!("'{bad}': got {out:?}, want {want:?}"));
    }
    e.assert_healthy();
}

/// The deepest depth in XBoard thinking lines (`depth score time nodes ...`).
fn xboard_max_depth(lines: &[String]) -> i32 {
    lines
        .iter()
        .filter_map(|l| l.split_whitespace().next().and_then(|d| d.parse::<i32>().ok()))
        .max()
        .unwrap_or(0)
}

#[test]
fn options_over_xboard() {
    let (mut e, features) = Engine::xboard();
    for want in [
        "feature option=\"LimitStrength -check 0\"".to_string(),
        format!("feature option=\"Elo -spin {ELO_MAX} {ELO_MIN} {ELO_MAX}\""),
        "feature option=\"SkillLevel -spin 20 0 20\"".to_string(),
        format!("feature option=\"SkillSeed -spin 0 0 {SEED_MAX}\""),
    ] {
        e.check(features.contains(&want), &format!("'{want}' not in {features:?}"));
    }
    for bad in ["SkillLevel=21", "Elo=99999", "LimitStrength=true", "SkillSeed=x"] {
        e.send(&format!("option {bad}"));
        let out = e.ping(1);
        let want = format!("Error (bad option value): {bad}");
        e.check(out == [want.clone()], &format!("'{bad}': got {out:?}, want {want:?}"));
    }
    // Level 0 searches one ply (LEVELS[0].depth) whatever `sd` allows; full strength does not.
    let level0 = LEVELS[0].depth;
    for (options, deeper) in [
        (vec!["option SkillLevel=0", "option SkillSeed=3"], false),
        (vec!["option SkillLevel=20"], true),
        (vec!["option LimitStrength=1", &format!("option Elo={ELO_MIN}")], false),
        (vec!["option LimitStrength=0"], true),
    ] {
        for o in &options {
            e.send(o);
        }
        for c in ["new", "force", "sd 6", "st 30", "post"] {
            e.send(c);
        }
        let out = e.ping(2);
        e.check(out.is_empty(), &format!("{options:?} answered {out:?}"));
        e.send("go");
        let lines = e.read_until(|l| l.starts_with("move "), HANG);
        let mv = lines.last().unwrap()["move ".len()..].to_string();
        e.check(shakmaty_legal(START, &[], &mv), &format!("illegal move {mv}"));
        let depth = xboard_max_depth(&lines);
        let ok = if deeper { depth == 6 } else { depth == level0 };
        e.check(ok, &format!("{options:?}: searched to depth {depth}"));
    }
    e.assert_healthy();
}

/// Level 0 over the bench positions, every candidate shown (MultiPV = its candidates): the
/// move is one of the lines reported, within the level's largest loss, not mated when the
/// best is not, and in some positions not the best line's move.
#[test]
fn a_low_level_varies_within_its_limits() {
    let level = LEVELS[0];
    let (mut e, _) = Engine::uci();
    e.send("setoption name Skill Level value 0");
    e.send("setoption name Skill Seed value 11");
    e.send(&format!("setoption name MultiPV value {}", level.candidates));
    let (mut other, mut total) = (0, 0);
    for fen in bench_fens() {
        e.send(&format!("position fen {fen}"));
        let out = e.go("go wtime 60000 btime 60000 winc 1000 binc 1000", T);
        check_limited(&e, fen, &[], &out, level.candidates as u32);
        let lines = iteration_lines(&out);
        let depth = lines.iter().filter_map(|i| i.depth).max().unwrap_or(0);
        let at_depth: Vec<&InfoLine> =
            lines.iter().filter(|i| i.depth == Some(depth) && i.bound.is_none()).collect();
        let best = at_depth.iter().find(|i| i.multipv == Some(1)).unwrap_or_else(|| e.fail(fen));
        let chosen = at_depth
            .iter()
            .find(|i| i.pv.first() == Some(&out.best))
            .unwrap_or_else(|| e.fail(&format!("{} is not a reported line in {fen}", out.best)));
        let (b, c) = (best.score.unwrap(), chosen.score.unwrap());
        if let (Score::Cp(b), Score::Cp(c)) = (b, c) {
            e.check(
                b - c <= level.max_loss_cp,
                &format!("{fen}: chose {} at {c} cp, the best is {b} cp", out.best),
            );
        }
        let mated = |s: Score| matches!(s, Score::Mate(n) if n < 0);
        e.check(!mated(c) || mated(b), &format!("{fen}: chose a mated line {}", chosen.raw));
        total += 1;
        if best.pv.first() != Some(&out.best) {
            other += 1;
        }
    }
    e.check(other >= 3, &format!("level 0 played its best line in {} of {total}", total - other));
    e.assert_healthy();
}

/// A short self-play game at a level, each move checked; returns the moves.
fn self_play(options: &[&str], plies: usize) -> Vec<String> {
    let (mut e, _) = Engine::uci();
    for o in options {
        e.send(o);
    }
    e.send("ucinewgame");
    let mut moves: Vec<String> = Vec::new();
    for _ in 0..plies {
        let pos = if moves.is_empty() {
            "position startpos".to_string()
        } else {
            format!("position startpos moves {}", moves.join(" "))
        };
        e.send(&pos);
        let out = e.go("go wtime 100000 btime 100000 winc 1000 binc 1000", T);
        if out.best == "(none)" {
            break;
        }
        check_limited(&e, START, &moves, &out, 1);
        moves.push(out.best);
    }
    e.assert_healthy();
    moves
}

#[test]
fn the_same_seed_replays_the_same_game() {
    let a = self_play(
        &["setoption name Skill Level value 4", "setoption name Skill Seed value 42"],
        24,
    );
    let b = self_play(
        &["setoption name Skill Level value 4", "setoption name Skill Seed value 42"],
        24,
    );
    assert_eq!(a, b, "the same seed played two games");
    let c = self_play(
        &["setoption name Skill Level value 4", "setoption name Skill Seed value 43"],
        24,
    );
    assert_ne!(a, c, "seeds 42 and 43 played the same game");
    // Through UCI_Elo too.
    let elo = [
        "setoption name UCI_LimitStrength value true",
        "setoption name UCI_Elo value 1800",
        "setoption name Skill Seed value 5",
    ];
    assert_eq!(self_play(&elo, 12), self_play(&elo, 12));
}

/// The last line and move of a fixed-depth search.
fn fixed_depth(e: &mut Engine, fen: &str) -> (String, i32, Option<u64>, String) {
    e.send(&format!("position fen {fen}"));
    let out = e.go("go depth 7", T);
    if let Err(m) = check_search(&proto::pos(fen), &out) {
        e.fail(&m);
    }
    let last = out.infos.last().unwrap_or_else(|| e.fail("no info line"));
    (out.best.clone(), last.depth.unwrap_or(0), last.nodes, last.pv.join(" "))
}

#[test]
fn the_limit_off_is_full_strength() {
    for fen in bench_fens().into_iter().step_by(10) {
        let (mut full, _) = Engine::uci();
        let want = fixed_depth(&mut full, fen);
        let (mut e, _) = Engine::uci();
        for (on, off) in [
            (
                vec![
                    "setoption name UCI_LimitStrength value true",
                    "setoption name UCI_Elo value 2000",
                ],
                "setoption name UCI_LimitStrength value false",
            ),
            (vec!["setoption name Skill Level value 3"], "setoption name Skill Level value 20"),
        ] {
            for o in &on {
                e.send(o);
            }
            let limited = fixed_depth(&mut e, fen);
            e.check(limited.1 < 7, &format!("{on:?}: still searched to depth {}", limited.1));
            e.send("ucinewgame");
            e.send(off);
            let got = fixed_depth(&mut e, fen);
            e.check(got == want, &format!("{fen}: {off} gave {got:?}, a fresh engine {want:?}"));
        }
        e.assert_healthy();
    }
}

#[test]
fn ponder_stop_and_analysis_with_the_limit() {
    let (mut e, _) = Engine::uci();
    e.send("setoption name Skill Level value 2");
    e.send("setoption name Ponder value true");
    e.send("position startpos moves e2e4 d7d5");
    // The level's budget is used up in well under a second; the move still waits.
    e.send("go ponder wtime 5000 btime 5000 winc 100 binc 100");
    let early = e.collect_for(Duration::from_millis(500));
    e.check(!early.iter().any(|l| l.starts_with("bestmove")), "bestmove before ponderhit");
    e.send("ponderhit");
    let mut lines = early;
    lines.extend(e.read_until(|l| l.starts_with("bestmove"), HANG));
    let out = SearchOutput::parse(&lines).unwrap_or_else(|m| e.fail(&m));
    check_limited(&e, START, &["e2e4".into(), "d7d5".into()], &out, 1);

    e.send("go ponder wtime 5000 btime 5000");
    let early = e.collect_for(Duration::from_millis(300));
    e.check(!early.iter().any(|l| l.starts_with("bestmove")), "bestmove before stop");
    e.send("stop");
    e.read_search(HANG);

    // Analysis is not limited: it goes past the level's depth until stopped.
    let past = LEVELS[2].depth + 2;
    e.send("go infinite");
    let lines = e
        .read_until(|l| InfoLine::parse(l).is_ok_and(|i| i.depth.is_some_and(|d| d >= past)), HANG);
    e.check(!lines.iter().any(|l| l.starts_with("bestmove")), "bestmove during go infinite");
    e.send("stop");
    e.read_search(HANG);

    e.send("setoption name UCI_AnalyseMode value true");
    let out = e.go(&format!("go depth {past}"), HANG);
    e.check(out.max_depth() == past, "UCI_AnalyseMode search was limited");
    e.send("setoption name UCI_AnalyseMode value false");

    // A clock search ends by itself.
    let out = e.go("go wtime 1000 btime 1000", HANG);
    check_limited(&e, START, &["e2e4".into(), "d7d5".into()], &out, 1);
    e.assert_healthy();
}
