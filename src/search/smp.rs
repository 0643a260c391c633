//! Lazy SMP: the threads of one search, and which thread's result is played.
//!
//! Every worker runs the same iterative deepening on the same root; they share only the
//! transposition table and the atomics in [`Shared`] (stop flag, node counters), so a
//! helper's findings reach the main thread through the table. The main worker runs on the
//! calling thread; helpers stop when it is done.

use super::{Shared, Worker};
use crate::core::{Move, Position};
use crate::params::SMP_VOTE_SCORE_OFFSET;
use crate::score::{DRAW, INFINITE, MATE, MATE_BOUND};
use crate::tt::{Bound, TranspositionTable};

/// Stack size of search threads: the search recurses up to `MAX_PLY` deep with move lists
/// on the stack.
pub const SEARCH_STACK: usize = 64 * 1024 * 1024;

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

/// Runs the search on `workers` (prepared for `root`): worker 0 on this thread, the others
/// on threads of their own. Returns when worker 0 is done and every helper has stopped. A
/// position without legal moves reports its mate or stalemate score at once.
pub fn search(root: &Position, workers: &mut [Worker], shared: &Shared) {
    if workers[0].root_moves().is_empty() {
        shared.reporter.info(&super::Info {
            depth: 0,
            seldepth: 0,
            multipv: 1,
            score: no_move_score(root),
            bound: Bound::Exact,
            nodes: 0,
            time_ms: 0,
            hashfull: 0,
            pv: Vec::new(),
        });
        return;
    }
    let (main, helpers) = workers.split_first_mut().expect("at least one worker");
    std::thread::scope(|scope| {
        let mut handles = Vec::new();
        for w in helpers.iter_mut() {
            let builder = std::thread::Builder::new()
                .name(format!("search-{}", w.id))
                .stack_size(SEARCH_STACK);
            match builder.spawn_scoped(scope, move || w.iterative_deepening(root, shared)) {
                Ok(h) => handles.push(h),
                Err(e) => log::error!("could not start a search thread: {e}"),
            }
        }
        main.iterative_deepening(root, shared);
        // The main worker is done: helpers stop with it.
        shared.stop();
        // A helper's panic is a bug: it reaches the caller (and the engine's `wait`, which
        // logs and re-raises it) once every other helper has stopped.
        let mut panic = None;
        for h in handles {
            if let Err(p) = h.join() {
                panic.get_or_insert(p);
            }
        }
        if let Some(p) = panic {
            std::panic::resume_unwind(p);
        }
    });
}

/// The result of a finished search, with its last score line reported unless the main
/// thread already showed it (none for a position without legal moves: `search` showed it).
/// The move is the best one, or under a strength limit the limit's choice among the
/// candidates, whose line is then reported as line 1: the last line before the move is
/// always the move's own.
pub fn conclude(root: &Position, workers: &[Worker], shared: &Shared) -> SearchResult {
    let Some(best) = best_worker(workers, shared.multipv) else {
        let score = no_move_score(root);
        return SearchResult { best: None, ponder: None, score, depth: 0, nodes: 0 };
    };
    let w = &workers[best];
    // A strength limit plays one of the candidates of its last completed iteration (if one
    // completed); otherwise the best move.
    // The line's depth is the iteration its score comes from: a move searched in full by an
    // iteration that was stopped later carries that iteration's score, so its line shows that
    // depth (as the iteration's own lines do), not the last completed one's.
    let (rm, (score, depth)) = match shared.skill {
        Some(skill) if !w.candidates().is_empty() => {
            let rm = &w.candidates()[skill.choose(w.candidates(), root.key())];
            // Candidates are copies from the last completed iteration.
            (rm, rm.latest(w.completed_depth, w.completed_depth))
        }
        _ => {
            // An iteration that stopped before this move completed leaves the previous
            // iteration (the last completed one; helpers skip depths) as the source.
            let rm = &w.root_moves()[0];
            (rm, rm.latest(w.root_depth, w.completed_depth))
        }
    };
    let nodes = shared.total_nodes().max(workers.iter().map(Worker::nodes).sum());
    // A search stopped before any root move was searched falls back to the static
    // evaluation, so a score line always precedes the move.
    let score = if score != -INFINITE {
        score
    } else {
        match &shared.net {
            Some(net) => crate::nnue::evaluate_position(net, root),
            None => crate::eval::evaluate(root),
        }
    };
    let ponder = rm.pv.get(1).copied().or_else(|| ponder_from_tt(&shared.tt, root, rm.mv));
    let already_shown = best == 0 && w.last_reported() == Some(&(score, rm.pv.clone()));
    if !already_shown {
        shared.report_line(rm, depth.max(1), score, Bound::Exact, 1, nodes);
    }
    SearchResult { best: Some(rm.mv), ponder, score, depth: w.completed_depth, nodes }
}

/// The score of a position without legal moves: mated or stalemated.
fn no_move_score(root: &Position) -> i32 {
    if root.in_check() {
        -MATE
    } else {
        DRAW
    }
}

/// Which worker's move is played (MultiPV always uses the main thread's lines): the vote of
/// [`vote`] among the workers that completed an iteration, the main thread always among
/// them. `None` when there is no legal move.
fn best_worker(workers: &[Worker], multipv: usize) -> Option<usize> {
    if workers[0].root_moves().is_empty() {
        return None;
    }
    let chosen = if multipv == 1 {
        let ballots: Vec<Ballot> = workers
            .iter()
            .enumerate()
            .filter(|(i, w)| *i == 0 || (!w.root_moves().is_empty() && w.completed_depth > 0))
            .map(|(i, w)| {
                let rm = &w.root_moves()[0];
                let (score, depth) = (rm.latest_score(), w.completed_depth);
                Ballot { worker: i, mv: rm.mv, score, depth }
            })
            .collect();
        ballots[vote(&ballots)].worker
    } else {
        0
    };
    if workers.len() > 1 {
        // `log` formats (and so calls `spread`) only when debug lines are enabled.
        log::debug!("{}; played: thread {chosen}", spread(workers));
    }
    Some(chosen)
}

/// One thread's say in which move is played: the thread, its best move, that move's latest
/// score and the depth the thread completed.
#[derive(Copy, Clone, Debug)]
struct Ballot {
    worker: usize,
    mv: Move,
    score: i32,
    depth: i32,
}

/// The index of the ballot whose move is played. A forced win settles it: the shortest mate
/// found by any thread. Otherwise each ballot gives its move the weight
/// `(score - lowest score + SMP_VOTE_SCORE_OFFSET) x depth`; the move with the most weight
/// wins (a tie goes to the earlier ballot's move: the main thread's first), and of the
/// ballots for it the deepest (then the earliest) is the one whose line is reported.
/// One ballot alone always wins, so a single thread plays its own move.
fn vote(ballots: &[Ballot]) -> usize {
    let earliest_best = |key: &dyn Fn(&Ballot) -> i64| {
        let mut best = 0;
        for (i, b) in ballots.iter().enumerate() {
            if key(b) > key(&ballots[best]) {
                best = i;
            }
        }
        best
    };
    let shortest_mate = earliest_best(&|b| i64::from(b.score));
    if ballots[shortest_mate].score >= MATE_BOUND {
        return shortest_mate;
    }
    let lowest = ballots.iter().map(|b| b.score).min().unwrap_or(0);
    let weight = |b: &Ballot| {
        i64::from(b.score - lowest + SMP_VOTE_SCORE_OFFSET) * i64::from(b.depth.max(0))
    };
    let votes = |mv: Move| ballots.iter().filter(|b| b.mv == mv).map(weight).sum::<i64>();
    let winner = ballots[earliest_best(&|b| votes(b.mv))].mv;
    earliest_best(&|b| if b.mv == winner { i64::from(b.depth) } else { i64::MIN })
}

/// Each thread's completed depth, move, score and nodes at the end of a search: how the
/// threads spread over depths and how often they agree (`RUST_LOG=debug`).
fn spread(workers: &[Worker]) -> String {
    let each: Vec<String> = workers
        .iter()
        .map(|w| match w.root_moves().first() {
            Some(rm) => format!(
                "{}: depth {} {} {} nodes {}",
                w.id,
                w.completed_depth,
                rm.mv,
                rm.latest_score(),
                w.nodes()
            ),
            None => format!("{}: no move", w.id),
        })
        .collect();
    format!("threads {}", each.join(", "))
}

/// The expected reply when the principal variation has none: the table's move in the
/// position after `best`, if legal there.
fn ponder_from_tt(tt: &TranspositionTable, root: &Position, best: Move) -> Option<Move> {
    let child = root.after(best);
    tt.get(child.key()).and_then(|h| h.mv).filter(|&m| child.is_legal(m))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::core::{Position, Variant};

    /// Three distinct legal moves of the start position.
    fn moves() -> [Move; 3] {
        let root = Position::from_fen(
            "rnbqkbnr/pppppppp/8/8/8/8/PPPPPPPP/RNBQKBNR[] w KQkq - 0 1",
            Variant::Crazyhouse,
        )
        .unwrap();
        let m = |uci: &str| *root.legal_moves().iter().find(|m| m.to_string() == uci).unwrap();
        [m("e2e4"), m("d2d4"), m("g1f3")]
    }

    fn ballot(mv: Move, score: i32, depth: i32) -> Ballot {
        Ballot { worker: 0, mv, score, depth }
    }

    #[test]
    fn one_thread_plays_its_own_move() {
        let [a, _, _] = moves();
        assert_eq!(vote(&[ballot(a, -500, 3)]), 0);
    }

    /// Weights: a helper one ply deeper with a worse score loses to the main thread
    /// ((50 - 40 + 10) x 13 = 260 against 10 x 14 = 140); a better score at a lower depth
    /// wins ((120 - 50 + 10) x 12 = 960 against 10 x 14 = 140).
    #[test]
    fn depth_and_score_both_weigh() {
        let [a, b, _] = moves();
        assert_eq!(vote(&[ballot(a, 50, 13), ballot(b, 40, 14)]), 0);
        assert_eq!(vote(&[ballot(a, 50, 14), ballot(b, 120, 12)]), 1);
    }

    /// Two weaker ballots for one move outvote a stronger one for another:
    /// 10 x 10 + 10 x 10 = 200 for `a` against (15 + 10) x 6 = 150 for `b`.
    #[test]
    fn votes_for_one_move_add_up() {
        let [a, b, _] = moves();
        let ballots = [ballot(b, 15, 6), ballot(a, 0, 10), ballot(a, 0, 10)];
        assert_eq!(ballots[vote(&ballots)].mv, a);
    }

    /// Threads that agree: the deepest one's line is reported.
    #[test]
    fn of_the_winning_move_the_deepest_thread_reports() {
        let [a, b, _] = moves();
        assert_eq!(vote(&[ballot(a, 30, 12), ballot(b, -400, 9), ballot(a, 20, 13)]), 2);
    }

    /// A tie in weight goes to the main thread's move.
    #[test]
    fn a_tie_goes_to_the_main_thread() {
        let [a, b, _] = moves();
        assert_eq!(vote(&[ballot(a, 0, 10), ballot(b, 0, 10)]), 0);
    }

    /// A forced win is played whatever the weights: the shortest mate any thread found.
    #[test]
    fn the_shortest_mate_wins() {
        let [a, b, c] = moves();
        let ballots = [ballot(a, 200, 20), ballot(b, MATE - 9, 5), ballot(c, MATE - 5, 3)];
        assert_eq!(vote(&ballots), 2);
        assert_eq!(vote(&[ballot(a, MATE - 3, 4), ballot(b, MATE - 9, 20)]), 0);
    }
}
