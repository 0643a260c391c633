//! Zobrist keys, generated at compile time from a fixed seed.
//!
//! The key covers everything repetition depends on in crazyhouse: pieces, promoted marks,
//! both pockets, side to move, castling rights and a capturable en-passant square. Pocket keys
//! are cumulative: a count of `n` XORs `HAND[c][r][0..n]`, so adding or removing one piece
//! costs a single XOR.

use super::hand::MAX_IN_HAND;
use super::types::{Color, Piece, Role, Square};

const fn splitmix(state: u64) -> (u64, u64) {
    let s = state.wrapping_add(0x9e37_79b9_7f4a_7c15);
    let mut z = s;
    z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
    (s, z ^ (z >> 31))
}

const HAND_SLOTS: usize = MAX_IN_HAND as usize + 1;

struct Keys {
    piece: [[u64; 64]; 12],
    promoted: [u64; 64],
    hand: [[[u64; HAND_SLOTS]; 5]; 2],
    castling: [u64; 16],
    ep_file: [u64; 8],
    side: u64,
}

const fn make_keys() -> Keys {
    let mut k = Keys {
        piece: [[0; 64]; 12],
        promoted: [0; 64],
        hand: [[[0; HAND_SLOTS]; 5]; 2],
        castling: [0; 16],
        ep_file: [0; 8],
        side: 0,
    };
    let mut state = 0x6d61_6468_6f75_7365; // "madhouse"
    let mut p = 0;
    while p < 12 {
        let mut s = 0;
        while s < 64 {
            let (st, v) = splitmix(state);
            state = st;
            k.piece[p][s] = v;
            s += 1;
        }
        p += 1;
    }
    let mut s = 0;
    while s < 64 {
        let (st, v) = splitmix(state);
        state = st;
        k.promoted[s] = v;
        s += 1;
    }
    let mut c = 0;
    while c < 2 {
        let mut r = 0;
        while r < 5 {
            let mut n = 0;
            while n < HAND_SLOTS {
                let (st, v) = splitmix(state);
                state = st;
                k.hand[c][r][n] = v;
                n += 1;
            }
            r += 1;
        }
        c += 1;
    }
    // Castling keys per single right, combined by XOR for the 16 subsets.
    let mut single = [0u64; 4];
    let mut i = 0;
    while i < 4 {
        let (st, v) = splitmix(state);
        state = st;
        single[i] = v;
        i += 1;
    }
    let mut mask = 0;
    while mask < 16 {
        let mut v = 0;
        let mut b = 0;
        while b < 4 {
            if mask & (1 << b) != 0 {
                v ^= single[b];
            }
            b += 1;
        }
        k.castling[mask] = v;
        mask += 1;
    }
    let mut f = 0;
    while f < 8 {
        let (st, v) = splitmix(state);
        state = st;
        k.ep_file[f] = v;
        f += 1;
    }
    let (_, v) = splitmix(state);
    k.side = v;
    k
}

static KEYS: Keys = make_keys();

/// Key of `piece` standing on `sq`.
#[inline]
pub fn piece(piece: Piece, sq: Square) -> u64 {
    KEYS.piece[piece.index()][sq.index()]
}

/// Key of a promoted mark on `sq`.
#[inline]
pub fn promoted(sq: Square) -> u64 {
    KEYS.promoted[sq.index()]
}

/// Key toggled when the pocket count of `role` for `color` goes between `n` and `n + 1`.
#[inline]
pub fn hand(color: Color, role: Role, n: u8) -> u64 {
    KEYS.hand[color.index()][role.index() % 5][(n as usize).min(HAND_SLOTS - 1)]
}

/// Key of a set of castling rights (bit mask 0..16).
#[inline]
pub fn castling(rights: u8) -> u64 {
    KEYS.castling[(rights & 15) as usize]
}

/// Key of a capturable en-passant square on file `file` (0..8).
#[inline]
pub fn ep_file(file: usize) -> u64 {
    KEYS.ep_file[file & 7]
}

/// Key toggled when black is to move.
#[inline]
pub fn side() -> u64 {
    KEYS.side
}
