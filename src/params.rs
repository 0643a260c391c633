//! Every tunable search and time-management constant, named, in one place.
//!
//! Crazyhouse specifics (double material swings, drop checks) are marked. A change to any
//! value is a functional change: it moves the bench signature and needs a match result.
//!
//! The constants that games can tune are declared once each in the `tunables!` table below,
//! with their default, their range and their SPSA step. Each becomes a [`Param`] constant read
//! with `.get()`: in normal (and release) builds `get` is a `const fn` returning the default,
//! so the compiler folds it like a literal; in the tuning build (cargo feature `tune-search`,
//! see docs/development.md, Tuning the search) `get` reads an atomic that the UCI option of the same name
//! sets (`options.rs` lists every row of [`TUNABLES`] as a spin option). The remaining
//! `pub const` items are not tuned, each says why: structure (table sizes, depth sentinels,
//! reporting intervals), scales (the pawn's SEE value) and safety margins.
//!
//! The defaults of the search rows come from the first SPSA run (7,000 games at 20,000 nodes
//! a move, `scripts/spsa.py`; docs/development.md, Tuning the search, gives the command and the matches
//! that verified them). The `TIME_` rows and `MATE_SOLVER_TIME_PERMILLE` were not in that
//! run (a node budget has no clock) and keep their hand-set values.

#[cfg(feature = "tune-search")]
use std::sync::atomic::{AtomicI64, Ordering};

pub use crate::score::MAX_PLY;

/// A tunable constant: its row in [`TUNABLES`] and its default value.
#[derive(Copy, Clone, Debug)]
pub struct Param<T> {
    row: usize,
    default: T,
}

impl<T: Copy> Param<T> {
    /// Its row in [`TUNABLES`].
    pub const fn row(self) -> usize {
        self.row
    }

    /// The value of a normal build (the table's default column).
    pub const fn default_value(self) -> T {
        self.default
    }

    /// The value in force: the default, folded at compile time.
    #[cfg(not(feature = "tune-search"))]
    #[inline(always)]
    pub const fn get(self) -> T {
        self.default
    }
}

/// The integer types tunables have (the tuning build stores every value as an `i64`).
#[cfg(feature = "tune-search")]
pub trait Stored: Copy {
    /// The value from its stored form (always in the row's range, so it fits).
    fn from_stored(v: i64) -> Self;
}

#[cfg(feature = "tune-search")]
macro_rules! stored {
    ($($t:ty),*) => {$(
        impl Stored for $t {
            #[inline(always)]
            fn from_stored(v: i64) -> Self {
                v as $t
            }
        }
    )*};
}
#[cfg(feature = "tune-search")]
stored!(i32, u32, u64);

#[cfg(feature = "tune-search")]
impl<T: Stored> Param<T> {
    /// The value in force: what the UCI option of the same name last set.
    #[inline(always)]
    pub fn get(self) -> T {
        T::from_stored(VALUES[self.row].load(Ordering::Relaxed))
    }
}

/// One row of the tunables table, as UCI shows it and SPSA reads it.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub struct Tunable {
    /// The constant's name, which is also its UCI option name.
    pub name: &'static str,
    /// The value of normal builds.
    pub default: i64,
    /// Smallest value the option accepts.
    pub min: i64,
    /// Largest value the option accepts.
    pub max: i64,
    /// SPSA perturbation at the end of a tuning run (`c_end`): a change of this size should
    /// be worth a few Elo at most.
    pub step: i64,
}

/// Declares the tunables: for each, a [`Param`] constant and a row of [`TUNABLES`] (and in the
/// tuning build its atomic), all from one line `NAME: type = default, min..=max, step S;`.
macro_rules! tunables {
    ($(
        $(#[doc = $doc:literal])*
        $name:ident: $t:ty = $default:literal, $min:literal..=$max:literal, step $step:literal;
    )*) => {
        /// Row numbers of the tunables, in declaration order.
        #[allow(non_camel_case_types, clippy::upper_case_acronyms)]
        enum Row {
            $($name),*
        }

        $(
            $(#[doc = $doc])*
            #[doc = concat!("\n\nTunable: ", stringify!($min), "..=", stringify!($max),
                ", SPSA step ", stringify!($step), ".")]
            pub const $name: Param<$t> = Param { row: Row::$name as usize, default: $default };
        )*

        /// Every tunable constant, in declaration order (UCI option order of the tuning build).
        pub const TUNABLES: &[Tunable] = &[$(
            Tunable {
                name: stringify!($name),
                default: $default as i64,
                min: $min,
                max: $max,
                step: $step,
            }
        ),*];

        /// The values in force in the tuning build, one per row of [`TUNABLES`].
        #[cfg(feature = "tune-search")]
        static VALUES: [AtomicI64; TUNABLES.len()] = [$(AtomicI64::new($default as i64)),*];
    };
}

/// Sets the tunable in `row` of [`TUNABLES`] (the caller checked the range). Searches read it
/// live, so the protocol refuses changes while one runs.
#[cfg(feature = "tune-search")]
pub fn set_tunable(row: usize, value: i64) {
    if let Some(v) = VALUES.get(row) {
        v.store(value, Ordering::Relaxed);
    }
}

/// The value in force of the tunable in `row` of [`TUNABLES`].
#[cfg(feature = "tune-search")]
pub fn tunable_value(row: usize) -> Option<i64> {
    VALUES.get(row).map(|v| v.load(Ordering::Relaxed))
}

tunables! {
    // Static exchange evaluation.

    /// SEE value of a knight (a pawn is `SEE_PAWN`). Compressed as in crazyhouse practice (a
    /// rook is little more than a minor piece there).
    SEE_KNIGHT: i32 = 253, 150..=450, step 20;
    /// SEE value of a bishop.
    SEE_BISHOP: i32 = 282, 150..=450, step 20;
    /// SEE value of a rook.
    SEE_ROOK: i32 = 340, 200..=600, step 25;
    /// SEE value of a queen.
    SEE_QUEEN: i32 = 606, 400..=1000, step 40;

    // Aspiration windows.

    /// First aspiration half-window. Wider than chess: crazyhouse scores swing more (Fairy-
    /// Stockfish doubles its window for drop variants).
    ASPIRATION_DELTA: i32 = 32, 10..=80, step 5;
    /// Aspiration windows start from this depth.
    ASPIRATION_MIN_DEPTH: i32 = 2, 2..=8, step 1;

    // Pruning before the move loop.

    /// Reverse futility pruning: deepest depth.
    RFP_DEPTH: i32 = 7, 3..=12, step 1;
    /// Reverse futility margin per ply (crazyhouse: large, material comes back as drops).
    RFP_MARGIN: i32 = 70, 50..=200, step 10;
    /// Reverse futility margin reduction when the static eval is improving.
    RFP_IMPROVING: i32 = 67, 0..=150, step 10;
    /// Null-move pruning: shallowest depth.
    NMP_MIN_DEPTH: i32 = 3, 1..=6, step 1;
    /// Null-move base reduction.
    NMP_BASE: i32 = 5, 1..=6, step 1;
    /// Null-move reduction grows by one every this many plies.
    NMP_DEPTH_DIVISOR: i32 = 4, 2..=8, step 1;
    /// Null-move reduction grows by one for every this much eval above beta (at most 3).
    NMP_EVAL_DIVISOR: i32 = 183, 50..=400, step 20;
    /// Razoring: deepest depth.
    RAZOR_DEPTH: i32 = 1, 0..=5, step 1;
    /// Razoring margin per ply.
    RAZOR_MARGIN: i32 = 363, 150..=700, step 30;
    /// Internal iterative reduction: depth from which a node without a TT move is reduced.
    IIR_DEPTH: i32 = 2, 2..=8, step 1;
    /// ProbCut: shallowest depth.
    PROBCUT_DEPTH: i32 = 5, 3..=10, step 1;
    /// ProbCut: how far above beta a capture's shallow search must score.
    PROBCUT_MARGIN: i32 = 180, 80..=400, step 20;
    /// ProbCut: how much shallower than the node its verifying search is.
    PROBCUT_REDUCTION: i32 = 4, 3..=6, step 1;

    // Pruning in the move loop.

    /// Late-move pruning: quiet moves after `LMP_BASE + depth²` (halved when not improving).
    LMP_BASE: i32 = 5, 0..=12, step 1;
    /// Late-move pruning applies up to this depth.
    LMP_DEPTH: i32 = 8, 3..=14, step 1;
    /// Futility pruning of quiet moves: deepest (reduced) depth.
    FUTILITY_DEPTH: i32 = 9, 3..=12, step 1;
    /// Futility margin base.
    FUTILITY_BASE: i32 = 145, 0..=400, step 20;
    /// Futility margin per ply.
    FUTILITY_MARGIN: i32 = 107, 40..=250, step 10;
    /// SEE pruning of quiet moves (drops included): threshold per ply².
    SEE_QUIET_MARGIN: i32 = 40, 5..=80, step 5;
    /// SEE pruning of captures: threshold per ply. Halved relative to chess practice because
    /// a capture also gains the piece in hand (multi-variant Stockfish halves its SEE
    /// threshold).
    SEE_CAPTURE_MARGIN: i32 = 82, 20..=150, step 8;
    /// SEE pruning applies up to this depth.
    SEE_PRUNE_DEPTH: i32 = 8, 3..=14, step 1;
    /// History pruning of quiet moves: deepest reduced depth.
    HISTORY_PRUNE_DEPTH: i32 = 1, 1..=6, step 1;
    /// History pruning threshold per ply.
    HISTORY_PRUNE_MARGIN: i32 = 2215, 1000..=8000, step 300;

    // Reductions and extensions.

    /// Late-move reductions: `LMR_BASE + ln(depth) * ln(moves) / LMR_DIVISOR`; this is
    /// `LMR_BASE` in hundredths.
    LMR_BASE_X100: i32 = 45, 0..=150, step 8;
    /// Late-move reduction divisor, in hundredths.
    LMR_DIVISOR_X100: i32 = 240, 150..=400, step 15;
    /// History that moves a reduction by one ply.
    LMR_HISTORY_DIVISOR: i32 = 6820, 2000..=20000, step 800;
    /// Capture history that takes one more ply off a capture's reduction (the captures'
    /// counterpart of `LMR_HISTORY_DIVISOR`).
    LMR_CAPTURE_HISTORY_DIVISOR: i32 = 6820, 2000..=20000, step 800;
    /// Extra reduction for a quiet drop that gives no check (Sjeng's "razoring of
    /// uninteresting drops"): crazyhouse positions have dozens of such drops.
    LMR_QUIET_DROP: i32 = 1, 0..=3, step 1;
    /// Singular extensions: shallowest depth.
    SE_DEPTH: i32 = 6, 5..=12, step 1;
    /// Singular-extension beta margin per ply.
    SE_MARGIN: i32 = 3, 1..=6, step 1;
    /// Double extension margin for clearly singular moves at non-PV nodes.
    SE_DOUBLE_MARGIN: i32 = 13, 5..=60, step 4;

    // Histories.

    /// Largest absolute history value (gravity bound; entries are `i16`).
    HISTORY_MAX: i32 = 15426, 4096..=32000, step 1500;
    /// History bonus: `min(HISTORY_BONUS_MUL * depth - HISTORY_BONUS_SUB, HISTORY_BONUS_MAX)`.
    HISTORY_BONUS_MUL: i32 = 379, 100..=600, step 30;
    /// History bonus offset.
    HISTORY_BONUS_SUB: i32 = 175, 0..=600, step 40;
    /// Largest history bonus.
    HISTORY_BONUS_MAX: i32 = 2239, 800..=5000, step 250;

    // Quiescence search.

    /// Qsearch: checking drops are searched at this many first qsearch plies (multi-variant
    /// Stockfish: checking drops at qsearch depth 0).
    QS_CHECK_PLIES: i32 = 2, 0..=3, step 1;
    /// Qsearch: in check, quiet evasions after this many moves are skipped once one evasion
    /// has been found that avoids mate (bounds the tree when every check can be met by drops).
    QS_EVASIONS: i32 = 3, 1..=6, step 1;
    /// Qsearch: first qsearch ply where quiet evasions are pruned (the first plies keep them
    /// all, where drop mates are found).
    QS_EVASION_PRUNE_PLY: i32 = 3, 1..=8, step 1;

    // Mate solver.

    /// Mate solver (checks only, at the root): longest mate tried, in plies (15: mate in 8).
    MATE_SOLVER_MAX_PLIES: u32 = 15, 7..=21, step 2;
    /// Mate solver: checks that leave more replies than this are not tried (they rarely mate
    /// and cost the most).
    MATE_SOLVER_MAX_REPLIES: u32 = 4, 1..=10, step 1;
    /// Mate solver: when that cap disproves every distance within the budget, the distances
    /// are searched again with checks that leave up to this many replies (on the shared
    /// mate suite, fsf-sjeng-g03-p036's mate in 6 needs 5).
    MATE_SOLVER_WIDE_REPLIES: u32 = 6, 4..=12, step 1;
    /// Mate solver: once a mate is proven under that cap, shorter mates are looked for with
    /// this looser cap, in what is left of the solver's budget (the tight cap can hide the
    /// shortest mate behind a check with many replies).
    MATE_SOLVER_SHORTER_REPLIES: u32 = 10, 4..=40, step 2;
    /// Mate solver: it runs after this iteration of the main thread...
    MATE_SOLVER_AFTER_DEPTH: i32 = 2, 1..=8, step 1;
    /// Mate solver: ...when that iteration scores the root at least this high (89 of the 90
    /// positions of the shared mate suite do; balanced game positions do not).
    MATE_SOLVER_MIN_SCORE: i32 = 310, 100..=800, step 40;
    /// Mate solver: share of a timed search's soft target it may use, per mille.
    MATE_SOLVER_TIME_PERMILLE: u64 = 250, 50..=600, step 40;
    /// Mate solver: share of a `go nodes` budget it may use, per mille.
    MATE_SOLVER_NODES_PERMILLE: u64 = 269, 50..=600, step 40;

    // Time management (used in `time.rs`, which says why each factor exists).

    /// Time: moves to go assumed when the clock gives none.
    TIME_MOVES_TO_GO: u64 = 30, 10..=60, step 3;
    /// Time: fraction (per mille) of the increment added to the per-move budget.
    TIME_INC_PERMILLE: u64 = 800, 400..=1000, step 50;
    /// Time: the hard limit is this many thousandths of the soft target.
    TIME_HARD_PERMILLE: u64 = 4000, 2000..=8000, step 400;
    /// Time: never plan to use more than this per mille of the remaining clock in one move.
    TIME_MAX_PERMILLE: u64 = 350, 150..=600, step 30;
    /// Time: soft-target factor (per mille) when the best move changed in the last iteration.
    /// The defaults of the three factors (`Progress` in time.rs) make the mean time of a
    /// bench position's first move at 10+0.1 match the rule before them (720 against 760 ms
    /// with the hand-written evaluation, 638 against 657 ms with the network):
    /// a stable move that took all the root nodes gets 0.8 of the soft target, one that just
    /// became best with half of them 2.4 times it (a score drop adds up to 1.6 times more).
    TIME_UNSTABLE_PERMILLE: u64 = 1600, 1000..=2500, step 80;
    /// Time: the factor falls by this (per mille) for each further iteration with the same
    /// best move...
    TIME_STABLE_STEP_PERMILLE: u64 = 120, 20..=300, step 15;
    /// Time: ...down to this.
    TIME_STABLE_MIN_PERMILLE: u64 = 850, 400..=1200, step 40;
    /// Time: soft-target factor (per mille) if no root node of the last iteration went to
    /// the best move...
    TIME_EFFORT_BASE_PERMILLE: u64 = 2100, 1000..=3000, step 100;
    /// Time: ...less this times the share of the last iteration's root nodes it took (in
    /// crazyhouse the best move typically takes 90-100% of them: the others are refuted by
    /// null-window searches).
    TIME_EFFORT_SLOPE_PERMILLE: u64 = 1200, 0..=2500, step 100;
    /// Time: the soft target grows by this per mille for each centipawn the score fell
    /// below the mean of the earlier iterations' scores (and shrinks for a rise)...
    TIME_DROP_PERMILLE_PER_CP: u64 = 10, 0..=40, step 2;
    /// Time: ...within these bounds (per mille): at least this...
    TIME_DROP_MIN_PERMILLE: u64 = 900, 500..=1000, step 30;
    /// Time: ...and at most this.
    TIME_DROP_MAX_PERMILLE: u64 = 1600, 1000..=2500, step 80;
}

/// SEE value of a pawn, the unit the other values are measured in (not tuned: a scale).
pub const SEE_PAWN: i32 = 100;
/// SEE value of a king: more than any exchange can win.
pub const SEE_KING: i32 = 20000;

/// Material values for SEE and capture ordering, pawn..king (normal builds: the defaults).
/// Read through `see_values!()`, which refers to this constant in normal builds: a reference
/// to a constant table costs less in the search than an array built at each call.
pub const SEE_VALUES: [i32; 6] = [
    SEE_PAWN,
    SEE_KNIGHT.default_value(),
    SEE_BISHOP.default_value(),
    SEE_ROOK.default_value(),
    SEE_QUEEN.default_value(),
    SEE_KING,
];

/// Material values for SEE and capture ordering in force, pawn..king (tuning build).
#[cfg(feature = "tune-search")]
#[inline(always)]
pub fn see_values_in_force() -> [i32; 6] {
    [SEE_PAWN, SEE_KNIGHT.get(), SEE_BISHOP.get(), SEE_ROOK.get(), SEE_QUEEN.get(), SEE_KING]
}

/// `&[i32; 6]`: the SEE values in force, pawn..king ([`SEE_VALUES`] in normal builds).
#[cfg(not(feature = "tune-search"))]
macro_rules! see_values {
    () => {
        &$crate::params::SEE_VALUES
    };
}

/// `&[i32; 6]`: the SEE values in force, pawn..king (from the tunables in the tuning build).
#[cfg(feature = "tune-search")]
macro_rules! see_values {
    () => {
        &$crate::params::see_values_in_force()
    };
}
pub(crate) use see_values;

/// Largest iterative-deepening depth.
pub const MAX_DEPTH: i32 = MAX_PLY as i32 - 8;

/// Mate solver: its table has 2^this entries (16 bytes each; memory, not strength).
pub const MATE_SOLVER_TABLE_BITS: u32 = 16;
/// Mate solver: positions it may visit in a search without a clock or node limit (depth,
/// infinite, bench), so that such searches stay deterministic (games never use it).
pub const MATE_SOLVER_NODES: u64 = 20_000;

/// Time: fixed safety margin in milliseconds on top of Move Overhead. Scheduling stalls of
/// 30-40 ms were seen with two games on two cores, so the reserve covers them (a safety
/// margin, not tuned: games at one time control cannot tell what another machine needs).
pub const TIME_SAFETY_MS: u64 = 25;
/// Time: how many earlier iterations' scores a score drop is measured against.
pub const TIME_DROP_ITERATIONS: usize = 2;

/// Depth stored with an entry that holds only a static evaluation (below every search depth,
/// so any searched result replaces it).
pub const TT_DEPTH_EVAL_ONLY: i32 = -8;
/// Depth stored by quiescence search (below every main-search depth).
pub const TT_DEPTH_QSEARCH: i32 = -1;
/// The main thread checks the clock and node limits every this many nodes.
pub const LIMIT_CHECK_NODES: u64 = 1024;
/// Lazy SMP: when threads disagree on the move, each votes for its move with weight
/// `(score - lowest score of all threads + this) x depth completed` (internal units, about
/// a tenth of a pawn): a deeper iteration counts for more, and so does a better score, but
/// a thread with the lowest score still counts. Structure of the vote, not tuned: SPSA runs
/// on one thread, where it never applies.
pub const SMP_VOTE_SCORE_OFFSET: i32 = 10;
/// Aspiration fail-high/low lines are reported only after this many milliseconds (GUIs
/// ignore their scores; short searches stay quiet).
pub const BOUND_REPORT_MS: u64 = 3000;

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn rows_are_sound() {
        for (i, t) in TUNABLES.iter().enumerate() {
            assert!(t.min <= t.default && t.default <= t.max, "{}: default out of range", t.name);
            assert!(t.step >= 1 && 2 * t.step <= t.max - t.min, "{}: step {}", t.name, t.step);
            assert!(t
                .name
                .chars()
                .all(|c| c.is_ascii_uppercase() || c.is_ascii_digit() || c == '_'));
            for u in &TUNABLES[i + 1..] {
                assert_ne!(t.name, u.name);
            }
        }
    }

    #[test]
    fn params_point_at_their_rows() {
        let row = |p: Param<i32>| &TUNABLES[p.row()];
        assert_eq!(row(RFP_MARGIN).name, "RFP_MARGIN");
        assert_eq!(row(RFP_MARGIN).default, i64::from(RFP_MARGIN.default_value()));
        assert_eq!(TUNABLES[TIME_DROP_MAX_PERMILLE.row()].name, "TIME_DROP_MAX_PERMILLE");
        assert_eq!(TUNABLES.last().map(|t| t.name), Some("TIME_DROP_MAX_PERMILLE"));
    }

    /// Divisors and `clamp` bounds must stay valid over every range the options allow.
    #[test]
    fn ranges_keep_the_search_well_defined() {
        let min = |name: &str| TUNABLES.iter().find(|t| t.name == name).unwrap().min;
        for d in [
            "NMP_DEPTH_DIVISOR",
            "NMP_EVAL_DIVISOR",
            "LMR_DIVISOR_X100",
            "LMR_HISTORY_DIVISOR",
            "LMR_CAPTURE_HISTORY_DIVISOR",
        ] {
            assert!(min(d) > 0, "{d}");
        }
        assert!(min("HISTORY_BONUS_MAX") >= 0 && min("TIME_MOVES_TO_GO") >= 1);
        assert!(min("TIME_HARD_PERMILLE") >= 1000, "the hard limit is at least the soft target");
        let max = |name: &str| TUNABLES.iter().find(|t| t.name == name).unwrap().max;
        assert!(max("HISTORY_MAX") <= i64::from(i16::MAX));
        assert!(min("MATE_SOLVER_MAX_PLIES") >= 1);
    }
}
