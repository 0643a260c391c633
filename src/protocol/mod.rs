//! The stdin/stdout protocol layer: UCI and XBoard (CECP v2).
//!
//! Input is read on its own thread and handed over a channel, so commands such as `stop`,
//! `isready`, `ping` or `?` are answered while a search runs. The first command decides the
//! protocol: `xboard` starts CECP, anything else (normally `uci`) UCI. Output lines go through
//! `println!`, which locks and flushes stdout per line; logs go to stderr only.

pub mod uci;
pub mod xboard;

use std::io::BufRead;
use std::sync::mpsc::{self, Receiver, Sender};

use crate::core::{Move, MoveError, Position, Variant, START_FEN};
use crate::engine::SearchResult;

/// Longest input line we process; longer lines are refused (a `position` with 1000 moves is
/// about 6 KB).
pub const MAX_LINE: usize = 1 << 20;

/// What the protocol loop reacts to: an input line, or the end of a search.
#[derive(Debug)]
pub enum Event {
    /// A line from stdin, trimmed.
    Line(String),
    /// A search finished; `id` tells which one (stale results are ignored).
    Searched {
        /// The id the protocol gave the search.
        id: u64,
        /// Its result.
        result: SearchResult,
    },
}

/// Starts the stdin reader thread. Lines arrive trimmed; the channel closes at end of input
/// (once every other sender is gone too).
pub fn spawn_reader() -> (Sender<Event>, Receiver<Event>) {
    let (tx, rx) = mpsc::channel();
    let reader_tx = tx.clone();
    std::thread::Builder::new()
        .name("stdin".into())
        .spawn(move || {
            let stdin = std::io::stdin();
            let mut lock = stdin.lock();
            let mut buf = Vec::new();
            loop {
                buf.clear();
                match lock.read_until(b'\n', &mut buf) {
                    Ok(0) => break,
                    Ok(_) => {
                        let line = String::from_utf8_lossy(&buf);
                        let line = if line.len() > MAX_LINE { "" } else { line.trim() };
                        if reader_tx.send(Event::Line(line.to_string())).is_err() {
                            break;
                        }
                    }
                    Err(e) => {
                        log::warn!("stdin: {e}");
                        break;
                    }
                }
            }
            // End of input reads as `quit`.
            let _ = reader_tx.send(Event::Line("quit".to_string()));
        })
        .expect("spawn stdin reader");
    (tx, rx)
}

/// Runs the protocol loop on stdin/stdout until `quit` or end of input.
pub fn run() {
    let (tx, rx) = spawn_reader();
    while let Ok(event) = rx.recv() {
        let Event::Line(line) = event else { continue };
        match line.split_whitespace().next() {
            None => continue,
            Some("xboard") => return xboard::Xboard::new(tx).run(&rx),
            Some(_) => return uci::Uci::new().run(Some(line), &rx),
        }
    }
}

/// How a finished game ended.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct GameResult {
    /// `1-0`, `0-1` or `1/2-1/2`.
    pub score: &'static str,
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
                .then(|| GameResult { score: "1/2-1/2", reason: "Draw by repetition".into() })
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
                    score: if winner == crate::core::Color::White { "1-0" } else { "0-1" },
                    reason: format!("{} mates", winner.name()),
                });
            }
            return Some(GameResult { score: "1/2-1/2", reason: "Stalemate".into() });
        }
        if pos.is_insufficient_material() {
            return Some(GameResult { score: "1/2-1/2", reason: "Insufficient material".into() });
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
        assert_eq!(g.result().unwrap().score, "1/2-1/2");
        assert!(g.undo());
        assert!(g.result().is_none());
        assert!(g.push_text("e2e5").is_err());
        assert_eq!(g.ply(), 7);

        let mut mate = Game::new(Variant::Crazyhouse);
        for m in ["f2f3", "e7e5", "g2g4", "d8h4"] {
            mate.push_text(m).unwrap();
        }
        let r = mate.result().unwrap();
        assert_eq!((r.score, r.reason.as_str()), ("0-1", "Black mates"));
    }
}
