//! Pockets: the pieces a player holds in hand and may drop.

use std::fmt;

use super::types::{Color, Role};

/// The most pieces a position may hold, on the board and in both pockets together. Captures
/// and drops only move pieces between board and pockets, so a position that starts within
/// this budget stays within it, and no pocket count can ever exceed it either.
pub const MAX_PIECES: u32 = 64;

/// The most pieces of one role a pocket may hold: the whole budget.
pub const MAX_IN_HAND: u8 = MAX_PIECES as u8;

/// One player's pocket: a count per droppable role (pawn..queen).
#[derive(Copy, Clone, PartialEq, Eq, Hash, Default)]
pub struct Pocket([u8; 5]);

impl Pocket {
    /// An empty pocket.
    pub const EMPTY: Pocket = Pocket([0; 5]);

    /// How many pieces of `role` it holds (always 0 for the king).
    #[inline]
    pub const fn count(&self, role: Role) -> u8 {
        if role.index() < 5 {
            self.0[role.index()]
        } else {
            0
        }
    }

    /// Does it hold at least one `role`?
    #[inline]
    pub const fn has(&self, role: Role) -> bool {
        self.count(role) > 0
    }

    /// Total number of pieces held.
    #[inline]
    pub const fn total(&self) -> u32 {
        self.0[0] as u32 + self.0[1] as u32 + self.0[2] as u32 + self.0[3] as u32 + self.0[4] as u32
    }

    /// Is it empty?
    #[inline]
    pub const fn is_empty(&self) -> bool {
        self.total() == 0
    }

    /// Does it hold anything but pawns?
    #[inline]
    pub const fn has_pieces(&self) -> bool {
        self.0[1] | self.0[2] | self.0[3] | self.0[4] != 0
    }

    /// Adds one `role`, returning the count before. Counts stay within `MAX_IN_HAND` because
    /// positions are built within `MAX_PIECES` and play conserves the number of pieces.
    #[inline]
    pub fn add(&mut self, role: Role) -> u8 {
        let slot = &mut self.0[role.index()];
        let before = *slot;
        *slot = before.saturating_add(1);
        before
    }

    /// Removes one `role`, returning the count after. The caller checks `has(role)` first.
    #[inline]
    pub fn remove(&mut self, role: Role) -> u8 {
        let slot = &mut self.0[role.index()];
        *slot = slot.saturating_sub(1);
        *slot
    }

    /// Sets the count of `role` directly (FEN parsing, `holding`).
    pub fn set(&mut self, role: Role, n: u8) {
        self.0[role.index()] = n;
    }

    /// The roles it holds at least one of, pawn first.
    pub fn roles(&self) -> impl Iterator<Item = Role> + '_ {
        Role::DROPPABLE.into_iter().filter(|&r| self.has(r))
    }

    /// The pocket written as FEN letters for `color` (e.g. `QNPP` or `qnpp`), strongest first.
    pub fn fen_letters(&self, color: Color) -> String {
        let mut s = String::new();
        for role in Role::DROPPABLE.iter().rev() {
            for _ in 0..self.count(*role) {
                s.push(match color {
                    Color::White => role.upper_char(),
                    Color::Black => role.char(),
                });
            }
        }
        s
    }
}

impl fmt::Debug for Pocket {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "Pocket[{}]", self.fen_letters(Color::White))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn add_remove_count() {
        let mut p = Pocket::EMPTY;
        assert!(p.is_empty());
        assert_eq!(p.add(Role::Knight), 0);
        assert_eq!(p.add(Role::Knight), 1);
        assert_eq!(p.add(Role::Pawn), 0);
        assert_eq!(p.total(), 3);
        assert!(p.has_pieces());
        assert_eq!(p.fen_letters(Color::Black), "nnp");
        assert_eq!(p.remove(Role::Knight), 1);
        assert_eq!(p.roles().collect::<Vec<_>>(), vec![Role::Pawn, Role::Knight]);
        assert_eq!(p.count(Role::King), 0);
    }
}
