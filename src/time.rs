//! Search limits and time management.
//!
//! A clock gives a soft target (stop starting iterations once it is used) and a hard limit
//! (abort mid-iteration). Both keep `Move Overhead` plus a small safety margin in reserve, so
//! that the engine never flags even at 1+0.01. The soft target follows the search: after
//! each iteration [`TimeBudget::target_ms`] scales it by what the iterations say (see
//! [`Progress`] for why each factor exists), never past the hard limit. The constants are
//! rows of [`crate::params`], the one table of tunables (a leaf module below both time and
//! search).

use std::time::Duration;

use crate::core::Move;

// The time-management constants are rows of the one table of tunable constants.
use crate::params::{
    TIME_DROP_ITERATIONS, TIME_DROP_MAX_PERMILLE, TIME_DROP_MIN_PERMILLE,
    TIME_DROP_PERMILLE_PER_CP, TIME_EFFORT_BASE_PERMILLE, TIME_EFFORT_SLOPE_PERMILLE,
    TIME_HARD_PERMILLE, TIME_INC_PERMILLE, TIME_MAX_PERMILLE, TIME_MOVES_TO_GO, TIME_SAFETY_MS,
    TIME_STABLE_MIN_PERMILLE, TIME_STABLE_STEP_PERMILLE, TIME_UNSTABLE_PERMILLE,
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
    /// Stop starting new iterations after this, as scaled by [`TimeBudget::target_ms`].
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

    /// The soft target after an iteration that ended in `progress`: `None` without a clock.
    /// A search with no room between its targets (`go movetime`, or a clock nearly out) keeps
    /// its hard limit as the target, as it always did.
    pub fn target_ms(&self, progress: &Progress) -> Option<u64> {
        let soft = self.soft_ms?;
        let hard = self.hard_ms.unwrap_or(u64::MAX);
        Some(if soft >= hard { hard } else { scaled_soft_ms(soft, hard, progress) })
    }
}

/// What the completed iterations of a search say about its root, for the soft target.
///
/// Why each factor exists:
/// - **Best-move stability.** A best move that survived several deeper iterations rarely
///   changes in the next one, so the time of another iteration is mostly wasted; one that
///   just changed may change again, and playing it before the search settles risks the
///   move the deeper search would refute.
/// - **Effort on the best move.** When the best move's subtree took most of the last
///   iteration's root nodes, the alternatives were refuted cheaply (the best move is clearly
///   best); when the alternatives took most of them, some were hard to refute and the choice
///   is close.
/// - **Score drop.** A score that falls below the earlier iterations' means the deeper search
///   found a problem with the line; more time may find a way out, and in crazyhouse, where
///   attacks grow with every capture in hand, a falling score is often the first sign of a
///   mating attack. A rising score shortens the target a little.
#[derive(Copy, Clone, Debug)]
pub struct Progress<'a> {
    /// Completed iterations in a row, after the one where it became best, that ended with the
    /// same best move (0: the best move changed in the last iteration, or it is the first).
    pub stable_iterations: u32,
    /// Nodes the last completed iteration spent on its best move (the move's subtree).
    pub best_move_nodes: u64,
    /// Nodes the last completed iteration spent on all root moves.
    pub root_nodes: u64,
    /// Root scores of the completed iterations, oldest first: the last is the current score.
    pub scores: &'a [i32],
}

/// No factor cuts the soft target below this share of it, whatever the tuning ranges allow.
const MIN_FACTOR: f64 = 0.1;
/// Scores beyond this (centipawns) count as this much when measuring a drop: a mate score
/// is not worth thousands of times the time of a lost pawn.
const DROP_SCORE_CAP: i32 = 1000;

/// The soft target `soft` scaled by the three factors of [`Progress`], at most `hard`.
pub fn scaled_soft_ms(soft: u64, hard: u64, p: &Progress) -> u64 {
    let permille = |v: u64| v as f64 / 1000.0;
    // Stability: the factor falls with each iteration that kept the best move.
    let fall = TIME_STABLE_STEP_PERMILLE.get().saturating_mul(u64::from(p.stable_iterations));
    let stability = permille(
        TIME_UNSTABLE_PERMILLE.get().saturating_sub(fall).max(TIME_STABLE_MIN_PERMILLE.get()),
    );
    // Effort: the share of the root nodes the best move took (neutral without counts).
    let share = if p.root_nodes == 0 {
        0.5
    } else {
        (p.best_move_nodes as f64 / p.root_nodes as f64).clamp(0.0, 1.0)
    };
    let effort = permille(TIME_EFFORT_BASE_PERMILLE.get())
        - permille(TIME_EFFORT_SLOPE_PERMILLE.get()) * share;
    // Score drop: against the mean of the last few earlier iterations.
    let drop = match p.scores.split_last() {
        Some((&now, earlier)) if !earlier.is_empty() => {
            let recent = &earlier[earlier.len().saturating_sub(TIME_DROP_ITERATIONS)..];
            let cap = |s: i32| f64::from(s.clamp(-DROP_SCORE_CAP, DROP_SCORE_CAP));
            let mean = recent.iter().map(|&s| cap(s)).sum::<f64>() / recent.len() as f64;
            let f = 1.0 + permille(TIME_DROP_PERMILLE_PER_CP.get()) * (mean - cap(now));
            f.clamp(
                permille(TIME_DROP_MIN_PERMILLE.get()),
                permille(TIME_DROP_MAX_PERMILLE.get()).max(permille(TIME_DROP_MIN_PERMILLE.get())),
            )
        }
        _ => 1.0,
    };
    let factor = stability.max(MIN_FACTOR) * effort.max(MIN_FACTOR) * drop.max(MIN_FACTOR);
    let target = (soft as f64 * factor).min(hard as f64);
    (target as u64).clamp(1, hard.max(1))
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

    /// A budget with room between its targets, and progress with neutral defaults.
    fn budget(soft: u64, hard: u64) -> TimeBudget {
        TimeBudget { soft_ms: Some(soft), hard_ms: Some(hard) }
    }

    fn progress(stable: u32, best: u64, root: u64, scores: &[i32]) -> Progress<'_> {
        Progress { stable_iterations: stable, best_move_nodes: best, root_nodes: root, scores }
    }

    #[test]
    fn an_unstable_best_move_gets_more_time_than_a_stable_one() {
        let b = budget(1000, 4000);
        let scores = [20, 20, 20];
        let changed = b.target_ms(&progress(0, 500, 1000, &scores)).unwrap();
        let held = b.target_ms(&progress(8, 500, 1000, &scores)).unwrap();
        assert!(changed > held, "changed {changed} ms, held for 8 iterations {held} ms");
        // The factor falls step by step, not only at the extremes.
        let mut last = u64::MAX;
        for stable in 0..4 {
            let t = b.target_ms(&progress(stable, 500, 1000, &scores)).unwrap();
            assert!(t < last, "{stable} stable iterations: {t} ms");
            last = t;
        }
    }

    #[test]
    fn a_best_move_that_took_most_nodes_gets_less_time() {
        let b = budget(1000, 4000);
        let clear = b.target_ms(&progress(2, 950, 1000, &[0, 0])).unwrap();
        let close = b.target_ms(&progress(2, 250, 1000, &[0, 0])).unwrap();
        assert!(clear < close, "95% of the nodes: {clear} ms, 25%: {close} ms");
    }

    #[test]
    fn a_score_drop_extends_and_a_rise_does_not() {
        let b = budget(1000, 4000);
        let at = |scores: &[i32]| b.target_ms(&progress(2, 500, 1000, scores)).unwrap();
        let steady = at(&[30, 30, 30]);
        let dropped = at(&[30, 30, -10]);
        let risen = at(&[30, 30, 70]);
        assert!(dropped > steady, "drop {dropped} ms, steady {steady} ms");
        assert!(risen <= steady, "rise {risen} ms, steady {steady} ms");
        // Measured against the earlier iterations, not the first one only.
        assert!(at(&[-100, 30, 30, 30]) == steady);
        // Mate scores count as a capped drop, without overflow.
        assert!(at(&[MATE_LIKE, -MATE_LIKE]) >= dropped);
    }

    /// A mate score, beyond the cap on drops.
    const MATE_LIKE: i32 = 31_990;

    #[test]
    fn targets_never_pass_the_hard_limit() {
        for (soft, hard) in [(1000, 4000), (1000, 1100), (1, 2), (100, 101), (1 << 40, 1 << 41)] {
            let b = budget(soft, hard);
            for stable in [0, 1, 5, 50, u32::MAX] {
                for (best, root) in [(0, 0), (0, 1000), (1000, 1000), (u64::MAX, 1)] {
                    for scores in
                        [&[][..], &[0], &[900, -900], &[MATE_LIKE, -MATE_LIKE, -MATE_LIKE]]
                    {
                        let t = b.target_ms(&progress(stable, best, root, scores)).unwrap();
                        assert!((1..=hard).contains(&t), "{soft}/{hard}: {t}");
                    }
                }
            }
        }
        // The worst news at once reaches the hard limit when it is near.
        let worst = progress(0, 0, 1000, &[500, 500, -500]);
        assert_eq!(budget(1000, 1100).target_ms(&worst), Some(1100));
    }

    #[test]
    fn movetime_and_clockless_searches_are_not_scaled() {
        let p = progress(10, 1000, 1000, &[0, 0]);
        let limits = Limits { movetime: Some(500), ..Limits::default() };
        let b = TimeBudget::new(&limits, 10);
        assert_eq!(b.target_ms(&p), Some(490), "a movetime search uses its time");
        assert_eq!(TimeBudget::new(&Limits::default(), 10).target_ms(&p), None);
    }
}
