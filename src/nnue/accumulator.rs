//! The accumulator: the first layer's output for both perspectives, refreshed from scratch
//! or updated incrementally from the parent position's accumulator.
//!
//! The incremental update does not follow make-move: it compares the parent and child
//! positions ([`features::diff`]), so it is right for every move kind in every variant
//! (captures into the pocket, promoted pieces captured as pawns or keeping their rank,
//! drops, promotions, castling, en passant, null moves).
//!
//! With king buckets, a king move into another bucket changes every board feature of that
//! perspective, so that perspective is rebuilt instead: from a [`BucketCache`] entry (the
//! accumulator last computed in that bucket and the pieces it was computed for) by the
//! difference between those pieces and the new position's, which is a few features in a
//! search that moves back and forth between the same buckets. Networks without king buckets
//! take the same path as before buckets existed.

use super::features::{self, FeatureList, InputLayout, PieceState, MAX_ACTIVE, MAX_CHANGES};
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

/// One perspective's accumulator as last computed in one king bucket, and the pieces it was
/// computed for.
#[derive(Clone)]
#[repr(C, align(64))]
struct CacheEntry {
    vals: [i16; MAX_HIDDEN],
    state: PieceState,
    /// False until first computed (after [`BucketCache::prepare`]).
    valid: bool,
}

/// Per perspective and king bucket, the last accumulator computed there (a "finny table"):
/// a king move into another bucket is rebuilt from the entry by the difference in pieces,
/// not from scratch. One per search thread. [`BucketCache::new`] does not allocate;
/// [`BucketCache::prepare`] does, once, for the network's bucket count (about 4 KB per
/// bucket), and must be called before a search with a network, outside its hot path:
/// entries belong to the network they were computed with.
#[derive(Clone, Default)]
pub struct BucketCache {
    entries: Vec<CacheEntry>,
    /// Buckets of the network prepared for (the stride between the perspectives' entries).
    buckets: usize,
}

impl std::fmt::Debug for BucketCache {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "BucketCache({} buckets, {} entries)", self.buckets, self.entries.len())
    }
}

impl BucketCache {
    /// An empty cache (no allocation): updates through it refresh from scratch until
    /// [`BucketCache::prepare`] is called.
    pub const fn new() -> BucketCache {
        BucketCache { entries: Vec::new(), buckets: 0 }
    }

    /// Readies the cache for `net`: every entry emptied, and room made for the network's king
    /// buckets (allocated on the first call for a network with that many, never in an
    /// update). Nothing to do for a network without king buckets.
    pub fn prepare(&mut self, net: &Network) {
        let buckets = net.inputs().king_buckets();
        if buckets <= 1 {
            self.buckets = 0;
            return;
        }
        if self.entries.len() < 2 * buckets {
            let empty =
                CacheEntry { vals: [0; MAX_HIDDEN], state: PieceState::default(), valid: false };
            self.entries.resize(2 * buckets, empty);
        }
        for e in &mut self.entries {
            e.valid = false;
        }
        self.buckets = buckets;
    }

    /// The entry of `perspective` in `bucket`, if the cache was prepared for `inputs`.
    #[inline]
    fn entry(
        &mut self,
        inputs: InputLayout,
        perspective: Color,
        bucket: usize,
    ) -> Option<&mut CacheEntry> {
        if self.buckets != inputs.king_buckets() {
            return None;
        }
        self.entries.get_mut(perspective.index() * self.buckets + bucket)
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
    // Out of line: the per-move update falls back to it rarely, and inlined there it made
    // the update take 2% more instructions (counted over `bench`).
    #[inline(never)]
    pub fn refresh(&mut self, net: &Network, pos: &Position) {
        self.board_pieces = pos.occupied().count() as u8;
        for p in Color::ALL {
            self.refresh_perspective(net, pos, p);
        }
    }

    /// Computes `perspective` of `pos` from scratch.
    fn refresh_perspective(&mut self, net: &Network, pos: &Position, perspective: Color) {
        let mut active = features::active(pos, perspective);
        let inputs = net.inputs();
        if inputs.is_bucketed() {
            active = to_rows(&active, inputs.offsets(inputs.bucket(pos, perspective)));
        }
        simd::apply(
            net.kernel(),
            &mut self.vals[perspective.index()],
            net.ft_bias(),
            active.as_slice(),
            &[],
            net.ft_weights(),
            net.hidden(),
        );
    }

    /// Computes both perspectives from a position's White-perspective features (as the
    /// trainer and data tools store them; Black's are their mirrors).
    ///
    /// # Panics
    /// With more than [`MAX_ACTIVE`] features, which no position has.
    pub fn refresh_from_features(&mut self, net: &Network, white_features: &[u16]) {
        assert!(white_features.len() <= features::MAX_ACTIVE);
        self.board_pieces = features::board_pieces(white_features) as u8;
        let inputs = net.inputs();
        for p in Color::ALL {
            let bucket = features::relative_king_square_of(white_features, p)
                .map_or(0, |sq| inputs.king_bucket(sq));
            let off = inputs.offsets(bucket);
            let mut rows = FeatureList::<{ features::MAX_ACTIVE }>::new();
            for &i in white_features {
                let f = match p {
                    Color::White => i as usize,
                    Color::Black => features::mirror(i as usize),
                };
                let _ = rows.push(off.row(f));
            }
            simd::apply(
                net.kernel(),
                &mut self.vals[p.index()],
                net.ft_bias(),
                rows.as_slice(),
                &[],
                net.ft_weights(),
                net.hidden(),
            );
        }
    }

    /// Sets `self` to the accumulator of `child_pos` from `parent`, the accumulator of
    /// `parent_pos`, touching only the features that differ between the two positions (a
    /// refresh when unusually many do, or, with king buckets, for a perspective whose king
    /// changed bucket). Does not allocate. A search uses [`Accumulator::update_cached`].
    pub fn update(
        &mut self,
        net: &Network,
        parent: &Accumulator,
        parent_pos: &Position,
        child_pos: &Position,
    ) {
        if net.inputs().is_bucketed() {
            self.update_bucketed(net, parent, parent_pos, child_pos, None);
        } else {
            self.update_plain(net, parent, parent_pos, child_pos);
        }
    }

    /// As [`Accumulator::update`], but a perspective whose king changed bucket is rebuilt
    /// from `cache` (prepared for `net`) by the difference from the pieces of the cached
    /// accumulator, and the result stored back there. The same values as
    /// [`Accumulator::update`]; for a network without king buckets the same work. Does not
    /// allocate.
    #[inline]
    pub fn update_cached(
        &mut self,
        net: &Network,
        parent: &Accumulator,
        parent_pos: &Position,
        child_pos: &Position,
        cache: &mut BucketCache,
    ) {
        if net.inputs().is_bucketed() {
            self.update_bucketed(net, parent, parent_pos, child_pos, Some(cache));
        } else {
            self.update_plain(net, parent, parent_pos, child_pos);
        }
    }

    /// The update of a network without king buckets: the base feature indices are the rows.
    #[inline]
    fn update_plain(
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

    /// The update of a network with king buckets: the difference is computed once, and each
    /// perspective applies it in its king's bucket, or is rebuilt if the king changed bucket.
    fn update_bucketed(
        &mut self,
        net: &Network,
        parent: &Accumulator,
        parent_pos: &Position,
        child_pos: &Position,
        mut cache: Option<&mut BucketCache>,
    ) {
        let inputs = net.inputs();
        self.board_pieces = child_pos.occupied().count() as u8;
        let ch = features::diff(parent_pos, child_pos);
        for p in Color::ALL {
            let bucket = inputs.bucket(child_pos, p);
            let ch = match ch {
                Some(ch) if bucket == inputs.bucket(parent_pos, p) => ch,
                // A new bucket, or too many changes: rebuild this perspective.
                _ => {
                    self.rebuild(net, child_pos, p, bucket, cache.as_deref_mut());
                    continue;
                }
            };
            let off = inputs.offsets(bucket);
            let (adds, subs) = match p {
                Color::White => (to_rows(&ch.added, off), to_rows(&ch.removed, off)),
                Color::Black => {
                    (to_rows(&mirrored(&ch.added), off), to_rows(&mirrored(&ch.removed), off))
                }
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

    /// Computes `perspective` of `pos`, whose king is in `bucket`: from the cache entry of
    /// that bucket when there is one (then stores the result back), else from scratch.
    fn rebuild(
        &mut self,
        net: &Network,
        pos: &Position,
        perspective: Color,
        bucket: usize,
        cache: Option<&mut BucketCache>,
    ) {
        let inputs = net.inputs();
        let Some(entry) = cache.and_then(|c| c.entry(inputs, perspective, bucket)) else {
            return self.refresh_perspective(net, pos, perspective);
        };
        let state = PieceState::of(pos);
        let off = inputs.offsets(bucket);
        let h = net.hidden();
        let out = &mut self.vals[perspective.index()];
        // Every addition is a feature of `pos` and every removal one of the cached position,
        // so neither list exceeds MAX_ACTIVE; `fits` guards it all the same.
        let (mut adds, mut subs) =
            (FeatureList::<MAX_ACTIVE>::new(), FeatureList::<MAX_ACTIVE>::new());
        let mut fits = entry.valid;
        if entry.valid {
            features::for_each_change(&entry.state, &state, perspective, |f, added| {
                fits &= if added { adds.push(off.row(f)) } else { subs.push(off.row(f)) };
            });
        }
        if fits {
            // The removals go to the kernel at most MAX_CHANGES at a time, as in an update:
            // given one longer list anywhere, the compiler no longer unrolls the AVX2 kernel's
            // loop over removals for the short lists of the per-move update (measured: 1% more
            // instructions in the search of a network without king buckets).
            let (first, rest) = subs.as_slice().split_at(subs.len().min(MAX_CHANGES));
            let (kernel, w) = (net.kernel(), net.ft_weights());
            simd::apply(kernel, out, &entry.vals, adds.as_slice(), first, w, h);
            for chunk in rest.chunks(MAX_CHANGES) {
                entry.vals[..h].copy_from_slice(&out[..h]);
                simd::apply(kernel, out, &entry.vals, &[], chunk, w, h);
            }
        } else {
            let active = to_rows(&features::active(pos, perspective), off);
            simd::apply(
                net.kernel(),
                out,
                net.ft_bias(),
                active.as_slice(),
                &[],
                net.ft_weights(),
                h,
            );
        }
        entry.vals[..h].copy_from_slice(&out[..h]);
        entry.state = state;
        entry.valid = true;
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

/// The weight rows of base features in the king bucket whose rows start at `off`.
#[inline]
fn to_rows<const N: usize>(list: &FeatureList<N>, off: features::RowOffsets) -> FeatureList<N> {
    let mut out = FeatureList::new();
    for &i in list.as_slice() {
        let _ = out.push(off.row(i as usize));
    }
    out
}
