//! Scores: the internal scale (centipawns, with mates near ±`MATE`) and how protocols show it.
//!
//! Declared here, below every user, so that evaluation, search, tools and protocols share one
//! definition of what a mate score is.

/// Deepest ply a search line can reach; mate distances are bounded by it.
pub const MAX_PLY: usize = 128;

/// Score of a mate at the root; a mate in `n` plies scores `MATE - n`.
pub const MATE: i32 = 32000;
/// Scores beyond this are mate scores.
pub const MATE_BOUND: i32 = MATE - MAX_PLY as i32;
/// Larger than any score.
pub const INFINITE: i32 = MATE + 1;
/// Score of a draw (repetition, stalemate).
pub const DRAW: i32 = 0;

/// A score as protocols show it.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub enum Score {
    /// Centipawns from the side to move's view.
    Cp(i32),
    /// Mate in this many moves (negative: being mated).
    Mate(i32),
}

impl Score {
    /// Converts an internal score.
    pub fn from_internal(v: i32) -> Score {
        if v >= MATE_BOUND {
            Score::Mate((MATE - v + 1) / 2)
        } else if v <= -MATE_BOUND {
            Score::Mate(-(MATE + v) / 2)
        } else {
            Score::Cp(v)
        }
    }
}
