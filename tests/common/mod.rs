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

/// A plain network (one king bucket) made of king bucket `bucket`'s rows of `net`: the same
/// biases and output layer, and for each base feature the row that bucket uses. For tests that
/// need a plain network of real weights when the built-in network has king buckets. Read
/// from the file bytes (see the network module's layout: a 20-byte version-1 header, 28 bytes
/// with the version-2 fields), so it relies on no accessor the engine does not need.
pub fn plain_network_from_bucket(
    net: &madhouse::nnue::Network,
    bucket: usize,
) -> madhouse::nnue::Network {
    use madhouse::nnue::{InputLayout, Network, INPUTS};
    let (h, inputs, outs) = (net.hidden(), net.inputs(), net.buckets());
    let bytes = net.to_bytes();
    let header = if inputs == InputLayout::PLAIN { 20 } else { 28 };
    let i16s = |from: usize, n: usize| -> Vec<i16> {
        bytes[from..from + 2 * n]
            .chunks_exact(2)
            .map(|c| i16::from_le_bytes([c[0], c[1]]))
            .collect()
    };
    let rows = inputs.rows();
    let ft = i16s(header, rows * h);
    let bias = i16s(header + 2 * rows * h, h);
    let out_w = i16s(header + 2 * (rows + 1) * h, outs * 2 * h);
    let at = header + 2 * (rows + 1 + 2 * outs) * h;
    let out_b: Vec<i32> = bytes[at..at + 4 * outs]
        .chunks_exact(4)
        .map(|c| i32::from_le_bytes([c[0], c[1], c[2], c[3]]))
        .collect();
    let mut plain = vec![0i16; INPUTS * h];
    for f in 0..INPUTS {
        let r = inputs.row(f, bucket);
        plain[f * h..(f + 1) * h].copy_from_slice(&ft[r * h..(r + 1) * h]);
    }
    Network::with_inputs(InputLayout::PLAIN, h, plain, bias, out_w, out_b).expect("a plain network")
}
