//! Basic board vocabulary: colours, piece roles, pieces, files, ranks and squares.
//!
//! Every domain concept is a newtype or a fieldless enum with `const fn` accessors, so a
//! square can never be confused with a count and a role never with a piece.

use std::fmt;

/// One of the two players.
#[derive(Copy, Clone, PartialEq, Eq, PartialOrd, Ord, Hash, Debug)]
#[repr(u8)]
pub enum Color {
    /// The side that moves first.
    White = 0,
    /// The side that moves second.
    Black = 1,
}

impl Color {
    /// Both colours, white first.
    pub const ALL: [Color; 2] = [Color::White, Color::Black];

    /// The opponent.
    #[inline]
    pub const fn flip(self) -> Color {
        match self {
            Color::White => Color::Black,
            Color::Black => Color::White,
        }
    }

    /// 0 for white, 1 for black: an array index.
    #[inline]
    pub const fn index(self) -> usize {
        self as usize
    }

    /// `+1` for white, `-1` for black, to turn a white-relative score into a side-relative one.
    #[inline]
    pub const fn sign(self) -> i32 {
        match self {
            Color::White => 1,
            Color::Black => -1,
        }
    }

    /// The FEN letter of the side to move (`w` or `b`).
    pub const fn fen_char(self) -> char {
        match self {
            Color::White => 'w',
            Color::Black => 'b',
        }
    }

    /// The colour's name, for messages such as `White mates`.
    pub const fn name(self) -> &'static str {
        match self {
            Color::White => "White",
            Color::Black => "Black",
        }
    }
}

impl std::ops::Not for Color {
    type Output = Color;
    #[inline]
    fn not(self) -> Color {
        self.flip()
    }
}

/// The kind of a piece, independent of colour.
///
/// The first five roles are the ones that can sit in a pocket, so `Role as usize` indexes
/// pocket counts directly.
#[derive(Copy, Clone, PartialEq, Eq, PartialOrd, Ord, Hash, Debug)]
#[repr(u8)]
pub enum Role {
    /// Pawn.
    Pawn = 0,
    /// Knight.
    Knight = 1,
    /// Bishop.
    Bishop = 2,
    /// Rook.
    Rook = 3,
    /// Queen.
    Queen = 4,
    /// King.
    King = 5,
}

impl Role {
    /// All six roles, pawn first.
    pub const ALL: [Role; 6] =
        [Role::Pawn, Role::Knight, Role::Bishop, Role::Rook, Role::Queen, Role::King];
    /// The roles a pocket can hold, pawn first.
    pub const DROPPABLE: [Role; 5] =
        [Role::Pawn, Role::Knight, Role::Bishop, Role::Rook, Role::Queen];
    /// The roles a pawn may promote to, strongest first (the order a search wants).
    pub const PROMOTIONS: [Role; 4] = [Role::Queen, Role::Knight, Role::Rook, Role::Bishop];

    /// 0 (pawn) to 5 (king): an array index.
    #[inline]
    pub const fn index(self) -> usize {
        self as usize
    }

    /// The role with the given index; `None` past the king.
    #[inline]
    pub const fn from_index(i: usize) -> Option<Role> {
        if i < 6 {
            Some(Role::ALL[i])
        } else {
            None
        }
    }

    /// Lowercase letter as in FEN for black (`p n b r q k`).
    pub const fn char(self) -> char {
        match self {
            Role::Pawn => 'p',
            Role::Knight => 'n',
            Role::Bishop => 'b',
            Role::Rook => 'r',
            Role::Queen => 'q',
            Role::King => 'k',
        }
    }

    /// Uppercase letter, as in SAN and in drops (`P@e4`).
    pub const fn upper_char(self) -> char {
        self.char().to_ascii_uppercase()
    }

    /// The role for a letter in either case.
    pub const fn from_char(c: char) -> Option<Role> {
        match c.to_ascii_lowercase() {
            'p' => Some(Role::Pawn),
            'n' => Some(Role::Knight),
            'b' => Some(Role::Bishop),
            'r' => Some(Role::Rook),
            'q' => Some(Role::Queen),
            'k' => Some(Role::King),
            _ => None,
        }
    }
}

/// A coloured piece, packed in one byte (`color * 6 + role`) so that `Option<Piece>` is one
/// byte too.
#[derive(Copy, Clone, PartialEq, Eq, Hash, Debug)]
#[repr(u8)]
pub enum Piece {
    /// White pawn.
    WhitePawn = 0,
    /// White knight.
    WhiteKnight,
    /// White bishop.
    WhiteBishop,
    /// White rook.
    WhiteRook,
    /// White queen.
    WhiteQueen,
    /// White king.
    WhiteKing,
    /// Black pawn.
    BlackPawn,
    /// Black knight.
    BlackKnight,
    /// Black bishop.
    BlackBishop,
    /// Black rook.
    BlackRook,
    /// Black queen.
    BlackQueen,
    /// Black king.
    BlackKing,
}

impl Piece {
    const TABLE: [Piece; 12] = [
        Piece::WhitePawn,
        Piece::WhiteKnight,
        Piece::WhiteBishop,
        Piece::WhiteRook,
        Piece::WhiteQueen,
        Piece::WhiteKing,
        Piece::BlackPawn,
        Piece::BlackKnight,
        Piece::BlackBishop,
        Piece::BlackRook,
        Piece::BlackQueen,
        Piece::BlackKing,
    ];

    /// The piece of the given colour and role.
    #[inline]
    pub const fn new(color: Color, role: Role) -> Piece {
        Piece::TABLE[color as usize * 6 + role as usize]
    }

    /// Its colour.
    #[inline]
    pub const fn color(self) -> Color {
        if (self as u8) < 6 {
            Color::White
        } else {
            Color::Black
        }
    }

    /// Its role.
    #[inline]
    pub const fn role(self) -> Role {
        Role::ALL[self as usize % 6]
    }

    /// 0..12: an array index.
    #[inline]
    pub const fn index(self) -> usize {
        self as usize
    }

    /// FEN letter: uppercase for white, lowercase for black.
    pub const fn char(self) -> char {
        match self.color() {
            Color::White => self.role().upper_char(),
            Color::Black => self.role().char(),
        }
    }

    /// The piece for a FEN letter.
    pub const fn from_char(c: char) -> Option<Piece> {
        match Role::from_char(c) {
            Some(role) => {
                let color = if c.is_ascii_uppercase() { Color::White } else { Color::Black };
                Some(Piece::new(color, role))
            }
            None => None,
        }
    }
}

/// A column of the board, `a` (0) to `h` (7).
#[derive(Copy, Clone, PartialEq, Eq, PartialOrd, Ord, Hash, Debug)]
pub struct File(u8);

impl File {
    /// File `a`.
    pub const A: File = File(0);
    /// File `h`.
    pub const H: File = File(7);

    /// The file with index `i` (0..8).
    #[inline]
    pub const fn new(i: u8) -> File {
        debug_assert!(i < 8);
        File(i & 7)
    }

    /// 0..8.
    #[inline]
    pub const fn index(self) -> usize {
        self.0 as usize
    }

    /// Its letter, `a` to `h`.
    pub const fn char(self) -> char {
        (b'a' + self.0) as char
    }

    /// The file for a letter `a`..`h`.
    pub const fn from_char(c: char) -> Option<File> {
        if c >= 'a' && c <= 'h' {
            Some(File(c as u8 - b'a'))
        } else {
            None
        }
    }
}

/// A row of the board, `1` (0) to `8` (7).
#[derive(Copy, Clone, PartialEq, Eq, PartialOrd, Ord, Hash, Debug)]
pub struct Rank(u8);

impl Rank {
    /// The first rank.
    pub const FIRST: Rank = Rank(0);
    /// The eighth rank.
    pub const EIGHTH: Rank = Rank(7);

    /// The rank with index `i` (0..8).
    #[inline]
    pub const fn new(i: u8) -> Rank {
        debug_assert!(i < 8);
        Rank(i & 7)
    }

    /// 0..8.
    #[inline]
    pub const fn index(self) -> usize {
        self.0 as usize
    }

    /// This rank as seen by `color`: white's 2nd rank is black's 7th.
    #[inline]
    pub const fn relative_to(self, color: Color) -> Rank {
        match color {
            Color::White => self,
            Color::Black => Rank(7 - self.0),
        }
    }

    /// Its digit, `1` to `8`.
    pub const fn char(self) -> char {
        (b'1' + self.0) as char
    }

    /// The rank for a digit `1`..`8`.
    pub const fn from_char(c: char) -> Option<Rank> {
        if c >= '1' && c <= '8' {
            Some(Rank(c as u8 - b'1'))
        } else {
            None
        }
    }
}

/// A square, `a1` = 0, `b1` = 1, ..., `h8` = 63.
#[derive(Copy, Clone, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct Square(u8);

impl Square {
    /// a1.
    pub const A1: Square = Square(0);
    /// c1.
    pub const C1: Square = Square(2);
    /// d1.
    pub const D1: Square = Square(3);
    /// e1.
    pub const E1: Square = Square(4);
    /// f1.
    pub const F1: Square = Square(5);
    /// g1.
    pub const G1: Square = Square(6);
    /// h1.
    pub const H1: Square = Square(7);
    /// a8.
    pub const A8: Square = Square(56);
    /// c8.
    pub const C8: Square = Square(58);
    /// d8.
    pub const D8: Square = Square(59);
    /// e8.
    pub const E8: Square = Square(60);
    /// f8.
    pub const F8: Square = Square(61);
    /// g8.
    pub const G8: Square = Square(62);
    /// h8.
    pub const H8: Square = Square(63);

    /// The square with index `i` (0..64); the index is masked so it can never be out of range.
    #[inline]
    pub const fn new(i: u8) -> Square {
        debug_assert!(i < 64);
        Square(i & 63)
    }

    /// The square at a file and rank.
    #[inline]
    pub const fn from_coords(file: File, rank: Rank) -> Square {
        Square(rank.0 * 8 + file.0)
    }

    /// All 64 squares, a1 first.
    pub fn all() -> impl Iterator<Item = Square> {
        (0..64).map(Square)
    }

    /// 0..64: an array index.
    #[inline]
    pub const fn index(self) -> usize {
        self.0 as usize
    }

    /// Its file.
    #[inline]
    pub const fn file(self) -> File {
        File(self.0 & 7)
    }

    /// Its rank.
    #[inline]
    pub const fn rank(self) -> Rank {
        Rank(self.0 >> 3)
    }

    /// The same square seen from the other side (a1 <-> a8).
    #[inline]
    pub const fn flip_vertical(self) -> Square {
        Square(self.0 ^ 56)
    }

    /// `a1`-style name relative to `color`: the square itself for white, mirrored for black.
    #[inline]
    pub const fn relative_to(self, color: Color) -> Square {
        match color {
            Color::White => self,
            Color::Black => self.flip_vertical(),
        }
    }

    /// The square `delta` steps away in index (e.g. +8 is one rank up); `None` off the board.
    #[inline]
    pub const fn offset(self, delta: i8) -> Option<Square> {
        let i = self.0 as i16 + delta as i16;
        if i >= 0 && i < 64 {
            Some(Square(i as u8))
        } else {
            None
        }
    }

    /// Chebyshev (king-move) distance.
    #[inline]
    pub const fn distance(self, other: Square) -> u32 {
        let df = (self.0 & 7).abs_diff(other.0 & 7);
        let dr = (self.0 >> 3).abs_diff(other.0 >> 3);
        (if df > dr { df } else { dr }) as u32
    }

    /// Parses `e4`; `None` for anything else.
    pub fn parse(s: &str) -> Option<Square> {
        let mut chars = s.chars();
        let file = File::from_char(chars.next()?)?;
        let rank = Rank::from_char(chars.next()?)?;
        if chars.next().is_some() {
            return None;
        }
        Some(Square::from_coords(file, rank))
    }
}

impl fmt::Display for Square {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}{}", self.file().char(), self.rank().char())
    }
}

impl fmt::Debug for Square {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        fmt::Display::fmt(self, f)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn piece_packing_round_trips() {
        for color in Color::ALL {
            for role in Role::ALL {
                let p = Piece::new(color, role);
                assert_eq!(p.color(), color);
                assert_eq!(p.role(), role);
                assert_eq!(Piece::from_char(p.char()), Some(p));
            }
        }
        assert_eq!(std::mem::size_of::<Option<Piece>>(), 1);
    }

    #[test]
    fn square_names() {
        assert_eq!(Square::parse("e4").unwrap().to_string(), "e4");
        assert_eq!(Square::parse("a1"), Some(Square::A1));
        assert_eq!(Square::parse("h8"), Some(Square::H8));
        assert_eq!(Square::parse("i1"), None);
        assert_eq!(Square::parse("e44"), None);
        assert_eq!(Square::A1.distance(Square::H8), 7);
    }
}
