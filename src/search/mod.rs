//! The search: iterative deepening with aspiration windows over a principal-variation
//! alpha-beta search and a quiescence search, run by one `Worker` per thread (lazy SMP).
//!
//! Workers share only what `Shared` holds: the transposition table (lockless, see `tt`),
//! the stop and ponder flags and per-thread node counters, all atomics. Everything else
//! (histories, killers, the search stack) belongs to one worker.
//!
//! The files, in the order a reader follows a search:
//! - this file: what a search shares ([`Shared`]), what it reports ([`Info`], [`Reporter`])
//!   and one thread's state ([`Worker`]) with its limit checks;
//! - `root.rs`: the root ([`RootMove`]), iterative deepening, aspiration windows, the mate
//!   solver's result and the lines reported;
//! - `node.rs`: the node search (`Worker::search`, its steps numbered) and quiescence;
//! - `movepick.rs`, `history.rs`: move ordering; `mate.rs`: the checks-only mate solver;
//!   `smp.rs`: running the threads; `skill.rs`: the strength limit.

pub mod history;
pub mod mate;
pub mod movepick;
mod node;
mod root;
pub mod skill;
pub mod smp;

pub use root::RootMove;

use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::Arc;
use std::time::Instant;

use crate::core::{Move, Position};
use crate::nnue::{Accumulator, BucketCache, Network};
use crate::params::*;
use crate::score::INFINITE;
use crate::time::{Limits, TimeBudget};
use crate::tt::{Bound, TranspositionTable};
use history::History;
use mate::{MateSolver, ProvenMate};
use movepick::MoveBuffer;
use node::Frame;

/// Progress of the search, for protocol output.
#[derive(Clone, Debug)]
pub struct Info {
    /// Completed (or current) depth.
    pub depth: i32,
    /// Deepest ply reached.
    pub seldepth: usize,
    /// 1-based line number for MultiPV.
    pub multipv: usize,
    /// Internal score (mate scores beyond `MATE_BOUND`).
    pub score: i32,
    /// `Exact`, or a bound from a failed aspiration window.
    pub bound: Bound,
    /// Nodes searched by all threads.
    pub nodes: u64,
    /// Milliseconds since the search started.
    pub time_ms: u64,
    /// Permille of the hash table in use.
    pub hashfull: u32,
    /// Principal variation.
    pub pv: Vec<Move>,
}

impl Info {
    /// Nodes per second.
    pub fn nps(&self) -> u64 {
        self.nodes * 1000 / self.time_ms.max(1)
    }
}

/// Receives progress and the final result of a search.
pub trait Reporter: Send + Sync {
    /// A principal variation line.
    fn info(&self, info: &Info);
    /// A free-form message (UCI `info string`, XBoard `#` comment).
    fn message(&self, _text: &str) {}
}

/// A reporter that shows nothing (bench, self-play, tools).
pub struct Silent;

impl Reporter for Silent {
    fn info(&self, _: &Info) {}
}

/// One search-wide padded counter, so that threads do not share cache lines for node counts.
#[repr(align(64))]
#[derive(Default)]
struct Counter(AtomicU64);

/// What all workers of one search share.
pub struct Shared {
    /// The transposition table.
    pub tt: Arc<TranspositionTable>,
    /// Set to end the search.
    pub stop: AtomicBool,
    /// Set while pondering: time limits do not apply until `ponderhit` clears it.
    pub pondering: AtomicBool,
    nodes: Vec<Counter>,
    /// Search limits.
    pub limits: Limits,
    /// Time budget (from `limits` and Move Overhead).
    pub budget: TimeBudget,
    start: Instant,
    /// Milliseconds after `start` when timing begins (moved forward by `ponderhit`).
    timing_origin_ms: AtomicU64,
    /// Number of principal variations to search.
    pub multipv: usize,
    /// Number of principal variations shown (`multipv` unless a strength limit searches
    /// more lines than the GUI asked for).
    pub shown_multipv: usize,
    /// The strength limit of this search, if any: it chooses the move played.
    pub skill: Option<skill::Skill>,
    /// Where progress goes.
    pub reporter: Arc<dyn Reporter>,
    /// The network that evaluates positions; `None`: the hand-written evaluation.
    pub net: Option<Arc<Network>>,
}

impl Shared {
    /// Shared state for a search with `threads` workers.
    pub fn new(
        tt: Arc<TranspositionTable>,
        threads: usize,
        limits: Limits,
        overhead_ms: u64,
        multipv: usize,
        reporter: Arc<dyn Reporter>,
        net: Option<Arc<Network>>,
    ) -> Shared {
        let budget = TimeBudget::new(&limits, overhead_ms);
        let ponder = limits.ponder;
        Shared {
            tt,
            stop: AtomicBool::new(false),
            pondering: AtomicBool::new(ponder),
            nodes: (0..threads.max(1)).map(|_| Counter::default()).collect(),
            limits,
            budget,
            start: Instant::now(),
            timing_origin_ms: AtomicU64::new(0),
            multipv: multipv.max(1),
            shown_multipv: multipv.max(1),
            skill: None,
            reporter,
            net,
        }
    }

    /// Total nodes of all workers (as last published).
    pub fn total_nodes(&self) -> u64 {
        self.nodes.iter().map(|c| c.0.load(Ordering::Relaxed)).sum()
    }

    /// Milliseconds since the search started.
    pub fn elapsed_ms(&self) -> u64 {
        self.start.elapsed().as_millis() as u64
    }

    /// Milliseconds counted against the time budget.
    fn timed_ms(&self) -> u64 {
        self.elapsed_ms().saturating_sub(self.timing_origin_ms.load(Ordering::Relaxed))
    }

    /// Switches from pondering to normal search: the budget starts counting now.
    pub fn ponderhit(&self) {
        self.timing_origin_ms.store(self.elapsed_ms(), Ordering::Relaxed);
        self.pondering.store(false, Ordering::Release);
    }

    /// Ends the search.
    pub fn stop(&self) {
        self.stop.store(true, Ordering::Release);
    }

    /// Reports one principal-variation line of `rm`.
    pub fn report_line(
        &self,
        rm: &RootMove,
        depth: i32,
        score: i32,
        bound: Bound,
        multipv: usize,
        nodes: u64,
    ) {
        self.reporter.info(&Info {
            depth,
            seldepth: rm.seldepth.max(depth.max(0) as usize),
            multipv,
            score,
            bound,
            nodes,
            time_ms: self.elapsed_ms(),
            hashfull: self.tt.hashfull(),
            pv: rm.pv.clone(),
        });
    }

    /// Has the search been told to end?
    #[inline]
    pub fn stopped(&self) -> bool {
        self.stop.load(Ordering::Relaxed)
    }
}

/// One search thread's state.
pub struct Worker {
    /// Thread index; 0 is the main thread, which manages time and reports.
    pub id: usize,
    history: Box<History>,
    killers: Box<[[Option<Move>; 2]; MAX_PLY + 2]>,
    /// Network accumulators by ply (used when the search has a network).
    accs: Box<[Accumulator]>,
    /// Per-king-bucket accumulators for a network with king buckets (prepared at the root).
    bucket_cache: BucketCache,
    stack: Box<[Frame; MAX_PLY + 4]>,
    keys: Vec<u64>,
    pv: Box<[[Option<Move>; MAX_PLY + 1]; MAX_PLY + 1]>,
    pv_len: Box<[usize; MAX_PLY + 1]>,
    move_buffers: Vec<MoveBuffer>,
    nodes: u64,
    seldepth: usize,
    root_moves: Vec<RootMove>,
    pv_idx: usize,
    root_depth: i32,
    /// Deepest fully completed iteration.
    pub completed_depth: i32,
    /// Completed iterations in a row that kept the best move (see `time::Progress`).
    stable_iterations: u32,
    /// Root score of each completed iteration, oldest first.
    iteration_scores: Vec<i32>,
    /// Score and line of the last principal variation reported (main thread).
    last_reported: Option<(i32, Vec<Move>)>,
    /// Under a strength limit (main thread): the scored lines of the last completed
    /// iteration, best first, among which the limit chooses. A later, unfinished iteration
    /// would mix scores of different depths.
    candidates: Vec<RootMove>,
    /// Checks-only mate solver (main thread).
    mate_solver: MateSolver,
    /// Mate it proved at the root of this search.
    proven: Option<ProvenMate>,
}

impl Worker {
    /// A worker with fresh tables.
    pub fn new(id: usize) -> Worker {
        Worker {
            id,
            history: History::new(),
            killers: Box::new([[None; 2]; MAX_PLY + 2]),
            accs: vec![Accumulator::new(); MAX_PLY + 4].into_boxed_slice(),
            bucket_cache: BucketCache::new(),
            stack: Box::new([Frame::default(); MAX_PLY + 4]),
            keys: Vec::with_capacity(4096),
            pv: Box::new([[None; MAX_PLY + 1]; MAX_PLY + 1]),
            pv_len: Box::new([0; MAX_PLY + 1]),
            move_buffers: MoveBuffer::stack(MAX_PLY + 2),
            nodes: 0,
            seldepth: 0,
            root_moves: Vec::new(),
            pv_idx: 0,
            root_depth: 0,
            completed_depth: 0,
            stable_iterations: 0,
            iteration_scores: Vec::with_capacity(MAX_DEPTH as usize + 1),
            last_reported: None,
            mate_solver: MateSolver::new(),
            proven: None,
            candidates: Vec::new(),
        }
    }

    /// Forgets everything learned (new game).
    pub fn clear(&mut self) {
        self.history.clear();
        *self.killers = [[None; 2]; MAX_PLY + 2];
        self.mate_solver.clear();
    }

    /// Nodes searched in the last search.
    pub fn nodes(&self) -> u64 {
        self.nodes
    }

    /// Root moves after the search, best first.
    pub fn root_moves(&self) -> &[RootMove] {
        &self.root_moves
    }

    /// Prepares a search of `root`, reached through positions with keys `history` (oldest
    /// first, not including `root`).
    pub fn prepare(&mut self, root: &Position, history: &[u64], limits: &Limits) {
        self.keys.clear();
        self.keys.extend_from_slice(history);
        self.keys.push(root.key());
        self.nodes = 0;
        self.seldepth = 0;
        self.completed_depth = 0;
        self.stable_iterations = 0;
        self.iteration_scores.clear();
        self.last_reported = None;
        *self.killers = [[None; 2]; MAX_PLY + 2];
        let legal = root.legal_moves();
        self.root_moves = legal
            .iter()
            .filter(|m| limits.searchmoves.is_empty() || limits.searchmoves.contains(m))
            .map(|&mv| RootMove {
                mv,
                score: -INFINITE,
                prev_score: -INFINITE,
                bound: Bound::Upper,
                pv: vec![mv],
                seldepth: 0,
                nodes: 0,
            })
            .collect();
    }

    #[inline]
    fn publish_nodes(&self, shared: &Shared) {
        if let Some(c) = shared.nodes.get(self.id) {
            c.0.store(self.nodes, Ordering::Relaxed);
        }
    }

    /// Checks limits every `LIMIT_CHECK_NODES` nodes (main thread) and reads the stop flag.
    /// A worker abandons its search whenever it is told to, at any depth: even depth 1 can be
    /// large in crazyhouse (checks met by many drops), and the clock comes first.
    #[inline]
    fn should_stop(&mut self, shared: &Shared) -> bool {
        if self.nodes.is_multiple_of(LIMIT_CHECK_NODES) {
            self.publish_nodes(shared);
            if self.id == 0 && !shared.stopped() {
                self.check_limits(shared);
            }
        }
        if self.id == 0 && self.completed_depth >= 1 {
            if let Some(n) = shared.limits.nodes {
                let others: u64 =
                    shared.nodes.iter().skip(1).map(|c| c.0.load(Ordering::Relaxed)).sum();
                if self.nodes + others >= n {
                    shared.stop();
                }
            }
        }
        shared.stopped()
    }

    fn check_limits(&self, shared: &Shared) {
        if shared.pondering.load(Ordering::Relaxed) {
            return;
        }
        if let Some(hard) = shared.budget.hard_ms {
            if shared.timed_ms() >= hard {
                shared.stop();
            }
        }
    }

    fn is_repetition(&self) -> bool {
        let n = self.keys.len();
        if n < 5 {
            return false;
        }
        let key = self.keys[n - 1];
        let mut i = n - 5;
        loop {
            if self.keys[i] == key {
                return true;
            }
            if i < 2 {
                return false;
            }
            i -= 2;
        }
    }
}
