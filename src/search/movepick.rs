//! Staged move picker: the moves of a node in the order the search wants them, generated
//! lazily so that a cutoff by the first moves saves generating the rest.
//!
//! Main search: TT move, good captures (SEE ≥ 0, best victims first), killers, counter move,
//! quiet moves and drops by history, bad captures. In check: TT move, then every evasion
//! (drops that block included). Quiescence: TT move, captures, and at its first plies drops
//! that give check.

use super::history::{piece_to, History};
use crate::core::{
    Move, MoveSink, Position, Square, GEN_CAPTURES, GEN_DROPS, GEN_QUIETS, MAX_MOVES,
};
use crate::params::see_values;

/// A move with its ordering score.
#[derive(Copy, Clone)]
pub struct ExtMove {
    mv: Move,
    score: i32,
}

/// Storage for one node's moves. The search keeps one per ply and lends it to that ply's
/// picker, so that no node allocates, zeroes or copies a move array.
pub struct MoveBuffer([ExtMove; MAX_MOVES]);

impl MoveBuffer {
    /// One buffer per ply, for a whole search stack.
    pub fn stack(plies: usize) -> Vec<MoveBuffer> {
        let filler = ExtMove { mv: Move::normal(Square::A1, Square::H8), score: 0 };
        (0..plies).map(|_| MoveBuffer([filler; MAX_MOVES])).collect()
    }
}

/// Appends generated moves to a buffer.
struct Sink<'a> {
    buf: &'a mut MoveBuffer,
    len: &'a mut usize,
}

impl MoveSink for Sink<'_> {
    #[inline]
    fn push(&mut self, m: Move) {
        if let Some(slot) = self.buf.0.get_mut(*self.len) {
            *slot = ExtMove { mv: m, score: 0 };
            *self.len += 1;
        }
    }
}

#[derive(Copy, Clone, PartialEq, Eq, PartialOrd, Ord, Debug)]
enum Stage {
    MainTt,
    GenCaptures,
    GoodCaptures,
    Killer0,
    Killer1,
    Counter,
    GenQuiets,
    Quiets,
    BadCaptures,
    EvasionTt,
    GenEvasions,
    Evasions,
    QsTt,
    QsGenCaptures,
    QsCaptures,
    QsGenChecks,
    QsChecks,
    Done,
}

/// Continuation-history context: the piece-to keys of the previous two plies, if any.
#[derive(Copy, Clone, Default)]
pub struct ContKeys(pub [Option<usize>; 2]);

/// Yields the moves of one node, best first.
pub struct MovePicker {
    stage: Stage,
    tt_move: Option<Move>,
    killers: [Option<Move>; 2],
    counter: Option<Move>,
    len: usize,
    cur: usize,
    bad_end: usize,
    quiet_start: usize,
    cont: ContKeys,
    /// When set, the picker stops returning quiet moves (late-move pruning).
    pub skip_quiets: bool,
}

impl MovePicker {
    fn with(stage: Stage, tt_move: Option<Move>, cont: ContKeys) -> MovePicker {
        MovePicker {
            stage,
            tt_move,
            killers: [None; 2],
            counter: None,
            len: 0,
            cur: 0,
            bad_end: 0,
            quiet_start: 0,
            cont,
            skip_quiets: false,
        }
    }

    /// Picker for a main-search node.
    pub fn new(
        pos: &Position,
        tt_move: Option<Move>,
        killers: [Option<Move>; 2],
        counter: Option<Move>,
        cont: ContKeys,
    ) -> MovePicker {
        let tt = tt_move.filter(|&m| pos.is_legal(m));
        let stage = if pos.in_check() { Stage::EvasionTt } else { Stage::MainTt };
        let mut p = MovePicker::with(stage, tt, cont);
        p.killers = killers;
        p.counter = counter;
        p
    }

    /// Picker for a quiescence node; `checks` asks for checking drops too.
    pub fn qsearch(
        pos: &Position,
        tt_move: Option<Move>,
        checks: bool,
        cont: ContKeys,
    ) -> MovePicker {
        let in_check = pos.in_check();
        let tt = tt_move.filter(|&m| pos.is_legal(m) && (in_check || pos.is_tactical(m)));
        let stage = if in_check { Stage::EvasionTt } else { Stage::QsTt };
        let mut p = MovePicker::with(stage, tt, cont);
        p.skip_quiets = !checks;
        p
    }

    fn score_captures(
        &mut self,
        buf: &mut MoveBuffer,
        pos: &Position,
        hist: &History,
        from: usize,
    ) {
        let values = see_values!();
        for e in &mut buf.0[from..self.len] {
            let victim = pos.captured_role(e.mv);
            let promo = e.mv.promotion_role().map_or(0, |r| values[r.index()]);
            let v = victim.map_or(0, |r| values[r.index()]);
            e.score = (v + promo) * 16 + hist.capture_of_victim(pos, e.mv, victim);
        }
    }

    fn score_quiets(&mut self, buf: &mut MoveBuffer, pos: &Position, hist: &History, from: usize) {
        let us = pos.turn();
        for e in &mut buf.0[from..self.len] {
            let pt = piece_to(pos, e.mv);
            let mut s = hist.main(us, e.mv);
            for prev in self.cont.0.iter().flatten() {
                s += hist.continuation(*prev, pt);
            }
            e.score = s;
        }
    }

    fn score_evasions(&mut self, buf: &mut MoveBuffer, pos: &Position, hist: &History) {
        let us = pos.turn();
        let values = see_values!();
        for e in &mut buf.0[..self.len] {
            e.score = match pos.captured_role(e.mv) {
                Some(r) => {
                    (1 << 24) + values[r.index()] * 16 - values[pos.moved_role(e.mv).index()] / 16
                }
                None => {
                    let pt = piece_to(pos, e.mv);
                    let mut s = hist.main(us, e.mv);
                    for prev in self.cont.0.iter().flatten() {
                        s += hist.continuation(*prev, pt);
                    }
                    s
                }
            };
        }
    }

    /// Moves the best-scored move of `[cur, end)` to `cur` and returns it.
    #[inline]
    fn select_best(&mut self, buf: &mut MoveBuffer, end: usize) -> Option<ExtMove> {
        if self.cur >= end {
            return None;
        }
        let mut best = self.cur;
        for i in self.cur + 1..end {
            if buf.0[i].score > buf.0[best].score {
                best = i;
            }
        }
        buf.0.swap(self.cur, best);
        let e = buf.0[self.cur];
        self.cur += 1;
        Some(e)
    }

    fn is_special(&self, m: Move) -> bool {
        Some(m) == self.tt_move
            || Some(m) == self.killers[0]
            || Some(m) == self.killers[1]
            || Some(m) == self.counter
    }

    /// The next move, or `None` when the node is exhausted.
    pub fn next(&mut self, buf: &mut MoveBuffer, pos: &Position, hist: &History) -> Option<Move> {
        loop {
            match self.stage {
                Stage::MainTt | Stage::EvasionTt | Stage::QsTt => {
                    self.stage = match self.stage {
                        Stage::MainTt => Stage::GenCaptures,
                        Stage::EvasionTt => Stage::GenEvasions,
                        _ => Stage::QsGenCaptures,
                    };
                    if self.tt_move.is_some() {
                        return self.tt_move;
                    }
                }
                Stage::GenCaptures | Stage::QsGenCaptures => {
                    pos.generate::<GEN_CAPTURES, _>(&mut Sink { buf, len: &mut self.len });
                    self.score_captures(buf, pos, hist, 0);
                    self.stage = if self.stage == Stage::GenCaptures {
                        Stage::GoodCaptures
                    } else {
                        Stage::QsCaptures
                    };
                }
                Stage::GoodCaptures => {
                    let end = self.len;
                    match self.select_best(buf, end) {
                        Some(e) => {
                            if Some(e.mv) == self.tt_move {
                                continue;
                            }
                            if pos.see_ge(e.mv, 0, see_values!()) {
                                return Some(e.mv);
                            }
                            // Keep the losing capture for later, at the front.
                            buf.0[self.bad_end] = e;
                            self.bad_end += 1;
                        }
                        None => {
                            self.quiet_start = self.len;
                            self.stage = Stage::Killer0;
                        }
                    }
                }
                Stage::Killer0 | Stage::Killer1 | Stage::Counter => {
                    let m = match self.stage {
                        Stage::Killer0 => self.killers[0],
                        Stage::Killer1 => self.killers[1],
                        _ => self
                            .counter
                            .filter(|&c| Some(c) != self.killers[0] && Some(c) != self.killers[1]),
                    };
                    self.stage = match self.stage {
                        Stage::Killer0 => Stage::Killer1,
                        Stage::Killer1 => Stage::Counter,
                        _ => Stage::GenQuiets,
                    };
                    if self.skip_quiets {
                        continue;
                    }
                    if let Some(m) = m {
                        if Some(m) != self.tt_move && !pos.is_tactical(m) && pos.is_legal(m) {
                            return Some(m);
                        }
                    }
                }
                Stage::GenQuiets => {
                    self.stage = Stage::Quiets;
                    if !self.skip_quiets {
                        let start = self.len;
                        pos.generate::<{ GEN_QUIETS | GEN_DROPS }, _>(&mut Sink {
                            buf,
                            len: &mut self.len,
                        });
                        self.score_quiets(buf, pos, hist, start);
                        self.cur = start;
                        // Sort once: quiet lists in crazyhouse run to hundreds of drops.
                        buf.0[start..self.len].sort_unstable_by_key(|e| std::cmp::Reverse(e.score));
                    }
                }
                Stage::Quiets => {
                    if !self.skip_quiets && self.cur < self.len {
                        let m = buf.0[self.cur].mv;
                        self.cur += 1;
                        if self.is_special(m) {
                            continue;
                        }
                        return Some(m);
                    }
                    self.stage = Stage::BadCaptures;
                    self.cur = 0;
                }
                Stage::BadCaptures => {
                    if self.cur < self.bad_end {
                        let m = buf.0[self.cur].mv;
                        self.cur += 1;
                        return Some(m);
                    }
                    self.stage = Stage::Done;
                }
                Stage::GenEvasions => {
                    pos.generate::<{ GEN_CAPTURES | GEN_QUIETS | GEN_DROPS }, _>(&mut Sink {
                        buf,
                        len: &mut self.len,
                    });
                    self.score_evasions(buf, pos, hist);
                    self.stage = Stage::Evasions;
                }
                Stage::Evasions => {
                    let end = self.len;
                    match self.select_best(buf, end) {
                        Some(e) if Some(e.mv) == self.tt_move => continue,
                        Some(e) => return Some(e.mv),
                        None => self.stage = Stage::Done,
                    }
                }
                Stage::QsCaptures => {
                    let end = self.len;
                    match self.select_best(buf, end) {
                        Some(e) if Some(e.mv) == self.tt_move => continue,
                        Some(e) => return Some(e.mv),
                        None => self.stage = Stage::QsGenChecks,
                    }
                }
                Stage::QsGenChecks => {
                    self.stage = Stage::Done;
                    if !self.skip_quiets {
                        let start = self.len;
                        pos.generate_checking_drops(&mut Sink { buf, len: &mut self.len });
                        self.score_quiets(buf, pos, hist, start);
                        self.cur = start;
                        self.stage = Stage::QsChecks;
                    }
                }
                Stage::QsChecks => {
                    let end = self.len;
                    match self.select_best(buf, end) {
                        Some(e) if Some(e.mv) == self.tt_move => continue,
                        Some(e) => return Some(e.mv),
                        None => self.stage = Stage::Done,
                    }
                }
                Stage::Done => return None,
            }
        }
    }
}
