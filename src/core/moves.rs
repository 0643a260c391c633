//! `Move`, a 16-bit move with a distinct drop encoding, and `MoveList`, a fixed-capacity list
//! that never allocates.
//!
//! Layout of a move: bits 0-5 the destination, bits 6-11 the origin, bits 12-15 the kind.
//! A drop stores its destination in both square fields, a pattern no board move can have,
//! so `from_to()` gives drops slots of their own in from-to indexed tables.

use std::fmt;
use std::num::NonZeroU16;

use super::types::{Role, Square};

/// What kind of move a `Move` is.
#[derive(Copy, Clone, PartialEq, Eq, Debug)]
pub enum MoveKind {
    /// A piece moves (and maybe captures), no promotion.
    Normal,
    /// The king castles; the move is written king-from to king-to (`e1g1`).
    Castle,
    /// A pawn captures en passant.
    EnPassant,
    /// A pawn moves to the last rank and becomes the given role.
    Promotion(Role),
    /// A piece of the given role comes from the pocket onto an empty square.
    Drop(Role),
}

const KIND_NORMAL: u16 = 0;
const KIND_CASTLE: u16 = 1;
const KIND_EP: u16 = 2;
const KIND_PROMO: u16 = 4; // + role - 1 (knight..queen): 4..=7
const KIND_DROP: u16 = 8; // + role (pawn..queen): 8..=12

/// A move in 16 bits. Never zero, so `Option<Move>` is 16 bits too.
#[derive(Copy, Clone, PartialEq, Eq, Hash)]
pub struct Move(NonZeroU16);

const _: () = assert!(std::mem::size_of::<Option<Move>>() == 2);

impl Move {
    const fn pack(from: Square, to: Square, kind: u16) -> Move {
        let raw = (kind << 12) | ((from.index() as u16) << 6) | to.index() as u16;
        match NonZeroU16::new(raw) {
            Some(nz) => Move(nz),
            // Only a "normal move" a1a1 would be zero, and no generator produces one.
            None => panic!("a1a1 is not a move"),
        }
    }

    /// A normal move (quiet or capture) from one square to another.
    #[inline]
    pub const fn normal(from: Square, to: Square) -> Move {
        Move::pack(from, to, KIND_NORMAL)
    }

    /// Castling, written as the king's move.
    #[inline]
    pub const fn castle(king_from: Square, king_to: Square) -> Move {
        Move::pack(king_from, king_to, KIND_CASTLE)
    }

    /// An en-passant capture.
    #[inline]
    pub const fn en_passant(from: Square, to: Square) -> Move {
        Move::pack(from, to, KIND_EP)
    }

    /// A promotion to `role` (knight, bishop, rook or queen).
    #[inline]
    pub const fn promotion(from: Square, to: Square, role: Role) -> Move {
        debug_assert!(matches!(role, Role::Knight | Role::Bishop | Role::Rook | Role::Queen));
        Move::pack(from, to, KIND_PROMO + role as u16 - 1)
    }

    /// A drop of `role` onto `to`.
    #[inline]
    pub const fn drop(role: Role, to: Square) -> Move {
        debug_assert!(!matches!(role, Role::King));
        Move::pack(to, to, KIND_DROP + role as u16)
    }

    /// The raw 16 bits (never zero), for the transposition table.
    #[inline]
    pub const fn raw(self) -> u16 {
        self.0.get()
    }

    /// Rebuilds a move from `raw()`; `None` for zero or an unused kind. The result is only a
    /// well-formed move: whether it is legal in a position is for the position to say.
    #[inline]
    pub const fn from_raw(raw: u16) -> Option<Move> {
        let kind = raw >> 12;
        if kind == 3 || kind > KIND_DROP + 4 {
            return None;
        }
        let from = (raw >> 6) & 63;
        let to = raw & 63;
        if (kind >= KIND_DROP) != (from == to) {
            return None;
        }
        match NonZeroU16::new(raw) {
            Some(nz) => Some(Move(nz)),
            None => None,
        }
    }

    /// Destination square.
    #[inline]
    pub const fn to(self) -> Square {
        Square::new((self.0.get() & 63) as u8)
    }

    /// Origin square; for a drop, the destination again.
    #[inline]
    pub const fn from(self) -> Square {
        Square::new(((self.0.get() >> 6) & 63) as u8)
    }

    /// Origin and destination as one 12-bit index (drops: `to * 65`, distinct from every board
    /// move).
    #[inline]
    pub const fn from_to(self) -> usize {
        (self.0.get() & 0xfff) as usize
    }

    /// The kind of move.
    #[inline]
    pub const fn kind(self) -> MoveKind {
        let k = self.0.get() >> 12;
        match k {
            KIND_NORMAL => MoveKind::Normal,
            KIND_CASTLE => MoveKind::Castle,
            KIND_EP => MoveKind::EnPassant,
            4..=7 => MoveKind::Promotion(Role::ALL[(k - KIND_PROMO + 1) as usize]),
            _ => MoveKind::Drop(Role::ALL[((k - KIND_DROP) % 5) as usize]),
        }
    }

    /// Is it a drop?
    #[inline]
    pub const fn is_drop(self) -> bool {
        self.0.get() >> 12 >= KIND_DROP
    }

    /// The dropped role, for a drop.
    #[inline]
    pub const fn drop_role(self) -> Option<Role> {
        let k = self.0.get() >> 12;
        if k >= KIND_DROP {
            Some(Role::ALL[((k - KIND_DROP) % 5) as usize])
        } else {
            None
        }
    }

    /// The role a promotion creates.
    #[inline]
    pub const fn promotion_role(self) -> Option<Role> {
        let k = self.0.get() >> 12;
        if k >= KIND_PROMO && k < KIND_DROP {
            Some(Role::ALL[(k - KIND_PROMO + 1) as usize])
        } else {
            None
        }
    }

    /// Is it a castling move?
    #[inline]
    pub const fn is_castle(self) -> bool {
        self.0.get() >> 12 == KIND_CASTLE
    }

    /// Is it an en-passant capture?
    #[inline]
    pub const fn is_en_passant(self) -> bool {
        self.0.get() >> 12 == KIND_EP
    }
}

/// UCI / XBoard coordinate notation: `e2e4`, `e7e8q`, `e1g1`, `P@e4` (drop letters uppercase
/// for both colours, as every client expects).
impl fmt::Display for Move {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self.kind() {
            MoveKind::Drop(role) => write!(f, "{}@{}", role.upper_char(), self.to()),
            MoveKind::Promotion(role) => write!(f, "{}{}{}", self.from(), self.to(), role.char()),
            _ => write!(f, "{}{}", self.from(), self.to()),
        }
    }
}

impl fmt::Debug for Move {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        fmt::Display::fmt(self, f)
    }
}

/// The most moves a list holds. Crazyhouse positions can have several hundred legal moves
/// (the shared perft suite has one with 444), so this is well above any reachable count.
pub const MAX_MOVES: usize = 1024;

/// A list of moves on the stack.
#[derive(Clone)]
pub struct MoveList {
    moves: [Move; MAX_MOVES],
    len: usize,
}

impl MoveList {
    /// An empty list.
    #[inline]
    pub fn new() -> MoveList {
        MoveList { moves: [Move::normal(Square::A1, Square::H8); MAX_MOVES], len: 0 }
    }

    /// Appends a move. Capacity is far above any legal move count; a push past it is dropped
    /// (and asserted in debug builds) rather than panicking.
    #[inline]
    pub fn push(&mut self, m: Move) {
        debug_assert!(self.len < MAX_MOVES);
        if let Some(slot) = self.moves.get_mut(self.len) {
            *slot = m;
            self.len += 1;
        }
    }

    /// Number of moves.
    #[inline]
    pub fn len(&self) -> usize {
        self.len
    }

    /// Is it empty?
    #[inline]
    pub fn is_empty(&self) -> bool {
        self.len == 0
    }

    /// Empties the list.
    #[inline]
    pub fn clear(&mut self) {
        self.len = 0;
    }

    /// The moves as a slice.
    #[inline]
    pub fn as_slice(&self) -> &[Move] {
        &self.moves[..self.len]
    }

    /// The moves as a mutable slice.
    #[inline]
    pub fn as_mut_slice(&mut self) -> &mut [Move] {
        &mut self.moves[..self.len]
    }

    /// Does it contain `m`?
    pub fn contains(&self, m: Move) -> bool {
        self.as_slice().contains(&m)
    }

    /// Iterates over the moves.
    pub fn iter(&self) -> std::slice::Iter<'_, Move> {
        self.as_slice().iter()
    }
}

impl Default for MoveList {
    fn default() -> Self {
        MoveList::new()
    }
}

impl<'a> IntoIterator for &'a MoveList {
    type Item = &'a Move;
    type IntoIter = std::slice::Iter<'a, Move>;
    fn into_iter(self) -> Self::IntoIter {
        self.iter()
    }
}

impl fmt::Debug for MoveList {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_list().entries(self.iter()).finish()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn sq(s: &str) -> Square {
        Square::parse(s).unwrap()
    }

    #[test]
    fn encodings_round_trip() {
        let moves = [
            Move::normal(sq("e2"), sq("e4")),
            Move::castle(sq("e1"), sq("g1")),
            Move::en_passant(sq("e5"), sq("d6")),
            Move::promotion(sq("e7"), sq("e8"), Role::Queen),
            Move::promotion(sq("a2"), sq("b1"), Role::Knight),
            Move::drop(Role::Pawn, sq("e4")),
            Move::drop(Role::Queen, sq("h8")),
        ];
        for m in moves {
            assert_eq!(Move::from_raw(m.raw()), Some(m));
        }
        assert_eq!(moves[3].to_string(), "e7e8q");
        assert_eq!(moves[5].to_string(), "P@e4");
        assert_eq!(moves[5].kind(), MoveKind::Drop(Role::Pawn));
        assert_eq!(moves[4].promotion_role(), Some(Role::Knight));
        assert!(moves[6].is_drop());
        assert_eq!(Move::from_raw(0), None);
        assert_eq!(Move::from_raw(3 << 12 | 1), None);
    }

    #[test]
    fn drops_have_their_own_from_to_slots() {
        let d = Move::drop(Role::Knight, sq("f3"));
        for from in Square::all() {
            for to in Square::all() {
                if from != to {
                    assert_ne!(Move::normal(from, to).from_to(), d.from_to());
                }
            }
        }
    }
}
