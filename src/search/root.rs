//! The root of the search: the root moves, iterative deepening with aspiration windows,
//! the checks-only mate solver's result, and the lines reported to the GUI.

use std::sync::atomic::Ordering;

use super::node::Root;
use super::{Shared, Worker};
use crate::core::{Move, Position};
use crate::params::*;
use crate::score::{INFINITE, MATE, MATE_BOUND};
use crate::time::Progress;
use crate::tt::Bound;

/// A root move with its latest score and line.
#[derive(Clone, Debug)]
pub struct RootMove {
    /// The move.
    pub mv: Move,
    /// Score from the current iteration (`-INFINITE` until searched with a full window).
    pub score: i32,
    /// Score from the previous iteration.
    pub prev_score: i32,
    /// Bound of `score`.
    pub bound: Bound,
    /// Principal variation starting with `mv`.
    pub pv: Vec<Move>,
    /// Selective depth of its line.
    pub seldepth: usize,
    /// Nodes spent on it in the current iteration (for time management).
    pub nodes: u64,
}

impl RootMove {
    /// The move's latest score and the depth of the iteration it comes from: `depth`'s when
    /// that iteration searched the move in full, else the previous iteration's (`prev_depth`).
    /// The score is `-INFINITE` when neither searched it. One rule for every line shown, so
    /// a depth never names a score from another iteration.
    pub fn latest(&self, depth: i32, prev_depth: i32) -> (i32, i32) {
        if self.score == -INFINITE {
            (self.prev_score, prev_depth)
        } else {
            (self.score, depth)
        }
    }

    /// The score of [`RootMove::latest`] alone, where the depth it comes from does not matter.
    pub fn latest_score(&self) -> i32 {
        self.latest(0, 0).0
    }
}

impl Worker {
    /// Runs iterative deepening on `root` until a limit or the stop flag ends it.
    pub fn iterative_deepening(&mut self, root: &Position, shared: &Shared) {
        if self.root_moves.is_empty() {
            return;
        }
        if let Some(net) = &shared.net {
            // Entries computed with another network must not be reused: empty them.
            self.bucket_cache.prepare(net);
            self.accs[0].refresh(net, root);
        }
        let max_depth = self.depth_limit(shared);
        let multipv = shared.multipv.min(self.root_moves.len());
        let mut last_best = None;
        self.proven = None;
        self.candidates.clear();
        let mut depth = 1;
        while depth <= max_depth {
            // Helpers skip some depths so that threads spread over different iterations.
            if self.id > 0 && depth > 1 {
                let (size, phase) = SKIP[(self.id - 1) % SKIP.len()];
                if ((depth + phase) / size) % 2 != 0 {
                    depth += 1;
                    continue;
                }
            }
            self.root_depth = depth;
            // Scores of this iteration start unknown: a move not searched before an abort
            // sorts by its previous score, behind every move searched in this iteration.
            // Every move takes the last iteration's score, unknown ones included: a move that
            // failed low there must not keep a score from an older, shallower iteration, or
            // an abort before any move completes could put it above the last best move.
            for rm in &mut self.root_moves {
                rm.prev_score = rm.score;
                rm.score = -INFINITE;
                rm.nodes = 0;
            }
            for pv_idx in 0..multipv {
                self.pv_idx = pv_idx;
                self.seldepth = 0;
                let prev = self.root_moves[pv_idx].prev_score;
                let mut delta = ASPIRATION_DELTA.get();
                let (mut alpha, mut beta) =
                    if depth >= ASPIRATION_MIN_DEPTH.get() && prev.abs() < MATE_BOUND {
                        ((prev - delta).max(-INFINITE), (prev + delta).min(INFINITE))
                    } else {
                        (-INFINITE, INFINITE)
                    };
                loop {
                    let score = self.search::<Root>(root, alpha, beta, depth, 0, false, shared);
                    self.root_moves[pv_idx..]
                        .sort_by_key(|rm| std::cmp::Reverse((rm.score, rm.prev_score)));
                    if shared.stopped() {
                        break;
                    }
                    if score <= alpha {
                        beta = (alpha + beta) / 2;
                        alpha = (score - delta).max(-INFINITE);
                        self.report_bound(shared, pv_idx, Bound::Upper);
                    } else if score >= beta {
                        beta = (score + delta).min(INFINITE);
                        self.report_bound(shared, pv_idx, Bound::Lower);
                    } else {
                        break;
                    }
                    delta += delta / 2;
                }
                self.root_moves[..=pv_idx]
                    .sort_by_key(|rm| std::cmp::Reverse((rm.score, rm.prev_score)));
                if shared.stopped() {
                    break;
                }
            }
            if shared.stopped() {
                break;
            }
            self.completed_depth = depth;
            // The mate solver runs once, on the main thread, when a short search says the
            // side to move is attacking: balanced positions, most of a game, do not pay for it.
            if self.id == 0
                && depth == MATE_SOLVER_AFTER_DEPTH.get()
                && self.root_moves[0].score >= MATE_SOLVER_MIN_SCORE.get()
            {
                self.solve_mate(root, shared);
            }
            self.apply_proven();
            if self.id == 0 {
                self.report(shared, depth);
                if shared.skill.is_some() {
                    self.candidates.clear();
                    self.candidates.extend_from_slice(&self.root_moves[..multipv]);
                }
            }
            let best = self.root_moves[0].mv;
            if last_best == Some(best) {
                self.stable_iterations += 1;
            } else {
                self.stable_iterations = 0;
            }
            last_best = Some(best);
            self.iteration_scores.push(self.root_moves[0].score);
            if self.id == 0 && self.iteration_says_stop(shared, depth) {
                if !shared.pondering.load(Ordering::Relaxed) && !shared.limits.infinite {
                    shared.stop();
                }
                break;
            }
            depth += 1;
        }
        self.apply_proven();
        self.publish_nodes(shared);
    }

    /// Runs the checks-only mate solver on the root moves, within a share of the search's
    /// budget: of the soft time target when timed, of the node limit under `go nodes`, and a
    /// fixed node count otherwise (depth-limited searches and bench stay deterministic).
    fn solve_mate(&mut self, root: &Position, shared: &Shared) {
        let limits = &shared.limits;
        let pondering = shared.pondering.load(Ordering::Relaxed);
        let (limit, deadline) = if let Some(n) = limits.nodes {
            (n.saturating_mul(MATE_SOLVER_NODES_PERMILLE.get()) / 1000, None)
        } else if limits.is_timed() && !pondering {
            let soft = shared.budget.soft_ms.unwrap_or(0);
            let share = soft.saturating_mul(MATE_SOLVER_TIME_PERMILLE.get()) / 1000;
            // Never past the hard limit, even when the first iterations were slow.
            let hard = shared.budget.hard_ms.unwrap_or(u64::MAX);
            (u64::MAX, Some(shared.timed_ms().saturating_add(share).min(hard)))
        } else {
            (MATE_SOLVER_NODES, None)
        };
        let moves: Vec<Move> = self.root_moves.iter().map(|rm| rm.mv).collect();
        let mut stop =
            |_: u64| shared.stopped() || deadline.is_some_and(|d| shared.timed_ms() >= d);
        let proven = self.mate_solver.solve(root, &moves, limit, &mut stop);
        self.nodes += self.mate_solver.nodes();
        self.publish_nodes(shared);
        if proven.is_some() {
            self.proven = proven;
            self.apply_proven();
        }
    }

    /// Puts the solver's mate first among the root moves unless the search already has a
    /// mate at least as short. The search's mate is the first move's latest score: after an
    /// aborted iteration that is often the previous iteration's (the first move was not
    /// searched again in full), and a shorter mate found there must not give way to the
    /// solver's longer one.
    fn apply_proven(&mut self) {
        let Some(p) = &self.proven else { return };
        if self.root_moves.first().is_some_and(|rm| rm.latest_score() >= p.score) {
            return;
        }
        let Some(i) = self.root_moves.iter().position(|rm| Some(&rm.mv) == p.pv.first()) else {
            return;
        };
        let rm = &mut self.root_moves[i];
        rm.score = p.score;
        rm.prev_score = p.score;
        rm.bound = Bound::Exact;
        rm.pv.clone_from(&p.pv);
        rm.seldepth = p.pv.len();
        self.root_moves[..=i].rotate_right(1);
    }

    /// The deepest iteration this worker starts. Under `go depth` only the main thread stops
    /// at the limit: a helper skips depths, so stopping there too would leave it idle (or
    /// done before the main thread's last iteration) on half the machine; it searches on,
    /// filling the shared table, until the main thread stops it. A strength limit caps every
    /// thread, as its depth is part of the weakening.
    fn depth_limit(&self, shared: &Shared) -> i32 {
        match shared.limits.depth {
            Some(d) if self.id == 0 || shared.skill.is_some() => d.clamp(1, MAX_DEPTH),
            _ => MAX_DEPTH,
        }
    }

    /// After a completed iteration: should the main thread stop?
    fn iteration_says_stop(&self, shared: &Shared, depth: i32) -> bool {
        let limits = &shared.limits;
        if limits.depth.is_some_and(|d| depth >= d) || depth >= MAX_DEPTH {
            return true;
        }
        let best = self.root_moves[0].score;
        if let Some(m) = limits.mate {
            if best >= MATE - (2 * m - 1) {
                return true;
            }
        }
        if limits.waits_for_stop() && shared.pondering.load(Ordering::Relaxed) {
            return false;
        }
        if !limits.is_timed() {
            return false;
        }
        // A proven mate needs no more time once the search is clearly deeper than it.
        if best.abs() >= MATE_BOUND && depth > 2 * (MATE - best.abs()) + 6 {
            return true;
        }
        if self.root_moves.len() == 1 && depth >= 4 {
            return true;
        }
        // The soft target, scaled by what the iterations say (time::Progress).
        let progress = Progress {
            stable_iterations: self.stable_iterations,
            best_move_nodes: self.root_moves[0].nodes,
            root_nodes: self.root_moves.iter().map(|rm| rm.nodes).sum(),
            scores: &self.iteration_scores,
        };
        shared.budget.target_ms(&progress).is_some_and(|target| shared.timed_ms() >= target)
    }

    /// Under a strength limit, the lines of the last completed iteration, best first
    /// (empty when none completed or without a limit).
    pub fn candidates(&self) -> &[RootMove] {
        &self.candidates
    }

    /// Score and line of the last reported principal variation.
    pub fn last_reported(&self) -> Option<&(i32, Vec<Move>)> {
        self.last_reported.as_ref()
    }

    fn report(&mut self, shared: &Shared, depth: i32) {
        if let Some(rm) = self.root_moves.first() {
            self.last_reported = Some((rm.score, rm.pv.clone()));
        }
        let multipv = shared.shown_multipv.min(self.root_moves.len());
        let nodes = shared.total_nodes().max(self.nodes);
        for (i, rm) in self.root_moves.iter().take(multipv).enumerate() {
            // The main thread never skips a depth: its previous iteration is `depth - 1`.
            let (score, d) = rm.latest(depth, depth - 1);
            if d < 1 || score == -INFINITE {
                continue;
            }
            shared.report_line(rm, d, score, Bound::Exact, i + 1, nodes);
        }
    }

    /// A fail-low or fail-high line of the `pv_idx`th move (main thread, long searches only).
    fn report_bound(&self, shared: &Shared, pv_idx: usize, bound: Bound) {
        // Bound lines only for long searches, as GUIs ignore their scores anyway.
        if self.id != 0 || shared.elapsed_ms() < BOUND_REPORT_MS || pv_idx >= shared.shown_multipv {
            return;
        }
        let rm = &self.root_moves[pv_idx];
        let nodes = shared.total_nodes().max(self.nodes);
        shared.report_line(rm, self.root_depth, rm.score, bound, pv_idx + 1, nodes);
    }
}

/// Depth-skipping pattern of helper threads: `(size, phase)`, as in lazy SMP's classic form.
const SKIP: [(i32, i32); 8] = [(1, 0), (1, 1), (2, 0), (2, 1), (2, 2), (2, 3), (3, 0), (3, 1)];

#[cfg(test)]
mod tests {
    use super::*;
    use crate::core::Variant;
    use crate::search::mate::ProvenMate;
    use crate::search::{smp, Silent};
    use crate::time::Limits;
    use crate::tt::TranspositionTable;
    use std::sync::Arc;

    /// Total nodes of a fresh single-thread search of `fen` to `depth`, and the nodes its
    /// root moves report for the last iteration.
    fn search_to(fen: &str, depth: i32) -> (u64, Vec<u64>) {
        let root = Position::from_fen(fen, Variant::Crazyhouse).unwrap();
        let limits = Limits { depth: Some(depth), ..Limits::default() };
        let tt = Arc::new(TranspositionTable::new(16));
        let shared = Shared::new(tt, 1, limits.clone(), 0, 1, Arc::new(Silent), None);
        let mut w = Worker::new(0);
        w.prepare(&root, &[], &limits);
        w.iterative_deepening(&root, &shared);
        (w.nodes(), w.root_moves().iter().map(|rm| rm.nodes).collect())
    }

    /// Under `go depth` only the main thread stops at the limit; helpers search on until it
    /// stops them (a helper that skips the limit's depth would otherwise sit idle through the
    /// main thread's last iteration). A strength limit caps every thread.
    #[test]
    fn helpers_search_past_a_depth_limit_unless_strength_limited() {
        let limits = Limits { depth: Some(7), ..Limits::default() };
        let tt = Arc::new(TranspositionTable::new(1));
        let mut shared = Shared::new(tt, 2, limits, 0, 1, Arc::new(Silent), None);
        let (main, helper) = (Worker::new(0), Worker::new(1));
        assert_eq!(main.depth_limit(&shared), 7);
        assert_eq!(helper.depth_limit(&shared), MAX_DEPTH);
        shared.skill =
            Some(crate::search::skill::Skill::new(crate::search::skill::Level::from_skill(5), 1));
        assert_eq!(main.depth_limit(&shared), 7);
        assert_eq!(helper.depth_limit(&shared), 7);
    }

    /// The solver's mate takes the first place only from a first move whose latest score is
    /// worse: after an aborted iteration the first move's score is unknown (`-INFINITE`) and
    /// its previous iteration's mate in 5 must stay ahead of a proven mate in 6 (the build
    /// before this test put the mate in 6 first and played it, e.g. on the suite's
    /// sp079-p046 at 300,000 nodes). A proven mate shorter than that still goes first.
    #[test]
    fn a_proven_mate_does_not_displace_a_shorter_one_from_an_aborted_iteration() {
        let fen = "r3kb1r/1pp2npp/2q1pn2/1p1p1P2/2b5/2B1PPP1/PP1BQKPP/n2r3R[np] b kq - 2 28";
        let root = Position::from_fen(fen, Variant::Crazyhouse).unwrap();
        let mut w = Worker::new(0);
        w.prepare(&root, &[], &Limits::default());
        let mv = |uci: &str| w.root_moves().iter().find(|rm| rm.mv.to_string() == uci).unwrap().mv;
        let (short, long) = (mv("d1h1"), mv("N@e4"));
        let first = w.root_moves.iter().position(|rm| rm.mv == short).unwrap();
        w.root_moves.swap(0, first);
        // The aborted iteration: nothing searched in full; the last one found mate in 5.
        for rm in &mut w.root_moves {
            rm.score = -INFINITE;
            rm.prev_score = if rm.mv == short { MATE - 9 } else { -INFINITE };
        }
        let proven = |plies: i32, m: Move| ProvenMate { pv: vec![m], score: MATE - plies };
        w.proven = Some(proven(11, long));
        w.apply_proven();
        assert_eq!(w.root_moves()[0].mv, short, "the mate in 6 displaced the mate in 5");
        w.proven = Some(proven(7, long));
        w.apply_proven();
        assert_eq!(w.root_moves()[0].mv, long, "a shorter proven mate must go first");
        assert_eq!(w.root_moves()[0].score, MATE - 7);
    }

    /// The root moves' node counts cover exactly the last iteration: a search to depth `d`
    /// repeats the search to `d - 1` (fresh tables, one thread: the same tree) and adds one
    /// iteration, whose nodes are the root moves' plus the root node itself (once per
    /// aspiration window).
    #[test]
    fn root_move_nodes_count_the_last_iteration() {
        let fen = "r1b1k2r/ppp2ppp/2n5/3q4/1b1P4/2N2N2/PP3PPP/R2QKB1R[PPnb] w KQkq - 0 10";
        std::thread::Builder::new()
            .stack_size(smp::SEARCH_STACK)
            .spawn(move || {
                let (before, _) = search_to(fen, 6);
                let (total, per_move) = search_to(fen, 7);
                let last = total - before;
                let sum: u64 = per_move.iter().sum();
                assert!(per_move.iter().all(|&n| n > 0), "a root move without nodes: {per_move:?}");
                assert!(sum < last && last - sum <= 8, "root moves {sum}, last iteration {last}");
            })
            .unwrap()
            .join()
            .unwrap();
    }
}
