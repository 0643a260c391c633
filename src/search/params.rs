//! Every tunable search constant, named, in one place.
//!
//! Crazyhouse specifics (double material swings, drop checks) are marked. A change to any
//! value is a functional change: it moves the bench signature and needs a match result.

pub use crate::score::MAX_PLY;
/// Largest iterative-deepening depth.
pub const MAX_DEPTH: i32 = MAX_PLY as i32 - 8;

/// Material values for SEE, pawn..king. Compressed as in crazyhouse practice (a rook is
/// little more than a minor piece there).
pub const SEE_VALUES: [i32; 6] = [100, 280, 290, 360, 620, 20000];

/// First aspiration half-window. Wider than chess: crazyhouse scores swing more (Fairy-
/// Stockfish doubles its window for drop variants).
pub const ASPIRATION_DELTA: i32 = 30;
/// Aspiration windows start from this depth.
pub const ASPIRATION_MIN_DEPTH: i32 = 4;

/// Reverse futility pruning: deepest depth and margin per ply.
pub const RFP_DEPTH: i32 = 7;
/// Reverse futility margin per ply (crazyhouse: large, material comes back as drops).
pub const RFP_MARGIN: i32 = 110;
/// Reverse futility margin reduction when the static eval is improving.
pub const RFP_IMPROVING: i32 = 60;

/// Null-move pruning: shallowest depth.
pub const NMP_MIN_DEPTH: i32 = 3;
/// Null-move base reduction.
pub const NMP_BASE: i32 = 3;
/// Null-move reduction grows by one every this many plies.
pub const NMP_DEPTH_DIVISOR: i32 = 4;
/// Null-move reduction grows by one for every this much eval above beta (at most 3).
pub const NMP_EVAL_DIVISOR: i32 = 200;

/// Razoring: deepest depth and margin per ply.
pub const RAZOR_DEPTH: i32 = 2;
/// Razoring margin per ply.
pub const RAZOR_MARGIN: i32 = 350;

/// Internal iterative reduction: depth from which a node without a TT move is reduced.
pub const IIR_DEPTH: i32 = 4;

/// Late-move pruning: quiet moves after `LMP_BASE + depth²` (halved when not improving).
pub const LMP_BASE: i32 = 4;
/// Late-move pruning applies up to this depth.
pub const LMP_DEPTH: i32 = 8;

/// Futility pruning of quiet moves: deepest (reduced) depth.
pub const FUTILITY_DEPTH: i32 = 7;
/// Futility margin base.
pub const FUTILITY_BASE: i32 = 150;
/// Futility margin per ply.
pub const FUTILITY_MARGIN: i32 = 110;

/// SEE pruning of quiet moves (drops included): threshold per ply².
pub const SEE_QUIET_MARGIN: i32 = 30;
/// SEE pruning of captures: threshold per ply. Halved relative to chess practice because a
/// capture also gains the piece in hand (multi-variant Stockfish halves its SEE threshold).
pub const SEE_CAPTURE_MARGIN: i32 = 60;
/// SEE pruning applies up to this depth.
pub const SEE_PRUNE_DEPTH: i32 = 8;

/// History pruning of quiet moves: deepest reduced depth.
pub const HISTORY_PRUNE_DEPTH: i32 = 3;
/// History pruning threshold per ply.
pub const HISTORY_PRUNE_MARGIN: i32 = 3000;

/// Late-move reductions: `LMR_BASE + ln(depth) * ln(moves) / LMR_DIVISOR`.
pub const LMR_BASE: f64 = 0.5;
/// Late-move reduction divisor.
pub const LMR_DIVISOR: f64 = 2.3;
/// History that moves a reduction by one ply.
pub const LMR_HISTORY_DIVISOR: i32 = 8000;
/// Extra reduction for a quiet drop that gives no check (Sjeng's "razoring of uninteresting
/// drops"): crazyhouse positions have dozens of such drops.
pub const LMR_QUIET_DROP: i32 = 1;

/// Singular extensions: shallowest depth.
pub const SE_DEPTH: i32 = 8;
/// Singular-extension beta margin per ply.
pub const SE_MARGIN: i32 = 2;
/// Double extension margin for clearly singular moves at non-PV nodes.
pub const SE_DOUBLE_MARGIN: i32 = 20;

/// Largest absolute history value (gravity bound).
pub const HISTORY_MAX: i32 = 16384;
/// History bonus: `min(HISTORY_BONUS_MUL * depth - HISTORY_BONUS_SUB, HISTORY_BONUS_MAX)`.
pub const HISTORY_BONUS_MUL: i32 = 300;
/// History bonus offset.
pub const HISTORY_BONUS_SUB: i32 = 250;
/// Largest history bonus.
pub const HISTORY_BONUS_MAX: i32 = 2500;

/// Qsearch: checking drops are searched at this many first qsearch plies (multi-variant
/// Stockfish: checking drops at qsearch depth 0).
pub const QS_CHECK_PLIES: i32 = 1;

/// Qsearch: in check, quiet evasions after this many moves are skipped once one evasion
/// has been found that avoids mate (bounds the tree when every check can be met by drops).
pub const QS_EVASIONS: i32 = 2;
/// Qsearch: first qsearch ply where quiet evasions are pruned (the first plies keep them
/// all, where drop mates are found).
pub const QS_EVASION_PRUNE_PLY: i32 = 3;

/// Mate solver (checks only, at the root): longest mate tried, in plies (mate in 8).
pub const MATE_SOLVER_MAX_PLIES: u32 = 15;
/// Mate solver: checks that leave more replies than this are not tried (they rarely mate
/// and cost the most).
pub const MATE_SOLVER_MAX_REPLIES: u32 = 4;
/// Mate solver: its table has 2^this entries (16 bytes each).
pub const MATE_SOLVER_TABLE_BITS: u32 = 16;
/// Mate solver: it runs after this iteration of the main thread...
pub const MATE_SOLVER_AFTER_DEPTH: i32 = 3;
/// Mate solver: ...when that iteration scores the root at least this high (89 of the 90
/// positions of the shared mate suite do; balanced game positions do not).
pub const MATE_SOLVER_MIN_SCORE: i32 = 300;
/// Mate solver: share of a timed search's soft target it may use, per mille.
pub const MATE_SOLVER_TIME_PERMILLE: u64 = 250;
/// Mate solver: share of a `go nodes` budget it may use, per mille.
pub const MATE_SOLVER_NODES_PERMILLE: u64 = 250;
/// Mate solver: positions it may visit in a search without a clock or node limit (depth,
/// infinite, bench), so that such searches stay deterministic.
pub const MATE_SOLVER_NODES: u64 = 20_000;

/// Depth stored with an entry that holds only a static evaluation (below every search depth,
/// so any searched result replaces it).
pub const TT_DEPTH_EVAL_ONLY: i32 = -8;
/// Depth stored by quiescence search (below every main-search depth).
pub const TT_DEPTH_QSEARCH: i32 = -1;
/// The main thread checks the clock and node limits every this many nodes.
pub const LIMIT_CHECK_NODES: u64 = 1024;
/// Aspiration fail-high/low lines are reported only after this many milliseconds (GUIs
/// ignore their scores; short searches stay quiet).
pub const BOUND_REPORT_MS: u64 = 3000;
