//! A game record: the start position, the moves played, every position for undo and
//! repetition, and the outcome the rules give. Protocols, self-play and tools share it.

use crate::core::{Color, Move, MoveError, Position, Variant, START_FEN};

/// Who won a finished game.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub enum Outcome {
    /// This side won.
    Win(Color),
    /// Drawn.
    Draw,
}

impl Outcome {
    /// The PGN result: `1-0`, `0-1` or `1/2-1/2`.
    pub const fn pgn(self) -> &'static str {
        match self {
            Outcome::Win(Color::White) => "1-0",
            Outcome::Win(Color::Black) => "0-1",
            Outcome::Draw => "1/2-1/2",
        }
    }

    /// White's score: 1, 0.5 or 0.
    pub const fn white_score(self) -> f64 {
        match self {
            Outcome::Win(Color::White) => 1.0,
            Outcome::Win(Color::Black) => 0.0,
            Outcome::Draw => 0.5,
        }
    }
}

/// How a finished game ended.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct GameResult {
    /// Who won.
    pub outcome: Outcome,
    /// The reason, e.g. `White mates`.
    pub reason: String,
}

/// A game: a start position and the moves played from it, with every position kept for
/// undo and repetition detection.
#[derive(Clone, Debug)]
pub struct Game {
    positions: Vec<Position>,
    moves: Vec<Move>,
}

impl Game {
    /// A game from the variant's initial position.
    pub fn new(variant: Variant) -> Game {
        Game::from_position(Position::startpos(variant))
    }

    /// A game starting from `pos`.
    pub fn from_position(pos: Position) -> Game {
        Game { positions: vec![pos], moves: Vec::new() }
    }

    /// Parses a FEN (any dialect; `startpos` for the initial position) into a new game.
    pub fn from_fen(fen: &str, variant: Variant) -> Result<Game, crate::core::FenError> {
        let fen = if fen.trim() == "startpos" { START_FEN } else { fen };
        Ok(Game::from_position(Position::from_fen(fen, variant)?))
    }

    /// The position now.
    pub fn current(&self) -> &Position {
        self.positions.last().expect("a game always has a position")
    }

    /// The start position.
    pub fn start(&self) -> &Position {
        &self.positions[0]
    }

    /// Moves played.
    pub fn moves(&self) -> &[Move] {
        &self.moves
    }

    /// Number of plies played.
    pub fn ply(&self) -> usize {
        self.moves.len()
    }

    /// Keys of the positions before the current one, oldest first.
    pub fn history_keys(&self) -> Vec<u64> {
        self.positions[..self.positions.len() - 1].iter().map(Position::key).collect()
    }

    /// Plays a legal move.
    pub fn push(&mut self, m: Move) {
        let next = self.current().after(m);
        self.positions.push(next);
        self.moves.push(m);
    }

    /// Parses and plays a move in coordinate notation (SAN accepted too); on error the game
    /// is unchanged.
    pub fn push_text(&mut self, text: &str) -> Result<Move, MoveError> {
        let m = self.current().parse_san(text)?;
        self.push(m);
        Ok(m)
    }

    /// Takes back the last move; false if there is none.
    pub fn undo(&mut self) -> bool {
        if self.moves.pop().is_some() {
            self.positions.pop();
            true
        } else {
            false
        }
    }

    /// The result if the game is over by rule: checkmate, stalemate, threefold repetition
    /// (pockets included) or bare kings. Crazyhouse has no 50-move rule.
    pub fn result(&self) -> Option<GameResult> {
        self.result_on_board().or_else(|| {
            let key = self.current().key();
            (self.positions.iter().filter(|p| p.key() == key).count() >= 3)
                .then(|| GameResult { outcome: Outcome::Draw, reason: "Draw by repetition".into() })
        })
    }

    /// The result if the position itself ends the game (checkmate, stalemate, bare kings),
    /// leaving out repetition: a draw a player may claim, which clients such as python-chess
    /// do not end the game on.
    pub fn result_on_board(&self) -> Option<GameResult> {
        let pos = self.current();
        if !pos.has_legal_move() {
            if pos.in_check() {
                let winner = pos.turn().flip();
                return Some(GameResult {
                    outcome: Outcome::Win(winner),
                    reason: format!("{} mates", winner.name()),
                });
            }
            return Some(GameResult { outcome: Outcome::Draw, reason: "Stalemate".into() });
        }
        if pos.is_insufficient_material() {
            return Some(GameResult {
                outcome: Outcome::Draw,
                reason: "Insufficient material".into(),
            });
        }
        None
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn game_push_undo_and_results() {
        let mut g = Game::new(Variant::Crazyhouse);
        for m in ["g1f3", "g8f6", "f3g1", "f6g8", "g1f3", "g8f6", "f3g1"] {
            g.push_text(m).unwrap();
            assert!(g.result().is_none());
        }
        g.push_text("f6g8").unwrap();
        assert_eq!(g.result().unwrap().outcome, Outcome::Draw);
        assert!(g.undo());
        assert!(g.result().is_none());
        assert!(g.push_text("e2e5").is_err());
        assert_eq!(g.ply(), 7);

        let mut mate = Game::new(Variant::Crazyhouse);
        for m in ["f2f3", "e7e5", "g2g4", "d8h4"] {
            mate.push_text(m).unwrap();
        }
        let r = mate.result().unwrap();
        assert_eq!((r.outcome, r.reason.as_str()), (Outcome::Win(Color::Black), "Black mates"));
        assert_eq!(r.outcome.pgn(), "0-1");
    }
}
