//! Rules that the perft suite does not reach, checked against python-chess 1.11
//! (`chess.variant.CrazyhouseBoard`):
//!
//! - a rook dropped on a corner square never restores a castling right: a game from the start
//!   position in which both kingside rooks are captured on their corners and rooks are then
//!   dropped there, compared move by move with python-chess (position, pockets, castling
//!   rights and the full set of legal moves; `tests/data/corner-rook.txt`);
//! - threefold repetition counts the pockets: the same board with other pockets is not a
//!   repetition, the same board and pockets three times is (python-chess's `is_repetition(3)`
//!   after every ply);
//! - which moves are tactical (capture or promote), over every legal move of one position.

use madhouse::core::{Game, Move, Position, Variant};

/// A FEN without its move counters, pockets sorted (python-chess and Madhouse write the pocket
/// letters in different orders), and without the en-passant field (python-chess writes it
/// only when a legal capture exists).
fn comparable(fen: &str) -> String {
    let fields: Vec<&str> = fen.split_whitespace().collect();
    let (board, pocket) = fields[0].split_once('[').expect("a bracket pocket");
    let mut letters: Vec<char> = pocket.trim_end_matches(']').chars().collect();
    letters.sort_unstable();
    let pocket: String = letters.into_iter().collect();
    format!("{board}[{pocket}] {} {}", fields[1], fields[2])
}

#[test]
fn a_rook_dropped_on_a_corner_restores_no_castling() {
    let mut pos = Position::startpos(Variant::Crazyhouse);
    let mut plies = 0;
    for line in include_str!("data/corner-rook.txt").lines().filter(|l| !l.starts_with('#')) {
        let parts: Vec<&str> = line.split(" ; ").collect();
        let [mv, fen, legal] = parts[..] else { panic!("bad line {line}") };
        let m = pos.parse_uci(mv).unwrap_or_else(|e| panic!("{mv} in {}: {e}", pos.fen()));
        pos = pos.after(m);
        plies += 1;
        assert_eq!(comparable(&pos.fen()), comparable(fen), "after {mv}");
        let mut ours: Vec<String> = pos.legal_moves().iter().map(Move::to_string).collect();
        ours.sort();
        let theirs: Vec<&str> = legal.split_whitespace().collect();
        assert_eq!(ours, theirs, "legal moves after {mv} in {}", pos.fen());
    }
    assert_eq!(plies, 20);
    // The line's end: rooks back on h1 and h8, kings unmoved, f1/g1 and f8/g8 empty, and still
    // only the queenside rights.
    assert!(pos.fen().contains("RN1QK2R[] w Qq "), "{}", pos.fen());
}

/// Plays `moves` from `fen` and returns, after each ply, whether the game is drawn by
/// repetition.
fn repetitions(fen: &str, moves: &str) -> Vec<bool> {
    let mut game = Game::from_fen(fen, Variant::Crazyhouse).unwrap();
    moves
        .split_whitespace()
        .map(|m| {
            game.push_text(m).unwrap_or_else(|e| panic!("{m}: {e}"));
            game.result().is_some_and(|r| r.reason == "Draw by repetition")
        })
        .collect()
}

#[test]
fn repetition_counts_the_pockets() {
    // White's knight takes the bishop on d5, the queen takes back and returns, and both sides
    // drop what they now hold: the board is the start's again, but white holds a bishop
    // instead of a knight and black a knight instead of a bishop.
    let fen = "3q3k/8/8/3b4/8/2N5/6P1/7K[Nb] w - - 0 1";
    let shuffle = "h1g1 h8g8 g1h1 g8h8";
    // The start position three times (python-chess: a repetition at the last ply only).
    let same = repetitions(fen, &format!("{shuffle} {shuffle}"));
    let mut want = vec![false; 8];
    want[7] = true;
    assert_eq!(same, want);
    // The board four times, but twice with each pair of pockets (python-chess: never a
    // repetition).
    let exchange = "c3d5 d8d5 h1g1 d5d8 g1h1 B@d5 N@c3 h8g8 h1g1 g8h7 g1h1 h7h8";
    let swapped = repetitions(fen, &format!("{shuffle} {exchange} {shuffle}"));
    assert_eq!(swapped, vec![false; 20]);
}

/// `Position::is_tactical` (capture or promotion: what the search orders and credits apart
/// from quiet moves, and what datagen flags) against python-chess's `is_capture(m) or
/// m.promotion`, over every legal move of a position with en passant, promotions with and
/// without a capture, castling and drops.
#[test]
fn tactical_moves_are_the_captures_and_promotions() {
    let fen = "r3k2r/1P4P1/8/3pP3/8/2n5/P7/R3K2R[Nq] w KQkq d6 0 20";
    let pos = Position::from_fen(fen, Variant::Crazyhouse).expect("a valid FEN");
    let moves = pos.legal_moves();
    assert_eq!(moves.len(), 88, "python-chess counts 88 legal moves");
    let mut ours: Vec<String> =
        moves.iter().filter(|&&m| pos.is_tactical(m)).map(Move::to_string).collect();
    ours.sort();
    let theirs = "b7a8b b7a8n b7a8q b7a8r b7b8b b7b8n b7b8q b7b8r e5d6 g7g8b g7g8n g7g8q g7g8r \
                  g7h8b g7h8n g7h8q g7h8r h1h8";
    assert_eq!(ours.join(" "), theirs);
}
