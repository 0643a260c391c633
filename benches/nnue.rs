//! Criterion benchmarks of NNUE inference at the built-in network's size (random weights:
//! speed does not depend on the values): accumulator refresh, incremental update
//! for a quiet move, a capture and a drop, and the output layer, on every kernel this CPU
//! has; and for a network with 16 king buckets, the refresh, a quiet update and a king
//! move into another bucket, rebuilt from the bucket cache (whose entry, after the first
//! iteration, holds the same pieces: the cheapest rebuild) or from scratch (no cache: the
//! dearest).
//!
//! Run with `cargo bench --bench nnue`.

use std::hint::black_box;

use criterion::{criterion_group, criterion_main, Criterion};
use madhouse::core::{Color, Move, Position, Role, Square, Variant};
use madhouse::nnue::{Accumulator, BucketCache, InputLayout, Kernel, Network, OUTPUT_WEIGHT_MAX};
use madhouse::rng::Rng;

/// A crazyhouse middlegame with pieces in both pockets (white to move).
const FEN: &str = "r1bqk2r/pppp1ppp/2n1p3/4P3/1b1Pn3/2NB1N2/PPP2PPP/R1BQK2R[QNNpp] w KQkq - 0 1";

/// A random network of the built-in network's hidden size (read from it, so the benchmark
/// follows whatever network is built in), inputs arranged as `inputs`.
fn network(inputs: InputLayout) -> Network {
    let hidden = madhouse::nnue::embedded().hidden();
    let mut rng = Rng::new(1);
    let mut r = |n: usize, m: i32| -> Vec<i16> {
        (0..n).map(|_| (rng.below(2 * m as usize + 1) as i32 - m) as i16).collect()
    };
    let (w, b, o) =
        (r(inputs.rows() * hidden, 60), r(hidden, 60), r(2 * hidden, OUTPUT_WEIGHT_MAX));
    Network::with_inputs(inputs, hidden, w, b, o, vec![0]).expect("valid network")
}

fn sq(name: &str) -> Square {
    Square::parse(name).expect("square")
}

fn nnue(c: &mut Criterion) {
    let base = network(InputLayout::PLAIN);
    let pos = Position::from_fen(FEN, Variant::Crazyhouse).expect("valid FEN");
    let children = [
        ("quiet", Move::normal(sq("a2"), sq("a3"))),
        ("capture", Move::normal(sq("d3"), sq("e4"))),
        ("drop", Move::drop(Role::Knight, sq("g5"))),
    ];
    for kernel in Kernel::available() {
        let net = base.with_kernel(kernel).expect("available kernel");
        let name = kernel.name();
        let mut group = c.benchmark_group(format!("nnue/{name}"));
        let mut acc = Box::new(Accumulator::new());
        group.bench_function("refresh", |b| b.iter(|| acc.refresh(&net, black_box(&pos))));
        acc.refresh(&net, &pos);
        let mut child_acc = Box::new(Accumulator::new());
        for (label, m) in children {
            assert!(pos.legal_moves().contains(m), "{label} move must be legal");
            let child = pos.after(m);
            group.bench_function(format!("update/{label}"), |b| {
                b.iter(|| child_acc.update(&net, &acc, black_box(&pos), black_box(&child)))
            });
        }
        group.bench_function("evaluate", |b| {
            b.iter(|| madhouse::nnue::evaluate(&net, black_box(&acc), pos.turn()))
        });
        group.finish();
    }
}

fn king_buckets(c: &mut Criterion) {
    let inputs = InputLayout::new(16, false).expect("a predefined layout");
    let base = network(inputs);
    let pos = Position::from_fen(FEN, Variant::Crazyhouse).expect("valid FEN");
    let quiet = pos.after(Move::normal(sq("a2"), sq("a3")));
    // Ke1-f1: from bucket 4 to bucket 5 of the 16-bucket table.
    let king_move = Move::normal(sq("e1"), sq("f1"));
    assert!(pos.legal_moves().contains(king_move), "the king move must be legal");
    let king = pos.after(king_move);
    assert_ne!(inputs.bucket(&pos, Color::White), inputs.bucket(&king, Color::White));
    for kernel in Kernel::available() {
        let net = base.with_kernel(kernel).expect("available kernel");
        let mut group = c.benchmark_group(format!("nnue-kb16/{}", kernel.name()));
        let mut acc = Box::new(Accumulator::new());
        group.bench_function("refresh", |b| b.iter(|| acc.refresh(&net, black_box(&pos))));
        acc.refresh(&net, &pos);
        let mut cache = Box::new(BucketCache::new());
        cache.prepare(&net);
        let mut child_acc = Box::new(Accumulator::new());
        group.bench_function("update/quiet", |b| {
            b.iter(|| child_acc.update_cached(&net, &acc, black_box(&pos), &quiet, &mut cache))
        });
        group.bench_function("update/king-cached", |b| {
            b.iter(|| child_acc.update_cached(&net, &acc, black_box(&pos), &king, &mut cache))
        });
        group.bench_function("update/king-uncached", |b| {
            b.iter(|| child_acc.update(&net, &acc, black_box(&pos), black_box(&king)))
        });
        group.finish();
    }
}

criterion_group!(benches, nnue, king_buckets);
criterion_main!(benches);
