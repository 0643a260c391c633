//! `bench`: a fixed-depth search of fixed positions whose node count is the engine's
//! signature. Single-threaded, with tables cleared before each position, so the count is the
//! same on every machine; it changes only when search or evaluation behaviour changes.

use std::sync::Arc;
use std::time::Instant;

use crate::core::{Position, Variant};
use crate::engine::{Engine, SearchRequest};
use crate::search::Silent;
use crate::time::Limits;

/// Default bench depth.
pub const DEFAULT_DEPTH: i32 = 10;

/// The bench positions (crazyhouse games between reference engines, see the file header).
pub const POSITIONS: &str = include_str!("bench.fen");

/// The FENs of `POSITIONS`, comments removed.
pub fn positions() -> impl Iterator<Item = &'static str> {
    POSITIONS.lines().map(str::trim).filter(|l| !l.is_empty() && !l.starts_with('#'))
}

/// Totals of a bench run.
#[derive(Copy, Clone, Debug)]
pub struct BenchResult {
    /// Nodes searched over all positions.
    pub nodes: u64,
    /// Wall time in milliseconds.
    pub ms: u64,
}

/// Runs the bench at `depth` with `hash_mb` of hash, calling `each` after every position.
pub fn run(depth: i32, hash_mb: usize, mut each: impl FnMut(usize, &str, u64)) -> BenchResult {
    let mut engine = Engine::new();
    engine.set_hash(hash_mb);
    engine.set_threads(1);
    let start = Instant::now();
    let mut nodes = 0;
    for (i, fen) in positions().enumerate() {
        let Ok(pos) = Position::from_fen(fen, Variant::Crazyhouse) else {
            log::error!("bad bench FEN: {fen}");
            continue;
        };
        engine.clear();
        let limits = Limits { depth: Some(depth), ..Limits::default() };
        let r = engine.search_sync(
            SearchRequest { root: pos, history: Vec::new(), limits },
            Arc::new(Silent),
        );
        nodes += r.nodes;
        each(i + 1, fen, r.nodes);
    }
    BenchResult { nodes, ms: start.elapsed().as_millis() as u64 }
}

/// Runs the bench and prints per-position counts and the totals.
pub fn print(depth: i32) {
    let r = run(depth, 16, |i, fen, nodes| {
        eprintln!("Position {i:>2}: {nodes:>10}  {fen}");
    });
    println!("===========================");
    println!("Total time (ms): {}", r.ms);
    println!("Nodes searched: {}", r.nodes);
    println!("Nodes/second: {}", r.nodes * 1000 / r.ms.max(1));
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn positions_parse() {
        let n = positions()
            .inspect(|f| assert!(Position::from_fen(f, Variant::Crazyhouse).is_ok(), "{f}"))
            .count();
        assert_eq!(n, 30);
    }

    #[test]
    fn bench_is_deterministic() {
        let a = run(4, 4, |_, _, _| {});
        let b = run(4, 4, |_, _, _| {});
        assert_eq!(a.nodes, b.nodes);
        assert!(a.nodes > 0);
    }
}
