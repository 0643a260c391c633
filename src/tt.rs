//! The transposition table, shared by all search threads without locks.
//!
//! # Concurrency
//! The table is racy by design, as in Stockfish and Carp: threads read and write entries
//! concurrently with relaxed atomic loads and stores and no locking. Each entry is two 64-bit
//! words, `key ^ data` and `data`. A reader recomputes `stored ^ data` and accepts the entry
//! only if that equals its own key, so a torn entry (one word from one writer, one from
//! another) is rejected as a miss rather than misread. Moves read from the table are checked
//! for legality before they are played, so even a key collision cannot corrupt a search.
//!
//! # Layout
//! Clusters of four entries fill one 64-byte cache line. `data` packs, from bit 0: move (16),
//! score (16, signed), static eval (16, signed), depth (8), bound (2), PV flag (1), age (5).

use std::sync::atomic::{AtomicU64, AtomicU8, Ordering};

use crate::core::Move;

/// Which side of the search window a stored score is exact for.
#[derive(Copy, Clone, PartialEq, Eq, Debug)]
pub enum Bound {
    /// No bound stored (empty entry).
    None = 0,
    /// The true score is at most this (fail low).
    Upper = 1,
    /// The true score is at least this (fail high).
    Lower = 2,
    /// The true score.
    Exact = 3,
}

impl Bound {
    const fn from_bits(b: u64) -> Bound {
        match b & 3 {
            1 => Bound::Upper,
            2 => Bound::Lower,
            3 => Bound::Exact,
            _ => Bound::None,
        }
    }
}

/// What a probe found.
#[derive(Copy, Clone, Debug)]
pub struct TtHit {
    /// Best move found at this position, if any.
    pub mv: Option<Move>,
    /// Score, with mate scores relative to this node (see `score_from_tt`).
    pub score: i32,
    /// Static evaluation.
    pub eval: i32,
    /// Remaining depth of the search that stored it.
    pub depth: i32,
    /// Kind of bound.
    pub bound: Bound,
    /// Whether the node was on a principal variation.
    pub pv: bool,
}

#[derive(Default)]
struct Entry {
    key_xor_data: AtomicU64,
    data: AtomicU64,
}

#[repr(align(64))]
#[derive(Default)]
struct Cluster([Entry; 4]);

const AGE_BITS: u64 = 5;
const AGE_MASK: u8 = (1 << AGE_BITS) - 1;
/// Depths are stored with this offset so that qsearch depths (down to -1) fit in a byte.
const DEPTH_OFFSET: i32 = 8;

/// The shared transposition table.
pub struct TranspositionTable {
    clusters: Vec<Cluster>,
    age: AtomicU8,
}

fn pack(
    mv: Option<Move>,
    score: i32,
    eval: i32,
    depth: i32,
    bound: Bound,
    pv: bool,
    age: u8,
) -> u64 {
    let m = mv.map_or(0, Move::raw) as u64;
    let s = (score.clamp(i16::MIN as i32, i16::MAX as i32) as i16 as u16) as u64;
    let e = (eval.clamp(i16::MIN as i32, i16::MAX as i32) as i16 as u16) as u64;
    let d = (depth + DEPTH_OFFSET).clamp(0, 255) as u64;
    m | (s << 16)
        | (e << 32)
        | (d << 48)
        | ((bound as u64) << 56)
        | ((pv as u64) << 58)
        | ((age as u64) << 59)
}

fn unpack(data: u64) -> TtHit {
    TtHit {
        mv: Move::from_raw(data as u16),
        score: (data >> 16) as u16 as i16 as i32,
        eval: (data >> 32) as u16 as i16 as i32,
        depth: ((data >> 48) & 0xff) as i32 - DEPTH_OFFSET,
        bound: Bound::from_bits(data >> 56),
        pv: (data >> 58) & 1 != 0,
    }
}

fn age_of(data: u64) -> u8 {
    (data >> 59) as u8 & AGE_MASK
}

impl TranspositionTable {
    /// A table of about `mb` megabytes (at least one cluster).
    pub fn new(mb: usize) -> TranspositionTable {
        let bytes = mb.max(1).saturating_mul(1024 * 1024);
        let n = (bytes / std::mem::size_of::<Cluster>()).max(1);
        let mut clusters = Vec::new();
        clusters.resize_with(n, Cluster::default);
        TranspositionTable { clusters, age: AtomicU8::new(0) }
    }

    /// Size in megabytes.
    pub fn size_mb(&self) -> usize {
        self.clusters.len() * std::mem::size_of::<Cluster>() / (1024 * 1024)
    }

    /// Empties the table, using all cores for large tables.
    pub fn clear(&self) {
        use rayon::prelude::*;
        self.clusters.par_chunks(1 << 14).for_each(|chunk| {
            for c in chunk {
                for e in &c.0 {
                    e.key_xor_data.store(0, Ordering::Relaxed);
                    e.data.store(0, Ordering::Relaxed);
                }
            }
        });
        self.age.store(0, Ordering::Relaxed);
    }

    /// Marks the start of a new search, so that older entries are replaced first.
    pub fn new_search(&self) {
        let a = self.age.load(Ordering::Relaxed);
        self.age.store((a + 1) & AGE_MASK, Ordering::Relaxed);
    }

    #[inline]
    fn cluster(&self, key: u64) -> &Cluster {
        let idx = ((key as u128 * self.clusters.len() as u128) >> 64) as usize;
        &self.clusters[idx]
    }

    /// Looks `key` up.
    #[inline]
    pub fn probe(&self, key: u64) -> Option<TtHit> {
        for e in &self.cluster(key).0 {
            let data = e.data.load(Ordering::Relaxed);
            if data != 0 && e.key_xor_data.load(Ordering::Relaxed) ^ data == key {
                return Some(unpack(data));
            }
        }
        None
    }

    /// Hints the CPU to fetch the cluster of `key` (no effect on correctness).
    #[inline]
    pub fn prefetch(&self, key: u64) {
        let _ = self.cluster(key);
    }

    /// Stores a search result. A previous move is kept when the new result has none.
    #[allow(clippy::too_many_arguments)]
    #[inline]
    pub fn store(
        &self,
        key: u64,
        mv: Option<Move>,
        score: i32,
        eval: i32,
        depth: i32,
        bound: Bound,
        pv: bool,
    ) {
        let age = self.age.load(Ordering::Relaxed);
        let cluster = self.cluster(key);
        // Same position: overwrite (keeping the old move if we have none) unless the old
        // entry is much deeper and ours is not exact.
        let mut victim = &cluster.0[0];
        let mut victim_worth = i32::MAX;
        for e in &cluster.0 {
            let data = e.data.load(Ordering::Relaxed);
            if data == 0 || e.key_xor_data.load(Ordering::Relaxed) ^ data == key {
                let old = unpack(data);
                if data != 0
                    && bound != Bound::Exact
                    && depth + 4 < old.depth
                    && age_of(data) == age
                {
                    return;
                }
                let mv = mv.or(if data != 0 { old.mv } else { None });
                let new = pack(mv, score, eval, depth, bound, pv, age);
                e.key_xor_data.store(key ^ new, Ordering::Relaxed);
                e.data.store(new, Ordering::Relaxed);
                return;
            }
            // Otherwise replace the shallowest, oldest entry.
            let old = unpack(data);
            let age_diff = ((age.wrapping_sub(age_of(data))) & AGE_MASK) as i32;
            let worth = old.depth - 8 * age_diff;
            if worth < victim_worth {
                victim_worth = worth;
                victim = e;
            }
        }
        let new = pack(mv, score, eval, depth, bound, pv, age);
        victim.key_xor_data.store(key ^ new, Ordering::Relaxed);
        victim.data.store(new, Ordering::Relaxed);
    }

    /// Permille of sampled entries written during the current search (UCI `hashfull`).
    pub fn hashfull(&self) -> u32 {
        let age = self.age.load(Ordering::Relaxed);
        let sample = self.clusters.len().min(250);
        let mut used = 0;
        for c in &self.clusters[..sample] {
            for e in &c.0 {
                let d = e.data.load(Ordering::Relaxed);
                if d != 0 && age_of(d) == age {
                    used += 1;
                }
            }
        }
        (used * 1000 / (sample * 4).max(1)) as u32
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::core::Square;

    #[test]
    fn store_and_probe() {
        let tt = TranspositionTable::new(1);
        let m = Move::normal(Square::parse("e2").unwrap(), Square::parse("e4").unwrap());
        tt.store(0xdead_beef, Some(m), -123, 45, 7, Bound::Lower, true);
        let hit = tt.probe(0xdead_beef).expect("stored");
        assert_eq!(hit.mv, Some(m));
        assert_eq!((hit.score, hit.eval, hit.depth), (-123, 45, 7));
        assert_eq!(hit.bound, Bound::Lower);
        assert!(hit.pv);
        assert!(tt.probe(0xdead_beee).is_none());
        // A later store without a move keeps the old move.
        tt.store(0xdead_beef, None, 10, 45, 9, Bound::Upper, false);
        assert_eq!(tt.probe(0xdead_beef).unwrap().mv, Some(m));
        tt.clear();
        assert!(tt.probe(0xdead_beef).is_none());
    }

    #[test]
    fn negative_depths_and_extremes_round_trip() {
        let tt = TranspositionTable::new(1);
        tt.store(42, None, 31999, -32000, -1, Bound::Exact, false);
        let hit = tt.probe(42).unwrap();
        assert_eq!((hit.score, hit.eval, hit.depth), (31999, -32000, -1));
    }
}
