//! Perft against the shared crazyhouse suite (`tests/data/crazyhouse.epd`, verified by
//! python-chess and Fairy-Stockfish), plus the loop and chessgi counts kept in its comments,
//! and positions where the three variants' counts differ (`tests/data/variants.epd`, from
//! Fairy-Stockfish).
//!
//! Cases up to `FAST_LIMIT` nodes run in every `cargo test`; the rest are `#[ignore]`d and run
//! by `.ci/run` with `--ignored` (release mode), so every count in the file is checked in CI.

use madhouse::core::perft::perft;
use madhouse::core::{Position, Variant};

const SUITE: &str = include_str!("data/crazyhouse.epd");
const FAST_LIMIT: u64 = 3_000_000;

struct Case {
    line: usize,
    variant: Variant,
    fen: String,
    depths: Vec<(u32, u64)>,
}

fn parse_case(line_no: usize, text: &str, variant: Variant) -> Case {
    let mut parts = text.split(';');
    let fen = parts.next().unwrap().trim().to_string();
    let depths = parts
        .map(|p| {
            let p = p.trim();
            let (d, n) = p.split_once(' ').unwrap_or_else(|| panic!("line {line_no}: {p}"));
            (d.trim_start_matches('D').parse().unwrap(), n.trim().parse().unwrap())
        })
        .collect();
    Case { line: line_no, variant, fen, depths }
}

fn cases() -> Vec<Case> {
    let mut out = Vec::new();
    for (i, line) in SUITE.lines().enumerate() {
        let line = line.trim();
        if line.is_empty() {
            continue;
        }
        // Loop and chessgi cases are kept as comments: "#loop    <fen> ;D4 ..."
        for (prefix, variant) in [("#loop", Variant::Loop), ("#chessgi", Variant::Chessgi)] {
            if let Some(rest) = line.strip_prefix(prefix) {
                if rest.starts_with(' ') && rest.contains(";D") {
                    out.push(parse_case(i + 1, rest.trim(), variant));
                }
            }
        }
        if !line.starts_with('#') {
            out.push(parse_case(i + 1, line, Variant::Crazyhouse));
        }
    }
    out
}

fn run(filter: impl Fn(u64) -> bool) -> usize {
    let mut checked = 0;
    for case in cases() {
        let pos = Position::from_fen(&case.fen, case.variant)
            .unwrap_or_else(|e| panic!("line {}: {}: {e}", case.line, case.fen));
        for &(depth, expected) in &case.depths {
            if !filter(expected) {
                continue;
            }
            let got = perft(&pos, depth);
            assert_eq!(
                got, expected,
                "line {} ({}) {} depth {depth}",
                case.line, case.variant, case.fen
            );
            checked += 1;
        }
    }
    checked
}

#[test]
fn suite_small_cases() {
    let n = run(|nodes| nodes <= FAST_LIMIT);
    assert!(n > 100, "only {n} counts checked");
}

#[test]
#[ignore = "large counts; .ci/run runs them in release mode"]
fn suite_large_cases() {
    let n = run(|nodes| nodes > FAST_LIMIT);
    assert!(n >= 5, "only {n} counts checked");
}

#[test]
fn variants_are_all_present() {
    let cs = cases();
    assert!(cs.iter().any(|c| c.variant == Variant::Loop));
    assert!(cs.iter().any(|c| c.variant == Variant::Chessgi));
}

/// The cases of `variants.epd`: (line, variant, FEN, depth, nodes).
fn variant_cases() -> Vec<(usize, Variant, String, u32, u64)> {
    let mut out = Vec::new();
    for (i, line) in include_str!("data/variants.epd").lines().enumerate() {
        let line = line.trim();
        if line.is_empty() || line.starts_with('#') {
            continue;
        }
        let (variant, rest) = line.split_once(' ').unwrap_or_else(|| panic!("line {}", i + 1));
        let variant: Variant = variant.parse().unwrap_or_else(|e| panic!("line {}: {e}", i + 1));
        let case = parse_case(i + 1, rest.trim(), variant);
        for (d, n) in case.depths {
            out.push((i + 1, variant, case.fen.clone(), d, n));
        }
    }
    out
}

#[test]
fn variants_differ_where_their_rules_do() {
    let cases = variant_cases();
    let mut wrong = Vec::new();
    for (line, variant, fen, depth, expected) in &cases {
        let pos = Position::from_fen(fen, *variant).unwrap_or_else(|e| panic!("{fen}: {e}"));
        let got = perft(&pos, *depth);
        if got != *expected {
            wrong.push(format!("line {line} ({variant}) {fen} D{depth}: {got}, want {expected}"));
        }
    }
    assert!(wrong.is_empty(), "{}", wrong.join("\n"));
    // The file keeps its purpose: loop differs from crazyhouse somewhere, chessgi from loop.
    let count = |v: Variant, fen: &str| {
        cases.iter().find(|c| c.1 == v && c.2 == fen).map(|c| c.4).expect("all three variants")
    };
    let fens: Vec<&String> = cases.iter().map(|c| &c.2).collect();
    let differ = |a: Variant, b: Variant| fens.iter().any(|f| count(a, f) != count(b, f));
    assert!(differ(Variant::Crazyhouse, Variant::Loop));
    assert!(differ(Variant::Loop, Variant::Chessgi));
}
