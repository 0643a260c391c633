//! Helpers for `tests/fuzz.rs`: settings from the environment, progress lines, a watchdog that
//! catches hanging calls, a pool of game positions, FEN writers for every dialect the reader
//! accepts, and string mutators.
//!
//! Everything is driven by the seedable `Rng` of `tests/common`, so a run is reproducible from
//! its seed (`MADHOUSE_FUZZ_SEED`) and case count.

#![allow(dead_code)]

pub mod model;

use std::collections::VecDeque;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, Mutex, OnceLock};
use std::time::{Duration, Instant};

use madhouse::core::{Color, Move, Position, Role, Variant};

use crate::common::{choose, start_positions, Rng};

/// Seed used when `MADHOUSE_FUZZ_SEED` is not set.
pub const DEFAULT_SEED: u64 = 0x6d61_6468_6f75_7365;

/// A number from the environment: decimal (underscores allowed) or `0x` hexadecimal.
pub fn env_num(name: &str) -> Option<u64> {
    let v = std::env::var(name).ok()?;
    let v = v.trim().replace('_', "");
    match v.strip_prefix("0x") {
        Some(hex) => u64::from_str_radix(hex, 16).ok(),
        None => v.parse().ok(),
    }
}

/// Cases per target: `MADHOUSE_FUZZ_CASES`, or the target's small default.
pub fn cases(default: u64) -> u64 {
    env_num("MADHOUSE_FUZZ_CASES").unwrap_or(default)
}

/// The run's seed: `MADHOUSE_FUZZ_SEED`, or a fixed default.
pub fn seed() -> u64 {
    env_num("MADHOUSE_FUZZ_SEED").unwrap_or(DEFAULT_SEED)
}

/// Longest a single call may take: `MADHOUSE_FUZZ_HANG_MS`, default 2000 ms.
pub fn hang_limit() -> Duration {
    Duration::from_millis(env_num("MADHOUSE_FUZZ_HANG_MS").unwrap_or(2000))
}

/// Longest a `depth 1` search may run, or take to end after `stop`: `MADHOUSE_FUZZ_SEARCH_MS`,
/// default 5 s.
pub fn search_limit() -> Duration {
    Duration::from_millis(env_num("MADHOUSE_FUZZ_SEARCH_MS").unwrap_or(5_000))
}

/// The first `n` characters of `s`.
pub fn clip(s: &str, n: usize) -> String {
    let mut out: String = s.chars().take(n).collect();
    if s.chars().nth(n).is_some() {
        out.push_str("...");
    }
    out
}

/// Progress lines on stderr: the start, every 5% on long runs, and the total.
pub struct Progress {
    name: &'static str,
    total: u64,
    start: Instant,
    step: u64,
    next: u64,
}

impl Progress {
    /// Announces `total` cases of target `name`.
    pub fn new(name: &'static str, total: u64) -> Progress {
        eprintln!("fuzz {name}: {total} cases, seed {:#x}", seed());
        let step = if total >= 50_000 { total / 20 } else { u64::MAX };
        Progress { name, total, start: Instant::now(), step, next: step }
    }

    /// Reports progress after `done` cases.
    pub fn tick(&mut self, done: u64) {
        if done >= self.next {
            eprintln!(
                "fuzz {}: {done}/{} cases, {:.0} s",
                self.name,
                self.total,
                self.start.elapsed().as_secs_f64()
            );
            self.next = self.next.saturating_add(self.step);
        }
    }

    /// Prints the final count, the time and `extra` details.
    pub fn finish(&self, done: u64, extra: &str) {
        let s = self.start.elapsed().as_secs_f64();
        eprintln!(
            "fuzz {}: {done} cases in {s:.1} s ({:.0} cases/s){extra}",
            self.name,
            done as f64 / s.max(1e-9)
        );
    }
}

struct WatchState {
    name: &'static str,
    limit: Duration,
    /// The limit of the current call, in nanoseconds (`limit` unless `call_with_limit`).
    call_limit_ns: AtomicU64,
    base: Instant,
    /// Nanoseconds since `base` (plus one) when the current call started; 0 when idle.
    started: AtomicU64,
    /// Time the current call has run while the process was scheduled, as the watchdog's own
    /// wake-ups see it (each wake-up credits at most two ticks).
    awake_ns: AtomicU64,
    /// Calls over the limit in wall time but not in awake time.
    starved: AtomicU64,
    max_ns: AtomicU64,
    calls: AtomicU64,
    over_2s: AtomicU64,
    input: Mutex<String>,
    recent: Mutex<VecDeque<String>>,
    done: AtomicBool,
}

impl WatchState {
    fn now_ns(&self) -> u64 {
        self.base.elapsed().as_nanos() as u64 + 1
    }
}

/// How often the watchdog wakes up.
fn tick_of(limit: Duration) -> Duration {
    (limit / 20).clamp(Duration::from_millis(5), Duration::from_millis(100))
}

/// Times every call it runs. A call that has not returned after the limit ends the whole test
/// process with a message (a hang cannot be interrupted otherwise); one that returned late
/// fails the test. Time when the whole process was not scheduled (seen as late wake-ups of the
/// watchdog thread, on an overloaded machine or under `nice`) does not count.
pub struct Watchdog {
    state: Arc<WatchState>,
}

impl Watchdog {
    /// A watchdog for target `name` with the limit from `hang_limit`.
    pub fn new(name: &'static str) -> Watchdog {
        let state = Arc::new(WatchState {
            name,
            limit: hang_limit(),
            call_limit_ns: AtomicU64::new(hang_limit().as_nanos() as u64),
            base: Instant::now(),
            started: AtomicU64::new(0),
            awake_ns: AtomicU64::new(0),
            starved: AtomicU64::new(0),
            max_ns: AtomicU64::new(0),
            calls: AtomicU64::new(0),
            over_2s: AtomicU64::new(0),
            input: Mutex::new(String::new()),
            recent: Mutex::new(VecDeque::new()),
            done: AtomicBool::new(false),
        });
        let s = state.clone();
        std::thread::Builder::new()
            .name(format!("watchdog-{name}"))
            .spawn(move || {
                let tick = tick_of(s.limit);
                let tick_ns = tick.as_nanos() as u64;
                let mut last = s.now_ns();
                while !s.done.load(Ordering::Relaxed) {
                    std::thread::sleep(tick);
                    let now = s.now_ns();
                    let interval = now - last;
                    last = now;
                    let started = s.started.load(Ordering::Acquire);
                    if started == 0 {
                        continue;
                    }
                    // A wake-up much later than asked means the whole process was not
                    // scheduled (an overloaded machine, `nice`): that time does not count.
                    let credit = interval.min(2 * tick_ns).min(now.saturating_sub(started));
                    let awake = s.awake_ns.fetch_add(credit, Ordering::AcqRel) + credit;
                    let limit_ns = s.call_limit_ns.load(Ordering::Acquire);
                    if awake > limit_ns {
                        let input = s.input.lock().map(|i| i.clone()).unwrap_or_default();
                        let recent = s.recent.lock().map(|r| r.clone()).unwrap_or_default();
                        eprintln!(
                            "\nHANG in fuzz {}: a call has not returned after {} ms (limit {} ms, \
                             {} ms of it while the process was scheduled)\n\
                             input: {input:?}\nrecent inputs, oldest first:",
                            s.name,
                            now.saturating_sub(started) / 1_000_000,
                            limit_ns / 1_000_000,
                            awake / 1_000_000
                        );
                        for r in recent {
                            eprintln!("  {r:?}");
                        }
                        std::process::exit(70);
                    }
                }
            })
            .expect("spawn watchdog");
        Watchdog { state }
    }

    /// Runs `f`, which processes `input`, under the watchdog.
    pub fn call<R>(&self, input: &str, f: impl FnOnce() -> R) -> R {
        self.call_with_limit(input, self.state.limit, f)
    }

    /// Runs `f` under the watchdog with a limit of its own.
    pub fn call_with_limit<R>(&self, input: &str, limit: Duration, f: impl FnOnce() -> R) -> R {
        let s = &self.state;
        s.call_limit_ns.store(limit.as_nanos() as u64, Ordering::Release);
        if let Ok(mut i) = s.input.lock() {
            i.clear();
            i.push_str(&clip(input, 2000));
        }
        let t0 = s.now_ns();
        s.awake_ns.store(0, Ordering::Release);
        s.started.store(t0, Ordering::Release);
        let r = f();
        let took = s.now_ns() - t0;
        s.started.store(0, Ordering::Release);
        let awake = s.awake_ns.load(Ordering::Acquire);
        s.max_ns.fetch_max(took, Ordering::Relaxed);
        s.calls.fetch_add(1, Ordering::Relaxed);
        if took > 2_000_000_000 {
            s.over_2s.fetch_add(1, Ordering::Relaxed);
        }
        // Over the limit in wall time: a failure unless the watchdog saw the process starved
        // for most of it (it credits whole ticks, so allow two more).
        let awake_bound = Duration::from_nanos(awake) + 2 * tick_of(s.limit);
        if Duration::from_nanos(took) > limit && awake_bound <= limit {
            s.starved.fetch_add(1, Ordering::Relaxed);
        } else if Duration::from_nanos(took) > limit {
            panic!(
                "fuzz {}: a call took {} ms (limit {} ms); input: {:?}",
                s.name,
                took / 1_000_000,
                limit.as_millis(),
                clip(input, 500)
            );
        }
        r
    }

    /// Remembers `line` among the recent inputs shown when a call hangs.
    pub fn note(&self, line: &str) {
        if let Ok(mut r) = self.state.recent.lock() {
            r.push_back(clip(line, 300));
            if r.len() > 30 {
                r.pop_front();
            }
        }
    }

    /// The slowest call so far, in milliseconds.
    pub fn max_ms(&self) -> f64 {
        self.state.max_ns.load(Ordering::Relaxed) as f64 / 1e6
    }

    /// Calls that took over 2 s (only possible with `MADHOUSE_FUZZ_HANG_MS` above 2000).
    pub fn over_2s(&self) -> u64 {
        self.state.over_2s.load(Ordering::Relaxed)
    }

    /// Calls that took longer than the limit only because the process was starved.
    pub fn starved(&self) -> u64 {
        self.state.starved.load(Ordering::Relaxed)
    }

    /// Calls made so far.
    pub fn calls(&self) -> u64 {
        self.state.calls.load(Ordering::Relaxed)
    }
}

impl Drop for Watchdog {
    fn drop(&mut self) {
        self.state.done.store(true, Ordering::Relaxed);
    }
}

/// A random game: its start, the moves and every position (`positions[i]` is before
/// `moves[i]`).
pub struct Sample {
    /// The rule set.
    pub variant: Variant,
    /// Does the game start from the variant's initial position (`position startpos`)?
    pub from_startpos: bool,
    /// Moves played.
    pub moves: Vec<Move>,
    /// Positions, the start first; one more than `moves`.
    pub positions: Vec<Position>,
}

impl Sample {
    /// The start position.
    pub fn start(&self) -> &Position {
        &self.positions[0]
    }
}

/// Random games from the initial positions and the perft suite, in every variant.
pub struct Pool {
    /// All games.
    pub samples: Vec<Sample>,
}

fn random_game(start: &Position, from_startpos: bool, plies: usize, rng: &mut Rng) -> Sample {
    let mut positions = vec![start.clone()];
    let mut moves = Vec::new();
    let mut pos = start.clone();
    for _ in 0..plies {
        let legal: Vec<Move> = pos.legal_moves().iter().copied().collect();
        let Some(m) = choose(&pos, &legal, rng) else { break };
        pos = pos.after(m);
        moves.push(m);
        positions.push(pos.clone());
    }
    Sample { variant: start.variant(), from_startpos, moves, positions }
}

impl Pool {
    /// The pool, built once per process (a fixed seed: the same games in every run).
    pub fn get() -> &'static Pool {
        static POOL: OnceLock<Pool> = OnceLock::new();
        POOL.get_or_init(|| {
            let mut rng = Rng::new(0x9001);
            let mut samples = Vec::new();
            for v in Variant::ALL {
                let starts = start_positions(v);
                for i in 0..30 {
                    let plies = [8, 30, 60, 120, 420][i % 5];
                    samples.push(random_game(&starts[0], true, plies, &mut rng));
                }
                for s in starts.iter().skip(1).step_by(2) {
                    let plies = rng.below(40);
                    samples.push(random_game(s, false, plies, &mut rng));
                }
            }
            Pool { samples }
        })
    }

    /// A random game.
    pub fn sample(&self, rng: &mut Rng) -> &Sample {
        &self.samples[rng.below(self.samples.len())]
    }

    /// A random game, of `variant` three times out of four.
    pub fn sample_for(&self, variant: Variant, rng: &mut Rng) -> &Sample {
        for _ in 0..20 {
            let s = self.sample(rng);
            if s.variant == variant || rng.chance(1, 4) {
                return s;
            }
        }
        self.sample(rng)
    }

    /// A random position from a random game.
    pub fn position(&self, rng: &mut Rng) -> &Position {
        let s = self.sample(rng);
        &s.positions[rng.below(s.positions.len())]
    }
}

/// The FEN dialects the reader accepts.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub enum Dialect {
    /// `board[pocket] w KQkq - 0 1` (XBoard, cutechess, python-chess, FSF).
    Bracket,
    /// `board [pocket] w ...`: a space before the bracket.
    BracketSpaced,
    /// `board/pocket w ...` (Lichess, PyChess).
    Slash,
    /// `board w KQkq - 0 1 pocket promoted-squares`, no `~` (Chess.com).
    Chesscom,
}

impl Dialect {
    /// Every dialect.
    pub const ALL: [Dialect; 4] =
        [Dialect::Bracket, Dialect::BracketSpaced, Dialect::Slash, Dialect::Chesscom];
}

/// A FEN written by `write_fen`, and whether its move counters were written.
pub struct WrittenFen {
    /// The text.
    pub text: String,
    /// The dialect.
    pub dialect: Dialect,
    /// Are the halfmove and fullmove counters in it (else they read as `0 1`)?
    pub counters: bool,
}

fn shuffle<T>(v: &mut [T], rng: &mut Rng) {
    for i in (1..v.len()).rev() {
        let j = rng.below(i + 1);
        v.swap(i, j);
    }
}

/// Pocket letters in a random order, runs written as letters or as counts (`2P`).
fn pocket_text(pos: &Position, rng: &mut Rng) -> String {
    let mut items: Vec<(char, u8)> = Vec::new();
    for c in [Color::White, Color::Black] {
        for r in Role::DROPPABLE {
            let n = pos.hand(c).count(r);
            if n > 0 {
                let letter = if c == Color::White { r.upper_char() } else { r.char() };
                items.push((letter, n));
            }
        }
    }
    if rng.chance(1, 2) {
        shuffle(&mut items, rng);
    }
    let mut s = String::new();
    for (letter, n) in items {
        if n >= 2 && rng.chance(1, 3) {
            s.push_str(&n.to_string());
            s.push(letter);
        } else {
            for _ in 0..n {
                s.push(letter);
            }
        }
    }
    s
}

fn sep(rng: &mut Rng) -> &'static str {
    match rng.below(12) {
        0 => "  ",
        1 => "\t",
        2 => " \t ",
        _ => " ",
    }
}

/// `pos` as a FEN in `dialect`, with random but equivalent choices: pocket order and counts,
/// `[]` or `[-]`, upper-case side letter, omitted default fields, odd whitespace.
pub fn write_fen_in(pos: &Position, dialect: Dialect, rng: &mut Rng) -> WrittenFen {
    let pocket = pocket_text(pos, rng);
    let side = match (pos.turn(), rng.chance(1, 10)) {
        (Color::White, false) => "w",
        (Color::White, true) => "W",
        (Color::Black, false) => "b",
        (Color::Black, true) => "B",
    };
    let castling = pos.castling().fen();
    let ep = pos.ep_square().map_or("-".to_string(), |s| s.to_string());
    let counters = [pos.halfmoves().to_string(), pos.fullmoves().to_string()];
    let mut fields: Vec<String> = Vec::new();
    let mut with_counters = true;
    match dialect {
        Dialect::Bracket | Dialect::BracketSpaced | Dialect::Slash => {
            let open = match dialect {
                Dialect::Bracket => "[",
                Dialect::BracketSpaced => " [",
                _ => "/",
            };
            let close = if dialect == Dialect::Slash { "" } else { "]" };
            let pocket = if pocket.is_empty() && close == "]" && rng.chance(1, 2) {
                "-".into()
            } else {
                pocket
            };
            fields.push(format!("{}{open}{pocket}{close}", pos.board_fen()));
            fields.push(side.into());
            fields.push(castling.clone());
            fields.push(ep.clone());
            fields.extend(counters.iter().cloned());
            if rng.chance(1, 4) {
                // Drop trailing fields that are at their defaults.
                with_counters = false;
                fields.truncate(4);
                if ep == "-" && rng.chance(1, 2) {
                    fields.truncate(3);
                    if castling == "-" && rng.chance(1, 2) {
                        fields.truncate(2);
                        if pos.turn() == Color::White && rng.chance(1, 2) {
                            fields.truncate(1);
                        }
                    }
                }
            }
        }
        Dialect::Chesscom => {
            fields.push(pos.board_fen().replace('~', ""));
            fields.push(side.into());
            fields.push(castling);
            fields.push(ep);
            fields.extend(counters.iter().cloned());
            let promoted: Vec<String> = pos.promoted().map(|s| s.to_string()).collect();
            if !pocket.is_empty() || !promoted.is_empty() {
                fields.push(if pocket.is_empty() { "-".into() } else { pocket });
            }
            if !promoted.is_empty() {
                if promoted.len() <= 4 && rng.chance(1, 2) {
                    fields.extend(promoted);
                } else {
                    fields.push(promoted.join(","));
                }
            }
        }
    }
    let mut text = String::new();
    for (i, f) in fields.iter().enumerate() {
        if i > 0 {
            text.push_str(sep(rng));
        }
        text.push_str(f);
    }
    WrittenFen { text, dialect, counters: with_counters }
}

/// `pos` as a FEN in a random dialect.
pub fn write_fen(pos: &Position, rng: &mut Rng) -> WrittenFen {
    let d = Dialect::ALL[rng.below(Dialect::ALL.len())];
    write_fen_in(pos, d, rng)
}

/// The first four fields of a six-field FEN (everything but the move counters).
pub fn without_counters(fen: &str) -> String {
    fen.split(' ').take(4).collect::<Vec<_>>().join(" ")
}

/// Characters FEN and move text are made of, plus separators and look-alikes.
pub const FEN_ALPHABET: &[char] = &[
    'p', 'n', 'b', 'r', 'q', 'k', 'P', 'N', 'B', 'R', 'Q', 'K', '1', '2', '3', '4', '5', '6', '7',
    '8', '9', '0', '/', '/', '[', ']', '~', '-', ' ', ' ', 'w', 'b', 'a', 'c', 'd', 'e', 'f', 'g',
    'h', 'W', 'B', ',', '@', 'x', '=', '+', '#',
];

/// Characters of coordinate and SAN moves, plus neighbours.
pub const MOVE_ALPHABET: &[char] = &[
    'a', 'b', 'c', 'd', 'e', 'f', 'g', 'h', 'i', '1', '2', '3', '4', '5', '6', '7', '8', '9', '0',
    'P', 'N', 'B', 'R', 'Q', 'K', 'p', 'n', 'b', 'r', 'q', 'k', '@', 'x', '=', '+', '#', '-', 'O',
    'o', '!', '?', ' ', '~',
];

/// Numbers that stress parsing: overflow at every width, signs, floats, leading zeros.
pub const NUMBERS: &[&str] = &[
    "99999999999999999999",
    "18446744073709551615",
    "18446744073709551616",
    "9223372036854775807",
    "9223372036854775808",
    "-9223372036854775808",
    "4294967295",
    "4294967296",
    "2147483648",
    "65536",
    "65535",
    "-1",
    "-0",
    "+1",
    "0",
    "00000000000000000000000000007",
    "1e9",
    "1e400",
    "1.5",
    "-0.0",
    "NaN",
    "inf",
    "-inf",
    "0x10",
];

/// Tokens that stress text handling: control and invisible characters, non-ASCII digits and
/// letters, and words with a meaning in the protocols.
pub const NASTY: &[&str] = &[
    "",
    " ",
    "\t",
    "\r",
    "\u{0}",
    "\u{7f}",
    "\u{1b}[2J",
    "é",
    "♞",
    "\u{202e}",
    "\u{a0}",
    "\u{3000}",
    "\u{feff}",
    "😀",
    "\u{10ffff}",
    "𝟙",
    "٣",
    "Ⅷ",
    "０",
    "[",
    "]",
    "[]",
    "[-]",
    "/",
    "~",
    "@",
    "-",
    "moves",
    "fen",
    "startpos",
    "name",
    "value",
    "searchmoves",
    "infinite",
    "ponder",
];

/// A nasty token or number.
pub fn nasty(rng: &mut Rng) -> &'static str {
    if rng.chance(1, 2) {
        NUMBERS[rng.below(NUMBERS.len())]
    } else {
        NASTY[rng.below(NASTY.len())]
    }
}

/// A random Unicode scalar value (often outside the BMP or a control character).
pub fn any_char(rng: &mut Rng) -> char {
    loop {
        let v = match rng.below(4) {
            0 => rng.below(0x80) as u32,
            1 => rng.below(0x800) as u32,
            2 => rng.below(0x10000) as u32,
            _ => rng.below(0x110000) as u32,
        };
        if let Some(c) = char::from_u32(v) {
            return c;
        }
    }
}

fn pick_char(rng: &mut Rng, alphabet: &[char]) -> char {
    if rng.chance(1, 10) {
        any_char(rng)
    } else {
        alphabet[rng.below(alphabet.len())]
    }
}

/// A random string of up to `max_len` characters, mostly from `alphabet`.
pub fn random_text(rng: &mut Rng, alphabet: &[char], max_len: usize) -> String {
    let n = rng.below(max_len + 1);
    (0..n).map(|_| pick_char(rng, alphabet)).collect()
}

/// `s` after one to four random edits: character insert, delete, replace, swap, case flip;
/// slice duplication and removal; token shuffle, drop and duplication; nasty tokens and huge
/// numbers inserted or replacing numbers; truncation and repetition.
pub fn mutate(s: &str, rng: &mut Rng, alphabet: &[char]) -> String {
    let mut c: Vec<char> = s.chars().collect();
    let ops = 1 + rng.below(4);
    for _ in 0..ops {
        let n = c.len();
        match rng.below(16) {
            0 | 1 => {
                let at = rng.below(n + 1);
                c.insert(at, pick_char(rng, alphabet));
            }
            2 | 3 if n > 0 => {
                c.remove(rng.below(n));
            }
            4 | 5 if n > 0 => {
                let at = rng.below(n);
                c[at] = pick_char(rng, alphabet);
            }
            6 if n > 1 => {
                let at = rng.below(n - 1);
                c.swap(at, at + 1);
            }
            7 if n > 0 => {
                let at = rng.below(n);
                let flipped: Vec<char> = if c[at].is_uppercase() {
                    c[at].to_lowercase().collect()
                } else {
                    c[at].to_uppercase().collect()
                };
                c.splice(at..at + 1, flipped);
            }
            8 if n > 0 => {
                let a = rng.below(n);
                let b = (a + 1 + rng.below(8)).min(n);
                let piece: Vec<char> = c[a..b].to_vec();
                let at = rng.below(n + 1);
                c.splice(at..at, piece);
            }
            9 if n > 0 => {
                let a = rng.below(n);
                let b = (a + 1 + rng.below(8)).min(n);
                c.drain(a..b);
            }
            10 | 11 => {
                let text: String = c.iter().collect();
                let mut toks: Vec<String> = text.split(' ').map(str::to_string).collect();
                match rng.below(4) {
                    0 => shuffle(&mut toks, rng),
                    1 if !toks.is_empty() => {
                        toks.remove(rng.below(toks.len()));
                    }
                    2 if !toks.is_empty() => {
                        let t = toks[rng.below(toks.len())].clone();
                        let at = rng.below(toks.len() + 1);
                        toks.insert(at, t);
                    }
                    _ => {
                        let at = rng.below(toks.len() + 1);
                        toks.insert(at, nasty(rng).to_string());
                    }
                }
                c = toks.join(" ").chars().collect();
            }
            12 => {
                // Replace a run of digits with a nasty number.
                let digits: Vec<usize> = (0..n).filter(|&i| c[i].is_ascii_digit()).collect();
                if let Some(&start) = digits.get(rng.below(digits.len().max(1))) {
                    let mut end = start;
                    while end < n && c[end].is_ascii_digit() {
                        end += 1;
                    }
                    let t = NUMBERS[rng.below(NUMBERS.len())];
                    c.splice(start..end, t.chars());
                }
            }
            13 if n > 0 => c.truncate(rng.below(n)),
            14 if n > 0 && n < 4000 => {
                let copy = c.clone();
                let most = if rng.chance(1, 20) { 40 } else { 3 };
                let times = 1 + rng.below(most);
                for _ in 0..times {
                    c.push(if rng.chance(1, 2) { ' ' } else { '/' });
                    c.extend_from_slice(&copy);
                }
            }
            _ => {
                let at = rng.below(n + 1);
                c.splice(at..at, nasty(rng).chars());
            }
        }
    }
    c.into_iter().collect()
}
