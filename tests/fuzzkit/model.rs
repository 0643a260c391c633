//! An independent reading of what `setboard` and `holding` accept, for the XBoard fuzz model.
//!
//! The model must not borrow the production parsers (`Position::from_fen`, `parse_pocket`,
//! `holding_fields`): a bug there would be copied into the oracle and never show. This is a
//! second, deliberately plain implementation of the rules the README and `core::fen` document:
//! an 8x8 array of letters, pockets as letter counts, attacks by walking rays. It is slow and
//! meant to be obviously right; it shares nothing with `src/` but the `Variant` names.

use madhouse::core::Variant;

/// Most pieces on the board and in both pockets together (README, Limits).
const MAX_PIECES: u32 = 64;
/// The droppable roles, upper case.
const DROPPABLE: [char; 5] = ['P', 'N', 'B', 'R', 'Q'];

/// A position as the model reads it: `board[rank][file]` (rank 0 = rank 1) holds a FEN letter,
/// `promoted` the `~` marks, `hands[0]` white's pocket and `hands[1]` black's as counts of
/// `DROPPABLE`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ModelPosition {
    board: [[Option<char>; 8]; 8],
    promoted: [[bool; 8]; 8],
    hands: [[u32; 5]; 2],
    white_to_move: bool,
    /// `K`, `Q`, `k`, `q` rights.
    castling: [bool; 4],
    ep: Option<(usize, usize)>,
    halfmoves: u32,
    fullmoves: u32,
}

/// A square name (`e3`) as (file, rank).
fn square(s: &str) -> Option<(usize, usize)> {
    let b = s.as_bytes();
    if b.len() != 2 || !(b'a'..=b'h').contains(&b[0]) || !(b'1'..=b'8').contains(&b[1]) {
        return None;
    }
    Some(((b[0] - b'a') as usize, (b[1] - b'1') as usize))
}

/// Adds the pieces of pocket text (`QRp`, `2P`, `-`) to `hands` by the letters' case.
fn read_pocket(text: &str, hands: &mut [[u32; 5]; 2]) -> Option<()> {
    let mut count: Option<u32> = None;
    for c in text.chars() {
        if c == '-' {
            continue;
        }
        if c.is_ascii_digit() {
            let n = count.unwrap_or(0) * 10 + (c as u32 - '0' as u32);
            if n > MAX_PIECES {
                return None;
            }
            count = Some(n);
            continue;
        }
        let role = DROPPABLE.iter().position(|&r| r == c.to_ascii_uppercase())?;
        let side = usize::from(c.is_ascii_lowercase());
        let n = hands[side][role] + count.take().unwrap_or(1);
        if n > MAX_PIECES {
            return None;
        }
        hands[side][role] = n;
    }
    count.is_none().then_some(())
}

/// Reads one rank of the board field into `pos` (rank index 0..8, 0 = rank 1).
fn read_rank(text: &str, rank: usize, pos: &mut ModelPosition) -> Option<()> {
    let mut file = 0usize;
    let mut last: Option<usize> = None;
    for c in text.chars() {
        if c == '~' {
            pos.promoted[rank][last.take()?] = true;
            continue;
        }
        if let Some(d) = c.to_digit(10) {
            if d == 0 || d > 8 {
                return None;
            }
            file += d as usize;
            last = None;
        } else if "PNBRQKpnbrqk".contains(c) {
            if file >= 8 {
                return None;
            }
            pos.board[rank][file] = Some(c);
            last = Some(file);
            file += 1;
        } else {
            return None;
        }
        if file > 8 {
            return None;
        }
    }
    (file == 8).then_some(())
}

impl ModelPosition {
    /// Reads a FEN in the dialects `setboard` takes (brackets, Lichess's ninth rank,
    /// Chess.com's trailing pocket and promoted squares, missing fields, `startpos`) and
    /// checks it can be played in `variant`. `None` when the engine must refuse it.
    pub fn read(text: &str, variant: Variant) -> Option<ModelPosition> {
        let text = if text.trim() == "startpos" {
            "rnbqkbnr/pppppppp/8/8/8/8/PPPPPPPP/RNBQKBNR[] w KQkq - 0 1"
        } else {
            text
        };
        let mut fields: Vec<&str> = text.split_whitespace().collect();
        if fields.is_empty() || fields.len() > 12 {
            return None;
        }
        let mut board = fields.remove(0).to_string();
        if fields.first().is_some_and(|f| f.starts_with('[')) {
            board.push_str(fields.remove(0));
        }
        let mut pocket: Option<String> = None;
        if let Some(open) = board.find('[') {
            let close = board.rfind(']')?;
            if close < open || close + 1 != board.len() {
                return None;
            }
            pocket = Some(board[open + 1..close].to_string());
            board.truncate(open);
        }
        let mut ranks: Vec<&str> = board.split('/').collect();
        if ranks.len() == 9 {
            if pocket.is_some() {
                return None;
            }
            pocket = ranks.pop().map(str::to_string);
        }
        if ranks.len() != 8 {
            return None;
        }
        let mut pos = ModelPosition {
            board: [[None; 8]; 8],
            promoted: [[false; 8]; 8],
            hands: [[0; 5]; 2],
            white_to_move: true,
            castling: [false; 4],
            ep: None,
            halfmoves: 0,
            fullmoves: 1,
        };
        for (i, r) in ranks.iter().enumerate() {
            read_rank(r, 7 - i, &mut pos)?;
        }
        if let Some(p) = &pocket {
            read_pocket(p, &mut pos.hands)?;
        }
        let mut rest = fields.into_iter();
        if let Some(side) = rest.next() {
            pos.white_to_move = match side {
                "w" | "W" => true,
                "b" | "B" => false,
                _ => return None,
            };
        }
        let mut rights = [false; 4];
        if let Some(c) = rest.next() {
            if c != "-" {
                for ch in c.chars() {
                    let i = "KQkq".find(ch).or_else(|| "HAha".find(ch))?;
                    rights[i] = true;
                }
            }
        }
        let mut ep = None;
        if let Some(e) = rest.next() {
            if e != "-" {
                let sq = square(e).filter(|&(_, r)| r == 2 || r == 5)?;
                ep = Some(sq);
            }
        }
        let mut counters = Vec::new();
        let mut trailing = Vec::new();
        for f in rest {
            match f.parse::<u32>() {
                Ok(n) if counters.len() < 2 && trailing.is_empty() => counters.push(n),
                _ => trailing.push(f),
            }
        }
        pos.halfmoves = counters.first().copied().unwrap_or(0);
        pos.fullmoves = counters.get(1).copied().unwrap_or(1).max(1);
        for (i, t) in trailing.iter().enumerate() {
            let squares: Option<Vec<(usize, usize)>> = t.split(',').map(square).collect();
            match squares {
                Some(sqs) => {
                    for (f, r) in sqs {
                        pos.promoted[r][f] = true;
                    }
                }
                None if i == 0 => {
                    if pocket.is_some() && *t != "-" {
                        return None;
                    }
                    read_pocket(t, &mut pos.hands)?;
                }
                None => return None,
            }
        }
        pos.validate(variant, rights, ep)
    }

    /// Applies the rules of a playable position: one king a side, at most 64 pieces, pawns
    /// off the ranks the variant forbids, `~` only on promotable pieces, the side not to move
    /// not in check; castling rights and the en-passant square kept only where they could be
    /// used.
    fn validate(
        mut self,
        variant: Variant,
        rights: [bool; 4],
        ep: Option<(usize, usize)>,
    ) -> Option<ModelPosition> {
        let all = || (0..8).flat_map(|r| (0..8).map(move |f| (f, r)));
        for king in ['K', 'k'] {
            if all().filter(|&(f, r)| self.board[r][f] == Some(king)).count() != 1 {
                return None;
            }
        }
        let on_board = all().filter(|&(f, r)| self.board[r][f].is_some()).count() as u32;
        let in_hand: u32 = self.hands.iter().flatten().sum();
        if on_board + in_hand > MAX_PIECES {
            return None;
        }
        for f in 0..8 {
            if self.board[7][f] == Some('P') || self.board[0][f] == Some('p') {
                return None;
            }
            let first_rank_ok = variant == Variant::Chessgi;
            if !first_rank_ok && (self.board[0][f] == Some('P') || self.board[7][f] == Some('p')) {
                return None;
            }
        }
        for (f, r) in all() {
            if self.promoted[r][f] && !matches!(self.board[r][f], Some(c) if !"PpKk".contains(c)) {
                return None;
            }
        }
        // Castling: the king on e1/e8 and a rook (promoted or not) on the corner.
        let at = |f: usize, r: usize| self.board[r][f];
        self.castling = [
            rights[0] && at(4, 0) == Some('K') && at(7, 0) == Some('R'),
            rights[1] && at(4, 0) == Some('K') && at(0, 0) == Some('R'),
            rights[2] && at(4, 7) == Some('k') && at(7, 7) == Some('r'),
            rights[3] && at(4, 7) == Some('k') && at(0, 7) == Some('r'),
        ];
        let (us_white, them_king) =
            (self.white_to_move, if self.white_to_move { 'k' } else { 'K' });
        let ksq = all().find(|&(f, r)| self.board[r][f] == Some(them_king)).expect("one king");
        if self.attacked_by(ksq, us_white) {
            return None;
        }
        // En passant: behind a pawn of the side not to move that just stepped two squares,
        // both squares it crossed empty, and a pawn of the side to move beside it.
        self.ep = ep.filter(|&(f, r)| {
            let (ep_rank, dir, them_pawn, our_pawn) =
                if us_white { (5, -1i32, 'p', 'P') } else { (2, 1, 'P', 'p') };
            let pawn_rank = r as i32 + dir;
            let origin_rank = r as i32 - dir;
            r == ep_rank
                && at(f, pawn_rank as usize) == Some(them_pawn)
                && at(f, r).is_none()
                && at(f, origin_rank as usize).is_none()
                && [f as i32 - 1, f as i32 + 1]
                    .iter()
                    .filter(|&&x| (0..8).contains(&x))
                    .any(|&x| at(x as usize, pawn_rank as usize) == Some(our_pawn))
        });
        Some(self)
    }

    /// Is `sq` attacked by white (`by_white`) or black pieces?
    fn attacked_by(&self, (f, r): (usize, usize), by_white: bool) -> bool {
        let piece = |c: char| if by_white { c.to_ascii_uppercase() } else { c };
        let at = |df: i32, dr: i32| -> Option<Option<char>> {
            let (x, y) = (f as i32 + df, r as i32 + dr);
            ((0..8).contains(&x) && (0..8).contains(&y)).then(|| self.board[y as usize][x as usize])
        };
        // A white pawn attacks from one rank below, a black one from one rank above.
        let pawn_dr = if by_white { -1 } else { 1 };
        if [-1, 1].iter().any(|&df| at(df, pawn_dr) == Some(Some(piece('p')))) {
            return true;
        }
        let knight = [(1, 2), (2, 1), (2, -1), (1, -2), (-1, -2), (-2, -1), (-2, 1), (-1, 2)];
        if knight.iter().any(|&(df, dr)| at(df, dr) == Some(Some(piece('n')))) {
            return true;
        }
        let around = [(1, 0), (1, 1), (0, 1), (-1, 1), (-1, 0), (-1, -1), (0, -1), (1, -1)];
        if around.iter().any(|&(df, dr)| at(df, dr) == Some(Some(piece('k')))) {
            return true;
        }
        for (i, &(df, dr)) in around.iter().enumerate() {
            let slider = if i % 2 == 0 { piece('r') } else { piece('b') };
            let mut k = 1;
            while let Some(cell) = at(df * k, dr * k) {
                if let Some(c) = cell {
                    if c == slider || c == piece('q') {
                        return true;
                    }
                    break;
                }
                k += 1;
            }
        }
        false
    }

    /// The position in Madhouse's own FEN form, but with the pocket letters sorted (the
    /// engine's letter order is not part of what the model checks).
    pub fn fen_sorted_pocket(&self) -> String {
        let mut board = String::new();
        for r in (0..8).rev() {
            let mut empty = 0;
            for f in 0..8 {
                match self.board[r][f] {
                    None => empty += 1,
                    Some(c) => {
                        if empty > 0 {
                            board.push_str(&empty.to_string());
                            empty = 0;
                        }
                        board.push(c);
                        if self.promoted[r][f] {
                            board.push('~');
                        }
                    }
                }
            }
            if empty > 0 {
                board.push_str(&empty.to_string());
            }
            if r > 0 {
                board.push('/');
            }
        }
        let castling: String =
            "KQkq".chars().zip(self.castling).filter(|&(_, on)| on).map(|(c, _)| c).collect();
        let castling = if castling.is_empty() { "-".to_string() } else { castling };
        let ep = self
            .ep
            .map_or("-".to_string(), |(f, r)| format!("{}{}", (b'a' + f as u8) as char, r + 1));
        format!(
            "{board}[{}] {} {castling} {ep} {} {}",
            pocket_letters(&self.hands),
            if self.white_to_move { 'w' } else { 'b' },
            self.halfmoves,
            self.fullmoves
        )
    }
}

/// Pocket counts as sorted letters (`NPQnp` style: upper case sorts first).
fn pocket_letters(hands: &[[u32; 5]; 2]) -> String {
    let mut letters = Vec::new();
    for (side, hand) in hands.iter().enumerate() {
        for (i, &n) in hand.iter().enumerate() {
            let c = if side == 0 { DROPPABLE[i] } else { DROPPABLE[i].to_ascii_lowercase() };
            letters.extend(std::iter::repeat_n(c, n as usize));
        }
    }
    letters.sort_unstable();
    letters.into_iter().collect()
}

/// A FEN with its pocket letters sorted, for comparing with `fen_sorted_pocket`.
pub fn sort_pocket(fen: &str) -> String {
    match (fen.find('['), fen.find(']')) {
        (Some(open), Some(close)) if open < close => {
            let mut letters: Vec<char> = fen[open + 1..close].chars().collect();
            letters.sort_unstable();
            let pocket: String = letters.into_iter().collect();
            format!("{}[{pocket}]{}", &fen[..open], &fen[close + 1..])
        }
        _ => fen.to_string(),
    }
}

/// What `holding ARG` sets, read independently: the bracketed fields in order (an unclosed
/// bracket ends them), the first two read as white's and black's pockets whatever the letters'
/// case. `None` when the command must be refused: fewer than two fields, a field that is not
/// pocket text, or more than 64 pieces with the `board_pieces` already on the board.
pub fn holding(arg: &str, board_pieces: u32) -> Option<String> {
    let mut fields = Vec::new();
    let mut rest = arg;
    while let Some(open) = rest.find('[') {
        let Some(len) = rest[open..].find(']') else { break };
        fields.push(&rest[open + 1..open + len]);
        rest = &rest[open + len + 1..];
    }
    if fields.len() < 2 {
        return None;
    }
    let mut hands = [[0u32; 5]; 2];
    for (side, f) in fields.iter().take(2).enumerate() {
        let mut both = [[0u32; 5]; 2];
        read_pocket(f, &mut both)?;
        for i in 0..5 {
            hands[side][i] = both[0][i] + both[1][i];
        }
    }
    let total: u32 = hands.iter().flatten().sum();
    (board_pieces + total <= MAX_PIECES).then(|| pocket_letters(&hands))
}
