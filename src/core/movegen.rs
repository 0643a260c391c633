//! Legal move generation, drops included.
//!
//! Moves are generated legal (pins, checks and en-passant discoveries are resolved here), in
//! three groups a staged move picker can ask for separately: captures and promotions, quiet
//! board moves (castling included), and drops. Output goes to a `MoveSink`, so the same code
//! fills a `MoveList`, counts moves for perft, or looks for one move.

use super::attacks::{
    between, bishop_attacks, king_attacks, knight_attacks, line, pawn_attacks, rook_attacks,
};
use super::bitboard::Bitboard;
use super::moves::{Move, MoveKind, MoveList};
use super::position::{CastlingRights, Position};
use super::types::{Color, Role, Square};

/// Where generated moves go.
pub trait MoveSink {
    /// Takes one move.
    fn push(&mut self, m: Move);

    /// Takes normal moves from `from` to every square of `targets`.
    #[inline]
    fn push_targets(&mut self, from: Square, targets: Bitboard) {
        for to in targets {
            self.push(Move::normal(from, to));
        }
    }

    /// Takes drops of `role` onto every square of `targets`.
    #[inline]
    fn push_drops(&mut self, role: Role, targets: Bitboard) {
        for to in targets {
            self.push(Move::drop(role, to));
        }
    }
}

impl MoveSink for MoveList {
    #[inline]
    fn push(&mut self, m: Move) {
        MoveList::push(self, m);
    }
}

/// Counts moves without storing them (perft bulk counting).
#[derive(Default)]
pub struct MoveCounter(pub u64);

impl MoveSink for MoveCounter {
    #[inline]
    fn push(&mut self, _: Move) {
        self.0 += 1;
    }
    #[inline]
    fn push_targets(&mut self, _: Square, targets: Bitboard) {
        self.0 += targets.count() as u64;
    }
    #[inline]
    fn push_drops(&mut self, _: Role, targets: Bitboard) {
        self.0 += targets.count() as u64;
    }
}

/// Generate captures, en passant and all promotions.
pub const GEN_CAPTURES: u8 = 1;
/// Generate quiet board moves (no promotions), castling included.
pub const GEN_QUIETS: u8 = 2;
/// Generate drops.
pub const GEN_DROPS: u8 = 4;
/// Generate everything.
pub const GEN_ALL: u8 = GEN_CAPTURES | GEN_QUIETS | GEN_DROPS;

impl Position {
    /// All legal moves.
    pub fn legal_moves(&self) -> MoveList {
        let mut list = MoveList::new();
        self.generate::<GEN_ALL, _>(&mut list);
        list
    }

    /// Number of legal moves, counted in bulk (drops by popcount).
    pub fn count_legal(&self) -> u64 {
        let mut c = MoveCounter(0);
        self.generate::<GEN_ALL, _>(&mut c);
        c.0
    }

    /// Does the side to move have any legal move?
    pub fn has_legal_move(&self) -> bool {
        // Drops are the cheapest answer when the pocket is not empty and we are not in check.
        if !self.in_check() && !self.hand(self.turn()).is_empty() {
            let region = self.drop_targets();
            for role in self.hand(self.turn()).roles() {
                let t = if role == Role::Pawn {
                    region & self.variant().pawn_drop_region(self.turn())
                } else {
                    region
                };
                if t.any() {
                    return true;
                }
            }
        }
        self.count_legal() > 0
    }

    /// Legal moves of the groups in `GEN` (a mask of `GEN_*` flags), given to `sink`.
    pub fn generate<const GEN: u8, S: MoveSink>(&self, sink: &mut S) {
        let us = self.turn();
        let them = us.flip();
        let occ = self.occupied();
        let ours = self.us(us);
        let theirs = self.us(them);
        let ksq = self.king(us);
        let checkers = self.checkers();

        // King moves: the king may not step onto a square attacked once it has left its own.
        let mut king_to = Bitboard::EMPTY;
        if GEN & GEN_CAPTURES != 0 {
            king_to |= theirs;
        }
        if GEN & GEN_QUIETS != 0 {
            king_to |= !occ;
        }
        let without_king = occ.without(ksq);
        let mut king_targets = Bitboard::EMPTY;
        for to in king_attacks(ksq) & king_to & !ours {
            if self.attackers_to(to, them, without_king).is_empty() {
                king_targets = king_targets.with(to);
            }
        }
        sink.push_targets(ksq, king_targets);

        if checkers.more_than_one() {
            return;
        }
        // Squares that resolve a single check: capture the checker or block its ray.
        let evasion = match checkers.first() {
            Some(c) => between(ksq, c).with(c),
            None => Bitboard::FULL,
        };

        if GEN & (GEN_CAPTURES | GEN_QUIETS) != 0 {
            let mut target = Bitboard::EMPTY;
            if GEN & GEN_CAPTURES != 0 {
                target |= theirs;
            }
            if GEN & GEN_QUIETS != 0 {
                target |= !occ;
            }
            target &= evasion;
            let pinned = self.king_blockers(us) & ours;

            for from in self.pieces(us, Role::Knight) & !pinned {
                sink.push_targets(from, knight_attacks(from) & target);
            }
            for from in self.bishop_likes(us) {
                let mut t = bishop_attacks(from, occ) & target;
                if pinned.contains(from) {
                    t &= line(ksq, from);
                }
                sink.push_targets(from, t);
            }
            for from in self.rook_likes(us) {
                let mut t = rook_attacks(from, occ) & target;
                if pinned.contains(from) {
                    t &= line(ksq, from);
                }
                sink.push_targets(from, t);
            }

            let pawns = self.pieces(us, Role::Pawn);
            self.gen_pawns::<GEN, S>(sink, pawns & !pinned, evasion);
            for from in pawns & pinned {
                self.gen_pawns::<GEN, S>(sink, Bitboard::from(from), evasion & line(ksq, from));
            }
            if GEN & GEN_CAPTURES != 0 {
                if let Some(ep) = self.ep_square() {
                    self.gen_en_passant(sink, ep, checkers);
                }
            }
            if GEN & GEN_QUIETS != 0 && checkers.is_empty() {
                self.gen_castling(sink);
            }
        }

        if GEN & GEN_DROPS != 0 {
            let hand = self.hand(us);
            if !hand.is_empty() {
                let targets = self.drop_targets();
                if targets.any() {
                    for role in hand.roles() {
                        let t = if role == Role::Pawn {
                            targets & self.variant().pawn_drop_region(us)
                        } else {
                            targets
                        };
                        sink.push_drops(role, t);
                    }
                }
            }
        }
    }

    /// Drops that give check, for the first plies of quiescence search. Only called when
    /// not in check (in check, every evasion is searched).
    pub fn generate_checking_drops<S: MoveSink>(&self, sink: &mut S) {
        let us = self.turn();
        let hand = self.hand(us);
        if hand.is_empty() || self.in_check() {
            return;
        }
        let empty = !self.occupied();
        let ksq = self.king(us.flip());
        let occ = self.occupied();
        let rook = rook_attacks(ksq, occ);
        let bishop = bishop_attacks(ksq, occ);
        for role in hand.roles() {
            let checks = match role {
                Role::Pawn => pawn_attacks(us.flip(), ksq) & self.variant().pawn_drop_region(us),
                Role::Knight => knight_attacks(ksq),
                Role::Bishop => bishop,
                Role::Rook => rook,
                _ => rook | bishop,
            };
            sink.push_drops(role, checks & empty);
        }
    }

    /// Empty squares where a drop is legal for the side to move (before the pawn rank rule):
    /// all empty squares when not in check, the squares between king and a checking slider in
    /// single check, none against a contact or leaper check or a double check.
    #[inline]
    pub fn drop_targets(&self) -> Bitboard {
        let checkers = self.checkers();
        match checkers.first() {
            None => !self.occupied(),
            Some(_) if checkers.more_than_one() => Bitboard::EMPTY,
            Some(c) => between(self.king(self.turn()), c),
        }
    }

    /// Pawn pushes, captures and promotions of `pawns`, restricted to destinations in `allowed`.
    #[inline]
    fn gen_pawns<const GEN: u8, S: MoveSink>(
        &self,
        sink: &mut S,
        pawns: Bitboard,
        allowed: Bitboard,
    ) {
        if pawns.is_empty() {
            return;
        }
        let us = self.turn();
        let empty = !self.occupied();
        let theirs = self.us(us.flip());
        let last = Bitboard::relative_rank(us, 7);
        let third = Bitboard::relative_rank(us, 2);
        let up: i32 = if us == Color::White { 8 } else { -8 };

        let single = pawns.shift_forward(us) & empty;
        let double = (single & third).shift_forward(us) & empty & allowed;
        let single = single & allowed;

        if GEN & GEN_QUIETS != 0 {
            for to in single & !last {
                sink.push(Move::normal(Square::new((to.index() as i32 - up) as u8), to));
            }
            for to in double {
                sink.push(Move::normal(Square::new((to.index() as i32 - 2 * up) as u8), to));
            }
        }
        if GEN & GEN_CAPTURES != 0 {
            for to in single & last {
                let from = Square::new((to.index() as i32 - up) as u8);
                for role in Role::PROMOTIONS {
                    sink.push(Move::promotion(from, to, role));
                }
            }
            let targets = theirs & allowed;
            // Captures towards the a-file, then towards the h-file.
            let (west, east) = match us {
                Color::White => (
                    Bitboard((pawns & !Bitboard::FILE_A).0 << 7),
                    Bitboard((pawns & !Bitboard::FILE_H).0 << 9),
                ),
                Color::Black => (
                    Bitboard((pawns & !Bitboard::FILE_A).0 >> 9),
                    Bitboard((pawns & !Bitboard::FILE_H).0 >> 7),
                ),
            };
            let (dw, de) = if us == Color::White { (7, 9) } else { (-9, -7) };
            for (caps, delta) in [(west & targets, dw), (east & targets, de)] {
                for to in caps {
                    let from = Square::new((to.index() as i32 - delta) as u8);
                    if last.contains(to) {
                        for role in Role::PROMOTIONS {
                            sink.push(Move::promotion(from, to, role));
                        }
                    } else {
                        sink.push(Move::normal(from, to));
                    }
                }
            }
        }
    }

    /// En-passant captures onto `ep`, checked by replaying the occupancy change (the only
    /// move that removes two pieces from one line).
    fn gen_en_passant<S: MoveSink>(&self, sink: &mut S, ep: Square, checkers: Bitboard) {
        let us = self.turn();
        for from in pawn_attacks(us.flip(), ep) & self.pieces(us, Role::Pawn) {
            if self.en_passant_is_legal(from, ep, checkers) {
                sink.push(Move::en_passant(from, ep));
            }
        }
    }

    fn en_passant_is_legal(&self, from: Square, ep: Square, checkers: Bitboard) -> bool {
        let us = self.turn();
        let them = us.flip();
        let ksq = self.king(us);
        let cap =
            Square::new(if us == Color::White { ep.index() - 8 } else { ep.index() + 8 } as u8);
        // In check, the capture must remove the only checker or block its check.
        if checkers.more_than_one() {
            return false;
        }
        if let Some(c) = checkers.first() {
            if c != cap && !between(ksq, c).contains(ep) {
                return false;
            }
        }
        let occ =
            (self.occupied() ^ Bitboard::from(from) ^ Bitboard::from(cap)) | Bitboard::from(ep);
        let rooks = self.rook_likes(them).without(cap);
        let bishops = self.bishop_likes(them).without(cap);
        (rook_attacks(ksq, occ) & rooks).is_empty()
            && (bishop_attacks(ksq, occ) & bishops).is_empty()
    }

    fn gen_castling<S: MoveSink>(&self, sink: &mut S) {
        let us = self.turn();
        let them = us.flip();
        let rights = self.castling();
        let (ks, qs) = CastlingRights::bits_for(us);
        let occ = self.occupied();
        let king = Square::E1.relative_to(us);
        if rights.has(ks) {
            let (f, g) = (Square::F1.relative_to(us), Square::G1.relative_to(us));
            if !occ.contains(f)
                && !occ.contains(g)
                && !self.is_attacked(f, them)
                && !self.is_attacked(g, them)
            {
                sink.push(Move::castle(king, g));
            }
        }
        if rights.has(qs) {
            let (d, c, b) = (
                Square::D1.relative_to(us),
                Square::C1.relative_to(us),
                Square::new(Square::C1.relative_to(us).index() as u8 - 1),
            );
            if !occ.contains(d)
                && !occ.contains(c)
                && !occ.contains(b)
                && !self.is_attacked(d, them)
                && !self.is_attacked(c, them)
            {
                sink.push(Move::castle(king, c));
            }
        }
    }

    /// Is `m` legal here? Exact for any well-formed move, so moves from the transposition
    /// table or killer slots can be checked before they are played.
    pub fn is_legal(&self, m: Move) -> bool {
        let us = self.turn();
        let to = m.to();
        if let Some(role) = m.drop_role() {
            if !self.hand(us).has(role) || !self.drop_targets().contains(to) {
                return false;
            }
            return role != Role::Pawn || self.variant().pawn_drop_region(us).contains(to);
        }
        let from = m.from();
        let Some(piece) = self.piece_at(from) else {
            return false;
        };
        if piece.color() != us {
            return false;
        }
        let role = piece.role();
        match m.kind() {
            MoveKind::Castle => {
                if role != Role::King || self.in_check() {
                    return false;
                }
                let mut finder = MoveFinder { wanted: m, found: false };
                self.gen_castling(&mut finder);
                return finder.found;
            }
            MoveKind::EnPassant => {
                return role == Role::Pawn
                    && self.ep_square() == Some(to)
                    && pawn_attacks(us, from).contains(to)
                    && self.en_passant_is_legal(from, to, self.checkers());
            }
            _ => {}
        }
        if self.us(us).contains(to) {
            return false;
        }
        let occ = self.occupied();
        let last = Bitboard::relative_rank(us, 7);
        let reachable = if role == Role::Pawn {
            // Promotion kind and last rank must agree.
            if last.contains(to) != m.promotion_role().is_some() {
                return false;
            }
            self.pawn_reach(from, to)
        } else {
            m.promotion_role().is_none()
                && super::attacks::attacks(role, us, from, occ).contains(to)
        };
        if !reachable {
            return false;
        }
        let ksq = self.king(us);
        if role == Role::King {
            return self.attackers_to(to, us.flip(), occ.without(from)).is_empty();
        }
        let checkers = self.checkers();
        if let Some(c) = checkers.first() {
            if checkers.more_than_one() || !between(ksq, c).with(c).contains(to) {
                return false;
            }
        }
        !self.king_blockers(us).contains(from) || line(ksq, from).contains(to)
    }

    /// Can our pawn on `from` move to `to` (push, double push or capture), ignoring pins?
    fn pawn_reach(&self, from: Square, to: Square) -> bool {
        let us = self.turn();
        let occ = self.occupied();
        if pawn_attacks(us, from).contains(to) {
            return self.us(us.flip()).contains(to);
        }
        let up: i8 = if us == Color::White { 8 } else { -8 };
        let Some(one) = from.offset(up) else {
            return false;
        };
        if occ.contains(one) {
            return false;
        }
        if one == to {
            return true;
        }
        Bitboard::relative_rank(us, 1).contains(from)
            && one.offset(up) == Some(to)
            && !occ.contains(to)
    }
}

/// Looks for one move among those generated.
struct MoveFinder {
    wanted: Move,
    found: bool,
}

impl MoveSink for MoveFinder {
    #[inline]
    fn push(&mut self, m: Move) {
        self.found |= m == self.wanted;
    }
}

#[cfg(test)]
mod tests {
    use crate::core::{Position, Variant};

    #[test]
    fn start_position_has_twenty_moves() {
        let pos = Position::startpos(Variant::Crazyhouse);
        assert_eq!(pos.legal_moves().len(), 20);
        assert_eq!(pos.count_legal(), 20);
    }
}
