//! Drop-aware evaluation.
//!
//! The score is a sum of weighted features (material on the board and in hand, piece-square
//! tables, mobility, pawn structure, threats, drop mobility, tempo) minus a king-danger
//! penalty for each side. King danger is a weighted sum of attack inputs — pieces near the
//! king, pieces the enemy holds, safe checking squares for moves and drops, holes for drops,
//! the pawn shield — turned into centipawns by a capped quadratic (`danger_penalty`).
//!
//! The evaluation is written once, generic over a [`Tracer`]: the engine uses `NoTrace`
//! (compiled away), the `eval` command a per-term breakdown, and the tuner records the
//! features of each position to fit the weights.

mod tuned;
pub mod weights;

use crate::core::attacks::{
    bishop_attacks, king_attacks, knight_attacks, pawn_attacks, queen_attacks, rook_attacks,
};
use crate::core::{Bitboard, Color, Position, Role, Square};
use weights::*;

/// Receives every feature the evaluation uses, for tuning and breakdowns.
pub trait Tracer {
    /// Whether this tracer records anything (lets the compiler drop the calls).
    const ENABLED: bool;
    /// `n` times weight `idx` is added to `color`'s score.
    fn linear(&mut self, color: Color, idx: usize, n: i32);
    /// `n` times weight `idx` is added to the danger sum of `color`'s king.
    fn danger(&mut self, color: Color, idx: usize, n: i32);
    /// The final penalty of `color`'s king danger, for display.
    fn danger_total(&mut self, _color: Color, _sum: i32, _penalty: i32) {}
}

/// The tracer of normal play: records nothing.
pub struct NoTrace;

impl Tracer for NoTrace {
    const ENABLED: bool = false;
    #[inline(always)]
    fn linear(&mut self, _: Color, _: usize, _: i32) {}
    #[inline(always)]
    fn danger(&mut self, _: Color, _: usize, _: i32) {}
}

/// Static evaluation in centipawns from the side to move's point of view.
#[inline]
pub fn evaluate(pos: &Position) -> i32 {
    evaluate_with(pos, &DEFAULT_WEIGHTS, &mut NoTrace)
}

/// Everything one side attacks, by role, computed once per evaluation.
struct Attacks {
    by_role: [Bitboard; 6],
    all: Bitboard,
    /// Squares attacked by pieces other than the king.
    no_king: Bitboard,
}

fn side_attacks(pos: &Position, c: Color) -> Attacks {
    let occ = pos.occupied();
    let mut by_role = [Bitboard::EMPTY; 6];
    by_role[Role::Pawn.index()] = pos.pieces(c, Role::Pawn).pawn_attacks(c);
    for sq in pos.pieces(c, Role::Knight) {
        by_role[Role::Knight.index()] |= knight_attacks(sq);
    }
    for sq in pos.pieces(c, Role::Bishop) {
        by_role[Role::Bishop.index()] |= bishop_attacks(sq, occ);
    }
    for sq in pos.pieces(c, Role::Rook) {
        by_role[Role::Rook.index()] |= rook_attacks(sq, occ);
    }
    for sq in pos.pieces(c, Role::Queen) {
        by_role[Role::Queen.index()] |= queen_attacks(sq, occ);
    }
    by_role[Role::King.index()] = king_attacks(pos.king(c));
    let no_king = by_role[..5].iter().fold(Bitboard::EMPTY, |a, &b| a | b);
    Attacks { by_role, all: no_king | by_role[Role::King.index()], no_king }
}

/// Evaluation with explicit weights and a tracer. White-relative terms are summed, then the
/// result is turned to the side to move's view.
pub fn evaluate_with<T: Tracer>(pos: &Position, w: &[i32; NUM_WEIGHTS], t: &mut T) -> i32 {
    let att = [side_attacks(pos, Color::White), side_attacks(pos, Color::Black)];
    let mut score = [0i32; 2];
    for c in Color::ALL {
        score[c.index()] = side_terms(pos, c, &att, w, t) - king_danger(pos, c, &att, w, t);
    }
    let stm = pos.turn();
    score[stm.index()] += w[TEMPO];
    t.linear(stm, TEMPO, 1);
    let white = score[0] - score[1];
    white * stm.sign()
}

/// Everything but king danger, for `c`.
fn side_terms<T: Tracer>(
    pos: &Position,
    c: Color,
    att: &[Attacks; 2],
    w: &[i32; NUM_WEIGHTS],
    t: &mut T,
) -> i32 {
    let them = c.flip();
    let mut s = 0;
    let mut add = |t: &mut T, idx: usize, n: i32| {
        if n != 0 {
            s += w[idx] * n;
            t.linear(c, idx, n);
        }
    };
    let ours = pos.us(c);
    let hand = pos.hand(c);
    let promoted = pos.promoted() & ours;

    // Material, on the board and in hand; promoted pieces adjusted.
    for role in Role::DROPPABLE {
        let on_board = pos.pieces(c, role);
        add(t, MATERIAL_BOARD + role.index(), on_board.count() as i32);
        add(t, MATERIAL_HAND + role.index(), hand.count(role) as i32);
        if role != Role::Pawn {
            // Promotions to minor pieces and rooks are rare: they share one weight.
            let slot = if role == Role::Queen { 1 } else { 0 };
            add(t, PROMOTED + slot, (on_board & promoted).count() as i32);
        }
    }

    // Piece-square tables.
    for role in Role::ALL {
        for sq in pos.pieces(c, role) {
            add(t, PSQT + role.index() * 64 + sq.relative_to(c).index(), 1);
        }
    }

    // Mobility: squares not held by our pieces nor attacked by enemy pawns.
    let occ = pos.occupied();
    let safe = !ours & !att[them.index()].by_role[Role::Pawn.index()];
    for (k, role) in [Role::Knight, Role::Bishop, Role::Rook, Role::Queen].into_iter().enumerate() {
        // Counts beyond these are too rare to fit and share the last entry.
        let max = MOBILITY_CAPS[k];
        for sq in pos.pieces(c, role) {
            let a = match role {
                Role::Knight => knight_attacks(sq),
                Role::Bishop => bishop_attacks(sq, occ),
                Role::Rook => rook_attacks(sq, occ),
                _ => queen_attacks(sq, occ),
            };
            let n = ((a & safe).count() as usize).min(max);
            add(t, MOBILITY + MOBILITY_OFFSETS[k] + n, 1);
        }
    }
    if pos.pieces(c, Role::Bishop).count() >= 2 {
        add(t, BISHOP_PAIR, 1);
    }

    // Pawn structure.
    let pawns = pos.pieces(c, Role::Pawn);
    let their_pawns = pos.pieces(them, Role::Pawn);
    let mut doubled = 0;
    let mut isolated = 0;
    for f in 0..8u8 {
        let file = crate::core::File::new(f);
        let n = (pawns & Bitboard::file(file)).count() as i32;
        doubled += (n - 1).max(0);
        if n > 0 && (pawns & Bitboard::adjacent_files(file)).is_empty() {
            isolated += n;
        }
    }
    add(t, DOUBLED_PAWN, doubled);
    add(t, ISOLATED_PAWN, isolated);
    for sq in pawns {
        if (passed_mask(c, sq) & their_pawns).is_empty() {
            add(t, PASSED_PAWN + sq.rank().relative_to(c).index(), 1);
        }
    }

    // Threats.
    let their_pieces = pos.non_pawn_pieces(them);
    add(t, PAWN_THREAT, (att[c.index()].by_role[Role::Pawn.index()] & their_pieces).count() as i32);
    let our_pieces = pos.non_pawn_pieces(c);
    let hanging = (our_pieces & att[them.index()].all & !att[c.index()].all).count() as i32;
    add(t, if pos.turn() == c { HANGING_TO_MOVE } else { HANGING }, hanging);
    let minors =
        att[c.index()].by_role[Role::Knight.index()] | att[c.index()].by_role[Role::Bishop.index()];
    let majors = pos.pieces(them, Role::Rook) | pos.pieces(them, Role::Queen);
    add(t, MINOR_THREAT, (minors & majors).count() as i32);
    for sq in pos.pieces(c, Role::Rook) {
        if (Bitboard::file(sq.file()) & (pawns | their_pawns)).is_empty() {
            add(t, ROOK_OPEN_FILE, 1);
        }
    }

    // King tropism: pieces close to the enemy king.
    let their_king = pos.king(them);
    for role in [Role::Knight, Role::Bishop, Role::Rook, Role::Queen] {
        for sq in pos.pieces(c, role) {
            let d = sq.distance(their_king).clamp(1, 7) as usize;
            add(t, TROPISM + (role.index() - 1) * 7 + d - 1, 1);
        }
    }

    // Drop mobility: safe landing squares in the enemy half for each piece type held.
    let held = hand.roles().filter(|&r| r != Role::Pawn).count() as i32;
    if held > 0 {
        let landing = !occ & Bitboard::half(them) & !att[them.index()].all;
        add(t, DROP_MOBILITY, held * landing.count() as i32);
    }
    s
}

/// Squares in front of a pawn of `c` on `sq`, on its file and the adjacent ones.
fn passed_mask(c: Color, sq: Square) -> Bitboard {
    (Bitboard::file(sq.file()) | Bitboard::adjacent_files(sq.file()))
        & Bitboard::ranks_ahead(c, sq.rank())
}

/// The king-danger penalty of `c`'s king, in centipawns.
fn king_danger<T: Tracer>(
    pos: &Position,
    c: Color,
    att: &[Attacks; 2],
    w: &[i32; NUM_WEIGHTS],
    t: &mut T,
) -> i32 {
    let them = c.flip();
    let ksq = pos.king(c);
    let ring = king_attacks(ksq);
    let occ = pos.occupied();
    let mine = &att[c.index()];
    let theirs = &att[them.index()];
    let their_hand = pos.hand(them);
    let mut d = 0;
    let mut add = |t: &mut T, idx: usize, n: i32| {
        if n != 0 {
            d += w[idx] * n;
            t.danger(c, idx, n);
        }
    };
    add(t, KD_BIAS, 1);

    // Enemy pieces bearing on the ring.
    let mut ring_attacks = 0;
    for role in Role::DROPPABLE {
        let mut attackers = 0;
        for sq in pos.pieces(them, role) {
            let a = match role {
                Role::Pawn => pawn_attacks(them, sq),
                Role::Knight => knight_attacks(sq),
                Role::Bishop => bishop_attacks(sq, occ),
                Role::Rook => rook_attacks(sq, occ),
                _ => queen_attacks(sq, occ),
            } & ring;
            if a.any() {
                attackers += 1;
                ring_attacks += a.count() as i32;
            }
        }
        add(t, KD_ATTACKER + role.index(), attackers);
        add(t, KD_HAND + role.index(), their_hand.count(role) as i32);
    }
    add(t, KD_RING_ATTACKS, ring_attacks);

    // Safe checks, by move or by drop: squares we do not defend except with a king that
    // could not take there.
    let safe = !mine.no_king & !(mine.by_role[Role::King.index()] & theirs.all);
    let empty = !occ;
    let rook_checks = rook_attacks(ksq, occ);
    let bishop_checks = bishop_attacks(ksq, occ);
    for role in Role::DROPPABLE {
        let check_squares = match role {
            Role::Pawn => pawn_attacks(c, ksq),
            Role::Knight => knight_attacks(ksq),
            Role::Bishop => bishop_checks,
            Role::Rook => rook_checks,
            _ => rook_checks | bishop_checks,
        };
        let mut from = theirs.by_role[role.index()] & !pos.us(them);
        if their_hand.has(role) {
            let mut drops = empty;
            if role == Role::Pawn {
                drops &= pos.variant().pawn_drop_region(them);
            }
            from |= drops;
        }
        add(t, KD_SAFE_CHECK + role.index(), (from & check_squares & safe).count() as i32);
    }

    // Landing squares for drops next to the king, and weak ring squares.
    if !their_hand.is_empty() {
        let holes = ring & empty & !mine.no_king;
        add(t, KD_HOLE, holes.count() as i32);
        add(t, KD_SUPPORTED_HOLE, (holes & theirs.no_king).count() as i32);
    }
    add(t, KD_WEAK_RING, (ring & theirs.all & !mine.no_king).count() as i32);

    // Shelter: pawns in front, defenders around, open files.
    let files = Bitboard::file(ksq.file()) | Bitboard::adjacent_files(ksq.file());
    let ahead = Bitboard::ranks_ahead(c, ksq.rank());
    let front = ahead & !ahead.shift_forward(c).shift_forward(c);
    let pawns = pos.pieces(c, Role::Pawn);
    add(t, KD_SHIELD, (pawns & files & front).count() as i32);
    add(t, KD_DEFENDER, (pos.non_pawn_pieces(c) & ring).count() as i32);
    let open = (0..8u8)
        .map(crate::core::File::new)
        .filter(|&f| files.contains_file(f) && (pawns & Bitboard::file(f)).is_empty())
        .count() as i32;
    add(t, KD_OPEN_FILE, open);

    let penalty = danger_penalty(d);
    t.danger_total(c, d, penalty);
    penalty
}

/// A per-term breakdown of the evaluation, for the `eval` command: one row per label of
/// [`SECTIONS`], in table order, then the king-danger penalty.
pub fn breakdown(pos: &Position) -> String {
    struct Rows {
        sums: Vec<(&'static str, [i32; 2])>,
        danger: [(i32, i32); 2],
    }
    impl Rows {
        fn row(&mut self, label: &'static str) -> &mut [i32; 2] {
            let i = match self.sums.iter().position(|(l, _)| *l == label) {
                Some(i) => i,
                None => {
                    self.sums.push((label, [0, 0]));
                    self.sums.len() - 1
                }
            };
            &mut self.sums[i].1
        }
    }
    impl Tracer for Rows {
        const ENABLED: bool = true;
        fn linear(&mut self, color: Color, idx: usize, n: i32) {
            if let Shown::Row(label) = section_of(idx).shown {
                self.row(label)[color.index()] += DEFAULT_WEIGHTS[idx] * n;
            }
        }
        fn danger(&mut self, _: Color, _: usize, _: i32) {}
        fn danger_total(&mut self, color: Color, sum: i32, penalty: i32) {
            self.danger[color.index()] = (sum, penalty);
        }
    }
    let mut rows = Rows { sums: Vec::new(), danger: [(0, 0); 2] };
    for s in SECTIONS {
        if let Shown::Row(label) = s.shown {
            rows.row(label);
        }
    }
    let total = evaluate_with(pos, &DEFAULT_WEIGHTS, &mut rows);
    let mut out = String::new();
    out.push_str("      Term             |  White |  Black |  Total\n");
    out.push_str("-----------------------+--------+--------+--------\n");
    for (name, [wv, bv]) in &rows.sums {
        out.push_str(&format!("{name:<22} | {wv:>6} | {bv:>6} | {:>6}\n", wv - bv));
    }
    let [(wd, wp), (bd, bp)] = rows.danger;
    out.push_str(&format!("{:<22} | {:>6} | {:>6} | {:>6}\n", "King danger", -wp, -bp, bp - wp));
    out.push_str(&format!("  (danger sums: white king {wd}, black king {bd})\n"));
    out.push_str("-----------------------+--------+--------+--------\n");
    out.push_str(&format!(
        "Final evaluation: {total} cp from {}'s side ({} cp from White's)\n",
        pos.turn().name(),
        total * pos.turn().sign()
    ));
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::core::Variant;

    fn pos(fen: &str) -> Position {
        Position::from_fen(fen, Variant::Crazyhouse).unwrap()
    }

    #[test]
    fn start_position_is_balanced_but_for_the_move() {
        // Only the tempo breaks the symmetry of the start position (nothing hangs there);
        // moving first is an advantage.
        let p = Position::startpos(Variant::Crazyhouse);
        let mut w = DEFAULT_WEIGHTS;
        w[TEMPO] = 0;
        assert_eq!(evaluate_with(&p, &w, &mut NoTrace), 0);
        assert!(evaluate(&p) > 0, "start position: {}", evaluate(&p));
    }

    #[test]
    fn symmetric_positions_mirror() {
        // The same position with colours swapped evaluates the same for the side to move.
        let a = pos("r1bqkbnr/pppp1ppp/2n5/4p3/4P3/5N2/PPPP1PPP/RNBQKB1R[Nb] w KQkq - 2 3");
        let b = pos("rnbqkb1r/pppp1ppp/5n2/4p3/4P3/2N5/PPPP1PPP/R1BQKBNR[Bn] b KQkq - 2 3");
        assert_eq!(evaluate(&a), evaluate(&b));
    }

    #[test]
    fn pieces_in_hand_count() {
        let base = pos("rnbqkbnr/pppppppp/8/8/8/8/PPPPPPPP/RNBQKBNR[] w KQkq - 0 1");
        let more = pos("rnbqkbnr/pppppppp/8/8/8/8/PPPPPPPP/RNBQKBNR[N] w KQkq - 0 1");
        assert!(evaluate(&more) > evaluate(&base) + 100);
    }

    #[test]
    fn breakdown_sums_to_the_evaluation() {
        let p = pos("r1bqk2r/pppp1ppp/2n1p3/4P3/1b1Pn3/2NB1N2/PPP2PPP/R1BQK2R[Pp] b KQkq - 0 1");
        let text = breakdown(&p);
        assert!(text.contains(&format!("Final evaluation: {} cp", evaluate(&p))), "{text}");
        // The rows' totals (white minus black) add up to the evaluation from white's side:
        // no term is lost or counted twice.
        let rows: i32 = text
            .lines()
            .filter(|l| l.matches('|').count() == 3 && !l.contains("Term"))
            .map(|l| l.rsplit('|').next().unwrap().trim().parse::<i32>().unwrap())
            .sum();
        assert_eq!(rows, evaluate(&p) * p.turn().sign(), "{text}");
        for s in SECTIONS {
            if let Shown::Row(label) = s.shown {
                assert!(text.contains(label), "{label} missing: {text}");
            }
        }
    }
}
