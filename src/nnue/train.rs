//! The trainer behind `madhouse train`: fits a float network to scored positions on the
//! CPU (rayon), then quantises it and writes the network file.
//!
//! - Data: any [`SampleSource`] ([`open_source`] picks one by the file's contents; today the
//!   text format `<FEN> | <score cp, white's view> | <result 1/0.5/0>`). Positions with a
//!   mate score are skipped. After reading, each position is kept only as its compact list
//!   of White-perspective feature indices (Black's are [`features::mirror`]s of them), its
//!   side to move, score and result: about 90 bytes a position, so tens of millions fit.
//! - Model: the float twin of the inference network (same features, SCReLU, the side to
//!   move's half first), so quantisation changes the output only by rounding.
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

use std::fs::File;
use std::io::{self, BufRead, BufReader, Read, Write};
use std::path::{Path, PathBuf};
use std::time::Instant;

use rayon::prelude::*;

use super::data;
use super::features::{self, INPUTS};
use super::network::fnv1a;
use super::{
    Network, NnueError, HIDDEN_ALIGN, MAX_HIDDEN, MAX_OUTPUT_BUCKETS, OUTPUT_WEIGHT_MAX, QA, QB,
    SCALE,
};
use crate::core::{Color, Variant};
use crate::progress::{format_duration, seconds_left, Meter};
use crate::rng::Rng;
use crate::score::MATE_BOUND;

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
/// Adam's decay of the first moment.
const BETA1: f32 = 0.9;
/// Adam's decay of the second moment.
const BETA2: f32 = 0.999;
/// Adam's denominator guard.
const EPSILON: f32 = 1e-8;
/// Largest float output weight quantisation can store.
const OUT_CLIP: f32 = OUTPUT_WEIGHT_MAX as f32 / QB as f32;
/// Largest float accumulator weight or bias quantisation can store.
const FT_CLIP: f32 = i16::MAX as f32 / QA as f32;
/// Positions parsed per parallel chunk while loading.
const LOAD_CHUNK: usize = 1 << 16;
/// First bytes of a checkpoint file.
const CKPT_MAGIC: [u8; 4] = *b"MHCK";
/// Checkpoint format version (2: the number of output buckets after the hidden size).
const CKPT_VERSION: u32 = 2;
/// Bytes before a checkpoint's arrays: magic, version, hidden size, buckets, epochs done,
/// optimiser steps (u64).
const CKPT_HEADER: usize = 4 + 4 * 4 + 8;

pub use super::data::Sample;

/// A source of training samples: text lines or record files.
pub trait SampleSource {
    /// Appends up to `max` more samples to `out`; returns how many (0 at the end).
    /// Unusable records (unreadable FEN, mate score) are skipped and counted.
    fn read_chunk(&mut self, max: usize, out: &mut Vec<Sample>) -> io::Result<usize>;
    /// Records skipped so far.
    fn skipped(&self) -> u64;
}

/// Opens a data file with the reader for its format: a record file (`madhouse datagen`)
/// when its first record decodes, else text lines.
pub fn open_source(path: &Path, variant: Variant) -> io::Result<Box<dyn SampleSource>> {
    let mut first = [0u8; data::RECORD_BYTES];
    let is_records = {
        let mut f = File::open(path)?;
        f.read_exact(&mut first).is_ok() && data::decode(&first).is_ok()
    };
    if is_records {
        Ok(Box::new(RecordSource { reader: data::Reader::open(path)?, skipped: 0 }))
    } else {
        Ok(Box::new(TextSource::open(path, variant)?))
    }
}

/// Reads the 44-byte records `madhouse datagen` writes.
pub struct RecordSource {
    reader: data::Reader<BufReader<File>>,
    skipped: u64,
}

impl SampleSource for RecordSource {
    fn read_chunk(&mut self, max: usize, out: &mut Vec<Sample>) -> io::Result<usize> {
        let before = out.len();
        while out.len() - before < max {
            match self.reader.next() {
                None => break,
                Some(Ok(s)) if (s.score as i32).abs() < MATE_BOUND => out.push(s),
                Some(_) => self.skipped += 1,
            }
        }
        Ok(out.len() - before)
    }

    fn skipped(&self) -> u64 {
        self.skipped
    }
}

/// Reads `<FEN> | <score> | <result>` lines.
pub struct TextSource {
    reader: BufReader<File>,
    variant: Variant,
    skipped: u64,
    lines: Vec<String>,
}

impl TextSource {
    /// Opens a text data file; FENs are read as `variant` positions.
    pub fn open(path: &Path, variant: Variant) -> io::Result<TextSource> {
        let reader = BufReader::new(File::open(path)?);
        Ok(TextSource { reader, variant, skipped: 0, lines: Vec::new() })
    }
}

/// Parses one `FEN | score | result` line (the one text reader, `data::parse_text_line`);
/// `None` for anything unusable, including lines without a score and mate scores.
pub fn parse_text_line(line: &str, variant: Variant) -> Option<Sample> {
    let (pos, score, result) = data::parse_text_line(line, variant).ok()?;
    let score = score?;
    (score.abs() < MATE_BOUND).then_some(Sample { pos, score: score as i16, result })
}

impl SampleSource for TextSource {
    fn read_chunk(&mut self, max: usize, out: &mut Vec<Sample>) -> io::Result<usize> {
        self.lines.clear();
        let mut line = String::new();
        while self.lines.len() < max {
            line.clear();
            if self.reader.read_line(&mut line)? == 0 {
                break;
            }
            if !line.trim().is_empty() {
                self.lines.push(line.clone());
            }
        }
        let variant = self.variant;
        let parsed: Vec<Option<Sample>> =
            self.lines.par_iter().map(|l| parse_text_line(l, variant)).collect();
        let before = out.len();
        for s in parsed {
            match s {
                Some(s) => out.push(s),
                None => self.skipped += 1,
            }
        }
        Ok(out.len() - before)
    }

    fn skipped(&self) -> u64 {
        self.skipped
    }
}

/// Per-position data besides the features.
#[derive(Copy, Clone, Debug)]
struct Meta {
    score: i16,
    /// Result in half points (0, 1, 2).
    result2: u8,
    white_to_move: bool,
}

/// Positions in compact form: White-perspective feature lists back to back.
#[derive(Default)]
pub struct Dataset {
    feats: Vec<u16>,
    offsets: Vec<u64>,
    meta: Vec<Meta>,
}

impl Dataset {
    fn push(&mut self, feats: &[u16], meta: Meta) {
        if self.offsets.is_empty() {
            self.offsets.push(0);
        }
        self.feats.extend_from_slice(feats);
        self.offsets.push(self.feats.len() as u64);
        self.meta.push(meta);
    }

    /// Adds a sample.
    pub fn push_sample(&mut self, s: &Sample) {
        let f = features::active(&s.pos, Color::White);
        self.push(f.as_slice(), meta_of(s));
    }

    /// Number of positions.
    pub fn len(&self) -> usize {
        self.meta.len()
    }

    /// Is it empty?
    pub fn is_empty(&self) -> bool {
        self.meta.is_empty()
    }

    /// White-perspective features of position `i`.
    pub fn features(&self, i: usize) -> &[u16] {
        &self.feats[self.offsets[i] as usize..self.offsets[i + 1] as usize]
    }

    /// Side to move of position `i`.
    pub fn side_to_move(&self, i: usize) -> Color {
        if self.meta[i].white_to_move {
            Color::White
        } else {
            Color::Black
        }
    }

    /// Search score (cp, White's view) and result (White's view) of position `i`.
    pub fn labels(&self, i: usize) -> (i16, f32) {
        (self.meta[i].score, self.meta[i].result2 as f32 / 2.0)
    }

    /// Bytes held (for the memory report).
    pub fn bytes(&self) -> usize {
        self.feats.len() * 2
            + self.offsets.len() * 8
            + self.meta.len() * std::mem::size_of::<Meta>()
    }
}

fn meta_of(s: &Sample) -> Meta {
    Meta {
        score: s.score,
        result2: (s.result * 2.0).round().clamp(0.0, 2.0) as u8,
        white_to_move: s.pos.turn() == Color::White,
    }
}

/// Positions are held out for validation in blocks of this many consecutive positions. Data
/// files hold whole games in order, and positions of one game are near copies of each other:
/// holding out single positions let the validation loss reward memorising games (a fit with
/// a low loss that played worse), while a block of a few games keeps the held-out games
/// unseen but at their edges.
pub const VALIDATION_BLOCK: u64 = 128;

/// Is position number `i` held out? A hash of its block's index, so the split does not
/// depend on the order of chunks or threads.
fn held_out(i: u64, fraction: f32, seed: u64) -> bool {
    let block = i / VALIDATION_BLOCK;
    let h = Rng::new(seed ^ block.wrapping_mul(0x9e37_79b9_7f4a_7c15)).next_u64();
    (h % 1_000_000) < (fraction.clamp(0.0, 1.0) * 1_000_000.0) as u64
}

/// Reads every source into a training and a validation set (at most `limit` positions in
/// all when `limit` > 0).
///
/// With `mirror_files`, every training position without castling rights is also added
/// mirrored left to right (files a..h reversed): without castling the rules are symmetric
/// that way, so the mirrored position has the same score and result. Validation positions
/// are not mirrored.
pub fn load(
    sources: &mut [Box<dyn SampleSource>],
    limit: usize,
    validation: f32,
    seed: u64,
    mirror_files: bool,
) -> io::Result<(Dataset, Dataset)> {
    let (mut train, mut val) = (Dataset::default(), Dataset::default());
    let mut chunk = Vec::with_capacity(LOAD_CHUNK);
    let mut index = 0u64;
    let started = Instant::now();
    for src in sources.iter_mut() {
        loop {
            let room = if limit > 0 { limit.saturating_sub(index as usize) } else { LOAD_CHUNK };
            if room == 0 {
                break;
            }
            chunk.clear();
            if src.read_chunk(room.min(LOAD_CHUNK), &mut chunk)? == 0 {
                break;
            }
            type Compact = (features::FeatureList<{ features::MAX_ACTIVE }>, Meta, bool);
            let compact: Vec<Compact> = chunk
                .par_iter()
                .map(|s| {
                    let symmetric = s.pos.castling().bits() == 0;
                    (features::active(&s.pos, Color::White), meta_of(s), symmetric)
                })
                .collect();
            let mut mirrored = Vec::with_capacity(features::MAX_ACTIVE);
            for (f, m, symmetric) in compact {
                if held_out(index, validation, seed) {
                    val.push(f.as_slice(), m);
                } else {
                    train.push(f.as_slice(), m);
                    if mirror_files && symmetric {
                        mirrored.clear();
                        mirrored.extend(f.as_slice().iter().map(|&x| features::mirror_files(x)));
                        train.push(&mirrored, m);
                    }
                }
                index += 1;
            }
            if index % (16 * LOAD_CHUNK as u64) < chunk.len() as u64 {
                eprintln!(
                    "train: read {index} positions ({:.0} s)",
                    started.elapsed().as_secs_f64()
                );
            }
        }
        if src.skipped() > 0 {
            eprintln!("train: skipped {} unusable records (bad line or mate score)", src.skipped());
        }
    }
    Ok((train, val))
}

fn sigmoid(x: f32) -> f32 {
    1.0 / (1.0 + (-x).exp())
}

/// The K that best predicts the results from the scores alone (golden-section search on
/// the squared error), reported so that a change in the search's scale is noticed.
pub fn fit_k(data: &Dataset) -> f32 {
    let err = |k: f32| -> f64 {
        (0..data.len())
            .into_par_iter()
            .map(|i| {
                let (s, r) = data.labels(i);
                let d = (sigmoid(s as f32 / k) - r) as f64;
                d * d
            })
            .sum::<f64>()
    };
    let (mut a, mut b) = (50.0f32, 2000.0f32);
    let g = 0.618_034f32;
    for _ in 0..40 {
        let (c, d) = (b - g * (b - a), a + g * (b - a));
        if err(c) < err(d) {
            b = d;
        } else {
            a = c;
        }
    }
    (a + b) / 2.0
}

/// The float network being trained. Parameters live in one flat vector, laid out as the
/// file's arrays: accumulator weights (feature-major), accumulator biases, output weights
/// (per bucket: side to move's half first), output biases (one per bucket).
#[derive(Clone, Debug)]
pub struct FloatNet {
    hidden: usize,
    buckets: usize,
    params: Vec<f32>,
}

/// Flat-vector offsets of a float network's parts.
#[derive(Copy, Clone)]
struct Layout {
    h: usize,
    b1: usize,
    w2: usize,
    b2: usize,
    len: usize,
}

impl Layout {
    fn new(h: usize, buckets: usize) -> Layout {
        let b1 = INPUTS * h;
        let w2 = b1 + h;
        let b2 = w2 + buckets * 2 * h;
        Layout { h, b1, w2, b2, len: b2 + buckets }
    }

    /// Offset of bucket `b`'s output weights (`2h` of them).
    fn out(&self, b: usize) -> usize {
        self.w2 + b * 2 * self.h
    }
}

/// Scratch of one training thread: gradients and the activations of one position.
struct Worker {
    grad: Vec<f32>,
    acc: [Vec<f32>; 2],
    loss: f64,
}

impl FloatNet {
    /// A network with small random weights and `buckets` output layers.
    pub fn random(hidden: usize, buckets: usize, seed: u64) -> FloatNet {
        let l = Layout::new(hidden, buckets);
        let mut rng = Rng::new(seed);
        let mut uniform =
            |a: f32| (rng.next_u64() >> 40) as f32 / (1u64 << 24) as f32 * 2.0 * a - a;
        let mut params = vec![0.0; l.len];
        // About 30 features are active: their sum starts with a spread of about 0.1.
        let a1 = 1.0 / (INPUTS as f32).sqrt();
        for p in &mut params[..l.b1] {
            *p = uniform(a1);
        }
        let a2 = 1.0 / (2.0 * hidden as f32).sqrt();
        for p in &mut params[l.w2..l.b2] {
            *p = uniform(a2);
        }
        FloatNet { hidden, buckets, params }
    }

    fn layout(&self) -> Layout {
        Layout::new(self.hidden, self.buckets)
    }

    /// The output bucket of a position given by its White-perspective features.
    fn bucket(&self, white_feats: &[u16]) -> usize {
        features::output_bucket(features::board_pieces(white_feats), self.buckets)
    }

    /// The hidden size.
    pub fn hidden(&self) -> usize {
        self.hidden
    }

    /// Accumulator of the perspective whose features are `feats` (mirrored when `mirror`).
    fn accumulate(&self, feats: &[u16], mirror: bool, out: &mut [f32]) {
        // Tiles of HIDDEN_ALIGN values stay in registers over all the rows (the same
        // additions in the same order as row by row, so the same result, with half the
        // memory traffic).
        let l = self.layout();
        let bias = &self.params[l.b1..l.w2];
        for (t, chunk) in out.chunks_exact_mut(HIDDEN_ALIGN).enumerate() {
            let start = t * HIDDEN_ALIGN;
            let mut tile = [0.0f32; HIDDEN_ALIGN];
            tile.copy_from_slice(&bias[start..start + HIDDEN_ALIGN]);
            for &f in feats {
                let f = if mirror { features::mirror(f as usize) } else { f as usize };
                let row = &self.params[f * l.h + start..f * l.h + start + HIDDEN_ALIGN];
                for (o, &w) in tile.iter_mut().zip(row) {
                    *o += w;
                }
            }
            chunk.copy_from_slice(&tile);
        }
    }

    /// Raw output (1.0 = SCALE centipawns) of output bucket `bucket` from the two
    /// accumulators, side to move first.
    fn output(&self, us: &[f32], them: &[f32], bucket: usize) -> f32 {
        let l = self.layout();
        let w2 = &self.params[l.out(bucket)..l.out(bucket + 1)];
        let screlu = |x: f32| x.clamp(0.0, 1.0).powi(2);
        let a: f32 = us.iter().zip(&w2[..l.h]).map(|(&x, &w)| screlu(x) * w).sum();
        let b: f32 = them.iter().zip(&w2[l.h..]).map(|(&x, &w)| screlu(x) * w).sum();
        a + b + self.params[l.b2 + bucket]
    }

    /// Evaluation in centipawns from the side to move's view of a position given by its
    /// White-perspective features.
    pub fn eval_cp(&self, white_feats: &[u16], stm: Color) -> f32 {
        let mut us = vec![0.0; self.hidden];
        let mut them = vec![0.0; self.hidden];
        self.accumulate(white_feats, stm == Color::Black, &mut us);
        self.accumulate(white_feats, stm == Color::White, &mut them);
        self.output(&us, &them, self.bucket(white_feats)) * SCALE as f32
    }

    /// Forward and backward pass of position `i`; adds the gradient of its loss to `w`.
    fn train_one(&self, data: &Dataset, i: usize, k: f32, lambda: f32, w: &mut Worker) {
        let l = self.layout();
        let feats = data.features(i);
        let bucket = self.bucket(feats);
        let black = data.side_to_move(i) == Color::Black;
        let [us, them] = &mut w.acc;
        self.accumulate(feats, black, us);
        self.accumulate(feats, !black, them);
        let out = self.output(us, them, bucket);
        let (score, result) = data.labels(i);
        let pred = sigmoid(out * SCALE as f32 / k);
        // Labels are from White's view; the output is from the side to move's.
        let white_pred = if black { 1.0 - pred } else { pred };
        let target = lambda * sigmoid(score as f32 / k) + (1.0 - lambda) * result;
        let err = white_pred - target;
        w.loss += (err * err) as f64;
        // d(loss)/d(out): the sign flips back for Black's view.
        let g = 2.0 * err * pred * (1.0 - pred) * SCALE as f32 / k * if black { -1.0 } else { 1.0 };
        let w2 = &self.params[l.out(bucket)..l.out(bucket + 1)];
        let grad = &mut w.grad;
        grad[l.b2 + bucket] += g;
        for (half, acc) in [(0, &mut *us), (1, &mut *them)] {
            let range = l.out(bucket) + half * l.h..l.out(bucket) + (half + 1) * l.h;
            let gw2 = &mut grad[range];
            // Branch-free so that it vectorises: outside (0, 1) the factors are zero.
            for ((a, gw), &wj) in acc.iter_mut().zip(gw2).zip(&w2[half * l.h..]) {
                let x = *a;
                let c = x.clamp(0.0, 1.0);
                *gw += g * c * c;
                let inside = if x > 0.0 && x < 1.0 { 2.0 } else { 0.0 };
                // Reuse the accumulator as its own gradient: d(loss)/d(acc).
                *a = g * wj * inside * x;
            }
        }
        for (acc, mirror) in [(&*us, black), (&*them, !black)] {
            for (gb, &d) in grad[l.b1..l.w2].iter_mut().zip(acc.iter()) {
                *gb += d;
            }
            for &f in feats {
                let f = if mirror { features::mirror(f as usize) } else { f as usize };
                for (gw, &d) in grad[f * l.h..(f + 1) * l.h].iter_mut().zip(acc.iter()) {
                    *gw += d;
                }
            }
        }
    }

    /// Mean loss over a data set (no gradient).
    pub fn loss(&self, data: &Dataset, k: f32, lambda: f32) -> f64 {
        let sum: f64 = (0..data.len())
            .into_par_iter()
            .map(|i| {
                let stm = data.side_to_move(i);
                let cp = self.eval_cp(data.features(i), stm);
                let p = sigmoid(cp / k);
                let white_p = if stm == Color::Black { 1.0 - p } else { p };
                let (score, result) = data.labels(i);
                let t = lambda * sigmoid(score as f32 / k) + (1.0 - lambda) * result;
                ((white_p - t) * (white_p - t)) as f64
            })
            .sum();
        sum / data.len().max(1) as f64
    }

    /// The float network a quantised one stands for (each integer divided by its scale), so
    /// that training can continue from a network file: quantising it again gives the same
    /// file.
    pub fn from_network(net: &Network) -> FloatNet {
        let (hidden, buckets) = (net.hidden(), net.buckets());
        let l = Layout::new(hidden, buckets);
        let mut params = Vec::with_capacity(l.len);
        params.extend(net.ft_weights().iter().map(|&w| w as f32 / QA as f32));
        params.extend(net.ft_bias().iter().map(|&b| b as f32 / QA as f32));
        params.extend(net.out_weights().iter().map(|&w| w as f32 / QB as f32));
        params.extend(net.out_bias().iter().map(|&b| b as f32 / (QA * QB) as f32));
        debug_assert_eq!(params.len(), l.len);
        FloatNet { hidden, buckets, params }
    }

    /// The same network with `hidden` accumulator neurons: the first `self.hidden` are this
    /// network's, the new ones get small random input weights (as [`FloatNet::random`]) and
    /// zero biases and output weights, so the output is unchanged until training moves them
    /// (a wider network grown from a trained one, without losing what it learned).
    pub fn widen(&self, hidden: usize, seed: u64) -> FloatNet {
        assert!(hidden >= self.hidden, "widen to {hidden} from {}", self.hidden);
        let (old, new) = (self.layout(), Layout::new(hidden, self.buckets));
        let fresh = FloatNet::random(hidden, self.buckets, seed);
        let mut params = vec![0.0; new.len];
        for f in 0..INPUTS {
            let row = &mut params[f * hidden..(f + 1) * hidden];
            row.copy_from_slice(&fresh.params[f * hidden..(f + 1) * hidden]);
            row[..old.h].copy_from_slice(&self.params[f * old.h..(f + 1) * old.h]);
        }
        params[new.b1..new.b1 + old.h].copy_from_slice(&self.params[old.b1..old.w2]);
        for b in 0..self.buckets {
            for half in 0..2 {
                let (from, to) = (old.out(b) + half * old.h, new.out(b) + half * hidden);
                params[to..to + old.h].copy_from_slice(&self.params[from..from + old.h]);
            }
        }
        params[new.b2..].copy_from_slice(&self.params[old.b2..]);
        FloatNet { hidden, buckets: self.buckets, params }
    }

    /// The quantised network: weights rounded and clipped to the integer ranges.
    pub fn quantise(&self) -> Result<Network, NnueError> {
        let l = self.layout();
        let q16 =
            |x: f32, s: i32, max: i32| (x * s as f32).round().clamp(-max as f32, max as f32) as i16;
        let ft_w = self.params[..l.b1].iter().map(|&x| q16(x, QA, i16::MAX as i32)).collect();
        let ft_b = self.params[l.b1..l.w2].iter().map(|&x| q16(x, QA, i16::MAX as i32)).collect();
        let out_w =
            self.params[l.w2..l.b2].iter().map(|&x| q16(x, QB, OUTPUT_WEIGHT_MAX)).collect();
        let out_b =
            self.params[l.b2..].iter().map(|&x| (x * (QA * QB) as f32).round() as i32).collect();
        Network::new(self.hidden, ft_w, ft_b, out_w, out_b)
    }
}

/// Settings of a training run.
#[derive(Clone, Debug)]
pub struct TrainConfig {
    /// Data files.
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
    /// Passes over the training set.
    pub epochs: usize,
    /// Positions per step.
    pub batch: usize,
    /// Starting learning rate.
    pub lr: f32,
    /// Final learning rate (cosine schedule).
    pub lr_end: f32,
    /// Weight of the score in the target (the rest is the result).
    pub lambda: f32,
    /// Sigmoid scale in centipawns.
    pub k: f32,
    /// Fraction held out for validation.
    pub validation: f32,
    /// Use at most this many positions (0: all).
    pub limit: usize,
    /// Worker threads (0: all cores).
    pub threads: usize,
    /// Seed of initialisation, shuffling and the validation split.
    pub seed: u64,
    /// Also train on each position without castling rights mirrored left to right (see
    /// [`load`]).
    pub mirror_files: bool,
}

impl TrainConfig {
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
            hidden: super::DEFAULT_HIDDEN,
            buckets: 1,
            epochs: DEFAULT_EPOCHS,
            batch: DEFAULT_BATCH,
            lr: DEFAULT_LR,
            lr_end: DEFAULT_LR * DEFAULT_LR_END_FRACTION,
            lambda: DEFAULT_LAMBDA,
            k: DEFAULT_K,
            validation: DEFAULT_VALIDATION,
            limit: 0,
            threads: 0,
            seed: 1,
            mirror_files: false,
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

/// Adam state and the step counter.
struct Optimiser {
    m: Vec<f32>,
    v: Vec<f32>,
    t: u64,
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
    workers: &mut [Worker],
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
        opt.t += 1;
        let (bc1, bc2) = (1.0 - BETA1.powi(opt.t as i32), 1.0 - BETA2.powi(opt.t as i32));
        const SLICE: usize = 4096;
        net.params
            .par_chunks_mut(SLICE)
            .zip(opt.m.par_chunks_mut(SLICE))
            .zip(opt.v.par_chunks_mut(SLICE))
            .zip(first.grad.par_chunks_mut(SLICE))
            .enumerate()
            .for_each(|(c, (((p, m), v), g))| {
                for (j, gj) in g.iter_mut().enumerate() {
                    let at = c * SLICE + j;
                    let mut sum = *gj;
                    for w in rest.iter() {
                        sum += w.grad[at];
                    }
                    let grad = sum * scale;
                    m[j] = BETA1 * m[j] + (1.0 - BETA1) * grad;
                    v[j] = BETA2 * v[j] + (1.0 - BETA2) * grad * grad;
                    p[j] -= lr * (m[j] / bc1) / ((v[j] / bc2).sqrt() + EPSILON);
                    let clip = if (l.w2..l.b2).contains(&at) { OUT_CLIP } else { FT_CLIP };
                    p[j] = p[j].clamp(-clip, clip);
                }
            });
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

/// Writes parameters, Adam state and progress (atomically: a temporary file renamed).
fn save_checkpoint(
    path: &Path,
    net: &FloatNet,
    opt: &Optimiser,
    epochs_done: usize,
) -> io::Result<()> {
    let mut b = Vec::with_capacity(CKPT_HEADER + 12 * net.params.len() + 8);
    b.extend_from_slice(&CKPT_MAGIC);
    b.extend_from_slice(&CKPT_VERSION.to_le_bytes());
    b.extend_from_slice(&(net.hidden as u32).to_le_bytes());
    b.extend_from_slice(&(net.buckets as u32).to_le_bytes());
    b.extend_from_slice(&(epochs_done as u32).to_le_bytes());
    b.extend_from_slice(&opt.t.to_le_bytes());
    for arr in [&net.params, &opt.m, &opt.v] {
        for x in arr.iter() {
            b.extend_from_slice(&x.to_le_bytes());
        }
    }
    let sum = fnv1a(&b);
    b.extend_from_slice(&sum.to_le_bytes());
    let tmp = path.with_extension("ckpt.tmp");
    let mut f = File::create(&tmp)?;
    f.write_all(&b)?;
    f.sync_all()?;
    std::fs::rename(&tmp, path)
}

/// Reads a checkpoint written by [`save_checkpoint`] for a network of `hidden` neurons and
/// `buckets` output buckets.
fn load_checkpoint(
    path: &Path,
    hidden: usize,
    buckets: usize,
) -> io::Result<(FloatNet, Optimiser, usize)> {
    let bad = |what: &str| io::Error::other(format!("{}: {what}", path.display()));
    let b = std::fs::read(path)?;
    let n = Layout::new(hidden, buckets).len;
    let want = CKPT_HEADER + 12 * n + 8;
    if b.len() != want || b[..4] != CKPT_MAGIC {
        return Err(bad("not a checkpoint of this hidden size and buckets (or truncated)"));
    }
    let u32_at = |o: usize| u32::from_le_bytes([b[o], b[o + 1], b[o + 2], b[o + 3]]);
    if u32_at(4) != CKPT_VERSION || u32_at(8) as usize != hidden || u32_at(12) as usize != buckets {
        return Err(bad("checkpoint version, hidden size or buckets differ"));
    }
    let stored = u64::from_le_bytes(b[want - 8..].try_into().map_err(|_| bad("truncated"))?);
    if stored != fnv1a(&b[..want - 8]) {
        return Err(bad("checkpoint checksum mismatch"));
    }
    let epochs_done = u32_at(16) as usize;
    let t = u64::from_le_bytes(b[20..28].try_into().map_err(|_| bad("truncated"))?);
    let floats = |k: usize| -> Vec<f32> {
        b[CKPT_HEADER + 4 * k * n..CKPT_HEADER + 4 * (k + 1) * n]
            .chunks_exact(4)
            .map(|c| f32::from_le_bytes([c[0], c[1], c[2], c[3]]))
            .collect()
    };
    Ok((
        FloatNet { hidden, buckets, params: floats(0) },
        Optimiser { m: floats(1), v: floats(2), t },
        epochs_done,
    ))
}

/// Standard deviation (centipawns) of the quantised network's evaluation around the float
/// one's that rounding alone explains, for a position given by its White-perspective
/// features. Model: each accumulator value carries (n + 1) independent roundings, uniform
/// within 1/(2 QA), so its error has variance (n + 1) / (12 QA^2); SCReLU passes it on with
/// slope 2x inside (0, 1), the output weights scale it, and each output weight's own rounding
/// adds screlu^2 / (12 QB^2). The integer divisions add under 1.1 cp more, not included.
pub fn rounding_sigma_cp(float: &FloatNet, white_feats: &[u16], stm: Color) -> f64 {
    let l = float.layout();
    let w2 = &float.params[l.out(float.bucket(white_feats))..];
    let mut halves = [vec![0.0; l.h], vec![0.0; l.h]];
    float.accumulate(white_feats, stm == Color::Black, &mut halves[0]);
    float.accumulate(white_feats, stm == Color::White, &mut halves[1]);
    let acc_var = (white_feats.len() + 1) as f64 / (12.0 * (QA * QA) as f64);
    let mut var = 0.0;
    for (half, vals) in halves.iter().enumerate() {
        for (j, &x) in vals.iter().enumerate() {
            let x = x as f64;
            let slope = if x > 0.0 && x < 1.0 { 2.0 * x } else { 0.0 };
            var += (slope * w2[half * l.h + j] as f64).powi(2) * acc_var;
            var += x.clamp(0.0, 1.0).powi(4) / (12.0 * (QB * QB) as f64);
        }
    }
    var.sqrt() * SCALE as f64
}

/// Quantised against float evaluation over `data`: the mean and largest |difference| and
/// the mean difference the rounding model ([`rounding_sigma_cp`]) predicts, centipawns.
pub fn quantisation_error(float: &FloatNet, net: &Network, data: &Dataset) -> (f64, f64, f64) {
    let rows: Vec<(f64, f64)> = (0..data.len())
        .into_par_iter()
        .map_init(
            || Box::new(super::Accumulator::new()),
            |acc, i| {
                let stm = data.side_to_move(i);
                let feats = data.features(i);
                acc.refresh_from_features(net, feats);
                let q = net.evaluate(acc, stm) as f64;
                // The mean of |normal(0, sigma)| is sigma * sqrt(2 / pi).
                let expected =
                    rounding_sigma_cp(float, feats, stm) * (2.0 / std::f64::consts::PI).sqrt();
                ((q - float.eval_cp(feats, stm) as f64).abs(), expected)
            },
        )
        .collect();
    let n = rows.len().max(1) as f64;
    let max = rows.iter().map(|r| r.0).fold(0.0, f64::max);
    (rows.iter().map(|r| r.0).sum::<f64>() / n, max, rows.iter().map(|r| r.1).sum::<f64>() / n)
}

/// Runs training as configured and writes the network file.
pub fn train(cfg: &TrainConfig) -> io::Result<TrainReport> {
    if cfg.hidden == 0 || cfg.hidden > MAX_HIDDEN || cfg.hidden % HIDDEN_ALIGN != 0 {
        return Err(io::Error::other(format!(
            "--hidden must be a multiple of {HIDDEN_ALIGN} from {HIDDEN_ALIGN} to {MAX_HIDDEN}"
        )));
    }
    if cfg.buckets == 0 || cfg.buckets > MAX_OUTPUT_BUCKETS {
        return Err(io::Error::other(format!("--buckets must be 1 to {MAX_OUTPUT_BUCKETS}")));
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
/// narrower one of the same buckets widened (see [`FloatNet::widen`]). Read before the data,
/// so that a wrong file is reported at once rather than after minutes of loading.
fn initial_network(path: &Path, cfg: &TrainConfig) -> io::Result<FloatNet> {
    let q = super::load_file(path).map_err(|e| match e {
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
    let net = FloatNet::from_network(&q);
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
    for path in &cfg.data {
        sources.push(
            open_source(path, cfg.variant)
                .map_err(|e| io::Error::new(e.kind(), format!("{}: {e}", path.display())))?,
        );
    }
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
    let (mut net, mut opt, done) = if cfg.resume {
        let (n, o, d) = load_checkpoint(&cfg.checkpoint, cfg.hidden, cfg.buckets)?;
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
            None => FloatNet::random(cfg.hidden, cfg.buckets, cfg.seed),
        };
        let len = n.params.len();
        (n, Optimiser { m: vec![0.0; len], v: vec![0.0; len], t: 0 }, 0)
    };
    let threads = rayon::current_num_threads().max(1);
    let mut workers: Vec<Worker> = (0..threads)
        .map(|_| Worker {
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
    net.quantise().map_err(io::Error::other)?.save(&cfg.out)?;
    // Measure the file as the engine will load it.
    let q = super::load_file(&cfg.out).map_err(io::Error::other)?;
    let (mean, max, expected) = quantisation_error(&net, &q, &val);
    eprintln!(
        "train: wrote {} ({} bytes, H = {}, {} output buckets); quantised vs float on \
         validation: mean {mean:.2} cp (rounding explains {expected:.2}), max {max:.1} cp",
        cfg.out.display(),
        q.file_size(),
        cfg.hidden,
        cfg.buckets
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

#[cfg(test)]
mod tests {
    use super::*;
    use crate::core::{Position, Role};

    #[test]
    fn record_and_text_files_read_the_same_samples() {
        // The same positions written as datagen records and as text lines: `open_source`
        // recognises each format and yields equal samples; a mate score is skipped in both.
        let lines = [
            "rnbqkb1r/pp3ppp/3ppn2/2p5/3PP3/2Q5/PPP2PPP/RNB1KBNR[] w KQkq - 0 2 | -155 | 0",
            "rnbqkb1r/pppp1ppp/5n2/4p3/4P3/5N2/PPPP1PPP/RNBQKB1R[] w KQkq - 2 3 | 40 | 0.5",
            "4k3/8/8/8/8/8/8/4K3[QQp] w - - 0 1 | 31900 | 1",
            "r1bqkbnr/pppp1ppp/2n5/4p3/4P3/5N2/PPPP1PPP/RNBQKB1R[Nb] b KQkq - 2 3 | 12 | 1",
        ];
        let dir = std::env::temp_dir().join(format!("madhouse-train-src-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let (text, records) = (dir.join("d.txt"), dir.join("d.bin"));
        std::fs::write(&text, lines.join("\n")).unwrap();
        let mut bytes = Vec::new();
        for l in lines {
            let (pos, score, result) = data::parse_text_line(l, Variant::Crazyhouse).unwrap();
            let sample = Sample { pos, score: score.unwrap().clamp(-32000, 32000) as i16, result };
            bytes.extend_from_slice(&data::encode(&sample).unwrap());
        }
        std::fs::write(&records, bytes).unwrap();
        let read = |path: &Path| {
            let mut src = open_source(path, Variant::Crazyhouse).unwrap();
            let mut out = Vec::new();
            while src.read_chunk(2, &mut out).unwrap() > 0 {}
            (out, src.skipped())
        };
        let (from_text, skipped_text) = read(&text);
        let (from_records, skipped_records) = read(&records);
        assert_eq!((skipped_text, skipped_records), (1, 1));
        assert_eq!(from_text.len(), 3);
        assert_eq!(from_records.len(), 3);
        for (a, b) in from_text.iter().zip(&from_records) {
            assert_eq!((a.pos.fen(), a.score, a.result), (b.pos.fen(), b.score, b.result));
        }
        let want = Position::from_fen(lines[3].split('|').next().unwrap(), Variant::Crazyhouse);
        assert_eq!(from_records[2].pos.fen(), want.unwrap().fen());
        let _ = std::fs::remove_dir_all(&dir);
    }

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
        let mut w = Worker {
            grad: vec![0.0; net.params.len()],
            acc: [vec![0.0; net.hidden], vec![0.0; net.hidden]],
            loss: 0.0,
        };
        net.train_one(data, i, DEFAULT_K, 0.5, &mut w);
        w.loss
    }

    #[test]
    fn gradient_matches_finite_differences() {
        gradient_check(1);
    }

    #[test]
    fn gradient_matches_finite_differences_with_output_buckets() {
        gradient_check(8);
    }

    #[test]
    fn a_widened_network_gives_the_same_output_and_can_learn() {
        let data = dataset(&synthetic(60, 11));
        let mut net = FloatNet::random(32, 4, 2);
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
        let w = Layout::new(96, 4);
        let fresh_inputs = (0..INPUTS).flat_map(|f| &wide.params[f * 96 + 32..(f + 1) * 96]);
        assert!(fresh_inputs.filter(|x| **x != 0.0).count() > INPUTS * 60);
        let mut worker =
            Worker { grad: vec![0.0; w.len], acc: [vec![0.0; 96], vec![0.0; 96]], loss: 0.0 };
        for i in 0..data.len() {
            wide.train_one(&data, i, DEFAULT_K, 1.0, &mut worker);
        }
        let new_out = (0..4).flat_map(|b| &worker.grad[w.out(b) + 32..w.out(b) + 96]);
        assert!(new_out.filter(|g| g.abs() > 1e-9).count() > 10);
    }

    fn gradient_check(buckets: usize) {
        let data = dataset(&synthetic(40, 3));
        let mut net = FloatNet::random(32, buckets, 5);
        // Larger output weights than at initialisation make every gradient sizeable.
        let l = net.layout();
        for p in &mut net.params[l.w2..l.b2] {
            *p *= 8.0;
        }
        net.params[l.b1..l.w2].iter_mut().for_each(|b| *b = 0.3);
        let mut checked = 0;
        for i in [1usize, 7, 20, 33] {
            let mut w = Worker {
                grad: vec![0.0; net.params.len()],
                acc: [vec![0.0; 32], vec![0.0; 32]],
                loss: 0.0,
            };
            net.train_one(&data, i, DEFAULT_K, 0.5, &mut w);
            // One weight of an active feature of each perspective, a bias, output weights of
            // both halves, the output bias.
            let f = data.features(i)[3] as usize;
            let fm = features::mirror(f);
            // The position's own output bucket, and another one, which gets no gradient.
            let b = net.bucket(data.features(i));
            let (o, other) = (l.out(b), l.out((b + 1) % buckets));
            let candidates =
                [f * 32 + 5, fm * 32 + 9, l.b1 + 4, o + 2, o + 32 + 7, l.b2 + b, other + 3];
            for &at in &candidates {
                let eps = 1e-3;
                let mut plus = net.clone();
                plus.params[at] += eps;
                let mut minus = net.clone();
                minus.params[at] -= eps;
                let numeric = (sample_loss(&plus, &data, i) - sample_loss(&minus, &data, i))
                    / (2.0 * eps as f64);
                let analytic = w.grad[at] as f64;
                if numeric.abs() < 1e-6 && analytic.abs() < 1e-6 {
                    continue;
                }
                assert!(
                    (numeric - analytic).abs() <= 0.02 * numeric.abs().max(analytic.abs()) + 1e-6,
                    "sample {i} param {at}: numeric {numeric}, analytic {analytic}"
                );
                checked += 1;
            }
        }
        assert!(checked >= 12, "only {checked} non-zero gradients checked");
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
        cfg
    }

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
        let mut float = FloatNet::random(32, 3, 5);
        for p in &mut float.params {
            *p *= 40.0;
        }
        let q = float.quantise().unwrap();
        let back = FloatNet::from_network(&q);
        assert_eq!((back.hidden, back.buckets), (32, 3));
        assert_eq!(back.quantise().unwrap().to_bytes(), q.to_bytes());
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
            let clipped =
                if i < l.w2 { a.abs() >= FT_CLIP } else { i < l.b2 && a.abs() >= OUT_CLIP };
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
    fn text_lines() {
        let fen = "r1bqk2r/pppp1ppp/2n1p3/4P3/1b1Pn3/2NB1N2/PPP2PPP/R1BQK2R[QNNpp] b KQkq - 0 1";
        let s = parse_text_line(&format!("{fen} | -155 | 0.5\n"), Variant::Crazyhouse).unwrap();
        assert_eq!((s.score, s.result, s.pos.turn()), (-155, 0.5, Color::Black));
        assert_eq!(s.pos.hand(Color::White).count(Role::Knight), 2);
        assert!(parse_text_line(&format!("{fen} | 31900 | 1"), Variant::Crazyhouse).is_none());
        assert!(parse_text_line(&format!("{fen} | -31900 | 0"), Variant::Crazyhouse).is_none());
        assert!(parse_text_line(&format!("{fen} | 12 | 2"), Variant::Crazyhouse).is_none());
        assert!(parse_text_line(&format!("{fen} | x | 1"), Variant::Crazyhouse).is_none());
        assert!(parse_text_line(&format!("{fen} | 1 | 1 | 1"), Variant::Crazyhouse).is_none());
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

        // Two epochs, then resume for the other two: the same network.
        let mut half = small_config(&dir, &data_path);
        half.out = dir.join("half.nnue");
        half.checkpoint = dir.join("half.ckpt");
        // Run the first two of the four epochs by hand (the schedule depends on the total).
        let mut sources = vec![open_source(&data_path, Variant::Crazyhouse).unwrap()];
        let (tr, _) = load(&mut sources, 0, half.validation, half.seed, false).unwrap();
        let mut net = FloatNet::random(32, half.buckets, half.seed);
        let len = net.params.len();
        let mut opt = Optimiser { m: vec![0.0; len], v: vec![0.0; len], t: 0 };
        let pool = rayon::ThreadPoolBuilder::new().num_threads(2).build().unwrap();
        pool.install(|| {
            let mut workers: Vec<Worker> = (0..2)
                .map(|_| Worker {
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
        let float = load_checkpoint(&cfg.checkpoint, 32, cfg.buckets).unwrap().0;
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
}
