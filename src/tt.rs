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
//!
//! # Memory
//! Every probe lands on a random cache line of the table, so with 4 KB pages nearly every
//! probe also misses the TLB, and a page walk (dearer still in a virtual machine) stalls the
//! prefetch that should hide the probe's latency. On Linux the table asks for transparent huge
//! pages (`madvise`), which kernels set to `madvise` (a common default) grant on request:
//! measured on this project's development machine (a VM, 16 MB table), `bench 12` searched
//! about 10% more nodes a second (`scripts/nps_pair.py`, three sets of 6, 8 and 6 pairs:
//! +11%, +9%, +9%). Elsewhere, or if the kernel refuses, the table works the same with
//! ordinary pages.

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
    /// Does a stored `score` with this bound settle a search of the window `alpha..beta`?
    /// (With `alpha == beta == e`: does it show the true score lies beyond `e`?)
    #[inline]
    pub const fn cuts(self, score: i32, alpha: i32, beta: i32) -> bool {
        match self {
            Bound::Exact => true,
            Bound::Lower => score >= beta,
            Bound::Upper => score <= alpha,
            Bound::None => false,
        }
    }

    const fn from_bits(b: u64) -> Bound {
        match b & 3 {
            1 => Bound::Upper,
            2 => Bound::Lower,
            3 => Bound::Exact,
            _ => Bound::None,
        }
    }
}

/// What an entry holds: what a probe finds and what a store writes.
#[derive(Copy, Clone, Debug)]
pub struct TtEntry {
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
struct PackedEntry {
    key_xor_data: AtomicU64,
    data: AtomicU64,
}

#[repr(align(64))]
#[derive(Default)]
struct Cluster([PackedEntry; 4]);

const AGE_BITS: u64 = 5;
const AGE_MASK: u8 = (1 << AGE_BITS) - 1;
/// Depths are stored with this offset so that qsearch depths (down to -1) fit in a byte.
const DEPTH_OFFSET: i32 = 8;

/// Where a store for a probed key goes (see [`TranspositionTable::probe`]).
pub struct Slot<'a> {
    entry: &'a PackedEntry,
    age: u8,
}

impl Slot<'_> {
    /// Stores a search result for `key`. Other threads may have written the slot since the
    /// probe; the rules below read it again: the same position keeps a previous move when
    /// the new result has none, and a much deeper entry of this search survives a result
    /// that is not exact.
    #[inline]
    pub fn store(&self, key: u64, new: TtEntry) {
        let e = self.entry;
        let data = e.data.load(Ordering::Relaxed);
        let mut new = new;
        if data != 0 && e.key_xor_data.load(Ordering::Relaxed) ^ data == key {
            let old = unpack(data);
            if new.bound != Bound::Exact && new.depth + 4 < old.depth && age_of(data) == self.age {
                return;
            }
            new.mv = new.mv.or(old.mv);
        }
        let packed = pack(&new, self.age);
        e.key_xor_data.store(key ^ packed, Ordering::Relaxed);
        e.data.store(packed, Ordering::Relaxed);
    }
}

/// The shared transposition table.
pub struct TranspositionTable {
    clusters: Vec<Cluster>,
    age: AtomicU8,
}

fn pack(t: &TtEntry, age: u8) -> u64 {
    let m = t.mv.map_or(0, Move::raw) as u64;
    let s = (t.score.clamp(i16::MIN as i32, i16::MAX as i32) as i16 as u16) as u64;
    let e = (t.eval.clamp(i16::MIN as i32, i16::MAX as i32) as i16 as u16) as u64;
    let d = (t.depth + DEPTH_OFFSET).clamp(0, 255) as u64;
    m | (s << 16)
        | (e << 32)
        | (d << 48)
        | ((t.bound as u64) << 56)
        | ((t.pv as u64) << 58)
        | ((age as u64) << 59)
}

fn unpack(data: u64) -> TtEntry {
    TtEntry {
        mv: Move::from_raw(data as u16),
        score: (data >> 16) as u16 as i16 as i32,
        eval: (data >> 32) as u16 as i16 as i32,
        depth: ((data >> 48) & 0xff) as i32 - DEPTH_OFFSET,
        bound: Bound::from_bits(data >> 56),
        pv: (data >> 58) & 1 != 0,
    }
}

/// Asks the kernel to back `[start, start + bytes)` with transparent huge pages where it can
/// (see the module docs). Only advice: the memory and its contents are unchanged whether or
/// not the kernel follows it, so a refusal is ignored, and elsewhere than Linux on these
/// architectures there is nothing to ask.
fn advise_huge_pages(start: *mut u8, bytes: usize) {
    #[cfg(all(
        target_os = "linux",
        any(
            target_arch = "x86_64",
            target_arch = "x86",
            target_arch = "aarch64",
            target_arch = "arm"
        )
    ))]
    {
        /// `MADV_HUGEPAGE` on these architectures (Linux's asm-generic value).
        const MADV_HUGEPAGE: i32 = 14;
        /// The advice applies to whole pages: the range is shrunk to the 4 KB pages inside it.
        const PAGE: usize = 4096;
        extern "C" {
            fn madvise(addr: *mut u8, len: usize, advice: i32) -> i32;
        }
        let first = (start as usize).next_multiple_of(PAGE);
        let end = (start as usize).saturating_add(bytes) & !(PAGE - 1);
        if end > first {
            // SAFETY: `[first, end)` lies inside the allocation that `start` begins, which the
            // caller owns; `madvise(MADV_HUGEPAGE)` only marks the range as wanting huge pages
            // and neither unmaps it nor changes its contents, and its only failure is an error
            // code.
            let refused = unsafe { madvise(first as *mut u8, end - first, MADV_HUGEPAGE) } != 0;
            if refused {
                log::debug!("transposition table: the kernel declined huge pages");
            }
        }
    }
    // Nothing to ask on other platforms.
    let _ = (start, bytes);
}

fn age_of(data: u64) -> u8 {
    (data >> 59) as u8 & AGE_MASK
}

impl TranspositionTable {
    /// A table of about `mb` megabytes (at least one cluster).
    pub fn new(mb: usize) -> TranspositionTable {
        let bytes = mb.max(1).saturating_mul(1024 * 1024);
        let n = (bytes / std::mem::size_of::<Cluster>()).max(1);
        let mut clusters: Vec<Cluster> = Vec::with_capacity(n);
        // Advised before the first write, so that the pages are faulted in huge.
        advise_huge_pages(clusters.as_mut_ptr().cast(), n * std::mem::size_of::<Cluster>());
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

    /// Looks `key` up. Returns what the table holds for it, if anything, and the slot a
    /// later [`Slot::store`] for `key` writes to: the entry holding `key`, else the first
    /// empty one, else the shallowest and oldest, all found in this one scan.
    #[inline]
    pub fn probe(&self, key: u64) -> (Option<TtEntry>, Slot<'_>) {
        let age = self.age.load(Ordering::Relaxed);
        let cluster = self.cluster(key);
        let mut victim = &cluster.0[0];
        let mut victim_worth = i32::MAX;
        for e in &cluster.0 {
            let data = e.data.load(Ordering::Relaxed);
            if data == 0 {
                return (None, Slot { entry: e, age });
            }
            if e.key_xor_data.load(Ordering::Relaxed) ^ data == key {
                return (Some(unpack(data)), Slot { entry: e, age });
            }
            let age_diff = ((age.wrapping_sub(age_of(data))) & AGE_MASK) as i32;
            let worth = unpack(data).depth - 8 * age_diff;
            if worth < victim_worth {
                victim_worth = worth;
                victim = e;
            }
        }
        (None, Slot { entry: victim, age })
    }

    /// Asks the CPU to start loading `key`'s cluster into cache, so that the probe of a child
    /// position, a few hundred nanoseconds later, does not wait for memory: the search calls
    /// it as soon as it knows the child's key, before the network update. A hint only: no
    /// effect on results, and a no-op on targets without the instruction here.
    #[inline(always)]
    pub fn prefetch(&self, key: u64) {
        #[cfg(target_arch = "x86_64")]
        {
            let ptr = (self.cluster(key) as *const Cluster).cast::<i8>();
            // SAFETY: a prefetch never faults and reads nothing into the program; `ptr` points
            // into this table's live cluster array anyway. SSE is part of every x86-64 CPU.
            unsafe { std::arch::x86_64::_mm_prefetch::<{ std::arch::x86_64::_MM_HINT_T0 }>(ptr) };
        }
        #[cfg(not(target_arch = "x86_64"))]
        let _ = key;
    }

    /// What the table holds for `key` (no store to follow).
    #[inline]
    pub fn get(&self, key: u64) -> Option<TtEntry> {
        self.probe(key).0
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

    fn entry(mv: Option<Move>, score: i32, eval: i32, depth: i32, bound: Bound) -> TtEntry {
        TtEntry { mv, score, eval, depth, bound, pv: bound == Bound::Lower }
    }

    #[test]
    fn store_and_probe() {
        let tt = TranspositionTable::new(1);
        let m = Move::normal(Square::parse("e2").unwrap(), Square::parse("e4").unwrap());
        let (hit, slot) = tt.probe(0xdead_beef);
        assert!(hit.is_none());
        slot.store(0xdead_beef, entry(Some(m), -123, 45, 7, Bound::Lower));
        let hit = tt.get(0xdead_beef).expect("stored");
        assert_eq!(hit.mv, Some(m));
        assert_eq!((hit.score, hit.eval, hit.depth), (-123, 45, 7));
        assert_eq!(hit.bound, Bound::Lower);
        assert!(hit.pv);
        assert!(tt.get(0xdead_beee).is_none());
        // A later store without a move keeps the old move.
        tt.probe(0xdead_beef).1.store(0xdead_beef, entry(None, 10, 45, 9, Bound::Upper));
        assert_eq!(tt.get(0xdead_beef).unwrap().mv, Some(m));
        // A much shallower bound does not replace a deep entry of the same search.
        tt.probe(0xdead_beef).1.store(0xdead_beef, entry(None, 99, 45, 2, Bound::Upper));
        assert_eq!(tt.get(0xdead_beef).unwrap().score, 10);
        tt.clear();
        assert!(tt.get(0xdead_beef).is_none());
    }

    #[test]
    fn negative_depths_and_extremes_round_trip() {
        let tt = TranspositionTable::new(1);
        tt.probe(42).1.store(42, entry(None, 31999, -32000, -1, Bound::Exact));
        let hit = tt.get(42).unwrap();
        assert_eq!((hit.score, hit.eval, hit.depth), (31999, -32000, -1));
    }

    #[test]
    fn cuts() {
        assert!(Bound::Exact.cuts(0, 10, 20));
        assert!(Bound::Lower.cuts(20, 10, 20) && !Bound::Lower.cuts(19, 10, 20));
        assert!(Bound::Upper.cuts(10, 10, 20) && !Bound::Upper.cuts(11, 10, 20));
        assert!(!Bound::None.cuts(0, 10, 20));
    }
}
