//! Checks-only mate solver, run at the root before iterative deepening.
//!
//! Most crazyhouse mates are a string of checks, many of them drops onto squares a full-width
//! search prunes or reduces (sacrifices next to the king). This solver proves such mates
//! directly: the attacker tries only moves that give check, the defender every legal move, to
//! a fixed number of plies, deepened one move at a time so that shorter mates come first.
//! Checks are tried in order of how few replies they leave (mate-in-one first), the classic
//! "fewest replies" rule of mate solvers; below the root, checks that leave many replies (a
//! distant queen check met by a dozen interposing drops) are not tried at all. That cap makes
//! the solver several times faster on the shared mate suite, at the price of sometimes finding
//! a longer mate than the shortest one by checks. So once a mate is proven, the shorter
//! distances are searched again under a looser cap, as far as the budget allows; and when
//! the tight cap disproves every distance before the budget runs out, the distances are
//! searched again under a cap a little looser (the mate then needs a check with more replies).
//!
//! A proof is exact: every defence was refuted, whatever the attacker's quiet alternatives.
//! Repetitions are ignored (a forced mate within a few plies never needs one), so results
//! depend on the position only and stay valid across searches in a small table of their own.

use crate::core::{Move, MoveList, Position, MAX_MOVES};

use crate::params::{
    MATE_SOLVER_MAX_PLIES, MATE_SOLVER_MAX_REPLIES, MATE_SOLVER_SHORTER_REPLIES,
    MATE_SOLVER_TABLE_BITS, MATE_SOLVER_WIDE_REPLIES,
};
use crate::score::MATE;

/// What the solver knows of one position.
#[derive(Copy, Clone, Default)]
struct SolverEntry {
    key: u64,
    /// The side to move mates (or, to move in check, is mated) within this many plies;
    /// 0 when unknown.
    proven: u8,
    /// Not within this many plies, trying only checks that leave at most `cap` replies.
    disproven: u8,
    /// Reply cap of the search that gave `disproven`: a disproof holds for searches whose
    /// cap is no looser.
    cap: u8,
    /// The mating check (attacker) or the longest defence (defender), raw.
    mv: u16,
}

/// A proven mate at the root: the line and its score (`MATE - plies`).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ProvenMate {
    /// Mating line, starting with the root move.
    pub pv: Vec<Move>,
    /// Score from the root's point of view.
    pub score: i32,
}

/// The solver and its table of proofs and disproofs.
pub struct MateSolver {
    table: Box<[SolverEntry]>,
    nodes: u64,
    limit: u64,
    next_poll: u64,
    aborted: bool,
    /// Checks below the root that leave more replies than this are not tried.
    cap: u32,
}

impl Default for MateSolver {
    fn default() -> Self {
        MateSolver::new()
    }
}

impl MateSolver {
    /// A solver with an empty table.
    pub fn new() -> MateSolver {
        MateSolver {
            table: vec![SolverEntry::default(); 1 << MATE_SOLVER_TABLE_BITS].into_boxed_slice(),
            nodes: 0,
            limit: 0,
            next_poll: 0,
            aborted: false,
            cap: 0,
        }
    }

    /// Forgets every proof (new game).
    pub fn clear(&mut self) {
        self.table.fill(SolverEntry::default());
    }

    /// Positions visited by the last `solve`.
    pub fn nodes(&self) -> u64 {
        self.nodes
    }

    /// Looks for a short mate by checks from `root` that starts with one of `moves`,
    /// visiting at most `limit` positions. `stop` is polled every 1024 positions; when it
    /// answers true the solver gives up.
    pub fn solve(
        &mut self,
        root: &Position,
        moves: &[Move],
        limit: u64,
        stop: &mut dyn FnMut(u64) -> bool,
    ) -> Option<ProvenMate> {
        self.nodes = 0;
        self.limit = limit;
        self.next_poll = 1024;
        self.aborted = false;
        if root.in_check() {
            return None;
        }
        self.cap = MATE_SOLVER_MAX_REPLIES.get();
        let proven = match self.first_mate(
            root,
            moves,
            (1..=MATE_SOLVER_MAX_PLIES.get()).step_by(2),
            stop,
        ) {
            Some(p) => p,
            // The tight cap disproved every distance within budget: the mate, if any, needs
            // a check that leaves more replies, so try again under a looser cap (the proofs
            // found so far stay in the table). A mate in one or two never depends on the
            // cap, so the 3-ply search here repeats the first pass's (it is cheap, and
            // starting at 5 would change the node counts this pass was measured with).
            None if !self.aborted => {
                self.cap = MATE_SOLVER_WIDE_REPLIES.get();
                self.first_mate(root, moves, (3..=MATE_SOLVER_MAX_PLIES.get()).step_by(2), stop)?
            }
            None => return None,
        };
        // Shorter mates the tight cap may have hidden (a mate in one or two is exact: the
        // cap applies from the root's second check on).
        let plies = (MATE - proven.score) as u32;
        self.cap = MATE_SOLVER_SHORTER_REPLIES.get();
        self.first_mate(root, moves, (5..plies).step_by(2), stop).or(Some(proven))
    }

    /// The mate of the first distance in `plies` (odd, ascending) that has one; `None` when
    /// none has or the solver was stopped.
    fn first_mate(
        &mut self,
        root: &Position,
        moves: &[Move],
        plies: impl Iterator<Item = u32>,
        stop: &mut dyn FnMut(u64) -> bool,
    ) -> Option<ProvenMate> {
        for p in plies {
            if let Some(found) = self.mate_in(root, moves, p, stop) {
                return Some(found);
            }
            if self.aborted {
                break;
            }
        }
        None
    }

    /// A mate within exactly `plies` plies (odd) by a check among `moves`, with its line.
    fn mate_in(
        &mut self,
        root: &Position,
        moves: &[Move],
        plies: u32,
        stop: &mut dyn FnMut(u64) -> bool,
    ) -> Option<ProvenMate> {
        for &m in moves {
            if !root.gives_check(m) {
                continue;
            }
            let child = root.after(m);
            self.nodes += 1;
            if self.defend(&child, plies - 1, stop) {
                let mut pv = vec![m];
                self.extend_pv(&child, plies - 1, &mut pv);
                return Some(ProvenMate { pv, score: MATE - plies as i32 });
            }
            if self.aborted {
                return None;
            }
        }
        None
    }

    fn poll(&mut self, stop: &mut dyn FnMut(u64) -> bool) -> bool {
        if self.nodes >= self.limit {
            self.aborted = true;
        } else if self.nodes >= self.next_poll {
            self.next_poll = self.nodes + 1024;
            self.aborted = stop(self.nodes);
        }
        self.aborted
    }

    /// The reply cap as the table stores it.
    #[inline]
    fn table_cap(&self) -> u8 {
        self.cap.min(u8::MAX as u32) as u8
    }

    #[inline]
    fn slot(&self, key: u64) -> usize {
        (key as usize) & (self.table.len() - 1)
    }

    fn probe(&self, key: u64, plies: u32) -> Option<bool> {
        let e = self.table[self.slot(key)];
        if e.key != key {
            return None;
        }
        if e.proven != 0 && u32::from(e.proven) <= plies {
            Some(true)
        } else if u32::from(e.disproven) >= plies && e.cap >= self.table_cap() {
            Some(false)
        } else {
            None
        }
    }

    fn store(&mut self, key: u64, plies: u32, proven: bool, mv: Option<Move>) {
        let cap = self.table_cap();
        let i = self.slot(key);
        let e = &mut self.table[i];
        if e.key != key {
            *e = SolverEntry { key, ..SolverEntry::default() };
        }
        let p = plies.min(u8::MAX as u32) as u8;
        if proven {
            if e.proven == 0 || p < e.proven {
                e.proven = p;
                e.mv = mv.map_or(0, Move::raw);
            }
        } else {
            // Keep the disproof of the loosest cap: it holds for every search.
            if cap > e.cap {
                (e.cap, e.disproven) = (cap, p);
            } else if cap == e.cap {
                e.disproven = e.disproven.max(p);
            }
        }
    }

    /// Does the side to move (not in check) mate within `plies` (odd) plies by checks?
    fn attack(&mut self, pos: &Position, plies: u32, stop: &mut dyn FnMut(u64) -> bool) -> bool {
        if let Some(known) = self.probe(pos.key(), plies) {
            return known;
        }
        let mut checks = MoveList::new();
        for &m in pos.legal_moves().iter() {
            if pos.gives_check(m) {
                checks.push(m);
            }
        }
        // Replies left by each check: mate in one is a check without any, and the fewer
        // replies the cheaper the proof.
        let mut replies = [0u32; MAX_MOVES];
        for (i, &m) in checks.iter().enumerate() {
            self.nodes += 1;
            let child = pos.after(m);
            // At the last ply only mate matters; deeper, the reply count orders the checks.
            let n = if plies < 3 {
                u32::from(child.has_legal_move())
            } else {
                child.count_legal() as u32
            };
            if n == 0 {
                self.store(pos.key(), 1, true, Some(m));
                return true;
            }
            replies[i] = n;
        }
        if plies < 3 || self.poll(stop) {
            if !self.aborted {
                self.store(pos.key(), plies, false, None);
            }
            return false;
        }
        let n = checks.len();
        let list = checks.as_mut_slice();
        // Insertion sort by reply count (lists are short).
        for i in 1..n {
            let mut j = i;
            while j > 0 && replies[j - 1] > replies[j] {
                replies.swap(j - 1, j);
                list.swap(j - 1, j);
                j -= 1;
            }
        }
        for (i, &m) in list.iter().enumerate() {
            if replies[i] > self.cap {
                break;
            }
            let child = pos.after(m);
            if self.defend(&child, plies - 1, stop) {
                self.store(pos.key(), plies, true, Some(m));
                return true;
            }
            if self.aborted {
                return false;
            }
        }
        self.store(pos.key(), plies, false, None);
        false
    }

    /// Is the side to move (in check) mated within `plies` (even) plies?
    fn defend(&mut self, pos: &Position, plies: u32, stop: &mut dyn FnMut(u64) -> bool) -> bool {
        if plies == 0 {
            return pos.in_check() && !pos.has_legal_move();
        }
        if let Some(known) = self.probe(pos.key(), plies) {
            return known;
        }
        let mut moves = pos.legal_moves();
        if moves.is_empty() {
            return pos.in_check();
        }
        if self.poll(stop) {
            return false;
        }
        // Captures first: taking the checker is the likeliest escape.
        moves.as_mut_slice().sort_by_key(|&m| !pos.is_capture(m));
        for &m in moves.iter() {
            self.nodes += 1;
            let child = pos.after(m);
            if !self.attack(&child, plies - 1, stop) {
                if !self.aborted {
                    self.store(pos.key(), plies, false, Some(m));
                }
                return false;
            }
        }
        self.store(pos.key(), plies, true, None);
        true
    }

    /// Appends the mating line from `pos` (defender to move, mated within `plies`): the
    /// defender plays the reply that holds out longest, the attacker its stored check.
    fn extend_pv(&mut self, pos: &Position, plies: u32, pv: &mut Vec<Move>) {
        let mut pos = pos.clone();
        let mut plies = plies;
        while plies >= 2 {
            // Defender: the reply after which the attacker needs the most plies.
            let mut best: Option<(u32, Move)> = None;
            for &m in pos.legal_moves().iter() {
                let child = pos.after(m);
                let need =
                    (1..plies).step_by(2).find(|&p| self.probe(child.key(), p) == Some(true));
                let need = need.unwrap_or(plies - 1);
                if best.is_none_or(|(b, _)| need > b) {
                    best = Some((need, m));
                }
            }
            let Some((need, reply)) = best else { return };
            pos = pos.after(reply);
            pv.push(reply);
            // Attacker: the stored mating check, if it is still there and legal.
            let e = self.table[self.slot(pos.key())];
            let Some(m) = Move::from_raw(e.mv).filter(|&m| e.key == pos.key() && pos.is_legal(m))
            else {
                return;
            };
            pos = pos.after(m);
            pv.push(m);
            plies = need - 1;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::core::Variant;

    fn pos(fen: &str) -> Position {
        Position::from_fen(fen, Variant::Crazyhouse).unwrap()
    }

    fn solve(fen: &str, limit: u64) -> Option<ProvenMate> {
        let p = pos(fen);
        let moves: Vec<Move> = p.legal_moves().iter().copied().collect();
        MateSolver::new().solve(&p, &moves, limit, &mut |_| false)
    }

    /// Reference for small cases: can the side to move force mate within `plies` plies with
    /// checks only? Plain minimax, no table, no ordering, no reply cap.
    fn brute_attack(p: &Position, plies: u32) -> bool {
        p.legal_moves().iter().any(|&m| {
            let c = p.after(m);
            c.in_check() && brute_defend(&c, plies - 1)
        })
    }

    fn brute_defend(p: &Position, plies: u32) -> bool {
        let moves = p.legal_moves();
        if moves.is_empty() {
            return p.in_check();
        }
        plies >= 2 && moves.iter().all(|&m| brute_attack(&p.after(m), plies - 1))
    }

    fn suite() -> impl Iterator<Item = (&'static str, u32, &'static str)> {
        include_str!("../../tests/data/zh-mates.epd")
            .lines()
            .filter(|l| !l.starts_with('#') && !l.trim().is_empty())
            .map(|l| {
                let mut parts = l.split(';').map(str::trim);
                let fen = parts.next().unwrap();
                let n = parts.next().unwrap().trim_start_matches("mate ").parse().unwrap();
                let bm = parts.next().unwrap().trim_start_matches("bm ");
                (fen, n, bm)
            })
    }

    /// The line is legal from `fen` and gives check at every attacking move.
    fn assert_line_of_checks(fen: &str, pv: &[Move]) {
        let mut p = pos(fen);
        for (i, &m) in pv.iter().enumerate() {
            assert!(p.is_legal(m), "{m} illegal");
            p = p.after(m);
            assert!(i % 2 == 1 || p.in_check(), "{m} is no check");
        }
    }

    /// The solver, within `limit` nodes, proves the suite's case `fen` at the suite's distance
    /// (from the case's source engines) with the suite's first move, by a line of checks.
    fn assert_proves_suite_case(fen: &str, limit: u64) {
        let (_, n, bm) = suite().find(|(f, _, _)| *f == fen).expect("case in the suite");
        let r = solve(fen, limit).expect("a mate by checks");
        assert_eq!(r.score, MATE - (2 * n as i32 - 1));
        assert_eq!(r.pv[0].to_string(), bm);
        assert_line_of_checks(fen, &r.pv);
    }

    #[test]
    fn drop_mate_in_one() {
        let r = solve("4k3/3ppp2/8/8/8/8/8/4K3[Q] w - - 0 1", 10_000).unwrap();
        assert_eq!(r.score, MATE - 1);
        let p = pos("4k3/3ppp2/8/8/8/8/8/4K3[Q] w - - 0 1").after(r.pv[0]);
        assert!(p.in_check() && !p.has_legal_move());
    }

    #[test]
    fn a_mate_in_seven_by_checks() {
        // The suite's fsf-sjeng-g04-p041: N@h2+ and six more checks, most of them drops.
        let fen = "r2q2n1/pp3pk1/3pp1p1/1P1p4/P5P1/3PPQ1r/1PP2P2/R1B2K2[RNNbbbnp] b - - 0 21";
        assert_proves_suite_case(fen, 200_000);
    }

    #[test]
    fn proofs_agree_with_brute_force() {
        // Every mate of at most three moves the solver proves in the suite holds under plain
        // minimax; up to two moves, where the reply cap never applies, none is shorter.
        let mut proved = 0;
        for (fen, _, _) in suite() {
            let Some(r) = solve(fen, 50_000) else { continue };
            let plies = (MATE - r.score) as u32;
            if plies > 5 {
                continue;
            }
            let p = pos(fen);
            let first = p.after(r.pv[0]);
            assert!(first.in_check(), "{fen}: {} is no check", r.pv[0]);
            assert!(brute_defend(&first, plies - 1), "{fen}: {} does not mate in {plies}", r.pv[0]);
            if plies == 3 {
                assert!(!brute_attack(&p, 1), "{fen}: a mate in one missed");
            }
            // The line is legal from the root.
            let mut q = p.clone();
            for &m in &r.pv {
                assert!(q.is_legal(m), "{fen}: {m} illegal in the line");
                q = q.after(m);
            }
            proved += 1;
        }
        assert!(proved >= 10, "only {proved} short mates proved");
    }

    #[test]
    fn a_shorter_mate_hidden_by_the_reply_cap_is_found() {
        // The suite's sp092-p032, mate in 7 by its source engines. Under the tight reply cap
        // alone the solver proves a mate in 8 (15 plies); the looser second pass finds one
        // within the stated distance. (The line may stop early where the small table lost
        // a stored check; the search extends it.)
        let fen = "rn1k1b1r/1pp1pPpp/4p3/qp6/1P2n3/P2P4/5pKP/R1BQR3[NPbbnpp] b - - 0 21";
        let (_, n, _) = suite().find(|(f, _, _)| *f == fen).expect("case in the suite");
        let r = solve(fen, 2_000_000).expect("a mate by checks");
        let plies = (MATE - r.score) as u32;
        assert!(plies < 2 * n, "mate in {plies} plies, at most {} expected", 2 * n - 1);
        assert_line_of_checks(fen, &r.pv);
    }

    #[test]
    fn a_mate_beyond_the_tight_cap_is_found_by_the_wider_pass() {
        // The suite's fsf-sjeng-g03-p036, mate in 6 by its source engines (Fairy-Stockfish's
        // line: Rxe6+ N@e7 P@f7+ Kd7 B@e8+ ...). Every line needs a check that leaves more
        // than MATE_SOLVER_MAX_REPLIES replies, so the tight pass disproves each distance
        // and only the second pass, under MATE_SOLVER_WIDE_REPLIES, proves the mate.
        let fen = "1r2kb1r/ppp3pp/4q3/6N1/8/2Nn4/P4PPP/R1B1R1K1[BPPqbnppppp] w - - 0 19";
        assert_proves_suite_case(fen, 1_000_000);
    }

    #[test]
    fn nothing_to_prove() {
        // No mate by checks: the start position, and a root in check (the solver only attacks).
        let start = "rnbqkbnr/pppppppp/8/8/8/8/PPPPPPPP/RNBQKBNR[] w KQkq - 0 1";
        assert_eq!(solve(start, 100_000), None);
        assert_eq!(solve("4k3/8/8/8/8/8/4q3/4K3[Q] w - - 0 1", 100_000), None);
    }

    #[test]
    fn stops_when_told() {
        let fen = "1n3bBr/1p2p1pp/1q6/2p1k3/4P3/3P4/1P1P1PPP/2rQK2R[NNPPPrbbnp] w K - 0 15";
        let p = pos(fen);
        let moves: Vec<Move> = p.legal_moves().iter().copied().collect();
        let mut solver = MateSolver::new();
        assert_eq!(solver.solve(&p, &moves, u64::MAX, &mut |_| true), None);
        assert!(
            solver.nodes() <= 1024 + MAX_MOVES as u64,
            "{} nodes after the stop",
            solver.nodes()
        );
        assert_eq!(solver.solve(&p, &moves, 100, &mut |_| false), None);
        assert!(solver.nodes() <= 100 + MAX_MOVES as u64);
    }
}
