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
//!
//! These `INPUTS` indices are the *base* features. A network with king buckets
//! ([`InputLayout`]) has one copy of the board features per bucket of the perspective's own
//! king square (seen from that perspective, so `sq ^ 56` for Black, and not mirrored left to
//! right, so that every bucket of a new network can start as a copy of a plain one); the
//! pocket features are either shared by every bucket or bucketed too. The row of the weight
//! matrix a base feature uses is [`InputLayout::row`]; with one bucket it is the base index.

use crate::core::{Bitboard, Color, Pocket, Position, Role};

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

/// Most king buckets a layout has ([`KING_BUCKET_COUNTS`]).
pub const MAX_KING_BUCKETS: usize = 32;

/// The king-bucket counts with a predefined table, the ones a network file may declare.
pub const KING_BUCKET_COUNTS: [usize; 5] = [1, 4, 8, 16, 32];

/// One bucket for every king square: the plain network.
const KING_BUCKETS_1: [u8; 64] = [0; 64];

// The tables map the perspective's own king square (a1 = 0 .. h8 = 63, rank 1 being the
// perspective's back rank) to a bucket, one line per rank from rank 1 up. A crazyhouse king
// spends most of the game on its first two ranks, so those get the finest split; files are
// told apart (no left-right mirroring) because castled kings differ by wing. The counts are
// what `madhouse train --king-buckets` offers; which one plays best is measured, not assumed.

/// 4 buckets: the back rank's queen side and king side, the rest of the board's halves.
#[rustfmt::skip]
const KING_BUCKETS_4: [u8; 64] = [
    0, 0, 0, 0, 1, 1, 1, 1,
    2, 2, 2, 2, 3, 3, 3, 3,
    2, 2, 2, 2, 3, 3, 3, 3,
    2, 2, 2, 2, 3, 3, 3, 3,
    2, 2, 2, 2, 3, 3, 3, 3,
    2, 2, 2, 2, 3, 3, 3, 3,
    2, 2, 2, 2, 3, 3, 3, 3,
    2, 2, 2, 2, 3, 3, 3, 3,
];

/// 8 buckets: the back rank in pairs of files, rank 2 in halves, the rest in halves.
#[rustfmt::skip]
const KING_BUCKETS_8: [u8; 64] = [
    0, 0, 1, 1, 2, 2, 3, 3,
    4, 4, 4, 4, 5, 5, 5, 5,
    6, 6, 6, 6, 7, 7, 7, 7,
    6, 6, 6, 6, 7, 7, 7, 7,
    6, 6, 6, 6, 7, 7, 7, 7,
    6, 6, 6, 6, 7, 7, 7, 7,
    6, 6, 6, 6, 7, 7, 7, 7,
    6, 6, 6, 6, 7, 7, 7, 7,
];

/// 16 buckets: every back-rank square, rank 2 in pairs of files, rank 3 in halves, the rest
/// in halves.
#[rustfmt::skip]
const KING_BUCKETS_16: [u8; 64] = [
     0,  1,  2,  3,  4,  5,  6,  7,
     8,  8,  9,  9, 10, 10, 11, 11,
    12, 12, 12, 12, 13, 13, 13, 13,
    14, 14, 14, 14, 15, 15, 15, 15,
    14, 14, 14, 14, 15, 15, 15, 15,
    14, 14, 14, 14, 15, 15, 15, 15,
    14, 14, 14, 14, 15, 15, 15, 15,
    14, 14, 14, 14, 15, 15, 15, 15,
];

/// 32 buckets: every square of ranks 1 and 2, ranks 3 to 5 in pairs of files, rank 6 in
/// halves, ranks 7 and 8 in halves.
#[rustfmt::skip]
const KING_BUCKETS_32: [u8; 64] = [
     0,  1,  2,  3,  4,  5,  6,  7,
     8,  9, 10, 11, 12, 13, 14, 15,
    16, 16, 17, 17, 18, 18, 19, 19,
    20, 20, 21, 21, 22, 22, 23, 23,
    24, 24, 25, 25, 26, 26, 27, 27,
    28, 28, 28, 28, 29, 29, 29, 29,
    30, 30, 30, 30, 31, 31, 31, 31,
    30, 30, 30, 30, 31, 31, 31, 31,
];

/// How a network's input rows are arranged: the number of king buckets (one of
/// [`KING_BUCKET_COUNTS`], each with its table of king squares) and whether the pocket
/// features have a copy per bucket or one shared copy.
///
/// Rows, for `n` buckets: board feature `f` (`f < BOARD_FEATURES`) of bucket `b` is row
/// `b * stride + f`; pocket feature `f` is row `b * INPUTS + f` when pockets are bucketed
/// (stride `INPUTS`), else row `(n - 1) * BOARD_FEATURES + f`, after every bucket's board
/// features (stride `BOARD_FEATURES`). With one bucket both are the base index.
#[derive(Copy, Clone, PartialEq, Eq)]
pub struct InputLayout {
    king_buckets: usize,
    bucketed_pockets: bool,
    table: &'static [u8; 64],
}

impl std::fmt::Debug for InputLayout {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let pockets = if self.bucketed_pockets { "bucketed" } else { "shared" };
        write!(f, "InputLayout({} king buckets, {pockets} pockets)", self.king_buckets)
    }
}

/// Where the rows of one king bucket start: a base feature `f` uses row `f + board` if it is
/// a board feature, `f + pocket` if a pocket feature.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub struct RowOffsets {
    /// Added to a board feature's index.
    pub board: usize,
    /// Added to a pocket feature's index.
    pub pocket: usize,
}

impl RowOffsets {
    /// The weight row of base feature `f`.
    #[inline]
    pub const fn row(self, f: usize) -> usize {
        f + if f < BOARD_FEATURES { self.board } else { self.pocket }
    }
}

impl InputLayout {
    /// One king bucket: the inputs are the base features (the network file's version 1).
    pub const PLAIN: InputLayout =
        InputLayout { king_buckets: 1, bucketed_pockets: false, table: &KING_BUCKETS_1 };

    /// The layout of `king_buckets` buckets, pocket features per bucket when
    /// `bucketed_pockets` (ignored for one bucket: both arrangements are the same rows).
    /// `None` for a count without a table ([`KING_BUCKET_COUNTS`]).
    pub const fn new(king_buckets: usize, bucketed_pockets: bool) -> Option<InputLayout> {
        let table = match king_buckets {
            1 => return Some(InputLayout::PLAIN),
            4 => &KING_BUCKETS_4,
            8 => &KING_BUCKETS_8,
            16 => &KING_BUCKETS_16,
            32 => &KING_BUCKETS_32,
            _ => return None,
        };
        Some(InputLayout { king_buckets, bucketed_pockets, table })
    }

    /// The number of king buckets.
    #[inline]
    pub const fn king_buckets(self) -> usize {
        self.king_buckets
    }

    /// Has each king bucket its own pocket features?
    #[inline]
    pub const fn bucketed_pockets(self) -> bool {
        self.bucketed_pockets
    }

    /// More than one king bucket?
    #[inline]
    pub const fn is_bucketed(self) -> bool {
        self.king_buckets > 1
    }

    /// Rows of the accumulator weight matrix.
    pub const fn rows(self) -> usize {
        if self.bucketed_pockets {
            self.king_buckets * INPUTS
        } else {
            self.king_buckets * BOARD_FEATURES + POCKET_FEATURES
        }
    }

    /// Base features that have a copy per bucket: the board features, and the pocket ones
    /// when pockets are bucketed (all of `0..bucketed_features()`).
    pub const fn bucketed_features(self) -> usize {
        if self.bucketed_pockets {
            INPUTS
        } else {
            BOARD_FEATURES
        }
    }

    /// The bucket of a king on `rel_sq`, the square seen from the king's own side (rank 1
    /// is its back rank).
    #[inline]
    pub const fn king_bucket(self, rel_sq: usize) -> usize {
        self.table[rel_sq & 63] as usize
    }

    /// The bucket of `perspective`'s own king in `pos` (bucket 0 without a king, which
    /// no legal position lacks).
    #[inline]
    pub fn bucket(self, pos: &Position, perspective: Color) -> usize {
        self.king_bucket(relative_king_square(pos, perspective))
    }

    /// Where bucket `bucket`'s rows start.
    #[inline]
    pub const fn offsets(self, bucket: usize) -> RowOffsets {
        if self.bucketed_pockets {
            RowOffsets { board: bucket * INPUTS, pocket: bucket * INPUTS }
        } else {
            RowOffsets {
                board: bucket * BOARD_FEATURES,
                pocket: (self.king_buckets - 1) * BOARD_FEATURES,
            }
        }
    }

    /// The weight row of base feature `f` in king bucket `bucket`.
    #[inline]
    pub const fn row(self, f: usize, bucket: usize) -> usize {
        self.offsets(bucket).row(f)
    }
}

/// `perspective`'s own king square seen from `perspective` (`sq ^ 56` for Black); 0 when it
/// has no king.
#[inline]
pub fn relative_king_square(pos: &Position, perspective: Color) -> usize {
    // trailing_zeros of an empty set is 64, which the mask folds to 0: no branch.
    let sq = pos.pieces(perspective, Role::King).0.trailing_zeros() as usize & 63;
    match perspective {
        Color::White => sq,
        Color::Black => sq ^ 56,
    }
}

/// `perspective`'s own king square seen from `perspective`, read from a position's
/// White-perspective features (as the trainer stores positions); `None` without a king.
pub fn relative_king_square_of(white_features: &[u16], perspective: Color) -> Option<usize> {
    // The own king's features from `perspective`: (0 * 6 + king) * 64 + rel_sq.
    let own_king = board_feature(Color::White, Color::White, Role::King, 0);
    white_features.iter().find_map(|&f| {
        let f = match perspective {
            Color::White => f as usize,
            Color::Black => mirror(f as usize),
        };
        (own_king..own_king + 64).contains(&f).then(|| f - own_king)
    })
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
// Always inlined: with a second caller (the update with king buckets) the compiler kept it
// out of line, which cost the per-move update of a plain network 1% of the search's
// instructions.
#[inline(always)]
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

/// What a position's features are computed from: each colour and role's squares and each
/// pocket. The per-bucket accumulator cache keeps one with each stored accumulator, so that
/// it can bring the accumulator to another position by the difference ([`for_each_change`]).
#[derive(Copy, Clone, Debug, Default, PartialEq, Eq)]
pub struct PieceState {
    pieces: [[Bitboard; 6]; 2],
    hands: [Pocket; 2],
}

impl PieceState {
    /// The state of `pos`.
    #[inline]
    pub fn of(pos: &Position) -> PieceState {
        let mut s = PieceState::default();
        for color in Color::ALL {
            for role in Role::ALL {
                s.pieces[color.index()][role.index()] = pos.pieces(color, role);
            }
            s.hands[color.index()] = *pos.hand(color);
        }
        s
    }
}

/// Calls `f(index, true)` for every feature of `to` not in `from` and `f(index, false)` for
/// every feature of `from` not in `to`, as `perspective`'s base indices. No limit on the
/// number (unlike [`diff`]): between two unrelated positions every feature may change.
pub fn for_each_change(
    from: &PieceState,
    to: &PieceState,
    perspective: Color,
    mut f: impl FnMut(usize, bool),
) {
    for color in Color::ALL {
        for role in Role::ALL {
            let a = from.pieces[color.index()][role.index()];
            let b = to.pieces[color.index()][role.index()];
            let x = a ^ b;
            for sq in x & a {
                f(board_feature(perspective, color, role, sq.index()), false);
            }
            for sq in x & b {
                f(board_feature(perspective, color, role, sq.index()), true);
            }
        }
    }
    for color in Color::ALL {
        let (a, b) = (&from.hands[color.index()], &to.hands[color.index()]);
        if a == b {
            continue;
        }
        for role in Role::DROPPABLE {
            let (a, b) = (slots(a.count(role)), slots(b.count(role)));
            for k in b..a {
                f(pocket_feature(perspective, color, role, k), false);
            }
            for k in a..b {
                f(pocket_feature(perspective, color, role, k), true);
            }
        }
    }
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

    #[test]
    fn king_bucket_tables_by_hand() {
        let four = InputLayout::new(4, false).unwrap();
        let sixteen = InputLayout::new(16, false).unwrap();
        let thirty_two = InputLayout::new(32, true).unwrap();
        // White Kg1 (6), Black Kc8 (58, seen from Black c1 = 2); then Black's king on d7 (51,
        // seen from Black d2 = 11) and White's on b3 (17).
        let p = pos("2k5/8/8/8/8/8/8/6K1[] w - - 0 1");
        assert_eq!(relative_king_square(&p, Color::White), 6);
        assert_eq!(relative_king_square(&p, Color::Black), 2);
        assert_eq!((four.bucket(&p, Color::White), four.bucket(&p, Color::Black)), (1, 0));
        assert_eq!((sixteen.bucket(&p, Color::White), sixteen.bucket(&p, Color::Black)), (6, 2));
        let q = pos("8/3k4/8/8/8/1K6/8/8[] w - - 0 1");
        assert_eq!(relative_king_square(&q, Color::Black), 11);
        // 4: rank 2 and up, queen side is 2. 16: b3 is rank 3's queen half (12), d2 the
        // second pair of rank 2 (9). 32: b3 is rank 3's first pair (16), d2 is square 11.
        assert_eq!((four.bucket(&q, Color::White), four.bucket(&q, Color::Black)), (2, 2));
        assert_eq!((sixteen.bucket(&q, Color::White), sixteen.bucket(&q, Color::Black)), (12, 9));
        assert_eq!(
            (thirty_two.bucket(&q, Color::White), thirty_two.bucket(&q, Color::Black)),
            (16, 11)
        );
        // The feature lists name the same squares.
        for (p, c) in
            [(&p, Color::White), (&p, Color::Black), (&q, Color::White), (&q, Color::Black)]
        {
            let white = active(p, Color::White);
            assert_eq!(
                relative_king_square_of(white.as_slice(), c),
                Some(relative_king_square(p, c))
            );
        }
    }

    #[test]
    fn every_layout_uses_each_bucket_and_distinct_rows() {
        for n in KING_BUCKET_COUNTS {
            for bucketed_pockets in [false, true] {
                let l = InputLayout::new(n, bucketed_pockets).unwrap();
                assert_eq!(l.king_buckets(), n);
                let mut used = vec![false; n];
                for sq in 0..64 {
                    used[l.king_bucket(sq)] = true;
                }
                assert!(used.iter().all(|&u| u), "{l:?}: a bucket no square uses");
                // Each (bucket, feature) has its own row, but shared pockets, which every
                // bucket shares; every row is used.
                let mut owner = vec![None; l.rows()];
                for b in 0..n {
                    for f in 0..INPUTS {
                        let r = l.row(f, b);
                        let shared = f >= BOARD_FEATURES && !l.bucketed_pockets();
                        let key = if shared { (0, f) } else { (b, f) };
                        assert!(owner[r].is_none() || owner[r] == Some(key), "{l:?} row {r}");
                        owner[r] = Some(key);
                    }
                }
                assert!(owner.iter().all(Option::is_some), "{l:?}: unused rows");
            }
        }
        assert_eq!(InputLayout::new(1, true), Some(InputLayout::PLAIN));
        assert_eq!(InputLayout::new(2, false), None);
        assert_eq!(InputLayout::new(64, false), None);
        // By hand: 8 buckets with shared pockets have 8 * 768 + 160 rows, pocket feature 768
        // on row 7 * 768 + 768, board feature 5 of bucket 3 on row 3 * 768 + 5; with bucketed
        // pockets 8 * 928 rows and the pocket feature of bucket 3 on 3 * 928 + 768.
        let shared = InputLayout::new(8, false).unwrap();
        assert_eq!((shared.rows(), shared.row(768, 3), shared.row(5, 3)), (6304, 6144, 2309));
        let own = InputLayout::new(8, true).unwrap();
        assert_eq!((own.rows(), own.row(768, 3), own.row(5, 3)), (7424, 3552, 2789));
    }

    #[test]
    fn changes_between_states_turn_one_feature_set_into_the_other() {
        let a = pos("r1bqk2r/pppp1ppp/2n1p3/4P3/1b1Pn3/2NB1N2/PPP2PPP/R1BQK2R[QNNpp] b KQkq - 0 1");
        let b = pos("4k3/8/8/8/8/8/8/4K3[QQQQQQQQQQQQQQQQQQrp] w - - 0 1");
        for (from, to) in [(&a, &b), (&b, &a), (&a, &a)] {
            for c in Color::ALL {
                let mut set = sorted(from, c);
                for_each_change(&PieceState::of(from), &PieceState::of(to), c, |f, added| {
                    if added {
                        assert!(!set.contains(&f));
                        set.push(f);
                    } else {
                        let i = set.iter().position(|&x| x == f).expect("removes an active one");
                        set.swap_remove(i);
                    }
                });
                set.sort_unstable();
                assert_eq!(set, sorted(to, c));
            }
        }
    }
}
