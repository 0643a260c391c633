//! The three rule sets Madhouse plays, as switches on one position type.

use std::fmt;
use std::str::FromStr;

use super::bitboard::Bitboard;
use super::types::Color;

/// A drop-chess rule set. They differ only in what a captured promoted piece becomes and where
/// pawns may be dropped, as Fairy-Stockfish defines them.
#[derive(Copy, Clone, PartialEq, Eq, Hash, Debug, Default)]
pub enum Variant {
    /// Crazyhouse: a captured promoted piece goes to hand as a pawn; pawns are never dropped
    /// on the first or last rank.
    #[default]
    Crazyhouse,
    /// Loop chess: like crazyhouse, but a captured promoted piece keeps its rank in hand.
    Loop,
    /// Chessgi: loop chess, and pawns may also be dropped on their own first rank.
    Chessgi,
}

impl Variant {
    /// Every variant, in the order protocols list them.
    pub const ALL: [Variant; 3] = [Variant::Crazyhouse, Variant::Loop, Variant::Chessgi];

    /// The name protocols use (`crazyhouse`, `loop`, `chessgi`).
    pub const fn name(self) -> &'static str {
        match self {
            Variant::Crazyhouse => "crazyhouse",
            Variant::Loop => "loop",
            Variant::Chessgi => "chessgi",
        }
    }

    /// Does a captured promoted piece keep its rank when it goes to hand?
    #[inline]
    pub const fn drop_loop(self) -> bool {
        !matches!(self, Variant::Crazyhouse)
    }

    /// Squares where `color` may drop a pawn.
    #[inline]
    pub const fn pawn_drop_region(self, color: Color) -> Bitboard {
        let last = Bitboard::relative_rank(color, 7);
        match self {
            Variant::Chessgi => Bitboard(!last.0),
            _ => Bitboard(!Bitboard::BACK_RANKS.0),
        }
    }
}

impl fmt::Display for Variant {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

/// A variant name Madhouse does not play (the name as given, lowercased).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct UnknownVariant(pub String);

impl fmt::Display for UnknownVariant {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "unsupported variant '{}' (crazyhouse, loop, chessgi)", self.0)
    }
}

impl std::error::Error for UnknownVariant {}

impl FromStr for Variant {
    type Err = UnknownVariant;

    /// Accepts the protocol names in any case, plus `zh` for crazyhouse.
    fn from_str(s: &str) -> Result<Variant, UnknownVariant> {
        match s.trim().to_ascii_lowercase().as_str() {
            "crazyhouse" | "zh" => Ok(Variant::Crazyhouse),
            "loop" => Ok(Variant::Loop),
            "chessgi" => Ok(Variant::Chessgi),
            other => Err(UnknownVariant(other.to_string())),
        }
    }
}
