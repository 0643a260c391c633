//! Reading and writing FEN in the dialects crazyhouse users paste.
//!
//! Accepted on input:
//! - XBoard/cutechess brackets after the board: `.../RNBQKBNR[QRBNPqrbnp] w KQkq - 0 1`, also
//!   `[]`, `[-]`, counts such as `[2P]`, pieces in any order, and a space before the bracket;
//! - Lichess's ninth board segment: `.../RNBQKBNR/Qp w ...` (empty: `.../RNBQKBNR/ w ...`);
//! - Chess.com's trailing pocket and promoted squares: `... w - - 0 26 NNBRpr h1`;
//! - `~` after a piece letter for a promoted piece, plain FEN with empty pockets, and missing
//!   fields after the board (side `w`, no castling, no en passant, counters `0 1`).
//!
//! Written: the bracket form with `~`, always six fields.

use std::fmt;

use super::hand::{Pocket, MAX_IN_HAND};
use super::position::{CastlingRights, Position, PositionError, Setup};
use super::types::{Color, File, Piece, Rank, Role, Square};
use super::variant::Variant;

/// Why a FEN was refused. The message names the field and what was wrong with it.
#[derive(Clone, PartialEq, Eq, Debug)]
pub enum FenError {
    /// The text does not follow FEN syntax.
    Syntax(String),
    /// The text parses but describes a position that cannot be played.
    Position(PositionError),
}

impl fmt::Display for FenError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            FenError::Syntax(s) => write!(f, "invalid FEN: {s}"),
            FenError::Position(e) => write!(f, "illegal position: {e}"),
        }
    }
}

impl std::error::Error for FenError {}

impl From<PositionError> for FenError {
    fn from(e: PositionError) -> FenError {
        FenError::Position(e)
    }
}

fn syntax<T>(msg: impl Into<String>) -> Result<T, FenError> {
    Err(FenError::Syntax(msg.into()))
}

/// Parses pocket letters (`QRBNPqrbnp`, `2P`, `-`, or empty) into both hands.
pub fn parse_pocket(text: &str, hands: &mut [Pocket; 2]) -> Result<(), FenError> {
    let mut count: Option<u32> = None;
    for c in text.chars() {
        if c == '-' {
            continue;
        }
        if let Some(d) = c.to_digit(10) {
            let n = count.unwrap_or(0) * 10 + d;
            if n > MAX_IN_HAND as u32 {
                return syntax(format!("pocket count {n} is too large"));
            }
            count = Some(n);
            continue;
        }
        let Some(piece) = Piece::from_char(c) else {
            return syntax(format!("unexpected '{c}' in pocket"));
        };
        if piece.role() == Role::King {
            return syntax("a king cannot be in a pocket");
        }
        let hand = &mut hands[piece.color().index()];
        let n = hand.count(piece.role()) as u32 + count.take().unwrap_or(1);
        if n > MAX_IN_HAND as u32 {
            return syntax(format!("more than {MAX_IN_HAND} of '{c}' in pocket"));
        }
        hand.set(piece.role(), n as u8);
    }
    if count.is_some() {
        return syntax("pocket count without a piece letter");
    }
    Ok(())
}

/// Parses the board field: eight ranks with optional `~` marks.
fn parse_ranks(ranks: &[&str], setup: &mut Setup) -> Result<(), FenError> {
    for (i, rank_text) in ranks.iter().enumerate() {
        let rank = Rank::new(7 - i as u8);
        let mut file = 0u32;
        let mut last_piece: Option<Square> = None;
        for c in rank_text.chars() {
            if c == '~' {
                match last_piece.take() {
                    Some(sq) => setup.promoted = setup.promoted.with(sq),
                    None => {
                        return syntax(format!("'~' not after a piece in rank {}", rank.char()))
                    }
                }
                continue;
            }
            if let Some(d) = c.to_digit(10) {
                if d == 0 || d > 8 {
                    return syntax(format!("bad empty-square count '{c}' in rank {}", rank.char()));
                }
                file += d;
                last_piece = None;
            } else if let Some(p) = Piece::from_char(c) {
                if file >= 8 {
                    return syntax(format!("rank {} has more than 8 squares", rank.char()));
                }
                let sq = Square::from_coords(File::new(file as u8), rank);
                setup.board[sq.index()] = Some(p);
                last_piece = Some(sq);
                file += 1;
            } else {
                return syntax(format!("unexpected '{c}' in rank {}", rank.char()));
            }
            if file > 8 {
                return syntax(format!("rank {} has more than 8 squares", rank.char()));
            }
        }
        if file != 8 {
            return syntax(format!("rank {} has {file} squares instead of 8", rank.char()));
        }
    }
    Ok(())
}

/// Parses a FEN in any supported dialect into an unvalidated setup.
pub fn parse_setup(fen: &str) -> Result<Setup, FenError> {
    let mut setup = Setup::empty();
    let mut fields: Vec<&str> = fen.split_whitespace().collect();
    if fields.is_empty() {
        return syntax("empty");
    }
    if fields.len() > 12 {
        return syntax("too many fields");
    }
    let mut board = fields.remove(0).to_string();
    // A pocket in brackets separated from the board by a space.
    if fields.first().is_some_and(|f| f.starts_with('[')) {
        board.push_str(fields.remove(0));
    }

    let mut pocket_text: Option<String> = None;
    if let Some(open) = board.find('[') {
        let Some(close) = board.rfind(']') else {
            return syntax("'[' without a closing ']'");
        };
        if close < open || close != board.len() - 1 {
            return syntax("text after the pocket's ']'");
        }
        pocket_text = Some(board[open + 1..close].to_string());
        board.truncate(open);
    }
    let mut ranks: Vec<&str> = board.split('/').collect();
    if ranks.len() == 9 {
        if pocket_text.is_some() {
            return syntax("two pockets (brackets and a ninth rank)");
        }
        pocket_text = ranks.pop().map(str::to_string);
    }
    if ranks.len() != 8 {
        return syntax(format!("board has {} ranks instead of 8", ranks.len()));
    }
    parse_ranks(&ranks, &mut setup)?;
    if let Some(p) = &pocket_text {
        parse_pocket(p, &mut setup.hands)?;
    }

    let mut rest = fields.into_iter();
    if let Some(turn) = rest.next() {
        setup.turn = match turn {
            "w" | "W" => Color::White,
            "b" | "B" => Color::Black,
            other => return syntax(format!("side to move '{other}' is not w or b")),
        };
    }
    if let Some(castling) = rest.next() {
        let mut bits = 0u8;
        if castling != "-" {
            for c in castling.chars() {
                bits |= match c {
                    'K' | 'H' => CastlingRights::WHITE_KING,
                    'Q' | 'A' => CastlingRights::WHITE_QUEEN,
                    'k' | 'h' => CastlingRights::BLACK_KING,
                    'q' | 'a' => CastlingRights::BLACK_QUEEN,
                    _ => return syntax(format!("bad castling field '{castling}'")),
                };
            }
        }
        setup.castling = CastlingRights::from_bits(bits);
    }
    if let Some(ep) = rest.next() {
        if ep != "-" {
            match Square::parse(ep) {
                Some(sq) if sq.rank() == Rank::new(2) || sq.rank() == Rank::new(5) => {
                    setup.ep_square = Some(sq)
                }
                _ => return syntax(format!("bad en-passant square '{ep}'")),
            }
        }
    }
    let mut counters = Vec::new();
    let mut trailing = Vec::new();
    for f in rest {
        if counters.len() < 2 && trailing.is_empty() && f.parse::<u32>().is_ok() {
            counters.push(f.parse::<u32>().unwrap_or(0));
        } else {
            trailing.push(f);
        }
    }
    if let Some(&h) = counters.first() {
        setup.halfmoves = h;
    }
    if let Some(&n) = counters.get(1) {
        setup.fullmoves = n.max(1);
    }
    // Chess.com: pocket letters, then promoted squares (`h1`, `c8,h1` or several tokens).
    for (i, t) in trailing.iter().enumerate() {
        let squares: Option<Vec<Square>> = t.split(',').map(Square::parse).collect();
        match squares {
            Some(squares) => {
                for sq in squares {
                    setup.promoted = setup.promoted.with(sq);
                }
            }
            None if i == 0 => {
                if pocket_text.is_some() && *t != "-" {
                    return syntax("two pockets (board and trailing field)");
                }
                parse_pocket(t, &mut setup.hands)?;
            }
            None => return syntax(format!("unexpected trailing field '{t}'")),
        }
    }
    Ok(setup)
}

impl Position {
    /// Parses and validates a FEN in any supported dialect.
    pub fn from_fen(fen: &str, variant: Variant) -> Result<Position, FenError> {
        let setup = parse_setup(fen)?;
        Ok(Position::from_setup(&setup, variant)?)
    }

    /// The board field with `~` promoted marks.
    pub fn board_fen(&self) -> String {
        let mut s = String::with_capacity(72);
        for rank in (0..8).rev() {
            let mut empty = 0;
            for file in 0..8 {
                let sq = Square::new(rank * 8 + file);
                match self.piece_at(sq) {
                    None => empty += 1,
                    Some(p) => {
                        if empty > 0 {
                            s.push(char::from(b'0' + empty));
                            empty = 0;
                        }
                        s.push(p.char());
                        if self.promoted().contains(sq) {
                            s.push('~');
                        }
                    }
                }
            }
            if empty > 0 {
                s.push(char::from(b'0' + empty));
            }
            if rank > 0 {
                s.push('/');
            }
        }
        s
    }

    /// The pockets as bracket contents, white first (`QNPqp`).
    pub fn pocket_fen(&self) -> String {
        let mut s = self.hand(Color::White).fen_letters(Color::White);
        s.push_str(&self.hand(Color::Black).fen_letters(Color::Black));
        s
    }

    /// The position as a six-field FEN with `[pockets]` and `~` marks.
    pub fn fen(&self) -> String {
        let ep = self.ep_square().map_or("-".to_string(), |s| s.to_string());
        format!(
            "{}[{}] {} {} {} {} {}",
            self.board_fen(),
            self.pocket_fen(),
            self.turn().fen_char(),
            self.castling().fen(),
            ep,
            self.halfmoves(),
            self.fullmoves()
        )
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const ZH: Variant = Variant::Crazyhouse;

    #[test]
    fn dialects_agree() {
        let forms = [
            "r1bqkbnr/pppp1ppp/2n5/8/3P4/2N5/PPP2PPP/R1BQKBNR[Pp] b KQkq - 0 4",
            "r1bqkbnr/pppp1ppp/2n5/8/3P4/2N5/PPP2PPP/R1BQKBNR/Pp b KQkq - 0 4",
            "r1bqkbnr/pppp1ppp/2n5/8/3P4/2N5/PPP2PPP/R1BQKBNR[pP] b KQkq - 0 4",
            "r1bqkbnr/pppp1ppp/2n5/8/3P4/2N5/PPP2PPP/R1BQKBNR [Pp] b KQkq - 0 4",
            "r1bqkbnr/pppp1ppp/2n5/8/3P4/2N5/PPP2PPP/R1BQKBNR b KQkq - 0 4 Pp",
        ];
        let reference = Position::from_fen(forms[0], ZH).unwrap();
        for f in forms {
            let p = Position::from_fen(f, ZH).unwrap_or_else(|e| panic!("{f}: {e}"));
            assert_eq!(p, reference, "{f}");
        }
    }

    #[test]
    fn empty_pockets_and_counts() {
        let base = "rnbqkbnr/pppppppp/8/8/8/8/PPPPPPPP/RNBQKBNR";
        let a = Position::from_fen(&format!("{base}[] w KQkq - 0 1"), ZH).unwrap();
        let b = Position::from_fen(&format!("{base}[-] w KQkq - 0 1"), ZH).unwrap();
        let c = Position::from_fen(&format!("{base} w KQkq - 0 1"), ZH).unwrap();
        let d = Position::from_fen(&format!("{base}/ w KQkq"), ZH).unwrap();
        assert_eq!(a, b);
        assert_eq!(a, c);
        assert_eq!(a, d);
        let e = Position::from_fen(&format!("{base}[2PQ3n] w KQkq - 0 1"), ZH).unwrap();
        assert_eq!(e.hand(Color::White).count(Role::Pawn), 2);
        assert_eq!(e.hand(Color::Black).count(Role::Knight), 3);
        assert_eq!(e.pocket_fen(), "QPPnnn");
    }

    #[test]
    fn piece_budget_holds_through_play() {
        // 31 pieces on the board and 33 in hand: exactly the budget, accepted; one more is not.
        let base = "rnbqkbnr/pppppppp/8/8/8/8/PPPPPPPP/RNBQKBN1";
        let full = Position::from_fen(&format!("{base}[31P2p] b Qkq - 0 1"), ZH).unwrap();
        assert!(Position::from_fen(&format!("{base}[32P2p] b Qkq - 0 1"), ZH).is_err());
        // Play cannot leave the budget, so every position reached writes a FEN that reads back.
        let mut p = full;
        for uci in ["P@h3", "g2h3", "P@g4", "h3g4"] {
            p = p.after(p.parse_uci(uci).unwrap());
            assert_eq!(Position::from_fen(&p.fen(), ZH).unwrap(), p, "after {uci}");
        }
        assert_eq!(p.hand(Color::White).count(Role::Pawn), 33);
    }

    #[test]
    fn promoted_marks() {
        let p = Position::from_fen("4k3/1Q~6/8/8/4b3/8/Kpp5/8/ b - - 0 1", ZH).unwrap();
        assert!(p.promoted().contains(Square::parse("b7").unwrap()));
        assert_eq!(p.fen(), "4k3/1Q~6/8/8/4b3/8/Kpp5/8[] b - - 0 1");
        let chesscom = Position::from_fen("4k3/1Q6/8/8/4b3/8/Kpp5/8 b - - 0 1 - b7", ZH).unwrap();
        assert_eq!(chesscom, p);
    }

    #[test]
    fn bad_fens_name_the_problem() {
        let cases = [
            ("", "empty"),
            ("rnbqkbnr/pppppppp/8/8/8/8/PPPPPPPP w", "ranks"),
            ("rnbqkbnr/pppppppp/9/8/8/8/PPPPPPPP/RNBQKBNR w", "count"),
            ("rnbqkbnr/pppppppp/8/8/8/8/PPPPPPPP/RNBQKBNR[X] w", "pocket"),
            ("rnbqkbnr/pppppppp/8/8/8/8/PPPPPPPP/RNBQKBNR[K] w", "king"),
            ("rnbqkbnr/pppppppp/8/8/8/8/PPPPPPPP/RNBQKBNR x", "side"),
            ("rnbqkbnr/pppppppp/8/8/8/8/PPPPPPPP/RNBQQBNR w", "kings"),
            ("rnbqkbnr/pppppppp/8/8/8/8/PPPPPPPP/RNBQKBNP w", "pawn"),
            ("4k3/8/8/8/8/8/8/r3K3 b", "not to move"),
            ("~nbqkbnr/pppppppp/8/8/8/8/PPPPPPPP/RNBQKBNR w", "'~'"),
        ];
        for (fen, needle) in cases {
            let e = Position::from_fen(fen, ZH).expect_err(fen).to_string();
            assert!(e.contains(needle), "{fen}: {e}");
        }
    }

    #[test]
    fn castling_and_ep_are_sanitised() {
        // Rights without a rook on the corner are dropped; an uncapturable e.p. square too.
        let p = Position::from_fen("4k3/8/8/8/4P3/8/8/4K2R[] b KQ e3 0 1", ZH).unwrap();
        assert_eq!(p.castling().fen(), "K");
        assert_eq!(p.ep_square(), None);
        let q = Position::from_fen("4k3/8/8/8/3pP3/8/8/4K3[] b - e3 0 1", ZH).unwrap();
        assert_eq!(q.ep_square(), Square::parse("e3"));
    }
}
