//! NNUE: an efficiently updatable neural network evaluation with crazyhouse pocket inputs.
//!
//! The network is one accumulator layer per perspective followed by a single output:
//!
//! ```text
//!   features (INPUTS, sparse, per perspective; with king buckets, the board features of
//!             the bucket of the perspective's own king square)
//!     -> accumulator: i16 x H per perspective (weights and bias scaled by QA)
//!     -> SCReLU: clamp(acc, 0, QA)^2, side to move's half first, then the other half
//!     -> output: i16 x 2H weights (scaled by QB) and an i32 bias (scaled by QA * QB)
//!     -> centipawns: ((sum / QA) + bias) * SCALE / (QA * QB)
//! ```
//!
//! Modules:
//! - [`features`]: the one definition of the input features (board and pocket) and the
//!   difference between two positions in feature terms;
//! - [`network`]: the quantised network and its file format;
//! - [`accumulator`]: refresh from scratch and incremental update from a parent position,
//!   with a per-king-bucket cache ([`BucketCache`]) for king moves that change bucket;
//! - [`simd`]: the integer kernels (AVX2, NEON, scalar), bit-identical on every path;
//! - [`data`]: the training-data record format, shared with the tools (the trainer lives
//!   with the tools, in `src/tools/train/`).
//!
//! Entry points for the engine: [`load_file`] (or [`Network::from_bytes`]) to get a network,
//! [`Accumulator::refresh`] / [`Accumulator::update_cached`] (with a [`BucketCache`] prepared
//! at the root) to follow the search, and [`evaluate`] for a score in centipawns from the
//! side to move's view.

pub mod accumulator;
pub mod data;
pub mod features;
pub mod network;
pub mod simd;

use std::fmt;
use std::path::Path;
use std::sync::Arc;

pub use accumulator::{Accumulator, BucketCache};
pub use features::{InputLayout, INPUTS};
pub use network::Network;
pub use simd::Kernel;

use crate::core::Color;

/// Quantisation of the accumulator layer: a float weight or bias `w` is stored as
/// `round(w * QA)`, and the activation's clipping point 1.0 becomes `QA`.
pub const QA: i32 = 255;
/// Quantisation of the output weights: `round(w * QB)`.
pub const QB: i32 = 64;
/// The network's raw output (1.0 in float terms) is this many centipawns.
pub const SCALE: i32 = 400;
/// Largest magnitude of a quantised output weight. SCReLU multiplies a clipped activation
/// (at most `QA` = 255) by the weight in 16 bits before the second multiply; 255 * 127 fits
/// in an i16, so the SIMD paths never truncate (the trainer clips weights to 127 / QB).
pub const OUTPUT_WEIGHT_MAX: i32 = 127;
/// Hidden sizes must be a multiple of this: the widest SIMD register holds 32 i16.
pub const HIDDEN_ALIGN: usize = 32;
/// Largest hidden size a file may declare; accumulators have this capacity so that the
/// search can keep them in fixed arrays without allocating.
pub const MAX_HIDDEN: usize = 1024;
/// Most output buckets a file may declare. A network has 1 to this many output layers and
/// uses the one chosen by the number of pieces on the board ([`features::output_bucket`]).
pub const MAX_OUTPUT_BUCKETS: usize = 8;
/// First four bytes of a network file.
pub const MAGIC: [u8; 4] = *b"MHNN";
/// File format version of networks with king buckets (see [`network`] for the layout).
pub const VERSION: u32 = 2;
/// The first file format, without king buckets: still read, and still written for networks
/// with one king bucket so that their files do not change.
pub const VERSION_1: u32 = 1;
/// Hidden size of a new network when the trainer is not told otherwise.
pub const DEFAULT_HIDDEN: usize = 256;

/// Why a network file could not be used.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum NnueError {
    /// The file could not be read (the text is the operating system's message).
    Io(String),
    /// The data ends before the part named.
    Truncated(&'static str),
    /// The first four bytes are not `MHNN`.
    BadMagic,
    /// A format version this build does not read.
    WrongVersion(u32),
    /// The file's input count differs from [`INPUTS`].
    FeatureMismatch {
        /// Inputs in the file.
        found: u32,
        /// Inputs this build computes.
        expected: u32,
    },
    /// A hidden size that is zero, too large, or not a multiple of [`HIDDEN_ALIGN`].
    BadHidden(u32),
    /// An output bucket count this build does not support.
    BadBuckets(u32),
    /// A king-bucket count without a table ([`features::KING_BUCKET_COUNTS`]).
    BadKingBuckets(u32),
    /// Input flags this build does not know.
    BadInputFlags(u32),
    /// An output weight outside `-OUTPUT_WEIGHT_MAX..=OUTPUT_WEIGHT_MAX`.
    OutputWeightRange(i16),
    /// Bytes after the checksum.
    TrailingBytes(usize),
    /// The stored checksum differs from the contents.
    Checksum {
        /// Checksum stored in the file.
        stored: u64,
        /// Checksum of the contents.
        computed: u64,
    },
}

impl fmt::Display for NnueError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            NnueError::Io(e) => write!(f, "cannot read network file: {e}"),
            NnueError::Truncated(part) => write!(f, "network file truncated (in the {part})"),
            NnueError::BadMagic => write!(f, "not a Madhouse network file (bad magic)"),
            NnueError::WrongVersion(v) => write!(
                f,
                "network file version {v} is not supported (this build reads versions \
                 {VERSION_1} and {VERSION})"
            ),
            NnueError::FeatureMismatch { found, expected } => write!(
                f,
                "network feature count mismatch: file has {found} inputs, this build uses \
                 {expected}"
            ),
            NnueError::BadHidden(h) => write!(
                f,
                "network hidden size {h} is not supported (1..={MAX_HIDDEN}, a multiple of \
                 {HIDDEN_ALIGN})"
            ),
            NnueError::BadBuckets(b) => {
                write!(
                    f,
                    "network has {b} output buckets; this build supports 1..={MAX_OUTPUT_BUCKETS}"
                )
            }
            NnueError::BadKingBuckets(n) => write!(
                f,
                "network has {n} king buckets; this build has tables for {:?}",
                features::KING_BUCKET_COUNTS
            ),
            NnueError::BadInputFlags(x) => {
                write!(f, "network input flags {x:#x} are not supported (only bit 0 is defined)")
            }
            NnueError::OutputWeightRange(w) => write!(
                f,
                "network output weight {w} is outside -{OUTPUT_WEIGHT_MAX}..={OUTPUT_WEIGHT_MAX}"
            ),
            NnueError::TrailingBytes(n) => {
                write!(f, "network file has {n} unexpected bytes after the checksum")
            }
            NnueError::Checksum { stored, computed } => write!(
                f,
                "network file checksum mismatch (stored {stored:016x}, contents {computed:016x}): \
                 the file is corrupt"
            ),
        }
    }
}

impl std::error::Error for NnueError {}

/// The network built into the binary (`src/nnue/default.nnue`; see docs/training.md for how it was
/// trained), so that the engine stays one file to copy.
pub static EMBEDDED: &[u8] = include_bytes!("default.nnue");

/// The built-in network, read once. A build whose embedded file does not load is a broken
/// build: the tests check it loads.
pub fn embedded() -> Arc<Network> {
    static NET: once_cell::sync::Lazy<Arc<Network>> = once_cell::sync::Lazy::new(|| {
        let net = Network::from_bytes(EMBEDDED).expect("the embedded network loads");
        log::debug!("network loaded: built in ({})", describe(&net));
        Arc::new(net)
    });
    NET.clone()
}

/// Reads and checks a network file. Never panics: every problem is an [`NnueError`].
pub fn load_file(path: impl AsRef<Path>) -> Result<Network, NnueError> {
    use std::io::Read;
    let path = path.as_ref();
    let io = |e: std::io::Error| NnueError::Io(format!("{}: {e}", path.display()));
    // Read at most one byte more than the largest network, so that a wrong path such as a
    // device or a huge file is refused quickly instead of filling memory.
    let mut bytes = Vec::new();
    std::fs::File::open(path)
        .map_err(io)?
        .take(MAX_FILE_BYTES + 1)
        .read_to_end(&mut bytes)
        .map_err(io)?;
    if bytes.len() as u64 > MAX_FILE_BYTES {
        return Err(NnueError::Io(format!(
            "{}: larger than any network ({MAX_FILE_BYTES} bytes)",
            path.display()
        )));
    }
    let net = Network::from_bytes(&bytes)?;
    log::debug!("network loaded: {} ({})", path.display(), describe(&net));
    Ok(net)
}

/// A network's size and shape for the debug log.
fn describe(net: &Network) -> String {
    format!(
        "{} bytes, H = {}, {} output buckets, simd {}",
        net.file_size(),
        net.hidden(),
        net.buckets(),
        net.kernel().name()
    )
}

/// Size of the largest network file: the version-2 header, the accumulator weights of the
/// largest layout (32 king buckets with bucketed pockets: 32 * 928 rows) at `MAX_HIDDEN`,
/// biases, output weights and biases, checksum: 60,852,292 bytes, the most `load_file`
/// reads. Every layout the format names is loadable at every hidden size rather than a
/// smaller cap refusing some combinations: 61 MB loads in well under a second, and such a
/// network is about the size of the largest crazyhouse networks in use (Fairy-Stockfish's is
/// 58 MB). Training one is the practical limit (30 M float weights held four times over).
pub const MAX_FILE_BYTES: u64 = (4
    + 6 * 4
    + 2 * (features::MAX_KING_BUCKETS * INPUTS * MAX_HIDDEN
        + MAX_HIDDEN
        + MAX_OUTPUT_BUCKETS * 2 * MAX_HIDDEN)
    + 4 * MAX_OUTPUT_BUCKETS
    + 8) as u64;

/// The network's evaluation of the position whose accumulator is `acc`, in centipawns from
/// `side_to_move`'s view. Uses the fastest kernel the CPU offers (chosen once when the
/// network was built; [`Network::with_kernel`] forces another). Does not allocate.
#[inline]
pub fn evaluate(net: &Network, acc: &Accumulator, side_to_move: Color) -> i32 {
    net.evaluate(acc, side_to_move)
}

/// The network's evaluation of `pos` computed from scratch (no accumulator at hand), in
/// centipawns from the side to move's view. For one-off evaluations (`eval`, a search
/// stopped before its first move); searches update accumulators incrementally instead.
pub fn evaluate_position(net: &Network, pos: &crate::core::Position) -> i32 {
    let mut acc = Box::new(Accumulator::new());
    acc.refresh(net, pos);
    net.evaluate(&acc, pos.turn())
}
