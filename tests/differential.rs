//! Differential test of the rules core against shakmaty's crazyhouse implementation.
//!
//! Seeded random playouts run in lockstep in madhouse and in `shakmaty::variant::Crazyhouse`
//! (shakmaty 0.30.1, pinned in Cargo.toml), starting from the initial position, from every
//! crazyhouse FEN of `tests/data/crazyhouse.epd` and from a few hand-made positions. At every
//! ply both sides must agree on:
//!
//! - the set of legal moves, compared as UCI strings (shakmaty in `CastlingMode::Standard`, so
//!   castling is written king-two-squares `e1g1` like madhouse, never king-takes-rook `e1h1`;
//!   drops are `P@e4` with an uppercase letter in both);
//! - the checking pieces, check, checkmate and stalemate;
//! - the FEN: shakmaty's FEN must re-parse in madhouse to a position equal (`==`, which covers
//!   the Zobrist key too) to madhouse's own, and the two FEN strings must be identical once the
//!   pocket letters are put in one order (shakmaty writes `[PNpn]`, pawn first; madhouse writes
//!   `[NPnp]`, strongest first).
//!
//! En passant: madhouse keeps an en-passant square only when a pawn of the side to move attacks
//! it, whether or not that capture is legal (a pinned capturer still counts). That is X-FEN's
//! rule, which shakmaty calls `EnPassantMode::PseudoLegal`, so shakmaty's FEN is printed in that
//! mode. `EnPassantMode::Always` would write the square after every double step (madhouse reads
//! that back to the same position but prints it without the square). `EnPassantMode::Legal`
//! would omit it when the only capturer is pinned, and madhouse reads that as a different
//! position with a different key: madhouse's key tells apart two positions that differ only in
//! an en-passant capture that is impossible, where FIDE's repetition rule would not (harmless
//! for play; noted here because it is the one place the two libraries' FEN conventions differ).
//!
//! Castling with a promoted rook: both implementations allow it (castling rights follow the
//! rook on the corner square, promoted or not), but shakmaty's `do_move` does not carry the
//! promoted mark from the corner to the rook's new square: the castled rook becomes an
//! unpromoted rook (a full rook in hand when captured) and a stale mark stays on the empty
//! corner. Madhouse moves the mark with the rook. Such positions only arise from a FEN (the
//! suite has one), so the playouts never *play* a castling move whose rook is promoted; the move
//! lists containing it are still compared. `promoted_rook_castling_convention` pins both
//! behaviours down.
//!
//! Shakmaty refuses setups with more material than a real game can have (the suite has one
//! with a board full of queens); those are loaded with `ignore_too_much_material`.
//!
//! Move choice is biased so that pockets fill and promotions happen: castling is taken with
//! probability 1/2 when legal, then a pawn move to the last rank with probability 1/2 when one
//! exists, otherwise a capture with probability 2/5, otherwise any move uniformly. A few
//! hand-made starts (`EXTRA_FENS`) cover en-passant and castling corner cases that random play
//! rarely reaches. The default test plays about 30k plies; the `#[ignore]`d
//! long version about 1M (`cargo test --release --test differential -- --ignored`).

mod common;

use std::collections::HashMap;

use common::{castles_promoted_rook, Rng};
use madhouse::core::{Move, MoveKind, Position, Variant, START_FEN};
use shakmaty::fen::Fen;
use shakmaty::uci::UciMove;
use shakmaty::variant::Crazyhouse;
use shakmaty::{CastlingMode, EnPassantMode, Position as _, PositionError};

/// Hand-made starts for rules that random play reaches rarely.
const EXTRA_FENS: [&str; 6] = [
    // En passant that would expose the king along the rank: pseudo-legal only (kept in FEN).
    "8/8/8/KPp4r/8/8/8/4k3[] w - c6 0 1",
    // En passant that captures the checking pawn.
    "8/8/8/2k5/3Pp3/8/8/4K3[] b - d3 0 1",
    // En passant by a pinned pawn along its pin line (legal).
    "8/k7/8/8/3pP3/8/8/4K1B1[] b - e3 0 1",
    // Castling queen side with b1 attacked (legal) and king side next to an attacked h1.
    "r3k2r/8/8/8/4b3/8/8/R3K2R[Qq] w KQkq - 0 1",
    // Check along the back rank: no pawn drop may block it.
    "4k3/8/8/8/8/8/8/r3K3[PN] w - - 0 1",
    // Both pockets full, kings castled-side, many drop checks.
    "r4rk1/ppp2ppp/8/8/8/8/PPP2PPP/R4RK1[QRBNPPqrbnpp] w - - 0 1",
];

/// The start position, the FEN of every crazyhouse case of the perft suite, and `EXTRA_FENS`.
fn start_fens() -> Vec<String> {
    let mut out = vec![START_FEN.to_string()];
    out.extend(EXTRA_FENS.iter().map(|f| f.to_string()));
    out.extend(common::crazyhouse_suite_fens());
    out
}

fn shakmaty_from_fen(fen: &str) -> Crazyhouse {
    let parsed: Fen = fen.parse().unwrap_or_else(|e| panic!("shakmaty cannot read {fen}: {e}"));
    parsed
        .into_position(CastlingMode::Standard)
        .or_else(PositionError::ignore_too_much_material)
        .unwrap_or_else(|e| panic!("shakmaty refuses {fen}: {e}"))
}

fn shakmaty_fen(pos: &Crazyhouse) -> String {
    Fen::from_position(pos, EnPassantMode::PseudoLegal).to_string()
}

/// Puts the pocket letters of a bracket-pocket FEN in madhouse's order (white strongest first,
/// then black strongest first).
fn normalize_pockets(fen: &str) -> String {
    let (Some(open), Some(close)) = (fen.find('['), fen.find(']')) else {
        return fen.to_string();
    };
    let order = "QRBNPqrbnp";
    let mut letters: Vec<char> = fen[open + 1..close].chars().collect();
    letters.sort_by_key(|c| order.find(*c).unwrap_or(usize::MAX));
    let pocket: String = letters.into_iter().collect();
    format!("{}[{}]{}", &fen[..open], pocket, &fen[close + 1..])
}

/// Picks the next move with `common::choose`, never a castling move with a promoted rook.
fn choose(pos: &Position, moves: &[Move], rng: &mut Rng) -> Option<Move> {
    let usable: Vec<Move> =
        moves.iter().copied().filter(|&m| !castles_promoted_rook(pos, m)).collect();
    common::choose(pos, &usable, rng)
}

/// What the playouts went through, to show they reach the interesting rules.
#[derive(Default, Debug)]
struct Stats {
    plies: u64,
    playouts: u64,
    checks: u64,
    checkmates: u64,
    stalemates: u64,
    drops: u64,
    promotions: u64,
    promoted_captured: u64,
    castles: u64,
    en_passant_available: u64,
    en_passant_played: u64,
    max_moves: usize,
    skipped_promoted_rook_castles: u64,
}

/// Everything needed to report a failure in a way that can be replayed.
struct Trace<'a> {
    start: &'a str,
    seed: u64,
    history: Vec<String>,
}

impl Trace<'_> {
    fn describe(&self, pos: &Position) -> String {
        format!(
            "start {}\nseed {}, ply {}\nmoves {}\nposition {}",
            self.start,
            self.seed,
            self.history.len(),
            self.history.join(" "),
            pos.fen()
        )
    }
}

/// Checks one position against shakmaty; returns madhouse's legal moves and a map from UCI
/// string to shakmaty's move.
fn compare(
    pos: &Position,
    shak: &Crazyhouse,
    trace: &Trace<'_>,
    stats: &mut Stats,
) -> (Vec<Move>, HashMap<String, shakmaty::Move>) {
    let ctx = || trace.describe(pos);

    // Legal moves as UCI strings.
    let moves: Vec<Move> = pos.legal_moves().iter().copied().collect();
    let mut ours: Vec<String> = moves.iter().map(|m| m.to_string()).collect();
    let mut theirs_map = HashMap::new();
    let mut theirs = Vec::new();
    for &m in shak.legal_moves().iter() {
        let uci = UciMove::from_move(m, CastlingMode::Standard).to_string();
        theirs.push(uci.clone());
        theirs_map.insert(uci, m);
    }
    ours.sort();
    theirs.sort();
    if ours != theirs {
        let only_ours: Vec<&String> = ours.iter().filter(|m| !theirs.contains(m)).collect();
        let only_theirs: Vec<&String> = theirs.iter().filter(|m| !ours.contains(m)).collect();
        panic!(
            "legal moves differ\n{}\nonly madhouse: {only_ours:?}\nonly shakmaty: {only_theirs:?}\n\
             counts: madhouse {} shakmaty {}",
            ctx(),
            ours.len(),
            theirs.len()
        );
    }
    assert_eq!(pos.count_legal(), moves.len() as u64, "count_legal\n{}", ctx());
    assert_eq!(pos.has_legal_move(), !moves.is_empty(), "has_legal_move\n{}", ctx());

    // Check, mate, stalemate.
    assert_eq!(pos.checkers().0, shak.checkers().0, "checkers\n{}", ctx());
    assert_eq!(pos.in_check(), shak.is_check(), "is_check\n{}", ctx());
    let mate = pos.in_check() && moves.is_empty();
    let stalemate = !pos.in_check() && moves.is_empty();
    assert_eq!(mate, shak.is_checkmate(), "checkmate\n{}", ctx());
    assert_eq!(stalemate, shak.is_stalemate(), "stalemate\n{}", ctx());

    // FEN: shakmaty's, read back by madhouse, is the same position.
    let their_fen = shakmaty_fen(shak);
    let reparsed = Position::from_fen(&their_fen, Variant::Crazyhouse).unwrap_or_else(|e| {
        panic!("madhouse cannot read shakmaty's FEN {their_fen}: {e}\n{}", ctx())
    });
    assert_eq!(reparsed.fen(), pos.fen(), "FEN after re-parse ({their_fen})\n{}", ctx());
    assert!(reparsed == *pos, "positions differ after re-parse ({their_fen})\n{}", ctx());
    assert_eq!(normalize_pockets(&their_fen), pos.fen(), "FEN text\n{}", ctx());

    // gives_check answers from attack sets; playing each move is the reference.
    for &m in moves.iter() {
        assert_eq!(pos.gives_check(m), pos.after(m).in_check(), "gives_check {m}\n{}", ctx());
    }

    stats.checks += u64::from(pos.in_check());
    stats.checkmates += u64::from(mate);
    stats.stalemates += u64::from(stalemate);
    stats.max_moves = stats.max_moves.max(moves.len());
    if moves.iter().any(|m| m.is_en_passant()) {
        stats.en_passant_available += 1;
    }
    (moves, theirs_map)
}

/// One random game of at most `max_plies` plies from `start`.
fn playout(start: &str, seed: u64, max_plies: usize, stats: &mut Stats) {
    let mut pos = Position::from_fen(start, Variant::Crazyhouse)
        .unwrap_or_else(|e| panic!("madhouse refuses {start}: {e}"));
    // Shakmaty starts from madhouse's canonical FEN, so both read the same text (the suite
    // also has Lichess-style ninth-rank pockets, which are madhouse's business to parse).
    let mut shak = shakmaty_from_fen(&pos.fen());
    let mut rng = Rng::new(seed);
    let mut trace = Trace { start, seed, history: Vec::new() };
    stats.playouts += 1;

    for _ in 0..max_plies {
        let (moves, theirs) = compare(&pos, &shak, &trace, stats);
        if moves.iter().any(|&m| castles_promoted_rook(&pos, m)) {
            stats.skipped_promoted_rook_castles += 1;
        }
        let Some(m) = choose(&pos, &moves, &mut rng) else {
            return;
        };
        let uci = m.to_string();
        let their_move = theirs[&uci];

        match m.kind() {
            MoveKind::Drop(_) => stats.drops += 1,
            MoveKind::Promotion(_) => stats.promotions += 1,
            MoveKind::Castle => stats.castles += 1,
            MoveKind::EnPassant => stats.en_passant_played += 1,
            MoveKind::Normal => {}
        }
        if pos.is_capture(m) && pos.promoted().contains(m.to()) {
            stats.promoted_captured += 1;
        }
        let gives_check = pos.gives_check(m);

        pos.play_unchecked(m);
        shak.play_unchecked(their_move);
        trace.history.push(uci);
        stats.plies += 1;

        assert_eq!(gives_check, pos.in_check(), "gives_check\n{}", trace.describe(&pos));
        assert_eq!(pos.key(), pos.compute_key(), "incremental key\n{}", trace.describe(&pos));
    }
    // The final position is compared too.
    compare(&pos, &shak, &trace, stats);
}

fn run(playouts_per_start: u64, max_plies: usize, seed_base: u64) -> Stats {
    let mut stats = Stats::default();
    for (i, fen) in start_fens().iter().enumerate() {
        for k in 0..playouts_per_start {
            let seed = seed_base ^ ((i as u64) << 32) ^ k;
            playout(fen, seed, max_plies, &mut stats);
        }
    }
    eprintln!("{stats:#?}");
    stats
}

/// The playouts must actually reach the rules this test is for.
fn assert_coverage(stats: &Stats, min_plies: u64) {
    assert!(stats.plies >= min_plies, "only {} plies played", stats.plies);
    assert!(stats.checkmates > 0, "no checkmate reached: {stats:?}");
    assert!(stats.drops > 0 && stats.promotions > 0 && stats.castles > 0, "{stats:?}");
    assert!(stats.promoted_captured > 0, "no promoted piece captured: {stats:?}");
    assert!(stats.en_passant_played > 0, "no en passant played: {stats:?}");
}

#[test]
fn random_playouts_agree_with_shakmaty() {
    let stats = run(6, 140, 0x5eed);
    assert_coverage(&stats, 20_000);
}

#[test]
#[ignore = "about 1M plies; run in release mode"]
fn random_playouts_agree_with_shakmaty_long() {
    let stats = run(150, 180, 0x10c0_ffee);
    assert_coverage(&stats, 900_000);
}

/// Depth-2 perft of every start position, per root move, against shakmaty's perft.
#[test]
fn perft_divide_depth_2_agrees_with_shakmaty() {
    for fen in start_fens() {
        let pos = Position::from_fen(&fen, Variant::Crazyhouse).unwrap();
        let shak = shakmaty_from_fen(&pos.fen());
        for &m in pos.legal_moves().iter() {
            let their_move = UciMove::from_ascii(m.to_string().as_bytes())
                .unwrap()
                .to_move(&shak)
                .unwrap_or_else(|_| panic!("{fen}: shakmaty rejects {m}"));
            let mut after = shak.clone();
            after.play_unchecked(their_move);
            let ours = madhouse::core::perft::perft(&pos.after(m), 1);
            let theirs = shakmaty::perft(&after, 1);
            assert_eq!(ours, theirs, "{fen} after {m}");
        }
    }
}

/// Both implementations let a promoted rook on its corner castle, but only madhouse keeps the
/// promoted mark on the castled rook (see the module comment).
#[test]
fn promoted_rook_castling_convention() {
    let fen = "4k3/8/8/8/8/8/8/R3K2R~[] w KQ - 0 1";
    let pos = Position::from_fen(fen, Variant::Crazyhouse).unwrap();
    let shak = shakmaty_from_fen(fen);
    let castle = pos.parse_uci("e1g1").unwrap();
    assert!(castle.is_castle());
    let their_castle = UciMove::from_ascii(b"e1g1").unwrap().to_move(&shak).unwrap();
    assert!(their_castle.is_castle());

    let ours = pos.after(castle);
    assert_eq!(ours.fen(), "4k3/8/8/8/8/8/8/R4R~K1[] b - - 1 1");
    let mut theirs = shak.clone();
    theirs.play_unchecked(their_castle);
    // Shakmaty 0.30.1: the castled rook is no longer promoted, and the mark stays on h1.
    assert_eq!(shakmaty_fen(&theirs), "4k3/8/8/8/8/8/8/R4RK1[] b - - 1 1");
    assert!(theirs.promoted().contains(shakmaty::Square::H1));
}

#[test]
fn pocket_normalization() {
    assert_eq!(
        normalize_pockets("8/8/8/8/8/8/8/8[PNpnQq] w - - 0 1"),
        "8/8/8/8/8/8/8/8[QNPqnp] w - - 0 1"
    );
    assert_eq!(normalize_pockets("8/8/8/8/8/8/8/8[] w - - 0 1"), "8/8/8/8/8/8/8/8[] w - - 0 1");
}
