//! Madhouse: a crazyhouse chess engine (also loop chess and chessgi).
//!
//! Layers, bottom up:
//! - [`core`]: rules, move generation, FEN, notation and perft; [`score`]: the score scale;
//!   [`params`]: every tunable search and time constant, one table; [`rng`]: random numbers;
//! - [`eval`]: the hand-written evaluation; [`nnue`]: the network the engine runs and the
//!   training-data record format; [`tt`]: the shared transposition table; [`time`]: limits
//!   and time management;
//! - [`search`]: lazy-SMP alpha-beta;
//! - [`engine`]: the boundary protocols talk to; [`bench`]: the node-count signature;
//! - [`protocol`]: UCI and XBoard;
//! - [`tools`], beside the engine and never imported by it: self-play data, the trainer, the
//!   evaluation tuner, the data reader.

#![deny(unsafe_op_in_unsafe_fn)]
#![warn(missing_docs)]

/// The engine's name and version as protocols show it.
pub const ENGINE_NAME: &str = concat!("Madhouse ", env!("CARGO_PKG_VERSION"));
/// The authors.
pub const AUTHORS: &str = "the Madhouse developers";

pub mod bench;
pub mod core;
pub mod engine;
pub mod eval;
pub mod nnue;
pub mod params;
pub mod protocol;
pub mod rng;
pub mod score;
pub mod search;
pub mod time;
pub mod tools;
pub mod tt;
