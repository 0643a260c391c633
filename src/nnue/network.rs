//! The quantised network and its file format.
//!
//! File layout, all little-endian. Version 2:
//!
//! ```text
//!   b"MHNN"                magic
//!   u32 version            2
//!   u32 inputs             features::INPUTS: the base features per perspective and bucket
//!   u32 king buckets       N: one of features::KING_BUCKET_COUNTS (each names its table)
//!   u32 input flags        bit 0: pocket features per king bucket (else shared); others 0
//!   u32 hidden             H: a multiple of HIDDEN_ALIGN, at most MAX_HIDDEN
//!   u32 output buckets     B: 1 to MAX_OUTPUT_BUCKETS (features::output_bucket picks one)
//!   i16[R * H]             accumulator weights, row-major (row r is H values), scale QA; R
//!                          rows as InputLayout::rows: N * 768 + 160 with shared pockets,
//!                          N * 928 with bucketed ones
//!   i16[H]                 accumulator biases, scale QA
//!   i16[B * 2H]            output weights per bucket: side to move's half, then the other's;
//!                          scale QB, magnitude at most OUTPUT_WEIGHT_MAX
//!   i32[B]                 output biases, scale QA * QB
//!   u64                    FNV-1a 64 of every byte before it
//! ```
//!
//! Version 1 is the same without the king-bucket and flag fields: one bucket, R = INPUTS.
//! Both are read. A network with one king bucket is written as version 1, so that its bytes,
//! and its identity (recorded in training data), stay what they were before king buckets
//! existed and older builds still read it; a network with king buckets is written as
//! version 2.

use super::features::{output_bucket, InputLayout, INPUTS};
use super::simd::{self, Kernel};
use super::{
    Accumulator, NnueError, HIDDEN_ALIGN, MAGIC, MAX_HIDDEN, MAX_OUTPUT_BUCKETS, OUTPUT_WEIGHT_MAX,
    QA, QB, SCALE, VERSION, VERSION_1,
};
use crate::core::Color;

/// Bytes before the arrays of a version-1 file: magic and four u32 fields.
const HEADER_BYTES_V1: usize = 4 + 4 * 4;
/// Bytes before the arrays of a version-2 file: magic and six u32 fields.
const HEADER_BYTES_V2: usize = 4 + 6 * 4;
/// Version 2's input flag: pocket features per king bucket.
const FLAG_BUCKETED_POCKETS: u32 = 1;

/// A network ready for inference.
#[derive(Clone)]
pub struct Network {
    inputs: InputLayout,
    hidden: usize,
    buckets: usize,
    kernel: Kernel,
    ft_weights: Vec<i16>,
    ft_bias: Vec<i16>,
    out_weights: Vec<i16>,
    out_bias: Vec<i32>,
}

impl std::fmt::Debug for Network {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(
            f,
            "Network({}x{} ({:?}) -> 1 of {} buckets, {})",
            self.inputs.rows(),
            self.hidden,
            self.inputs,
            self.buckets,
            self.kernel.name()
        )
    }
}

/// FNV-1a, 64 bits: the file checksum.
pub fn fnv1a(bytes: &[u8]) -> u64 {
    let mut h: u64 = 0xcbf2_9ce4_8422_2325;
    for &b in bytes {
        h ^= b as u64;
        h = h.wrapping_mul(0x0000_0100_0000_01b3);
    }
    h
}

/// Reads fields in order, naming the part that runs out.
struct FieldCursor<'a> {
    bytes: &'a [u8],
    pos: usize,
}

impl<'a> FieldCursor<'a> {
    fn take(&mut self, n: usize, part: &'static str) -> Result<&'a [u8], NnueError> {
        let end = self.pos.checked_add(n).ok_or(NnueError::Truncated(part))?;
        let s = self.bytes.get(self.pos..end).ok_or(NnueError::Truncated(part))?;
        self.pos = end;
        Ok(s)
    }

    fn u32(&mut self, part: &'static str) -> Result<u32, NnueError> {
        let b = self.take(4, part)?;
        Ok(u32::from_le_bytes([b[0], b[1], b[2], b[3]]))
    }

    fn i16s(&mut self, n: usize, part: &'static str) -> Result<Vec<i16>, NnueError> {
        let b = self.take(2 * n, part)?;
        Ok(b.chunks_exact(2).map(|c| i16::from_le_bytes([c[0], c[1]])).collect())
    }

    fn i32s(&mut self, n: usize, part: &'static str) -> Result<Vec<i32>, NnueError> {
        let b = self.take(4 * n, part)?;
        Ok(b.chunks_exact(4).map(|c| i32::from_le_bytes([c[0], c[1], c[2], c[3]])).collect())
    }
}

fn check_hidden(hidden: u32) -> Result<usize, NnueError> {
    let h = hidden as usize;
    if h == 0 || h > MAX_HIDDEN || !h.is_multiple_of(HIDDEN_ALIGN) {
        return Err(NnueError::BadHidden(hidden));
    }
    Ok(h)
}

fn check_buckets(buckets: u32) -> Result<usize, NnueError> {
    match buckets as usize {
        b @ 1..=MAX_OUTPUT_BUCKETS => Ok(b),
        _ => Err(NnueError::BadBuckets(buckets)),
    }
}

fn check_out_weights(w: &[i16]) -> Result<(), NnueError> {
    match w.iter().find(|&&x| (x as i32).abs() > OUTPUT_WEIGHT_MAX) {
        Some(&x) => Err(NnueError::OutputWeightRange(x)),
        None => Ok(()),
    }
}

impl Network {
    /// Builds a plain network (one king bucket) from its quantised arrays (layout as in the
    /// file; the number of output biases is the number of buckets). Errors for a hidden size,
    /// bucket count or output weight the inference cannot take.
    ///
    /// # Panics
    /// When an array's length does not match `hidden` and the buckets (a programming error).
    pub fn new(
        hidden: usize,
        ft_weights: Vec<i16>,
        ft_bias: Vec<i16>,
        out_weights: Vec<i16>,
        out_bias: Vec<i32>,
    ) -> Result<Network, NnueError> {
        Network::with_inputs(InputLayout::PLAIN, hidden, ft_weights, ft_bias, out_weights, out_bias)
    }

    /// As [`Network::new`] for inputs arranged as `inputs`: `ft_weights` has
    /// `inputs.rows()` rows of `hidden` values.
    ///
    /// # Panics
    /// When an array's length does not match the layout, `hidden` and the buckets.
    pub fn with_inputs(
        inputs: InputLayout,
        hidden: usize,
        ft_weights: Vec<i16>,
        ft_bias: Vec<i16>,
        out_weights: Vec<i16>,
        out_bias: Vec<i32>,
    ) -> Result<Network, NnueError> {
        let h = check_hidden(u32::try_from(hidden).unwrap_or(u32::MAX))?;
        let buckets = check_buckets(u32::try_from(out_bias.len()).unwrap_or(u32::MAX))?;
        assert_eq!(ft_weights.len(), inputs.rows() * h);
        assert_eq!(ft_bias.len(), h);
        assert_eq!(out_weights.len(), buckets * 2 * h);
        check_out_weights(&out_weights)?;
        Ok(Network {
            inputs,
            hidden: h,
            buckets,
            kernel: Kernel::detect(),
            ft_weights,
            ft_bias,
            out_weights,
            out_bias,
        })
    }

    /// Parses and checks a network file (version 1 or 2). Never panics.
    pub fn from_bytes(bytes: &[u8]) -> Result<Network, NnueError> {
        let mut r = FieldCursor { bytes, pos: 0 };
        if r.take(4, "magic")? != MAGIC {
            return Err(NnueError::BadMagic);
        }
        let version = r.u32("header")?;
        if version != VERSION && version != VERSION_1 {
            return Err(NnueError::WrongVersion(version));
        }
        let inputs = r.u32("header")?;
        if inputs as usize != INPUTS {
            return Err(NnueError::FeatureMismatch { found: inputs, expected: INPUTS as u32 });
        }
        let layout = if version == VERSION_1 {
            InputLayout::PLAIN
        } else {
            let king_buckets = r.u32("header")?;
            let flags = r.u32("header")?;
            if flags & !FLAG_BUCKETED_POCKETS != 0 {
                return Err(NnueError::BadInputFlags(flags));
            }
            InputLayout::new(king_buckets as usize, flags & FLAG_BUCKETED_POCKETS != 0)
                .ok_or(NnueError::BadKingBuckets(king_buckets))?
        };
        let h = check_hidden(r.u32("header")?)?;
        let buckets = check_buckets(r.u32("header")?)?;
        let ft_weights = r.i16s(layout.rows() * h, "accumulator weights")?;
        let ft_bias = r.i16s(h, "accumulator biases")?;
        let out_weights = r.i16s(buckets * 2 * h, "output weights")?;
        let out_bias = r.i32s(buckets, "output biases")?;
        let body_end = r.pos;
        let stored = r.take(8, "checksum")?;
        let stored =
            u64::from_le_bytes(stored.try_into().map_err(|_| NnueError::Truncated("checksum"))?);
        if r.pos < bytes.len() {
            return Err(NnueError::TrailingBytes(bytes.len() - r.pos));
        }
        let computed = fnv1a(&bytes[..body_end]);
        if stored != computed {
            return Err(NnueError::Checksum { stored, computed });
        }
        // The arrays were read with exactly the lengths `with_inputs` requires.
        Network::with_inputs(layout, h, ft_weights, ft_bias, out_weights, out_bias)
    }

    /// The file image of this network (what [`Network::from_bytes`] reads): version 1 for a
    /// plain network, version 2 for one with king buckets (see the module notes).
    pub fn to_bytes(&self) -> Vec<u8> {
        let mut b = Vec::with_capacity(self.file_size());
        b.extend_from_slice(&MAGIC);
        let fields: &[u32] = if self.inputs == InputLayout::PLAIN {
            &[VERSION_1, INPUTS as u32, self.hidden as u32, self.buckets as u32]
        } else {
            let flags = if self.inputs.bucketed_pockets() { FLAG_BUCKETED_POCKETS } else { 0 };
            &[
                VERSION,
                INPUTS as u32,
                self.inputs.king_buckets() as u32,
                flags,
                self.hidden as u32,
                self.buckets as u32,
            ]
        };
        for x in fields {
            b.extend_from_slice(&x.to_le_bytes());
        }
        for arr in [&self.ft_weights, &self.ft_bias, &self.out_weights] {
            for x in arr.iter() {
                b.extend_from_slice(&x.to_le_bytes());
            }
        }
        for x in &self.out_bias {
            b.extend_from_slice(&x.to_le_bytes());
        }
        let sum = fnv1a(&b);
        b.extend_from_slice(&sum.to_le_bytes());
        b
    }

    /// The network's identity: FNV-1a of its file's bytes (never 0), recorded in the header
    /// of the data searched with it.
    pub fn identity(&self) -> u64 {
        fnv1a(&self.to_bytes()).max(1)
    }

    /// Size of the file image in bytes.
    pub fn file_size(&self) -> usize {
        let header =
            if self.inputs == InputLayout::PLAIN { HEADER_BYTES_V1 } else { HEADER_BYTES_V2 };
        header
            + 2 * (self.inputs.rows() + 1 + 2 * self.buckets) * self.hidden
            + 4 * self.buckets
            + 8
    }

    /// Writes the file image to `path`.
    pub fn save(&self, path: impl AsRef<std::path::Path>) -> std::io::Result<()> {
        std::fs::write(path, self.to_bytes())
    }

    /// The hidden size H.
    pub fn hidden(&self) -> usize {
        self.hidden
    }

    /// How the inputs are arranged (king buckets, pockets shared or not).
    #[inline]
    pub fn inputs(&self) -> InputLayout {
        self.inputs
    }

    /// The number of output buckets.
    pub fn buckets(&self) -> usize {
        self.buckets
    }

    /// The kernel this network evaluates with.
    pub fn kernel(&self) -> Kernel {
        self.kernel
    }

    /// The same network on another kernel; `None` when this CPU lacks it.
    pub fn with_kernel(&self, kernel: Kernel) -> Option<Network> {
        kernel.is_available().then(|| Network { kernel, ..self.clone() })
    }

    /// Accumulator weights, row-major (row `r` is `hidden` values; rows as
    /// [`InputLayout::row`]).
    pub(crate) fn ft_weights(&self) -> &[i16] {
        &self.ft_weights
    }

    /// Accumulator biases.
    pub(crate) fn ft_bias(&self) -> &[i16] {
        &self.ft_bias
    }

    /// Output weights, bucket-major (bucket `b` is `2 * hidden` values, side to move's half
    /// first).
    pub(crate) fn out_weights(&self) -> &[i16] {
        &self.out_weights
    }

    /// Output biases, one per bucket.
    pub(crate) fn out_bias(&self) -> &[i32] {
        &self.out_bias
    }

    /// The output bucket of the position whose accumulator is `acc`.
    #[inline]
    fn bucket(&self, acc: &Accumulator) -> usize {
        output_bucket(acc.board_pieces(), self.buckets)
    }

    /// The raw output sum before scaling: sum of SCReLU terms over both halves (scale
    /// QA * QA * QB).
    #[inline]
    fn output_sum(&self, acc: &Accumulator, stm: Color) -> (i32, i32) {
        let h = self.hidden;
        let b = self.bucket(acc);
        let w = &self.out_weights[b * 2 * h..(b + 1) * 2 * h];
        let sum = simd::output(self.kernel, acc.values(stm), acc.values(!stm), w, h);
        (sum, self.out_bias[b])
    }

    /// Centipawns from `stm`'s view for the position whose accumulator is `acc`:
    /// `((sum / QA) + bias) * SCALE / (QA * QB)`, divisions truncating toward zero. The
    /// result is far inside i32 but is not clamped: the search keeps it below its mate scores.
    #[inline]
    pub fn evaluate(&self, acc: &Accumulator, stm: Color) -> i32 {
        let (sum, bias) = self.output_sum(acc, stm);
        let v = (sum / QA) as i64 + bias as i64;
        (v * SCALE as i64 / (QA * QB) as i64) as i32
    }
}
