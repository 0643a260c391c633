//! The optimiser (Adam) and the checkpoint that lets a run resume.

use std::io::{self, Write};
use std::path::Path;

use rayon::prelude::*;

use super::float::{FloatNet, Layout, Scratch};
use crate::nnue::network::fnv1a;
use crate::nnue::InputLayout;

/// Adam's decay of the first moment.
const BETA1: f32 = 0.9;
/// Adam's decay of the second moment.
const BETA2: f32 = 0.999;
/// Adam's denominator guard.
const EPSILON: f32 = 1e-8;
/// First bytes of a checkpoint file.
const CKPT_MAGIC: [u8; 4] = *b"MHCK";
/// Checkpoint format version (2: the number of output buckets after the hidden size; 3: the
/// king buckets and whether pockets are bucketed after that, and the factoriser among the
/// parameters).
const CKPT_VERSION: u32 = 3;
/// Bytes before a checkpoint's arrays: magic, version, hidden size, output buckets, king
/// buckets, bucketed pockets (0 or 1), epochs done, optimiser steps (u64).
const CKPT_HEADER: usize = 4 + 6 * 4 + 8;

/// Adam state and the step counter.
pub(super) struct Optimiser {
    pub(super) m: Vec<f32>,
    pub(super) v: Vec<f32>,
    pub(super) t: u64,
}

impl Optimiser {
    /// Fresh state for `len` parameters.
    pub(super) fn new(len: usize) -> Optimiser {
        Optimiser { m: vec![0.0; len], v: vec![0.0; len], t: 0 }
    }

    /// One Adam step on the gradient `first + sum(rest)` times `scale`, each parameter at
    /// rate `lr(index)`, in parallel over slices of the parameters; each parameter is then
    /// clipped to `clip(index)` (what quantisation can store).
    pub(super) fn step(
        &mut self,
        params: &mut [f32],
        first: &mut [f32],
        rest: &[Scratch],
        scale: f32,
        lr: impl Fn(usize) -> f32 + Sync,
        clip: impl Fn(usize) -> f32 + Sync,
    ) {
        self.t += 1;
        let (bc1, bc2) = (1.0 - BETA1.powi(self.t as i32), 1.0 - BETA2.powi(self.t as i32));
        const SLICE: usize = 4096;
        params
            .par_chunks_mut(SLICE)
            .zip(self.m.par_chunks_mut(SLICE))
            .zip(self.v.par_chunks_mut(SLICE))
            .zip(first.par_chunks_mut(SLICE))
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
                    p[j] -= lr(at) * (m[j] / bc1) / ((v[j] / bc2).sqrt() + EPSILON);
                    let clip = clip(at);
                    p[j] = p[j].clamp(-clip, clip);
                }
            });
    }
}

/// Writes parameters (the factoriser included), Adam state and progress (atomically: a
/// temporary file renamed).
pub(super) fn save_checkpoint(
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
    b.extend_from_slice(&(net.inputs.king_buckets() as u32).to_le_bytes());
    b.extend_from_slice(&u32::from(net.inputs.bucketed_pockets()).to_le_bytes());
    b.extend_from_slice(&(epochs_done as u32).to_le_bytes());
    b.extend_from_slice(&opt.t.to_le_bytes());
    for arr in [&net.params, &opt.m, &opt.v] {
        for x in arr.iter() {
            b.extend_from_slice(&x.to_le_bytes());
        }
    }
    let sum = fnv1a(&b);
    b.extend_from_slice(&sum.to_le_bytes());
    // fs_err: each error names the file and what failed (create, write, rename).
    let tmp = path.with_extension("ckpt.tmp");
    let mut f = fs_err::File::create(&tmp)?;
    f.write_all(&b)?;
    f.sync_all()?;
    fs_err::rename(&tmp, path)
}

/// Reads a checkpoint written by [`save_checkpoint`] for a network of `hidden` neurons,
/// `buckets` output buckets and inputs arranged as `inputs`.
pub(super) fn load_checkpoint(
    path: &Path,
    hidden: usize,
    buckets: usize,
    inputs: InputLayout,
) -> io::Result<(FloatNet, Optimiser, usize)> {
    let bad = |what: &str| io::Error::other(format!("{}: {what}", path.display()));
    let b = fs_err::read(path)?;
    let u32_at = |o: usize| u32::from_le_bytes([b[o], b[o + 1], b[o + 2], b[o + 3]]);
    if b.len() < CKPT_HEADER || b[..4] != CKPT_MAGIC || u32_at(4) != CKPT_VERSION {
        return Err(bad(&format!(
            "not a checkpoint of format {CKPT_VERSION} (or truncated; older checkpoints \
             cannot be resumed by this build)"
        )));
    }
    let stored_inputs = (u32_at(16) as usize, u32_at(20) != 0);
    if u32_at(8) as usize != hidden
        || u32_at(12) as usize != buckets
        || stored_inputs != (inputs.king_buckets(), inputs.bucketed_pockets())
    {
        return Err(bad(&format!(
            "checkpoint of H = {}, {} output buckets, {} king buckets{}; this run is H = \
             {hidden}, {buckets}, {}{}",
            u32_at(8),
            u32_at(12),
            stored_inputs.0,
            if stored_inputs.1 { " with bucketed pockets" } else { "" },
            inputs.king_buckets(),
            if inputs.bucketed_pockets() { " with bucketed pockets" } else { "" },
        )));
    }
    let n = Layout::new(hidden, buckets, inputs).len;
    let want = CKPT_HEADER + 12 * n + 8;
    if b.len() != want {
        return Err(bad("checkpoint truncated or of another size"));
    }
    let stored = u64::from_le_bytes(b[want - 8..].try_into().map_err(|_| bad("truncated"))?);
    if stored != fnv1a(&b[..want - 8]) {
        return Err(bad("checkpoint checksum mismatch"));
    }
    let epochs_done = u32_at(24) as usize;
    let t = u64::from_le_bytes(b[28..36].try_into().map_err(|_| bad("truncated"))?);
    let floats = |k: usize| -> Vec<f32> {
        b[CKPT_HEADER + 4 * k * n..CKPT_HEADER + 4 * (k + 1) * n]
            .chunks_exact(4)
            .map(|c| f32::from_le_bytes([c[0], c[1], c[2], c[3]]))
            .collect()
    };
    Ok((
        FloatNet { hidden, buckets, inputs, params: floats(0) },
        Optimiser { m: floats(1), v: floats(2), t },
        epochs_done,
    ))
}
