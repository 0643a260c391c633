//! Move notation: reading UCI/XBoard coordinates (`e2e4`, `e7e8q`, `P@e4`) and SAN
//! (`Nf3`, `exd5`, `O-O`, `N@d5`), and writing SAN for display and PGN.
//!
//! Writing coordinates is `Move`'s `Display`.

use std::fmt;

use super::bitboard::Bitboard;
use super::moves::{Move, MoveKind};
use super::position::Position;
use super::types::{File, Rank, Role, Square};

/// Why a move string was refused.
#[derive(Clone, PartialEq, Eq, Debug)]
pub enum MoveError {
    /// The text is not a move in any notation we read.
    Malformed(String),
    /// The text is a well-formed move that is not legal here.
    Illegal(String),
    /// A SAN move that matches more than one legal move.
    Ambiguous(String),
}

impl fmt::Display for MoveError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            MoveError::Malformed(s) => write!(f, "malformed move '{s}'"),
            MoveError::Illegal(s) => write!(f, "illegal move '{s}'"),
            MoveError::Ambiguous(s) => write!(f, "ambiguous move '{s}'"),
        }
    }
}

impl std::error::Error for MoveError {}

impl Position {
    /// Reads a move in coordinate notation, the way UCI and XBoard clients write it:
    /// `e2e4`, `e7e8q` (promotion letter in either case), `e1g1` or `e1h1` for castling,
    /// `P@e4` or `p@e4` for drops. The result is legal.
    pub fn parse_uci(&self, text: &str) -> Result<Move, MoveError> {
        let t = text.trim();
        let malformed = || MoveError::Malformed(t.to_string());
        let illegal = || MoveError::Illegal(t.to_string());
        if !t.is_ascii() || t.len() < 4 || t.len() > 5 {
            return Err(malformed());
        }
        if let Some((piece, square)) = t.split_once('@') {
            let mut chars = piece.chars();
            let role = match (chars.next(), chars.next()) {
                (None, _) => Role::Pawn,
                (Some(c), None) => Role::from_char(c).ok_or_else(malformed)?,
                _ => return Err(malformed()),
            };
            let to = Square::parse(square).ok_or_else(malformed)?;
            if role == Role::King {
                return Err(illegal());
            }
            let m = Move::drop(role, to);
            return if self.is_legal(m) { Ok(m) } else { Err(illegal()) };
        }
        let from = Square::parse(&t[0..2]).ok_or_else(malformed)?;
        let to = Square::parse(&t[2..4]).ok_or_else(malformed)?;
        let promo = match t.chars().nth(4) {
            None => None,
            Some(c) => match Role::from_char(c) {
                Some(r @ (Role::Knight | Role::Bishop | Role::Rook | Role::Queen)) => Some(r),
                _ => return Err(malformed()),
            },
        };
        if from == to {
            return Err(malformed());
        }
        let legal = self.legal_moves();
        legal
            .iter()
            .copied()
            .find(|m| {
                !m.is_drop() && m.from() == from && m.promotion_role() == promo && {
                    m.to() == to
                        // King-takes-rook castling (e1h1), as some GUIs send it.
                        || m.is_castle() && castle_rook_square(*m) == to
                }
            })
            .ok_or_else(illegal)
    }

    /// Reads a move in SAN (`e4`, `Nbd7`, `exd6`, `e8=Q`, `O-O`, `N@f3`, `@e4`), with optional
    /// `+`, `#`, `!`, `?` suffixes; also accepts coordinates. The result is legal.
    pub fn parse_san(&self, text: &str) -> Result<Move, MoveError> {
        let t = text.trim().trim_end_matches(['+', '#', '!', '?']);
        if let Ok(m) = self.parse_uci(t) {
            return Ok(m);
        }
        let malformed = || MoveError::Malformed(text.trim().to_string());
        if !t.is_ascii() || t.is_empty() {
            return Err(malformed());
        }
        let legal = self.legal_moves();
        let mut matches = legal.iter().copied().filter(|&m| {
            if t == "O-O" || t == "0-0" {
                return m.is_castle() && m.to().file() == File::new(6);
            }
            if t == "O-O-O" || t == "0-0-0" {
                return m.is_castle() && m.to().file() == File::new(2);
            }
            if let Some((piece, sq)) = t.split_once('@') {
                let role =
                    if piece.is_empty() { Some(Role::Pawn) } else { Role::from_char_san(piece) };
                return m.drop_role().is_some()
                    && m.drop_role() == role
                    && Square::parse(sq) == Some(m.to());
            }
            if m.is_drop() || m.is_castle() {
                return false;
            }
            san_matches(self, m, t)
        });
        let first = matches.next().ok_or_else(|| MoveError::Illegal(text.trim().to_string()))?;
        if matches.next().is_some() {
            return Err(MoveError::Ambiguous(text.trim().to_string()));
        }
        Ok(first)
    }

    /// SAN of a legal move, with `+` or `#`.
    pub fn san(&self, m: Move) -> String {
        let mut s = String::new();
        match m.kind() {
            MoveKind::Castle => {
                s.push_str(if m.to().file() == File::new(6) { "O-O" } else { "O-O-O" });
            }
            MoveKind::Drop(role) => {
                s.push(role.upper_char());
                s.push('@');
                s.push_str(&m.to().to_string());
            }
            _ => {
                let role = self.moved_role(m);
                let capture = self.is_capture(m);
                if role == Role::Pawn {
                    if capture {
                        s.push(m.from().file().char());
                        s.push('x');
                    }
                    s.push_str(&m.to().to_string());
                    if let Some(p) = m.promotion_role() {
                        s.push('=');
                        s.push(p.upper_char());
                    }
                } else {
                    s.push(role.upper_char());
                    // Disambiguate among other pieces of the same role reaching the square.
                    let others: Bitboard = self
                        .legal_moves()
                        .iter()
                        .filter(|o| {
                            !o.is_drop()
                                && **o != m
                                && o.to() == m.to()
                                && self.moved_role(**o) == role
                                && !o.is_castle()
                        })
                        .fold(Bitboard::EMPTY, |b, o| b.with(o.from()));
                    if others.any() {
                        let same_file = (others & Bitboard::file(m.from().file())).any();
                        let same_rank = (others & Bitboard::rank(m.from().rank())).any();
                        if !same_file {
                            s.push(m.from().file().char());
                        } else if !same_rank {
                            s.push(m.from().rank().char());
                        } else {
                            s.push_str(&m.from().to_string());
                        }
                    }
                    if capture {
                        s.push('x');
                    }
                    s.push_str(&m.to().to_string());
                }
            }
        }
        let next = self.after(m);
        if next.in_check() {
            s.push(if next.has_legal_move() { '+' } else { '#' });
        }
        s
    }
}

/// The rook's corner for a castling move (where king-takes-rook notation points).
fn castle_rook_square(m: Move) -> Square {
    let rank = m.from().rank();
    let file = if m.to().file() == File::new(6) { File::H } else { File::A };
    Square::from_coords(file, rank)
}

impl Role {
    /// The role of an uppercase SAN piece letter (`N`, `B`, `R`, `Q`, `K`; `P` for drops).
    fn from_char_san(s: &str) -> Option<Role> {
        let mut chars = s.chars();
        let c = chars.next()?;
        if chars.next().is_some() || !c.is_ascii_uppercase() {
            return None;
        }
        Role::from_char(c)
    }
}

/// Does the SAN text `t` (no suffixes, not castling or a drop) describe board move `m`?
fn san_matches(pos: &Position, m: Move, t: &str) -> bool {
    let mut body = t.to_string();
    // Promotion suffix: `=Q` or a bare `Q` after the square.
    let mut promo = None;
    if let Some(idx) = body.find('=') {
        promo = Role::from_char_san(&body[idx + 1..]);
        if promo.is_none() {
            return false;
        }
        body.truncate(idx);
    } else if body.len() >= 3 {
        let last = body.chars().last().unwrap_or(' ');
        if last.is_ascii_uppercase() && body.chars().next().is_some_and(|c| c.is_ascii_lowercase())
        {
            promo = Role::from_char_san(&last.to_string());
            body.pop();
        }
    }
    if m.promotion_role() != promo {
        return false;
    }
    let role = match body.chars().next() {
        Some(c) if c.is_ascii_uppercase() => {
            body.remove(0);
            match Role::from_char_san(&c.to_string()) {
                Some(r) => r,
                None => return false,
            }
        }
        _ => Role::Pawn,
    };
    if pos.moved_role(m) != role {
        return false;
    }
    let capture = body.contains('x');
    let body: String = body.chars().filter(|&c| c != 'x' && c != '-').collect();
    if body.len() < 2 {
        return false;
    }
    let (hint, dest) = body.split_at(body.len() - 2);
    if Square::parse(dest) != Some(m.to()) {
        return false;
    }
    if capture && !pos.is_capture(m) {
        return false;
    }
    for c in hint.chars() {
        if let Some(f) = File::from_char(c) {
            if m.from().file() != f {
                return false;
            }
        } else if let Some(r) = Rank::from_char(c) {
            if m.from().rank() != r {
                return false;
            }
        } else {
            return false;
        }
    }
    true
}

#[cfg(test)]
mod tests {
    use crate::core::{Position, Variant};

    #[test]
    fn uci_and_san_round_trip_from_start() {
        let pos = Position::startpos(Variant::Crazyhouse);
        for m in pos.legal_moves().iter() {
            assert_eq!(pos.parse_uci(&m.to_string()), Ok(*m));
            assert_eq!(pos.parse_san(&pos.san(*m)), Ok(*m));
        }
    }

    #[test]
    fn drops_and_castling() {
        let pos = Position::from_fen(
            "r3k2r/pppppppp/8/8/8/8/PPPPPPPP/R3K2R[Nn] w KQkq - 0 1",
            Variant::Crazyhouse,
        )
        .unwrap();
        let m = pos.parse_uci("N@e4").unwrap();
        assert_eq!(pos.parse_uci("n@e4"), Ok(m));
        assert_eq!(pos.san(m), "N@e4");
        assert_eq!(pos.parse_san("N@e4"), Ok(m));
        let c = pos.parse_uci("e1g1").unwrap();
        assert!(c.is_castle());
        assert_eq!(pos.parse_uci("e1h1"), Ok(c));
        assert_eq!(pos.san(c), "O-O");
        assert_eq!(pos.parse_san("O-O"), Ok(c));
        assert!(pos.parse_uci("P@e4").is_err());
        assert!(pos.parse_uci("Q@e4").is_err());
        assert!(pos.parse_uci("e2e5").is_err());
        assert!(pos.parse_uci("zz").is_err());
    }
}
