//! `Bitboard`: a set of squares in one `u64`, bit `i` standing for square `i` (a1 = bit 0).

use std::fmt;
use std::ops::{BitAnd, BitAndAssign, BitOr, BitOrAssign, BitXor, BitXorAssign, Not};

use super::types::{Color, File, Rank, Square};

/// A set of squares.
#[derive(Copy, Clone, PartialEq, Eq, Hash, Default)]
pub struct Bitboard(pub u64);

impl Bitboard {
    /// No squares.
    pub const EMPTY: Bitboard = Bitboard(0);
    /// All 64 squares.
    pub const FULL: Bitboard = Bitboard(!0);
    /// The a-file.
    pub const FILE_A: Bitboard = Bitboard(0x0101_0101_0101_0101);
    /// The h-file.
    pub const FILE_H: Bitboard = Bitboard(0x8080_8080_8080_8080);
    /// The first rank.
    pub const RANK_1: Bitboard = Bitboard(0xff);
    /// The eighth rank.
    pub const RANK_8: Bitboard = Bitboard(0xff << 56);
    /// The first and eighth ranks.
    pub const BACK_RANKS: Bitboard = Bitboard(0xff | (0xff << 56));

    /// The set holding one square.
    #[inline]
    pub const fn from_square(sq: Square) -> Bitboard {
        Bitboard(1 << sq.index())
    }

    /// All squares of a file.
    #[inline]
    pub const fn file(file: File) -> Bitboard {
        Bitboard(Bitboard::FILE_A.0 << file.index())
    }

    /// All squares of a rank.
    #[inline]
    pub const fn rank(rank: Rank) -> Bitboard {
        Bitboard(Bitboard::RANK_1.0 << (8 * rank.index()))
    }

    /// A rank seen from `color`'s side: `relative_rank(Black, 0)` is the eighth rank.
    #[inline]
    pub const fn relative_rank(color: Color, rank: u8) -> Bitboard {
        Bitboard::rank(Rank::new(rank).relative_to(color))
    }

    /// The files next to `file`, not `file` itself.
    #[inline]
    pub const fn adjacent_files(file: File) -> Bitboard {
        let f = Bitboard::file(file).0;
        Bitboard(((f << 1) & !Bitboard::FILE_A.0) | ((f >> 1) & !Bitboard::FILE_H.0))
    }

    /// Does the set hold a square of `file`?
    #[inline]
    pub const fn contains_file(self, file: File) -> bool {
        self.0 & Bitboard::file(file).0 != 0
    }

    /// The ranks strictly in front of `rank`, seen from `color`'s side.
    #[inline]
    pub const fn ranks_ahead(color: Color, rank: Rank) -> Bitboard {
        let r = rank.index();
        match color {
            Color::White => Bitboard(if r >= 7 { 0 } else { !0u64 << (8 * (r + 1)) }),
            Color::Black => Bitboard(if r == 0 { 0 } else { !0u64 >> (8 * (8 - r)) }),
        }
    }

    /// The squares on `color`'s half of the board (ranks 1-4 for white).
    #[inline]
    pub const fn half(color: Color) -> Bitboard {
        match color {
            Color::White => Bitboard(0x0000_0000_ffff_ffff),
            Color::Black => Bitboard(0xffff_ffff_0000_0000),
        }
    }

    /// The raw bits.
    #[inline]
    pub const fn bits(self) -> u64 {
        self.0
    }

    /// Is the set empty?
    #[inline]
    pub const fn is_empty(self) -> bool {
        self.0 == 0
    }

    /// Does the set hold at least one square?
    #[inline]
    pub const fn any(self) -> bool {
        self.0 != 0
    }

    /// Does it hold `sq`?
    #[inline]
    pub const fn contains(self, sq: Square) -> bool {
        self.0 & (1 << sq.index()) != 0
    }

    /// Number of squares.
    #[inline]
    pub const fn count(self) -> u32 {
        self.0.count_ones()
    }

    /// Does it hold two or more squares?
    #[inline]
    pub const fn more_than_one(self) -> bool {
        self.0 & self.0.wrapping_sub(1) != 0
    }

    /// The lowest square, if any.
    #[inline]
    pub const fn first(self) -> Option<Square> {
        if self.0 == 0 {
            None
        } else {
            Some(Square::new(self.0.trailing_zeros() as u8))
        }
    }

    /// The only square of a one-square set (the lowest one otherwise).
    #[inline]
    pub const fn lsb(self) -> Square {
        debug_assert!(self.0 != 0);
        Square::new(self.0.trailing_zeros() as u8)
    }

    /// The set without `sq`.
    #[inline]
    pub const fn without(self, sq: Square) -> Bitboard {
        Bitboard(self.0 & !(1 << sq.index()))
    }

    /// The set with `sq`.
    #[inline]
    pub const fn with(self, sq: Square) -> Bitboard {
        Bitboard(self.0 | (1 << sq.index()))
    }

    /// Set intersection, usable in `const` context.
    #[inline]
    pub const fn and(self, other: Bitboard) -> Bitboard {
        Bitboard(self.0 & other.0)
    }

    /// Set union, usable in `const` context.
    #[inline]
    pub const fn or(self, other: Bitboard) -> Bitboard {
        Bitboard(self.0 | other.0)
    }

    /// Every square shifted one rank towards `color`'s opponent (white: up).
    #[inline]
    pub const fn shift_forward(self, color: Color) -> Bitboard {
        match color {
            Color::White => Bitboard(self.0 << 8),
            Color::Black => Bitboard(self.0 >> 8),
        }
    }

    /// Squares attacked by pawns of `color` standing on this set.
    #[inline]
    pub const fn pawn_attacks(self, color: Color) -> Bitboard {
        let not_a = self.0 & !Bitboard::FILE_A.0;
        let not_h = self.0 & !Bitboard::FILE_H.0;
        match color {
            Color::White => Bitboard((not_a << 7) | (not_h << 9)),
            Color::Black => Bitboard((not_a >> 9) | (not_h >> 7)),
        }
    }
}

impl Iterator for Bitboard {
    type Item = Square;

    #[inline]
    fn next(&mut self) -> Option<Square> {
        if self.0 == 0 {
            None
        } else {
            let sq = Square::new(self.0.trailing_zeros() as u8);
            self.0 &= self.0 - 1;
            Some(sq)
        }
    }

    #[inline]
    fn size_hint(&self) -> (usize, Option<usize>) {
        let n = self.0.count_ones() as usize;
        (n, Some(n))
    }
}

impl ExactSizeIterator for Bitboard {}

impl From<Square> for Bitboard {
    #[inline]
    fn from(sq: Square) -> Bitboard {
        Bitboard::from_square(sq)
    }
}

macro_rules! bit_op {
    ($tr:ident, $f:ident, $atr:ident, $af:ident, $op:tt) => {
        impl $tr for Bitboard {
            type Output = Bitboard;
            #[inline]
            fn $f(self, rhs: Bitboard) -> Bitboard {
                Bitboard(self.0 $op rhs.0)
            }
        }
        impl $atr for Bitboard {
            #[inline]
            fn $af(&mut self, rhs: Bitboard) {
                self.0 = self.0 $op rhs.0;
            }
        }
    };
}

bit_op!(BitAnd, bitand, BitAndAssign, bitand_assign, &);
bit_op!(BitOr, bitor, BitOrAssign, bitor_assign, |);
bit_op!(BitXor, bitxor, BitXorAssign, bitxor_assign, ^);

impl Not for Bitboard {
    type Output = Bitboard;
    #[inline]
    fn not(self) -> Bitboard {
        Bitboard(!self.0)
    }
}

impl fmt::Debug for Bitboard {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        writeln!(f, "Bitboard({:#018x})", self.0)?;
        for rank in (0..8).rev() {
            for file in 0..8 {
                let sq = Square::new(rank * 8 + file);
                f.write_str(if self.contains(sq) { " X" } else { " ." })?;
            }
            writeln!(f)?;
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn iteration_and_counts() {
        let b = Bitboard::from_square(Square::A1) | Bitboard::from_square(Square::H8);
        assert_eq!(b.count(), 2);
        assert!(b.more_than_one());
        assert_eq!(b.collect::<Vec<_>>(), vec![Square::A1, Square::H8]);
        assert_eq!(Bitboard::rank(Rank::new(7)), Bitboard::RANK_8);
        assert_eq!(Bitboard::relative_rank(Color::Black, 0), Bitboard::RANK_8);
    }

    #[test]
    fn file_and_rank_masks() {
        let a = File::new(0);
        let e = File::new(4);
        assert_eq!(Bitboard::adjacent_files(a), Bitboard::file(File::new(1)));
        assert_eq!(
            Bitboard::adjacent_files(e),
            Bitboard::file(File::new(3)) | Bitboard::file(File::new(5))
        );
        assert_eq!(Bitboard::ranks_ahead(Color::White, Rank::new(6)), Bitboard::RANK_8);
        assert_eq!(Bitboard::ranks_ahead(Color::Black, Rank::new(1)), Bitboard::RANK_1);
        assert_eq!(Bitboard::ranks_ahead(Color::White, Rank::new(7)), Bitboard::EMPTY);
    }

    #[test]
    fn pawn_attacks_stay_on_board() {
        let a2 = Bitboard::from_square(Square::new(8));
        assert_eq!(a2.pawn_attacks(Color::White), Bitboard::from_square(Square::new(17)));
        let h7 = Bitboard::from_square(Square::new(55));
        assert_eq!(h7.pawn_attacks(Color::Black), Bitboard::from_square(Square::new(46)));
    }
}
