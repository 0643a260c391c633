//! The node search: principal-variation alpha-beta (`Worker::search`, its steps numbered as
//! a reader walks them) and the quiescence search (`Worker::qsearch`).

use super::history::{bonus, piece_to};
use super::movepick::{ContKeys, MovePicker};
use super::{Shared, Worker};
use crate::core::{Move, Position, Role};
use crate::eval::evaluate;
use crate::params::*;
use crate::score::{DRAW, INFINITE, MATE, MATE_BOUND};
use crate::tt::{Bound, TtEntry};

/// How much shallower than a node a table entry may be and still stand for its score, where
/// a guess is good enough: the singular search's base score, and ProbCut's "already below".
const TT_DEPTH_SLACK: i32 = 3;

/// One ply of the search stack.
#[derive(Copy, Clone, Default)]
pub(super) struct Frame {
    eval: i32,
    /// Piece-to key of the move played from this ply (for continuation history).
    pt: Option<usize>,
    mv: Option<Move>,
    /// Was the move played from this ply quiet (no capture or promotion)?
    quiet: bool,
    excluded: Option<Move>,
    null: bool,
}

/// The kind of node a search call is at (compile-time, so each kind gets its own code).
pub(super) trait NodeType {
    const PV: bool;
    const ROOT: bool;
}
/// The root node.
pub(super) struct Root;
/// A principal-variation node.
struct Pv;
/// A zero-window node.
struct NonPv;
impl NodeType for Root {
    const PV: bool = true;
    const ROOT: bool = true;
}
impl NodeType for Pv {
    const PV: bool = true;
    const ROOT: bool = false;
}
impl NodeType for NonPv {
    const PV: bool = false;
    const ROOT: bool = false;
}

/// The late-move reduction for the `moves`th move at `depth` (both at least 1):
/// `LMR_BASE + ln(depth) * ln(moves) / LMR_DIVISOR`.
fn lmr_formula(depth: usize, moves: usize) -> i32 {
    let base = f64::from(LMR_BASE_X100.get()) / 100.0;
    let divisor = f64::from(LMR_DIVISOR_X100.get()) / 100.0;
    (base + (depth as f64).ln() * (moves as f64).ln() / divisor) as i32
}

/// Late-move reduction of the `moves`th move at `depth`, both capped at 63: from a table
/// computed once in normal builds.
#[cfg(not(feature = "tune-search"))]
#[inline]
fn lmr_reduction(depth: i32, moves: usize) -> i32 {
    use once_cell::sync::Lazy;
    static TABLE: Lazy<Box<[[i32; 64]; 64]>> = Lazy::new(|| {
        let mut t = Box::new([[0; 64]; 64]);
        for (d, row) in t.iter_mut().enumerate().skip(1) {
            for (m, r) in row.iter_mut().enumerate().skip(1) {
                *r = lmr_formula(d, m);
            }
        }
        t
    });
    TABLE[depth.min(63) as usize][moves.min(63)]
}

/// Late-move reduction of the `moves`th move at `depth`, both capped at 63: computed on each
/// call in the tuning build, where the two constants change between searches (the same
/// values as the table of normal builds).
#[cfg(feature = "tune-search")]
#[inline]
fn lmr_reduction(depth: i32, moves: usize) -> i32 {
    let (d, m) = (depth.clamp(0, 63) as usize, moves.min(63));
    if d == 0 || m == 0 {
        0
    } else {
        lmr_formula(d, m)
    }
}

/// Converts a score for storage: mate scores become relative to the stored node.
#[inline]
fn score_to_tt(s: i32, ply: usize) -> i32 {
    if s >= MATE_BOUND {
        s + ply as i32
    } else if s <= -MATE_BOUND {
        s - ply as i32
    } else {
        s
    }
}

/// Converts a stored score back to a root-relative one.
#[inline]
fn score_from_tt(s: i32, ply: usize) -> i32 {
    if s >= MATE_BOUND {
        s - ply as i32
    } else if s <= -MATE_BOUND {
        s + ply as i32
    } else {
        s
    }
}

impl Worker {
    /// The static evaluation of `pos`, the position at `ply`, from the side to move's view:
    /// the network's when the search has one (its accumulator is at `ply`), else the
    /// hand-written evaluation. Kept out of the mate range.
    #[inline]
    fn static_eval(&self, shared: &Shared, pos: &Position, ply: usize) -> i32 {
        match &shared.net {
            Some(net) => {
                net.evaluate(&self.accs[ply], pos.turn()).clamp(-MATE_BOUND + 1, MATE_BOUND - 1)
            }
            None => evaluate(pos),
        }
    }

    /// Sets the accumulator of `child`, the position at `ply + 1`, from that of `parent` at
    /// `ply` (nothing to do without a network).
    #[inline]
    fn update_acc(&mut self, shared: &Shared, ply: usize, parent: &Position, child: &Position) {
        if let Some(net) = &shared.net {
            let (done, next) = self.accs.split_at_mut(ply + 1);
            next[0].update_cached(net, &done[ply], parent, child, &mut self.bucket_cache);
        }
    }

    /// Plays `m` from `pos` at `ply` (see [`Worker::enter_child`]).
    fn make_move(&mut self, shared: &Shared, ply: usize, pos: &Position, m: Move) -> Position {
        self.enter_child(shared, ply, pos, pos.after(m), Some(m))
    }

    /// Readies `child`, reached from `pos` at `ply` by `m` (`None`: a null move), for its
    /// search: its table entry prefetched, its accumulator, the stack entry and the repetition
    /// key set (the caller pops the key after the child's search).
    fn enter_child(
        &mut self,
        shared: &Shared,
        ply: usize,
        pos: &Position,
        child: Position,
        m: Option<Move>,
    ) -> Position {
        shared.tt.prefetch(child.key());
        self.update_acc(shared, ply, pos, &child);
        self.stack[ply].mv = m;
        self.stack[ply].pt = m.map(|m| piece_to(pos, m));
        self.stack[ply].quiet = m.is_some_and(|m| !pos.is_tactical(m));
        self.keys.push(child.key());
        child
    }

    fn update_pv(&mut self, ply: usize, m: Move) {
        let child_len = self.pv_len[ply + 1].min(MAX_PLY);
        self.pv[ply][ply] = Some(m);
        for i in ply + 1..child_len {
            self.pv[ply][i] = self.pv[ply + 1][i];
        }
        self.pv_len[ply] = child_len.max(ply + 1);
    }

    fn cont_keys(&self, ply: usize) -> ContKeys {
        let prev1 = if ply >= 1 { self.stack[ply - 1].pt } else { None };
        let prev2 = if ply >= 2 { self.stack[ply - 2].pt } else { None };
        ContKeys([prev1, prev2])
    }

    #[allow(clippy::too_many_arguments)]
    pub(super) fn search<NT: NodeType>(
        &mut self,
        pos: &Position,
        mut alpha: i32,
        mut beta: i32,
        mut depth: i32,
        ply: usize,
        cut_node: bool,
        shared: &Shared,
    ) -> i32 {
        // Step 1. At the horizon, the quiescence search takes over.
        if NT::PV {
            self.pv_len[ply] = ply;
        }
        if depth <= 0 {
            return self.qsearch::<NT>(pos, alpha, beta, ply, 0, shared);
        }
        self.nodes += 1;
        if NT::PV && ply > self.seldepth {
            self.seldepth = ply;
        }
        // Step 2. Stop, maximum ply, repetition, and mate-distance pruning (not at the root).
        if !NT::ROOT {
            if self.should_stop(shared) {
                return DRAW;
            }
            if ply >= MAX_PLY {
                return if pos.in_check() { DRAW } else { self.static_eval(shared, pos, ply) };
            }
            if self.is_repetition() {
                return DRAW;
            }
            // Mate-distance pruning.
            alpha = alpha.max(-MATE + ply as i32);
            beta = beta.min(MATE - ply as i32 - 1);
            if alpha >= beta {
                return alpha;
            }
        }
        let in_check = pos.in_check();
        let excluded = self.stack[ply].excluded;
        let key = pos.key()
            ^ excluded.map_or(0, |m| (m.raw() as u64).wrapping_mul(0x9e37_79b9_7f4a_7c15));

        // Step 3. Transposition table: its move, and a cutoff at non-PV nodes.
        let (tt_hit, tt_slot) = shared.tt.probe(key);
        let tt_move = if NT::ROOT {
            Some(self.root_moves[self.pv_idx].mv)
        } else {
            tt_hit.and_then(|h| h.mv)
        };
        let tt_score = tt_hit.map(|h| score_from_tt(h.score, ply));
        if let (false, Some(h), Some(s)) = (NT::PV, tt_hit, tt_score) {
            if h.depth >= depth && excluded.is_none() && h.bound.cuts(s, alpha, beta) {
                return s;
            }
        }

        // Step 4. Static evaluation (stored in the table for the next visit).
        let eval = if in_check {
            -INFINITE
        } else if let Some(h) = tt_hit {
            let mut e = h.eval;
            // A stored score that bounds the true score beyond the static eval refines it.
            if let Some(s) = tt_score {
                if s.abs() < MATE_BOUND && h.bound.cuts(s, e, e) {
                    e = s;
                }
            }
            e
        } else {
            let e = self.static_eval(shared, pos, ply);
            if excluded.is_none() {
                tt_slot.store(
                    key,
                    TtEntry {
                        mv: None,
                        score: -INFINITE,
                        eval: e,
                        depth: TT_DEPTH_EVAL_ONLY,
                        bound: Bound::None,
                        pv: NT::PV,
                    },
                );
            }
            e
        };
        self.stack[ply].eval = eval;
        let improving = !in_check && ply >= 2 && eval > self.stack[ply - 2].eval;
        self.killers[ply + 1] = [None; 2];
        self.stack[ply + 1].excluded = None;

        if !NT::PV && !in_check && excluded.is_none() {
            // Step 5. Reverse futility pruning.
            if depth <= RFP_DEPTH.get()
                && eval.abs() < MATE_BOUND
                && eval - RFP_MARGIN.get() * depth + if improving { RFP_IMPROVING.get() } else { 0 }
                    >= beta
            {
                return eval;
            }
            // Step 6. Razoring.
            if depth <= RAZOR_DEPTH.get() && eval + RAZOR_MARGIN.get() * depth < alpha {
                let q = self.qsearch::<NonPv>(pos, alpha - 1, alpha, ply, 0, shared);
                if q < alpha {
                    return q;
                }
            }
            // Step 7. Null-move pruning. Passing gives the opponent a free drop as well as a free
            // move, so only with real material to spare (board pieces or pieces in hand). Not
            // where beta is a mated score: there the question is whether the side to move
            // escapes a mate, any eval passes `eval >= beta`, and the reduced search after the
            // pass is too shallow to find the mate, so the node would "escape" unsearched.
            let us = pos.turn();
            if cut_node
                && depth >= NMP_MIN_DEPTH.get()
                && eval >= beta
                && beta > -MATE_BOUND
                && ply >= 1
                && !self.stack[ply - 1].null
                && (pos.non_pawn_pieces(us).any() || pos.hand(us).has_pieces())
            {
                let r = NMP_BASE.get()
                    + depth / NMP_DEPTH_DIVISOR.get()
                    + ((eval - beta) / NMP_EVAL_DIVISOR.get()).min(3);
                let mut passed = pos.clone();
                passed.play_null();
                let child = self.enter_child(shared, ply, pos, passed, None);
                self.stack[ply].null = true;
                let score = -self.search::<NonPv>(
                    &child,
                    -beta,
                    -beta + 1,
                    depth - r,
                    ply + 1,
                    false,
                    shared,
                );
                self.keys.pop();
                self.stack[ply].null = false;
                if shared.stopped() {
                    return DRAW;
                }
                if score >= beta {
                    return if score >= MATE_BOUND { beta } else { score };
                }
            }
        }

        // Step 7b. ProbCut: a capture whose reduced search beats beta by a margin would very
        // likely beat beta at full depth too. Skipped when the table already holds a score
        // below that margin from a search nearly as deep as this one.
        let cont = self.cont_keys(ply);
        let pc_beta = beta + PROBCUT_MARGIN.get();
        let pc_depth = depth - PROBCUT_REDUCTION.get();
        let tt_below_pc_beta = matches!(
            (tt_hit, tt_score),
            (Some(h), Some(s)) if h.depth >= depth - TT_DEPTH_SLACK && s < pc_beta
        );
        if !NT::PV
            && !in_check
            && excluded.is_none()
            && depth >= PROBCUT_DEPTH.get()
            && beta.abs() < MATE_BOUND
            && !tt_below_pc_beta
        {
            let mut picker = MovePicker::qsearch(pos, tt_move, false, cont);
            while let Some(m) = picker.next(&mut self.move_buffers[ply], pos, &self.history) {
                if !pos.see_ge(m, pc_beta - eval, see_values!()) {
                    continue;
                }
                let child = self.make_move(shared, ply, pos, m);
                // The quiescence search first: most captures fail it, and it is cheap.
                let mut v =
                    -self.qsearch::<NonPv>(&child, -pc_beta, -pc_beta + 1, ply + 1, 0, shared);
                if v >= pc_beta {
                    v = -self.search::<NonPv>(
                        &child,
                        -pc_beta,
                        -pc_beta + 1,
                        pc_depth,
                        ply + 1,
                        !cut_node,
                        shared,
                    );
                }
                self.keys.pop();
                if shared.stopped() {
                    return DRAW;
                }
                if v >= pc_beta {
                    // Stored as a bound of this node from the reduced search that proved it.
                    tt_slot.store(
                        key,
                        TtEntry {
                            mv: Some(m),
                            score: score_to_tt(v, ply),
                            eval,
                            depth: pc_depth + 1,
                            bound: Bound::Lower,
                            pv: false,
                        },
                    );
                    return v;
                }
            }
        }

        // Step 8. Internal iterative reduction: without a TT move this node is probably not worth a
        // full-depth search.
        if depth >= IIR_DEPTH.get() && tt_move.is_none() && (NT::PV || cut_node) {
            depth -= 1;
        }

        // Step 9. The move loop: moves in the picker's order, each pruned, extended, searched.
        let counter = if ply >= 1 {
            self.stack[ply - 1].pt.and_then(|pt| self.history.counter(pt))
        } else {
            None
        };
        let mut picker = MovePicker::new(pos, tt_move, self.killers[ply], counter, cont);
        let mut best_score = -INFINITE;
        let mut best_move = None;
        let mut move_count = 0;
        let mut quiets = Tried::default();
        let mut captures = Tried::default();
        let lmp_limit = (LMP_BASE.get() + depth * depth) / if improving { 1 } else { 2 };

        while let Some(m) = picker.next(&mut self.move_buffers[ply], pos, &self.history) {
            if Some(m) == excluded {
                continue;
            }
            if NT::ROOT && !self.root_moves[self.pv_idx..].iter().any(|rm| rm.mv == m) {
                continue;
            }
            move_count += 1;
            let is_tactical = pos.is_tactical(m);
            let gives_check = pos.gives_check(m);
            let hist = if is_tactical { 0 } else { self.history.main(pos.turn(), m) };
            let reduction = lmr_reduction(depth, move_count);

            // Step 10. Pruning of late, quiet or losing moves.
            if !NT::ROOT && best_score > -MATE_BOUND {
                if !is_tactical {
                    if !NT::PV
                        && !in_check
                        && depth <= LMP_DEPTH.get()
                        && move_count as i32 > lmp_limit
                    {
                        picker.skip_quiets = true;
                    }
                    let lmr_depth = (depth - 1 - reduction).max(0);
                    if !in_check
                        && !gives_check
                        && lmr_depth <= FUTILITY_DEPTH.get()
                        && eval + FUTILITY_BASE.get() + FUTILITY_MARGIN.get() * lmr_depth <= alpha
                    {
                        continue;
                    }
                    if lmr_depth < HISTORY_PRUNE_DEPTH.get()
                        && hist < -HISTORY_PRUNE_MARGIN.get() * depth
                        && !gives_check
                    {
                        continue;
                    }
                    if depth <= SEE_PRUNE_DEPTH.get()
                        && !pos.see_ge(
                            m,
                            -SEE_QUIET_MARGIN.get() * lmr_depth * lmr_depth,
                            see_values!(),
                        )
                    {
                        continue;
                    }
                } else if depth <= SEE_PRUNE_DEPTH.get()
                    && !gives_check
                    && !pos.see_ge(m, -SEE_CAPTURE_MARGIN.get() * depth, see_values!())
                {
                    continue;
                }
            }

            // Step 11. Extensions: singular (the TT move alone holds), or a check.
            let mut extension = 0;
            if !NT::ROOT
                && depth >= SE_DEPTH.get()
                && Some(m) == tt_move
                && excluded.is_none()
                && ply < 2 * self.root_depth as usize
            {
                if let (Some(h), Some(s)) = (tt_hit, tt_score) {
                    if h.bound != Bound::Upper
                        && h.depth >= depth - TT_DEPTH_SLACK
                        && s.abs() < MATE_BOUND
                    {
                        let s_beta = s - SE_MARGIN.get() * depth;
                        self.stack[ply].excluded = Some(m);
                        let v = self.search::<NonPv>(
                            pos,
                            s_beta - 1,
                            s_beta,
                            (depth - 1) / 2,
                            ply,
                            cut_node,
                            shared,
                        );
                        self.stack[ply].excluded = None;
                        if v < s_beta {
                            extension =
                                if !NT::PV && v < s_beta - SE_DOUBLE_MARGIN.get() { 2 } else { 1 };
                        } else if s_beta >= beta {
                            return s_beta;
                        } else if s >= beta {
                            extension = -1;
                        }
                    }
                }
            } else if gives_check && ply < 2 * self.root_depth as usize {
                extension = 1;
            }

            // Step 12. Make the move.
            let new_depth = depth - 1 + extension;
            let nodes_before = self.nodes;
            let child = self.make_move(shared, ply, pos, m);

            let mut score = -INFINITE;
            // Step 13. Late moves get a reduced null-window search first; a full-depth null-window
            // search follows when that beats alpha, or for any move but a PV node's first.
            let full_depth_needed =
                if depth >= 2 && move_count > 1 + NT::ROOT as usize && (!is_tactical || !NT::PV) {
                    let mut r = reduction;
                    if !NT::PV {
                        r += 1;
                    }
                    if cut_node {
                        r += 1;
                    }
                    if !improving {
                        r += 1;
                    }
                    if gives_check {
                        r -= 1;
                    }
                    if Some(m) == self.killers[ply][0]
                        || Some(m) == self.killers[ply][1]
                        || Some(m) == counter
                    {
                        r -= 1;
                    }
                    if m.is_drop() && !gives_check && m.drop_role() != Some(Role::Pawn) {
                        r += LMR_QUIET_DROP.get();
                    }
                    if is_tactical {
                        // A capture that has often cut off here is reduced less.
                        let capture_hist = self.history.capture_of(pos, m);
                        r -= 1 + capture_hist / LMR_CAPTURE_HISTORY_DIVISOR.get();
                    } else {
                        r -= hist / LMR_HISTORY_DIVISOR.get();
                    }
                    let mut d = (new_depth - r.max(0)).clamp(1, new_depth.max(1));
                    // Alpha is a mate: only a shorter mate beats it, and a search shallower
                    // than that mate's remaining length cannot find it (it would fail low,
                    // with no re-search). So reduce no further than that length. A score above
                    // alpha is a mate at ply `MATE - alpha - 1` or sooner, so the mating move
                    // is made by ply `MATE - alpha - 2`: the child, at `ply + 1`, needs a depth
                    // of `MATE - alpha - 2 - ply` to make it.
                    if alpha >= MATE_BOUND {
                        d = d.max(new_depth.min(MATE - alpha - ply as i32 - 2));
                    }
                    score =
                        -self.search::<NonPv>(&child, -alpha - 1, -alpha, d, ply + 1, true, shared);
                    score > alpha && d < new_depth
                } else {
                    !NT::PV || move_count > 1
                };
            if full_depth_needed {
                score = -self.search::<NonPv>(
                    &child,
                    -alpha - 1,
                    -alpha,
                    new_depth,
                    ply + 1,
                    !cut_node,
                    shared,
                );
            }
            if NT::PV && (move_count == 1 || score > alpha) {
                score =
                    -self.search::<Pv>(&child, -beta, -alpha, new_depth, ply + 1, false, shared);
            }
            self.keys.pop();

            if shared.stopped() {
                return DRAW;
            }

            // Step 14. At the root, record the move's score and line.
            if NT::ROOT {
                let seldepth = self.seldepth;
                let pv_tail: Vec<Move> = (ply + 1..self.pv_len[ply + 1].min(MAX_PLY))
                    .filter_map(|i| self.pv[ply + 1][i])
                    .collect();
                if let Some(rm) = self.root_moves.iter_mut().find(|rm| rm.mv == m) {
                    rm.nodes += self.nodes - nodes_before;
                    if move_count == 1 || score > alpha {
                        rm.score = score;
                        rm.seldepth = seldepth;
                        rm.bound = if score >= beta {
                            Bound::Lower
                        } else if score <= alpha {
                            Bound::Upper
                        } else {
                            Bound::Exact
                        };
                        rm.pv.clear();
                        rm.pv.push(m);
                        rm.pv.extend(pv_tail);
                    } else {
                        rm.score = -INFINITE;
                    }
                }
            }

            // Step 15. A new best move: raise alpha, or cut off at beta.
            if score > best_score {
                best_score = score;
                if score > alpha {
                    best_move = Some(m);
                    if NT::PV && !NT::ROOT {
                        self.update_pv(ply, m);
                    }
                    if score >= beta {
                        break;
                    }
                    alpha = score;
                }
            }
            if Some(m) != best_move {
                if is_tactical {
                    captures.push(m);
                } else {
                    quiets.push(m);
                }
            }
        }

        // Step 16. No legal move: mate or stalemate (or, in a singular search, fail low).
        if move_count == 0 {
            return if excluded.is_some() {
                alpha
            } else if in_check {
                -MATE + ply as i32
            } else {
                DRAW
            };
        }

        // Step 17. Histories learn from the cutoff; the result goes into the table.
        if let Some(bm) = best_move {
            if best_score >= beta {
                self.update_histories(pos, ply, bm, depth, &quiets, &captures);
            }
        }

        // A node where every move fails low: the quiet move that led here was a good one for
        // the side that played it.
        if best_move.is_none() && excluded.is_none() && ply >= 1 && self.stack[ply - 1].quiet {
            if let (Some(prev), Some(pt)) = (self.stack[ply - 1].mv, self.stack[ply - 1].pt) {
                let b = bonus(depth);
                self.history.update_main(pos.turn().flip(), prev, b);
                for key in self.cont_keys(ply - 1).0.iter().flatten() {
                    self.history.update_continuation(*key, pt, b);
                }
            }
        }

        if excluded.is_none() && !(NT::ROOT && self.pv_idx > 0) {
            let bound = if best_score >= beta {
                Bound::Lower
            } else if NT::PV && best_move.is_some() {
                Bound::Exact
            } else {
                Bound::Upper
            };
            tt_slot.store(
                key,
                TtEntry {
                    mv: best_move,
                    score: score_to_tt(best_score, ply),
                    eval: if in_check { -INFINITE } else { eval },
                    depth,
                    bound,
                    pv: NT::PV,
                },
            );
        }
        best_score
    }

    fn update_histories(
        &mut self,
        pos: &Position,
        ply: usize,
        best: Move,
        depth: i32,
        quiets: &Tried,
        captures: &Tried,
    ) {
        let b = bonus(depth);
        let us = pos.turn();
        let cont = self.cont_keys(ply);
        let is_tactical = pos.is_tactical(best);
        if !is_tactical {
            if self.killers[ply][0] != Some(best) {
                self.killers[ply][1] = self.killers[ply][0];
                self.killers[ply][0] = Some(best);
            }
            if let Some(prev) = cont.0[0] {
                self.history.set_counter(prev, best);
            }
            let pt = piece_to(pos, best);
            self.history.update_main(us, best, b);
            for prev in cont.0.iter().flatten() {
                self.history.update_continuation(*prev, pt, b);
            }
            for &q in quiets.iter() {
                let qpt = piece_to(pos, q);
                self.history.update_main(us, q, -b);
                for prev in cont.0.iter().flatten() {
                    self.history.update_continuation(*prev, qpt, -b);
                }
            }
        } else if let Some(victim) = pos.captured_role(best) {
            self.history.update_capture(piece_to(pos, best), victim, b);
        }
        for &c in captures.iter() {
            if let Some(victim) = pos.captured_role(c) {
                self.history.update_capture(piece_to(pos, c), victim, -b);
            }
        }
    }

    fn qsearch<NT: NodeType>(
        &mut self,
        pos: &Position,
        mut alpha: i32,
        beta: i32,
        ply: usize,
        qply: i32,
        shared: &Shared,
    ) -> i32 {
        self.nodes += 1;
        if NT::PV {
            self.pv_len[ply] = ply;
            if ply > self.seldepth {
                self.seldepth = ply;
            }
        }
        if self.should_stop(shared) {
            return DRAW;
        }
        let in_check = pos.in_check();
        if ply >= MAX_PLY {
            return if in_check { DRAW } else { self.static_eval(shared, pos, ply) };
        }
        if self.is_repetition() {
            return DRAW;
        }
        let key = pos.key();
        let (tt_hit, tt_slot) = shared.tt.probe(key);
        let tt_score = tt_hit.map(|h| score_from_tt(h.score, ply));
        if let (false, Some(h), Some(s)) = (NT::PV, tt_hit, tt_score) {
            if h.bound.cuts(s, alpha, beta) {
                return s;
            }
        }

        let mut best_score;
        let eval;
        if in_check {
            best_score = -INFINITE;
            eval = -INFINITE;
        } else {
            eval = match tt_hit {
                Some(h) => h.eval,
                None => self.static_eval(shared, pos, ply),
            };
            best_score = eval;
            if best_score >= beta {
                if tt_hit.is_none() {
                    tt_slot.store(
                        key,
                        TtEntry {
                            mv: None,
                            score: score_to_tt(best_score, ply),
                            eval,
                            depth: TT_DEPTH_QSEARCH,
                            bound: Bound::Lower,
                            pv: false,
                        },
                    );
                }
                return best_score;
            }
            alpha = alpha.max(best_score);
        }

        let checks = !in_check && qply < QS_CHECK_PLIES.get();
        let mut picker =
            MovePicker::qsearch(pos, tt_hit.and_then(|h| h.mv), checks, self.cont_keys(ply));
        let mut best_move = None;
        let mut move_count = 0;
        while let Some(m) = picker.next(&mut self.move_buffers[ply], pos, &self.history) {
            move_count += 1;
            if best_score > -MATE_BOUND {
                if in_check {
                    // Once an evasion holds, further quiet ones (in crazyhouse: dozens of
                    // interposing drops) are not worth a quiescence search.
                    if qply >= QS_EVASION_PRUNE_PLY.get()
                        && move_count > QS_EVASIONS.get()
                        && !pos.is_capture(m)
                    {
                        continue;
                    }
                } else if !pos.see_ge(m, 0, see_values!()) {
                    // Outside check, only exchanges that do not lose material.
                    continue;
                }
            }
            let child = self.make_move(shared, ply, pos, m);
            let score = -self.qsearch::<NT>(&child, -beta, -alpha, ply + 1, qply + 1, shared);
            self.keys.pop();
            if shared.stopped() {
                return DRAW;
            }
            if score > best_score {
                best_score = score;
                if score > alpha {
                    best_move = Some(m);
                    if NT::PV {
                        self.update_pv(ply, m);
                    }
                    if score >= beta {
                        break;
                    }
                    alpha = score;
                }
            }
        }
        if in_check && move_count == 0 {
            return -MATE + ply as i32;
        }
        let bound = if best_score >= beta { Bound::Lower } else { Bound::Upper };
        tt_slot.store(
            key,
            TtEntry {
                mv: best_move,
                score: score_to_tt(best_score, ply),
                eval,
                depth: TT_DEPTH_QSEARCH,
                bound,
                pv: NT::PV,
            },
        );
        best_score
    }
}

/// Moves tried at a node without causing a cutoff (the first few get a history malus).
#[derive(Default)]
struct Tried {
    moves: [Option<Move>; 32],
    len: usize,
}

impl Tried {
    #[inline]
    fn push(&mut self, m: Move) {
        if let Some(slot) = self.moves.get_mut(self.len) {
            *slot = Some(m);
            self.len += 1;
        }
    }

    fn iter(&self) -> impl Iterator<Item = &Move> {
        self.moves[..self.len].iter().flatten()
    }
}
