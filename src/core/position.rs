//! `Position`: the full state of a drop-chess game at one moment, and making moves on it.
//!
//! The search copies a position and plays a move on the copy (copy-make): the struct is a few
//! cache lines, the copy is cheaper than undo bookkeeping, and every ply keeps its own state.

use std::fmt;

use super::attacks::{
    bishop_attacks, king_attacks, knight_attacks, pawn_attacks, queen_attacks, rook_attacks,
};
use super::bitboard::Bitboard;
use super::hand::{Pocket, MAX_PIECES};
use super::moves::{Move, MoveKind};
use super::types::{Color, Piece, Rank, Role, Square};
use super::variant::Variant;
use super::zobrist;

/// Castling rights as a 4-bit set: white king side, white queen side, black king side, black
/// queen side.
#[derive(Copy, Clone, PartialEq, Eq, Hash, Debug, Default)]
pub struct CastlingRights(u8);

impl CastlingRights {
    /// No rights.
    pub const NONE: CastlingRights = CastlingRights(0);
    /// All four rights.
    pub const ALL: CastlingRights = CastlingRights(15);
    /// White king side (`K`).
    pub const WHITE_KING: u8 = 1;
    /// White queen side (`Q`).
    pub const WHITE_QUEEN: u8 = 2;
    /// Black king side (`k`).
    pub const BLACK_KING: u8 = 4;
    /// Black queen side (`q`).
    pub const BLACK_QUEEN: u8 = 8;

    /// The rights from their bit mask.
    pub const fn from_bits(bits: u8) -> CastlingRights {
        CastlingRights(bits & 15)
    }

    /// The bit mask.
    #[inline]
    pub const fn bits(self) -> u8 {
        self.0
    }

    /// Does it include the right `bit`?
    #[inline]
    pub const fn has(self, bit: u8) -> bool {
        self.0 & bit != 0
    }

    /// The king-side and queen-side bits of `color`.
    #[inline]
    pub const fn bits_for(color: Color) -> (u8, u8) {
        match color {
            Color::White => (Self::WHITE_KING, Self::WHITE_QUEEN),
            Color::Black => (Self::BLACK_KING, Self::BLACK_QUEEN),
        }
    }

    /// The FEN field (`KQkq`, `-`).
    pub fn fen(self) -> String {
        let mut s = String::new();
        for (bit, c) in [
            (Self::WHITE_KING, 'K'),
            (Self::WHITE_QUEEN, 'Q'),
            (Self::BLACK_KING, 'k'),
            (Self::BLACK_QUEEN, 'q'),
        ] {
            if self.has(bit) {
                s.push(c);
            }
        }
        if s.is_empty() {
            s.push('-');
        }
        s
    }
}

/// Rights lost when a move touches a square (from or to): the king squares lose both, the
/// corners one each. A rook dropped on a corner later touches nothing, so rights never return.
const fn castling_mask_table() -> [u8; 64] {
    let mut t = [0u8; 64];
    t[Square::E1.index()] = CastlingRights::WHITE_KING | CastlingRights::WHITE_QUEEN;
    t[Square::H1.index()] = CastlingRights::WHITE_KING;
    t[Square::A1.index()] = CastlingRights::WHITE_QUEEN;
    t[Square::E8.index()] = CastlingRights::BLACK_KING | CastlingRights::BLACK_QUEEN;
    t[Square::H8.index()] = CastlingRights::BLACK_KING;
    t[Square::A8.index()] = CastlingRights::BLACK_QUEEN;
    t
}
static CASTLING_MASK: [u8; 64] = castling_mask_table();

/// What can be wrong with a position that parses but cannot be played.
#[derive(Clone, PartialEq, Eq, Debug)]
pub enum PositionError {
    /// A side does not have exactly one king.
    KingCount(Color, u32),
    /// A pawn stands on a rank where it cannot be in this variant.
    PawnOnBackRank(Square),
    /// The side that just moved is in check.
    OppositeCheck,
    /// Board and pockets together hold more than `MAX_PIECES` pieces.
    TooManyPieces,
    /// A square marked promoted is empty or holds a king.
    BadPromotedMark(Square),
}

impl fmt::Display for PositionError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            PositionError::KingCount(c, n) => {
                write!(f, "{} has {n} kings (exactly one is needed)", c.name())
            }
            PositionError::PawnOnBackRank(sq) => {
                write!(f, "pawn on {sq}, a rank pawns cannot stand on")
            }
            PositionError::OppositeCheck => f.write_str("the side not to move is in check"),
            PositionError::TooManyPieces => {
                write!(f, "more than {MAX_PIECES} pieces on the board and in the pockets")
            }
            PositionError::BadPromotedMark(sq) => {
                write!(f, "promoted mark on {sq} without a promotable piece")
            }
        }
    }
}

impl std::error::Error for PositionError {}

/// Everything needed to build a position, before validation (what a FEN describes).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Setup {
    /// Pieces by square.
    pub board: [Option<Piece>; 64],
    /// Squares whose piece is a promoted pawn.
    pub promoted: Bitboard,
    /// Pockets, white then black.
    pub hands: [Pocket; 2],
    /// Side to move.
    pub turn: Color,
    /// Castling rights as written (the position keeps only those backed by king and rook).
    pub castling: CastlingRights,
    /// En-passant square as written (kept only when a capture there is possible).
    pub ep_square: Option<Square>,
    /// Half-move clock (informational: crazyhouse has no 50-move rule).
    pub halfmoves: u32,
    /// Full-move number.
    pub fullmoves: u32,
}

impl Setup {
    /// An empty board, white to move.
    pub fn empty() -> Setup {
        Setup {
            board: [None; 64],
            promoted: Bitboard::EMPTY,
            hands: [Pocket::EMPTY; 2],
            turn: Color::White,
            castling: CastlingRights::NONE,
            ep_square: None,
            halfmoves: 0,
            fullmoves: 1,
        }
    }
}

/// A drop-chess position.
#[derive(Clone, PartialEq, Eq)]
pub struct Position {
    board: [Option<Piece>; 64],
    by_role: [Bitboard; 6],
    by_color: [Bitboard; 2],
    promoted: Bitboard,
    hands: [Pocket; 2],
    turn: Color,
    castling: CastlingRights,
    ep_square: Option<Square>,
    halfmoves: u32,
    fullmoves: u32,
    key: u64,
    checkers: Bitboard,
    variant: Variant,
}

/// The starting array, the same in all three variants.
pub const START_FEN: &str = "rnbqkbnr/pppppppp/8/8/8/8/PPPPPPPP/RNBQKBNR[] w KQkq - 0 1";

impl Position {
    /// The initial position of `variant`.
    pub fn startpos(variant: Variant) -> Position {
        Position::from_fen(START_FEN, variant).expect("the start FEN is valid")
    }

    /// Builds and validates a position from a setup.
    pub fn from_setup(setup: &Setup, variant: Variant) -> Result<Position, PositionError> {
        let mut pos = Position {
            board: [None; 64],
            by_role: [Bitboard::EMPTY; 6],
            by_color: [Bitboard::EMPTY; 2],
            promoted: Bitboard::EMPTY,
            hands: setup.hands,
            turn: setup.turn,
            castling: CastlingRights::NONE,
            ep_square: None,
            halfmoves: setup.halfmoves,
            fullmoves: setup.fullmoves.max(1),
            key: 0,
            checkers: Bitboard::EMPTY,
            variant,
        };
        for sq in Square::all() {
            if let Some(p) = setup.board[sq.index()] {
                pos.put(p, sq);
            }
        }
        for c in Color::ALL {
            let kings = pos.pieces(c, Role::King).count();
            if kings != 1 {
                return Err(PositionError::KingCount(c, kings));
            }
        }
        let in_hand: u32 = pos.hands.iter().map(|h| h.total()).sum();
        if pos.occupied().count() + in_hand > MAX_PIECES {
            return Err(PositionError::TooManyPieces);
        }
        for c in Color::ALL {
            // A pawn can never stand on its promotion rank; on its own first rank only in
            // chessgi, where it may be dropped there.
            let mut bad = pos.pieces(c, Role::Pawn) & Bitboard::relative_rank(c, 7);
            if variant != Variant::Chessgi {
                bad |= pos.pieces(c, Role::Pawn) & Bitboard::relative_rank(c, 0);
            }
            if let Some(sq) = bad.first() {
                return Err(PositionError::PawnOnBackRank(sq));
            }
        }
        for sq in setup.promoted {
            match pos.board[sq.index()] {
                Some(p) if p.role() != Role::King && p.role() != Role::Pawn => {}
                _ => return Err(PositionError::BadPromotedMark(sq)),
            }
        }
        pos.promoted = setup.promoted;

        // Keep only the castling rights that king and rook placement can honour.
        let mut rights = 0u8;
        for c in Color::ALL {
            let king = Square::E1.relative_to(c);
            if !pos.pieces(c, Role::King).contains(king) {
                continue;
            }
            let (ks, qs) = CastlingRights::bits_for(c);
            let rooks = pos.pieces(c, Role::Rook);
            if setup.castling.has(ks) && rooks.contains(Square::H1.relative_to(c)) {
                rights |= ks;
            }
            if setup.castling.has(qs) && rooks.contains(Square::A1.relative_to(c)) {
                rights |= qs;
            }
        }
        pos.castling = CastlingRights(rights);

        if pos.is_attacked(pos.king(pos.turn.flip()), pos.turn) {
            return Err(PositionError::OppositeCheck);
        }
        // An en-passant square is kept only if it is plausible (behind a pawn that could have
        // just double-stepped) and a pawn of the side to move attacks it.
        if let Some(ep) = setup.ep_square {
            if pos.ep_is_plausible(ep) && pos.ep_capturers(ep).any() {
                pos.ep_square = Some(ep);
            }
        }
        pos.checkers = pos.attackers_to(pos.king(pos.turn), pos.turn.flip(), pos.occupied());
        pos.key = pos.compute_key();
        Ok(pos)
    }

    fn ep_is_plausible(&self, ep: Square) -> bool {
        let them = self.turn.flip();
        if ep.rank() != Rank::new(2).relative_to(them) {
            return false;
        }
        let Some(pawn_sq) = ep.offset(if them == Color::White { 8 } else { -8 }) else {
            return false;
        };
        let Some(origin) = ep.offset(if them == Color::White { -8 } else { 8 }) else {
            return false;
        };
        self.pieces(them, Role::Pawn).contains(pawn_sq)
            && self.board[ep.index()].is_none()
            && self.board[origin.index()].is_none()
    }

    /// Our pawns that attack `ep`.
    #[inline]
    fn ep_capturers(&self, ep: Square) -> Bitboard {
        pawn_attacks(self.turn.flip(), ep) & self.pieces(self.turn, Role::Pawn)
    }

    /// Computes the Zobrist key from scratch (the incremental key must always equal it).
    pub fn compute_key(&self) -> u64 {
        let mut key = 0;
        for sq in self.occupied() {
            if let Some(p) = self.board[sq.index()] {
                key ^= zobrist::piece(p, sq);
            }
        }
        for sq in self.promoted {
            key ^= zobrist::promoted(sq);
        }
        for c in Color::ALL {
            for r in Role::DROPPABLE {
                for n in 0..self.hands[c.index()].count(r) {
                    key ^= zobrist::hand(c, r, n);
                }
            }
        }
        key ^= zobrist::castling(self.castling.bits());
        if let Some(ep) = self.ep_square {
            key ^= zobrist::ep_file(ep.file().index());
        }
        if self.turn == Color::Black {
            key ^= zobrist::side();
        }
        key
    }

    #[inline]
    fn put(&mut self, p: Piece, sq: Square) {
        self.board[sq.index()] = Some(p);
        self.by_role[p.role().index()] |= Bitboard::from(sq);
        self.by_color[p.color().index()] |= Bitboard::from(sq);
    }

    #[inline]
    fn take(&mut self, p: Piece, sq: Square) {
        self.board[sq.index()] = None;
        self.by_role[p.role().index()] ^= Bitboard::from(sq);
        self.by_color[p.color().index()] ^= Bitboard::from(sq);
    }

    // ----- Accessors -----

    /// The rule set.
    #[inline]
    pub fn variant(&self) -> Variant {
        self.variant
    }

    /// Side to move.
    #[inline]
    pub fn turn(&self) -> Color {
        self.turn
    }

    /// The piece on `sq`.
    #[inline]
    pub fn piece_at(&self, sq: Square) -> Option<Piece> {
        self.board[sq.index()]
    }

    /// All occupied squares.
    #[inline]
    pub fn occupied(&self) -> Bitboard {
        self.by_color[0] | self.by_color[1]
    }

    /// Squares of `color`'s pieces.
    #[inline]
    pub fn us(&self, color: Color) -> Bitboard {
        self.by_color[color.index()]
    }

    /// Squares of every piece of `role`, both colours.
    #[inline]
    pub fn role_bb(&self, role: Role) -> Bitboard {
        self.by_role[role.index()]
    }

    /// Squares of `color`'s pieces of `role`.
    #[inline]
    pub fn pieces(&self, color: Color, role: Role) -> Bitboard {
        self.by_role[role.index()] & self.by_color[color.index()]
    }

    /// Squares of `color`'s rooks and queens.
    #[inline]
    pub fn rook_likes(&self, color: Color) -> Bitboard {
        (self.by_role[Role::Rook.index()] | self.by_role[Role::Queen.index()])
            & self.by_color[color.index()]
    }

    /// Squares of `color`'s bishops and queens.
    #[inline]
    pub fn bishop_likes(&self, color: Color) -> Bitboard {
        (self.by_role[Role::Bishop.index()] | self.by_role[Role::Queen.index()])
            & self.by_color[color.index()]
    }

    /// `color`'s king square.
    #[inline]
    pub fn king(&self, color: Color) -> Square {
        self.pieces(color, Role::King).lsb()
    }

    /// Squares holding promoted pieces.
    #[inline]
    pub fn promoted(&self) -> Bitboard {
        self.promoted
    }

    /// `color`'s pocket.
    #[inline]
    pub fn hand(&self, color: Color) -> &Pocket {
        &self.hands[color.index()]
    }

    /// Castling rights.
    #[inline]
    pub fn castling(&self) -> CastlingRights {
        self.castling
    }

    /// The en-passant square, present only when a capture there is possible.
    #[inline]
    pub fn ep_square(&self) -> Option<Square> {
        self.ep_square
    }

    /// Half-move clock (kept for FEN output; crazyhouse has no 50-move rule).
    #[inline]
    pub fn halfmoves(&self) -> u32 {
        self.halfmoves
    }

    /// Full-move number.
    #[inline]
    pub fn fullmoves(&self) -> u32 {
        self.fullmoves
    }

    /// Zobrist key of everything repetition depends on.
    #[inline]
    pub fn key(&self) -> u64 {
        self.key
    }

    /// Pieces giving check to the side to move.
    #[inline]
    pub fn checkers(&self) -> Bitboard {
        self.checkers
    }

    /// Is the side to move in check?
    #[inline]
    pub fn in_check(&self) -> bool {
        self.checkers.any()
    }

    /// Pieces of `by` attacking `sq`, given the occupancy `occ`.
    #[inline]
    pub fn attackers_to(&self, sq: Square, by: Color, occ: Bitboard) -> Bitboard {
        ((pawn_attacks(by.flip(), sq) & self.by_role[Role::Pawn.index()])
            | (knight_attacks(sq) & self.by_role[Role::Knight.index()])
            | (king_attacks(sq) & self.by_role[Role::King.index()])
            | (rook_attacks(sq, occ)
                & (self.by_role[Role::Rook.index()] | self.by_role[Role::Queen.index()]))
            | (bishop_attacks(sq, occ)
                & (self.by_role[Role::Bishop.index()] | self.by_role[Role::Queen.index()])))
            & self.by_color[by.index()]
    }

    /// Pieces of both colours attacking `sq`, given the occupancy `occ`.
    #[inline]
    pub fn all_attackers_to(&self, sq: Square, occ: Bitboard) -> Bitboard {
        (pawn_attacks(Color::Black, sq) & self.pieces(Color::White, Role::Pawn))
            | (pawn_attacks(Color::White, sq) & self.pieces(Color::Black, Role::Pawn))
            | (knight_attacks(sq) & self.by_role[Role::Knight.index()])
            | (king_attacks(sq) & self.by_role[Role::King.index()])
            | (rook_attacks(sq, occ)
                & (self.by_role[Role::Rook.index()] | self.by_role[Role::Queen.index()]))
            | (bishop_attacks(sq, occ)
                & (self.by_role[Role::Bishop.index()] | self.by_role[Role::Queen.index()]))
    }

    /// Does `by` attack `sq` in the current occupancy?
    #[inline]
    pub fn is_attacked(&self, sq: Square, by: Color) -> bool {
        self.attackers_to(sq, by, self.occupied()).any()
    }

    /// Every square `color` attacks (pieces only, not drops).
    pub fn attacked_by(&self, color: Color) -> Bitboard {
        let occ = self.occupied();
        let mut att = self.pieces(color, Role::Pawn).pawn_attacks(color);
        for sq in self.pieces(color, Role::Knight) {
            att |= knight_attacks(sq);
        }
        for sq in self.bishop_likes(color) {
            att |= bishop_attacks(sq, occ);
        }
        for sq in self.rook_likes(color) {
            att |= rook_attacks(sq, occ);
        }
        att | king_attacks(self.king(color))
    }

    /// Pieces (of either colour) that alone stand between `color`'s king and an enemy
    /// slider: pinned pieces when they are `color`'s, discovered-check candidates otherwise.
    #[inline]
    pub fn king_blockers(&self, color: Color) -> Bitboard {
        let ksq = self.king(color);
        let them = color.flip();
        let snipers = (rook_attacks(ksq, Bitboard::EMPTY) & self.rook_likes(them))
            | (bishop_attacks(ksq, Bitboard::EMPTY) & self.bishop_likes(them));
        let occ = self.occupied();
        let mut blockers = Bitboard::EMPTY;
        for s in snipers {
            let b = super::attacks::between(ksq, s) & occ;
            if b.any() && !b.more_than_one() {
                blockers |= b;
            }
        }
        blockers
    }

    /// Material that can never deliver mate: bare kings with empty pockets. Any other
    /// crazyhouse material can still mate, because every capture returns as a drop.
    pub fn is_insufficient_material(&self) -> bool {
        self.occupied().count() == 2 && self.hands[0].is_empty() && self.hands[1].is_empty()
    }

    // ----- Making moves -----

    /// Plays `m`, which must be legal in this position (from the move generator, or checked
    /// with `is_legal`). A move whose from-square is empty, which no caller produces (input
    /// moves are checked first), leaves the position unchanged and is logged as an error,
    /// rather than half-playing it.
    pub fn play_unchecked(&mut self, m: Move) {
        let us = self.turn;
        let them = us.flip();
        let kind = m.kind();
        let mover = match kind {
            MoveKind::Drop(_) => None,
            _ => match self.board[m.from().index()] {
                Some(p) => Some(p),
                None => {
                    debug_assert!(false, "no piece on {} for {m}", m.from());
                    log::error!("move {m} without a piece on {} ignored", m.from());
                    return;
                }
            },
        };
        let mut key = self.key ^ zobrist::side();
        if let Some(ep) = self.ep_square.take() {
            key ^= zobrist::ep_file(ep.file().index());
        }
        self.halfmoves = self.halfmoves.saturating_add(1);
        let to = m.to();

        match (kind, mover) {
            (MoveKind::Drop(role), _) => {
                let after = self.hands[us.index()].remove(role);
                key ^= zobrist::hand(us, role, after);
                let p = Piece::new(us, role);
                self.put(p, to);
                key ^= zobrist::piece(p, to);
                if role == Role::Pawn {
                    self.halfmoves = 0;
                }
            }
            (MoveKind::Castle, Some(king)) => {
                let from = m.from();
                key ^= self.relocate(king, from, to, king);
                let king_side = to.file().index() > from.file().index();
                let (rook_from, rook_to) = if king_side {
                    (Square::H1.relative_to(us), Square::F1.relative_to(us))
                } else {
                    (Square::A1.relative_to(us), Square::D1.relative_to(us))
                };
                let rook = Piece::new(us, Role::Rook);
                key ^= self.relocate(rook, rook_from, rook_to, rook);
                key ^= self.lose_castling(from, to);
            }
            (_, Some(mover)) => {
                let from = m.from();
                // En passant takes the pawn behind the target square.
                let cap_sq = if kind == MoveKind::EnPassant {
                    Square::new(
                        if us == Color::White { to.index() - 8 } else { to.index() + 8 } as u8
                    )
                } else {
                    to
                };
                if let Some(captured) = self.board[cap_sq.index()] {
                    key ^= self.capture_to_hand(us, captured, cap_sq);
                    self.halfmoves = 0;
                }
                let placed = match kind {
                    MoveKind::Promotion(role) => Piece::new(us, role),
                    _ => mover,
                };
                key ^= self.relocate(mover, from, to, placed);
                if let MoveKind::Promotion(_) = kind {
                    self.promoted |= Bitboard::from(to);
                    key ^= zobrist::promoted(to);
                }
                if mover.role() == Role::Pawn {
                    self.halfmoves = 0;
                    key ^= self.set_ep_square(from, to);
                }
                key ^= self.lose_castling(from, to);
            }
            (_, None) => unreachable!("board moves have a mover (checked above)"),
        }

        if us == Color::Black {
            self.fullmoves = self.fullmoves.saturating_add(1);
        }
        self.turn = them;
        self.key = key;
        self.checkers = self.attackers_to(self.king(them), us, self.occupied());
    }

    /// Takes `captured` off `sq` into `captor`'s pocket: as a pawn if it was promoted
    /// (crazyhouse), with its rank otherwise (loop, chessgi). Returns the key change.
    fn capture_to_hand(&mut self, captor: Color, captured: Piece, sq: Square) -> u64 {
        self.take(captured, sq);
        let mut key = zobrist::piece(captured, sq);
        let mut role = captured.role();
        if self.promoted.contains(sq) {
            self.promoted ^= Bitboard::from(sq);
            key ^= zobrist::promoted(sq);
            if !self.variant.drop_loop() {
                role = Role::Pawn;
            }
        }
        let before = self.hands[captor.index()].add(role);
        key ^ zobrist::hand(captor, role, before)
    }

    /// Moves `piece` from `from` to `to`, where it becomes `placed` (a promotion), carrying a
    /// promoted mark along. Returns the key change.
    fn relocate(&mut self, piece: Piece, from: Square, to: Square, placed: Piece) -> u64 {
        self.take(piece, from);
        self.put(placed, to);
        let mut key = zobrist::piece(piece, from) ^ zobrist::piece(placed, to);
        if self.promoted.contains(from) {
            self.promoted ^= Bitboard::from(from) | Bitboard::from(to);
            key ^= zobrist::promoted(from) ^ zobrist::promoted(to);
        }
        key
    }

    /// After a pawn move `from`-`to`: the en-passant square of a double push, when a pawn can
    /// take there (only a capturable square is part of the position). Returns the key change.
    fn set_ep_square(&mut self, from: Square, to: Square) -> u64 {
        if from.index().abs_diff(to.index()) != 16 {
            return 0;
        }
        let ep = Square::new(((from.index() + to.index()) / 2) as u8);
        let us = self.turn;
        if (pawn_attacks(us, ep) & self.pieces(us.flip(), Role::Pawn)).any() {
            self.ep_square = Some(ep);
            return zobrist::ep_file(ep.file().index());
        }
        0
    }

    /// Castling rights lost by a move touching `from` and `to`. Returns the key change.
    fn lose_castling(&mut self, from: Square, to: Square) -> u64 {
        let lost = CASTLING_MASK[from.index()] | CASTLING_MASK[to.index()];
        if self.castling.0 & lost == 0 {
            return 0;
        }
        let before = self.castling.0;
        self.castling.0 &= !lost;
        zobrist::castling(before) ^ zobrist::castling(self.castling.0)
    }

    /// The position after `m` (a legal move).
    #[inline]
    pub fn after(&self, m: Move) -> Position {
        let mut next = self.clone();
        next.play_unchecked(m);
        next
    }

    /// Passes the move (for null-move pruning). Not legal in check.
    pub fn play_null(&mut self) {
        debug_assert!(!self.in_check());
        let mut key = self.key ^ zobrist::side();
        if let Some(ep) = self.ep_square.take() {
            key ^= zobrist::ep_file(ep.file().index());
        }
        self.turn = self.turn.flip();
        self.key = key;
        self.checkers = Bitboard::EMPTY;
    }

    /// Replaces both pockets (XBoard `holding`), keeping everything else. Fails without change
    /// when board and pockets would hold more than `MAX_PIECES`.
    pub fn set_hands(&mut self, hands: [Pocket; 2]) -> Result<(), PositionError> {
        if self.occupied().count() + hands[0].total() + hands[1].total() > MAX_PIECES {
            return Err(PositionError::TooManyPieces);
        }
        self.hands = hands;
        self.key = self.compute_key();
        Ok(())
    }

    /// Does `m` capture something?
    #[inline]
    pub fn is_capture(&self, m: Move) -> bool {
        match m.kind() {
            MoveKind::EnPassant => true,
            MoveKind::Normal | MoveKind::Promotion(_) => self.board[m.to().index()].is_some(),
            _ => false,
        }
    }

    /// Does `m` capture or promote? The search orders, reduces and credits such moves apart
    /// from quiet ones, and datagen flags the positions where one was played.
    #[inline]
    pub fn is_tactical(&self, m: Move) -> bool {
        self.is_capture(m) || m.promotion_role().is_some()
    }

    /// The role moved by `m` (the dropped role for a drop).
    #[inline]
    pub fn moved_role(&self, m: Move) -> Role {
        match m.drop_role() {
            Some(r) => r,
            None => self.board[m.from().index()].map_or(Role::Pawn, Piece::role),
        }
    }

    /// The role captured by `m`, if any (a pawn for en passant).
    #[inline]
    pub fn captured_role(&self, m: Move) -> Option<Role> {
        match m.kind() {
            MoveKind::EnPassant => Some(Role::Pawn),
            MoveKind::Normal | MoveKind::Promotion(_) => {
                self.board[m.to().index()].map(Piece::role)
            }
            _ => None,
        }
    }

    /// Does `m` (legal here) give check? Drops, plain moves and promotions are answered from
    /// attack sets without playing the move (search asks this for every move it prunes);
    /// castling and en passant, rare and with odd discovered checks, are played on a copy.
    pub fn gives_check(&self, m: Move) -> bool {
        let us = self.turn;
        let ksq = self.king(us.flip());
        let occ = self.occupied();
        match m.kind() {
            MoveKind::Drop(role) => super::attacks::attacks(role, us, m.to(), occ).contains(ksq),
            MoveKind::Normal | MoveKind::Promotion(_) => {
                let (from, to) = (Bitboard::from_square(m.from()), Bitboard::from_square(m.to()));
                let role = m.promotion_role().unwrap_or_else(|| self.moved_role(m));
                let occ = (occ & !from) | to;
                if super::attacks::attacks(role, us, m.to(), occ).contains(ksq) {
                    return true;
                }
                // Discovered check: only a piece leaving a line through the king can open one.
                if !queen_attacks(ksq, Bitboard::EMPTY).contains(m.from()) {
                    return false;
                }
                let sliders = ((rook_attacks(ksq, occ) & self.rook_likes(us))
                    | (bishop_attacks(ksq, occ) & self.bishop_likes(us)))
                    & !from;
                sliders.any()
            }
            MoveKind::Castle | MoveKind::EnPassant => self.after(m).in_check(),
        }
    }

    /// Pieces (not pawns, not the king) of `color` on the board.
    #[inline]
    pub fn non_pawn_pieces(&self, color: Color) -> Bitboard {
        self.us(color) & !self.by_role[Role::Pawn.index()] & !self.by_role[Role::King.index()]
    }
}

impl fmt::Debug for Position {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "Position({})", self.fen())
    }
}

/// A board diagram with pockets, FEN and key (the UCI `d` command).
impl fmt::Display for Position {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        writeln!(f, " +---+---+---+---+---+---+---+---+")?;
        for rank in (0..8).rev() {
            f.write_str(" ")?;
            for file in 0..8 {
                let sq = Square::new(rank * 8 + file);
                let c = self.board[sq.index()].map_or(' ', Piece::char);
                let mark = if self.promoted.contains(sq) { '~' } else { ' ' };
                write!(f, "| {c}{mark}")?;
            }
            writeln!(f, "| {}", rank + 1)?;
            writeln!(f, " +---+---+---+---+---+---+---+---+")?;
        }
        writeln!(f, "   a   b   c   d   e   f   g   h")?;
        writeln!(f)?;
        writeln!(
            f,
            "Pockets: white [{}] black [{}]",
            self.hands[0].fen_letters(Color::White),
            self.hands[1].fen_letters(Color::Black)
        )?;
        let promoted: Vec<String> = self.promoted.map(|s| s.to_string()).collect();
        writeln!(
            f,
            "Promoted: {}",
            if promoted.is_empty() { "-".to_string() } else { promoted.join(" ") }
        )?;
        writeln!(f, "Variant: {}", self.variant)?;
        writeln!(f, "Fen: {}", self.fen())?;
        write!(f, "Key: {:016X}", self.key)?;
        if self.in_check() {
            let checkers: Vec<String> = self.checkers.map(|s| s.to_string()).collect();
            write!(f, "\nCheckers: {}", checkers.join(" "))?;
        }
        Ok(())
    }
}
