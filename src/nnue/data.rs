//! The binary training-data format: one fixed-size record per position.
//!
//! A data file is a plain sequence of records, no header, so that files can be appended to,
//! concatenated (`cat a.bin b.bin`), split and counted (`size / RECORD_BYTES`) with ordinary
//! tools, and a reader can start at any multiple of `RECORD_BYTES`.
//!
//! # Record layout (`RECORD_BYTES` = 44, little-endian)
//!
//! | offset | bytes | field |
//! |---|---|---|
//! | 0 | 8 | occupancy: bit `s` is set when square `s` (a1 = 0, b1 = 1, ..., h8 = 63) holds a piece |
//! | 8 | 16 | piece codes, 4 bits each, of the occupied squares in ascending order: the `i`-th is in byte `8 + i / 2`, low nibble for even `i`. Code = colour × 6 + role (white 0..5, black 6..11; pawn, knight, bishop, rook, queen, king). Nibbles past the last piece are 0. |
//! | 24 | 4 | promoted flags: bit `i` is set when the `i`-th occupied square holds a promoted piece |
//! | 28 | 8 | pockets: ten 6-bit counts (0..63), white pawn, knight, bishop, rook, queen at bits 0, 6, 12, 18, 24, then black's at bits 30..54; bits 60..63 are 0 |
//! | 36 | 1 | bits 0..3: castling rights (K, Q, k, q); bits 4..5: variant (0 crazyhouse, 1 loop, 2 chessgi); bits 6..7: game result (0 black won, 1 draw, 2 white won) |
//! | 37 | 1 | bits 0..3: en passant, 0 none, else the file + 1 (1..8; the rank follows from the side to move); bit 4: the move the search played captures or promotes ([`Sample::noisy`]); bits 5..7 are 0 |
//! | 38 | 2 | score, i16: centipawns from white's point of view, from the search |
//! | 40 | 2 | ply, u16: 2 × (full-move number − 1), plus 1 when black is to move; its low bit is the side to move |
//! | 42 | 2 | half-move clock, u16 |
//!
//! Limits: at most 32 pieces on the board (every position of a game that starts with the 32
//! pieces of the initial array qualifies; captures and drops only move pieces between board
//! and pockets). Pocket counts cover anything a position may hold (at most 62 of one kind,
//! `MAX_PIECES` minus the kings). The ply and the half-move clock saturate at 65535 (the
//! highest ply keeps the side-to-move parity); neither enters the Zobrist key.
//!
//! Bit 4 of byte 37 came with data-file header version 2 (`datagen --all-positions`). Files
//! of header version 1 hold quiet positions only, so the bit is 0 in all of them: they read
//! the same under this layout.
//!
//! The encoding is canonical: `decode` accepts only what `encode` produces (no unused bits
//! set, no castling right or en-passant square that the position would drop), so a record
//! that decodes re-encodes to the same bytes. `decode` validates the position with
//! `Position::from_setup` and never panics, whatever the bytes.

use std::fmt;
use std::fs::File;
use std::io::{self, BufReader, Read};
use std::path::Path;

use crate::core::{
    Bitboard, CastlingRights, Color, Piece, Pocket, Position, PositionError, Role, Setup, Square,
    Variant,
};

/// Size of one record in bytes.
pub const RECORD_BYTES: usize = 44;

/// The most pieces a record can hold on the board (32 nibbles of piece codes).
pub const MAX_BOARD_PIECES: u32 = 32;

const OCC: usize = 0;
const CODES: usize = 8;
const PROMOTED: usize = 24;
const POCKETS: usize = 28;
const FLAGS: usize = 36;
const EP: usize = 37;
const SCORE: usize = 38;
const PLY: usize = 40;
const HALFMOVES: usize = 42;

/// Byte `EP`: the en-passant file in bits 0..3, and this flag for [`Sample::noisy`].
const NOISY_BIT: u8 = 1 << 4;

/// Bits per pocket count, and their mask.
const POCKET_BITS: u32 = 6;
const POCKET_MASK: u64 = (1 << POCKET_BITS) - 1;

/// One training position: the position, the search's score and the game's result.
#[derive(Clone, Debug, PartialEq)]
pub struct Sample {
    /// The position (its full-move number and side to move give the game ply).
    pub pos: Position,
    /// Search score in centipawns from white's point of view.
    pub score: i16,
    /// Game result from white's point of view: 1 white won, 0.5 draw, 0 black won.
    pub result: f32,
    /// The move the search played here captures or promotes: the score counts material the
    /// position does not show yet. Only `datagen --all-positions` records such positions
    /// (the trainer skips them unless told to keep them); false in text data.
    pub noisy: bool,
}

/// Why a record could not be read or written.
#[derive(Debug)]
pub enum DataError {
    /// Reading or writing the file failed.
    Io(io::Error),
    /// Fewer than `RECORD_BYTES` bytes (a torn record at the end of a file).
    Truncated {
        /// How many bytes there were.
        bytes: usize,
    },
    /// The bytes are not a record this format produces.
    Corrupt(&'static str),
    /// The record describes a position that cannot be played.
    Position(PositionError),
    /// The sample cannot be stored in a record.
    Unencodable(&'static str),
    /// A text line that is not `FEN | score | result` (or `FEN | result` where allowed).
    Text(String),
}

impl fmt::Display for DataError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            DataError::Io(e) => write!(f, "{e}"),
            DataError::Truncated { bytes } => {
                write!(f, "torn record: {bytes} of {RECORD_BYTES} bytes")
            }
            DataError::Corrupt(what) => write!(f, "corrupt record: {what}"),
            DataError::Position(e) => write!(f, "record holds an invalid position: {e}"),
            DataError::Unencodable(what) => write!(f, "cannot encode: {what}"),
            DataError::Text(what) => f.write_str(what),
        }
    }
}

impl std::error::Error for DataError {}

impl From<io::Error> for DataError {
    fn from(e: io::Error) -> DataError {
        DataError::Io(e)
    }
}

/// The 2-bit code of a result (0 black won, 1 draw, 2 white won).
fn result_code(result: f32) -> Option<u8> {
    if result == 0.0 {
        Some(0)
    } else if result == 0.5 {
        Some(1)
    } else if result == 1.0 {
        Some(2)
    } else {
        None
    }
}

fn variant_code(v: Variant) -> u8 {
    match v {
        Variant::Crazyhouse => 0,
        Variant::Loop => 1,
        Variant::Chessgi => 2,
    }
}

/// Encodes a sample. Fails only when the position has more than `MAX_BOARD_PIECES` pieces on
/// the board or the result is not 0, 0.5 or 1.
pub fn encode(sample: &Sample) -> Result<[u8; RECORD_BYTES], DataError> {
    let pos = &sample.pos;
    let occ = pos.occupied();
    if occ.count() > MAX_BOARD_PIECES {
        return Err(DataError::Unencodable("more than 32 pieces on the board"));
    }
    let result = result_code(sample.result)
        .ok_or(DataError::Unencodable("the result must be 0, 0.5 or 1"))?;
    let mut rec = [0u8; RECORD_BYTES];
    rec[OCC..OCC + 8].copy_from_slice(&occ.0.to_le_bytes());
    let mut promoted = 0u32;
    for (i, sq) in occ.enumerate() {
        // `occ` lists occupied squares only, so the piece is always there.
        let code = pos.piece_at(sq).map_or(0, |p| p.index() as u8);
        rec[CODES + i / 2] |= code << (4 * (i % 2));
        if pos.promoted().contains(sq) {
            promoted |= 1 << i;
        }
    }
    rec[PROMOTED..PROMOTED + 4].copy_from_slice(&promoted.to_le_bytes());
    let mut pockets = 0u64;
    for (c, color) in Color::ALL.into_iter().enumerate() {
        for (r, role) in Role::DROPPABLE.into_iter().enumerate() {
            let shift = POCKET_BITS * (c * 5 + r) as u32;
            pockets |= (pos.hand(color).count(role) as u64 & POCKET_MASK) << shift;
        }
    }
    rec[POCKETS..POCKETS + 8].copy_from_slice(&pockets.to_le_bytes());
    rec[FLAGS] = pos.castling().bits() | variant_code(pos.variant()) << 4 | result << 6;
    let ep = pos.ep_square().map_or(0, |sq| sq.file().index() as u8 + 1);
    rec[EP] = ep | if sample.noisy { NOISY_BIT } else { 0 };
    rec[SCORE..SCORE + 2].copy_from_slice(&sample.score.to_le_bytes());
    let black = (pos.turn() == Color::Black) as u32;
    let mut ply = game_ply(pos);
    if ply > u16::MAX as u32 {
        ply = u16::MAX as u32 - 1 + black;
    }
    rec[PLY..PLY + 2].copy_from_slice(&(ply as u16).to_le_bytes());
    let halfmoves = pos.halfmoves().min(u16::MAX as u32) as u16;
    rec[HALFMOVES..HALFMOVES + 2].copy_from_slice(&halfmoves.to_le_bytes());
    Ok(rec)
}

/// The game ply of a position as records store it: 2 × (full-move number − 1), plus 1 when
/// black is to move.
pub fn game_ply(pos: &Position) -> u32 {
    2 * (pos.fullmoves().max(1) - 1).min(u32::MAX / 2 - 1) + (pos.turn() == Color::Black) as u32
}

fn le_u64(b: &[u8]) -> u64 {
    let mut a = [0u8; 8];
    a.copy_from_slice(&b[..8]);
    u64::from_le_bytes(a)
}

fn le_u32(b: &[u8]) -> u32 {
    u32::from_le_bytes([b[0], b[1], b[2], b[3]])
}

fn le_u16(b: &[u8]) -> u16 {
    u16::from_le_bytes([b[0], b[1]])
}

/// Decodes a record of exactly `RECORD_BYTES` bytes. Any other input, and any record `encode`
/// would not produce, is an error; it never panics.
pub fn decode(bytes: &[u8]) -> Result<Sample, DataError> {
    if bytes.len() < RECORD_BYTES {
        return Err(DataError::Truncated { bytes: bytes.len() });
    }
    if bytes.len() > RECORD_BYTES {
        return Err(DataError::Corrupt("longer than one record"));
    }
    let occ = Bitboard(le_u64(&bytes[OCC..]));
    let n = occ.count();
    if n > MAX_BOARD_PIECES {
        return Err(DataError::Corrupt("more than 32 pieces on the board"));
    }
    let mut setup = Setup::empty();
    for (i, sq) in occ.enumerate() {
        let code = (bytes[CODES + i / 2] >> (4 * (i % 2))) & 15;
        let piece = match Role::from_index(code as usize % 6) {
            Some(role) if code < 12 => {
                Piece::new(if code < 6 { Color::White } else { Color::Black }, role)
            }
            _ => return Err(DataError::Corrupt("piece code above 11")),
        };
        setup.board[sq.index()] = Some(piece);
    }
    for i in n as usize..MAX_BOARD_PIECES as usize {
        if (bytes[CODES + i / 2] >> (4 * (i % 2))) & 15 != 0 {
            return Err(DataError::Corrupt("piece code past the last piece"));
        }
    }
    let promoted = le_u32(&bytes[PROMOTED..]) as u64;
    if n < 32 && promoted >> n != 0 {
        return Err(DataError::Corrupt("promoted flag past the last piece"));
    }
    for (i, sq) in occ.enumerate() {
        if promoted >> i & 1 != 0 {
            setup.promoted = setup.promoted.with(sq);
        }
    }
    let pockets = le_u64(&bytes[POCKETS..]);
    if pockets >> (10 * POCKET_BITS) != 0 {
        return Err(DataError::Corrupt("pocket bits 60..63 set"));
    }
    for c in 0..2 {
        let mut hand = Pocket::EMPTY;
        for (r, role) in Role::DROPPABLE.into_iter().enumerate() {
            let shift = POCKET_BITS * (c * 5 + r) as u32;
            hand.set(role, ((pockets >> shift) & POCKET_MASK) as u8);
        }
        setup.hands[c] = hand;
    }
    let flags = bytes[FLAGS];
    setup.castling = CastlingRights::from_bits(flags & 15);
    let variant = match (flags >> 4) & 3 {
        0 => Variant::Crazyhouse,
        1 => Variant::Loop,
        2 => Variant::Chessgi,
        _ => return Err(DataError::Corrupt("variant code 3")),
    };
    let result = match flags >> 6 {
        0 => 0.0,
        1 => 0.5,
        2 => 1.0,
        _ => return Err(DataError::Corrupt("result code 3")),
    };
    let ply = le_u16(&bytes[PLY..]);
    setup.turn = if ply & 1 == 1 { Color::Black } else { Color::White };
    setup.fullmoves = ply as u32 / 2 + 1;
    setup.halfmoves = le_u16(&bytes[HALFMOVES..]) as u32;
    if bytes[EP] >> 5 != 0 {
        return Err(DataError::Corrupt("bits 5..7 of the en-passant byte set"));
    }
    let noisy = bytes[EP] & NOISY_BIT != 0;
    setup.ep_square = match bytes[EP] & 15 {
        0 => None,
        f @ 1..=8 => {
            // The square the capturing pawn moves to: rank 6 for white, rank 3 for black.
            let rank = if setup.turn == Color::White { 5 } else { 2 };
            Some(Square::new(rank * 8 + f - 1))
        }
        _ => return Err(DataError::Corrupt("en-passant file above 8")),
    };
    let pos = Position::from_setup(&setup, variant).map_err(DataError::Position)?;
    if pos.castling() != setup.castling {
        return Err(DataError::Corrupt("castling right without king and rook at home"));
    }
    if pos.ep_square() != setup.ep_square {
        return Err(DataError::Corrupt("en-passant square where no capture is possible"));
    }
    let score = i16::from_le_bytes([bytes[SCORE], bytes[SCORE + 1]]);
    Ok(Sample { pos, score, result, noisy })
}

/// Streams the samples of a record file (or any byte source), one `RECORD_BYTES` read at a
/// time. A corrupt record yields its error and reading goes on with the next one; a torn
/// record at the end yields `DataError::Truncated` once, then the stream ends.
pub struct RecordReader<R> {
    inner: R,
    done: bool,
}

impl RecordReader<BufReader<File>> {
    /// Opens a record file.
    pub fn open(path: impl AsRef<Path>) -> io::Result<Self> {
        Ok(RecordReader::new(BufReader::with_capacity(1 << 16, File::open(path)?)))
    }
}

impl<R: Read> RecordReader<R> {
    /// Reads records from `inner`.
    pub fn new(inner: R) -> Self {
        RecordReader { inner, done: false }
    }

    /// The next raw record, without decoding it.
    pub fn next_record(&mut self) -> Option<Result<[u8; RECORD_BYTES], DataError>> {
        if self.done {
            return None;
        }
        let mut buf = [0u8; RECORD_BYTES];
        let mut got = 0;
        while got < RECORD_BYTES {
            match self.inner.read(&mut buf[got..]) {
                Ok(0) => break,
                Ok(k) => got += k,
                Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
                Err(e) => {
                    self.done = true;
                    return Some(Err(DataError::Io(e)));
                }
            }
        }
        match got {
            RECORD_BYTES => Some(Ok(buf)),
            0 => {
                self.done = true;
                None
            }
            bytes => {
                self.done = true;
                Some(Err(DataError::Truncated { bytes }))
            }
        }
    }
}

impl<R: Read> Iterator for RecordReader<R> {
    type Item = Result<Sample, DataError>;

    fn next(&mut self) -> Option<Self::Item> {
        self.next_record().map(|r| r.and_then(|rec| decode(&rec)))
    }
}

/// A parsed text line: the score is absent in `FEN | result` lines.
pub type TextLine = (Position, Option<i32>, f32);

/// Parses `FEN | score | result` or `FEN | result`.
pub fn parse_text_line(line: &str, variant: Variant) -> Result<TextLine, DataError> {
    let fields: Vec<&str> = line.split('|').map(str::trim).collect();
    let (fen, score, result) = match fields[..] {
        [fen, result] => (fen, None, result),
        [fen, score, result] => (fen, Some(score), result),
        _ => return Err(DataError::Text("expected 'FEN | score | result'".into())),
    };
    let result = match result.parse::<f32>() {
        Ok(r) if r == 0.0 || r == 0.5 || r == 1.0 => r,
        _ => return Err(DataError::Text(format!("result '{result}' is not 1, 0.5 or 0"))),
    };
    let score = match score.map(str::parse::<i32>) {
        None => None,
        Some(Ok(s)) => Some(s),
        Some(Err(_)) => {
            return Err(DataError::Text(format!("score '{}' is not a number", fields[1])))
        }
    };
    let pos = Position::from_fen(fen, variant).map_err(|e| DataError::Text(e.to_string()))?;
    Ok((pos, score, result))
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The initial position, spelled out byte by byte from the layout table in the module
    /// docs (not from the encoder).
    #[test]
    fn start_position_matches_the_documented_layout() {
        let pos = Position::from_fen(
            "rnbqkbnr/pppppppp/8/8/8/8/PPPPPPPP/RNBQKBNR[] w KQkq - 0 1",
            Variant::Crazyhouse,
        )
        .unwrap();
        let rec =
            encode(&Sample { pos: pos.clone(), score: -3, result: 1.0, noisy: false }).unwrap();
        let mut want = [0u8; RECORD_BYTES];
        // Ranks 1, 2, 7, 8 occupied.
        want[0..8].copy_from_slice(&[0xff, 0xff, 0, 0, 0, 0, 0xff, 0xff]);
        // a1..h1: R N B Q K B N R = 3 1 2 4 5 2 1 3; a2..h2: eight white pawns (0);
        // a7..h7: black pawns (6); a8..h8: r n b q k b n r = 9 7 8 10 11 8 7 9.
        want[8..12].copy_from_slice(&[0x13, 0x42, 0x25, 0x31]);
        want[16..20].copy_from_slice(&[0x66; 4]);
        want[20..24].copy_from_slice(&[0x79, 0xa8, 0x8b, 0x97]);
        // Castling KQkq, crazyhouse, white won.
        want[36] = 0x0f | 2 << 6;
        // Score -3, ply 0, half-move clock 0.
        want[38..40].copy_from_slice(&[0xfd, 0xff]);
        assert_eq!(rec, want);
        let back = decode(&rec).unwrap();
        assert_eq!(back.pos, pos);
        assert_eq!((back.score, back.result, back.noisy), (-3, 1.0, false));
    }

    #[test]
    fn pockets_promoted_ep_and_ply_fields() {
        // Black to move at move 23 (ply 45), e.p. on d3, a promoted queen on a8, pockets
        // P×2 N (white) and q b×3 p (black); chessgi.
        let fen = "Q~3k3/8/8/8/3Pp3/8/8/4K3[PPNqbbbp] b - d3 7 23";
        let pos = Position::from_fen(fen, Variant::Chessgi).unwrap();
        let rec = encode(&Sample { pos, score: 1234, result: 0.5, noisy: true }).unwrap();
        // Occupancy: e1 (4), d4 (27), e4 (28), a8 (56), e8 (60).
        let occ = 1u64 << 4 | 1 << 27 | 1 << 28 | 1 << 56 | 1 << 60;
        assert_eq!(rec[0..8], occ.to_le_bytes());
        // K(5), P(0), p(6), Q~(4), k(11).
        assert_eq!(rec[8..11], [0x05, 0x46, 0x0b]);
        // The promoted queen is the fourth piece.
        assert_eq!(rec[24..28], [0b1000, 0, 0, 0]);
        let pockets: u64 = 2 | 1 << 6 | 1 << 30 | 3 << 42 | 1 << 54;
        assert_eq!(rec[28..36], pockets.to_le_bytes());
        assert_eq!(rec[36], 2 << 4 | 1 << 6);
        // File d (4), and bit 4 for a noisy position.
        assert_eq!(rec[37], 4 | 1 << 4);
        assert!(decode(&rec).unwrap().noisy);
        assert_eq!(rec[38..44], [0xd2, 0x04, 45, 0, 7, 0]);
    }
}
