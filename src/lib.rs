//! Madhouse: a crazyhouse chess engine (also loop chess and chessgi).
//!
//! Layers, bottom up:
//! - [`core`]: rules, move generation, FEN and notation; [`score`]: the score scale;
//!   [`params`]: every tunable search and time constant, one table;
//! - [`perft`]: move-generator verification;
//! - [`eval`]: drop-aware evaluation; [`nnue`]: the neural network evaluation and its
//!   trainer; [`tt`]: the shared transposition table;
//! - [`search`]: lazy-SMP alpha-beta; [`time`]: limits and time management;
//! - [`engine`]: the boundary protocols talk to; [`protocol`]: UCI and XBoard;
//! - [`bench`]: the node-count signature; [`datagen`]: self-play training data;
//!   [`tune`]: fitting evaluation weights.

#![deny(unsafe_op_in_unsafe_fn)]
#![warn(missing_docs)]

/// The engine's name and version as protocols show it.
pub const ENGINE_NAME: &str = concat!("Madhouse ", env!("CARGO_PKG_VERSION"));
/// The authors.
pub const AUTHORS: &str = "the Madhouse developers";

pub mod bench;
pub mod core;
pub mod datagen;
pub mod engine;
pub mod eval;
pub mod nnue;
pub mod params;
pub mod perft;
pub mod progress;
pub mod protocol;
pub mod rng;
pub mod score;
pub mod search;
pub mod time;
pub mod tt;
pub mod tune;
