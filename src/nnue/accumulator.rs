//! The accumulator: the first layer's output for both perspectives, refreshed from scratch
//! or updated incrementally from the parent position's accumulator.
//!
//! The incremental update does not follow make-move: it compares the parent and child
//! positions ([`features::diff`]), so it is right for every move kind in every variant
//! (captures into the pocket, promoted pieces captured as pawns or keeping their rank,
//! drops, promotions, castling, en passant, null moves).

use super::features::{self, FeatureList, MAX_CHANGES};
use super::simd;
use super::{Network, MAX_HIDDEN};
use crate::core::{Color, Position};

/// Accumulator values of both perspectives (White's first), with room for the largest
/// network; only the first `net.hidden()` of each are used. Aligned for SIMD loads and kept
/// inline (4 KB) so a search can hold one per ply without allocating. It also keeps the
/// number of pieces on the board, which picks the network's output bucket.
#[derive(Clone)]
#[repr(C, align(64))]
pub struct Accumulator {
    vals: [[i16; MAX_HIDDEN]; 2],
    board_pieces: u8,
}

impl Default for Accumulator {
    fn default() -> Self {
        Self::new()
    }
}

impl std::fmt::Debug for Accumulator {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "Accumulator({:?}.., {:?}..)", &self.vals[0][..4], &self.vals[1][..4])
    }
}

impl Accumulator {
    /// All zeros (fill it with [`Accumulator::refresh`] before use).
    pub const fn new() -> Accumulator {
        Accumulator { vals: [[0; MAX_HIDDEN]; 2], board_pieces: 0 }
    }

    /// Pieces on the board of the position this accumulator was computed for.
    #[inline]
    pub const fn board_pieces(&self) -> usize {
        self.board_pieces as usize
    }

    /// The values of `perspective` (the first `net.hidden()` are meaningful).
    #[inline]
    pub fn values(&self, perspective: Color) -> &[i16] {
        &self.vals[perspective.index()]
    }

    /// Computes both perspectives of `pos` from scratch. Does not allocate.
    pub fn refresh(&mut self, net: &Network, pos: &Position) {
        self.board_pieces = pos.occupied().count() as u8;
        for p in Color::ALL {
            let active = features::active(pos, p);
            simd::apply(
                net.kernel(),
                &mut self.vals[p.index()],
                net.ft_bias(),
                active.as_slice(),
                &[],
                net.ft_weights(),
                net.hidden(),
            );
        }
    }

    /// Computes both perspectives from a position's White-perspective features (as the
    /// trainer and data tools store them; Black's are their mirrors).
    ///
    /// # Panics
    /// With more than [`MAX_ACTIVE`](features::MAX_ACTIVE) features, which no position has.
    pub fn refresh_from_features(&mut self, net: &Network, white_features: &[u16]) {
        assert!(white_features.len() <= features::MAX_ACTIVE);
        self.board_pieces = features::board_pieces(white_features) as u8;
        let mut black = FeatureList::<{ features::MAX_ACTIVE }>::new();
        for &i in white_features {
            let _ = black.push(features::mirror(i as usize));
        }
        for (p, list) in [(Color::White, white_features), (Color::Black, black.as_slice())] {
            simd::apply(
                net.kernel(),
                &mut self.vals[p.index()],
                net.ft_bias(),
                list,
                &[],
                net.ft_weights(),
                net.hidden(),
            );
        }
    }

    /// Sets `self` to the accumulator of `child_pos` from `parent`, the accumulator of
    /// `parent_pos`, touching only the features that differ between the two positions (a
    /// refresh when unusually many do). Does not allocate.
    pub fn update(
        &mut self,
        net: &Network,
        parent: &Accumulator,
        parent_pos: &Position,
        child_pos: &Position,
    ) {
        let Some(ch) = features::diff(parent_pos, child_pos) else {
            return self.refresh(net, child_pos);
        };
        self.board_pieces = child_pos.occupied().count() as u8;
        for p in Color::ALL {
            let (adds, subs) = match p {
                Color::White => (ch.added, ch.removed),
                Color::Black => (mirrored(&ch.added), mirrored(&ch.removed)),
            };
            simd::apply(
                net.kernel(),
                &mut self.vals[p.index()],
                &parent.vals[p.index()],
                adds.as_slice(),
                subs.as_slice(),
                net.ft_weights(),
                net.hidden(),
            );
        }
    }
}

/// The Black-perspective indices of White-perspective ones.
#[inline]
fn mirrored(list: &FeatureList<MAX_CHANGES>) -> FeatureList<MAX_CHANGES> {
    let mut out = FeatureList::new();
    for &i in list.as_slice() {
        let _ = out.push(features::mirror(i as usize));
    }
    out
}
