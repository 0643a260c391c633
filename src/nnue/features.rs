//! The network's input features: the one definition shared by inference, the trainer and
//! the training-data tools.
//!
//! Every position is seen from two perspectives, White's and Black's. From Black's the board
//! is mirrored vertically (`sq ^ 56`) and the colours swapped, so both perspectives read
//! "my pieces / their pieces, my side at the bottom" and share one weight matrix.
//!
//! - Board: `(rel_colour * 6 + role) * 64 + rel_sq` (768 features), `rel_colour` 0 for the
//!   perspective's own pieces and 1 for the opponent's, roles in the crate's order
//!   (pawn 0 .. king 5).
//! - Pockets: `768 + (rel_colour * 5 + role) * 16 + k` (160 features), count-encoded: feature
//!   `k` is on when at least `k + 1` pieces of that role are held, `k < 16`.
//!
//! A White-perspective index names a (colour, role, square) or (colour, role, k) absolutely;
//! [`mirror`] turns it into the Black-perspective index of the same thing. [`diff`] uses that
//! to compute the changes between two positions once for both perspectives.

use crate::core::{Color, Position, Role};

/// Board features: 2 colours x 6 roles x 64 squares.
pub const BOARD_FEATURES: usize = 2 * 6 * 64;
/// Pocket slots per colour and role: counts above this are clamped.
pub const POCKET_SLOTS: usize = 16;
/// Pocket features: 2 colours x 5 droppable roles x [`POCKET_SLOTS`].
pub const POCKET_FEATURES: usize = 2 * 5 * POCKET_SLOTS;
/// Total number of inputs per perspective.
pub const INPUTS: usize = BOARD_FEATURES + POCKET_FEATURES;
/// Most features one perspective can have on: one per piece (a position holds at most 64
/// pieces on the board and in the pockets together).
pub const MAX_ACTIVE: usize = 64;
/// Most feature additions (and, separately, removals) [`diff`] reports; a move changes at
/// most four board features (castling) and one pocket slot. Larger differences fall back to
/// a refresh.
pub const MAX_CHANGES: usize = 8;

/// The output bucket of a position with `board_pieces` pieces on the board (kings
/// included) for a network of `buckets` output layers: equal ranges of the piece count, so
/// with 8 buckets `(pieces - 1) / 4`. In crazyhouse no piece leaves the game, so the count
/// on the board also says how much is in the pockets.
#[inline]
pub const fn output_bucket(board_pieces: usize, buckets: usize) -> usize {
    if buckets <= 1 {
        return 0;
    }
    let b = board_pieces.saturating_sub(1) * buckets / 32;
    if b < buckets {
        b
    } else {
        buckets - 1
    }
}

/// The number of pieces on the board in a White-perspective feature list (its board
/// features), for [`output_bucket`].
#[inline]
pub fn board_pieces(white_features: &[u16]) -> usize {
    white_features.iter().filter(|&&f| (f as usize) < BOARD_FEATURES).count()
}

/// Relative colour: 0 when `color` is the perspective's own, 1 otherwise.
#[inline]
const fn rel_colour(perspective: Color, color: Color) -> usize {
    (perspective as usize) ^ (color as usize)
}

/// The index of a piece of `color` and `role` on square index `sq` (0 = a1 .. 63 = h8) seen
/// from `perspective`.
#[inline]
pub const fn board_feature(perspective: Color, color: Color, role: Role, sq: usize) -> usize {
    let rel_sq = match perspective {
        Color::White => sq,
        Color::Black => sq ^ 56,
    };
    (rel_colour(perspective, color) * 6 + role.index()) * 64 + rel_sq
}

/// The index of "`color` holds at least `k + 1` of `role`" seen from `perspective`
/// (`role` pawn..queen, `k < POCKET_SLOTS`).
#[inline]
pub const fn pocket_feature(perspective: Color, color: Color, role: Role, k: usize) -> usize {
    BOARD_FEATURES + (rel_colour(perspective, color) * 5 + role.index()) * POCKET_SLOTS + k
}

/// The index of the same thing with the board mirrored left to right (file a <-> h); pocket
/// features are unchanged. Used by the trainer to augment positions without castling rights.
#[inline]
pub const fn mirror_files(index: u16) -> u16 {
    if (index as usize) < BOARD_FEATURES {
        index ^ 7
    } else {
        index
    }
}

/// The Black-perspective index of the thing a White-perspective index names (and the other
/// way round: mirroring twice is the identity).
#[inline]
pub const fn mirror(white_index: usize) -> usize {
    if white_index < BOARD_FEATURES {
        // Swap the colour half (6 * 64 features each) and flip the square's rank.
        const HALF: usize = BOARD_FEATURES / 2;
        let swapped = if white_index < HALF { white_index + HALF } else { white_index - HALF };
        swapped ^ 56
    } else {
        let p = white_index - BOARD_FEATURES;
        let (c, rest) = (p / (5 * POCKET_SLOTS), p % (5 * POCKET_SLOTS));
        BOARD_FEATURES + (1 - c) * 5 * POCKET_SLOTS + rest
    }
}

/// Pocket count as it enters the network: the number of slots switched on.
#[inline]
fn slots(count: u8) -> usize {
    (count as usize).min(POCKET_SLOTS)
}

/// Calls `f` with every active feature of `pos` seen from `perspective`: board features in
/// colour, role, square order, then pocket features. At most [`MAX_ACTIVE`] calls.
pub fn for_each_active(pos: &Position, perspective: Color, mut f: impl FnMut(usize)) {
    for color in Color::ALL {
        for role in Role::ALL {
            for sq in pos.pieces(color, role) {
                f(board_feature(perspective, color, role, sq.index()));
            }
        }
    }
    for color in Color::ALL {
        for role in Role::DROPPABLE {
            for k in 0..slots(pos.hand(color).count(role)) {
                f(pocket_feature(perspective, color, role, k));
            }
        }
    }
}

/// A small fixed-capacity list of feature indices (no allocation).
#[derive(Clone, Copy, Debug)]
pub struct FeatureList<const N: usize> {
    len: usize,
    items: [u16; N],
}

impl<const N: usize> FeatureList<N> {
    /// An empty list.
    pub const fn new() -> Self {
        FeatureList { len: 0, items: [0; N] }
    }

    /// Appends `index`; false (and nothing stored) when full.
    #[inline]
    pub fn push(&mut self, index: usize) -> bool {
        if self.len == N {
            return false;
        }
        self.items[self.len] = index as u16;
        self.len += 1;
        true
    }

    /// The indices stored.
    #[inline]
    pub fn as_slice(&self) -> &[u16] {
        &self.items[..self.len]
    }

    /// Number of indices stored.
    #[inline]
    pub fn len(&self) -> usize {
        self.len
    }

    /// Is it empty?
    #[inline]
    pub fn is_empty(&self) -> bool {
        self.len == 0
    }
}

impl<const N: usize> Default for FeatureList<N> {
    fn default() -> Self {
        Self::new()
    }
}

/// The features active in `pos` from `perspective`, in [`for_each_active`] order.
pub fn active(pos: &Position, perspective: Color) -> FeatureList<MAX_ACTIVE> {
    let mut list = FeatureList::new();
    for_each_active(pos, perspective, |i| {
        // A valid position has at most MAX_ACTIVE pieces, so this never drops one.
        let _ = list.push(i);
    });
    list
}

/// The feature changes from one position to another, as White-perspective indices
/// ([`mirror`] gives Black's).
#[derive(Clone, Copy, Debug, Default)]
pub struct Changes {
    /// Features on in the second position and off in the first.
    pub added: FeatureList<MAX_CHANGES>,
    /// Features on in the first position and off in the second.
    pub removed: FeatureList<MAX_CHANGES>,
}

/// The features that differ between `from` and `to`, found by comparing the positions
/// themselves (each colour and role's bitboard, each pocket count), so it is right for every
/// kind of move in every variant whatever make-move does internally. `None` when more than
/// [`MAX_CHANGES`] features are added or removed (the caller then refreshes).
pub fn diff(from: &Position, to: &Position) -> Option<Changes> {
    let mut ch = Changes::default();
    let mut ok = true;
    for color in Color::ALL {
        for role in Role::ALL {
            let a = from.pieces(color, role);
            let b = to.pieces(color, role);
            let x = a ^ b;
            if x.is_empty() {
                continue;
            }
            for sq in x & a {
                ok &= ch.removed.push(board_feature(Color::White, color, role, sq.index()));
            }
            for sq in x & b {
                ok &= ch.added.push(board_feature(Color::White, color, role, sq.index()));
            }
        }
    }
    for color in Color::ALL {
        if from.hand(color) == to.hand(color) {
            continue;
        }
        for role in Role::DROPPABLE {
            let a = slots(from.hand(color).count(role));
            let b = slots(to.hand(color).count(role));
            for k in b..a {
                ok &= ch.removed.push(pocket_feature(Color::White, color, role, k));
            }
            for k in a..b {
                ok &= ch.added.push(pocket_feature(Color::White, color, role, k));
            }
        }
    }
    ok.then_some(ch)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::core::Variant;

    fn pos(fen: &str) -> Position {
        Position::from_fen(fen, Variant::Crazyhouse).expect("test FEN is valid")
    }

    fn sorted(p: &Position, c: Color) -> Vec<usize> {
        let mut v = Vec::new();
        for_each_active(p, c, |i| v.push(i));
        v.sort_unstable();
        v
    }

    #[test]
    fn kings_and_a_big_pocket_by_hand() {
        // White: Ke1 (square 4), 18 queens in hand (clamped to 16 slots); Black: Ke8 (60),
        // one pawn and one rook in hand.
        let p = pos("4k3/8/8/8/8/8/8/4K3[QQQQQQQQQQQQQQQQQQrp] w - - 0 1");
        // White's view: own king (0*6+5)*64+4 = 324; their king (1*6+5)*64+60 = 764.
        // Own queens 768 + (0*5+4)*16 + k = 832..848; their pawn 768 + 5*16 = 848, their
        // rook 768 + (5+3)*16 = 896.
        let mut white = vec![324, 764];
        white.extend(832..848);
        white.extend([848, 896]);
        assert_eq!(sorted(&p, Color::White), white);
        // Black's view (mirrored, colours swapped): own king on e8 -> e1: 5*64+4 = 324;
        // their king on e1 -> e8: (6+5)*64+60 = 764; their queens 768 + (5+4)*16 + k =
        // 912..928; own pawn 768, own rook 768 + 3*16 = 816.
        let mut black = vec![324, 764, 768, 816];
        black.extend(912..928);
        assert_eq!(sorted(&p, Color::Black), black);
    }

    #[test]
    fn mirroring_by_hand() {
        // A white pawn on b2 (9) and a black knight on g6 (46), kings on a1 (0) / h8 (63).
        let p = pos("7k/8/6n1/8/8/8/1P6/K7[] b - - 0 1");
        // White: P b2 = 9; K a1 = 5*64 = 320; their n g6 = (6+1)*64+46 = 494; their k h8 =
        // 11*64+63 = 767.
        assert_eq!(sorted(&p, Color::White), vec![9, 320, 494, 767]);
        // Black: own n g6 -> g3 (22): 64+22 = 86; own k h8 -> h1 (7): 320+7 = 327; their P
        // b2 -> b7 (49): 6*64+49 = 433; their K a1 -> a8 (56): 11*64+56 = 760.
        assert_eq!(sorted(&p, Color::Black), vec![86, 327, 433, 760]);
    }

    #[test]
    fn mirror_matches_the_black_perspective_everywhere() {
        let p = pos("r1bqk2r/pppp1ppp/2n1p3/4P3/1b1Pn3/2NB1N2/PPP2PPP/R1BQK2R[QNNpp] b KQkq - 0 1");
        let white = sorted(&p, Color::White);
        let mut mirrored: Vec<usize> = white.iter().map(|&i| mirror(i)).collect();
        mirrored.sort_unstable();
        assert_eq!(mirrored, sorted(&p, Color::Black));
        for i in 0..INPUTS {
            assert!(mirror(i) < INPUTS);
            assert_eq!(mirror(mirror(i)), i);
        }
    }

    #[test]
    fn diff_of_a_capture_into_the_pocket() {
        // exd5 captures a pawn: pawn e4 (28) off, pawn d5 (35) on, black pawn d5 off, and a
        // first pawn enters White's pocket (768 + 0).
        let a = pos("4k3/8/8/3p4/4P3/8/8/4K3[] w - - 0 1");
        let m =
            crate::core::Move::normal(crate::core::Square::new(28), crate::core::Square::new(35));
        let b = a.after(m);
        let ch = diff(&a, &b).expect("small change");
        let mut added = ch.added.as_slice().to_vec();
        let mut removed = ch.removed.as_slice().to_vec();
        added.sort_unstable();
        removed.sort_unstable();
        assert_eq!(added, vec![35, 768]);
        assert_eq!(removed, vec![28, 6 * 64 + 35]);
    }
}
