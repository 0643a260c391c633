//! Perft: counting the leaves of the legal move tree, the standard proof of a move generator.

use super::{Move, Position};

/// Number of leaf positions `depth` plies below `pos`. The last ply is counted in bulk.
pub fn perft(pos: &Position, depth: u32) -> u64 {
    match depth {
        0 => 1,
        1 => pos.count_legal(),
        _ => {
            let moves = pos.legal_moves();
            moves.iter().map(|&m| perft(&pos.after(m), depth - 1)).sum()
        }
    }
}

/// Perft split by root move, in generation order.
pub fn divide(pos: &Position, depth: u32) -> Vec<(Move, u64)> {
    if depth == 0 {
        return Vec::new();
    }
    pos.legal_moves().iter().map(|&m| (m, perft(&pos.after(m), depth - 1))).collect()
}

/// Prints perft divide and `Nodes searched: N`, as Stockfish does.
pub fn print_divide(pos: &Position, depth: u32) {
    let start = std::time::Instant::now();
    let mut total = 0;
    for (m, n) in divide(pos, depth) {
        println!("{m}: {n}");
        total += n;
    }
    if depth == 0 {
        total = 1;
    }
    let ms = start.elapsed().as_millis() as u64;
    println!();
    println!("Nodes searched: {total}");
    log::info!("perft {depth}: {total} nodes in {ms} ms");
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::core::Variant;

    #[test]
    fn startpos_shallow() {
        let pos = Position::startpos(Variant::Crazyhouse);
        assert_eq!(perft(&pos, 1), 20);
        assert_eq!(perft(&pos, 2), 400);
        assert_eq!(perft(&pos, 3), 8902);
        let d = divide(&pos, 2);
        assert_eq!(d.len(), 20);
        assert_eq!(d.iter().map(|x| x.1).sum::<u64>(), 400);
    }
}
