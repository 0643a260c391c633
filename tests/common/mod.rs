//! Helpers shared by the rules-core integration tests (`differential`, `zobrist`,
//! `properties`): a tiny seedable PRNG, the positions of the shared perft suite, and biased
//! random playouts. Each test crate uses only part of it.

#![allow(dead_code)]

use madhouse::core::{File, Move, Position, Square, Variant, START_FEN};

/// The shared perft suite.
pub const SUITE: &str = include_str!("../data/crazyhouse.epd");

pub use madhouse::rng::Rng;

/// The FEN of every crazyhouse case of the suite (lines not starting with `#`).
pub fn crazyhouse_suite_fens() -> Vec<String> {
    SUITE
        .lines()
        .map(str::trim)
        .filter(|l| !l.is_empty() && !l.starts_with('#'))
        .map(|l| l.split(';').next().unwrap_or_default().trim().to_string())
        .collect()
}

/// Every start position for `variant`: the initial position, the suite's crazyhouse cases that
/// are valid in `variant` (all of them are), and for loop and chessgi also the cases kept in
/// `#loop` / `#chessgi` comment lines.
pub fn start_positions(variant: Variant) -> Vec<Position> {
    let mut fens = vec![START_FEN.to_string()];
    fens.extend(crazyhouse_suite_fens());
    let prefix = match variant {
        Variant::Crazyhouse => None,
        Variant::Loop => Some("#loop "),
        Variant::Chessgi => Some("#chessgi "),
    };
    if let Some(prefix) = prefix {
        for line in SUITE.lines() {
            if let Some(rest) = line.strip_prefix(prefix) {
                fens.push(rest.split(';').next().unwrap_or_default().trim().to_string());
            }
        }
    }
    fens.iter()
        .map(|f| Position::from_fen(f, variant).unwrap_or_else(|e| panic!("{variant}: {f}: {e}")))
        .collect()
}

/// Is `m` a castling move whose rook stands promoted on its corner?
pub fn castles_promoted_rook(pos: &Position, m: Move) -> bool {
    if !m.is_castle() {
        return false;
    }
    let file = if m.to().file().index() > m.from().file().index() { File::H } else { File::A };
    pos.promoted().contains(Square::from_coords(file, m.from().rank()))
}

/// Picks a move so that pockets fill and the rarer rules come up: castling (p = 1/2) and pawn
/// moves to the last rank (p = 1/2) when available, then captures (p = 2/5), then uniform.
/// `None` when `moves` is empty.
pub fn choose(pos: &Position, moves: &[Move], rng: &mut Rng) -> Option<Move> {
    if moves.is_empty() {
        return None;
    }
    let castles: Vec<Move> = moves.iter().copied().filter(|m| m.is_castle()).collect();
    if !castles.is_empty() && rng.chance(1, 2) {
        return Some(rng.pick(&castles));
    }
    let promotions: Vec<Move> =
        moves.iter().copied().filter(|m| m.promotion_role().is_some()).collect();
    if !promotions.is_empty() && rng.chance(1, 2) {
        return Some(rng.pick(&promotions));
    }
    let captures: Vec<Move> = moves.iter().copied().filter(|&m| pos.is_capture(m)).collect();
    if !captures.is_empty() && rng.chance(2, 5) {
        return Some(rng.pick(&captures));
    }
    Some(rng.pick(moves))
}

/// The positions of a random game of at most `plies` plies from `start` (`start` included;
/// fewer when the game ends in mate or stalemate).
pub fn playout(start: &Position, seed: u64, plies: usize) -> Vec<Position> {
    let mut rng = Rng::new(seed);
    let mut pos = start.clone();
    let mut out = vec![pos.clone()];
    for _ in 0..plies {
        let moves: Vec<Move> = pos.legal_moves().iter().copied().collect();
        let Some(m) = choose(&pos, &moves, &mut rng) else {
            break;
        };
        pos.play_unchecked(m);
        out.push(pos.clone());
    }
    out
}
