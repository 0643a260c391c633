//! Tests of the trainer.

use super::dataset::held_out;
use super::float::Layout;
use super::*;
use crate::core::{Color, Position, Role};
use crate::nnue::data::Sample;
use crate::nnue::features::{self, BOARD_FEATURES, INPUTS};
use crate::nnue::{Accumulator, InputLayout, Network, QA, QB};
use crate::tools::data::{DataReader, Filter};
use std::fs::File;
use std::io::Write;

/// Positions from random games, scored by a material count defined here (pawn 100,
/// knight and bishop 300, rook 500, queen 900; pockets count the same), and given the
/// result the score's sign suggests.
fn synthetic(n: usize, seed: u64) -> Vec<Sample> {
    let values = [100, 300, 300, 500, 900, 0];
    let mut rng = Rng::new(seed);
    let mut out = Vec::new();
    while out.len() < n {
        let mut pos = Position::startpos(Variant::Crazyhouse);
        for _ in 0..80 {
            let moves = pos.legal_moves();
            if moves.is_empty() {
                break;
            }
            pos = pos.after(rng.pick(moves.as_slice()));
            let mut score = 0i32;
            for c in Color::ALL {
                for r in Role::ALL {
                    let count = pos.pieces(c, r).count() as i32 + pos.hand(c).count(r) as i32;
                    score += c.sign() * values[r.index()] * count;
                }
            }
            let result = match score {
                s if s > 150 => 1.0,
                s if s < -150 => 0.0,
                _ => 0.5,
            };
            out.push(Sample {
                pos: pos.clone(),
                score: score.clamp(-3000, 3000) as i16,
                result,
                noisy: false,
            });
        }
    }
    out.truncate(n);
    out
}

fn dataset(samples: &[Sample]) -> Dataset {
    let mut d = Dataset::default();
    for s in samples {
        d.push_sample(s);
    }
    d
}

fn sample_loss(net: &FloatNet, data: &Dataset, i: usize) -> f64 {
    let mut w = Scratch {
        grad: vec![0.0; net.params.len()],
        acc: [vec![0.0; net.hidden], vec![0.0; net.hidden]],
        loss: 0.0,
    };
    net.train_one(data, i, DEFAULT_K, 0.5, &mut w);
    w.loss
}

fn layout(king_buckets: usize, bucketed_pockets: bool) -> InputLayout {
    InputLayout::new(king_buckets, bucketed_pockets).expect("a predefined layout")
}

#[test]
fn gradient_matches_finite_differences() {
    gradient_check(1, InputLayout::PLAIN);
}

#[test]
fn gradient_matches_finite_differences_with_output_buckets() {
    gradient_check(8, InputLayout::PLAIN);
}

#[test]
fn gradient_matches_finite_differences_with_king_buckets_and_factoriser() {
    gradient_check(1, layout(16, false));
    gradient_check(4, layout(8, true));
    gradient_check(2, layout(32, false));
}

#[test]
fn a_widened_network_gives_the_same_output_and_can_learn() {
    let data = dataset(&synthetic(60, 11));
    let mut net = FloatNet::random(32, 4, InputLayout::PLAIN, 2);
    let l = net.layout();
    net.params[l.w2..l.b2].iter_mut().for_each(|w| *w *= 8.0);
    net.params[l.b1..l.w2].iter_mut().for_each(|b| *b = 0.3);
    net.params[l.b2..].iter_mut().for_each(|b| *b = 0.1);
    let wide = net.widen(96, 9);
    assert_eq!(wide.hidden(), 96);
    // The old neurons in their place, the new ones silent: each evaluation is the
    // narrow network's, up to float rounding of the longer sums.
    for i in 0..data.len() {
        let (f, stm) = (data.features(i), data.side_to_move(i));
        let (a, b) = (net.eval_cp(f, stm), wide.eval_cp(f, stm));
        assert!((a - b).abs() <= 1e-3 * a.abs().max(1.0), "position {i}: {a} vs {b}");
    }
    // The new neurons have input weights (else they could never learn), and a gradient
    // reaches their output weights.
    let w = Layout::new(96, 4, InputLayout::PLAIN);
    let fresh_inputs = (0..INPUTS).flat_map(|f| &wide.params[f * 96 + 32..(f + 1) * 96]);
    assert!(fresh_inputs.filter(|x| **x != 0.0).count() > INPUTS * 60);
    let mut worker =
        Scratch { grad: vec![0.0; w.len], acc: [vec![0.0; 96], vec![0.0; 96]], loss: 0.0 };
    for i in 0..data.len() {
        wide.train_one(&data, i, DEFAULT_K, 1.0, &mut worker);
    }
    let new_out = (0..4).flat_map(|b| &worker.grad[w.out(b) + 32..w.out(b) + 96]);
    assert!(new_out.filter(|g| g.abs() > 1e-9).count() > 10);
}

fn gradient_check(buckets: usize, inputs: InputLayout) {
    let data = dataset(&synthetic(40, 3));
    let mut net = FloatNet::random(32, buckets, inputs, 5);
    // Larger output weights than at initialisation make every gradient sizeable; the
    // buckets' own rows get weights too (they start at zero), so that the bucket row and
    // the factoriser row of a feature hold different values.
    let l = net.layout();
    for p in &mut net.params[l.w2..l.b2] {
        *p *= 8.0;
    }
    net.params[l.b1..l.w2].iter_mut().for_each(|b| *b = 0.3);
    let mut rng = Rng::new(17);
    for p in &mut net.params[..l.fact] {
        if *p == 0.0 {
            *p = (rng.below(2001) as f32 - 1000.0) * 3e-5;
        }
    }
    let mut checked = 0;
    for i in [1usize, 7, 20, 33] {
        let mut w = Scratch {
            grad: vec![0.0; net.params.len()],
            acc: [vec![0.0; 32], vec![0.0; 32]],
            loss: 0.0,
        };
        net.train_one(&data, i, DEFAULT_K, 0.5, &mut w);
        let feats = data.features(i);
        // One weight of an active board feature in each perspective's own king bucket (the
        // rows of the documented layout: bucket * stride + feature), its factoriser rows,
        // a pocket feature's row, the same feature in a bucket the position does not use
        // (no gradient), a bias, output weights of both halves, the output bias.
        let f = feats[3] as usize;
        let fm = features::mirror(f);
        let (kw, kb) = (net.king_bucket(feats, false), net.king_bucket(feats, true));
        let stride = if inputs.bucketed_pockets() { INPUTS } else { BOARD_FEATURES };
        assert!(f < BOARD_FEATURES, "feature 3 is on the board");
        let other_bucket = (kw + 1) % inputs.king_buckets();
        let mut candidates = vec![
            (kw * stride + f) * 32 + 5,
            (kb * stride + fm) * 32 + 9,
            (other_bucket * stride + f) * 32 + 6,
        ];
        if inputs.is_bucketed() {
            candidates.extend([l.fact + f * 32 + 11, l.fact + fm * 32 + 13]);
        }
        if let Some(&p) = feats.iter().find(|&&p| p as usize >= BOARD_FEATURES) {
            candidates.push(inputs.row(p as usize, kw) * 32 + 7);
        }
        // The position's own output bucket, and another one, which gets no gradient.
        let b = net.bucket(feats);
        let (o, other) = (l.out(b), l.out((b + 1) % buckets));
        candidates.extend([l.b1 + 4, o + 2, o + 32 + 7, l.b2 + b, other + 3]);
        for &at in &candidates {
            let eps = 1e-3;
            let mut plus = net.clone();
            plus.params[at] += eps;
            let mut minus = net.clone();
            minus.params[at] -= eps;
            let numeric =
                (sample_loss(&plus, &data, i) - sample_loss(&minus, &data, i)) / (2.0 * eps as f64);
            let analytic = w.grad[at] as f64;
            if numeric.abs() < 1e-6 && analytic.abs() < 1e-6 {
                continue;
            }
            // The absolute term is the numeric estimate's resolution: a few f32 steps of the
            // loss over 2 eps.
            assert!(
                (numeric - analytic).abs() <= 0.02 * numeric.abs().max(analytic.abs()) + 2e-5,
                "{inputs:?} sample {i} param {at}: numeric {numeric}, analytic {analytic}"
            );
            checked += 1;
        }
    }
    let want = if inputs.is_bucketed() { 24 } else { 12 };
    assert!(checked >= want, "{inputs:?}: only {checked} non-zero gradients checked");
}

fn small_config(dir: &Path, data: &Path) -> TrainConfig {
    let mut cfg = TrainConfig::new(vec![data.to_path_buf()], dir.join("net.nnue"));
    cfg.hidden = 32;
    // Several output buckets, so that the quantised network's choice of bucket (from
    // the accumulator) is checked against the trainer's (from the features).
    cfg.buckets = 4;
    cfg.epochs = 4;
    cfg.batch = 256;
    cfg.lr = 0.01;
    cfg.lr_end = 0.001;
    cfg.validation = 0.1;
    cfg.threads = 2;
    // The random games hold positions in check, which the default filter passes over.
    cfg.filter = TEST_FILTER;
    cfg
}

/// Every position of the synthetic data is trained on.
const TEST_FILTER: Filter = Filter { keep_checks: true, ..Filter::QUIET };

fn write_text(path: &Path, samples: &[Sample]) {
    let mut f = std::io::BufWriter::new(File::create(path).unwrap());
    for s in samples {
        writeln!(f, "{} | {} | {}", s.pos.fen(), s.score, s.result).unwrap();
    }
    // Lines the reader must skip: a mate score, an unreadable FEN, a missing field.
    writeln!(f, "{} | 32000 | 1", Position::startpos(Variant::Crazyhouse).fen()).unwrap();
    writeln!(f, "not a fen | 10 | 0.5").unwrap();
    writeln!(f, "{} | 10", Position::startpos(Variant::Crazyhouse).fen()).unwrap();
}

#[test]
fn a_network_file_reads_back_as_the_float_network_it_stands_for() {
    // Weights large enough that every integer range is used (output weights clip).
    let mut float = FloatNet::random(32, 3, InputLayout::PLAIN, 5);
    for p in &mut float.params {
        *p *= 40.0;
    }
    let q = float.quantise().unwrap();
    let back = FloatNet::from_network(&q);
    assert_eq!((back.hidden, back.buckets), (32, 3));
    assert_eq!(back.quantise().unwrap().to_bytes(), q.to_bytes());
    // With king buckets the file holds the factoriser folded in; read back, it is in the
    // buckets' rows and the factoriser is zero, and the same file comes out again.
    for inputs in [layout(8, false), layout(4, true)] {
        let mut bucketed = FloatNet::random(32, 2, inputs, 6);
        bucketed.params.iter_mut().for_each(|p| *p *= 3.0);
        let q = bucketed.quantise().unwrap();
        assert_eq!(q.inputs(), inputs);
        let back = FloatNet::from_network(&q);
        let l = back.layout();
        assert!(back.params[l.fact..l.b1].iter().all(|&x| x == 0.0));
        assert_eq!(back.quantise().unwrap().to_bytes(), q.to_bytes());
    }
    // Each parameter moved by at most half a quantisation step, or was clipped.
    let l = back.layout();
    for (i, (&a, &b)) in float.params.iter().zip(&back.params).enumerate() {
        let step = if i < l.w2 {
            1.0 / QA as f32
        } else if i < l.b2 {
            1.0 / QB as f32
        } else {
            1.0 / (QA * QB) as f32
        };
        let clipped = if i < l.w2 { a.abs() >= FT_CLIP } else { i < l.b2 && a.abs() >= OUT_CLIP };
        assert!(clipped || (a - b).abs() <= 0.5 * step + 1e-6, "param {i}: {a} -> {b}");
    }
}

#[test]
fn validation_holds_out_whole_blocks_of_consecutive_positions() {
    // Whole blocks (so whole games, but at the edges) are held out, at about the fraction
    // asked for.
    let n = 2000 * VALIDATION_BLOCK;
    let held: Vec<bool> = (0..n).map(|i| held_out(i, 0.1, 7)).collect();
    for block in held.chunks(VALIDATION_BLOCK as usize) {
        assert!(block.iter().all(|&h| h == block[0]), "a block is split");
    }
    let fraction = held.iter().filter(|&&h| h).count() as f64 / n as f64;
    assert!((0.08..0.12).contains(&fraction), "held out {fraction}");
}

#[test]
fn trains_resumes_and_quantises_within_rounding() {
    let dir = std::env::temp_dir().join(format!("madhouse-train-test-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let data_path = dir.join("data.txt");
    write_text(&data_path, &synthetic(6000, 11));

    // Straight run.
    let cfg = small_config(&dir, &data_path);
    let report = train(&cfg).unwrap();
    assert_eq!(report.train_positions + report.validation_positions, 6000);
    let first = report.validation_loss[0];
    let last = *report.validation_loss.last().unwrap();
    assert!(last < 0.7 * first, "validation loss {first} -> {last}: not learning");
    let straight = std::fs::read(&cfg.out).unwrap();

    // The default filter: the positions in check are passed over.
    let quiet = synthetic(6000, 11).iter().filter(|s| !s.pos.in_check()).count();
    assert!(quiet < 6000);
    let mut default_filter = small_config(&dir, &data_path);
    (default_filter.filter, default_filter.epochs) = (Filter::default(), 1);
    default_filter.out = dir.join("quiet.nnue");
    default_filter.checkpoint = dir.join("quiet.ckpt");
    let r = train(&default_filter).unwrap();
    assert_eq!(r.train_positions + r.validation_positions, quiet);

    // Two epochs, then resume for the other two: the same network.
    let mut half = small_config(&dir, &data_path);
    half.out = dir.join("half.nnue");
    half.checkpoint = dir.join("half.ckpt");
    // Run the first two of the four epochs by hand (the schedule depends on the total).
    let mut sources =
        vec![DataReader::open(&data_path, Variant::Crazyhouse).unwrap().with_filter(TEST_FILTER)];
    let (tr, _) = load(&mut sources, 0, half.validation, half.seed, false).unwrap();
    let mut net = FloatNet::random(32, half.buckets, InputLayout::PLAIN, half.seed);
    let len = net.params.len();
    let mut opt = Optimiser::new(len);
    let pool = rayon::ThreadPoolBuilder::new().num_threads(2).build().unwrap();
    pool.install(|| {
        let mut workers: Vec<Scratch> = (0..2)
            .map(|_| Scratch {
                grad: vec![0.0; len],
                acc: [vec![0.0; 32], vec![0.0; 32]],
                loss: 0.0,
            })
            .collect();
        for e in 0..2 {
            epoch(
                &mut net,
                &mut opt,
                &mut workers,
                &tr,
                &half,
                e,
                &mut Meter::with_terminal(false),
            );
        }
    });
    save_checkpoint(&half.checkpoint, &net, &opt, 2).unwrap();
    half.resume = true;
    let resumed = train(&half).unwrap();
    assert_eq!(resumed.validation_loss.len(), 2);
    assert_eq!(std::fs::read(&half.out).unwrap(), straight, "resumed run differs");

    // Continuing from the written network: the first epoch starts where the run ended,
    // not from scratch (a tenth of the rate, one epoch).
    let mut cont = small_config(&dir, &data_path);
    cont.out = dir.join("cont.nnue");
    cont.checkpoint = dir.join("cont.ckpt");
    cont.init = Some(cfg.out.clone());
    cont.epochs = 1;
    cont.lr = 0.001;
    cont.lr_end = 0.0001;
    let continued = train(&cont).unwrap();
    let start = continued.validation_loss[0];
    assert!(start < 0.5 * (first + last), "continued run's loss {start}: not from the file");
    // A wider run grows the file's network: its first epoch starts near the narrow
    // network's loss too (new neurons contribute nothing until trained).
    cont.hidden = 64;
    cont.out = dir.join("wide.nnue");
    cont.checkpoint = dir.join("wide.ckpt");
    let widened = train(&cont).unwrap();
    let start = widened.validation_loss[0];
    assert!(start < 0.5 * (first + last), "widened run's loss {start}: not from the file");
    assert_eq!(Network::from_bytes(&std::fs::read(&cont.out).unwrap()).unwrap().hidden(), 64);
    // Narrowing is refused, and so are other output buckets, naming both sizes.
    cont.init = Some(dir.join("wide.nnue"));
    cont.hidden = 32;
    let err = train(&cont).unwrap_err().to_string();
    assert!(err.contains("H = 64 with 4") && err.contains("H = 32 with 4"), "{err}");
    cont.init = Some(cfg.out.clone());
    cont.buckets = 1;
    let err = train(&cont).unwrap_err().to_string();
    assert!(err.contains("H = 32 with 4") && err.contains("H = 32 with 1"), "{err}");

    // Quantised against float on held-out positions: every position within 6 standard
    // deviations of the rounding model, plus 1.1 cp for the two integer divisions.
    let float = load_checkpoint(&cfg.checkpoint, 32, cfg.buckets, InputLayout::PLAIN).unwrap().0;
    let q = Network::from_bytes(&straight).unwrap();
    let samples = synthetic(500, 99);
    let check = dataset(&samples);
    let mut worst_ratio: f64 = 0.0;
    let mut acc = Box::new(crate::nnue::Accumulator::new());
    let mut from_pos = Box::new(crate::nnue::Accumulator::new());
    for (i, sample) in samples.iter().enumerate() {
        let feats = check.features(i);
        let stm = check.side_to_move(i);
        let bound = 6.0 * rounding_sigma_cp(&float, feats, stm) + 1.1;
        acc.refresh_from_features(&q, feats);
        // The stored features give the accumulator the position itself gives.
        from_pos.refresh(&q, &sample.pos);
        for c in Color::ALL {
            assert_eq!(acc.values(c)[..32], from_pos.values(c)[..32]);
        }
        assert_eq!(acc.board_pieces(), sample.pos.occupied().count() as usize);
        assert_eq!(from_pos.board_pieces(), sample.pos.occupied().count() as usize);
        let diff = (q.evaluate(&acc, stm) as f64 - float.eval_cp(feats, stm) as f64).abs();
        assert!(diff <= bound, "position {i}: |{diff}| > {bound}");
        worst_ratio = worst_ratio.max(diff / bound);
    }
    // The float net is not trivial (the check above would pass for a zero network).
    let spread: f64 = (0..check.len())
        .map(|i| float.eval_cp(check.features(i), check.side_to_move(i)).abs() as f64)
        .sum::<f64>()
        / check.len() as f64;
    assert!(spread > 50.0, "mean |eval| {spread} cp: the network learned nothing");
    eprintln!("quantisation: worst diff/bound {worst_ratio:.2}, mean |eval| {spread:.0} cp");
    std::fs::remove_dir_all(&dir).ok();
}

/// A plain float network with every part non-trivial: output weights scaled up, biases set.
fn lively_plain(hidden: usize, buckets: usize, seed: u64) -> FloatNet {
    let mut net = FloatNet::random(hidden, buckets, InputLayout::PLAIN, seed);
    let l = net.layout();
    net.params[..l.b1].iter_mut().for_each(|w| *w *= 20.0);
    net.params[l.w2..l.b2].iter_mut().for_each(|w| *w *= 8.0);
    net.params[l.b1..l.w2].iter_mut().for_each(|b| *b = 0.3);
    net.params[l.b2..].iter_mut().for_each(|b| *b = 0.1);
    net
}

#[test]
fn init_from_a_plain_network_with_king_buckets_evaluates_as_it() {
    // `--init PLAIN.nnue --king-buckets N`: the start network evaluates every position as
    // the plain file does, in float exactly (the bucket rows are zero and the factoriser
    // holds the old rows) and quantised exactly (every bucket's rows are the old rows).
    let dir = std::env::temp_dir().join(format!("madhouse-train-init-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let path = dir.join("plain.nnue");
    let plain = lively_plain(32, 2, 8).quantise().unwrap();
    plain.save(&path).unwrap();
    let plain_float = FloatNet::from_network(&plain);
    let samples = synthetic(300, 21);
    let data = dataset(&samples);
    for (inputs, hidden) in [(layout(8, false), 32), (layout(32, true), 32), (layout(4, false), 64)]
    {
        let mut cfg = TrainConfig::new(Vec::new(), dir.join("out.nnue"));
        (cfg.hidden, cfg.buckets) = (hidden, 2);
        (cfg.king_buckets, cfg.bucketed_pockets) =
            (inputs.king_buckets(), inputs.bucketed_pockets());
        let start = initial_network(&path, &cfg).unwrap();
        assert_eq!((start.inputs(), start.hidden()), (inputs, hidden));
        let q = start.quantise().unwrap();
        assert_eq!(q.inputs(), inputs);
        let (mut a, mut b) = (Box::new(Accumulator::new()), Box::new(Accumulator::new()));
        let mut buckets_seen = std::collections::HashSet::new();
        for (i, s) in samples.iter().enumerate() {
            let (f, stm) = (data.features(i), data.side_to_move(i));
            buckets_seen.insert(start.king_bucket(f, false));
            let (want, got) = (plain_float.eval_cp(f, stm), start.eval_cp(f, stm));
            if hidden == 32 {
                assert_eq!(got.to_bits(), want.to_bits(), "{inputs:?} position {i}");
            } else {
                // Widened too: the new neurons add zeros, in a longer float sum.
                assert!((got - want).abs() <= 1e-3 * want.abs().max(1.0), "{inputs:?} {i}");
            }
            a.refresh(&plain, &s.pos);
            b.refresh(&q, &s.pos);
            assert_eq!(plain.evaluate(&a, stm), q.evaluate(&b, stm), "{inputs:?} {}", s.pos.fen());
        }
        assert!(buckets_seen.len() > 2, "{inputs:?}: positions in {buckets_seen:?} only");
    }
    // A network with king buckets cannot lose them, nor merge them: refused, naming both
    // layouts.
    let bucketed_path = dir.join("bucketed.nnue");
    FloatNet::random(32, 2, layout(8, false), 3).quantise().unwrap().save(&bucketed_path).unwrap();
    let mut cfg = TrainConfig::new(Vec::new(), dir.join("out.nnue"));
    (cfg.hidden, cfg.buckets) = (32, 2);
    for k in [1, 4] {
        cfg.king_buckets = k;
        let err = initial_network(&bucketed_path, &cfg).unwrap_err().to_string();
        let want = format!("{k} king buckets");
        assert!(err.contains("8 king buckets") && err.contains(&want), "{err}");
    }
    cfg.king_buckets = 5;
    let err = initial_network(&path, &cfg).unwrap_err().to_string();
    assert!(err.contains("--king-buckets must be one of [1, 4, 8, 16, 32]"), "{err}");
    std::fs::remove_dir_all(&dir).ok();
}

#[test]
fn init_from_a_bucketed_network_with_finer_buckets_evaluates_as_it() {
    // `--init FOUR.nnue --king-buckets 8` (and on to 16 and 32, pockets shared or bucketed):
    // every new bucket copies the old bucket its squares lie in, so the start network
    // evaluates every position exactly as the file does, in float and quantised.
    let dir = std::env::temp_dir().join(format!("madhouse-train-refine-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let samples = synthetic(400, 23);
    let data = dataset(&samples);
    let steps = [
        (layout(4, false), layout(8, false)),
        (layout(4, false), layout(32, true)),
        (layout(8, false), layout(16, false)),
        (layout(16, true), layout(32, true)),
    ];
    for (from, to) in steps {
        // Buckets that differ: random rows in every bucket, not only the factoriser.
        let mut coarse = lively_plain(32, 2, 9).with_king_buckets(from);
        let l = coarse.layout();
        let mut rng = Rng::new(5);
        for w in &mut coarse.params[..l.fact] {
            *w += rng.uniform(0.1);
        }
        let file = coarse.quantise().unwrap();
        let path = dir.join("coarse.nnue");
        file.save(&path).unwrap();
        let coarse_float = FloatNet::from_network(&file);
        let mut cfg = TrainConfig::new(Vec::new(), dir.join("out.nnue"));
        (cfg.hidden, cfg.buckets) = (32, 2);
        (cfg.king_buckets, cfg.bucketed_pockets) = (to.king_buckets(), to.bucketed_pockets());
        let start = initial_network(&path, &cfg).unwrap();
        assert_eq!(start.inputs(), to);
        let q = start.quantise().unwrap();
        let (mut a, mut b) = (Box::new(Accumulator::new()), Box::new(Accumulator::new()));
        let mut pairs = std::collections::HashSet::new();
        for (i, s) in samples.iter().enumerate() {
            let (f, stm) = (data.features(i), data.side_to_move(i));
            pairs.insert((coarse_float.king_bucket(f, false), start.king_bucket(f, false)));
            let (want, got) = (coarse_float.eval_cp(f, stm), start.eval_cp(f, stm));
            assert_eq!(got.to_bits(), want.to_bits(), "{from:?} -> {to:?} position {i}");
            a.refresh(&file, &s.pos);
            b.refresh(&q, &s.pos);
            assert_eq!(file.evaluate(&a, stm), q.evaluate(&b, stm), "{to:?} {}", s.pos.fen());
        }
        // Some old bucket was seen split into two new ones, or the test proves little.
        let split = pairs.iter().any(|&(o, n)| pairs.iter().any(|&(o2, n2)| o == o2 && n != n2));
        assert!(split, "{from:?} -> {to:?}: bucket pairs {pairs:?}");
    }
    // Bucketed pockets do not merge into shared ones.
    let path = dir.join("bucketed-pockets.nnue");
    FloatNet::random(32, 2, layout(4, true), 3).quantise().unwrap().save(&path).unwrap();
    let mut cfg = TrainConfig::new(Vec::new(), dir.join("out.nnue"));
    (cfg.hidden, cfg.buckets, cfg.king_buckets) = (32, 2, 8);
    let err = initial_network(&path, &cfg).unwrap_err().to_string();
    assert!(err.contains("bucketed pockets") && err.contains("shared pockets"), "{err}");
    std::fs::remove_dir_all(&dir).ok();
}

#[test]
fn a_checkpoint_keeps_the_factoriser_and_its_layout() {
    let dir = std::env::temp_dir().join(format!("madhouse-train-ckpt-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let path = dir.join("net.ckpt");
    let inputs = layout(16, false);
    let mut net = FloatNet::random(32, 2, inputs, 4);
    let l = net.layout();
    // Distinct values everywhere, the factoriser included.
    net.params.iter_mut().enumerate().for_each(|(i, p)| *p = i as f32 * 1e-6);
    let mut opt = Optimiser::new(net.params.len());
    opt.m.iter_mut().enumerate().for_each(|(i, m)| *m = i as f32);
    opt.t = 77;
    save_checkpoint(&path, &net, &opt, 3).unwrap();
    let (back, back_opt, done) = load_checkpoint(&path, 32, 2, inputs).unwrap();
    assert_eq!(done, 3);
    assert_eq!(back.inputs(), inputs);
    assert_eq!(back.params, net.params);
    assert!(back.params[l.fact..l.b1].iter().any(|&x| x != 0.0), "the factoriser");
    assert_eq!((back_opt.m, back_opt.t), (opt.m, 77));
    // Another layout is refused, naming both.
    for other in [InputLayout::PLAIN, layout(16, true), layout(8, false)] {
        let Err(err) = load_checkpoint(&path, 32, 2, other) else {
            panic!("{other:?} loaded a checkpoint of 16 king buckets")
        };
        let err = err.to_string();
        assert!(err.contains("16 king buckets"), "{err}");
    }
    std::fs::remove_dir_all(&dir).ok();
}

#[test]
fn trains_with_king_buckets_and_quantises_within_rounding() {
    let dir = std::env::temp_dir().join(format!("madhouse-train-kb-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let data_path = dir.join("data.txt");
    write_text(&data_path, &synthetic(6000, 12));
    let mut cfg = small_config(&dir, &data_path);
    cfg.king_buckets = 8;
    cfg.epochs = 3;
    let report = train(&cfg).unwrap();
    // The network the run starts from (the same seed), on the same held-out positions.
    let mut sources =
        vec![DataReader::open(&data_path, Variant::Crazyhouse).unwrap().with_filter(TEST_FILTER)];
    let (_, val) = load(&mut sources, 0, cfg.validation, cfg.seed, false).unwrap();
    let start = FloatNet::random(32, cfg.buckets, layout(8, false), cfg.seed);
    let before = start.loss(&val, cfg.k, cfg.lambda);
    let last = *report.validation_loss.last().unwrap();
    assert!(last < 0.7 * before, "validation loss {before} -> {last}: not learning");
    let q = crate::nnue::load_file(&cfg.out).unwrap();
    assert_eq!(q.inputs(), layout(8, false));
    let float = load_checkpoint(&cfg.checkpoint, 32, cfg.buckets, layout(8, false)).unwrap().0;
    // The factoriser was trained (it starts random; the buckets start at zero and moved).
    let l = float.layout();
    assert!(float.params[..l.fact].iter().filter(|&&x| x != 0.0).count() > 1000);
    // Quantised against float on other positions, through the position (not the feature
    // list): within 6 standard deviations of the rounding model plus the divisions.
    let samples = synthetic(400, 98);
    let check = dataset(&samples);
    let mut acc = Box::new(Accumulator::new());
    for (i, sample) in samples.iter().enumerate() {
        let (feats, stm) = (check.features(i), check.side_to_move(i));
        let bound = 6.0 * rounding_sigma_cp(&float, feats, stm) + 1.1;
        acc.refresh(&q, &sample.pos);
        let diff = (q.evaluate(&acc, stm) as f64 - float.eval_cp(feats, stm) as f64).abs();
        assert!(diff <= bound, "position {i}: |{diff}| > {bound}");
    }
    std::fs::remove_dir_all(&dir).ok();
}

/// Trains a 4-king-bucket network of hidden size 32 for two epochs on synthetic positions,
/// with `set` changing the settings first; returns the folder (to remove), the settings, the
/// trained float network and the random one it started from.
fn train_bucketed(
    tag: &str,
    seed: u64,
    set: impl FnOnce(&mut TrainConfig),
) -> (std::path::PathBuf, TrainConfig, FloatNet, FloatNet) {
    let dir = std::env::temp_dir().join(format!("madhouse-train-{tag}-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let data_path = dir.join("data.txt");
    write_text(&data_path, &synthetic(3000, seed));
    let mut cfg = small_config(&dir, &data_path);
    cfg.king_buckets = 4;
    cfg.epochs = 2;
    set(&mut cfg);
    train(&cfg).unwrap();
    let inputs = layout(4, false);
    let float = load_checkpoint(&cfg.checkpoint, 32, cfg.buckets, inputs).unwrap().0;
    let start = FloatNet::random(32, cfg.buckets, inputs, cfg.seed);
    (dir, cfg, float, start)
}

#[test]
fn bucket_lr_zero_keeps_the_buckets_at_the_factoriser() {
    let (dir, mut cfg, float, start) = train_bucketed("blr", 13, |c| c.bucket_lr = 0.0);
    let l = float.layout();
    let end = l.bucket_rows_end();
    assert_eq!(end, 4 * crate::nnue::features::BOARD_FEATURES * 32);
    // The buckets' own rows start at zero and, at rate 0, stay there ...
    assert!(float.params[..end].iter().all(|&x| x == 0.0), "a bucket row moved");
    // ... while the shared pocket rows and the factoriser train at the run's rate
    // (only the rows of features the synthetic positions hold can move, so the
    // check is that some did, not most).
    let moved =
        |r: std::ops::Range<usize>| r.filter(|&i| float.params[i] != start.params[i]).count();
    assert!(moved(end..l.fact) > 0, "the shared pocket rows did not train");
    assert!(moved(l.fact..l.b1) > 0, "the factoriser did not train");
    // A negative fraction is refused before any data is read.
    cfg.bucket_lr = -0.5;
    let err = train(&cfg).unwrap_err().to_string();
    assert!(err.contains("--bucket-lr"), "{err}");
    std::fs::remove_dir_all(&dir).ok();
}

#[test]
fn input_lr_zero_trains_the_output_layer_only() {
    let (dir, mut cfg, float, start) = train_bucketed("ilr", 17, |c| c.input_lr = 0.0);
    let l = float.layout();
    // Every input row, the factoriser and the hidden biases keep their starting values ...
    assert!(
        float.params[..l.w2].iter().zip(&start.params[..l.w2]).all(|(a, b)| a == b),
        "an input-layer weight moved"
    );
    // ... while the output layer trains (only the weights of hidden neurons active on the
    // synthetic positions, in the output buckets they reach, can move).
    let moved = (l.w2..l.len).filter(|&i| float.params[i] != start.params[i]).count();
    assert!(moved > 0, "no output weight moved");
    // A negative or non-finite fraction is refused before any data is read.
    for bad in [-0.5, f32::NAN] {
        cfg.input_lr = bad;
        let err = train(&cfg).unwrap_err().to_string();
        assert!(err.contains("--input-lr"), "{err}");
    }
    std::fs::remove_dir_all(&dir).ok();
}
