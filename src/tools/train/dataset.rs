//! Training positions in compact form: feature lists, labels, the validation split, and
//! the sigmoid scale that fits the data best.

use std::io;
use std::time::Instant;

use rayon::prelude::*;

use super::float::sigmoid;
use crate::core::Color;
use crate::nnue::data::Sample;
use crate::nnue::features;
use crate::rng::Rng;
use crate::tools::data::DataReader;

/// Positions parsed per parallel chunk while loading.
const LOAD_CHUNK: usize = 1 << 16;

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
pub(super) fn held_out(i: u64, fraction: f32, seed: u64) -> bool {
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
    sources: &mut [DataReader],
    limit: usize,
    validation: f32,
    seed: u64,
    mirror_files: bool,
) -> io::Result<(Dataset, Dataset)> {
    let (mut train, mut val) = (Dataset::default(), Dataset::default());
    let mut chunk = Vec::with_capacity(LOAD_CHUNK);
    let mut samples: Vec<Sample> = Vec::with_capacity(LOAD_CHUNK);
    let mut index = 0u64;
    let started = Instant::now();
    for src in sources.iter_mut() {
        let mut unscored = 0u64;
        loop {
            let room = if limit > 0 { limit.saturating_sub(index as usize) } else { LOAD_CHUNK };
            if room == 0 {
                break;
            }
            chunk.clear();
            if src.read_chunk(room.min(LOAD_CHUNK), &mut chunk)? == 0 {
                break;
            }
            samples.clear();
            let read = chunk.len();
            samples.extend(chunk.drain(..).filter_map(|l| l.scored()));
            unscored += (read - samples.len()) as u64;
            type Compact = (features::FeatureList<{ features::MAX_ACTIVE }>, Meta, bool);
            let compact: Vec<Compact> = samples
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
            if index % (16 * LOAD_CHUNK as u64) < samples.len() as u64 {
                eprintln!(
                    "train: read {index} positions ({:.0} s)",
                    started.elapsed().as_secs_f64()
                );
            }
        }
        let skipped = src.skipped();
        if skipped.total() + unscored > 0 {
            eprintln!(
                "train: {}: skipped {skipped}, {unscored} without a score",
                src.path().display()
            );
        }
    }
    Ok((train, val))
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
