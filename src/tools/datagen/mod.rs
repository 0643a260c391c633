//! Training data from self-play: `madhouse datagen`.
//!
//! Each thread plays games against itself with its own single-threaded engine at a fixed
//! node count or depth, and records quiet positions (see [`is_recordable`]) with the
//! search's score (white's view) and the game's result in the binary record format
//! ([`crate::nnue::data`]). With `all_positions` (`--all-positions`) it records every
//! searched position instead, flagging those whose move captures or promotes, so that the
//! trainer can choose which to use: the searches are the same either way, so the extra
//! positions cost only file space. [`files`] converts text data and summarises record files.
//!
//! # Openings
//!
//! A game starts from a random line of the opening file (EPD or FEN; the start position
//! without one), plays `random_plies` uniformly random legal moves, and is kept only if the
//! first search scores it within `OPENING_MAX_CP` for either side; otherwise another opening
//! is drawn (at most `OPENING_TRIES` times, then the game is skipped). The first search is
//! the one that plays the first move, so the filter costs nothing.
//!
//! # Games
//!
//! Game `i` of a run uses a random generator seeded from `(seed, i)` only, and each game
//! starts from an empty hash table, so a game's moves do not depend on which thread plays it
//! or on what ran before. A game ends by the rules (mate, stalemate, threefold repetition,
//! bare kings), or is adjudicated: a proven mate score ends it for the side that has it;
//! `DECISIVE_PLIES` consecutive searches beyond `DECISIVE_CP` end it for the side ahead;
//! `MAX_GAME_PLIES` plies make it a draw. Mate scores are never stored: the position whose
//! search proves a mate ends the game before it is recorded, so every stored score is below
//! `MATE_BOUND` in size (the trainer still skips `|score| >= MATE_BOUND`).
//!
//! # The file, resuming, crash safety
//!
//! The output is a data file with a header ([`crate::tools::datafile`]) that records each
//! run: its seed, its settings and how many games of it the file holds. Games are written
//! whole and in index order (a finished game waits in memory for the games before it), each
//! in one `write_all` followed by `sync_data`, and then the header is rewritten (into the
//! slot that holds the older copy) to vouch for it. On start:
//! - no file: a new one is created with its header;
//! - the file holds a run of this seed with the same settings: the run resumes at its next
//!   game (`--games` is the run's total, so the same command line finishes an interrupted
//!   run), after cutting off any bytes the header does not vouch for (a game torn by a kill,
//!   which is then replayed identically);
//! - the file holds other seeds: a new run is added only with `add_seed` (`--add-seed`), and
//!   only if its settings equal theirs, unless `allow_mixed_settings`;
//! - anything else is refused before a byte is written: a file that is not a Madhouse data
//!   file (text, empty, another program's), records from before the header (convert them
//!   with `--convert-legacy`), another variant, converted data, a damaged header.

pub mod files;

use std::collections::BTreeMap;
use std::fs::{File, OpenOptions};
use std::io::{self, BufRead, BufReader, Seek, SeekFrom, Write};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

pub use crate::nnue::data::{decode, encode, DataError, RecordReader, Sample, RECORD_BYTES};

use crate::core::{Game, Move, Position, Variant};
use crate::engine::{Engine, SearchRequest, SearchResult};
use crate::nnue::Network;
use crate::rng::Rng;
use crate::score::MATE_BOUND;
use crate::search::Silent;
use crate::time::Limits;
use crate::tools::datafile::{
    Header, Limit, Recorded, Run, Settings, Source, HEADER_BYTES, MAX_RUNS,
};
use crate::tools::file_error;
use crate::tools::progress::{format_duration, seconds_left, Meter};

/// Openings whose first search scores beyond this (centipawns, either side) are redrawn.
pub const OPENING_MAX_CP: i32 = 300;
/// Openings drawn per game before the game is skipped.
pub const OPENING_TRIES: u32 = 16;
/// Games reaching this many plies (random plies included) are drawn.
pub const MAX_GAME_PLIES: usize = 400;
/// Scores beyond this, for `DECISIVE_PLIES` searches in a row, decide the game.
pub const DECISIVE_CP: i32 = 2000;
/// See `DECISIVE_CP`.
pub const DECISIVE_PLIES: u32 = 6;
/// Hash table per game thread, MB (the searches are short).
pub const HASH_MB: usize = 8;

/// How long each move's search runs.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub enum SearchLimit {
    /// A fixed node count.
    Nodes(u64),
    /// A fixed depth.
    Depth(i32),
}

/// Settings of a data-generation run.
#[derive(Clone, Debug)]
pub struct DatagenConfig {
    /// Output file (appended to).
    pub out: PathBuf,
    /// Games in the run (a resumed run plays the missing ones).
    pub games: u64,
    /// Search per move.
    pub limit: SearchLimit,
    /// Parallel games.
    pub threads: usize,
    /// Opening positions; empty: the start position.
    pub openings: Vec<Position>,
    /// Random legal plies played after the opening.
    pub random_plies: usize,
    /// Seed of the run: game `i` depends only on `(seed, i)`.
    pub seed: u64,
    /// Variant played.
    pub variant: Variant,
    /// The network the games are searched with; `None`: the hand-written evaluation. Later
    /// rounds of data are made with the previous round's network.
    pub network: Option<Arc<Network>>,
    /// Identity of the opening file ([`crate::tools::datafile::openings_identity`]), 0 for
    /// none.
    pub openings_identity: u64,
    /// Record every searched position, not only the quiet ones (see the module docs).
    pub all_positions: bool,
    /// Add this seed as a new run to a file that holds other seeds.
    pub add_seed: bool,
    /// Add a run whose settings differ from the file's other runs.
    pub allow_mixed_settings: bool,
}

impl DatagenConfig {
    /// The settings the header records for this run.
    pub fn settings(&self) -> Settings {
        Settings {
            limit: match self.limit {
                SearchLimit::Nodes(n) => Limit::Nodes(n),
                SearchLimit::Depth(d) => Limit::Depth(d as u64),
            },
            random_plies: self.random_plies as u32,
            eval: self.network.as_ref().map_or(0, |n| n.identity()),
            openings: self.openings_identity,
            recorded: if self.all_positions { Recorded::All } else { Recorded::Quiet },
        }
    }
}

/// What a run did (this invocation only).
#[derive(Clone, Debug, Default)]
pub struct DatagenSummary {
    /// Games written by this invocation.
    pub games: u64,
    /// Games skipped because no balanced opening was found.
    pub skipped_games: u64,
    /// Positions written.
    pub positions: u64,
    /// Openings redrawn by the balance filter.
    pub rejected_openings: u64,
    /// Games won by white, drawn, won by black.
    pub results: [u64; 3],
    /// Wall time.
    pub elapsed: Duration,
}

/// The file name of a shard: the data of one seed, `<variant>-seed<seed>.bin`, so that
/// machines given different seeds write files that never clash and can be copied into one
/// folder for training.
pub fn shard_name(variant: Variant, seed: u64) -> String {
    format!("{}-seed{seed}.bin", variant.name())
}

/// The one rule for which positions are recorded: not in check, and the engine's move is
/// neither a capture nor a promotion (the static position would misjudge the exchange that
/// is under way).
pub fn is_recordable(pos: &Position, best: Move) -> bool {
    !pos.in_check() && !is_noisy(pos, best)
}

/// Does the move the search played capture or promote? Such a position is recorded only
/// with `--all-positions`, flagged ([`Sample::noisy`]).
pub fn is_noisy(pos: &Position, best: Move) -> bool {
    pos.is_tactical(best)
}

/// Reads an opening file: EPD lines (`hmvc`/`fmvn` operations give the move counters) or
/// FEN lines; blank lines and `#` comments are skipped, lines that are not a valid position
/// of `variant` are reported and skipped.
pub fn read_openings(path: &Path, variant: Variant) -> io::Result<Vec<Position>> {
    let mut out = Vec::new();
    for (n, line) in BufReader::new(File::open(path)?).lines().enumerate() {
        let line = line?;
        let line = line.trim();
        if line.is_empty() || line.starts_with('#') {
            continue;
        }
        match Position::from_fen(&epd_to_fen(line), variant) {
            Ok(pos) => out.push(pos),
            Err(e) => log::warn!("{}:{}: skipped: {e}", path.display(), n + 1),
        }
    }
    Ok(out)
}

/// The FEN of an EPD or FEN line: the first four fields, then the move counters from FEN
/// fields 5 and 6 or the `hmvc` and `fmvn` operations (default `0 1`).
fn epd_to_fen(line: &str) -> String {
    let fields: Vec<&str> = line.split_whitespace().collect();
    let board = fields.iter().take(4).copied().collect::<Vec<_>>().join(" ");
    let number = |s: &&str| s.trim_end_matches(';').parse::<u32>().ok();
    let op =
        |name: &str| fields.windows(2).skip(3).find(|w| w[0] == name).and_then(|w| number(&w[1]));
    let (half, full) = match (fields.get(4).and_then(number), fields.get(5).and_then(number)) {
        (Some(h), Some(f)) => (h, f),
        _ => (op("hmvc").unwrap_or(0), op("fmvn").unwrap_or(1)),
    };
    format!("{board} {half} {full}")
}

/// The generator of game `index` of the run seeded `seed`.
fn game_rng(seed: u64, index: u64) -> Rng {
    let mut rng = Rng::new(seed ^ index.wrapping_add(1).wrapping_mul(0xbf58_476d_1ce4_e5b9));
    rng.next_u64();
    rng
}

fn search(engine: &mut Engine, game: &Game, limit: SearchLimit) -> SearchResult {
    let limits = match limit {
        SearchLimit::Nodes(n) => Limits { nodes: Some(n), ..Limits::default() },
        SearchLimit::Depth(d) => Limits { depth: Some(d), ..Limits::default() },
    };
    let req = SearchRequest { root: game.current().clone(), history: game.history_keys(), limits };
    engine.search_sync(req, Arc::new(Silent))
}

/// A finished game, encoded.
#[derive(Default)]
struct GameRecords {
    bytes: Vec<u8>,
    positions: u64,
    rejected_openings: u64,
    /// Index into `DatagenSummary::results`; `None` when the game was skipped.
    outcome: Option<usize>,
}

/// Draws openings until one passes the balance filter; returns the game and its first
/// search.
fn pick_opening(
    engine: &mut Engine,
    cfg: &DatagenConfig,
    rng: &mut Rng,
    rejected: &mut u64,
) -> Option<(Game, SearchResult)> {
    for _ in 0..OPENING_TRIES {
        let start = match cfg.openings.len() {
            0 => Position::startpos(cfg.variant),
            n => cfg.openings[rng.below(n)].clone(),
        };
        let mut game = Game::from_position(start);
        for _ in 0..cfg.random_plies {
            let moves = game.current().legal_moves();
            if moves.is_empty() {
                break;
            }
            game.push(rng.pick(moves.as_slice()));
        }
        if game.result().is_none() {
            let first = search(engine, &game, cfg.limit);
            if first.best.is_some() && first.score.abs() <= OPENING_MAX_CP {
                return Some((game, first));
            }
        }
        *rejected += 1;
    }
    None
}

/// Plays game `index` of the run.
fn play_game(engine: &mut Engine, cfg: &DatagenConfig, index: u64) -> GameRecords {
    let mut rng = game_rng(cfg.seed, index);
    let mut rec = GameRecords::default();
    engine.clear();
    let Some((mut game, first)) = pick_opening(engine, cfg, &mut rng, &mut rec.rejected_openings)
    else {
        return rec;
    };
    let mut next = Some(first);
    let mut kept: Vec<(Position, i16, bool)> = Vec::new();
    let mut decisive_streak = 0;
    let result: f32 = loop {
        if let Some(r) = game.result() {
            break r.outcome.white_score() as f32;
        }
        if game.ply() >= MAX_GAME_PLIES {
            break 0.5;
        }
        let r = next.take().unwrap_or_else(|| search(engine, &game, cfg.limit));
        // `game.result()` has ruled out positions without a legal move.
        let Some(best) = r.best else { return rec };
        let pos = game.current();
        let white_score = r.score * pos.turn().sign();
        if r.score.abs() >= MATE_BOUND {
            break if white_score > 0 { 1.0 } else { 0.0 };
        }
        decisive_streak = if white_score.abs() > DECISIVE_CP { decisive_streak + 1 } else { 0 };
        if decisive_streak >= DECISIVE_PLIES {
            break if white_score > 0 { 1.0 } else { 0.0 };
        }
        if cfg.all_positions || is_recordable(pos, best) {
            let score = white_score.clamp(-i16::MAX as i32, i16::MAX as i32) as i16;
            kept.push((pos.clone(), score, is_noisy(pos, best)));
        }
        game.push(best);
    };
    rec.outcome = Some(if result == 1.0 {
        0
    } else if result == 0.5 {
        1
    } else {
        2
    });
    rec.bytes.reserve(kept.len() * RECORD_BYTES);
    for (pos, score, noisy) in kept {
        // Only a position with more than 32 pieces on the board (from an opening file with
        // extra pieces) fails to encode; it is left out.
        if let Ok(r) = encode(&Sample { pos, score, result, noisy }) {
            rec.bytes.extend_from_slice(&r);
            rec.positions += 1;
        }
    }
    rec
}

/// The output file and the reorder buffer: games are written in index order.
struct Output {
    file: File,
    out: PathBuf,
    header: Header,
    /// This run's index in `header.runs`.
    run: usize,
    pending: BTreeMap<u64, GameRecords>,
    summary: DatagenSummary,
    target: u64,
    started: Instant,
    meter: Meter,
    error: Option<io::Error>,
}

impl Output {
    /// Opens the output for `cfg`: creates it, or resumes or adds a run after checking every
    /// rule of the module docs. Nothing is written to an existing file before all checks pass.
    fn open(cfg: &DatagenConfig) -> io::Result<Output> {
        let out = &cfg.out;
        let settings = cfg.settings();
        if out.is_dir() {
            return Err(file_error(out, "writing", "is a directory; --out names a file"));
        }
        let created = OpenOptions::new().read(true).write(true).create_new(true).open(out);
        let (file, header) = match created {
            Ok(mut file) => {
                let mut header = Header::new(cfg.variant, Source::SelfPlay);
                header.runs.push(Run { seed: cfg.seed, games: 0, settings });
                header.write_new(&mut file).map_err(|e| file_error(out, "writing", e))?;
                (file, header)
            }
            Err(e) if e.kind() == io::ErrorKind::AlreadyExists => {
                let mut file = OpenOptions::new()
                    .read(true)
                    .write(true)
                    .open(out)
                    .map_err(|e| file_error(out, "opening", e))?;
                let header = Header::read(&mut file)
                    .map_err(|e| file_error(out, "refusing to write into", e))?;
                let header = Self::check(cfg, header, settings)?;
                let keep = HEADER_BYTES + header.data_bytes;
                let len = file.metadata().map_err(|e| file_error(out, "reading", e))?.len();
                if len > keep {
                    eprintln!(
                        "datagen: {}: dropping {} bytes after the last finished game",
                        out.display(),
                        len - keep
                    );
                    file.set_len(keep).map_err(|e| file_error(out, "cutting", e))?;
                }
                (file, header)
            }
            Err(e) => return Err(file_error(out, "creating", e)),
        };
        let run = header.runs.iter().position(|r| r.seed == cfg.seed).expect("added above");
        let now = Instant::now();
        Ok(Output {
            file,
            out: out.clone(),
            header,
            run,
            pending: BTreeMap::new(),
            summary: DatagenSummary::default(),
            target: cfg.games,
            started: now,
            meter: Meter::new(),
            error: None,
        })
    }

    /// Checks that this run may go into a file with `header`; returns the header with the
    /// run in it (added if new).
    fn check(cfg: &DatagenConfig, mut header: Header, settings: Settings) -> io::Result<Header> {
        let refuse = |why: String| file_error(&cfg.out, "refusing to write into", why);
        if header.variant != cfg.variant {
            return Err(refuse(format!(
                "it holds {} data and this run plays {}",
                header.variant.name(),
                cfg.variant.name()
            )));
        }
        if header.source != Source::SelfPlay {
            return Err(refuse(format!("it holds {}, not datagen runs", header.source)));
        }
        if let Some(run) = header.run(cfg.seed) {
            if run.settings != settings {
                return Err(refuse(format!(
                    "its seed {} was made with {}, this run asks for {}",
                    cfg.seed, run.settings, settings
                )));
            }
            eprintln!(
                "datagen: {}: resuming seed {} at game {} of {}",
                cfg.out.display(),
                cfg.seed,
                run.games,
                cfg.games
            );
            return Ok(header);
        }
        let seeds: Vec<String> = header.runs.iter().map(|r| r.seed.to_string()).collect();
        if !cfg.add_seed {
            return Err(refuse(format!(
                "it holds seed(s) {} and not seed {}: give --add-seed to add a run of this \
                 seed to it, or another --out",
                seeds.join(", "),
                cfg.seed
            )));
        }
        if let Some(other) = header.runs.iter().find(|r| r.settings != settings) {
            if !cfg.allow_mixed_settings {
                return Err(refuse(format!(
                    "its seed {} was made with {}, this run asks for {}: give \
                     --allow-mixed-settings to mix them on purpose",
                    other.seed, other.settings, settings
                )));
            }
        }
        if header.runs.len() >= MAX_RUNS {
            return Err(refuse(format!(
                "it holds {MAX_RUNS} runs, the most one file records: use another --out"
            )));
        }
        eprintln!(
            "datagen: {}: adding seed {} after seed(s) {}",
            cfg.out.display(),
            cfg.seed,
            seeds.join(", ")
        );
        header.runs.push(Run { seed: cfg.seed, games: 0, settings });
        Ok(header)
    }

    /// Games of this run in the file.
    fn games_done(&self) -> u64 {
        self.header.runs[self.run].games
    }

    /// Takes game `index`; writes every game that is now next in order.
    fn deliver(&mut self, index: u64, game: GameRecords) -> io::Result<()> {
        self.pending.insert(index, game);
        while let Some(game) = self.pending.remove(&self.games_done()) {
            self.write_game(&game)?;
            let s = &mut self.summary;
            s.rejected_openings += game.rejected_openings;
            match game.outcome {
                Some(o) => {
                    s.games += 1;
                    s.results[o] += 1;
                    s.positions += game.positions;
                }
                None => s.skipped_games += 1,
            }
        }
        if self.meter.due() {
            self.report(false);
        }
        Ok(())
    }

    fn write_game(&mut self, game: &GameRecords) -> io::Result<()> {
        let end = HEADER_BYTES + self.header.data_bytes;
        let written = (|| {
            self.file.seek(SeekFrom::Start(end))?;
            self.file.write_all(&game.bytes)?;
            self.file.sync_data()?;
            let mut next = self.header.clone();
            next.data_bytes += game.bytes.len() as u64;
            next.runs[self.run].games += 1;
            next.write(&mut self.file)?;
            self.header = next;
            Ok(())
        })();
        if let Err(e) = written {
            // Cut off whatever part of the game reached the file; the header still vouches
            // for the data before it.
            let _ = self.file.set_len(end);
            return Err(self.write_error(e));
        }
        Ok(())
    }

    fn write_error(&self, e: io::Error) -> io::Error {
        io::Error::new(
            e.kind(),
            format!(
                "writing {} failed ({e}); stopped with {} games of seed {} in the file, the \
                 same command resumes",
                self.out.display(),
                self.games_done(),
                self.header.runs[self.run].seed,
            ),
        )
    }

    fn report(&mut self, last: bool) {
        let s = &self.summary;
        let secs = self.started.elapsed().as_secs_f64().max(1e-9);
        let done = self.games_done();
        let rate = s.positions as f64 / secs;
        // Games played in this run (a resumed run counts from where it resumed).
        let played = s.games + s.skipped_games;
        let left = match seconds_left(played, played + self.target.saturating_sub(done), secs) {
            Some(t) => format!(", {} left", format_duration(t)),
            None => String::new(),
        };
        let line = format!(
            "datagen: {done}/{} games, {} positions, {rate:.0} positions/s, \
             +{} ={} -{}, {} openings redrawn{left}",
            self.target, s.positions, s.results[0], s.results[1], s.results[2], s.rejected_openings
        );
        if last {
            self.meter.line(&line);
        } else {
            self.meter.status(done, self.target, &line);
        }
    }
}

/// Runs data generation (see the module docs). A write error stops every thread and is
/// returned; the file then holds whole games only.
pub fn run(cfg: &DatagenConfig) -> io::Result<DatagenSummary> {
    let output = Output::open(cfg)?;
    if output.games_done() >= cfg.games {
        eprintln!(
            "datagen: nothing to do, {} games of seed {} are already in {}",
            output.games_done(),
            cfg.seed,
            cfg.out.display()
        );
        return Ok(output.summary);
    }
    let next_game = AtomicU64::new(output.games_done());
    let output = Mutex::new(output);
    let stop = AtomicBool::new(false);
    std::thread::scope(|s| {
        for _ in 0..cfg.threads.max(1) {
            s.spawn(|| {
                let mut engine = Engine::new();
                engine.set_hash(HASH_MB);
                match &cfg.network {
                    Some(net) => {
                        engine.set_network(net.clone());
                        engine.use_network(true);
                    }
                    None => engine.use_network(false),
                }
                while !stop.load(Ordering::Relaxed) {
                    let index = next_game.fetch_add(1, Ordering::Relaxed);
                    if index >= cfg.games {
                        break;
                    }
                    let game = play_game(&mut engine, cfg, index);
                    let mut out = output.lock().unwrap_or_else(|p| p.into_inner());
                    if out.error.is_none() {
                        if let Err(e) = out.deliver(index, game) {
                            out.error = Some(e);
                            stop.store(true, Ordering::Relaxed);
                        }
                    }
                }
            });
        }
    });
    let mut out = output.into_inner().unwrap_or_else(|p| p.into_inner());
    out.summary.elapsed = out.started.elapsed();
    out.report(true);
    match out.error.take() {
        Some(e) => Err(e),
        None => Ok(out.summary),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn noisy_moves_are_captures_and_promotions() {
        // White: a pawn on b7 that can promote on b8 or take on a8 or c8, a knight that can
        // take on d5, a knight in hand. Black: a rook on a8, a pawn on d5. python-chess 1.11
        // (`is_capture` or a promotion, on `CrazyhouseBoard`) agrees on every move below.
        let pos =
            Position::from_fen("r1b1k3/1P6/8/3p4/8/2N5/8/4K3[N] w - - 0 1", Variant::Crazyhouse)
                .unwrap();
        let noisy = |uci: &str| is_noisy(&pos, pos.parse_uci(uci).unwrap());
        // Promotions, with and without a capture, and a capture.
        for m in ["b7b8q", "b7b8n", "b7a8q", "b7c8r", "c3d5"] {
            assert!(noisy(m), "{m}");
        }
        // A quiet move, a king move and a drop.
        for m in ["c3e4", "e1d2", "N@f5"] {
            assert!(!noisy(m), "{m}");
            assert!(is_recordable(&pos, pos.parse_uci(m).unwrap()), "{m}");
        }
        // In check, nothing is recordable without --all-positions, however quiet the move.
        let check =
            Position::from_fen("4k3/8/8/8/8/8/8/r3K3[N] w - - 0 1", Variant::Crazyhouse).unwrap();
        let block = check.parse_uci("N@d1").unwrap();
        assert!(!is_noisy(&check, block) && !is_recordable(&check, block));
    }

    #[test]
    fn epd_counters_come_from_the_operations_or_the_fen_fields() {
        let epd = "r1bqkbnr/pppp1ppp/2n5/8/3P4/2N5/PPP2PPP/R1BQKBNR[Pp] b KQkq - hmvc 3; \
                   fmvn 4; ce -87; id \"zh-open-002\";";
        assert_eq!(
            epd_to_fen(epd),
            "r1bqkbnr/pppp1ppp/2n5/8/3P4/2N5/PPP2PPP/R1BQKBNR[Pp] b KQkq - 3 4"
        );
        assert_eq!(epd_to_fen("8/8/8/8/8/8/8/K6k[] w - - 5 9"), "8/8/8/8/8/8/8/K6k[] w - - 5 9");
        assert_eq!(epd_to_fen("8/8/8/8/8/8/8/K6k[] w - -"), "8/8/8/8/8/8/8/K6k[] w - - 0 1");
    }

    #[test]
    fn a_write_error_stops_with_a_message_and_keeps_what_was_written() {
        let dir = std::env::temp_dir().join(format!("madhouse-werr-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let cfg = DatagenConfig {
            out: dir.join("w.bin"),
            games: 3,
            limit: SearchLimit::Depth(1),
            threads: 1,
            openings: Vec::new(),
            random_plies: 0,
            seed: 5,
            variant: Variant::Crazyhouse,
            network: None,
            openings_identity: 0,
            all_positions: false,
            add_seed: false,
            allow_mixed_settings: false,
        };
        let game = |n: u8| GameRecords {
            bytes: vec![n; RECORD_BYTES],
            positions: 1,
            rejected_openings: 0,
            outcome: Some(1),
        };
        let mut out = Output::open(&cfg).unwrap();
        out.deliver(0, game(1)).unwrap();
        // The file can no longer be written (as when the disk is full or the file is gone).
        out.file = File::open(&cfg.out).unwrap();
        let e = out.deliver(1, game(2)).unwrap_err().to_string();
        assert!(e.contains("stopped with 1 games") && e.contains("resumes"), "{e}");
        let bytes = std::fs::read(&cfg.out).unwrap();
        assert_eq!(bytes[HEADER_BYTES as usize..], vec![1; RECORD_BYTES]);
        let h = Header::read(&mut File::open(&cfg.out).unwrap()).unwrap();
        assert_eq!((h.runs[0].games, h.data_bytes), (1, RECORD_BYTES as u64));
        std::fs::remove_dir_all(&dir).unwrap();
    }
}
