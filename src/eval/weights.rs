//! Every evaluation weight, named, in one flat table.
//!
//! The evaluation reads weights by the named offsets below; [`SECTIONS`] lists the same
//! layout once more as data (name, offset, length, the row `eval` shows it in), which the
//! tuner's output file and the `eval` breakdown read, and a test checks against the offsets.
//! The tuner (`madhouse tune`) fits the whole table to game results and writes a replacement
//! for `DEFAULT_WEIGHTS`. Units are centipawns except the king-danger inputs, which are
//! "danger units" turned into a penalty by `danger_penalty` (quadratic, capped).

/// Material of a piece on the board, pawn..queen.
pub const MATERIAL_BOARD: usize = 0;
/// Material of a piece in hand, pawn..queen (in crazyhouse a held piece is worth more: it can
/// appear anywhere).
pub const MATERIAL_HAND: usize = MATERIAL_BOARD + 5;
/// Adjustment for a promoted piece on the board: it returns to the captor's hand as a pawn,
/// so it is worth less than an original piece. Entry 0 serves knights, bishops and rooks
/// (rare promotions), entry 1 queens.
pub const PROMOTED: usize = MATERIAL_HAND + 5;
/// Piece-square tables, pawn..king, 64 squares each from white's side (a1 = 0). The
/// fitted extremes sit on squares the data rarely shows: the knight's a1 (-289 cp), b8
/// and h1 are occupied in under 0.1% of the 852,819 fitting positions (median square
/// 0.85%), so a few games set them; `madhouse tune --l2` pulls such weights to their prior.
pub const PSQT: usize = PROMOTED + 2;
/// Mobility by number of safe squares: knight 0..=8, bishop 0..=13, rook 0..=14, queen 0..=27.
pub const MOBILITY: usize = PSQT + 6 * 64;
/// Offsets of each role's mobility table inside `MOBILITY` (knight, bishop, rook, queen).
pub const MOBILITY_OFFSETS: [usize; 4] = [0, 9, 23, 38];
/// Largest mobility count with a weight of its own (knight, bishop, rook, queen); higher
/// counts are rare in games and use the entry of the cap.
pub const MOBILITY_CAPS: [usize; 4] = [8, 10, 11, 18];
/// Number of mobility entries.
pub const MOBILITY_LEN: usize = 66;
/// Bonus for owning both bishops on the board.
pub const BISHOP_PAIR: usize = MOBILITY + MOBILITY_LEN;
/// Penalty per doubled pawn.
pub const DOUBLED_PAWN: usize = BISHOP_PAIR + 1;
/// Penalty per isolated pawn.
pub const ISOLATED_PAWN: usize = DOUBLED_PAWN + 1;
/// Passed pawn by relative rank (index 0..8).
pub const PASSED_PAWN: usize = ISOLATED_PAWN + 1;
/// Bonus for the side to move. The only term that depends on who moves besides
/// `HANGING_TO_MOVE`: an earlier extra danger term for the king of the side not to move
/// (a constant shift of its danger sum) was collinear with this one — the danger sum carries
/// `KD_BIAS`, so at ordinary danger the shift was worth a near-constant bonus to the mover,
/// and the fit paid for it with a tempo of -353 cp. It was removed and the weights refitted.
pub const TEMPO: usize = PASSED_PAWN + 8;
/// Bonus per drop square in the enemy half that the enemy does not attack, for each role held
/// (knight..queen); pawns excluded (they cannot reach far).
pub const DROP_MOBILITY: usize = TEMPO + 1;
/// Bonus per enemy piece attacked by one of our pawns. Large when fitted (about +175 cp):
/// the term does not ask who moves, so it averages "we move and win the piece" with "they
/// move it away", as `HANGING` and `HANGING_TO_MOVE` do not.
pub const PAWN_THREAT: usize = DROP_MOBILITY + 1;
/// Penalty per own piece (not pawn) attacked and not defended.
pub const HANGING: usize = PAWN_THREAT + 1;
/// Bonus for a rook on an open file.
pub const ROOK_OPEN_FILE: usize = HANGING + 1;

/// King tropism: bonus by (role knight..queen, distance 1..=7 to the enemy king), index
/// `(role - 1) * 7 + distance - 1`.
pub const TROPISM: usize = ROOK_OPEN_FILE + 1;

// ----- King danger inputs (danger units). -----

/// Constant term of the danger sum.
pub const KD_BIAS: usize = TROPISM + 28;
/// Danger per enemy piece attacking the king ring, by its role (pawn..queen).
pub const KD_ATTACKER: usize = KD_BIAS + 1;
/// Danger per attacked ring square (attacks counted once per attacker).
pub const KD_RING_ATTACKS: usize = KD_ATTACKER + 5;
/// Danger per piece the enemy holds in hand, by role (pawn..queen).
pub const KD_HAND: usize = KD_RING_ATTACKS + 1;
/// Danger per safe checking square, by the role that can check from there (by a move or a
/// drop from hand): pawn..queen.
pub const KD_SAFE_CHECK: usize = KD_HAND + 5;
/// Danger per empty ring square we do not defend (a landing square for drops), counted only
/// when the enemy holds pieces.
pub const KD_HOLE: usize = KD_SAFE_CHECK + 5;
/// Danger per ring square the enemy attacks and we defend only with the king, or not at all.
pub const KD_WEAK_RING: usize = KD_HOLE + 1;
/// Danger per own pawn in the shield (the three files around the king, two ranks ahead).
pub const KD_SHIELD: usize = KD_WEAK_RING + 1;
/// Danger per own piece (not pawn) next to the king, defending it.
pub const KD_DEFENDER: usize = KD_SHIELD + 1;
/// Danger per open or half-open file next to or at the king.
pub const KD_OPEN_FILE: usize = KD_DEFENDER + 1;
/// Danger per hole (see `KD_HOLE`) that enemy pieces already attack: a supported drop there
/// is often mate.
pub const KD_SUPPORTED_HOLE: usize = KD_OPEN_FILE + 1;

// ----- Terms added after the first fit (appended so fitted values keep their places). -----

/// Penalty per own piece (not pawn) attacked and not defended when we are to move (we can
/// still save it); `HANGING` applies when the opponent is to move.
pub const HANGING_TO_MOVE: usize = KD_SUPPORTED_HOLE + 1;
/// Bonus per enemy rook or queen attacked by one of our knights or bishops.
pub const MINOR_THREAT: usize = HANGING_TO_MOVE + 1;
/// Total number of weights.
pub const NUM_WEIGHTS: usize = MINOR_THREAT + 1;

/// Where a section of weights is shown by `eval`.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub enum Shown {
    /// Its own row, with this label (sections with the same label share a row).
    Row(&'static str),
    /// An input of the king-danger sum, shown as the "King danger" row.
    KingDanger,
}

/// A named run of weights.
#[derive(Copy, Clone, Debug)]
pub struct Section {
    /// Name (the constant's name, with the role for per-role tables).
    pub name: &'static str,
    /// First index.
    pub start: usize,
    /// Number of weights.
    pub len: usize,
    /// Where `eval` shows it.
    pub shown: Shown,
}

const fn section(name: &'static str, start: usize, len: usize, shown: Shown) -> Section {
    Section { name, start, len, shown }
}

const fn row(label: &'static str) -> Shown {
    Shown::Row(label)
}

const KD: Shown = Shown::KingDanger;

/// The weight layout as data, in index order: contiguous, covering every weight once.
pub const SECTIONS: &[Section] = &[
    section("MATERIAL_BOARD", MATERIAL_BOARD, 5, row("Material (board)")),
    section("MATERIAL_HAND", MATERIAL_HAND, 5, row("Material (hand)")),
    section("PROMOTED minor/rook, queen", PROMOTED, 2, row("Promoted pieces")),
    section("PSQT pawn", PSQT, 64, row("Piece squares")),
    section("PSQT knight", PSQT + 64, 64, row("Piece squares")),
    section("PSQT bishop", PSQT + 128, 64, row("Piece squares")),
    section("PSQT rook", PSQT + 192, 64, row("Piece squares")),
    section("PSQT queen", PSQT + 256, 64, row("Piece squares")),
    section("PSQT king", PSQT + 320, 64, row("Piece squares")),
    section("MOBILITY knight", MOBILITY + MOBILITY_OFFSETS[0], 9, row("Mobility")),
    section("MOBILITY bishop", MOBILITY + MOBILITY_OFFSETS[1], 14, row("Mobility")),
    section("MOBILITY rook", MOBILITY + MOBILITY_OFFSETS[2], 15, row("Mobility")),
    section("MOBILITY queen", MOBILITY + MOBILITY_OFFSETS[3], 28, row("Mobility")),
    section("BISHOP_PAIR", BISHOP_PAIR, 1, row("Bishop pair")),
    section("DOUBLED_PAWN", DOUBLED_PAWN, 1, row("Doubled pawns")),
    section("ISOLATED_PAWN", ISOLATED_PAWN, 1, row("Isolated pawns")),
    section("PASSED_PAWN", PASSED_PAWN, 8, row("Passed pawns")),
    section("TEMPO", TEMPO, 1, row("Tempo")),
    section("DROP_MOBILITY", DROP_MOBILITY, 1, row("Drop mobility")),
    section("PAWN_THREAT", PAWN_THREAT, 1, row("Pawn threats")),
    section("HANGING", HANGING, 1, row("Hanging (not to move)")),
    section("ROOK_OPEN_FILE", ROOK_OPEN_FILE, 1, row("Rook on open file")),
    section(
        "TROPISM knight, bishop, rook, queen (distance 1..7)",
        TROPISM,
        28,
        row("King tropism"),
    ),
    section("KD_BIAS", KD_BIAS, 1, KD),
    section("KD_ATTACKER", KD_ATTACKER, 5, KD),
    section("KD_RING_ATTACKS", KD_RING_ATTACKS, 1, KD),
    section("KD_HAND", KD_HAND, 5, KD),
    section("KD_SAFE_CHECK", KD_SAFE_CHECK, 5, KD),
    section("KD_HOLE", KD_HOLE, 1, KD),
    section("KD_WEAK_RING", KD_WEAK_RING, 1, KD),
    section("KD_SHIELD", KD_SHIELD, 1, KD),
    section("KD_DEFENDER", KD_DEFENDER, 1, KD),
    section("KD_OPEN_FILE", KD_OPEN_FILE, 1, KD),
    section("KD_SUPPORTED_HOLE", KD_SUPPORTED_HOLE, 1, KD),
    section("HANGING_TO_MOVE", HANGING_TO_MOVE, 1, row("Hanging (to move)")),
    section("MINOR_THREAT", MINOR_THREAT, 1, row("Minor threats")),
];

/// The section holding weight `idx`.
pub fn section_of(idx: usize) -> &'static Section {
    let i = SECTIONS.partition_point(|s| s.start <= idx);
    &SECTIONS[i.saturating_sub(1)]
}

/// Divisor of the quadratic danger penalty.
pub const DANGER_DIVISOR: i32 = 512;
/// Largest king-danger penalty in centipawns.
pub const DANGER_CAP: i32 = 2500;

/// Turns a danger sum into a penalty in centipawns: `d² / DANGER_DIVISOR`, capped.
#[inline]
pub fn danger_penalty(danger: i32) -> i32 {
    if danger <= 0 {
        0
    } else {
        let d = danger.min(4096);
        (d * d / DANGER_DIVISOR).min(DANGER_CAP)
    }
}

const fn build_defaults() -> [i32; NUM_WEIGHTS] {
    let mut w = [0i32; NUM_WEIGHTS];
    let board = [100, 260, 270, 340, 580];
    let hand = [120, 290, 280, 350, 600];
    let mut i = 0;
    while i < 5 {
        w[MATERIAL_BOARD + i] = board[i];
        w[MATERIAL_HAND + i] = hand[i];
        i += 1;
    }
    w[PROMOTED] = -20;
    w[PROMOTED + 1] = -60;
    // Piece-square tables: centralisation for minor pieces, advanced pawns, and a king that
    // stays home behind its pawns (an exposed king is fatal with drops).
    let mut sq = 0;
    while sq < 64 {
        let file = (sq % 8) as i32;
        let rank = (sq / 8) as i32;
        let fc = if file < 4 { file } else { 7 - file }; // 0 edge .. 3 centre
        let rc = if rank < 4 { rank } else { 7 - rank };
        w[PSQT + sq] = if rank == 0 || rank == 7 { 0 } else { (rank - 1) * 4 + fc * 2 };
        w[PSQT + 64 + sq] = (fc + rc) * 6 - 20;
        w[PSQT + 128 + sq] = (fc + rc) * 3 - 8;
        w[PSQT + 192 + sq] = if rank == 6 { 15 } else { 0 };
        w[PSQT + 256 + sq] = (fc + rc) * 2 - 6;
        w[PSQT + 320 + sq] = if rank == 0 {
            match file {
                0 | 1 | 6 | 7 => 20,
                2 => 10,
                _ => 0,
            }
        } else {
            -25 * rank
        };
        sq += 1;
    }
    // Mobility: roughly linear around a typical count.
    let centres = [4, 6, 7, 13];
    let slopes = [5, 4, 3, 2];
    let lens = [9, 14, 15, 28];
    let mut r = 0;
    while r < 4 {
        let mut n = 0;
        while n < lens[r] {
            w[MOBILITY + MOBILITY_OFFSETS[r] + n] = (n as i32 - centres[r]) * slopes[r];
            n += 1;
        }
        r += 1;
    }
    w[BISHOP_PAIR] = 20;
    w[DOUBLED_PAWN] = -10;
    w[ISOLATED_PAWN] = -8;
    let passed = [0, 5, 5, 10, 20, 35, 60, 0];
    let mut k = 0;
    while k < 8 {
        w[PASSED_PAWN + k] = passed[k];
        k += 1;
    }
    w[TEMPO] = 30;
    w[DROP_MOBILITY] = 1;
    w[PAWN_THREAT] = 30;
    w[HANGING] = -20;
    w[ROOK_OPEN_FILE] = 15;

    w[KD_BIAS] = -40;
    let attacker = [10, 30, 20, 30, 50];
    let hand_danger = [8, 30, 15, 25, 40];
    let safe_check = [30, 60, 40, 60, 50];
    let mut j = 0;
    while j < 5 {
        w[KD_ATTACKER + j] = attacker[j];
        w[KD_HAND + j] = hand_danger[j];
        w[KD_SAFE_CHECK + j] = safe_check[j];
        j += 1;
    }
    w[KD_RING_ATTACKS] = 8;
    w[KD_HOLE] = 12;
    w[KD_WEAK_RING] = 15;
    w[KD_SHIELD] = -12;
    w[KD_DEFENDER] = -8;
    w[KD_OPEN_FILE] = 15;
    w[KD_SUPPORTED_HOLE] = 20;
    w[HANGING_TO_MOVE] = -20;
    w[MINOR_THREAT] = 20;
    let near = [12, 8, 4, 2, 0, 0, 0];
    let mut t = 0;
    while t < 28 {
        w[TROPISM + t] = near[t % 7];
        t += 1;
    }
    w
}

/// The weights the engine plays with, as fitted by the tuner.
pub static DEFAULT_WEIGHTS: [i32; NUM_WEIGHTS] = super::tuned::TUNED;

/// The hand-made weights the first tuning run started from; `madhouse tune --start
/// hand-made` fits afresh from them (by default it refines `DEFAULT_WEIGHTS`).
pub static HAND_MADE_WEIGHTS: [i32; NUM_WEIGHTS] = build_defaults();

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sections_cover_every_weight_once() {
        let mut next = 0;
        for s in SECTIONS {
            assert_eq!(s.start, next, "{} starts at {} after a gap or overlap", s.name, s.start);
            assert!(s.len > 0, "{} is empty", s.name);
            next += s.len;
        }
        assert_eq!(next, NUM_WEIGHTS);
        assert_eq!(MOBILITY_OFFSETS[3] + 28, MOBILITY_LEN);
        for idx in 0..NUM_WEIGHTS {
            let s = section_of(idx);
            assert!((s.start..s.start + s.len).contains(&idx));
        }
    }
}
