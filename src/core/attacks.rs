//! Attack tables: magic bitboards for sliders (built by `build.rs`), leaper tables and the
//! `between`/`line` tables, the latter computed at compile time by `const fn`.

use super::bitboard::Bitboard;
use super::types::{Color, Role, Square};

/// Magic lookup data for one square of one slider kind.
pub(crate) struct Magic {
    /// Squares whose occupancy changes the attack set.
    pub mask: u64,
    /// Multiplier that hashes the masked occupancy perfectly.
    pub magic: u64,
    /// `64 - popcount(mask)`.
    pub shift: u32,
    /// Start of this square's slice of `SLIDER_TABLE`.
    pub offset: usize,
}

include!(concat!(env!("OUT_DIR"), "/magics.rs"));

#[inline]
fn magic_lookup(m: &Magic, occupied: Bitboard) -> Bitboard {
    let idx = m.offset + ((occupied.0 & m.mask).wrapping_mul(m.magic) >> m.shift) as usize;
    Bitboard(SLIDER_TABLE[idx])
}

/// Squares a rook on `sq` attacks, given the occupied squares.
#[inline]
pub fn rook_attacks(sq: Square, occupied: Bitboard) -> Bitboard {
    magic_lookup(&ROOK_MAGICS[sq.index()], occupied)
}

/// Squares a bishop on `sq` attacks, given the occupied squares.
#[inline]
pub fn bishop_attacks(sq: Square, occupied: Bitboard) -> Bitboard {
    magic_lookup(&BISHOP_MAGICS[sq.index()], occupied)
}

/// Squares a queen on `sq` attacks, given the occupied squares.
#[inline]
pub fn queen_attacks(sq: Square, occupied: Bitboard) -> Bitboard {
    rook_attacks(sq, occupied) | bishop_attacks(sq, occupied)
}

/// Squares a knight on `sq` attacks.
#[inline]
pub fn knight_attacks(sq: Square) -> Bitboard {
    Bitboard(KNIGHT[sq.index()])
}

/// Squares a king on `sq` attacks.
#[inline]
pub fn king_attacks(sq: Square) -> Bitboard {
    Bitboard(KING[sq.index()])
}

/// Squares a pawn of `color` on `sq` attacks.
#[inline]
pub fn pawn_attacks(color: Color, sq: Square) -> Bitboard {
    Bitboard(PAWN[color.index()][sq.index()])
}

/// Squares a piece of `role` and `color` on `sq` attacks.
#[inline]
pub fn attacks(role: Role, color: Color, sq: Square, occupied: Bitboard) -> Bitboard {
    match role {
        Role::Pawn => pawn_attacks(color, sq),
        Role::Knight => knight_attacks(sq),
        Role::Bishop => bishop_attacks(sq, occupied),
        Role::Rook => rook_attacks(sq, occupied),
        Role::Queen => queen_attacks(sq, occupied),
        Role::King => king_attacks(sq),
    }
}

/// Squares strictly between `a` and `b` when they share a rank, file or diagonal; empty
/// otherwise.
#[inline]
pub fn between(a: Square, b: Square) -> Bitboard {
    Bitboard(BETWEEN[a.index()][b.index()])
}

/// The whole line (edge to edge) through `a` and `b` when they share a rank, file or diagonal;
/// empty otherwise.
#[inline]
pub fn line(a: Square, b: Square) -> Bitboard {
    Bitboard(LINE[a.index()][b.index()])
}

/// Are `a`, `b` and `c` on one line?
#[inline]
pub fn aligned(a: Square, b: Square, c: Square) -> bool {
    line(a, b).contains(c)
}

const fn leaper_table(steps: &[(i32, i32)]) -> [u64; 64] {
    let mut table = [0u64; 64];
    let mut sq = 0;
    while sq < 64 {
        let (f, r) = ((sq % 8) as i32, (sq / 8) as i32);
        let mut i = 0;
        while i < steps.len() {
            let (nf, nr) = (f + steps[i].0, r + steps[i].1);
            if nf >= 0 && nf < 8 && nr >= 0 && nr < 8 {
                table[sq] |= 1 << (nr * 8 + nf);
            }
            i += 1;
        }
        sq += 1;
    }
    table
}

static KNIGHT: [u64; 64] =
    leaper_table(&[(1, 2), (2, 1), (2, -1), (1, -2), (-1, -2), (-2, -1), (-2, 1), (-1, 2)]);
static KING: [u64; 64] =
    leaper_table(&[(1, 0), (1, 1), (0, 1), (-1, 1), (-1, 0), (-1, -1), (0, -1), (1, -1)]);
static PAWN: [[u64; 64]; 2] =
    [leaper_table(&[(-1, 1), (1, 1)]), leaper_table(&[(-1, -1), (1, -1)])];

const DIRS: [(i32, i32); 8] =
    [(1, 0), (-1, 0), (0, 1), (0, -1), (1, 1), (1, -1), (-1, 1), (-1, -1)];

/// `(between, line)` for every pair of squares.
const fn line_tables() -> ([[u64; 64]; 64], [[u64; 64]; 64]) {
    let mut between = [[0u64; 64]; 64];
    let mut line = [[0u64; 64]; 64];
    let mut a = 0;
    while a < 64 {
        let (f, r) = ((a % 8) as i32, (a / 8) as i32);
        let mut d = 0;
        while d < 8 {
            let (df, dr) = DIRS[d];
            // The full ray through `a` in both directions along this direction's axis.
            let mut full = 1u64 << a;
            let (mut nf, mut nr) = (f + df, r + dr);
            while nf >= 0 && nf < 8 && nr >= 0 && nr < 8 {
                full |= 1 << (nr * 8 + nf);
                nf += df;
                nr += dr;
            }
            let (mut nf, mut nr) = (f - df, r - dr);
            while nf >= 0 && nf < 8 && nr >= 0 && nr < 8 {
                full |= 1 << (nr * 8 + nf);
                nf -= df;
                nr -= dr;
            }
            // Walk outwards, accumulating the squares passed on the way to each target.
            let mut passed = 0u64;
            let (mut nf, mut nr) = (f + df, r + dr);
            while nf >= 0 && nf < 8 && nr >= 0 && nr < 8 {
                let b = (nr * 8 + nf) as usize;
                between[a][b] = passed;
                line[a][b] = full;
                passed |= 1 << b;
                nf += df;
                nr += dr;
            }
            d += 1;
        }
        a += 1;
    }
    (between, line)
}

static LINE_TABLES: ([[u64; 64]; 64], [[u64; 64]; 64]) = line_tables();
static BETWEEN: &[[u64; 64]; 64] = &LINE_TABLES.0;
static LINE: &[[u64; 64]; 64] = &LINE_TABLES.1;

#[cfg(test)]
mod tests {
    use super::*;

    fn sq(s: &str) -> Square {
        Square::parse(s).unwrap()
    }

    /// Reference slider attacks by walking rays, to check the magic tables.
    fn slow_slide(s: Square, occ: Bitboard, dirs: &[(i32, i32)]) -> Bitboard {
        let mut att = Bitboard::EMPTY;
        for &(df, dr) in dirs {
            let (mut f, mut r) = (s.file().index() as i32 + df, s.rank().index() as i32 + dr);
            while (0..8).contains(&f) && (0..8).contains(&r) {
                let t = Square::new((r * 8 + f) as u8);
                att = att.with(t);
                if occ.contains(t) {
                    break;
                }
                f += df;
                r += dr;
            }
        }
        att
    }

    #[test]
    fn magics_match_ray_walking() {
        let mut x = 0x1234_5678_9abc_def1u64;
        for _ in 0..2000 {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            let occ = Bitboard(x & (x >> 3));
            for s in Square::all() {
                assert_eq!(rook_attacks(s, occ), slow_slide(s, occ, &DIRS[..4]));
                assert_eq!(bishop_attacks(s, occ), slow_slide(s, occ, &DIRS[4..]));
            }
        }
    }

    #[test]
    fn leapers_and_lines() {
        assert_eq!(knight_attacks(sq("a1")).count(), 2);
        assert_eq!(king_attacks(sq("e4")).count(), 8);
        assert_eq!(
            pawn_attacks(Color::White, sq("e4")),
            Bitboard::from(sq("d5")) | sq("f5").into()
        );
        assert_eq!(between(sq("a1"), sq("d4")), Bitboard::from(sq("b2")) | sq("c3").into());
        assert_eq!(between(sq("a1"), sq("b3")), Bitboard::EMPTY);
        assert!(line(sq("a1"), sq("c3")).contains(sq("h8")));
        assert!(aligned(sq("e1"), sq("e4"), sq("e8")));
        assert!(!aligned(sq("e1"), sq("e4"), sq("d8")));
    }
}
