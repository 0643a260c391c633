//! The float network being trained: the float twin of the inference network, its forward
//! and backward passes, widening, and quantisation to the network file.
//!
//! With king buckets the float network also holds a factoriser: one more copy of the
//! bucketed rows (board features, and pocket ones when those are bucketed), added to every
//! bucket's row in the forward pass, so each position trains it whatever its king's bucket
//! and a bucket seen rarely still starts from what the others learned. Quantisation folds it
//! into every bucket; the network file does not hold it.

use rayon::prelude::*;

use super::dataset::Dataset;
use crate::core::Color;
use crate::nnue::features::{self, InputLayout, BOARD_FEATURES, INPUTS};
use crate::nnue::{Network, NnueError, HIDDEN_ALIGN, OUTPUT_WEIGHT_MAX, QA, QB, SCALE};
use crate::rng::Rng;

/// Largest float output weight quantisation can store.
pub(super) const OUT_CLIP: f32 = OUTPUT_WEIGHT_MAX as f32 / QB as f32;
/// Largest float accumulator weight or bias quantisation can store.
pub(super) const FT_CLIP: f32 = i16::MAX as f32 / QA as f32;

/// The logistic function.
pub(super) fn sigmoid(x: f32) -> f32 {
    1.0 / (1.0 + (-x).exp())
}

/// The float network being trained. Parameters live in one flat vector, laid out as the
/// file's arrays with the factoriser after the accumulator weights: accumulator weights
/// (row-major, rows as [`InputLayout::row`]), factoriser rows (one per bucketed base
/// feature; none without king buckets), accumulator biases, output weights (per bucket:
/// side to move's half first), output biases (one per bucket).
#[derive(Clone, Debug)]
pub struct FloatNet {
    pub(super) hidden: usize,
    pub(super) buckets: usize,
    pub(super) inputs: InputLayout,
    pub(super) params: Vec<f32>,
}

/// Flat-vector offsets of a float network's parts.
#[derive(Copy, Clone)]
pub(super) struct Layout {
    pub(super) h: usize,
    pub(super) inputs: InputLayout,
    /// Start of the factoriser rows.
    pub(super) fact: usize,
    /// Factoriser rows: base features below this have one (0 without king buckets).
    pub(super) fact_rows: usize,
    pub(super) b1: usize,
    pub(super) w2: usize,
    pub(super) b2: usize,
    pub(super) len: usize,
}

impl Layout {
    pub(super) fn new(h: usize, buckets: usize, inputs: InputLayout) -> Layout {
        let fact = inputs.rows() * h;
        let fact_rows = if inputs.is_bucketed() { inputs.bucketed_features() } else { 0 };
        let b1 = fact + fact_rows * h;
        let w2 = b1 + h;
        let b2 = w2 + buckets * 2 * h;
        Layout { h, inputs, fact, fact_rows, b1, w2, b2, len: b2 + buckets }
    }

    /// Offset of bucket `b`'s output weights (`2h` of them).
    pub(super) fn out(&self, b: usize) -> usize {
        self.w2 + b * 2 * self.h
    }

    /// End of the king buckets' own rows: the accumulator weights of bucketed features
    /// start the vector (bucket by bucket), shared pocket rows follow them (0 without king
    /// buckets).
    pub(super) fn bucket_rows_end(&self) -> usize {
        self.fact_rows * self.inputs.king_buckets() * self.h
    }

    /// Offset of the factoriser row of base feature `f`, if it has one.
    #[inline]
    pub(super) fn fact_row(&self, f: usize) -> Option<usize> {
        (f < self.fact_rows).then(|| self.fact + f * self.h)
    }
}

/// Scratch of one training thread: gradients and the activations of one position.
pub(super) struct Scratch {
    pub(super) grad: Vec<f32>,
    pub(super) acc: [Vec<f32>; 2],
    pub(super) loss: f64,
}

impl FloatNet {
    /// A network with small random weights, `buckets` output layers and inputs arranged as
    /// `inputs`. With king buckets the factoriser (and shared pocket rows) start random and
    /// the buckets' own rows at zero, so a new network starts as a plain one whose buckets
    /// learn only how they differ.
    pub fn random(hidden: usize, buckets: usize, inputs: InputLayout, seed: u64) -> FloatNet {
        let l = Layout::new(hidden, buckets, inputs);
        let mut rng = Rng::new(seed);
        let mut params = vec![0.0; l.len];
        // About 30 features are active: their sum starts with a spread of about 0.1.
        let a1 = 1.0 / (INPUTS as f32).sqrt();
        if inputs.is_bucketed() {
            if !inputs.bucketed_pockets() {
                let shared = inputs.row(BOARD_FEATURES, 0) * hidden;
                for p in &mut params[shared..l.fact] {
                    *p = rng.uniform(a1);
                }
            }
            for p in &mut params[l.fact..l.b1] {
                *p = rng.uniform(a1);
            }
        } else {
            for p in &mut params[..l.b1] {
                *p = rng.uniform(a1);
            }
        }
        let a2 = 1.0 / (2.0 * hidden as f32).sqrt();
        for p in &mut params[l.w2..l.b2] {
            *p = rng.uniform(a2);
        }
        FloatNet { hidden, buckets, inputs, params }
    }

    pub(super) fn layout(&self) -> Layout {
        Layout::new(self.hidden, self.buckets, self.inputs)
    }

    /// The output bucket of a position given by its White-perspective features.
    pub(super) fn bucket(&self, white_feats: &[u16]) -> usize {
        features::output_bucket(features::board_pieces(white_feats), self.buckets)
    }

    /// The king bucket of one perspective (Black's when `black`) of a position given by its
    /// White-perspective features, as the inference finds it from the position.
    pub(super) fn king_bucket(&self, white_feats: &[u16], black: bool) -> usize {
        if !self.inputs.is_bucketed() {
            return 0;
        }
        let perspective = if black { Color::Black } else { Color::White };
        features::relative_king_square_of(white_feats, perspective)
            .map_or(0, |sq| self.inputs.king_bucket(sq))
    }

    /// The hidden size.
    pub fn hidden(&self) -> usize {
        self.hidden
    }

    /// Accumulator of the perspective whose features are `feats` (mirrored when `mirror`,
    /// for Black's perspective).
    pub(super) fn accumulate(&self, feats: &[u16], mirror: bool, out: &mut [f32]) {
        // Tiles of HIDDEN_ALIGN values stay in registers over all the rows (the same
        // additions in the same order as row by row, so the same result, with half the
        // memory traffic).
        let l = self.layout();
        let off = l.inputs.offsets(self.king_bucket(feats, mirror));
        let bias = &self.params[l.b1..l.w2];
        for (t, chunk) in out.chunks_exact_mut(HIDDEN_ALIGN).enumerate() {
            let start = t * HIDDEN_ALIGN;
            let mut tile = [0.0f32; HIDDEN_ALIGN];
            tile.copy_from_slice(&bias[start..start + HIDDEN_ALIGN]);
            for &f in feats {
                let f = if mirror { features::mirror(f as usize) } else { f as usize };
                let at = off.row(f) * l.h + start;
                let row = &self.params[at..at + HIDDEN_ALIGN];
                match l.fact_row(f) {
                    // The bucket's weight plus the shared one, as quantisation folds them.
                    Some(fr) => {
                        let shared = &self.params[fr + start..fr + start + HIDDEN_ALIGN];
                        for ((o, &w), &s) in tile.iter_mut().zip(row).zip(shared) {
                            *o += w + s;
                        }
                    }
                    None => {
                        for (o, &w) in tile.iter_mut().zip(row) {
                            *o += w;
                        }
                    }
                }
            }
            chunk.copy_from_slice(&tile);
        }
    }

    /// Raw output (1.0 = SCALE centipawns) of output bucket `bucket` from the two
    /// accumulators, side to move first.
    pub(super) fn output(&self, us: &[f32], them: &[f32], bucket: usize) -> f32 {
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
    pub(super) fn train_one(&self, data: &Dataset, i: usize, k: f32, lambda: f32, w: &mut Scratch) {
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
            let off = l.inputs.offsets(self.king_bucket(feats, mirror));
            for &f in feats {
                let f = if mirror { features::mirror(f as usize) } else { f as usize };
                let at = off.row(f) * l.h;
                for (gw, &d) in grad[at..at + l.h].iter_mut().zip(acc.iter()) {
                    *gw += d;
                }
                // The factoriser's weight enters the sum as the bucket's does.
                if let Some(fr) = l.fact_row(f) {
                    for (gw, &d) in grad[fr..fr + l.h].iter_mut().zip(acc.iter()) {
                        *gw += d;
                    }
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
    /// file. With king buckets the factoriser starts at zero (the file holds it folded in).
    pub fn from_network(net: &Network) -> FloatNet {
        let (hidden, buckets, inputs) = (net.hidden(), net.buckets(), net.inputs());
        let l = Layout::new(hidden, buckets, inputs);
        let mut params = Vec::with_capacity(l.len);
        params.extend(net.ft_weights().iter().map(|&w| w as f32 / QA as f32));
        params.resize(l.b1, 0.0);
        params.extend(net.ft_bias().iter().map(|&b| b as f32 / QA as f32));
        params.extend(net.out_weights().iter().map(|&w| w as f32 / QB as f32));
        params.extend(net.out_bias().iter().map(|&b| b as f32 / (QA * QB) as f32));
        debug_assert_eq!(params.len(), l.len);
        FloatNet { hidden, buckets, inputs, params }
    }

    /// This plain network with its inputs arranged as `inputs`: its accumulator weights
    /// become the factoriser (and the shared pocket rows, when pockets are shared) and every
    /// bucket's own rows start at zero, so the network evaluates exactly as before, and
    /// quantises to a file whose every bucket holds the old weights.
    ///
    /// # Panics
    /// When this network has king buckets already.
    pub fn with_king_buckets(&self, inputs: InputLayout) -> FloatNet {
        assert!(!self.inputs.is_bucketed(), "with_king_buckets of a bucketed network");
        let (old, new) = (self.layout(), Layout::new(self.hidden, self.buckets, inputs));
        let h = self.hidden;
        let mut params = vec![0.0; new.len];
        for f in 0..INPUTS {
            // Bucketed features go to the factoriser, shared ones to their one row.
            let to = new.fact_row(f).unwrap_or_else(|| inputs.row(f, 0) * h);
            params[to..to + h].copy_from_slice(&self.params[f * h..(f + 1) * h]);
        }
        params[new.b1..].copy_from_slice(&self.params[old.b1..]);
        FloatNet { hidden: h, buckets: self.buckets, inputs, params }
    }

    /// This network with its king buckets split finer, as `inputs` arranges them: every new
    /// bucket's rows start as a copy of the rows of the old bucket its squares lie in, and
    /// the factoriser is kept, so the network evaluates exactly as before and training
    /// only has to learn how the finer buckets differ (4 buckets grow to 8, 8 to 16, 16 to
    /// 32: each table splits the one before it). Shared pocket rows may become bucketed
    /// (each bucket starts with the shared row), not the other way round.
    ///
    /// `None` when `inputs` does not refine this network's buckets: a new bucket with
    /// squares in two old ones, or bucketed pockets merged into shared ones.
    pub fn refine_king_buckets(&self, inputs: InputLayout) -> Option<FloatNet> {
        let from = self.inputs;
        if from.bucketed_pockets() && !inputs.bucketed_pockets() {
            return None;
        }
        // Each new bucket's parent: the old bucket of its squares, one for all of them.
        let mut parent = [None; features::MAX_KING_BUCKETS];
        for sq in 0..64 {
            let (old_b, new_b) = (from.king_bucket(sq), inputs.king_bucket(sq));
            match parent[new_b] {
                Some(p) if p != old_b => return None,
                _ => parent[new_b] = Some(old_b),
            }
        }
        let (old, new) = (self.layout(), Layout::new(self.hidden, self.buckets, inputs));
        let h = self.hidden;
        let mut params = vec![0.0; new.len];
        for (b, p) in parent[..inputs.king_buckets()].iter().enumerate() {
            let p = (*p)?;
            for f in 0..INPUTS {
                // Shared rows (pockets) map to the same row from every bucket: copied again.
                let (to, at) = (inputs.row(f, b) * h, from.row(f, p) * h);
                params[to..to + h].copy_from_slice(&self.params[at..at + h]);
            }
        }
        // The factoriser's rows, for the features that had one; pocket rows that become
        // bucketed get a factoriser row of zeros (the buckets hold the shared weights).
        let kept = old.b1 - old.fact;
        params[new.fact..new.fact + kept].copy_from_slice(&self.params[old.fact..old.b1]);
        params[new.b1..].copy_from_slice(&self.params[old.b1..]);
        Some(FloatNet { hidden: h, buckets: self.buckets, inputs, params })
    }

    /// The same network with `hidden` accumulator neurons: the first `self.hidden` are this
    /// network's, the new ones get small random input weights (as [`FloatNet::random`]) and
    /// zero biases and output weights, so the output is unchanged until training moves them
    /// (a wider network grown from a trained one, without losing what it learned).
    pub fn widen(&self, hidden: usize, seed: u64) -> FloatNet {
        assert!(hidden >= self.hidden, "widen to {hidden} from {}", self.hidden);
        let (old, new) = (self.layout(), Layout::new(hidden, self.buckets, self.inputs));
        let fresh = FloatNet::random(hidden, self.buckets, self.inputs, seed);
        let mut params = vec![0.0; new.len];
        // The accumulator weights and the factoriser: rows of h values in both.
        for f in 0..old.b1 / old.h {
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
        FloatNet { hidden, buckets: self.buckets, inputs: self.inputs, params }
    }

    /// The quantised network: weights rounded and clipped to the integer ranges, the
    /// factoriser added into every bucket's rows first.
    pub fn quantise(&self) -> Result<Network, NnueError> {
        let l = self.layout();
        let h = self.hidden;
        let q16 =
            |x: f32, s: i32, max: i32| (x * s as f32).round().clamp(-max as f32, max as f32) as i16;
        let mut ft_w = vec![0i16; l.fact];
        for kb in 0..l.inputs.king_buckets() {
            let off = l.inputs.offsets(kb);
            for f in 0..INPUTS {
                let at = off.row(f) * h;
                let shared = l.fact_row(f).map(|fr| &self.params[fr..fr + h]);
                for j in 0..h {
                    let x = self.params[at + j] + shared.map_or(0.0, |s| s[j]);
                    ft_w[at + j] = q16(x, QA, i16::MAX as i32);
                }
            }
        }
        let ft_b = self.params[l.b1..l.w2].iter().map(|&x| q16(x, QA, i16::MAX as i32)).collect();
        let out_w =
            self.params[l.w2..l.b2].iter().map(|&x| q16(x, QB, OUTPUT_WEIGHT_MAX)).collect();
        let out_b =
            self.params[l.b2..].iter().map(|&x| (x * (QA * QB) as f32).round() as i32).collect();
        Network::with_inputs(self.inputs, self.hidden, ft_w, ft_b, out_w, out_b)
    }

    /// How the inputs are arranged.
    pub fn inputs(&self) -> InputLayout {
        self.inputs
    }
}
