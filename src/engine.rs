//! The boundary between protocols and search.
//!
//! A protocol hands the `Engine` a `SearchRequest` (position, the keys of the positions that
//! led to it, limits), a `Reporter` for progress lines and a callback for the result. The
//! search runs on its own threads (lazy SMP: `Threads` workers sharing the transposition
//! table), so the protocol keeps reading input and can `stop` or `ponderhit` at any time.

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::thread::JoinHandle;
use std::time::Duration;

use crate::core::{Move, Position};
use crate::score::{INFINITE, MATE};
use crate::search::{Info, Reporter, Shared, Worker};
use crate::time::Limits;
use crate::tt::{Bound, TranspositionTable};

/// Stack size of search threads: the search recurses up to `MAX_PLY` deep with move lists
/// on the stack.
const SEARCH_STACK: usize = 64 * 1024 * 1024;

/// Default hash size in megabytes.
pub const DEFAULT_HASH_MB: usize = 16;
/// Largest hash size in megabytes.
pub const MAX_HASH_MB: usize = 65536;
/// Default thread count.
pub const DEFAULT_THREADS: usize = 1;
/// Largest thread count.
pub const MAX_THREADS: usize = 512;
/// Default number of principal variations.
pub const DEFAULT_MULTIPV: usize = 1;
/// Largest number of principal variations.
pub const MAX_MULTIPV: usize = 500;
/// Default reserve per move for GUI and network delays, milliseconds (a local GUI).
pub const DEFAULT_MOVE_OVERHEAD_MS: u64 = 10;
/// Largest reserve per move, milliseconds.
pub const MAX_MOVE_OVERHEAD_MS: u64 = 5000;

/// What to search.
#[derive(Clone, Debug)]
pub struct SearchRequest {
    /// The position to search.
    pub root: Position,
    /// Keys of the positions played before `root`, oldest first, for repetition detection.
    pub history: Vec<u64>,
    /// Limits.
    pub limits: Limits,
}

/// The outcome of a search.
#[derive(Clone, Debug, Default)]
pub struct SearchResult {
    /// Move to play; `None` when there is no legal move.
    pub best: Option<Move>,
    /// Expected reply, for pondering.
    pub ponder: Option<Move>,
    /// Score of `best` (internal units).
    pub score: i32,
    /// Depth completed.
    pub depth: i32,
    /// Nodes searched by all threads.
    pub nodes: u64,
}

/// Settings that shape searches.
#[derive(Clone, Debug)]
pub struct EngineOptions {
    /// Number of search threads.
    pub threads: usize,
    /// Number of principal variations.
    pub multipv: usize,
    /// Milliseconds kept in reserve per move for communication delays.
    pub move_overhead_ms: u64,
}

impl Default for EngineOptions {
    fn default() -> Self {
        EngineOptions {
            threads: DEFAULT_THREADS,
            multipv: DEFAULT_MULTIPV,
            move_overhead_ms: DEFAULT_MOVE_OVERHEAD_MS,
        }
    }
}

struct Running {
    shared: Arc<Shared>,
    /// Set by `stop` only: ends an infinite or ponder search for good.
    halted: Arc<AtomicBool>,
    /// Set just before the result is delivered: from then on the search counts as over.
    delivered: Arc<AtomicBool>,
    handle: JoinHandle<Vec<Worker>>,
}

/// The search engine: transposition table, workers and the search in progress.
pub struct Engine {
    tt: Arc<TranspositionTable>,
    workers: Vec<Worker>,
    /// Settings for the next search.
    pub options: EngineOptions,
    running: Option<Running>,
    /// A hash size set during a search, applied when it ends.
    pending_hash_mb: Option<usize>,
}

impl Default for Engine {
    fn default() -> Self {
        Engine::new()
    }
}

impl Engine {
    /// An engine with the default hash size and one thread.
    pub fn new() -> Engine {
        Engine {
            tt: Arc::new(TranspositionTable::new(DEFAULT_HASH_MB)),
            workers: vec![Worker::new(0)],
            options: EngineOptions::default(),
            running: None,
            pending_hash_mb: None,
        }
    }

    /// Is a search running whose result has not been delivered yet?
    pub fn is_searching(&self) -> bool {
        self.running.as_ref().is_some_and(|r| !r.delivered.load(Ordering::Acquire))
    }

    /// Resizes the transposition table: now when idle, else when the running search ends
    /// (it keeps using the table it started with).
    pub fn set_hash(&mut self, mb: usize) {
        self.pending_hash_mb = Some(mb.clamp(1, MAX_HASH_MB));
        if !self.is_searching() {
            self.wait();
        }
    }

    fn apply_pending(&mut self) {
        if let Some(mb) = self.pending_hash_mb.take() {
            if self.tt.size_mb() != mb {
                // Drop the old table before allocating the new one, to bound peak memory.
                self.tt = Arc::new(TranspositionTable::new(1));
                self.tt = Arc::new(TranspositionTable::new(mb));
            }
        }
    }

    /// Size of the transposition table in megabytes.
    pub fn hash_mb(&self) -> usize {
        self.tt.size_mb()
    }

    /// Sets the number of search threads, used from the next search on.
    pub fn set_threads(&mut self, n: usize) {
        self.options.threads = n.clamp(1, MAX_THREADS);
    }

    /// Forgets everything learned: hash table and histories (new game).
    pub fn clear(&mut self) {
        self.wait();
        self.tt.clear();
        for w in &mut self.workers {
            w.clear();
        }
    }

    /// Ends the running search; its result is still delivered.
    pub fn stop(&self) {
        if let Some(r) = &self.running {
            r.halted.store(true, Ordering::Release);
            r.shared.pondering.store(false, Ordering::Release);
            r.shared.stop();
        }
    }

    /// The opponent played the expected move: the ponder search becomes a normal one.
    pub fn ponderhit(&self) {
        if let Some(r) = &self.running {
            r.shared.ponderhit();
        }
    }

    /// Waits for the running search, if any, to finish and deliver its result.
    pub fn wait(&mut self) {
        if let Some(r) = self.running.take() {
            match r.handle.join() {
                Ok(workers) => self.workers = workers,
                Err(_) => self.workers = vec![Worker::new(0)],
            }
        }
        self.apply_pending();
    }

    /// Starts searching `req`. Progress goes to `reporter`; the result to `on_done`, called
    /// on the search thread once the search is over (for `infinite` and ponder searches,
    /// only after `stop` or `ponderhit`).
    pub fn start(
        &mut self,
        req: SearchRequest,
        reporter: Arc<dyn Reporter>,
        on_done: Box<dyn FnOnce(SearchResult) + Send>,
    ) {
        self.wait();
        let threads = self.options.threads.max(1);
        let mut workers = std::mem::take(&mut self.workers);
        workers.truncate(threads);
        while workers.len() < threads {
            workers.push(Worker::new(workers.len()));
        }
        self.tt.new_search();
        let shared = Arc::new(Shared::new(
            self.tt.clone(),
            threads,
            req.limits.clone(),
            self.options.move_overhead_ms,
            self.options.multipv,
            reporter,
        ));
        let halted = Arc::new(AtomicBool::new(false));
        let delivered = Arc::new(AtomicBool::new(false));
        let (sh, ht, dl) = (shared.clone(), halted.clone(), delivered.clone());
        let deliver = Box::new(move |r: SearchResult| {
            dl.store(true, Ordering::Release);
            on_done(r);
        });
        let handle = std::thread::Builder::new()
            .name("search-main".into())
            .stack_size(SEARCH_STACK)
            .spawn(move || run_search(req, workers, sh, ht, deliver))
            .expect("spawn search thread");
        self.running = Some(Running { shared, halted, delivered, handle });
    }

    /// Searches synchronously and returns the result (bench, tests, tools).
    pub fn search_sync(&mut self, req: SearchRequest, reporter: Arc<dyn Reporter>) -> SearchResult {
        let (tx, rx) = std::sync::mpsc::channel();
        self.start(req, reporter, Box::new(move |r| drop(tx.send(r))));
        self.wait();
        rx.recv().unwrap_or_default()
    }
}

fn run_search(
    req: SearchRequest,
    mut workers: Vec<Worker>,
    shared: Arc<Shared>,
    halted: Arc<AtomicBool>,
    on_done: Box<dyn FnOnce(SearchResult) + Send>,
) -> Vec<Worker> {
    for w in &mut workers {
        w.prepare(&req.root, &req.history, &req.limits);
    }
    if workers[0].root_moves().is_empty() {
        // No legal move: mate or stalemate.
        let score = if req.root.in_check() { -MATE } else { 0 };
        shared.reporter.info(&Info {
            depth: 0,
            seldepth: 0,
            multipv: 1,
            score,
            bound: Bound::Exact,
            nodes: 0,
            time_ms: 0,
            hashfull: 0,
            pv: Vec::new(),
        });
        wait_for_release(&shared, &halted);
        on_done(SearchResult { best: None, ponder: None, score, depth: 0, nodes: 0 });
        return workers;
    }

    let root = &req.root;
    // This thread runs the main worker itself (one hand-over fewer between `go` and
    // `bestmove`); helpers get threads of their own.
    let (main, helpers) = workers.split_first_mut().expect("at least one worker");
    std::thread::scope(|scope| {
        let mut handles = Vec::new();
        for w in helpers.iter_mut() {
            let shared = &shared;
            let builder = std::thread::Builder::new()
                .name(format!("search-{}", w.id))
                .stack_size(SEARCH_STACK);
            match builder.spawn_scoped(scope, move || w.iterative_deepening(root, shared)) {
                Ok(h) => handles.push(h),
                Err(e) => log::error!("could not start a search thread: {e}"),
            }
        }
        main.iterative_deepening(root, &shared);
        // The main worker is done: helpers stop with it.
        shared.stop();
        for h in handles {
            let _ = h.join();
        }
    });

    wait_for_release(&shared, &halted);

    // Pick the result: the main thread's, unless a helper completed a deeper iteration
    // with a score at least as good (MultiPV always uses the main thread).
    let mut best = 0;
    if shared.multipv == 1 {
        for i in 1..workers.len() {
            let (a, b) = (&workers[best], &workers[i]);
            if b.root_moves().is_empty() || b.completed_depth == 0 {
                continue;
            }
            let (sa, sb) = (a.root_moves()[0].score, b.root_moves()[0].score);
            if b.completed_depth > a.completed_depth && sb >= sa {
                best = i;
            }
        }
    }
    let w = &workers[best];
    let rm = &w.root_moves()[0];
    let nodes = shared.total_nodes().max(workers.iter().map(Worker::nodes).sum());
    // The score of the latest search of the move; a search stopped before any root move was
    // searched falls back to the static evaluation, so a score line always precedes the move.
    let score = [rm.score, rm.prev_score]
        .into_iter()
        .find(|&s| s != -INFINITE)
        .unwrap_or_else(|| crate::eval::evaluate(root));
    let ponder = rm.pv.get(1).copied().or_else(|| ponder_from_tt(&shared.tt, root, rm.mv));
    let already_shown = best == 0 && w.last_reported() == Some(&(score, rm.pv.clone()));
    if !already_shown {
        shared.report_line(rm, w.completed_depth.max(1), score, Bound::Exact, 1, nodes);
    }
    on_done(SearchResult { best: Some(rm.mv), ponder, score, depth: w.completed_depth, nodes });
    workers
}

/// `infinite` and ponder searches report only after `stop` (or `ponderhit` for pondering).
fn wait_for_release(shared: &Shared, halted: &AtomicBool) {
    loop {
        let halted = halted.load(Ordering::Acquire);
        let pondering = shared.pondering.load(Ordering::Acquire);
        if halted || (!pondering && !shared.limits.infinite) {
            return;
        }
        std::thread::sleep(Duration::from_millis(1));
    }
}

fn ponder_from_tt(tt: &TranspositionTable, root: &Position, best: Move) -> Option<Move> {
    let child = root.after(best);
    tt.probe(child.key()).and_then(|h| h.mv).filter(|&m| child.is_legal(m))
}
