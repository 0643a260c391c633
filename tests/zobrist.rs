//! Zobrist keys: the incremental key kept by `play_unchecked` must always equal the key
//! computed from scratch, and the key must tell apart exactly the positions repetition
//! detection and the transposition table need told apart.
//!
//! - Random playouts (several seeds, from the start position and every suite position, in
//!   crazyhouse, loop and chessgi) assert `key() == compute_key()` after every move, after a
//!   null move, after replacing the pockets, and after a FEN round trip.
//! - Different move orders reaching the same position give the same key (hand-made
//!   transpositions, including drops and captures that fill pockets in a different order, plus
//!   random commuting move pairs found during playouts).
//! - Positions that differ only in a pocket, only in a promoted mark, only in the side to move,
//!   only in castling rights or only in a capturable en-passant square have different keys.
//!   Halfmove and fullmove counters are not part of the key.

mod common;

use common::{choose, start_positions, Rng};
use madhouse::core::{Color, Move, Pocket, Position, Role, Variant};

fn fen(f: &str, v: Variant) -> Position {
    Position::from_fen(f, v).unwrap_or_else(|e| panic!("{f}: {e}"))
}

/// The FEN without the move counters: what a position is for repetition purposes.
fn identity(pos: &Position) -> String {
    pos.fen().rsplitn(3, ' ').nth(2).unwrap_or_default().to_string()
}

fn check_keys(pos: &Position, ctx: &dyn Fn() -> String) {
    assert_eq!(pos.key(), pos.compute_key(), "incremental key\n{}", ctx());
    let reparsed = Position::from_fen(&pos.fen(), pos.variant()).unwrap();
    assert_eq!(reparsed.key(), pos.key(), "key after FEN round trip\n{}", ctx());
    if !pos.in_check() {
        let mut null = pos.clone();
        null.play_null();
        assert_eq!(null.key(), null.compute_key(), "key after null move\n{}", ctx());
        assert_ne!(null.key(), pos.key(), "null move changes the side to move\n{}", ctx());
    }
}

/// Plays random games and checks the key at every step. Returns the number of plies.
fn random_games(variant: Variant, seeds: u64, plies: usize) -> u64 {
    let mut total = 0;
    for (i, start) in start_positions(variant).iter().enumerate() {
        for seed in 0..seeds {
            let seed = seed ^ ((i as u64) << 20) ^ 0x2b0b;
            let mut rng = Rng::new(seed);
            let mut pos = start.clone();
            let mut history: Vec<String> = Vec::new();
            for _ in 0..plies {
                let ctx = || {
                    format!(
                        "{variant} start {} seed {seed}\nmoves {}\nnow {}",
                        start.fen(),
                        history.join(" "),
                        pos.fen()
                    )
                };
                check_keys(&pos, &ctx);
                let moves: Vec<Move> = pos.legal_moves().iter().copied().collect();
                let Some(m) = choose(&pos, &moves, &mut rng) else {
                    break;
                };
                // Every legal move, played on a copy, keeps the key exact (not just the one
                // the playout follows).
                if rng.chance(1, 8) {
                    for &other in &moves {
                        let next = pos.after(other);
                        assert_eq!(next.key(), next.compute_key(), "after {other}\n{}", ctx());
                    }
                }
                pos.play_unchecked(m);
                history.push(m.to_string());
                total += 1;
            }
            check_keys(&pos, &|| format!("{variant} final {}", pos.fen()));
        }
    }
    total
}

#[test]
fn incremental_key_crazyhouse() {
    let n = random_games(Variant::Crazyhouse, 6, 150);
    assert!(n > 20_000, "{n}");
}

#[test]
fn incremental_key_loop() {
    let n = random_games(Variant::Loop, 4, 150);
    assert!(n > 10_000, "{n}");
}

#[test]
fn incremental_key_chessgi() {
    let n = random_games(Variant::Chessgi, 4, 150);
    assert!(n > 10_000, "{n}");
}

#[test]
fn set_hands_recomputes_the_key() {
    let mut pos = fen(
        "r1bqkbnr/pppp1ppp/2n5/8/3P4/2N5/PPP2PPP/R1BQKBNR[Pp] b KQkq - 0 4",
        Variant::Crazyhouse,
    );
    let mut white = Pocket::EMPTY;
    white.set(Role::Queen, 2);
    white.set(Role::Pawn, 5);
    let mut black = Pocket::EMPTY;
    black.set(Role::Knight, 1);
    pos.set_hands([white, black]).unwrap();
    assert_eq!(pos.key(), pos.compute_key());
    let expected = fen(
        "r1bqkbnr/pppp1ppp/2n5/8/3P4/2N5/PPP2PPP/R1BQKBNR[QQPPPPPn] b KQkq - 0 4",
        Variant::Crazyhouse,
    );
    assert_eq!(pos.key(), expected.key());
}

/// Plays `moves` (UCI) from `start` and returns the final position.
fn play(start: &Position, moves: &str) -> Position {
    let mut pos = start.clone();
    for text in moves.split_whitespace() {
        let m = pos.parse_uci(text).unwrap_or_else(|e| panic!("{e} in {}", pos.fen()));
        pos.play_unchecked(m);
        assert_eq!(pos.key(), pos.compute_key());
    }
    pos
}

#[test]
fn transpositions_have_equal_keys() {
    let v = Variant::Crazyhouse;
    let start = Position::startpos(v);
    let pockets = fen("4k3/8/8/8/8/8/8/4K3[NBPnbp] w - - 0 1", v);
    let captures = fen("n6b/8/4k3/8/8/8/8/R3K2R[Pp] w - - 0 1", v);
    let pawns = fen("4k3/8/8/1p5p/P5P1/8/8/4K3[Pp] w - - 0 1", v);
    let loop_start = Position::startpos(Variant::Loop);
    let cases: [(&Position, &str, &str); 7] = [
        (&start, "g1f3 g8f6 b1c3 b8c6", "b1c3 b8c6 g1f3 g8f6"),
        (&start, "e2e4 e7e5 g1f3 b8c6", "g1f3 b8c6 e2e4 e7e5"),
        // Pawns to hand and from hand in different orders: in the first line each pocket
        // holds 1, 2, 1, 0 pawns, in the second 1, 0, 1, 0 (python-chess: the same position).
        (&pawns, "a4b5 h5g4 P@d3 p@d6 P@c3 p@c6", "P@c3 h5g4 a4b5 p@c6 P@d3 p@d6"),
        (&pockets, "N@c3 n@c6 B@d3 b@d6 P@h3 p@h6", "P@h3 b@d6 N@c3 p@h6 B@d3 n@c6"),
        // Two captures in different orders (the hand gains N then B, or B then N), with drops.
        (&captures, "a1a8 e6e7 h1h8 p@d4 P@e4", "h1h8 p@d4 a1a8 e6e7 P@e4"),
        // Knights out and back: the same position as the start (castling rights intact).
        (&start, "g1f3 g8f6 f3g1 f6g8", ""),
        (&loop_start, "b1c3 b8c6 c3b1 c6b8", ""),
    ];
    for (pos, a, b) in cases {
        let pa = play(pos, a);
        let pb = play(pos, b);
        if identity(&pa) == identity(&pb) {
            assert_eq!(pa.key(), pb.key(), "{a} / {b}: {}", pa.fen());
        } else {
            panic!("test case does not transpose: {a} -> {} / {b} -> {}", pa.fen(), pb.fen());
        }
    }
}

/// Random pairs of commuting moves: from random positions, white plays a then b and black x
/// then y, in both orders a-x-b-y and b-x-a-y. When both orders are legal and reach the same
/// position, the keys must agree.
#[test]
fn random_transpositions_have_equal_keys() {
    let mut found = 0;
    for variant in Variant::ALL {
        for (i, start) in start_positions(variant).iter().enumerate() {
            for seed in 0..3u64 {
                let mut rng = Rng::new(seed * 7919 + i as u64);
                for pos in common::playout(start, seed ^ 0xabc, 60).iter().step_by(5) {
                    let moves: Vec<Move> = pos.legal_moves().iter().copied().collect();
                    if moves.len() < 2 {
                        continue;
                    }
                    for _ in 0..8 {
                        let a = rng.pick(&moves);
                        let b = rng.pick(&moves);
                        if a == b {
                            continue;
                        }
                        let pa = pos.after(a);
                        let replies: Vec<Move> = pa.legal_moves().iter().copied().collect();
                        if replies.is_empty() {
                            continue;
                        }
                        let x = rng.pick(&replies);
                        let pb0 = pos.after(b);
                        if !pb0.is_legal(x) {
                            continue;
                        }
                        let pax = pa.after(x);
                        let pbx = pb0.after(x);
                        if !pax.is_legal(b) || !pbx.is_legal(a) {
                            continue;
                        }
                        let p1 = pax.after(b);
                        let p2 = pbx.after(a);
                        if identity(&p1) == identity(&p2) {
                            assert_eq!(
                                p1.key(),
                                p2.key(),
                                "{a} {x} {b} / {b} {x} {a} from {}",
                                pos.fen()
                            );
                            found += 1;
                        } else {
                            // Different positions (a capture order changed a pocket, a pawn
                            // push lost an en-passant square...) must have different keys.
                            assert_ne!(p1.key(), p2.key(), "{} / {}", p1.fen(), p2.fen());
                        }
                    }
                }
            }
        }
    }
    assert!(found > 500, "only {found} transpositions found");
}

/// Every pair of distinct FENs in `fens` (all valid in `v`) must have distinct keys.
fn assert_all_distinct(fens: &[&str], v: Variant) {
    let positions: Vec<Position> = fens.iter().map(|f| fen(f, v)).collect();
    for (i, a) in positions.iter().enumerate() {
        assert_eq!(a.key(), a.compute_key());
        for b in &positions[i + 1..] {
            assert_ne!(a.key(), b.key(), "{} and {} share a key", a.fen(), b.fen());
        }
    }
}

#[test]
fn pockets_change_the_key() {
    let base = "r1bqkbnr/pppp1ppp/2n5/8/3P4/2N5/PPP2PPP/R1BQKBNR";
    let pockets = [
        "",
        "P",
        "p",
        "PP",
        "Pp",
        "PPp",
        "Ppp",
        "N",
        "n",
        "B",
        "b",
        "R",
        "r",
        "Q",
        "q",
        "NP",
        "NB",
        "QRBNPqrbnp",
        "PPPPPPPP",
        "PPPPPPPPP",
        "pppppppp",
        "ppppppppp",
    ];
    let fens: Vec<String> = pockets.iter().map(|p| format!("{base}[{p}] b KQkq - 0 4")).collect();
    let refs: Vec<&str> = fens.iter().map(String::as_str).collect();
    for v in Variant::ALL {
        assert_all_distinct(&refs, v);
    }
}

#[test]
fn promoted_marks_change_the_key() {
    let fens = [
        "4k3/8/8/8/8/8/8/QR2K3[] w - - 0 1",
        "4k3/8/8/8/8/8/8/Q~R2K3[] w - - 0 1",
        "4k3/8/8/8/8/8/8/QR~2K3[] w - - 0 1",
        "4k3/8/8/8/8/8/8/Q~R~2K3[] w - - 0 1",
        // The same pieces, the promoted mark on the other square.
        "4k3/8/8/8/8/8/8/RQ~2K3[] w - - 0 1",
        "4k3/8/8/8/8/8/8/RQ2K3[] w - - 0 1",
    ];
    for v in Variant::ALL {
        assert_all_distinct(&fens, v);
    }
}

#[test]
fn side_to_move_changes_the_key() {
    for v in Variant::ALL {
        for base in [
            "rnbqkbnr/pppppppp/8/8/8/8/PPPPPPPP/RNBQKBNR[]",
            "r1bqk2r/pppp1ppp/2n1p3/4P3/1b1Pn3/2NB1N2/PPP2PPP/R1BQK2R[Pn]",
            "4k3/8/8/8/8/8/8/4K3[Qq]",
        ] {
            let w = fen(&format!("{base} w - - 0 1"), v);
            let b = fen(&format!("{base} b - - 0 1"), v);
            assert_eq!(w.turn(), Color::White);
            assert_ne!(w.key(), b.key(), "{base}");
        }
    }
}

#[test]
fn castling_and_en_passant_change_the_key() {
    let fens = [
        "r3k2r/pppppppp/8/8/8/8/PPPPPPPP/R3K2R[] w KQkq - 0 1",
        "r3k2r/pppppppp/8/8/8/8/PPPPPPPP/R3K2R[] w Qkq - 0 1",
        "r3k2r/pppppppp/8/8/8/8/PPPPPPPP/R3K2R[] w Kkq - 0 1",
        "r3k2r/pppppppp/8/8/8/8/PPPPPPPP/R3K2R[] w KQq - 0 1",
        "r3k2r/pppppppp/8/8/8/8/PPPPPPPP/R3K2R[] w KQk - 0 1",
        "r3k2r/pppppppp/8/8/8/8/PPPPPPPP/R3K2R[] w - - 0 1",
    ];
    assert_all_distinct(&fens, Variant::Crazyhouse);
    // A capturable en-passant square is part of the position; one nobody can take is dropped.
    let with_ep = fen("4k3/8/8/8/3pP3/8/8/4K3[] b - e3 0 1", Variant::Crazyhouse);
    let without = fen("4k3/8/8/8/3pP3/8/8/4K3[] b - - 0 1", Variant::Crazyhouse);
    assert_ne!(with_ep.key(), without.key());
    let useless = fen("4k3/8/8/8/4P3/8/8/4K3[] b - e3 0 1", Variant::Crazyhouse);
    let plain = fen("4k3/8/8/8/4P3/8/8/4K3[] b - - 0 1", Variant::Crazyhouse);
    assert_eq!(useless.key(), plain.key());
}

#[test]
fn move_counters_do_not_change_the_key() {
    let a = fen("4k3/8/8/8/8/8/8/4K3[Qq] w - - 0 1", Variant::Crazyhouse);
    let b = fen("4k3/8/8/8/8/8/8/4K3[Qq] w - - 37 80", Variant::Crazyhouse);
    assert_eq!(a.key(), b.key());
}
