//! Fitting the evaluation weights to game results: `madhouse tune`.
//!
//! Logistic (Texel) fitting of every weight in `eval::weights`. The evaluation's features are
//! traced once per position; each epoch then evaluates the whole set from the features in
//! parallel (rayon) and takes an Adam step on the gradient of the mean squared error between
//! `sigmoid(eval)` and the result.
//!
//! The positions and results come from `madhouse datagen` record files, or text files with
//! `<FEN> | <result>` lines (as `scripts/pgn_to_positions.py` writes from other engines'
//! games); the one reader of training data ([`crate::tools::data`]) reads both.

use rayon::prelude::*;

use crate::core::{Color, Position, Variant};
use crate::eval::weights::{
    DANGER_CAP, DANGER_DIVISOR, DEFAULT_WEIGHTS, HAND_MADE_WEIGHTS, NUM_WEIGHTS, SECTIONS,
};
use crate::eval::{evaluate_with, Tracer};
use crate::tools::data::DataReader;
use crate::tools::output::check_writable;

/// Full passes over the data.
pub const DEFAULT_EPOCHS: usize = 500;
/// Learning rate of momentum gradient descent (about 1e5 moves a weight seen in every
/// position by a few units).
pub const DEFAULT_RATE_GD: f64 = 1e5;
/// Learning rate of Adam, in weight units per step.
pub const DEFAULT_RATE_ADAM: f64 = 0.5;
/// L2 pull toward the starting weights (none).
pub const DEFAULT_L2: f64 = 0.0;
/// Where the tuned weights go in a checkout: the file `eval` includes. The command line uses
/// it only when it exists relative to the current directory: outside a checkout there is no
/// source file to rewrite, and `--out` is required.
pub const DEFAULT_OUT: &str = "src/eval/tuned.rs";

/// Positions read and traced per parallel chunk.
const LOAD_CHUNK: usize = 1 << 16;

/// The features of one position, as the tuner needs them.
#[derive(Default, Clone)]
struct Features {
    /// `(weight index, white count minus black count)` of the linear terms.
    linear: Vec<(u16, i16)>,
    /// King-danger inputs of white's king, then black's.
    danger: [Vec<(u16, i16)>; 2],
    result: f32,
}

#[derive(Default)]
struct Collect {
    linear: Vec<(usize, i32)>,
    danger: [Vec<(usize, i32)>; 2],
}

impl Tracer for Collect {
    const ENABLED: bool = true;
    fn linear(&mut self, color: Color, idx: usize, n: i32) {
        self.linear.push((idx, n * color.sign()));
    }
    fn danger(&mut self, color: Color, idx: usize, n: i32) {
        self.danger[color.index()].push((idx, n));
    }
}

fn merge(v: &[(usize, i32)]) -> Vec<(u16, i16)> {
    let mut m: Vec<(usize, i32)> = v.to_vec();
    m.sort_unstable();
    let mut out: Vec<(u16, i16)> = Vec::with_capacity(m.len());
    for (i, n) in m {
        match out.last_mut() {
            Some(last) if last.0 as usize == i => last.1 += n as i16,
            _ => out.push((i as u16, n as i16)),
        }
    }
    out.retain(|x| x.1 != 0);
    out
}

fn features(pos: &Position, result: f32) -> Features {
    let mut c = Collect::default();
    evaluate_with(pos, &DEFAULT_WEIGHTS, &mut c);
    Features {
        linear: merge(&c.linear),
        danger: [merge(&c.danger[0]), merge(&c.danger[1])],
        result,
    }
}

/// Evaluation (white's view) from features and real-valued weights; also the danger sums.
fn eval_features(f: &Features, w: &[f64]) -> (f64, [f64; 2]) {
    let mut e = 0.0;
    for &(i, n) in &f.linear {
        e += w[i as usize] * n as f64;
    }
    let mut d = [0.0; 2];
    for (c, sum) in d.iter_mut().enumerate() {
        for &(i, n) in &f.danger[c] {
            *sum += w[i as usize] * n as f64;
        }
        let p = penalty(*sum);
        e -= if c == 0 { p } else { -p };
    }
    (e, d)
}

/// The danger penalty as a smooth function of real-valued sums (matches `danger_penalty`).
fn penalty(d: f64) -> f64 {
    if d <= 0.0 {
        0.0
    } else {
        (d.min(4096.0).powi(2) / DANGER_DIVISOR as f64).min(DANGER_CAP as f64)
    }
}

fn penalty_slope(d: f64) -> f64 {
    if d <= 0.0 || d >= 4096.0 || d * d / DANGER_DIVISOR as f64 >= DANGER_CAP as f64 {
        0.0
    } else {
        2.0 * d / DANGER_DIVISOR as f64
    }
}

fn sigmoid(e: f64, k: f64) -> f64 {
    1.0 / (1.0 + (-k * e / 400.0).exp())
}

fn mean_error(data: &[Features], w: &[f64], k: f64) -> f64 {
    let sum: f64 = data
        .par_iter()
        .map(|f| {
            let (e, _) = eval_features(f, w);
            let d = sigmoid(e, k) - f.result as f64;
            d * d
        })
        .sum();
    sum / data.len().max(1) as f64
}

/// Settings of a tuning run.
#[derive(Clone, Debug)]
pub struct TuneConfig {
    /// Data file: `madhouse datagen` records, or `FEN | result` text lines.
    pub data: String,
    /// Full passes over the data.
    pub epochs: usize,
    /// Learning rate: weight units per step for Adam; for gradient descent, the factor on
    /// the gradient (about 1e5 moves a weight seen in every position by a few units).
    pub rate: f64,
    /// Where to write the tuned weights (Rust source for `src/eval/tuned.rs`).
    pub out: String,
    /// Use at most this many positions (0: all).
    pub limit: usize,
    /// Adam (per-weight step sizes) instead of momentum gradient descent.
    pub adam: bool,
    /// Start from the hand-made weights instead of the current ones (a fresh fit).
    pub from_hand_made: bool,
    /// L2 pull of every weight toward its starting value. Adam moves rarely seen weights
    /// (long-range mobility, promoted knights) as fast as common ones; this keeps them near
    /// their prior unless the data really says otherwise.
    pub l2: f64,
    /// Fixed scale of the sigmoid (`None`: fitted to the starting weights). The fit can
    /// trade a smaller K for larger weights; fixing K keeps the centipawn scale that the
    /// search's margins assume when a refit starts from weights that fit badly.
    pub k: Option<f64>,
    /// Threads of the fit (0: all cores).
    pub threads: usize,
}

impl TuneConfig {
    /// Defaults for everything but the files: gradient descent from the current weights.
    pub fn new(data: String, out: String) -> TuneConfig {
        TuneConfig {
            data,
            epochs: DEFAULT_EPOCHS,
            rate: DEFAULT_RATE_GD,
            out,
            limit: 0,
            adam: false,
            from_hand_made: false,
            l2: DEFAULT_L2,
            k: None,
            threads: 0,
        }
    }
}

/// Loads and traces the data set.
fn load(cfg: &TuneConfig) -> std::io::Result<Vec<Features>> {
    let mut reader = DataReader::open(std::path::Path::new(&cfg.data), Variant::Crazyhouse)?;
    let limit = if cfg.limit == 0 { usize::MAX } else { cfg.limit };
    let (mut items, mut chunk) = (Vec::new(), Vec::new());
    while items.len() < limit {
        chunk.clear();
        if reader.read_chunk((limit - items.len()).min(LOAD_CHUNK), &mut chunk)? == 0 {
            break;
        }
        items.par_extend(chunk.par_iter().map(|l| features(&l.pos, l.result)));
    }
    let skipped = reader.skipped();
    if skipped.total() > 0 {
        eprintln!("tune: {}: left out {skipped}", cfg.data);
    }
    Ok(items)
}

/// Runs Texel tuning on `cfg.threads` threads and writes the weights.
pub fn tune(cfg: &TuneConfig) -> std::io::Result<()> {
    let pool = rayon::ThreadPoolBuilder::new()
        .num_threads(cfg.threads)
        .build()
        .map_err(std::io::Error::other)?;
    pool.install(|| tune_in_pool(cfg))
}

fn tune_in_pool(cfg: &TuneConfig) -> std::io::Result<()> {
    // Before the data and the epochs: a run that cannot write its result is lost.
    check_writable(std::path::Path::new(&cfg.out))?;
    let mut data = load(cfg)?;
    if data.len() < 20 {
        return Err(std::io::Error::other("too few positions"));
    }
    // Every tenth position is held out: the weights kept are those of the epoch with the
    // lowest error on positions the fit never saw.
    let mut validation = Vec::with_capacity(data.len() / 10 + 1);
    let mut i = 0;
    data.retain(|f| {
        i += 1;
        if i % 10 == 0 {
            validation.push(f.clone());
            false
        } else {
            true
        }
    });
    eprintln!("tune: {} training and {} validation positions", data.len(), validation.len());
    let start = if cfg.from_hand_made { &HAND_MADE_WEIGHTS } else { &DEFAULT_WEIGHTS };
    let mut w: Vec<f64> = start.iter().map(|&x| x as f64).collect();
    let prior = w.clone();

    // The scaling constant that best fits the current weights.
    let mut k = cfg.k.unwrap_or(1.0);
    let mut best = mean_error(&data, &w, k);
    for step in [0.5, 0.1, 0.02].into_iter().filter(|_| cfg.k.is_none()) {
        loop {
            let mut improved = false;
            for cand in [k - step, k + step] {
                if cand <= 0.0 {
                    continue;
                }
                let e = mean_error(&data, &w, cand);
                if e < best {
                    best = e;
                    k = cand;
                    improved = true;
                }
            }
            if !improved {
                break;
            }
        }
    }
    eprintln!("tune: K = {k:.3}, initial error {best:.6}");

    let mut best_validation = mean_error(&validation, &w, k);
    let mut best_weights = w.clone();
    let mut best_epoch = 0;
    eprintln!("tune: initial validation error {best_validation:.6}");
    let n = data.len() as f64;
    let (mut m, mut v) = (vec![0.0; NUM_WEIGHTS], vec![0.0; NUM_WEIGHTS]);
    let (b1, b2, eps) = (0.9, 0.999, 1e-8);
    for epoch in 1..=cfg.epochs {
        let grad = data
            .par_iter()
            .fold(
                || vec![0.0; NUM_WEIGHTS],
                |mut g, f| {
                    let (e, d) = eval_features(f, &w);
                    let s = sigmoid(e, k);
                    let common = 2.0 * (s - f.result as f64) * s * (1.0 - s) * k / 400.0;
                    for &(i, c) in &f.linear {
                        g[i as usize] += common * c as f64;
                    }
                    for (c, sign) in [(0usize, -1.0), (1, 1.0)] {
                        let slope = penalty_slope(d[c]);
                        if slope != 0.0 {
                            for &(i, x) in &f.danger[c] {
                                g[i as usize] += common * sign * slope * x as f64;
                            }
                        }
                    }
                    g
                },
            )
            .reduce(
                || vec![0.0; NUM_WEIGHTS],
                |mut a, b| {
                    a.iter_mut().zip(b).for_each(|(x, y)| *x += y);
                    a
                },
            );
        let t = epoch as i32;
        for i in 0..NUM_WEIGHTS {
            let g = grad[i] / n + 2.0 * cfg.l2 * (w[i] - prior[i]);
            m[i] = b1 * m[i] + (1.0 - b1) * g;
            if cfg.adam {
                v[i] = b2 * v[i] + (1.0 - b2) * g * g;
                let mh = m[i] / (1.0 - b1.powi(t));
                let vh = v[i] / (1.0 - b2.powi(t));
                w[i] -= cfg.rate * mh / (vh.sqrt() + eps);
            } else {
                // Momentum gradient descent: each weight moves in proportion to the evidence
                // for it, so rarely seen features stay near their prior.
                w[i] -= cfg.rate * m[i];
            }
        }
        if epoch % 10 == 0 || epoch == cfg.epochs {
            let ve = mean_error(&validation, &w, k);
            if ve < best_validation {
                best_validation = ve;
                best_weights.clone_from(&w);
                best_epoch = epoch;
            }
            if epoch % 50 == 0 || epoch == cfg.epochs {
                eprintln!(
                    "tune: epoch {epoch}, training error {:.6}, validation error {ve:.6}",
                    mean_error(&data, &w, k)
                );
            }
        }
    }
    eprintln!("tune: best validation error {best_validation:.6} at epoch {best_epoch}");
    write_weights(&cfg.out, &best_weights, k, data.len())
}

/// Writes the weights as Rust source, one comment per section of `eval::weights::SECTIONS`.
fn write_weights(path: &str, w: &[f64], k: f64, positions: usize) -> std::io::Result<()> {
    let mut s = String::new();
    s.push_str("//! Evaluation weights fitted by `madhouse tune` (do not edit by hand; rerun the tuner).\n");
    s.push_str(&format!("//! Fitted on {positions} positions, K = {k:.3}.\n\n"));
    s.push_str("use super::weights::NUM_WEIGHTS;\n\n");
    s.push_str("/// The tuned weights, in the layout of `eval::weights`.\n");
    s.push_str("#[rustfmt::skip]\npub const TUNED: [i32; NUM_WEIGHTS] = [\n");
    for section in SECTIONS {
        s.push_str(&format!("    // {}\n   ", section.name));
        for (c, x) in w[section.start..section.start + section.len].iter().enumerate() {
            if c > 0 && c % 16 == 0 {
                s.push_str("\n   ");
            }
            s.push_str(&format!(" {},", x.round() as i64));
        }
        s.push('\n');
    }
    s.push_str("];\n");
    fs_err::write(path, s)?;
    eprintln!("tune: weights written to {path}");
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn feature_evaluation_matches_the_engine() {
        let w: Vec<f64> = DEFAULT_WEIGHTS.iter().map(|&x| x as f64).collect();
        for fen in crate::bench::positions() {
            let pos = Position::from_fen(fen, Variant::Crazyhouse).unwrap();
            let f = features(&pos, 0.5);
            let (e, _) = eval_features(&f, &w);
            let engine = crate::eval::evaluate(&pos) * pos.turn().sign();
            // Integer division in the engine's danger penalty rounds down.
            assert!((e - engine as f64).abs() <= 2.0, "{fen}: tuner {e} engine {engine}");
        }
    }
}
