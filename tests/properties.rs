//! Property tests (proptest) for the rules core's text interfaces and move validation.
//!
//! Positions come from seeded random playouts (`common::playout`) from the start position and
//! the suite positions, in all three variants; proptest generates the variant, start, seed and
//! length, so a failure shrinks to a short, replayable game.
//!
//! - (a) FEN round trip: `Position::from_fen(&pos.fen(), v) == pos` (which includes the key)
//!   and `fen()` is stable under print -> parse -> print.
//! - (b) Robustness: arbitrary strings, and valid FENs / moves with random character inserts,
//!   deletes and replacements, never make `from_fen`, `parse_uci` or `parse_san` panic. A
//!   mutated FEN that is accepted must give a usable position (round trip, legal moves playable,
//!   keys exact), and a move string that is accepted must be a legal move.
//! - (c) `is_legal` is exact: for all 65536 raw values, `Move::from_raw(r)` followed by
//!   `is_legal` agrees with membership in `legal_moves()`, on playout positions and on hand-made
//!   positions that only a FEN can produce.
//! - (d) Notation round trip: every legal move's `san()` parses back with `parse_san` to the
//!   same move, and its `to_string()` (UCI) parses back with `parse_uci`; SANs are unique.
//!
//! Case counts are proptest's default (256) except the exhaustive `is_legal` check (40
//! positions x 65536 raw moves); the file runs in about a second. `PROPTEST_CASES=10000` scales
//! the default-count properties up for a deeper fuzzing run (about 10 s).
//!
//! Replaying a failure: each run draws one RNG seed (or takes `PROPTEST_RNG_SEED`) and a
//! failing test prints it (`proptest seed N`), so `PROPTEST_RNG_SEED=N cargo test --release
//! --test properties` reruns a CI failure. Failing cases are also saved in
//! `proptest-regressions/properties.txt` (committed), which proptest replays before new cases.
//!
//! Two tests here document bugs found while writing them (see their comments):
//! `is_legal_rejects_en_passant_in_double_check` and `huge_move_counters_do_not_overflow`.

mod common;

use std::sync::OnceLock;

use madhouse::core::{Move, Position, Variant};
use proptest::prelude::*;
use proptest::test_runner::{FileFailurePersistence, RngSeed};

/// The run's seed: `PROPTEST_RNG_SEED`, else drawn from the clock.
fn run_seed() -> u64 {
    static SEED: OnceLock<u64> = OnceLock::new();
    *SEED.get_or_init(|| {
        std::env::var("PROPTEST_RNG_SEED").ok().and_then(|s| s.trim().parse().ok()).unwrap_or_else(
            || {
                let t = std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH);
                t.map_or(0, |d| d.as_nanos() as u64)
            },
        )
    })
}

/// Proptest settings: `cases` cases, the run's seed, printed so
/// that a failing test shows it (the harness prints a failing test's output), and failures
/// saved where the committed regressions file is.
fn config(cases: u32) -> ProptestConfig {
    let seed = run_seed();
    eprintln!("proptest seed {seed} (replay: PROPTEST_RNG_SEED={seed})");
    // `PROPTEST_CASES` scales the default-count properties only.
    let scaled = std::env::var("PROPTEST_CASES").ok().and_then(|c| c.parse().ok());
    let cases = if cases == 256 { scaled.unwrap_or(cases) } else { cases };
    ProptestConfig {
        cases,
        rng_seed: RngSeed::Fixed(seed),
        // Relative to the package root, where cargo runs integration tests.
        failure_persistence: Some(Box::new(FileFailurePersistence::Direct(
            "proptest-regressions/properties.txt",
        ))),
        ..ProptestConfig::default()
    }
}

/// Start positions per variant, parsed once.
fn starts() -> &'static [Vec<Position>; 3] {
    static STARTS: OnceLock<[Vec<Position>; 3]> = OnceLock::new();
    STARTS.get_or_init(|| Variant::ALL.map(common::start_positions))
}

/// A strategy for playout games: (variant, start index, seed, length).
fn game() -> impl Strategy<Value = (usize, usize, u64, usize)> {
    (0usize..3, any::<usize>(), any::<u64>(), 0usize..160)
}

/// The positions of the game described by a `game()` value.
fn game_positions((v, start, seed, len): (usize, usize, u64, usize)) -> Vec<Position> {
    let starts = &starts()[v];
    common::playout(&starts[start % starts.len()], seed, len)
}

/// Applies character edits: op 0 inserts `c` at `i`, op 1 deletes at `i`, op 2 replaces at `i`
/// (indices wrap around the current length).
fn mutate(text: &str, edits: &[(u8, usize, char)]) -> String {
    let mut chars: Vec<char> = text.chars().collect();
    for &(op, i, c) in edits {
        match op % 3 {
            0 => {
                let at = i % (chars.len() + 1);
                chars.insert(at, c);
            }
            1 if !chars.is_empty() => {
                let at = i % chars.len();
                chars.remove(at);
            }
            _ if !chars.is_empty() => {
                let at = i % chars.len();
                chars[at] = c;
            }
            _ => {}
        }
    }
    chars.into_iter().collect()
}

/// Characters mutations draw from: mostly FEN and move syntax, sometimes anything.
fn edit_char() -> impl Strategy<Value = char> {
    prop_oneof![
        4 => prop::sample::select(
            "pnbrqkPNBRQK012345678910/~[]- wbWBKQkqAHah@=+#x".chars().collect::<Vec<_>>()
        ),
        1 => any::<char>(),
    ]
}

fn edits() -> impl Strategy<Value = Vec<(u8, usize, char)>> {
    prop::collection::vec((0u8..3, any::<usize>(), edit_char()), 1..6)
}

/// Everything an accepted position must support without panicking or going wrong.
fn assert_usable(pos: &Position, source: &str) {
    let fen = pos.fen();
    let again = Position::from_fen(&fen, pos.variant())
        .unwrap_or_else(|e| panic!("{source}: own FEN {fen} refused: {e}"));
    assert_eq!(&again, pos, "{source}: round trip through {fen}");
    assert_eq!(pos.key(), pos.compute_key(), "{source}");
    let moves = pos.legal_moves();
    assert_eq!(moves.len() as u64, pos.count_legal(), "{source}");
    for &m in moves.iter() {
        assert!(pos.is_legal(m), "{source}: {m}");
        let next = pos.after(m);
        assert_eq!(next.key(), next.compute_key(), "{source}: after {m}");
        assert!(
            !next.is_attacked(next.king(pos.turn()), next.turn()),
            "{source}: {m} leaves the king in check"
        );
    }
}

/// If a move parser accepted `text`, the move must be legal.
fn assert_parsed_legal(pos: &Position, text: &str, result: Option<Move>) {
    if let Some(m) = result {
        assert!(pos.legal_moves().contains(m), "'{text}' parsed to illegal {m} in {}", pos.fen());
    }
}

/// Checks `is_legal` against the generator for every raw 16-bit value.
fn assert_is_legal_exact(pos: &Position) {
    let mut legal = vec![false; 1 << 16];
    for &m in pos.legal_moves().iter() {
        assert!(!legal[m.raw() as usize], "{m} generated twice in {}", pos.fen());
        legal[m.raw() as usize] = true;
        assert_eq!(Move::from_raw(m.raw()), Some(m));
    }
    for raw in 0..=u16::MAX {
        if let Some(m) = Move::from_raw(raw) {
            assert_eq!(
                pos.is_legal(m),
                legal[raw as usize],
                "is_legal({m}) (raw {raw:#06x}, {:?}) in {}",
                m.kind(),
                pos.fen()
            );
        } else {
            assert!(!legal[raw as usize]);
        }
    }
}

fn assert_notation_round_trips(pos: &Position) {
    let moves = pos.legal_moves();
    let mut sans = Vec::with_capacity(moves.len());
    for &m in moves.iter() {
        let uci = m.to_string();
        assert_eq!(pos.parse_uci(&uci), Ok(m), "UCI {uci} in {}", pos.fen());
        let san = pos.san(m);
        assert_eq!(pos.parse_san(&san), Ok(m), "SAN {san} ({uci}) in {}", pos.fen());
        let next = pos.after(m);
        assert_eq!(pos.gives_check(m), next.in_check(), "gives_check({uci}) in {}", pos.fen());
        let suffix = match (next.in_check(), next.has_legal_move()) {
            (true, true) => "+",
            (true, false) => "#",
            _ => "",
        };
        assert!(
            san.ends_with(suffix) && !san[..san.len() - suffix.len()].ends_with(['+', '#']),
            "SAN {san} in {}",
            pos.fen()
        );
        sans.push(san);
    }
    sans.sort();
    let before = sans.len();
    sans.dedup();
    assert_eq!(before, sans.len(), "two moves share a SAN in {}", pos.fen());
}

proptest! {
    #![proptest_config(config(256))]

    // (a)
    #[test]
    fn fen_round_trip(g in game()) {
        for pos in game_positions(g) {
            let fen = pos.fen();
            let again = Position::from_fen(&fen, pos.variant());
            prop_assert!(again.is_ok(), "{} refused: {:?}", fen, again);
            let again = again.unwrap();
            prop_assert_eq!(&again, &pos);
            prop_assert_eq!(again.fen(), fen);
        }
    }

    // (b) FEN parser on arbitrary text.
    #[test]
    fn fen_parser_survives_any_text(s in "\\PC{0,120}") {
        for v in Variant::ALL {
            if let Ok(pos) = Position::from_fen(&s, v) {
                assert_usable(&pos, &s);
            }
        }
    }

    #[test]
    fn fen_parser_survives_fen_like_text(
        s in "[pnbrqkPNBRQK1-9/~]{0,70}(\\[[PNBRQpnbrq0-9-]{0,12}\\])? [wb] [KQkq-]{1,4} [a-h-][1-8]? [0-9]{1,3} [0-9]{1,3}"
    ) {
        for v in Variant::ALL {
            if let Ok(pos) = Position::from_fen(&s, v) {
                assert_usable(&pos, &s);
            }
        }
    }

    // (b) FEN parser on valid FENs with a few characters changed.
    #[test]
    fn fen_parser_survives_mutated_fens(g in game(), e in edits()) {
        let positions = game_positions(g);
        let Some(pos) = positions.last() else { return Ok(()) };
        let text = mutate(&pos.fen(), &e);
        for v in Variant::ALL {
            if let Ok(p) = Position::from_fen(&text, v) {
                assert_usable(&p, &text);
            }
        }
    }

    // (b) Move parsers on arbitrary text and on mutated legal moves.
    #[test]
    fn move_parsers_survive_any_text(g in game(), s in "\\PC{0,12}") {
        let positions = game_positions(g);
        let Some(pos) = positions.last() else { return Ok(()) };
        assert_parsed_legal(pos, &s, pos.parse_uci(&s).ok());
        assert_parsed_legal(pos, &s, pos.parse_san(&s).ok());
    }

    #[test]
    fn move_parsers_survive_mutated_moves(g in game(), pick in any::<usize>(), e in edits()) {
        let positions = game_positions(g);
        let Some(pos) = positions.last() else { return Ok(()) };
        let moves = pos.legal_moves();
        if moves.is_empty() {
            return Ok(());
        }
        let m = moves.as_slice()[pick % moves.len()];
        for text in [mutate(&m.to_string(), &e), mutate(&pos.san(m), &e)] {
            assert_parsed_legal(pos, &text, pos.parse_uci(&text).ok());
            assert_parsed_legal(pos, &text, pos.parse_san(&text).ok());
        }
    }

    // (d)
    #[test]
    fn san_and_uci_round_trip(g in game()) {
        let positions = game_positions(g);
        for pos in positions.iter().rev().step_by(20) {
            assert_notation_round_trips(pos);
        }
    }
}

proptest! {
    #![proptest_config(config(40))]

    // (c)
    #[test]
    fn is_legal_is_exact_for_every_raw_move(g in game()) {
        let positions = game_positions(g);
        if let Some(pos) = positions.last() {
            assert_is_legal_exact(pos);
        }
    }
}

/// (c) on positions only a FEN can produce: checks of every kind with drops and en passant,
/// promoted pieces, chessgi pawns on the first rank.
#[test]
fn is_legal_is_exact_on_hand_made_positions() {
    let cases = [
        (Variant::Crazyhouse, "8/8/8/KPp4r/8/8/8/4k3[] w - c6 0 1"),
        (Variant::Crazyhouse, "8/8/8/2k5/3Pp3/8/8/4K3[] b - d3 0 1"),
        (Variant::Crazyhouse, "8/k7/8/8/3pP3/8/8/4K1B1[] b - e3 0 1"),
        (Variant::Crazyhouse, "r3k2r/8/8/8/4b3/8/8/R3K2R[Qq] w KQkq - 0 1"),
        (Variant::Crazyhouse, "4k3/8/8/8/8/8/8/r3K3[PN] w - - 0 1"),
        (Variant::Crazyhouse, "4k3/8/8/8/8/8/8/R3K2R~[QRBNPqrbnp] w KQ - 0 1"),
        (Variant::Crazyhouse, "4k3/8/8/8/8/8/3n4/R3K2R[QRBNPqrbnp] w KQ - 0 1"),
        (Variant::Crazyhouse, "4k3/8/8/8/8/5n2/8/r3K2R[P] w K - 0 1"),
        (Variant::Crazyhouse, "4k3/1P6/8/8/8/8/6p1/4K2R[Nn] w K - 0 1"),
        // Double check by a bishop and a just-double-stepped pawn.
        (Variant::Crazyhouse, "8/7b/8/3pP3/4K3/8/8/k7[] w - d6 0 1"),
        (Variant::Loop, "4k3/8/8/8/8/8/8/Q~R~2K3[QRBNPqrbnp] w - - 0 1"),
        (Variant::Chessgi, "4k3/8/8/8/8/8/8/P3K2P[PPp] w - - 0 1"),
    ];
    for (v, fen) in cases {
        let pos = Position::from_fen(fen, v).unwrap_or_else(|e| panic!("{fen}: {e}"));
        assert_is_legal_exact(&pos);
        assert_notation_round_trips(&pos);
    }
}

/// (c) Double check by a pawn that just double-stepped and a knight: en passant takes the pawn,
/// the knight still checks, so only king moves are legal. `legal_moves()` gets this right;
/// `is_legal(e5d6)` answered true (it only looked at the first checker).
#[test]
fn is_legal_rejects_en_passant_in_double_check() {
    let pos =
        Position::from_fen("8/8/5n2/3pP3/4K3/8/8/k7[] w - d6 0 1", Variant::Crazyhouse).unwrap();
    let ep = pos.parse_san("exd6").ok();
    assert_eq!(ep, None, "exd6 is illegal");
    let ep = Move::from_raw(0x292b).unwrap();
    assert_eq!(ep.to_string(), "e5d6");
    assert!(ep.is_en_passant());
    assert!(!pos.legal_moves().contains(ep));
    assert!(!pos.is_legal(ep), "is_legal accepts en passant that leaves the knight's check");
    assert_is_legal_exact(&pos);
}

/// Move counters read from a FEN can be as large as a `u32`; playing a move from there must
/// not overflow (a panic with overflow checks on; without them the fullmove number wraps to 0,
/// which the FEN parser itself never produces, so the FEN no longer round-trips).
#[test]
fn huge_move_counters_do_not_overflow() {
    let max = u32::MAX;
    let fen = format!("4k3/8/8/8/8/8/8/4K3[] b - - {max} {max}");
    let pos = Position::from_fen(&fen, Variant::Crazyhouse).unwrap();
    for &m in pos.legal_moves().iter() {
        let next = pos.after(m);
        assert!(next.fullmoves() >= 1, "{m}: {}", next.fen());
        assert_usable(&next, &fen);
    }
}

#[test]
fn mutate_edits_as_documented() {
    assert_eq!(mutate("abc", &[(0, 1, 'x')]), "axbc");
    assert_eq!(mutate("abc", &[(1, 4, 'x')]), "ac");
    assert_eq!(mutate("abc", &[(2, 2, 'x')]), "abx");
    assert_eq!(mutate("", &[(1, 0, 'x'), (2, 0, 'y')]), "");
}
