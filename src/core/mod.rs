//! The rules: board representation, move generation, notation and FEN for crazyhouse and its
//! relatives loop chess and chessgi. Nothing here knows about search or protocols.

pub mod attacks;
pub mod bitboard;
pub mod fen;
pub mod game;
pub mod hand;
pub mod movegen;
pub mod moves;
pub mod notation;
pub mod perft;
pub mod position;
pub mod see;
pub mod types;
pub mod variant;
pub mod zobrist;

pub use bitboard::Bitboard;
pub use fen::FenError;
pub use game::{Game, GameResult, Outcome};
pub use hand::Pocket;
pub use movegen::{MoveSink, GEN_ALL, GEN_CAPTURES, GEN_DROPS, GEN_QUIETS};
pub use moves::{Move, MoveKind, MoveList, MAX_MOVES};
pub use notation::MoveError;
pub use position::{CastlingRights, Position, PositionError, Setup, START_FEN};
pub use types::{Color, File, Piece, Rank, Role, Square};
pub use variant::{UnknownVariant, Variant};
