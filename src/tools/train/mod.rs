//! The trainer behind `madhouse train`: fits a float network to scored positions on the
//! CPU (rayon), then quantises it and writes the network file.
//!
//! - Data: record files or text lines through the one reader ([`crate::tools::data`]);
//!   positions without a score or with a mate score are skipped, and those the run's
//!   [`Filter`] passes over (by default: in check, or the searched move a capture or a
//!   promotion). After reading, each position is kept only as its compact list of
//!   White-perspective feature indices (Black's are [`features::mirror`]s of them), its
//!   side to move, score and result: about 90 bytes a position, so tens of millions fit.
//! - Model: the float twin of the inference network (same features, SCReLU, the side to
//!   move's half first), so quantisation changes the output only by rounding. With
//!   `--king-buckets N` the board features (and with `--bucketed-pockets` the pocket ones)
//!   have a copy per bucket of the perspective's king square, plus a factoriser: one shared
//!   copy added to every bucket while training and folded into each at export.
//! - Loss: mean squared error between `sigmoid(out_cp / K)` and
//!   `lambda * sigmoid(score / K) + (1 - lambda) * result`.
//! - Optimiser: Adam on mini-batches; the forward and backward passes touch only the rows of
//!   the active features; output weights are clipped to what quantisation can store. The
//!   learning rate follows a cosine from `lr` down to `lr_end` over the run.
//! - Every epoch: the loss on held-out positions, and a checkpoint (parameters and Adam
//!   state) that `--resume` continues from.
//!
//! The sigmoid scale K: on Madhouse's own self-play data (a 281k-position snapshot of the
//! scored self-play file) the error of `sigmoid(score / K)` against the game results is
//! lowest for K between 400 and 500 (0.17337 at 400, 0.17336 at 500, 0.1764 at 300; the
//! trainer's own fit on a 661k-position snapshot says 454). 400 also equals `SCALE`, so the
//! network's raw output 1.0 means a 73% expectation, as a 400 cp search score does. The
//! trainer prints the best K for the data it reads, so a change of the search's scale shows.
//!
//! The files: `dataset.rs` (positions in compact form, the validation split, the K fit),
//! `float.rs` (the float network, its forward and backward passes, quantisation),
//! `optim.rs` (Adam and the checkpoint), `quant.rs` (the quantisation check), and this file,
//! the driver (settings, the epochs, the report).

mod dataset;
mod float;
mod optim;
mod quant;
#[cfg(test)]
mod tests;

pub use dataset::{fit_k, load, Dataset, VALIDATION_BLOCK};
pub use float::FloatNet;
pub use quant::{quantisation_error, rounding_sigma_cp};

use std::io;
use std::path::{Path, PathBuf};
use std::time::Instant;

use rayon::prelude::*;

use crate::core::Variant;
use crate::nnue::features::KING_BUCKET_COUNTS;
use crate::nnue::{InputLayout, NnueError, HIDDEN_ALIGN, MAX_HIDDEN, MAX_OUTPUT_BUCKETS};
use crate::rng::Rng;
use crate::tools::data::{DataReader, Filter};
use crate::tools::output::check_writable;
use crate::tools::progress::{format_duration, seconds_left, Meter};
use float::{Scratch, FT_CLIP, OUT_CLIP};
use optim::{load_checkpoint, save_checkpoint, Optimiser};

/// Sigmoid scale in centipawns (see the module notes for the measurement behind it).
pub const DEFAULT_K: f32 = 400.0;
/// Weight of the search score in the target against the game result. Measured by
/// matches of networks trained on the same 947k positions (20,000 nodes a move, 200 games
/// each against the 0.75 network): 0.5 -33 +/- 49 Elo, 1.0 +24 +/- 48; with 179k more
/// positions from the network's own games, 1.0 gave +60 +/- 49 against it.
pub const DEFAULT_LAMBDA: f32 = 1.0;
/// Positions per Adam step. A fit that follows the training positions closely plays worse:
/// on 947k positions, batch 4096 at rate 0.01 reached a validation loss of 0.0197 (whole
/// games held out) against 0.0231 for 16384 at 0.001, and lost 35-92 to it at 2+0.02 —
/// the search finds the off-data positions where a memorising network is wrong. Rate 0.0005
/// under-fits (-51 +/- 49 Elo). So validation loss only compares runs of one recipe.
pub const DEFAULT_BATCH: usize = 16384;
/// Starting learning rate (see [`DEFAULT_BATCH`]).
pub const DEFAULT_LR: f32 = 0.001;
/// Passes over the data (the recipe of [`DEFAULT_BATCH`]).
pub const DEFAULT_EPOCHS: usize = 20;
/// Final learning rate as a fraction of the starting one (cosine schedule).
pub const DEFAULT_LR_END_FRACTION: f32 = 0.05;
/// Fraction of positions held out for validation.
pub const DEFAULT_VALIDATION: f32 = 0.05;
/// Output buckets of a new network (one: a single output for every position).
pub const DEFAULT_BUCKETS: usize = 1;
/// Seed of initialisation, shuffling and the validation split.
pub const DEFAULT_SEED: u64 = 1;
/// King buckets of a new network: one, the plain network (no measurement of more yet).
pub const DEFAULT_KING_BUCKETS: usize = 1;
/// Learning rate of the king buckets' own rows as a fraction of the run's: 1, the same
/// rate as every other weight. A lower one keeps each bucket near the factoriser, which
/// every position trains, when the data is too little for the buckets to learn alone.
pub const DEFAULT_BUCKET_LR: f32 = 1.0;
/// Learning rate of the input layer (every input row, the factoriser and the hidden biases)
/// as a fraction of the run's: 1, the same rate as the output layer. Below 1 it is for
/// fine-tuning a network on far fewer games than trained it, where the input rows, most of
/// the parameters, fit the new games instead of crazyhouse (0: only the output layer moves).
pub const DEFAULT_INPUT_LR: f32 = 1.0;
/// Positions before this game ply are not trained on (the data's own filter, see
/// [`Filter::QUIET`]).
pub const DEFAULT_MIN_PLY: u32 = Filter::QUIET.min_ply;

/// Settings of a training run.
#[derive(Clone, Debug)]
pub struct TrainConfig {
    /// Data files, or folders standing for the data files in them (shards).
    pub data: Vec<PathBuf>,
    /// Variant the FENs are read as.
    pub variant: Variant,
    /// Network file to write.
    pub out: PathBuf,
    /// Checkpoint file (parameters and optimiser state, rewritten every epoch).
    pub checkpoint: PathBuf,
    /// Continue from the checkpoint.
    pub resume: bool,
    /// Start from this network file instead of random weights (fresh optimiser state and
    /// schedule; its buckets must match, and a smaller hidden size is widened to `hidden`,
    /// see [`FloatNet::widen`]). Ignored with `resume`.
    pub init: Option<PathBuf>,
    /// Hidden size H.
    pub hidden: usize,
    /// Output buckets (1 to `MAX_OUTPUT_BUCKETS`), chosen by the pieces on the board.
    pub buckets: usize,
    /// King buckets of the inputs (one of `features::KING_BUCKET_COUNTS`; 1: none). A
    /// plain `init` network is spread over them (see [`FloatNet::with_king_buckets`]).
    pub king_buckets: usize,
    /// With king buckets, a copy of the pocket features per bucket (else one shared copy).
    pub bucketed_pockets: bool,
    /// Passes over the training set.
    pub epochs: usize,
    /// Positions per step.
    pub batch: usize,
    /// Starting learning rate.
    pub lr: f32,
    /// Final learning rate (cosine schedule).
    pub lr_end: f32,
    /// Learning rate of the king buckets' own rows, as a fraction of the run's (the
    /// factoriser and every other weight take the run's rate).
    pub bucket_lr: f32,
    /// Learning rate of the input layer (input rows, factoriser, hidden biases), as a
    /// fraction of the run's; the king buckets' own rows take `bucket_lr` of that.
    pub input_lr: f32,
    /// Weight of the score in the target (the rest is the result).
    pub lambda: f32,
    /// Sigmoid scale in centipawns.
    pub k: f32,
    /// Fraction held out for validation.
    pub validation: f32,
    /// Use at most this many positions (0: all).
    pub limit: usize,
    /// Scratch threads (0: all cores).
    pub threads: usize,
    /// Seed of initialisation, shuffling and the validation split.
    pub seed: u64,
    /// Also train on each position without castling rights mirrored left to right (see
    /// [`load`]).
    pub mirror_files: bool,
    /// Which positions of the data are trained on (the default: what datagen records
    /// without `--all-positions`).
    pub filter: Filter,
}

impl TrainConfig {
    /// The input layout of `king_buckets` and `bucketed_pockets`; an error naming the
    /// counts there are tables for otherwise.
    pub fn inputs(&self) -> io::Result<InputLayout> {
        InputLayout::new(self.king_buckets, self.bucketed_pockets).ok_or_else(|| {
            io::Error::other(format!("--king-buckets must be one of {KING_BUCKET_COUNTS:?}"))
        })
    }

    /// Defaults for everything but the files.
    pub fn new(data: Vec<PathBuf>, out: PathBuf) -> TrainConfig {
        let checkpoint = PathBuf::from(format!("{}.ckpt", out.display()));
        TrainConfig {
            data,
            variant: Variant::Crazyhouse,
            out,
            checkpoint,
            resume: false,
            init: None,
            hidden: crate::nnue::DEFAULT_HIDDEN,
            buckets: DEFAULT_BUCKETS,
            king_buckets: DEFAULT_KING_BUCKETS,
            bucketed_pockets: false,
            epochs: DEFAULT_EPOCHS,
            batch: DEFAULT_BATCH,
            lr: DEFAULT_LR,
            lr_end: DEFAULT_LR * DEFAULT_LR_END_FRACTION,
            bucket_lr: DEFAULT_BUCKET_LR,
            input_lr: DEFAULT_INPUT_LR,
            lambda: DEFAULT_LAMBDA,
            k: DEFAULT_K,
            validation: DEFAULT_VALIDATION,
            limit: 0,
            threads: 0,
            seed: DEFAULT_SEED,
            mirror_files: false,
            filter: Filter::default(),
        }
    }
}

/// What a training run measured.
#[derive(Clone, Debug)]
pub struct TrainReport {
    /// Training positions.
    pub train_positions: usize,
    /// Held-out positions.
    pub validation_positions: usize,
    /// Validation loss after each epoch run (resumed epochs excluded).
    pub validation_loss: Vec<f64>,
    /// Mean seconds per epoch.
    pub seconds_per_epoch: f64,
    /// Training positions per second (forward, backward and optimiser).
    pub positions_per_second: f64,
    /// Mean |quantised - float| evaluation on the validation set, centipawns.
    pub quantisation_mean_cp: f64,
    /// Largest such difference.
    pub quantisation_max_cp: f64,
    /// Mean difference the rounding model ([`rounding_sigma_cp`]) predicts.
    pub quantisation_expected_cp: f64,
}

/// Learning rate at step `t` of `total` (cosine from `lr` to `lr_end`).
fn rate_at(cfg: &TrainConfig, t: u64, total: u64) -> f32 {
    let x = (t as f64 / total.max(1) as f64).min(1.0);
    let c = 0.5 * (1.0 + (std::f64::consts::PI * x).cos());
    (cfg.lr_end as f64 + (cfg.lr - cfg.lr_end) as f64 * c) as f32
}

/// One pass over `train` in shuffled mini-batches; returns the mean training loss. On a
/// terminal `meter` shows the epoch's progress and the time left in the run.
fn epoch(
    net: &mut FloatNet,
    opt: &mut Optimiser,
    workers: &mut [Scratch],
    train: &Dataset,
    cfg: &TrainConfig,
    epoch_index: usize,
    meter: &mut Meter,
) -> f64 {
    let started = Instant::now();
    let mut seen = 0u64;
    let mut order: Vec<u32> = (0..train.len() as u32).collect();
    let mut rng = Rng::new(cfg.seed.wrapping_add(epoch_index as u64 + 1));
    for i in (1..order.len()).rev() {
        order.swap(i, rng.below(i + 1));
    }
    let l = net.layout();
    let steps_per_epoch = train.len().div_ceil(cfg.batch) as u64;
    let total_steps = steps_per_epoch * cfg.epochs as u64;
    let mut loss = 0.0;
    for batch in order.chunks(cfg.batch) {
        let per = batch.len().div_ceil(workers.len());
        let frozen = &*net;
        workers.par_iter_mut().zip(batch.par_chunks(per)).for_each(|(w, part)| {
            w.grad.iter_mut().for_each(|g| *g = 0.0);
            w.loss = 0.0;
            for &i in part {
                frozen.train_one(train, i as usize, cfg.k, cfg.lambda, w);
            }
        });
        let used = batch.len().div_ceil(per);
        loss += workers[..used].iter().map(|w| w.loss).sum::<f64>();
        // Sum the workers' gradients into the first, then one Adam step, both in parallel
        // over slices of the parameters.
        let (first, rest) = workers[..used].split_first_mut().expect("at least one worker");
        let scale = 1.0 / batch.len() as f32;
        let lr = rate_at(cfg, opt.t, total_steps);
        let clip = |at: usize| if (l.w2..l.b2).contains(&at) { OUT_CLIP } else { FT_CLIP };
        let rate = |at: usize| {
            if at < l.bucket_rows_end() {
                lr * cfg.input_lr * cfg.bucket_lr
            } else if at < l.w2 {
                lr * cfg.input_lr
            } else {
                lr
            }
        };
        opt.step(&mut net.params, &mut first.grad, rest, scale, rate, clip);
        seen += batch.len() as u64;
        if meter.is_terminal() && meter.due() {
            let n = train.len() as u64;
            let elapsed = started.elapsed().as_secs_f64().max(1e-9);
            let rate = seen as f64 / elapsed;
            // This epoch and the later ones, at this epoch's rate.
            let work = (cfg.epochs - epoch_index) as u64 * n;
            let left = seconds_left(seen, work, elapsed).unwrap_or(0.0);
            meter.status(
                seen,
                n,
                &format!(
                    "train: epoch {}/{}, {rate:.0} positions/s, {} left",
                    epoch_index + 1,
                    cfg.epochs,
                    format_duration(left)
                ),
            );
        }
    }
    loss / train.len().max(1) as f64
}

/// Runs training as configured and writes the network file.
pub fn train(cfg: &TrainConfig) -> io::Result<TrainReport> {
    if cfg.hidden == 0 || cfg.hidden > MAX_HIDDEN || !cfg.hidden.is_multiple_of(HIDDEN_ALIGN) {
        return Err(io::Error::other(format!(
            "--hidden must be a multiple of {HIDDEN_ALIGN} from {HIDDEN_ALIGN} to {MAX_HIDDEN}"
        )));
    }
    if cfg.buckets == 0 || cfg.buckets > MAX_OUTPUT_BUCKETS {
        return Err(io::Error::other(format!("--buckets must be 1 to {MAX_OUTPUT_BUCKETS}")));
    }
    cfg.inputs()?;
    for (flag, x) in [("--bucket-lr", cfg.bucket_lr), ("--input-lr", cfg.input_lr)] {
        if !(x >= 0.0 && x.is_finite()) {
            return Err(io::Error::other(format!(
                "{flag} must be a fraction of at least 0, not {x}"
            )));
        }
    }
    if cfg.batch == 0 || cfg.epochs == 0 {
        return Err(io::Error::other("--batch and --epochs must be at least 1"));
    }
    let pool = rayon::ThreadPoolBuilder::new()
        .num_threads(cfg.threads)
        .build()
        .map_err(io::Error::other)?;
    pool.install(|| train_in_pool(cfg))
}

/// The network `--init` names, as a float network of the run's size: the same size, or a
/// narrower one of the same output buckets widened (see [`FloatNet::widen`]); a plain one is
/// spread over the run's king buckets ([`FloatNet::with_king_buckets`]) and a bucketed one
/// split into finer buckets ([`FloatNet::refine_king_buckets`]), so the run starts from
/// exactly its evaluation. Read before the data, so that a wrong file is reported at
/// once rather than after minutes of loading.
fn initial_network(path: &Path, cfg: &TrainConfig) -> io::Result<FloatNet> {
    let q = crate::nnue::load_file(path).map_err(|e| match e {
        // Read errors name the file already.
        e @ NnueError::Io(_) => io::Error::other(e.to_string()),
        e => io::Error::other(format!("{}: {e}", path.display())),
    })?;
    if q.hidden() > cfg.hidden || q.buckets() != cfg.buckets {
        return Err(io::Error::other(format!(
            "{}: H = {} with {} output buckets, but this run is H = {} with {} \
             (--hidden, --buckets; a network can be widened, not narrowed)",
            path.display(),
            q.hidden(),
            q.buckets(),
            cfg.hidden,
            cfg.buckets
        )));
    }
    let inputs = cfg.inputs()?;
    let mut net = FloatNet::from_network(&q);
    if q.inputs() != inputs {
        if q.inputs().is_bucketed() {
            net = net.refine_king_buckets(inputs).ok_or_else(|| {
                io::Error::other(format!(
                    "{}: {:?}, but this run asks for {inputs:?} (--king-buckets, \
                     --bucketed-pockets; king buckets can be split finer, 4 to 8 to 16 to \
                     32, and shared pockets bucketed, not the other way round)",
                    path.display(),
                    q.inputs()
                ))
            })?;
            eprintln!("train: {} split into {inputs:?}", path.display());
        } else {
            eprintln!("train: {} spread over {inputs:?}", path.display());
            net = net.with_king_buckets(inputs);
        }
    }
    if q.hidden() < cfg.hidden {
        eprintln!("train: {} widened from H = {} to {}", path.display(), q.hidden(), cfg.hidden);
        return Ok(net.widen(cfg.hidden, cfg.seed));
    }
    Ok(net)
}

fn train_in_pool(cfg: &TrainConfig) -> io::Result<TrainReport> {
    let start = match &cfg.init {
        Some(path) if !cfg.resume => Some((path, initial_network(path, cfg)?)),
        _ => None,
    };
    let mut sources = Vec::new();
    for path in &crate::tools::data::expand_paths(&cfg.data)? {
        // The reader's errors name the file.
        sources.push(DataReader::open(path, cfg.variant)?.with_filter(cfg.filter));
    }
    // The files the run resumes from and writes, before the data (minutes of loading for a
    // large set) rather than after.
    let resumed = if cfg.resume {
        let state = load_checkpoint(&cfg.checkpoint, cfg.hidden, cfg.buckets, cfg.inputs()?)
            .map_err(|e| io::Error::new(e.kind(), format!("--resume: {e}")))?;
        Some(state)
    } else {
        None
    };
    check_writable(&cfg.out)?;
    check_writable(&cfg.checkpoint)?;
    let started = Instant::now();
    let (train, val) = load(&mut sources, cfg.limit, cfg.validation, cfg.seed, cfg.mirror_files)?;
    if train.len() < cfg.batch.min(1000) || val.is_empty() {
        return Err(io::Error::other(format!(
            "too few positions: {} training, {} validation",
            train.len(),
            val.len()
        )));
    }
    eprintln!(
        "train: {} training and {} validation positions, {:.0} MB, loaded in {:.1} s; \
         best-fitting K for these scores {:.0} (using {})",
        train.len(),
        val.len(),
        (train.bytes() + val.bytes()) as f64 / 1e6,
        started.elapsed().as_secs_f64(),
        fit_k(&train),
        cfg.k
    );
    let (mut net, mut opt, done) = if let Some((n, o, d)) = resumed {
        eprintln!("train: resuming after epoch {d} from {}", cfg.checkpoint.display());
        (n, o, d)
    } else {
        let n = match start {
            Some((path, n)) => {
                eprintln!(
                    "train: starting from {} (validation loss {:.6})",
                    path.display(),
                    n.loss(&val, cfg.k, cfg.lambda)
                );
                n
            }
            None => FloatNet::random(cfg.hidden, cfg.buckets, cfg.inputs()?, cfg.seed),
        };
        let len = n.params.len();
        (n, Optimiser::new(len), 0)
    };
    let threads = rayon::current_num_threads().max(1);
    let mut workers: Vec<Scratch> = (0..threads)
        .map(|_| Scratch {
            grad: vec![0.0; net.params.len()],
            acc: [vec![0.0; cfg.hidden], vec![0.0; cfg.hidden]],
            loss: 0.0,
        })
        .collect();
    let mut val_losses = Vec::new();
    let mut seconds = 0.0;
    let mut meter = Meter::new();
    for e in done..cfg.epochs {
        let t0 = Instant::now();
        let train_loss = epoch(&mut net, &mut opt, &mut workers, &train, cfg, e, &mut meter);
        let dt = t0.elapsed().as_secs_f64();
        seconds += dt;
        let val_loss = net.loss(&val, cfg.k, cfg.lambda);
        val_losses.push(val_loss);
        save_checkpoint(&cfg.checkpoint, &net, &opt, e + 1)?;
        meter.line(&format!(
            "train: epoch {}/{}: train loss {train_loss:.6}, validation loss {val_loss:.6}, \
             {dt:.1} s, {:.0} positions/s, lr {:.2e}",
            e + 1,
            cfg.epochs,
            train.len() as f64 / dt,
            rate_at(cfg, opt.t, train.len().div_ceil(cfg.batch) as u64 * cfg.epochs as u64)
        ));
    }
    fs_err::write(&cfg.out, net.quantise().map_err(io::Error::other)?.to_bytes())?;
    // Measure the file as the engine will load it.
    let q = crate::nnue::load_file(&cfg.out).map_err(io::Error::other)?;
    let (mean, max, expected) = quantisation_error(&net, &q, &val);
    eprintln!(
        "train: wrote {} ({} bytes, H = {}, {} output buckets, {:?}); quantised vs float on \
         validation: mean {mean:.2} cp (rounding explains {expected:.2}), max {max:.1} cp",
        cfg.out.display(),
        q.file_size(),
        cfg.hidden,
        cfg.buckets,
        q.inputs()
    );
    let epochs_run = val_losses.len().max(1) as f64;
    Ok(TrainReport {
        train_positions: train.len(),
        validation_positions: val.len(),
        validation_loss: val_losses,
        seconds_per_epoch: seconds / epochs_run,
        positions_per_second: train.len() as f64 * epochs_run / seconds.max(1e-9),
        quantisation_mean_cp: mean,
        quantisation_max_cp: max,
        quantisation_expected_cp: expected,
    })
}
