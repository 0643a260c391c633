//! Move-ordering statistics: killers, main (butterfly) history, capture history,
//! continuation history and counter moves.
//!
//! Drops and board moves never share a slot: the butterfly table gives drops their own
//! `(role, to)` rows past the 4096 from-to slots, and piece-to keys give a dropped piece an
//! index of its own (a "piece from the pocket").

use crate::core::{Color, Move, Position, Role};
use crate::params::{HISTORY_BONUS_MAX, HISTORY_BONUS_MUL, HISTORY_BONUS_SUB, HISTORY_MAX};

/// Number of butterfly slots: 4096 from-to pairs plus 5 × 64 drop slots.
const BUTTERFLY: usize = 4096 + 5 * 64;
/// Number of piece-to keys: 12 board pieces plus 10 pocket pieces, times 64 squares.
pub const PIECE_TO: usize = 22 * 64;

/// The butterfly slot of a move.
#[inline]
fn butterfly(m: Move) -> usize {
    match m.drop_role() {
        Some(r) => 4096 + r.index() * 64 + m.to().index(),
        None => m.from_to(),
    }
}

/// The piece-to key of a move about to be played in `pos`: which piece lands where, with
/// dropped pieces counted apart from moved ones.
#[inline]
pub fn piece_to(pos: &Position, m: Move) -> usize {
    let to = m.to().index();
    match m.drop_role() {
        Some(r) => (12 + pos.turn().index() * 5 + r.index()) * 64 + to,
        None => {
            let p = pos.piece_at(m.from()).map_or(0, |p| p.index());
            p * 64 + to
        }
    }
}

/// The history bonus for a cutoff at `depth`.
#[inline]
pub fn bonus(depth: i32) -> i32 {
    (HISTORY_BONUS_MUL.get() * depth - HISTORY_BONUS_SUB.get()).clamp(0, HISTORY_BONUS_MAX.get())
}

#[inline]
fn gravity(entry: &mut i16, delta: i32) {
    let e = *entry as i32;
    let v = e + delta - e * delta.abs() / HISTORY_MAX.get();
    *entry = v.clamp(-HISTORY_MAX.get(), HISTORY_MAX.get()) as i16;
}

/// All ordering statistics of one search thread.
pub struct History {
    main: [[i16; BUTTERFLY]; 2],
    capture: Vec<[[i16; 6]; 64]>, // [moved piece 0..22][to][captured role]
    continuation: Vec<[i16; PIECE_TO]>, // [previous piece-to][current piece-to]
    counter: Vec<Option<Move>>,   // [previous piece-to]
}

impl History {
    /// Fresh, zeroed tables (on the heap: the continuation table is about 4 MB).
    pub fn new() -> Box<History> {
        Box::new(History {
            main: [[0; BUTTERFLY]; 2],
            capture: vec![[[0; 6]; 64]; 22],
            continuation: vec![[0; PIECE_TO]; PIECE_TO],
            counter: vec![None; PIECE_TO],
        })
    }

    /// Zeroes everything (new game).
    pub fn clear(&mut self) {
        self.main = [[0; BUTTERFLY]; 2];
        for c in &mut self.capture {
            *c = [[0; 6]; 64];
        }
        for c in &mut self.continuation {
            c.fill(0);
        }
        self.counter.fill(None);
    }

    /// Butterfly history of a quiet move (or drop) by `color`.
    #[inline]
    pub fn main(&self, color: Color, m: Move) -> i32 {
        self.main[color.index()][butterfly(m)] as i32
    }

    /// Adds `delta` to the butterfly history of `m`.
    #[inline]
    pub fn update_main(&mut self, color: Color, m: Move, delta: i32) {
        gravity(&mut self.main[color.index()][butterfly(m)], delta);
    }

    /// Capture history of moving piece-to key `pt` capturing `victim`.
    #[inline]
    pub fn capture(&self, pt: usize, victim: Role) -> i32 {
        self.capture[pt / 64][pt % 64][victim.index()] as i32
    }

    /// Capture history of `m` played in `pos`; 0 for a move that captures nothing.
    #[inline]
    pub fn capture_of(&self, pos: &Position, m: Move) -> i32 {
        self.capture_of_victim(pos, m, pos.captured_role(m))
    }

    /// [`Self::capture_of`] for a caller that already knows what `m` captures
    /// (`pos.captured_role(m)`), so that it is not looked up twice.
    #[inline]
    pub fn capture_of_victim(&self, pos: &Position, m: Move, victim: Option<Role>) -> i32 {
        victim.map_or(0, |v| self.capture(piece_to(pos, m), v))
    }

    /// Adds `delta` to a capture-history entry.
    #[inline]
    pub fn update_capture(&mut self, pt: usize, victim: Role, delta: i32) {
        gravity(&mut self.capture[pt / 64][pt % 64][victim.index()], delta);
    }

    /// Continuation history of `pt` following `prev` (a piece-to key of an earlier ply).
    #[inline]
    pub fn continuation(&self, prev: usize, pt: usize) -> i32 {
        self.continuation[prev][pt] as i32
    }

    /// Adds `delta` to a continuation-history entry.
    #[inline]
    pub fn update_continuation(&mut self, prev: usize, pt: usize, delta: i32) {
        gravity(&mut self.continuation[prev][pt], delta);
    }

    /// The counter move stored for the previous move's piece-to key.
    #[inline]
    pub fn counter(&self, prev: usize) -> Option<Move> {
        self.counter[prev]
    }

    /// Stores a counter move.
    #[inline]
    pub fn set_counter(&mut self, prev: usize, m: Move) {
        self.counter[prev] = Some(m);
    }
}
