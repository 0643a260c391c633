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

use crate::core::Position;
use crate::nnue::Network;
use crate::search::skill::StrengthOptions;
pub use crate::search::smp::SearchResult;
use crate::search::smp::{self, SEARCH_STACK};
use crate::search::{Reporter, Shared, Worker};
use crate::time::Limits;
use crate::tt::TranspositionTable;

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
/// Whether searches use the built-in network by default (else the hand-written evaluation).
/// On since the built-in network beat the hand-written evaluation in matches
/// (docs/results.md, The network against the hand-written evaluation).
pub const DEFAULT_USE_NNUE: bool = true;
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

/// Settings that shape searches.
#[derive(Clone, Debug)]
pub struct EngineOptions {
    /// Number of search threads.
    pub threads: usize,
    /// Number of principal variations.
    pub multipv: usize,
    /// Milliseconds kept in reserve per move for communication delays.
    pub move_overhead_ms: u64,
    /// The strength limit (`Skill Level`, `UCI_LimitStrength`, `UCI_Elo`, `Skill Seed`).
    pub strength: StrengthOptions,
}

impl Default for EngineOptions {
    fn default() -> Self {
        EngineOptions {
            threads: DEFAULT_THREADS,
            multipv: DEFAULT_MULTIPV,
            move_overhead_ms: DEFAULT_MOVE_OVERHEAD_MS,
            strength: StrengthOptions::default(),
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
    /// The evaluation changed during a search: forget what was learned when it ends.
    pending_clear: bool,
    /// The network (`EvalFile`: the built-in one unless another was loaded).
    net: Arc<Network>,
    /// Do searches evaluate with `net` (`Use NNUE`), else with the hand-written evaluation?
    use_net: bool,
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
            pending_clear: false,
            net: crate::nnue::embedded(),
            use_net: DEFAULT_USE_NNUE,
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
        if std::mem::take(&mut self.pending_clear) {
            self.forget();
        }
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

    /// Sets the network (`EvalFile`), used by the next searches while the network is on.
    /// What the searches learned with the old evaluation is forgotten (see
    /// [`Engine::use_network`]).
    pub fn set_network(&mut self, net: Arc<Network>) {
        if !Arc::ptr_eq(&self.net, &net) {
            self.net = net;
            if self.use_net {
                self.evaluation_changed();
            }
        }
    }

    /// Evaluates the next searches with the network (`true`, `Use NNUE`) or the hand-written
    /// evaluation. A running search keeps the evaluation it started with.
    ///
    /// A change starts the search state afresh, as a new game does: the table's scores and
    /// static evaluations, and the histories, came from the other evaluation, whose scale and
    /// judgement differ, and would be shown and trusted as this one's.
    pub fn use_network(&mut self, on: bool) {
        if self.use_net != on {
            self.use_net = on;
            self.evaluation_changed();
        }
    }

    /// The network loaded (used by searches only while [`Engine::uses_network`]).
    pub fn network(&self) -> &Arc<Network> {
        &self.net
    }

    /// Do searches evaluate with the network?
    pub fn uses_network(&self) -> bool {
        self.use_net
    }

    /// Forgets the search state now when idle, else when the running search ends.
    fn evaluation_changed(&mut self) {
        self.pending_clear = true;
        if !self.is_searching() {
            self.wait();
        }
    }

    /// Sets the number of search threads, used from the next search on.
    pub fn set_threads(&mut self, n: usize) {
        self.options.threads = n.clamp(1, MAX_THREADS);
    }

    /// Forgets everything learned: hash table and histories (new game).
    pub fn clear(&mut self) {
        self.wait();
        self.forget();
    }

    /// Empties the table and the workers' histories (no search is running).
    fn forget(&mut self) {
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
    ///
    /// A panic on the search thread is a bug, never an answer: it is logged and raised again
    /// here, so that the caller (a test, bench, the protocol loop) fails loudly instead of
    /// carrying on with a missing result. (Release builds abort on the panic itself.)
    pub fn wait(&mut self) {
        if let Some(r) = self.running.take() {
            match r.handle.join() {
                Ok(workers) => self.workers = workers,
                Err(panic) => {
                    let what = panic
                        .downcast_ref::<&str>()
                        .map(|s| s.to_string())
                        .or_else(|| panic.downcast_ref::<String>().cloned())
                        .unwrap_or_default();
                    log::error!("the search thread panicked: {what}");
                    self.workers = vec![Worker::new(0)];
                    std::panic::resume_unwind(panic);
                }
            }
        }
        self.apply_pending();
    }

    /// Starts searching `req`. Progress goes to `reporter`; the result to `on_done`, called
    /// on the search thread once the search is over (for `infinite` and ponder searches,
    /// only after `stop` or `ponderhit`).
    ///
    /// Under a strength limit the search runs on one thread, within the level's nodes, depth
    /// and share of the time budget, scoring the level's candidates (MultiPV) while showing
    /// only the lines the GUI asked for.
    pub fn start(
        &mut self,
        mut req: SearchRequest,
        reporter: Arc<dyn Reporter>,
        on_done: Box<dyn FnOnce(SearchResult) + Send>,
    ) {
        self.wait();
        let skill = self.options.strength.for_search(&mut req.limits);
        let threads = if skill.is_some() { 1 } else { self.options.threads.max(1) };
        let multipv = self.options.multipv;
        let searched_multipv = skill.map_or(multipv, |s| s.searched_multipv(multipv));
        let mut workers = std::mem::take(&mut self.workers);
        workers.truncate(threads);
        while workers.len() < threads {
            workers.push(Worker::new(workers.len()));
        }
        self.tt.new_search();
        let mut shared = Shared::new(
            self.tt.clone(),
            threads,
            req.limits.clone(),
            self.options.move_overhead_ms,
            searched_multipv,
            reporter,
            self.use_net.then(|| self.net.clone()),
        );
        if let Some(s) = skill {
            s.shape(&mut shared, multipv);
        }
        // The time this move gets, as the time manager set it (a strength limit's share
        // included): what a user whose engine lost on time wants to see first.
        let ms = |t: Option<u64>| t.map_or("none".to_string(), |t| format!("{t} ms"));
        log::debug!(
            "search started: time soft {}, hard {}; limits {:?}; {threads} threads",
            ms(shared.budget.soft_ms),
            ms(shared.budget.hard_ms),
            req.limits
        );
        let shared = Arc::new(shared);
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
        // `wait` returned, so the search thread ended normally, and it always delivers.
        rx.recv().expect("a finished search delivers its result")
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
    smp::search(&req.root, &mut workers, &shared);
    wait_for_release(&shared, &halted);
    on_done(smp::conclude(&req.root, &workers, &shared));
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
