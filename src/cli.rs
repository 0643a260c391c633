//! The command line of the `madhouse` binary, parsed by clap (derive): no subcommand runs the
//! protocol loop; `bench`, `perft`, `datagen`, `train` and `tune` run a tool.
//!
//! Each default is the tool's own constant (`madhouse::tools::train::DEFAULT_LR`, ...), the
//! one the library's config uses too, so `--help` shows what a run without the flag does. A
//! flag is one field here plus its line in the mapping to the tool's config (`main.rs`).
//! This module belongs to the binary: the engine library does not depend on clap.

use std::path::PathBuf;

use clap::{value_parser, Args, Parser, Subcommand, ValueEnum};
use madhouse::core::Variant;
use madhouse::nnue::DEFAULT_HIDDEN;
use madhouse::tools::train::{
    DEFAULT_BATCH, DEFAULT_BUCKETS, DEFAULT_BUCKET_LR, DEFAULT_EPOCHS, DEFAULT_INPUT_LR, DEFAULT_K,
    DEFAULT_KING_BUCKETS, DEFAULT_LAMBDA, DEFAULT_LR, DEFAULT_LR_END_FRACTION, DEFAULT_MIN_PLY,
    DEFAULT_SEED, DEFAULT_VALIDATION,
};
use madhouse::tools::tune;

/// `madhouse [--version] [SUBCOMMAND]`.
#[derive(Parser, Debug)]
#[command(
    name = "madhouse",
    about = "Madhouse: a crazyhouse chess engine (also loop chess and chessgi).\n\
             Without a command it speaks UCI or XBoard on stdin/stdout (the first line decides).",
    after_help = "Logs go to stderr; set RUST_LOG=debug for more.",
    disable_version_flag = true
)]
pub struct Cli {
    /// Print the version, the commit it was built from and the SIMD kernel it uses
    #[arg(short = 'V', long)]
    pub version: bool,
    /// The tool to run; none: the UCI/XBoard protocol loop.
    #[command(subcommand)]
    pub command: Option<Command>,
}

/// The tools.
#[derive(Subcommand, Debug)]
pub enum Command {
    /// Search the bench positions; prints the node signature 'Nodes searched: N'
    Bench(BenchArgs),
    /// Count leaf nodes (per-move divide and 'Nodes searched: N')
    Perft(PerftArgs),
    /// Self-play games to training records, or convert or summarise record files
    Datagen(DatagenArgs),
    /// Train an NNUE network on `FEN | score | result` lines or datagen records
    Train(TrainArgs),
    /// Fit the hand-written evaluation's weights to game results (Texel)
    Tune(TuneArgs),
}

/// `madhouse bench [depth]`.
#[derive(Args, Debug)]
pub struct BenchArgs {
    /// Search depth (1 to 30)
    #[arg(default_value_t = madhouse::bench::DEFAULT_DEPTH,
          value_parser = value_parser!(i32).range(1..=30))]
    pub depth: i32,
}

/// `madhouse perft <depth> [fen...] [--variant V]`.
#[derive(Args, Debug)]
pub struct PerftArgs {
    /// Plies to count (0 to 20)
    #[arg(value_parser = value_parser!(u32).range(0..=20))]
    pub depth: u32,
    /// The position: a FEN, quoted or as separate words [default: the start position]
    pub fen: Vec<String>,
    /// Variant: crazyhouse, loop or chessgi
    #[arg(long, value_name = "V", default_value_t = Variant::Crazyhouse)]
    pub variant: Variant,
}

/// Help of every `--threads`: its default is not a number but the machine's core count.
const THREADS_HELP: &str = "Threads [default: all cores]";

/// `--threads N`: at least one (leaving the flag out means every core).
fn threads(s: &str) -> Result<usize, String> {
    match s.parse::<usize>() {
        Ok(0) => Err("must be at least 1 (leave --threads out to use every core)".into()),
        Ok(n) => Ok(n),
        Err(e) => Err(e.to_string()),
    }
}

/// Games of a datagen run.
pub const DATAGEN_GAMES: u64 = 1000;
/// Nodes a move in datagen's games.
pub const DATAGEN_NODES: u64 = 5000;
/// Random legal plies after the opening in datagen's games.
pub const DATAGEN_RANDOM_PLIES: usize = 2;
/// Seed of a datagen run.
pub const DATAGEN_SEED: u64 = 1;
/// Datagen's evaluation without `--eval`: the engine's default one.
pub const DATAGEN_EVAL: &str = if madhouse::engine::DEFAULT_USE_NNUE { "nnue" } else { "hce" };

/// The modes that play no games. A flag of the games has `conflicts_with_all = PLAY_ONLY`:
/// given with one of these it is refused by name, not silently ignored.
const PLAY_ONLY: [&str; 3] = ["info", "convert_text", "convert_legacy"];

/// `madhouse datagen`: four modes. Playing games (`--out` or `--shard-dir`, and the flags that
/// conflict with [`PLAY_ONLY`]), converting text (`--convert-text` with `--out`), converting
/// records from before the header (`--convert-legacy` with `--out`), or summarising a file
/// (`--info`, alone).
#[derive(Args, Debug)]
pub struct DatagenArgs {
    /// Data file to write: created, or a run of --seed in it resumed; the new file of a
    /// conversion
    #[arg(long, value_name = "FILE", required_unless_present_any = ["info", "shard_dir"])]
    pub out: Option<PathBuf>,
    /// Write into DIR/<variant>-seed<N>.bin, a shard of its own for --seed (DIR is created)
    #[arg(long, value_name = "DIR", conflicts_with_all = ["out", "info", "convert_text",
          "convert_legacy"])]
    pub shard_dir: Option<PathBuf>,
    /// Games in the run (a resumed run plays the missing ones)
    #[arg(long, value_name = "N", default_value_t = DATAGEN_GAMES,
          conflicts_with_all = PLAY_ONLY)]
    pub games: u64,
    /// Nodes searched a move
    #[arg(long, value_name = "N", default_value_t = DATAGEN_NODES,
          conflicts_with_all = PLAY_ONLY, conflicts_with = "depth",
          value_parser = value_parser!(u64).range(1..))]
    pub nodes: u64,
    /// Depth searched a move, instead of --nodes (1 to 64)
    #[arg(long, value_name = "N", conflicts_with_all = PLAY_ONLY,
          value_parser = value_parser!(i32).range(1..=64))]
    pub depth: Option<i32>,
    /// Games played at once
    #[arg(long, value_name = "N", conflicts_with_all = PLAY_ONLY, value_parser = threads,
          help = THREADS_HELP)]
    pub threads: Option<usize>,
    /// Openings, one FEN or EPD a line [default: the start position]
    #[arg(long, value_name = "EPD", conflicts_with_all = PLAY_ONLY)]
    pub openings: Option<PathBuf>,
    /// Random legal plies played after the opening
    #[arg(long, value_name = "N", default_value_t = DATAGEN_RANDOM_PLIES,
          conflicts_with_all = PLAY_ONLY)]
    pub random_plies: usize,
    /// Seed of the run: game i depends only on (seed, i)
    #[arg(long, value_name = "N", default_value_t = DATAGEN_SEED,
          conflicts_with_all = PLAY_ONLY)]
    pub seed: u64,
    /// Variant: crazyhouse, loop or chessgi
    #[arg(long, value_name = "V", default_value_t = Variant::Crazyhouse)]
    pub variant: Variant,
    /// Evaluation: nnue (built in), hce (hand-written) or a network file
    #[arg(long, value_name = "nnue|hce|NET", default_value = DATAGEN_EVAL,
          conflicts_with_all = PLAY_ONLY)]
    pub eval: String,
    /// Record every searched position: also those in check and those whose move captures or
    /// promotes, flagged so that train skips them unless told to keep them (default: quiet
    /// positions only)
    #[arg(long, conflicts_with_all = PLAY_ONLY)]
    pub all_positions: bool,
    /// Add --seed as a new run to a file that holds other seeds
    #[arg(long, conflicts_with_all = PLAY_ONLY)]
    pub add_seed: bool,
    /// Add a run whose settings differ from the runs already in the file
    #[arg(long, conflicts_with_all = PLAY_ONLY)]
    pub allow_mixed_settings: bool,
    /// Convert 'FEN | score | result' lines to a new data file --out
    #[arg(long, value_name = "IN.txt")]
    pub convert_text: Option<PathBuf>,
    /// Convert records without a header (datagen before headers) to a new data file --out
    #[arg(long, value_name = "OLD.bin", conflicts_with = "convert_text")]
    pub convert_legacy: Option<PathBuf>,
    /// Print the header, count, results and score distribution of a data file
    #[arg(long, value_name = "FILE", conflicts_with_all = ["out", "convert_text", "convert_legacy"])]
    pub info: Option<PathBuf>,
}

/// `madhouse train`.
#[derive(Args, Debug)]
pub struct TrainArgs {
    /// Data: data files, folders of them (shards) or 'FEN | score | result' text,
    /// comma-separated
    #[arg(long, value_name = "FILE[,FILE..]", required = true, value_delimiter = ',')]
    pub data: Vec<PathBuf>,
    /// Network file to write
    #[arg(long, value_name = "NET")]
    pub out: PathBuf,
    /// Start from this network's weights and size (a larger --hidden widens it)
    #[arg(long, value_name = "NET")]
    pub init: Option<PathBuf>,
    /// Hidden size H.
    #[arg(long, value_name = "H",
          help = format!("Hidden size [default: {DEFAULT_HIDDEN}, or the --init network's]"))]
    pub hidden: Option<usize>,
    /// Output buckets.
    #[arg(long, value_name = "N",
          help = format!("Output buckets [default: {DEFAULT_BUCKETS}, or the --init network's]"))]
    pub buckets: Option<usize>,
    /// King buckets of the board inputs: 1, 4, 8, 16 or 32 (an --init network with fewer:
    /// every bucket starts from the weights of the one it lies in)
    #[arg(long, value_name = "N",
          help = format!("King buckets of the board inputs: 1, 4, 8, 16 or 32 [default: \
                          {DEFAULT_KING_BUCKETS}, or the --init network's]"))]
    pub king_buckets: Option<usize>,
    /// Pocket inputs per king bucket (else shared by every bucket)
    #[arg(long)]
    pub bucketed_pockets: bool,
    /// Passes over the data
    #[arg(long, value_name = "N", default_value_t = DEFAULT_EPOCHS)]
    pub epochs: usize,
    /// Positions per optimiser step
    #[arg(long, value_name = "N", default_value_t = DEFAULT_BATCH)]
    pub batch: usize,
    /// Starting learning rate
    #[arg(long, value_name = "X", default_value_t = DEFAULT_LR)]
    pub lr: f32,
    /// Final learning rate (cosine schedule).
    #[arg(long, value_name = "X",
          help = format!("Final learning rate, cosine schedule \
                          [default: --lr x {DEFAULT_LR_END_FRACTION}]"))]
    pub lr_end: Option<f32>,
    /// Learning rate of the king buckets' own weights, a fraction of the run's (the shared factoriser keeps the full rate; below 1 holds rare buckets near it)
    #[arg(long, value_name = "X", default_value_t = DEFAULT_BUCKET_LR)]
    pub bucket_lr: f32,
    /// Learning rate of the input layer (input rows, factoriser, hidden biases), a fraction of the run's (below 1 for fine-tuning on few games; 0 trains the output layer only)
    #[arg(long, value_name = "X", default_value_t = DEFAULT_INPUT_LR)]
    pub input_lr: f32,
    /// Weight of the search score in the target (the rest is the game result)
    #[arg(long, value_name = "X", default_value_t = DEFAULT_LAMBDA)]
    pub lambda: f32,
    /// Sigmoid scale in centipawns
    #[arg(long, value_name = "X", default_value_t = DEFAULT_K)]
    pub k: f32,
    /// Fraction of the positions held out for validation
    #[arg(long, value_name = "X", default_value_t = DEFAULT_VALIDATION)]
    pub validation: f32,
    /// Use at most N positions [default: all]
    #[arg(long, value_name = "N")]
    pub limit: Option<usize>,
    /// Threads.
    #[arg(long, value_name = "N", value_parser = threads, help = THREADS_HELP)]
    pub threads: Option<usize>,
    /// Seed of initialisation, shuffling and the validation split
    #[arg(long, value_name = "N", default_value_t = DEFAULT_SEED)]
    pub seed: u64,
    /// Variant the FENs are read as: crazyhouse, loop or chessgi
    #[arg(long, value_name = "V", default_value_t = Variant::Crazyhouse)]
    pub variant: Variant,
    /// Checkpoint, rewritten every epoch [default: NET.ckpt]
    #[arg(long, value_name = "FILE")]
    pub checkpoint: Option<PathBuf>,
    /// Continue from the checkpoint
    #[arg(long)]
    pub resume: bool,
    /// Also train on each position without castling rights mirrored left to right
    #[arg(long)]
    pub mirror_files: bool,
    /// Also train on positions whose searched move captures or promotes (only files made
    /// with datagen --all-positions hold them)
    #[arg(long)]
    pub keep_captures: bool,
    /// Also train on positions in check (only files made with datagen --all-positions hold
    /// them)
    #[arg(long)]
    pub keep_checks: bool,
    /// Skip positions before game ply N (ply 0 is White's first move)
    #[arg(long, value_name = "N", default_value_t = DEFAULT_MIN_PLY)]
    pub min_ply: u32,
}

/// `--optimizer` of `tune`.
#[derive(ValueEnum, Clone, Copy, Debug, PartialEq, Eq)]
pub enum Optimizer {
    // Momentum gradient descent. (No `///` here: clap would show the long help format.)
    Gd,
    // Adam, with per-weight step sizes.
    Adam,
}

/// `--start` of `tune`.
#[derive(ValueEnum, Clone, Copy, Debug, PartialEq, Eq)]
pub enum Start {
    // The weights the engine uses now.
    Current,
    // The hand-made weights (a fresh fit).
    HandMade,
}

/// `madhouse tune`.
#[derive(Args, Debug)]
pub struct TuneArgs {
    /// Positions with results: datagen records or 'FEN | result' text
    #[arg(long, value_name = "FILE")]
    pub data: String,
    /// Rust source file for the weights.
    #[arg(long, value_name = "FILE",
          help = format!("Rust source file for the weights [default: {} if that file is \
                          here, in a checkout; else required]", tune::DEFAULT_OUT))]
    pub out: Option<String>,
    /// Passes over the data
    #[arg(long, value_name = "N", default_value_t = tune::DEFAULT_EPOCHS)]
    pub epochs: usize,
    /// Learning rate.
    #[arg(long, value_name = "X",
          help = format!("Learning rate [default: {} with gd, {} with adam]",
                         tune::DEFAULT_RATE_GD, tune::DEFAULT_RATE_ADAM))]
    pub rate: Option<f64>,
    /// Use at most N positions [default: all]
    #[arg(long, value_name = "N")]
    pub limit: Option<usize>,
    /// L2 pull of every weight toward its starting value
    #[arg(long, value_name = "X", default_value_t = tune::DEFAULT_L2)]
    pub l2: f64,
    /// Optimiser: momentum gradient descent or Adam (per-weight step sizes)
    #[arg(long, value_enum, default_value_t = Optimizer::Gd)]
    pub optimizer: Optimizer,
    /// Starting weights: the engine's current ones or the hand-made ones (a fresh fit)
    #[arg(long, value_enum, default_value_t = Start::Current)]
    pub start: Start,
    /// Fixed sigmoid scale [default: fitted to the starting weights]
    #[arg(long, value_name = "X")]
    pub k: Option<f64>,
    /// Threads.
    #[arg(long, value_name = "N", value_parser = threads, help = THREADS_HELP)]
    pub threads: Option<usize>,
}

#[cfg(test)]
mod tests {
    use super::*;
    use clap::CommandFactory;

    #[test]
    fn the_command_line_is_consistent() {
        // clap's own checks: no clashing names, groups and conflicts that name real flags.
        Cli::command().debug_assert();
    }
}
