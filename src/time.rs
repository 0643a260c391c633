//! Search limits and time management.
//!
//! A clock gives a soft target (stop iterating once it is used, stretched when the best move
//! is unstable) and a hard limit (abort mid-iteration). Both keep `Move Overhead` plus a small
//! safety margin in reserve, so that the engine never flags even at 1+0.01. The constants
//! are rows of [`crate::params`], the one table of tunables (a leaf module below both time
//! and search).

use std::time::Duration;

use crate::core::Move;

// The time-management constants are rows of the one table of tunable constants.
use crate::params::{
    TIME_HARD_PERMILLE, TIME_INC_PERMILLE, TIME_MAX_PERMILLE, TIME_MOVES_TO_GO, TIME_SAFETY_MS,
};

/// The side to move's clock, as the GUI reports it.
#[derive(Copy, Clone, Debug, Default, PartialEq, Eq)]
pub struct Clock {
    /// Time left, milliseconds.
    pub time_ms: u64,
    /// Increment per move, milliseconds.
    pub inc_ms: u64,
    /// Moves until the next time control, if the control is not sudden death.
    pub movestogo: Option<u32>,
}

/// What limits a search. All limits combine: the first one reached stops the search.
#[derive(Clone, Debug, Default)]
pub struct Limits {
    /// Clock of the side to move.
    pub clock: Option<Clock>,
    /// Fixed time for this move, milliseconds.
    pub movetime: Option<u64>,
    /// Depth limit in plies.
    pub depth: Option<i32>,
    /// Node limit.
    pub nodes: Option<u64>,
    /// Stop once a mate in at most this many moves is found.
    pub mate: Option<i32>,
    /// Search until told to stop.
    pub infinite: bool,
    /// Search on the opponent's time until `ponderhit` or `stop`.
    pub ponder: bool,
    /// Restrict the root to these moves (empty: all).
    pub searchmoves: Vec<Move>,
    /// The GUI analyses rather than plays (UCI_AnalyseMode): a strength limit does not apply.
    pub analysis: bool,
}

impl Limits {
    /// Does the search end only on command (`infinite`, or while pondering)?
    pub fn waits_for_stop(&self) -> bool {
        self.infinite || self.ponder
    }

    /// Is this analysis (`infinite`, or `analysis`), to which a strength limit does not apply?
    pub fn is_analysis(&self) -> bool {
        self.infinite || self.analysis
    }

    /// Is the search limited by time at all?
    pub fn is_timed(&self) -> bool {
        self.clock.is_some() || self.movetime.is_some()
    }
}

/// The largest clock or increment the budget takes into account, in milliseconds.
const CLOCK_CAP_MS: u64 = 1 << 40;

/// Time budget of one search, in milliseconds from the moment timing starts.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub struct TimeBudget {
    /// Stop starting new iterations after this (scaled by move stability).
    pub soft_ms: Option<u64>,
    /// Abort the search at this point.
    pub hard_ms: Option<u64>,
}

impl TimeBudget {
    /// The budget for `limits` with the given move overhead.
    pub fn new(limits: &Limits, overhead_ms: u64) -> TimeBudget {
        let reserve = overhead_ms.saturating_add(TIME_SAFETY_MS);
        if let Some(mt) = limits.movetime {
            let t = mt.min(CLOCK_CAP_MS).saturating_sub(overhead_ms).max(1);
            return TimeBudget { soft_ms: Some(t), hard_ms: Some(t) };
        }
        let Some(clock) = limits.clock else {
            return TimeBudget { soft_ms: None, hard_ms: None };
        };
        // Clocks beyond `CLOCK_CAP_MS` (about 35 years) are as good as infinite; capping
        // them keeps the arithmetic below far from overflow whatever a GUI sends.
        let left = clock.time_ms.min(CLOCK_CAP_MS).saturating_sub(reserve).max(1);
        let inc = clock.inc_ms.min(CLOCK_CAP_MS);
        let mtg = clock
            .movestogo
            .map_or(TIME_MOVES_TO_GO.get(), |m| (m as u64).clamp(1, TIME_MOVES_TO_GO.get()));
        // With the last move before a time control, most of the clock may go.
        let max_use = if mtg == 1 { left * 8 / 10 } else { left * TIME_MAX_PERMILLE.get() / 1000 };
        let base = left / mtg + inc * TIME_INC_PERMILLE.get() / 1000;
        let soft = base.min(max_use).max(1);
        let hard = (soft * TIME_HARD_PERMILLE.get() / 1000).min(max_use).max(soft);
        TimeBudget { soft_ms: Some(soft), hard_ms: Some(hard) }
    }

    /// The budget cut to `permille` / 1000 of itself (at least 1 ms), for a strength limit
    /// that spends only a share of the normal time.
    pub fn share(self, permille: u64) -> TimeBudget {
        let cut = |t: Option<u64>| t.map(|t| (t.saturating_mul(permille) / 1000).max(1));
        TimeBudget { soft_ms: cut(self.soft_ms), hard_ms: cut(self.hard_ms) }
    }

    /// The hard limit as a duration, if any.
    pub fn hard(&self) -> Option<Duration> {
        self.hard_ms.map(Duration::from_millis)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn budgets_leave_a_reserve() {
        for (time, inc) in [(1000, 10), (2000, 20), (60, 0), (10, 0), (0, 0), (300_000, 2000)] {
            let limits = Limits {
                clock: Some(Clock { time_ms: time, inc_ms: inc, movestogo: None }),
                ..Limits::default()
            };
            let b = TimeBudget::new(&limits, 10);
            let (soft, hard) = (b.soft_ms.unwrap(), b.hard_ms.unwrap());
            assert!(soft <= hard, "{time}+{inc}: {soft} > {hard}");
            let reserve = 10 + TIME_SAFETY_MS;
            assert!(hard <= time.saturating_sub(reserve).max(1), "{time}+{inc}: hard {hard}");
        }
    }

    #[test]
    fn huge_clocks_do_not_overflow() {
        for t in [u64::MAX, u64::MAX / 3, 1 << 50] {
            let limits = Limits {
                clock: Some(Clock { time_ms: t, inc_ms: t, movestogo: Some(1) }),
                ..Limits::default()
            };
            let b = TimeBudget::new(&limits, u64::MAX);
            assert!(b.soft_ms.unwrap() <= b.hard_ms.unwrap());
            let limits = Limits { movetime: Some(t), ..Limits::default() };
            assert!(TimeBudget::new(&limits, 0).hard_ms.unwrap() <= CLOCK_CAP_MS);
        }
    }

    #[test]
    fn movetime_and_unlimited() {
        let limits = Limits { movetime: Some(100), ..Limits::default() };
        assert_eq!(TimeBudget::new(&limits, 10).hard_ms, Some(90));
        assert_eq!(TimeBudget::new(&Limits::default(), 10).hard_ms, None);
    }
}
