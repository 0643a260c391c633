//! Fuzz and property tests for everything that reads text from outside the engine: the FEN
//! reader in every dialect, move parsing (`parse_uci`, `parse_san`), and the UCI and XBoard
//! command handlers, driven in-process through `Uci::handle` and `Xboard::handle`.
//!
//! ```text
//! cargo test --release --test fuzz                                # small default, ~10 s
//! MADHOUSE_FUZZ_CASES=1000000 cargo test --release --test fuzz -- --nocapture
//! MADHOUSE_FUZZ_CASES=1000000 cargo test --release --test fuzz uci_handler -- --nocapture
//! MADHOUSE_FUZZ_SEED=0x1234 cargo test --test fuzz    # test profile: overflow checks on
//! ```
//!
//! A million cases of the FEN and move targets took, on two cores: `fen_mutations` 9 s,
//! `fen_dialects` 19 s, `move_parsing` 3 min. A handler case is several command lines: 160 000
//! UCI cases (a million lines) take about 3 min, 150 000 XBoard cases (1.3 million lines) 1 min.
//!
//! Settings (environment):
//! - `MADHOUSE_FUZZ_CASES`: cases per target (defaults below keep the file near 10 s);
//! - `MADHOUSE_FUZZ_SEED`: the seed (decimal or `0x` hex); each run prints it;
//! - `MADHOUSE_FUZZ_HANG_MS`: the longest a single call may take (default 2000 ms; time when
//!   the process was not scheduled at all, on an overloaded machine, does not count); a call
//!   that does not return ends the process with the input that hung;
//! - `MADHOUSE_FUZZ_SEARCH_MS`: the longest a `depth 1` search may run, or take to end after
//!   `stop` (default 5 s);
//! - `MADHOUSE_FUZZ_INPROC=1`: run the handler targets in this process instead of a child.
//!
//! Targets, each printing its case count and time on stderr:
//! - `fen_dialects`: positions from random games written in every dialect (brackets with or
//!   without a space, `[]`/`[-]`, Lichess's ninth rank, Chess.com's trailing pocket and
//!   promoted squares; random pocket order, `2P` counts, omitted default fields, odd
//!   whitespace) read back as the same position;
//! - `fen_mutations`: valid FENs in every dialect after random edits (characters, tokens,
//!   huge numbers, Unicode), and random text: no panic, and an accepted FEN gives a position
//!   whose own FEN reads back identically, whose key is consistent and whose moves can be
//!   played, with FENs that read back too;
//! - `move_parsing`: every legal move in every spelling the parsers accept reads back as
//!   itself; random and mutated move text never panics, and whatever is accepted is legal and
//!   one of the move's accepted spellings;
//! - `uci_handler` and `xboard_handler`: random command lines from a grammar of the real
//!   commands (with real positions, FENs and moves) mixed with garbage and mutations. Searches
//!   are kept tiny (`go` gets `depth 1`, XBoard gets `sd 1`, `analyze` is followed by `exit`,
//!   hash and thread counts are capped). After every command the handler's position must be
//!   what the command implies: unchanged after a refused or unrelated command, the new
//!   position after an accepted one (a model of the game tracks moves, `undo`, `setboard`,
//!   `holding`, reading FENs and pockets with its own independent reader, `fuzzkit::model`,
//!   never the engine's parsers); an engine move must be one legal move. Over UCI every
//!   `bestmove` must be legal in the position its `go` searched and every `info` line must
//!   parse as python-chess reads it, with a legal PV (`check_uci_stdout`). After every case
//!   the handler must still work: searches stop, `position startpos moves e2e4` (`new`,
//!   `usermove e2e4`) applies, and a search started then ends on its own.
//!
//! The handler targets run in a child process (this test binary, re-run on the ignored
//! `*_child` test): the handlers print every reply, which would flood the terminal, or fill
//! memory when the test harness captures it on long runs. The UCI child's stdout is read and
//! checked line by line by the parent; the XBoard child's is discarded (its engine moves are
//! checked in process, through `search_done`).

mod common;
mod fuzzkit;
mod proto;

use std::collections::VecDeque;
use std::io::{BufRead, BufReader};
use std::panic::{catch_unwind, AssertUnwindSafe};
use std::process::{Command, Stdio};
use std::sync::mpsc::{channel, Receiver, Sender};
use std::time::{Duration, Instant};

use common::Rng;
use fuzzkit::model::{self, ModelPosition};
use fuzzkit::{
    cases, clip, hang_limit, mutate, nasty, random_text, search_limit, seed, without_counters,
    write_fen, write_fen_in, Dialect, Pool, Progress, Watchdog, FEN_ALPHABET, MOVE_ALPHABET,
    NUMBERS,
};
use madhouse::core::fen::parse_setup;
use madhouse::core::Game;
use madhouse::core::{Move, Position, Square, Variant};
use madhouse::protocol::uci::Uci;
use madhouse::protocol::xboard::Xboard;
use madhouse::protocol::Event;

// ---------------------------------------------------------------------------------------
// FEN reader
// ---------------------------------------------------------------------------------------

/// Checks an accepted position: its FEN reads back identically, its key matches a fresh
/// computation, and a few of its moves parse back and lead to positions whose FENs read back.
fn check_position(p: &Position, rng: &mut Rng) -> Result<(), String> {
    let v = p.variant();
    let f = p.fen();
    let q = Position::from_fen(&f, v).map_err(|e| format!("its FEN {f:?} is refused: {e}"))?;
    if q != *p || q.fen() != f {
        return Err(format!("its FEN {f:?} reads back as {:?}", q.fen()));
    }
    if p.key() != p.compute_key() {
        return Err(format!("incremental and computed keys differ for {f}"));
    }
    let moves: Vec<Move> = p.legal_moves().iter().copied().collect();
    for _ in 0..moves.len().min(4) {
        let m = moves[rng.below(moves.len())];
        if p.parse_uci(&m.to_string()) != Ok(m) {
            return Err(format!("legal move {m} does not parse back in {f}"));
        }
        let a = p.after(m);
        let af = a.fen();
        match Position::from_fen(&af, v) {
            Ok(b) if b == a => {}
            Ok(b) => return Err(format!("after {m} in {f}: {af:?} reads back as {:?}", b.fen())),
            Err(e) => return Err(format!("after {m} in {f}: the FEN {af:?} is refused: {e}")),
        }
        if a.key() != a.compute_key() {
            return Err(format!("after {m} in {f}: incremental and computed keys differ"));
        }
    }
    Ok(())
}

/// Reads `input` as a FEN; true if accepted (and then checked with `check_position`).
fn check_fen_text(input: &str, v: Variant, rng: &mut Rng) -> Result<bool, String> {
    let setup = parse_setup(input);
    let parsed = Position::from_fen(input, v);
    if let (Err(e), Ok(_)) = (&setup, &parsed) {
        return Err(format!("parse_setup refuses ({e}) what from_fen accepts"));
    }
    match parsed {
        Ok(p) => check_position(&p, rng).map(|()| true),
        Err(_) => Ok(false),
    }
}

#[test]
fn fen_dialects() {
    let n = cases(4_000);
    let pool = Pool::get();
    let dog = Watchdog::new("fen_dialects");
    let mut rng = Rng::new(seed() ^ 0xd1a1);
    let mut progress = Progress::new("fen_dialects", n);
    let mut read = [0u64; 4];
    for case in 0..n {
        let pos = pool.position(&mut rng);
        let v = pos.variant();
        for (i, &d) in Dialect::ALL.iter().enumerate() {
            let w = write_fen_in(pos, d, &mut rng);
            let got = dog.call(&w.text, || Position::from_fen(&w.text, v)).unwrap_or_else(|e| {
                panic!(
                    "fuzz fen_dialects case {case}: {:?} ({d:?}, {v}) refused: {e}\n\
                     written from {}",
                    w.text,
                    pos.fen()
                )
            });
            let (a, b) = if w.counters {
                (got.fen(), pos.fen())
            } else {
                (without_counters(&got.fen()), without_counters(&pos.fen()))
            };
            assert_eq!(a, b, "fuzz fen_dialects case {case}: {:?} ({d:?}, {v})", w.text);
            if w.counters {
                assert!(got == *pos, "fuzz fen_dialects case {case}: {:?} ({d:?})", w.text);
            }
            read[i] += 1;
        }
        progress.tick(case + 1);
    }
    progress.finish(
        n,
        &format!(
            ", FENs read per dialect (bracket, spaced bracket, slash, chess.com): {read:?}, \
             slowest {:.2} ms",
            dog.max_ms()
        ),
    );
}

#[test]
fn fen_mutations() {
    let n = cases(25_000);
    let pool = Pool::get();
    let dog = Watchdog::new("fen_mutations");
    let mut rng = Rng::new(seed() ^ 0xfe17);
    let mut progress = Progress::new("fen_mutations", n);
    let mut accepted = 0u64;
    for case in 0..n {
        let input = match rng.below(20) {
            0 => random_text(&mut rng, FEN_ALPHABET, 90),
            1 => {
                let w = write_fen(pool.position(&mut rng), &mut rng);
                w.text
            }
            _ => {
                let w = write_fen(pool.position(&mut rng), &mut rng);
                mutate(&w.text, &mut rng, FEN_ALPHABET)
            }
        };
        let v = Variant::ALL[rng.below(3)];
        let ok = dog.call(&input, || check_fen_text(&input, v, &mut rng)).unwrap_or_else(|e| {
            panic!(
                "fuzz fen_mutations case {case} (seed {:#x}): {e}\ninput ({v}): {input:?}",
                seed()
            )
        });
        accepted += ok as u64;
        progress.tick(case + 1);
    }
    progress.finish(n, &format!(", {accepted} accepted, slowest {:.2} ms", dog.max_ms()));
}

// ---------------------------------------------------------------------------------------
// Move parsing
// ---------------------------------------------------------------------------------------

/// The rook's corner for a castling move: what king-takes-rook notation (`e1h1`) names.
fn castle_rook_text(m: Move) -> String {
    let file = if m.to().file().index() > m.from().file().index() { 'h' } else { 'a' };
    format!("{}{}{}", m.from(), file, m.from().rank().char())
}

/// Every coordinate spelling `parse_uci` should accept for `m`.
fn uci_spellings(m: Move) -> Vec<String> {
    let canonical = m.to_string();
    let mut v = vec![canonical.clone()];
    if m.is_drop() {
        v.push(canonical.to_ascii_lowercase());
    }
    if m.promotion_role().is_some() {
        v.push(format!("{}{}", &canonical[..4], canonical[4..].to_ascii_uppercase()));
    }
    if m.is_castle() {
        v.push(castle_rook_text(m));
    }
    v
}

fn check_spellings(pos: &Position, m: Move) -> Result<(), String> {
    for t in uci_spellings(m) {
        for text in [t.clone(), format!(" {t}\t")] {
            if pos.parse_uci(&text) != Ok(m) {
                return Err(format!("parse_uci({text:?}) is {:?}, not {m}", pos.parse_uci(&text)));
            }
            if pos.parse_san(&text) != Ok(m) {
                return Err(format!("parse_san({text:?}) is {:?}, not {m}", pos.parse_san(&text)));
            }
        }
    }
    let san = pos.san(m);
    let bare = san.trim_end_matches(['+', '#']).to_string();
    let mut sans =
        vec![san.clone(), bare.clone(), format!("{bare}+"), format!("{san}!"), format!("{san}?!")];
    if bare.contains('=') {
        sans.push(bare.replace('=', ""));
    }
    if bare.starts_with("O-O") {
        sans.push(bare.replace('O', "0"));
    }
    for text in sans {
        if pos.parse_san(&text) != Ok(m) {
            return Err(format!("parse_san({text:?}) is {:?}, not {m}", pos.parse_san(&text)));
        }
    }
    Ok(())
}

fn check_move_text(pos: &Position, legal: &[Move], text: &str) -> Result<(), String> {
    if let Ok(m) = pos.parse_uci(text) {
        if !legal.contains(&m) {
            return Err(format!("parse_uci({text:?}) gave {m}, which is not legal"));
        }
        if !uci_spellings(m).iter().any(|s| s == text.trim()) {
            return Err(format!("parse_uci({text:?}) gave {m}: not one of its spellings"));
        }
        if pos.parse_san(text) != Ok(m) {
            return Err(format!(
                "parse_uci({text:?}) gave {m} but parse_san {:?}",
                pos.parse_san(text)
            ));
        }
    }
    if let Ok(m) = pos.parse_san(text) {
        if !legal.contains(&m) {
            return Err(format!("parse_san({text:?}) gave {m}, which is not legal"));
        }
    }
    Ok(())
}

/// Random text shaped like a move: squares, drops, promotions; often illegal here.
fn move_like(rng: &mut Rng) -> String {
    let sq = |rng: &mut Rng| Square::new(rng.below(64) as u8).to_string();
    match rng.below(4) {
        0 => format!("{}@{}", rng.pick(&["P", "N", "B", "R", "Q", "K", "p", "", "X"]), sq(rng)),
        1 => format!("{}{}{}", sq(rng), sq(rng), rng.pick(&["q", "r", "b", "n", "k", "p", "Q"])),
        2 => format!("{}{}", rng.pick(&["N", "B", "R", "Q", "K", "", "P"]), sq(rng)),
        _ => format!("{}{}", sq(rng), sq(rng)),
    }
}

#[test]
fn move_parsing() {
    let n = cases(8_000);
    let pool = Pool::get();
    let dog = Watchdog::new("move_parsing");
    let mut rng = Rng::new(seed() ^ 0x30e5);
    let mut progress = Progress::new("move_parsing", n);
    let (mut spelled, mut texts, mut accepted) = (0u64, 0u64, 0u64);
    for case in 0..n {
        let pos = pool.position(&mut rng);
        let legal: Vec<Move> = pos.legal_moves().iter().copied().collect();
        let fail = |e: String| {
            panic!("fuzz move_parsing case {case} (seed {:#x}) in {}: {e}", seed(), pos.fen())
        };
        // Every legal move in every spelling, one case in four (the slow part); else two.
        let chosen: Vec<Move> = if case % 4 == 0 {
            legal.clone()
        } else {
            (0..legal.len().min(2)).map(|_| legal[rng.below(legal.len())]).collect()
        };
        for m in chosen {
            if let Err(e) = dog.call(&m.to_string(), || check_spellings(pos, m)) {
                fail(e);
            }
            spelled += 1;
        }
        for _ in 0..8 {
            let text = match rng.below(8) {
                0 => random_text(&mut rng, MOVE_ALPHABET, 7),
                1 => random_text(&mut rng, MOVE_ALPHABET, 40),
                2 | 3 => move_like(&mut rng),
                _ if legal.is_empty() => move_like(&mut rng),
                _ => {
                    let m = legal[rng.below(legal.len())];
                    let base = if rng.chance(1, 2) { m.to_string() } else { pos.san(m) };
                    mutate(&base, &mut rng, MOVE_ALPHABET)
                }
            };
            if let Err(e) = dog.call(&text, || check_move_text(pos, &legal, &text)) {
                fail(format!("{e} (input {text:?})"));
            }
            accepted += (pos.parse_san(&text).is_ok()) as u64;
            texts += 1;
        }
        progress.tick(case + 1);
    }
    progress.finish(
        n,
        &format!(
            ", {spelled} legal moves spelled every way, {texts} random texts ({accepted} \
             accepted as moves), slowest {:.2} ms",
            dog.max_ms()
        ),
    );
}

// ---------------------------------------------------------------------------------------
// Handler fuzzing: shared parts
// ---------------------------------------------------------------------------------------

/// Characters of garbage command lines.
const LINE_ALPHABET: &[char] = &[
    'a', 'b', 'c', 'd', 'e', 'g', 'h', 'i', 'n', 'o', 'p', 'r', 's', 't', 'u', 'v', 'x', 'z', 'A',
    'Q', 'Z', '0', '1', '2', '5', '9', ' ', ' ', ' ', '\t', '-', '=', '.', '?', '@', '[', ']', '{',
    '}', '"', '\'', '\\', '/', ':', '\r',
];

/// Reads a child's stdout, checking it with `check` (which returns a summary, or the first
/// problem); without a checker, stdout is discarded.
type StdoutCheck = fn(&mut dyn Iterator<Item = String>) -> Result<String, String>;

/// Runs this test binary on the ignored test `child` alone, with `env` added; forwards its
/// stderr lines (but `bench`'s position list) as they come and returns them with the exit
/// status and what `check` made of its stdout (discarded when `check` is `None`).
fn spawn_child(
    child: &str,
    env: &[(&str, &str)],
    check: Option<StdoutCheck>,
) -> (std::process::ExitStatus, Vec<String>, Option<Result<String, String>>) {
    let exe = std::env::current_exe().expect("the test binary's path");
    let mut proc = Command::new(exe)
        .args([child, "--exact", "--ignored", "--nocapture", "--test-threads", "1"])
        .envs(env.iter().copied())
        .stdin(Stdio::null())
        .stdout(if check.is_some() { Stdio::piped() } else { Stdio::null() })
        .stderr(Stdio::piped())
        .spawn()
        .expect("start the child test process");
    let checker = check.map(|check| {
        let stdout = proc.stdout.take().expect("child stdout");
        std::thread::spawn(move || {
            let mut lines = BufReader::new(stdout).lines().map_while(Result::ok);
            let verdict = check(&mut lines);
            // Drain the rest so that the child never blocks on a full pipe.
            lines.for_each(drop);
            verdict
        })
    });
    let stderr = proc.stderr.take().expect("child stderr");
    let mut lines = Vec::new();
    for line in BufReader::new(stderr).lines() {
        let Ok(line) = line else { break };
        if !line.starts_with("Position ") {
            eprintln!("{line}");
            lines.push(line);
        }
    }
    let status = proc.wait().expect("wait for the child test process");
    let verdict = checker.map(|t| t.join().expect("the stdout checker"));
    (status, lines, verdict)
}

/// Runs the handler fuzzer `inproc` in a child process (the ignored test `child`): the
/// handlers print every reply, which `check` reads (or which is discarded). With
/// `MADHOUSE_FUZZ_INPROC` set, runs `inproc` in this process instead, without the stdout
/// check.
fn run_in_child(child: &str, inproc: fn(), check: Option<StdoutCheck>) {
    if std::env::var_os("MADHOUSE_FUZZ_INPROC").is_some() {
        return inproc();
    }
    let env: &[(&str, &str)] = if check.is_some() { &[(MARKERS, "1")] } else { &[] };
    let (status, _, verdict) = spawn_child(child, env, check);
    assert!(status.success(), "{child} failed ({status}); its stderr is above");
    match verdict {
        Some(Ok(summary)) => eprintln!("fuzz {child}: stdout {summary}"),
        Some(Err(problem)) => panic!("{child}: the engine's output: {problem}"),
        None => {}
    }
}

/// Set in the child when its stdout is checked: it then marks where each `go` starts and ends.
const MARKERS: &str = "MADHOUSE_FUZZ_MARKERS";
/// Marker line before a `go`: `#fuzz go <variant> <FEN of the position searched>`.
const GO_MARK: &str = "#fuzz go ";
/// Marker line after the `go` line was handled.
const END_MARK: &str = "#fuzz end";

/// Checks the UCI fuzzer's stdout: every `info` line (not `info string`) parses as
/// python-chess reads it and its PV is legal, and every `bestmove` is legal (and its ponder
/// move after it), `(none)` exactly when there is no legal move, in the position of the
/// search it ends. Searches end in the order they start (a search starts only after the
/// previous one delivered), so a queue of started searches pairs each `bestmove` with its
/// `go`; a `go` refused as "already searching", or a `go perft`, starts none.
fn check_uci_stdout(lines: &mut dyn Iterator<Item = String>) -> Result<String, String> {
    struct Pending {
        pos: Position,
        refused: bool,
        perft: bool,
        answered: bool,
    }
    let mut started: VecDeque<Position> = VecDeque::new();
    let mut pending: Option<Pending> = None;
    let mut recent: VecDeque<String> = VecDeque::new();
    let (mut infos, mut bestmoves) = (0u64, 0u64);
    let mut check_line = |l: &str,
                          started: &mut VecDeque<Position>,
                          pending: &mut Option<Pending>|
     -> Result<(), String> {
        if let Some(rest) = l.strip_prefix(GO_MARK) {
            let (v, fen) = rest.split_once(' ').ok_or("bad go marker")?;
            let v: Variant =
                v.parse().map_err(|e: madhouse::core::variant::UnknownVariant| e.to_string())?;
            let pos = Position::from_fen(fen, v).map_err(|e| e.to_string())?;
            *pending = Some(Pending { pos, refused: false, perft: false, answered: false });
        } else if l == END_MARK {
            let p = pending.take().ok_or("an end marker without a go")?;
            match (p.refused || p.perft, p.answered) {
                (false, false) => started.push_back(p.pos),
                (true, true) => return Err("a bestmove for a go that started no search".into()),
                _ => {}
            }
        } else if l == "info string already searching; send stop first" {
            pending.as_mut().ok_or("'already searching' outside a go")?.refused = true;
        } else if l.starts_with("Nodes searched: ") {
            if let Some(p) = pending.as_mut() {
                p.perft = true;
            }
        } else if l.starts_with("bestmove") {
            bestmoves += 1;
            let pos = match started.pop_front() {
                Some(pos) => pos,
                None => match pending.as_mut() {
                    Some(p) if !p.answered => {
                        p.answered = true;
                        p.pos.clone()
                    }
                    _ => return Err("a bestmove with no search running".into()),
                },
            };
            let toks: Vec<&str> = l.split_whitespace().collect();
            let (best, ponder) = match toks[..] {
                ["bestmove", b] => (b, None),
                ["bestmove", b, "ponder", p] => (b, Some(p)),
                _ => return Err("a malformed bestmove line".into()),
            };
            if best == "(none)" {
                if pos.has_legal_move() {
                    return Err(format!("bestmove (none) with legal moves in {}", pos.fen()));
                }
            } else {
                let m = proto::engine_move(&pos, best).map_err(|e| format!("bestmove {e}"))?;
                if let Some(p) = ponder {
                    proto::engine_move(&pos.after(m), p).map_err(|e| format!("ponder {e}"))?;
                }
            }
        } else if l.starts_with("info ") && !l.starts_with("info string ") {
            infos += 1;
            let info = proto::InfoLine::parse(l)?;
            let pos = match (started.front(), pending.as_ref()) {
                (Some(pos), _) => pos.clone(),
                (None, Some(p)) if !p.answered => p.pos.clone(),
                _ => return Err("an info line with no search running".into()),
            };
            proto::replay(&pos, &info.pv).map_err(|e| format!("PV: {e}"))?;
        }
        Ok(())
    };
    for l in lines {
        recent.push_back(clip(&l, 300));
        if recent.len() > 30 {
            recent.pop_front();
        }
        if let Err(e) = check_line(&l, &mut started, &mut pending) {
            let shown: Vec<String> = recent.iter().map(|l| format!("  {l}")).collect();
            return Err(format!("{e}\nin: {l}\nlast lines, oldest first:\n{}", shown.join("\n")));
        }
    }
    // The final `quit` may end the process before the last search printed its `bestmove`.
    if started.len() > 1 {
        return Err(format!("{} searches never printed a bestmove", started.len()));
    }
    Ok(format!("checked: {infos} info lines, {bestmoves} bestmoves"))
}

/// The message of a caught panic.
fn panic_text(e: &Box<dyn std::any::Any + Send>) -> String {
    e.downcast_ref::<String>()
        .cloned()
        .or_else(|| e.downcast_ref::<&str>().map(|s| s.to_string()))
        .unwrap_or_else(|| "(no message)".into())
}

/// Time spent per command word, to show where a run's time goes.
#[derive(Default)]
struct Timing(std::collections::HashMap<String, (u64, Duration)>);

impl Timing {
    fn add(&mut self, line: &str, words: &[&str], took: Duration) {
        let w = line.split_whitespace().next().unwrap_or("");
        let key = if line.starts_with('(') {
            line
        } else if words.contains(&w) {
            w
        } else {
            "(other)"
        };
        let e = self.0.entry(key.to_string()).or_default();
        e.0 += 1;
        e.1 += took;
    }

    /// The commands that took the most time in all: `go 1234 calls 2.1 s, ...`.
    fn top(&self, n: usize) -> String {
        let mut v: Vec<_> = self.0.iter().collect();
        v.sort_by_key(|b| std::cmp::Reverse(b.1 .1));
        let parts: Vec<String> = v
            .iter()
            .take(n)
            .map(|(k, (c, d))| format!("{k} {c}x {:.2} s", d.as_secs_f64()))
            .collect();
        parts.join(", ")
    }
}

/// The recent lines sent, for failure messages.
struct History(VecDeque<String>);

impl History {
    fn push(&mut self, line: &str) {
        self.0.push_back(clip(line, 20_000));
        if self.0.len() > 5000 {
            self.0.pop_front();
        }
    }

    /// The last 40 lines, clipped, then where the last 5000 were saved: a file of the lines
    /// as sent, to replay into the engine (`madhouse < file`).
    fn show(&self, target: &str) -> String {
        let skip = self.0.len().saturating_sub(40);
        let mut s: String =
            self.0.iter().skip(skip).map(|l| format!("  {:?}\n", clip(l, 300))).collect();
        let name = format!("madhouse-fuzz-{target}-{}.txt", std::process::id());
        let path = std::env::temp_dir().join(name);
        let text: String = self.0.iter().map(|l| format!("{l}\n")).collect();
        if std::fs::write(&path, text).is_ok() {
            s.push_str(&format!("the full lines are in {}\n", path.display()));
        }
        s
    }
}

/// Some text for move tokens: a legal move (various spellings), a move-like string, or a
/// mutated legal move.
fn move_text(pos: &Position, rng: &mut Rng, san_too: bool) -> String {
    let legal: Vec<Move> = pos.legal_moves().iter().copied().collect();
    if legal.is_empty() || rng.chance(1, 6) {
        return move_like(rng);
    }
    let m = legal[rng.below(legal.len())];
    match rng.below(12) {
        0 => mutate(&m.to_string(), rng, MOVE_ALPHABET),
        1 => {
            let s = uci_spellings(m);
            s[rng.below(s.len())].clone()
        }
        2 | 3 if san_too => pos.san(m),
        _ => m.to_string(),
    }
}

fn garbage_line(rng: &mut Rng, words: &[&str]) -> String {
    match rng.below(10) {
        0 => String::new(),
        1 => " \t \r".into(),
        2 => {
            let n = if rng.chance(1, 10) { 100_000 } else { 5_000 };
            random_text(rng, LINE_ALPHABET, n)
        }
        3 | 4 => format!("{} {}", rng.pick(words), random_text(rng, LINE_ALPHABET, 30)),
        5 => format!("{} {}", rng.pick(words), nasty(rng)),
        _ => random_text(rng, LINE_ALPHABET, 40),
    }
}

// ---------------------------------------------------------------------------------------
// UCI handler
// ---------------------------------------------------------------------------------------

const GO_KEYS: [&str; 13] = [
    "wtime",
    "btime",
    "winc",
    "binc",
    "movestogo",
    "depth",
    "nodes",
    "mate",
    "movetime",
    "perft",
    "infinite",
    "ponder",
    "searchmoves",
];

/// UCI command words; garbage lines start with one of the first 14 (not `bench`, which
/// takes a tenth of a second, nor `quit`).
const UCI_WORDS: [&str; 16] = [
    "uci",
    "isready",
    "ucinewgame",
    "stop",
    "ponderhit",
    "position",
    "go",
    "setoption",
    "d",
    "flip",
    "debug",
    "register",
    "eval",
    "xboard",
    "bench",
    "quit",
];

/// Makes a UCI line safe to run many times: `go` gets `depth 1` (before `searchmoves`, which
/// takes the rest of the line) and perft depths of at most 2, `bench` runs at depth 1, and
/// Hash, Threads and MultiPV are capped at 64 MB, 2 and 4 (MultiPV multiplies the work of
/// every search).
fn sanitize_uci(line: &str) -> String {
    let line = line.replace('\n', " ");
    let toks: Vec<&str> = line.split_whitespace().collect();
    match toks.first() {
        Some(&"go") => {
            let mut t: Vec<String> = toks[1..].iter().map(|s| s.to_string()).collect();
            for i in 1..t.len() {
                let Ok(v) = t[i].parse::<i64>() else { continue };
                if t[i - 1] == "perft" {
                    t[i] = v.clamp(0, 2).to_string();
                }
            }
            let at = t.iter().position(|s| s == "searchmoves").unwrap_or(t.len());
            t.insert(at, "1".into());
            t.insert(at, "depth".into());
            format!("go {}", t.join(" "))
        }
        Some(&"bench") => "bench 1".into(),
        Some(&"setoption") => {
            let rest = &toks[1..];
            let name_at = rest.iter().position(|t| t.eq_ignore_ascii_case("name"));
            let value_at = rest.iter().position(|t| t.eq_ignore_ascii_case("value"));
            if let (Some(n), Some(v)) = (name_at, value_at) {
                if v > n + 1 {
                    let name = rest[n + 1..v].join(" ").to_ascii_lowercase();
                    let value = rest[v + 1..].join(" ");
                    let cap = match name.as_str() {
                        "hash" => 64,
                        "threads" => 2,
                        "multipv" => 4,
                        _ => i64::MAX,
                    };
                    if value.parse::<i64>().is_ok_and(|x| x > cap) {
                        return format!("setoption {} {cap}", rest[..=v].join(" "));
                    }
                }
            }
            line
        }
        _ => line,
    }
}

/// The FEN `position ...` must set, or `None` if the command must be refused.
fn expected_position(rest: &[&str], variant: Variant) -> Option<String> {
    let moves_at = rest.iter().position(|&t| t == "moves");
    let spec_end = moves_at.unwrap_or(rest.len());
    // The FEN as the model reads it (`fuzzkit::model`), not as the engine's parser does.
    let mut pos = match rest.first() {
        Some(&"startpos") => Game::new(variant).current().clone(),
        Some(&"fen") => {
            let m = ModelPosition::read(&rest[1..spec_end].join(" "), variant)?;
            Position::from_fen(&m.fen_sorted_pocket(), variant).expect("the model's own FEN")
        }
        _ => return None,
    };
    if let Some(m) = moves_at {
        for t in &rest[m + 1..] {
            match pos.parse_uci(t) {
                Ok(mv) => pos = pos.after(mv),
                Err(_) => return None,
            }
        }
    }
    Some(pos.fen())
}

#[derive(Default, Debug)]
struct UciStats {
    slow_searches: u64,
    slowest_search: Duration,
    lines: u64,
    positions_set: u64,
    positions_refused: u64,
    searches: u64,
    quits: u64,
}

struct UciFuzz {
    uci: Uci,
    rng: Rng,
    pool: &'static Pool,
    dog: Watchdog,
    history: History,
    case: u64,
    stats: UciStats,
    timing: Timing,
}

impl UciFuzz {
    fn fail(&self, msg: &str) -> ! {
        panic!(
            "fuzz uci_handler case {} (seed {:#x}): {msg}\nvariant {}, position {}\n\
             last lines sent, oldest first:\n{}",
            self.case,
            seed(),
            self.uci.variant(),
            self.uci.fen(),
            self.history.show("uci")
        )
    }

    fn current(&self) -> Position {
        let fen = self.uci.fen();
        Position::from_fen(&fen, self.uci.variant()).unwrap_or_else(|e| {
            self.fail(&format!("the handler's own FEN {fen:?} is refused: {e}"))
        })
    }

    fn send(&mut self, line: &str) -> bool {
        self.history.push(line);
        self.dog.note(line);
        self.stats.lines += 1;
        let limit = hang_limit();
        let uci = &mut self.uci;
        let t = Instant::now();
        let r = self
            .dog
            .call_with_limit(line, limit, || catch_unwind(AssertUnwindSafe(|| uci.handle(line))));
        self.timing.add(line, &UCI_WORDS, t.elapsed());
        r.unwrap_or_else(|e| self.fail(&format!("the handler panicked: {}", panic_text(&e))))
    }

    /// Sends `line` and checks the position it leaves.
    fn step(&mut self, line: &str) {
        let toks: Vec<&str> = line.split_whitespace().collect();
        let cmd = toks.first().copied().unwrap_or("");
        let before = self.uci.fen();
        let var_before = self.uci.variant();
        let expected = (cmd == "position").then(|| expected_position(&toks[1..], var_before));
        // For the stdout check (`check_uci_stdout`): the position this `go` searches.
        let mark = cmd == "go" && std::env::var_os(MARKERS).is_some();
        if mark {
            println!("{GO_MARK}{var_before} {}", self.current().fen());
        }
        let alive = self.send(line);
        if mark {
            println!("{END_MARK}");
        }
        if cmd == "quit" {
            if alive {
                self.fail("quit did not end the session");
            }
            // What `run` does after quit; then a new session, as a new process would be.
            self.wait_idle("after quit");
            self.uci = Uci::new();
            self.stats.quits += 1;
            return;
        }
        if !alive {
            self.fail(&format!("{line:?} ended the session"));
        }
        if cmd == "go" {
            self.stats.searches += 1;
        }
        let after = self.uci.fen();
        let var_after = self.uci.variant();
        if let Some(exp) = expected {
            match &exp {
                Some(_) => self.stats.positions_set += 1,
                None => self.stats.positions_refused += 1,
            }
            let exp = exp.unwrap_or(before);
            if after != exp || var_after != var_before {
                self.fail(&format!("after {line:?} the position is {after} instead of {exp}"));
            }
        } else if var_after != var_before {
            let start = Game::new(var_after).current().fen();
            if cmd != "setoption" || !line.to_ascii_lowercase().contains("uci_variant") {
                self.fail(&format!("{line:?} changed the variant to {var_after}"));
            }
            if after != start {
                self.fail(&format!("the variant changed but the position is {after}"));
            }
        } else if after != before {
            self.fail(&format!("{line:?} changed the position from {before} to {after}"));
        }
    }

    /// Waits until no search runs (after `stop`, or for a search that ends by itself).
    fn wait_idle(&mut self, what: &str) {
        let t = Instant::now();
        while self.uci.is_searching() {
            if t.elapsed() > search_limit() {
                self.fail(&format!(
                    "the search is still running {} ms {what}",
                    t.elapsed().as_millis()
                ));
            }
            std::thread::sleep(Duration::from_micros(200));
        }
        let took = t.elapsed();
        self.timing.add("(waiting for searches)", &[], took);
        if took > Duration::from_secs(1) {
            self.stats.slow_searches += 1;
        }
        self.stats.slowest_search = self.stats.slowest_search.max(took);
    }

    fn gen_position(&mut self) -> String {
        let variant = self.uci.variant();
        let rng = &mut self.rng;
        let s = self.pool.sample_for(variant, rng);
        let mut t: Vec<String> = vec!["position".into()];
        let startpos = (s.from_startpos && !rng.chance(1, 8)) || rng.chance(1, 12);
        if startpos {
            t.push("startpos".into());
        } else {
            t.push("fen".into());
            let w = write_fen(s.start(), rng);
            let text = if rng.chance(1, 6) { mutate(&w.text, rng, FEN_ALPHABET) } else { w.text };
            t.push(text);
        }
        let k = rng.below(s.moves.len() + 1);
        if k > 0 || rng.chance(1, 5) {
            t.push("moves".into());
            for m in &s.moves[..k] {
                // Mostly the canonical spelling, sometimes another accepted one.
                let spellings = uci_spellings(*m);
                let i = if rng.chance(1, 10) { rng.below(spellings.len()) } else { 0 };
                t.push(spellings[i].clone());
            }
        }
        match rng.below(12) {
            0 if k > 0 => {
                let i = 2 + rng.below(t.len() - 2);
                t[i] = mutate(&t[i], rng, MOVE_ALPHABET);
            }
            1 if k > 0 => {
                let i = t.len() - rng.below(k);
                t.insert(i, move_like(rng));
            }
            2 => {
                let i = 1 + rng.below(t.len());
                t.insert(i, nasty(rng).into());
            }
            3 => {
                let i = rng.below(t.len());
                t.remove(i);
            }
            _ => {}
        }
        t.join(" ")
    }

    fn gen_go(&mut self) -> String {
        let cur = self.current();
        let rng = &mut self.rng;
        let mut t: Vec<String> = vec!["go".into()];
        for _ in 0..rng.below(7) {
            let k = rng.pick(&GO_KEYS);
            t.push(k.into());
            match k {
                "infinite" | "ponder" => {}
                "searchmoves" => {
                    for _ in 0..rng.below(5) {
                        t.push(move_text(&cur, rng, false));
                    }
                    if rng.chance(1, 5) {
                        t.push("0000".into());
                    }
                }
                _ => match rng.below(10) {
                    0 => t.push(rng.pick(NUMBERS).into()),
                    1 => {}
                    2 => t.push(random_text(rng, LINE_ALPHABET, 6)),
                    _ => t.push(rng.below(5001).to_string()),
                },
            }
        }
        if rng.chance(1, 10) {
            let i = 1 + rng.below(t.len());
            t.insert(i, nasty(rng).into());
        }
        t.join(" ")
    }

    fn gen_setoption(&mut self) -> String {
        const NAMES: [&str; 17] = [
            "Threads",
            "Hash",
            "Clear Hash",
            "Ponder",
            "MultiPV",
            "Move Overhead",
            "UCI_Variant",
            "UCI_AnalyseMode",
            "UCI_ShowWDL",
            "SyzygyPath",
            "UCI_Opponent",
            "UCI_Elo",
            "UCI_LimitStrength",
            "UCI_Chess960",
            "Skill Level",
            "Skill Seed",
            "Nonsense Option",
        ];
        let rng = &mut self.rng;
        let mut name = rng.pick(&NAMES).to_string();
        match rng.below(8) {
            0 => name = name.to_ascii_lowercase(),
            1 => name = name.to_ascii_uppercase(),
            _ => {}
        }
        let value: String = match name.to_ascii_lowercase().as_str() {
            "threads" => rng.pick(&["1", "2", "0", "3", "-1"]).into(),
            // Small tables: every resize and `ucinewgame` clears the table.
            "hash" => rng.pick(&["1", "1", "2", "4", "8", "64", "0", "65537"]).into(),
            "multipv" => rng.pick(&["1", "2", "4", "500", "501", "0"]).into(),
            "move overhead" => rng.pick(&["0", "10", "100", "5000", "5001"]).into(),
            "uci_variant" => rng
                .pick(&["crazyhouse", "loop", "chessgi", "zh", "Crazyhouse", "chess", "atomic"])
                .into(),
            "syzygypath" => rng.pick(&["<empty>", "/tmp/tb", "C:\\tb dir", ""]).into(),
            "uci_opponent" => "GM 2800 computer Some Engine 1.0".into(),
            "uci_elo" => rng.below(3000).to_string(),
            "skill level" => rng.pick(&["0", "3", "19", "20", "21", "-1"]).into(),
            "skill seed" => rng.pick(&["0", "1", "2147483647", "2147483648"]).into(),
            "clear hash" => String::new(),
            _ => rng.pick(&["true", "false", "TRUE", "False", "yes", "1", ""]).into(),
        };
        let value = if rng.chance(1, 10) { nasty(rng).to_string() } else { value };
        match rng.below(10) {
            0 => format!("setoption name {name}"),
            1 => format!("setoption {name} value {value}"),
            2 => format!("setoption value {value} name {name}"),
            3 => format!("setoption  name   {name}   value   {value}  "),
            _ => format!("setoption name {name} value {value}"),
        }
    }

    fn gen_line(&mut self) -> String {
        let r = self.rng.below(1000);
        let line = match r {
            0..=1 => "quit".into(),
            2..=299 => self.gen_position(),
            300..=409 => self.gen_go(),
            410..=569 => self.gen_setoption(),
            570..=749 => {
                const SIMPLE: [&str; 13] = [
                    "uci",
                    "isready",
                    "ucinewgame",
                    "stop",
                    "ponderhit",
                    "d",
                    "flip",
                    "debug on",
                    "debug off",
                    "register later",
                    "isready",
                    "stop",
                    "ponderhit",
                ];
                match self.rng.below(2000) {
                    0 => "bench".into(),
                    1..=40 => "eval".into(),
                    _ => self.rng.pick(&SIMPLE).into(),
                }
            }
            750..=849 => garbage_line(&mut self.rng, &UCI_WORDS[..14]),
            _ => {
                let base = match self.rng.below(3) {
                    0 => self.gen_position(),
                    1 => self.gen_go(),
                    _ => self.gen_setoption(),
                };
                mutate(&base, &mut self.rng, LINE_ALPHABET)
            }
        };
        sanitize_uci(&line)
    }

    /// After a case: stop any search, then the handler must still work.
    fn end_case(&mut self) {
        self.step("stop");
        self.wait_idle("after stop");
        let v = self.uci.variant();
        self.step("position startpos moves e2e4");
        let start = Position::startpos(v);
        let want = start.after(start.parse_uci("e2e4").expect("e2e4")).fen();
        if self.uci.fen() != want {
            self.fail(&format!("position startpos moves e2e4 gave {}", self.uci.fen()));
        }
        if self.case.is_multiple_of(8) {
            self.step("go depth 1");
            self.wait_idle("after go depth 1, without stop");
        }
    }
}

fn fuzz_uci() {
    let n = cases(1_500);
    let mut f = UciFuzz {
        uci: Uci::new(),
        rng: Rng::new(seed() ^ 0x0c1),
        pool: Pool::get(),
        dog: Watchdog::new("uci_handler"),
        history: History(VecDeque::new()),
        case: 0,
        stats: UciStats::default(),
        timing: Timing::default(),
    };
    let mut progress = Progress::new("uci_handler", n);
    if std::env::var_os(MARKERS).is_some() {
        // The test harness may have printed `test uci_handler_child ... ` without a newline.
        println!();
    }
    // A small table: `ucinewgame` clears it.
    f.step("setoption name Hash value 1");
    for case in 0..n {
        f.case = case;
        for _ in 0..1 + f.rng.below(8) {
            let line = f.gen_line();
            f.step(&line);
        }
        f.end_case();
        progress.tick(case + 1);
    }
    f.step("quit");
    progress.finish(
        n,
        &format!(
            ", {} lines ({} positions set, {} refused, {} go, {} quit), slowest call {:.1} ms, \
             {} calls over 2 s (during searches), {} over the limit \
             only because the process was starved",
            f.stats.lines,
            f.stats.positions_set,
            f.stats.positions_refused,
            f.stats.searches,
            f.stats.quits,
            f.dog.max_ms(),
            f.dog.over_2s(),
            f.dog.starved()
        ),
    );
    eprintln!("fuzz uci_handler: time by command: {}", f.timing.top(6));
    eprintln!(
        "fuzz uci_handler: {} searches took over 1 s to end; the slowest {:.1} s",
        f.stats.slow_searches,
        f.stats.slowest_search.as_secs_f64()
    );
}

#[test]
fn uci_handler() {
    run_in_child("uci_handler_child", fuzz_uci, Some(check_uci_stdout));
}

#[test]
#[ignore = "run by uci_handler in a child process, which checks its stdout"]
fn uci_handler_child() {
    fuzz_uci();
}

// ---------------------------------------------------------------------------------------
// XBoard handler
// ---------------------------------------------------------------------------------------

/// The commands `Xboard::handle` knows; anything else is a move if it looks like one.
const XB_COMMANDS: &[&str] = &[
    "",
    "xboard",
    "accepted",
    "rejected",
    "random",
    "computer",
    "name",
    "rating",
    "ics",
    "draw",
    "hint",
    "bk",
    "egtpath",
    "otim",
    "post",
    "nopost",
    "hard",
    "easy",
    "variant",
    "new",
    "force",
    "go",
    "playother",
    "level",
    "st",
    "sd",
    "nps",
    "time",
    "?",
    "ping",
    "undo",
    "remove",
    "analyze",
    "exit",
    ".",
    "memory",
    "cores",
    "option",
    "result",
    "setboard",
    "holding",
    "usermove",
    "protover",
    "quit",
    "white",
    "black",
    "edit",
];

/// The handler's test for a bare move (`e2e4`, `P@e4`, `O-O`), for the must-apply check.
fn xb_looks_like_move(s: &str) -> bool {
    let b = s.as_bytes();
    (b.len() == 4 || b.len() == 5) && b[0].is_ascii_lowercase() && b[1].is_ascii_digit()
        || s.contains('@')
        || s.starts_with("O-O")
}

/// Splits a line as `Xboard::handle` does: the command, and the trimmed rest.
fn xb_split(line: &str) -> (&str, &str) {
    match line.split_once(char::is_whitespace) {
        Some((c, a)) => (c, a.trim()),
        None => (line, ""),
    }
}

/// Makes an XBoard line safe to run many times: depth 1 (`sd`, and again after `new`, which
/// clears it), hash, cores, MultiPV and the clock capped. Lines are trimmed as the stdin
/// reader trims them.
fn sanitize_xb(line: &str) -> Vec<String> {
    let line = line.replace('\n', " ").trim().to_string();
    let (cmd, arg) = xb_split(&line);
    match cmd {
        "sd" if arg.parse::<i32>().is_ok_and(|d| d >= 1) => vec!["sd 1".into()],
        "memory" if arg.parse::<usize>().is_ok_and(|m| m > 64) => vec!["memory 4".into()],
        "cores" if arg.parse::<usize>().is_ok_and(|c| c > 2) => vec!["cores 2".into()],
        "option" => {
            // MultiPV capped at 4, as for UCI.
            match arg.split_once('=') {
                Some((n, v))
                    if n.trim() == "MultiPV" && v.trim().parse::<u64>().is_ok_and(|v| v > 4) =>
                {
                    vec!["option MultiPV=4".into()]
                }
                _ => vec![line],
            }
        }
        "new" => vec![line.clone(), "sd 1".into()],
        _ => vec![line],
    }
}

#[derive(Default, Debug)]
struct XbStats {
    lines: u64,
    user_moves: u64,
    engine_moves: u64,
    setboards: u64,
    quits: u64,
}

struct XbFuzz {
    xb: Xboard,
    tx: Sender<Event>,
    rx: Receiver<Event>,
    rng: Rng,
    pool: &'static Pool,
    dog: Watchdog,
    history: History,
    case: u64,
    timing: Timing,
    /// The game as the commands so far imply it, the current position last.
    model: Vec<Position>,
    /// A `setboard` was refused: moves are refused until `new`, `variant` or `setboard`.
    bad: bool,
    /// Commands left before `exit` ends an `analyze`.
    analysis_left: Option<usize>,
    stats: XbStats,
}

impl XbFuzz {
    fn fail(&self, msg: &str) -> ! {
        panic!(
            "fuzz xboard_handler case {} (seed {:#x}): {msg}\nvariant {}, position {}\n\
             last lines sent, oldest first:\n{}",
            self.case,
            seed(),
            self.xb.variant(),
            self.xb.fen(),
            self.history.show("xboard")
        )
    }

    fn current(&self) -> Position {
        let fen = self.xb.fen();
        Position::from_fen(&fen, self.xb.variant()).unwrap_or_else(|e| {
            self.fail(&format!("the handler's own FEN {fen:?} is refused: {e}"))
        })
    }

    fn reset_model(&mut self, pos: Position) {
        self.model = vec![pos];
    }

    fn send(&mut self, line: &str) -> bool {
        self.history.push(line);
        self.dog.note(line);
        self.stats.lines += 1;
        let limit = hang_limit();
        let xb = &mut self.xb;
        let t = Instant::now();
        let r = self
            .dog
            .call_with_limit(line, limit, || catch_unwind(AssertUnwindSafe(|| xb.handle(line))));
        self.timing.add(line, XB_COMMANDS, t.elapsed());
        r.unwrap_or_else(|e| self.fail(&format!("the handler panicked: {}", panic_text(&e))))
    }

    /// Hands finished searches to the handler; each may play one legal move.
    fn deliver(&mut self, event: Event) {
        let Event::Searched { id, result } = event else { return };
        let before = self.current();
        self.history.push(&format!("<search {id} done: {:?}>", result.best));
        let xb = &mut self.xb;
        let r = self.dog.call("<search_done>", || {
            catch_unwind(AssertUnwindSafe(|| xb.search_done(id, result)))
        });
        if let Err(e) = r {
            self.fail(&format!("search_done panicked: {}", panic_text(&e)));
        }
        let after = self.xb.fen();
        if after == before.fen() {
            return;
        }
        let moved =
            before.legal_moves().iter().map(|&m| before.after(m)).find(|p| p.fen() == after);
        match moved {
            Some(p) => {
                self.model.push(p);
                self.stats.engine_moves += 1;
            }
            None => self.fail(&format!("a search result changed {} to {after}", before.fen())),
        }
    }

    fn drain(&mut self) {
        while let Ok(e) = self.rx.try_recv() {
            self.deliver(e);
        }
    }

    /// Sends `line` and checks the position it leaves against the model.
    fn step(&mut self, line: &str) {
        let (cmd, arg) = xb_split(line);
        let before_pos = self.current();
        let before = before_pos.fen();
        let var_before = self.xb.variant();
        if self.model.last().map(Position::fen) != Some(before.clone()) {
            self.fail(&format!("the model ({:?}) lost track of {before}", self.model.last()));
        }
        let alive = self.send(line);
        if cmd == "quit" {
            if alive {
                self.fail("quit did not end the session");
            }
            // What `run` does after quit (cancel the search), then a new session.
            self.send("force");
            self.xb = Xboard::new(self.tx.clone());
            self.drain();
            self.reset_model(Position::startpos(Variant::Crazyhouse));
            self.bad = false;
            self.analysis_left = None;
            self.stats.quits += 1;
            self.send("sd 1");
            return;
        }
        if !alive {
            self.fail(&format!("{line:?} ended the session"));
        }
        let after = self.xb.fen();
        let var = self.xb.variant();
        let unchanged = |f: &XbFuzz, what: &str| {
            if after != before || var != var_before {
                f.fail(&format!(
                    "{line:?} ({what}) changed {before} ({var_before}) to {after} ({var})"
                ));
            }
        };
        match cmd {
            "new" => {
                let start = Position::startpos(Variant::Crazyhouse);
                if after != start.fen() || var != Variant::Crazyhouse {
                    self.fail(&format!("new left {after} ({var})"));
                }
                self.reset_model(start);
                self.bad = false;
            }
            "variant" => match arg.parse::<Variant>() {
                Ok(v) => {
                    let start = Position::startpos(v);
                    if after != start.fen() || var != v {
                        self.fail(&format!("{line:?} left {after} ({var})"));
                    }
                    self.reset_model(start);
                    self.bad = false;
                }
                Err(_) => unchanged(self, "unknown variant"),
            },
            // The model's own reading of the FEN (`fuzzkit::model`), not the engine's parser.
            "setboard" => match ModelPosition::read(arg, var_before) {
                Some(m) => {
                    let want = m.fen_sorted_pocket();
                    if model::sort_pocket(&after) != want || var != var_before {
                        self.fail(&format!("{line:?} left {after}; the model reads {want}"));
                    }
                    let pos = self.current();
                    self.reset_model(pos);
                    self.bad = false;
                    self.stats.setboards += 1;
                }
                None => {
                    unchanged(self, "refused FEN");
                    self.bad = true;
                }
            },
            "undo" | "remove" => {
                for _ in 0..if cmd == "undo" { 1 } else { 2 } {
                    if self.model.len() > 1 {
                        self.model.pop();
                    }
                }
                let want = self.model.last().map(Position::fen).unwrap_or_default();
                if after != want || var != var_before {
                    self.fail(&format!("{line:?} left {after} instead of {want}"));
                }
            }
            "holding" => {
                // Only the pockets may change; the game then restarts from here.
                let fields = |f: &str| -> (String, String) {
                    let (board, rest) = f.split_once('[').unwrap_or((f, ""));
                    (board.to_string(), rest.split_once(']').map(|x| x.1).unwrap_or("").to_string())
                };
                if fields(&after) != fields(&before) || var != var_before {
                    self.fail(&format!(
                        "{line:?} changed more than the pockets: {before} -> {after}"
                    ));
                }
                let board = fields(&before).0;
                let board_pieces = board.chars().filter(char::is_ascii_alphabetic).count();
                // The model's own reading of the holding (`fuzzkit::model`).
                match model::holding(arg, board_pieces as u32) {
                    Some(letters) => {
                        let got = model::sort_pocket(&after);
                        let got = got.split_once('[').and_then(|x| x.1.split_once(']'));
                        if got.map(|x| x.0) != Some(letters.as_str()) {
                            self.fail(&format!("{line:?} set {after}; the model has [{letters}]"));
                        }
                        let pos = self.current();
                        self.reset_model(pos);
                    }
                    None if after != before => {
                        self.fail(&format!("refused {line:?} changed {before} to {after}"))
                    }
                    None => {}
                }
            }
            _ => {
                let text = if cmd == "usermove" {
                    Some(arg)
                } else if !XB_COMMANDS.contains(&cmd) && xb_looks_like_move(cmd) {
                    Some(cmd)
                } else {
                    None
                };
                match text {
                    Some(t) => {
                        let legal = if self.bad { None } else { before_pos.parse_san(t).ok() };
                        match legal {
                            Some(m) => {
                                let p = before_pos.after(m);
                                if after != p.fen() {
                                    self.fail(&format!("{line:?} ({m}) left {after}"));
                                }
                                self.model.push(p);
                                self.stats.user_moves += 1;
                            }
                            None => unchanged(self, "refused move"),
                        }
                    }
                    None => unchanged(self, "not a position command"),
                }
            }
        }
        if cmd == "analyze" {
            self.analysis_left = Some(self.rng.below(4));
        }
        if cmd == "exit" {
            self.analysis_left = None;
        }
        self.drain();
    }

    fn gen_holding(&mut self) -> String {
        let rng = &mut self.rng;
        let pocket = |rng: &mut Rng| -> String {
            let n = rng.below(5);
            (0..n).map(|_| rng.pick(&['P', 'N', 'B', 'R', 'Q', 'p', '2', 'K', 'x'])).collect()
        };
        match rng.below(8) {
            0 => format!("[{}]", pocket(rng)),
            1 => {
                format!("[{}] [{}] {}", pocket(rng), pocket(rng), rng.pick(&["WP", "BQ", "N", ""]))
            }
            2 => format!("[{}] [{}", pocket(rng), pocket(rng)),
            3 => format!("[{}] [{}]", rng.pick(NUMBERS), "P"),
            4 => "[33P] []".into(),
            _ => format!("[{}] [{}]", pocket(rng), pocket(rng)),
        }
    }

    fn gen_lines(&mut self) -> Vec<String> {
        let cur = self.current();
        let r = self.rng.below(1000);
        let rng = &mut self.rng;
        let lines: Vec<String> = match r {
            0..=1 => vec!["quit".into()],
            2..=219 => {
                let t = move_text(&cur, rng, true);
                vec![if rng.chance(2, 3) { format!("usermove {t}") } else { t }]
            }
            220..=379 => {
                const SIMPLE: [&str; 28] = [
                    "new",
                    "force",
                    "go",
                    "playother",
                    "white",
                    "black",
                    "?",
                    "undo",
                    "remove",
                    "post",
                    "nopost",
                    "hard",
                    "easy",
                    "analyze",
                    "exit",
                    ".",
                    "random",
                    "computer",
                    "draw",
                    "hint",
                    "bk",
                    "xboard",
                    "protover 2",
                    "accepted ping",
                    "rejected san",
                    "edit",
                    "ping 7",
                    "force",
                ];
                vec![rng.pick(&SIMPLE).into()]
            }
            380..=579 => {
                let n = |rng: &mut Rng, real: &[&str]| -> String {
                    if rng.chance(1, 6) {
                        nasty(rng).into()
                    } else {
                        rng.pick(real).into()
                    }
                };
                let line = match rng.below(16) {
                    0 => format!(
                        "variant {}",
                        n(rng, &["crazyhouse", "loop", "chessgi", "zh", "normal", "Crazyhouse"])
                    ),
                    1 => format!(
                        "level {} {} {}",
                        n(rng, &["0", "1", "40"]),
                        n(rng, &["0", "1", "5", "2:30", "0:10", "1:5", "x", ":", "-1"]),
                        n(rng, &["0", "0.5", "2.0", "1e300", "-1", "12"])
                    ),
                    2 => format!("st {}", n(rng, &["0.5", "10.0", "1", "0", "-1", "1e300", "30"])),
                    3 => format!("sd {}", n(rng, &["1", "2", "30", "0", "-1"])),
                    4 => format!("nps {}", n(rng, &["0", "1000", "100000"])),
                    5 => format!("time {}", n(rng, &["0", "100", "6000", "-5", "30000"])),
                    6 => format!("otim {}", n(rng, &["0", "100", "6000"])),
                    7 => format!("ping {}", n(rng, &["1", "42", ""])),
                    8 => format!("memory {}", n(rng, &["1", "2", "4", "16", "1024"])),
                    9 => format!("cores {}", n(rng, &["1", "2", "4", "0"])),
                    10 => format!(
                        "option {}",
                        n(
                            rng,
                            &[
                                "MultiPV=1",
                                "MultiPV=3",
                                "MultiPV=0",
                                "MultiPV=501",
                                "MoveOverhead=10",
                                "MoveOverhead=99999",
                                "ClearHash",
                                "Foo=1",
                                "=",
                                "MultiPV"
                            ]
                        )
                    ),
                    11 => format!(
                        "result {}",
                        n(rng, &["1-0 {White mates}", "0-1 {x}", "1/2-1/2 {Draw}", "*"])
                    ),
                    12 => format!("rating {} {}", rng.below(3000), n(rng, &["1800", "x"])),
                    13 => format!("name {}", random_text(rng, &['a', 'B', ' ', '1'], 12)),
                    14 => format!("protover {}", n(rng, &["1", "2", "3"])),
                    _ => format!("egtpath zh {}", random_text(rng, &['a', '/', ' '], 10)),
                };
                vec![line]
            }
            580..=639 => vec![format!("holding {}", self.gen_holding())],
            640..=739 => {
                let s = self.pool.sample(&mut self.rng);
                let p = &s.positions[self.rng.below(s.positions.len())];
                let w = write_fen(p, &mut self.rng);
                let text = if self.rng.chance(1, 4) {
                    mutate(&w.text, &mut self.rng, FEN_ALPHABET)
                } else {
                    w.text
                };
                vec![format!("setboard {text}")]
            }
            740..=789 => {
                // Bursts that reach thinking, pondering and analysis.
                match rng.below(4) {
                    0 => ["new", "hard", "time 50", "otim 50", "go"].map(String::from).to_vec(),
                    1 => ["force", "playother", "hard"].map(String::from).to_vec(),
                    2 => ["post", "analyze"].map(String::from).to_vec(),
                    _ => ["easy", "ping 3", "go"].map(String::from).to_vec(),
                }
            }
            790..=889 => vec![garbage_line(rng, XB_COMMANDS)],
            _ => {
                let base = match rng.below(3) {
                    0 => format!("usermove {}", move_text(&cur, rng, true)),
                    1 => format!("holding {}", self.gen_holding()),
                    _ => {
                        let p = self.pool.position(&mut self.rng).clone();
                        format!("setboard {}", write_fen(&p, &mut self.rng).text)
                    }
                };
                vec![mutate(&base, &mut self.rng, LINE_ALPHABET)]
            }
        };
        lines.iter().flat_map(|l| sanitize_xb(l)).collect()
    }

    /// After a case: cancel any search; `new` (one case in four, else `setboard` of the start
    /// position) and `usermove e2e4` must apply, and one case in eight `go` must produce a
    /// legal engine move by itself.
    fn end_case(&mut self) {
        self.step("force");
        self.analysis_left = None;
        if self.case.is_multiple_of(4) {
            self.step("new");
            self.step("sd 1");
            self.step("force");
        } else {
            // `new` also clears the hash and histories, which takes a while: mostly setboard.
            self.step("setboard rnbqkbnr/pppppppp/8/8/8/8/PPPPPPPP/RNBQKBNR[] w KQkq - 0 1");
        }
        self.step("usermove e2e4");
        if self.model.len() != 2 {
            self.fail("usermove e2e4 after new or setboard was not applied");
        }
        if self.case.is_multiple_of(8) {
            self.step("go");
            let t = Instant::now();
            while self.model.len() < 3 {
                match self.rx.recv_timeout(search_limit().saturating_sub(t.elapsed())) {
                    Ok(e) => self.deliver(e),
                    Err(_) => self.fail(&format!(
                        "no engine move {} ms after go (sd 1)",
                        t.elapsed().as_millis()
                    )),
                }
            }
            self.step("force");
        }
    }
}

fn fuzz_xboard() {
    let n = cases(1_500);
    let (tx, rx) = channel();
    let mut f = XbFuzz {
        xb: Xboard::new(tx.clone()),
        tx,
        rx,
        rng: Rng::new(seed() ^ 0xcec9),
        pool: Pool::get(),
        dog: Watchdog::new("xboard_handler"),
        history: History(VecDeque::new()),
        case: 0,
        timing: Timing::default(),
        model: vec![Position::startpos(Variant::Crazyhouse)],
        bad: false,
        analysis_left: None,
        stats: XbStats::default(),
    };
    let mut progress = Progress::new("xboard_handler", n);
    // A small table: `new` clears it, and it comes after every case.
    for l in ["xboard", "protover 2", "sd 1", "memory 1"] {
        f.step(l);
    }
    for case in 0..n {
        f.case = case;
        for _ in 0..1 + f.rng.below(8) {
            for line in f.gen_lines() {
                f.step(&line);
                if let Some(left) = f.analysis_left {
                    if left == 0 {
                        f.step("exit");
                    } else {
                        f.analysis_left = Some(left - 1);
                    }
                }
            }
        }
        f.end_case();
        progress.tick(case + 1);
    }
    f.step("quit");
    progress.finish(
        n,
        &format!(
            ", {} lines ({} user moves, {} engine moves, {} setboards, {} quit), slowest call \
             {:.1} ms, {} calls over 2 s (during searches), {} over the limit \
             only because the process was starved",
            f.stats.lines,
            f.stats.user_moves,
            f.stats.engine_moves,
            f.stats.setboards,
            f.stats.quits,
            f.dog.max_ms(),
            f.dog.over_2s(),
            f.dog.starved()
        ),
    );
    eprintln!("fuzz xboard_handler: time by command: {}", f.timing.top(6));
}

#[test]
fn xboard_handler() {
    run_in_child("xboard_handler_child", fuzz_xboard, None);
}

#[test]
#[ignore = "run by xboard_handler in a child process, with stdout discarded"]
fn xboard_handler_child() {
    fuzz_xboard();
}

// ---------------------------------------------------------------------------------------
// The fuzzers' own helpers
// ---------------------------------------------------------------------------------------

/// The watchdog ends the process when a call hangs, naming the input.
#[test]
fn watchdog_ends_a_hanging_call() {
    let (status, lines, _) =
        spawn_child("watchdog_child", &[("MADHOUSE_FUZZ_HANG_MS", "100")], None);
    assert_eq!(status.code(), Some(70), "{lines:?}");
    assert!(lines.iter().any(|l| l.starts_with("HANG in fuzz watchdog")), "{lines:?}");
    assert!(lines.iter().any(|l| l.contains("input: \"sleep\"")), "{lines:?}");
}

#[test]
#[ignore = "run by watchdog_ends_a_hanging_call in a child process"]
fn watchdog_child() {
    let dog = Watchdog::new("watchdog");
    dog.call("quick", || ());
    dog.call("sleep", || std::thread::sleep(Duration::from_secs(10)));
}

#[test]
fn sanitizers_bound_the_work() {
    assert_eq!(sanitize_uci("go infinite"), "go infinite depth 1");
    assert_eq!(sanitize_uci("go perft 9 searchmoves e2e4"), "go perft 2 depth 1 searchmoves e2e4");
    assert_eq!(sanitize_uci("setoption name Hash value 4096"), "setoption name Hash value 64");
    assert_eq!(sanitize_uci("setoption name threads value 64"), "setoption name threads value 2");
    assert_eq!(sanitize_uci("bench x"), "bench 1");
    let huge = "go wtime 9223372036854775807 btime 1";
    assert_eq!(sanitize_uci(huge), "go wtime 9223372036854775807 btime 1 depth 1");
    assert_eq!(sanitize_xb("sd 40"), vec!["sd 1"]);
    assert_eq!(sanitize_xb("new"), vec!["new", "sd 1"]);
    assert_eq!(sanitize_xb(" memory 4096 "), vec!["memory 4"]);
    let v = Variant::Crazyhouse;
    let start = Position::startpos(v).fen();
    assert_eq!(expected_position(&["startpos", "moves", "e2e5"], v), None);
    assert_eq!(expected_position(&["startpos"], v), Some(start));
    assert_eq!(expected_position(&["fen", "8/8/8/8/8/8/8/8", "w"], v), None);
    assert!(xb_looks_like_move("e2e4") && xb_looks_like_move("P@e4") && !xb_looks_like_move("go"));
}
