//! The tools that drive the engine: self-play data (`datagen`), network training (`train`),
//! evaluation tuning (`tune`), the data file's header (`datafile`), the one reader of
//! training data (`data`), the progress shown by long jobs (`progress`) and the check of
//! their outputs before they start (`output`).
//!
//! The engine's modules never import anything from here (`scripts/layers.py` checks it): a
//! tool may change or go without the engine noticing.

pub mod data;
pub mod datafile;
pub mod datagen;
pub mod output;
pub mod progress;
pub mod train;
pub mod tune;

use std::path::Path;

/// An error about the file `path`, naming it and what was being done to it ("opening",
/// "reading", "writing", "creating"...): the one form every tool's file errors take.
pub fn file_error(path: &Path, doing: &str, e: impl std::fmt::Display) -> std::io::Error {
    std::io::Error::other(format!("{doing} {}: {e}", path.display()))
}
