//! Criterion benchmarks for the rules core: legal move generation (into a `MoveList` and
//! counted in bulk) on a few typical positions, and perft 4 from the start position and the
//! crazyhouse middlegame of the shared suite.
//!
//! Run with `cargo bench --bench movegen`; `cargo bench --bench movegen -- movegen` runs only
//! the move-generation group.

use std::hint::black_box;
use std::time::Duration;

use criterion::{criterion_group, criterion_main, Criterion};
use madhouse::core::perft::perft;
use madhouse::core::{Position, Variant, START_FEN};

/// Named benchmark positions (all from `tests/data/crazyhouse.epd` except the start).
const POSITIONS: [(&str, &str); 4] = [
    ("start", START_FEN),
    ("zh-middlegame", "r1bqk2r/pppp1ppp/2n1p3/4P3/1b1Pn3/2NB1N2/PPP2PPP/R1BQK2R[] b KQkq - 0 1"),
    // A real game position with both pockets full (black to move, en passant possible).
    ("big-pocket", "1N~6/rp4p1/1q1k4/8/3Pp2r/8/4K3/8[BBNNPPPPqrrbbnnppppppp] b - d3 0 38"),
    // The suite's largest move count (444 legal moves).
    ("max-moves", "K1QQQQ1Q/Q7/Q7/6Q1/1Q6/7Q/Q6B/1QQQQQnk[PNBRQ] w - - 0 1"),
];

fn position(fen: &str) -> Position {
    Position::from_fen(fen, Variant::Crazyhouse).expect("benchmark FEN is valid")
}

fn movegen(c: &mut Criterion) {
    let mut group = c.benchmark_group("movegen");
    for (name, fen) in POSITIONS {
        let pos = position(fen);
        group.bench_function(format!("legal_moves/{name}"), |b| {
            b.iter(|| black_box(&pos).legal_moves().len())
        });
        group.bench_function(format!("count_legal/{name}"), |b| {
            b.iter(|| black_box(&pos).count_legal())
        });
    }
    group.finish();
}

fn perft4(c: &mut Criterion) {
    let mut group = c.benchmark_group("perft");
    // One perft 4 takes about 1 ms (start) to 10 ms (middlegame); fewer, longer samples.
    group.sample_size(20);
    group.measurement_time(Duration::from_secs(5));
    for (name, fen) in &POSITIONS[..2] {
        let pos = position(fen);
        group.bench_function(format!("perft4/{name}"), |b| b.iter(|| perft(black_box(&pos), 4)));
    }
    group.finish();
}

criterion_group!(benches, movegen, perft4);
criterion_main!(benches);
