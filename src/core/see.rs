//! Static exchange evaluation: does a move win at least a given amount of material if both
//! sides keep capturing on its destination with their least valuable attacker?
//!
//! Drops take part as the first mover (they capture nothing but can be captured). Pocket
//! pieces cannot recapture, so only board pieces join the exchange. The values are passed in
//! by the caller, which knows how captures count in a game where every capture changes hands.

use super::attacks::{bishop_attacks, rook_attacks};
use super::bitboard::Bitboard;
use super::moves::{Move, MoveKind};
use super::position::Position;
use super::types::Role;

impl Position {
    /// Is the exchange started by `m` worth at least `threshold` (in the units of `values`,
    /// indexed by role, king last)? Pins are ignored, as usual for SEE.
    pub fn see_ge(&self, m: Move, threshold: i32, values: &[i32; 6]) -> bool {
        let (from, to) = (m.from(), m.to());
        let value = |r: Role| values[r.index()];
        let (captured, mut moved) = match m.kind() {
            MoveKind::Castle => return threshold <= 0,
            MoveKind::Drop(role) => (0, value(role)),
            MoveKind::EnPassant => (value(Role::Pawn), value(Role::Pawn)),
            MoveKind::Promotion(role) => (
                self.captured_role(m).map_or(0, value) + value(role) - value(Role::Pawn),
                value(role),
            ),
            MoveKind::Normal => (self.captured_role(m).map_or(0, value), value(self.moved_role(m))),
        };
        let mut swap = captured - threshold;
        if swap < 0 {
            return false;
        }
        swap = moved - swap;
        if swap <= 0 {
            return true;
        }
        let mut occ = self.occupied();
        if !m.is_drop() {
            occ ^= Bitboard::from(from);
        }
        occ |= Bitboard::from(to);
        if m.is_en_passant() {
            let cap = if self.turn() == super::types::Color::White {
                to.offset(-8)
            } else {
                to.offset(8)
            };
            if let Some(c) = cap {
                occ ^= Bitboard::from(c);
            }
        }
        let rooks = self.role_bb(Role::Rook) | self.role_bb(Role::Queen);
        let bishops = self.role_bb(Role::Bishop) | self.role_bb(Role::Queen);
        let mut attackers = self.all_attackers_to(to, occ) & occ;
        let mut stm = self.turn();
        let mut res = true;
        loop {
            stm = stm.flip();
            attackers &= occ;
            let mine = attackers & self.us(stm);
            if mine.is_empty() {
                break;
            }
            res = !res;
            // Least valuable attacker.
            let mut found = None;
            for role in Role::ALL {
                let b = mine & self.role_bb(role);
                if b.any() {
                    found = Some((role, b.lsb()));
                    break;
                }
            }
            let Some((role, sq)) = found else { break };
            if role == Role::King {
                // The king may only take last: if the other side still attacks, it cannot.
                return if (attackers & !self.us(stm)).any() { !res } else { res };
            }
            moved = value(role);
            swap = moved - swap;
            if swap < res as i32 {
                break;
            }
            occ ^= Bitboard::from(sq);
            // Sliders behind the piece that just moved join in.
            if matches!(role, Role::Pawn | Role::Bishop | Role::Queen) {
                attackers |= bishop_attacks(to, occ) & bishops;
            }
            if matches!(role, Role::Rook | Role::Queen) {
                attackers |= rook_attacks(to, occ) & rooks;
            }
        }
        res
    }
}

#[cfg(test)]
mod tests {
    use crate::core::{Position, Variant};

    const V: [i32; 6] = [100, 300, 300, 500, 900, 20000];

    fn pos(fen: &str) -> Position {
        Position::from_fen(fen, Variant::Crazyhouse).unwrap()
    }

    #[test]
    fn simple_exchanges() {
        // Pawn takes a defended knight: +200 at least.
        let p = pos("4k3/8/4p3/3n4/4P3/8/8/4K3[] w - - 0 1");
        let m = p.parse_uci("e4d5").unwrap();
        assert!(p.see_ge(m, 200, &V));
        assert!(!p.see_ge(m, 201, &V));
        // Rook takes a pawn defended by a pawn: loses.
        let q = pos("4k3/8/2p5/3p4/8/8/3R4/4K3[] w - - 0 1");
        let m = q.parse_uci("d2d5").unwrap();
        assert!(!q.see_ge(m, 0, &V));
        assert!(q.see_ge(m, -400, &V));
    }

    #[test]
    fn drops_can_be_lost() {
        let p = pos("4k3/8/8/2p5/8/8/8/4K3[N] w - - 0 1");
        let hanging = p.parse_uci("N@d4").unwrap();
        assert!(!p.see_ge(hanging, 0, &V));
        let safe = p.parse_uci("N@h4").unwrap();
        assert!(p.see_ge(safe, 0, &V));
    }

    #[test]
    fn xrays_count() {
        // Two rooks on the d-file against one defender.
        let p = pos("3rk3/8/8/3p4/8/8/3R4/3RK3[] w - - 0 1");
        let m = p.parse_uci("d2d5").unwrap();
        assert!(p.see_ge(m, 100, &V));
    }
}
