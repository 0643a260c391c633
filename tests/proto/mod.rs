//! Shared helpers for the protocol tests (`uci_protocol.rs`, `bad_input.rs`,
//! `xboard_protocol.rs`): an engine process on pipes, read line by line with deadlines, and
//! parsers and checkers for what it prints.
//!
//! Every wait has a deadline: a reader thread feeds stdout lines into a channel, and all reads
//! use `recv_timeout`. When a test fails, the engine's transcript (commands sent with `>`, lines
//! received with `<`) and its stderr are printed, and the process is killed on drop.

#![allow(dead_code)]

use std::io::{BufRead, BufReader, Read, Write};
use std::process::{Child, ChildStdin, Command, ExitStatus, Stdio};
use std::sync::mpsc::{channel, Receiver, RecvTimeoutError};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use madhouse::core::{Move, Position, Variant};

/// Default deadline for a reply that should come at once or after a short search.
pub const T: Duration = Duration::from_secs(15);

/// Deadline for a reply after `stop`, `ponderhit`, `isready` or `quit`: only catches hangs
/// (below the 30 s that `st 30` searches in the tests would take on their own).
pub const HANG: Duration = Duration::from_secs(20);

/// A running engine process.
pub struct Engine {
    child: Child,
    stdin: Option<ChildStdin>,
    rx: Receiver<Option<String>>,
    eof: bool,
    transcript: Vec<String>,
    stderr: Arc<Mutex<String>>,
}

/// Why a read ended without a line.
#[derive(Debug, PartialEq, Eq)]
pub enum NoLine {
    /// The deadline passed.
    Timeout,
    /// The engine closed its stdout.
    Eof,
}

impl Engine {
    /// Starts the engine binary with no arguments (protocol mode).
    pub fn start() -> Engine {
        let mut child = Command::new(env!("CARGO_BIN_EXE_madhouse"))
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .env_remove("RUST_LOG")
            .spawn()
            .expect("start the engine");
        let stdin = child.stdin.take();
        let stdout = child.stdout.take().unwrap();
        let mut stderr_pipe = child.stderr.take().unwrap();
        let (tx, rx) = channel();
        std::thread::spawn(move || {
            let mut r = BufReader::new(stdout);
            let mut buf = Vec::new();
            loop {
                buf.clear();
                match r.read_until(b'\n', &mut buf) {
                    Ok(0) | Err(_) => break,
                    Ok(_) => {
                        let line = String::from_utf8_lossy(&buf);
                        let line = line.trim_end_matches(['\n', '\r']).to_string();
                        if tx.send(Some(line)).is_err() {
                            return;
                        }
                    }
                }
            }
            let _ = tx.send(None);
        });
        let stderr = Arc::new(Mutex::new(String::new()));
        let sink = stderr.clone();
        std::thread::spawn(move || {
            let mut buf = [0u8; 4096];
            while let Ok(n) = stderr_pipe.read(&mut buf) {
                if n == 0 {
                    break;
                }
                sink.lock().unwrap().push_str(&String::from_utf8_lossy(&buf[..n]));
            }
        });
        Engine { child, stdin, rx, eof: false, transcript: Vec::new(), stderr }
    }

    /// Starts the engine and completes the UCI handshake; returns the `uci` reply lines.
    pub fn uci() -> (Engine, Vec<String>) {
        let mut e = Engine::start();
        e.send("uci");
        let lines = e.read_until(|l| l == "uciok", T);
        (e, lines)
    }

    /// Starts the engine in XBoard mode (`xboard`, `protover 2`); returns the feature lines.
    pub fn xboard() -> (Engine, Vec<String>) {
        let mut e = Engine::start();
        e.send("xboard");
        e.send("protover 2");
        let lines = e.read_until(|l| l.starts_with("feature") && l.contains("done=1"), T);
        (e, lines)
    }

    /// Sends one line (a newline is appended).
    pub fn send(&mut self, line: &str) {
        let shown: String = line.chars().take(200).collect();
        self.transcript.push(format!("> {shown}"));
        let mut bytes = line.as_bytes().to_vec();
        bytes.push(b'\n');
        self.write(&bytes);
    }

    /// Sends raw bytes as they are.
    pub fn send_bytes(&mut self, bytes: &[u8]) {
        self.transcript.push(format!("> <{} raw bytes>", bytes.len()));
        self.write(bytes);
    }

    fn write(&mut self, bytes: &[u8]) {
        let stdin = self.stdin.as_mut().expect("stdin already closed");
        if let Err(e) = stdin.write_all(bytes).and_then(|_| stdin.flush()) {
            self.fail(&format!("writing to the engine failed: {e}"));
        }
    }

    /// Closes the engine's stdin (end of input).
    pub fn close_stdin(&mut self) {
        self.transcript.push("> <EOF>".to_string());
        self.stdin = None;
    }

    /// The next line, or why there is none before `timeout`.
    pub fn try_line(&mut self, timeout: Duration) -> Result<String, NoLine> {
        if self.eof {
            return Err(NoLine::Eof);
        }
        match self.rx.recv_timeout(timeout) {
            Ok(Some(line)) => {
                self.transcript.push(format!("< {}", line.chars().take(300).collect::<String>()));
                Ok(line)
            }
            Ok(None) | Err(RecvTimeoutError::Disconnected) => {
                self.eof = true;
                self.transcript.push("< <EOF>".to_string());
                Err(NoLine::Eof)
            }
            Err(RecvTimeoutError::Timeout) => Err(NoLine::Timeout),
        }
    }

    /// Reads lines until one satisfies `pred`; returns them all, the match last. Fails the test
    /// on timeout or end of output.
    pub fn read_until(&mut self, pred: impl Fn(&str) -> bool, timeout: Duration) -> Vec<String> {
        let deadline = Instant::now() + timeout;
        let mut lines = Vec::new();
        loop {
            let left = deadline.saturating_duration_since(Instant::now());
            match self.try_line(left) {
                Ok(l) => {
                    let done = pred(&l);
                    lines.push(l);
                    if done {
                        return lines;
                    }
                }
                Err(why) => self.fail(&format!("no expected line within {timeout:?}: {why:?}")),
            }
        }
    }

    /// Every line that arrives within `dur` (for checking silence).
    pub fn collect_for(&mut self, dur: Duration) -> Vec<String> {
        let deadline = Instant::now() + dur;
        let mut lines = Vec::new();
        loop {
            let left = deadline.saturating_duration_since(Instant::now());
            if left.is_zero() {
                return lines;
            }
            match self.try_line(left) {
                Ok(l) => lines.push(l),
                Err(NoLine::Timeout) => return lines,
                Err(NoLine::Eof) => self.fail("engine exited unexpectedly"),
            }
        }
    }

    /// UCI: `isready` → `readyok`; returns the lines before `readyok`.
    pub fn sync(&mut self) -> Vec<String> {
        self.send("isready");
        let mut lines = self.read_until(|l| l == "readyok", T);
        lines.pop();
        lines
    }

    /// XBoard: `ping N` → `pong N`; returns the lines before the pong.
    pub fn ping(&mut self, n: u32) -> Vec<String> {
        self.send(&format!("ping {n}"));
        let want = format!("pong {n}");
        let mut lines = self.read_until(|l| l == want, T);
        lines.pop();
        lines
    }

    /// UCI: the engine's position, as the `Fen:` line of `d`.
    pub fn fen(&mut self) -> String {
        self.send("d");
        let lines = self.sync();
        let fens: Vec<&String> = lines.iter().filter(|l| l.starts_with("Fen: ")).collect();
        if fens.len() != 1 {
            self.fail("`d` printed no single Fen: line");
        }
        fens[0]["Fen: ".len()..].to_string()
    }

    /// UCI: sends a `go` command and reads up to `bestmove`.
    pub fn go(&mut self, cmd: &str, timeout: Duration) -> SearchOutput {
        self.send(cmd);
        self.read_search(timeout)
    }

    /// UCI: reads up to and including `bestmove`.
    pub fn read_search(&mut self, timeout: Duration) -> SearchOutput {
        let lines = self.read_until(|l| l.starts_with("bestmove"), timeout);
        match SearchOutput::parse(&lines) {
            Ok(s) => s,
            Err(e) => self.fail(&e),
        }
    }

    /// Waits up to `timeout` for the process to exit.
    pub fn wait_exit(&mut self, timeout: Duration) -> Option<ExitStatus> {
        let deadline = Instant::now() + timeout;
        loop {
            if let Ok(Some(st)) = self.child.try_wait() {
                return Some(st);
            }
            if Instant::now() >= deadline {
                return None;
            }
            std::thread::sleep(Duration::from_millis(5));
        }
    }

    /// Is the process still running?
    pub fn alive(&mut self) -> bool {
        matches!(self.child.try_wait(), Ok(None))
    }

    /// What the engine wrote to stderr so far.
    pub fn stderr(&self) -> String {
        self.stderr.lock().unwrap().clone()
    }

    /// Fails the test unless the engine is alive and never panicked.
    pub fn assert_healthy(&mut self) {
        if !self.alive() {
            self.fail("engine is not running");
        }
        if self.stderr().contains("panicked") {
            self.fail("engine panicked");
        }
    }

    /// The transcript so far (for messages).
    pub fn transcript_tail(&self, n: usize) -> String {
        let start = self.transcript.len().saturating_sub(n);
        self.transcript[start..].join("\n")
    }

    /// Fails the test with the transcript attached.
    pub fn fail(&self, msg: &str) -> ! {
        panic!(
            "{msg}\n--- transcript (last 80 lines) ---\n{}\n--- stderr ---\n{}",
            self.transcript_tail(80),
            self.stderr()
        );
    }

    /// Asserts `cond`, failing with `msg` and the transcript.
    pub fn check(&self, cond: bool, msg: &str) {
        if !cond {
            self.fail(msg);
        }
    }
}

impl Drop for Engine {
    fn drop(&mut self) {
        self.stdin = None;
        if self.wait_exit(Duration::from_millis(300)).is_none() {
            let _ = self.child.kill();
            let _ = self.child.wait();
        }
    }
}

/// A UCI score.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub enum Score {
    /// Centipawns.
    Cp(i32),
    /// Mate in N moves (negative: being mated).
    Mate(i32),
}

impl Score {
    /// A number that orders scores the way the engine would (mates beyond any cp score).
    pub fn order_key(self) -> i64 {
        match self {
            Score::Cp(c) => c as i64,
            Score::Mate(n) if n > 0 => 1_000_000 - n as i64,
            Score::Mate(n) => -1_000_000 - n as i64,
        }
    }
}

/// One parsed `info` line (not `info string`).
#[derive(Clone, Debug, Default)]
pub struct InfoLine {
    pub depth: Option<i32>,
    pub seldepth: Option<i32>,
    pub multipv: Option<u32>,
    pub score: Option<Score>,
    pub bound: Option<String>,
    pub wdl: Option<(u32, u32, u32)>,
    pub nodes: Option<u64>,
    pub time: Option<u64>,
    pub pv: Vec<String>,
    pub raw: String,
}

impl InfoLine {
    /// Parses an `info` line the way python-chess does (keywords, then `pv` to the end).
    pub fn parse(line: &str) -> Result<InfoLine, String> {
        let toks: Vec<&str> = line.split_whitespace().collect();
        if toks.first() != Some(&"info") {
            return Err(format!("not an info line: {line}"));
        }
        let mut info = InfoLine { raw: line.to_string(), ..InfoLine::default() };
        let num = |i: usize| -> Result<i64, String> {
            toks.get(i)
                .and_then(|t| t.parse::<i64>().ok())
                .ok_or_else(|| format!("bad number after '{}' in: {line}", toks[i - 1]))
        };
        let mut i = 1;
        while i < toks.len() {
            match toks[i] {
                "depth" => {
                    info.depth = Some(num(i + 1)? as i32);
                    i += 2;
                }
                "seldepth" => {
                    info.seldepth = Some(num(i + 1)? as i32);
                    i += 2;
                }
                "multipv" => {
                    info.multipv = Some(num(i + 1)? as u32);
                    i += 2;
                }
                "nodes" => {
                    info.nodes = Some(num(i + 1)? as u64);
                    i += 2;
                }
                "time" => {
                    info.time = Some(num(i + 1)? as u64);
                    i += 2;
                }
                "nps" | "hashfull" | "tbhits" | "currmovenumber" | "cpuload" => {
                    num(i + 1)?;
                    i += 2;
                }
                "score" => {
                    let v = num(i + 2)? as i32;
                    info.score = Some(match toks.get(i + 1) {
                        Some(&"cp") => Score::Cp(v),
                        Some(&"mate") => Score::Mate(v),
                        _ => return Err(format!("bad score in: {line}")),
                    });
                    i += 3;
                }
                "lowerbound" | "upperbound" => {
                    info.bound = Some(toks[i].to_string());
                    i += 1;
                }
                "wdl" => {
                    let w = num(i + 1)? as u32;
                    let d = num(i + 2)? as u32;
                    let l = num(i + 3)? as u32;
                    info.wdl = Some((w, d, l));
                    i += 4;
                }
                "pv" => {
                    info.pv = toks[i + 1..].iter().map(|s| s.to_string()).collect();
                    i = toks.len();
                }
                "string" => return Err(format!("info string where a search line was due: {line}")),
                other => return Err(format!("unknown info token '{other}' in: {line}")),
            }
        }
        Ok(info)
    }
}

/// What a search printed, up to `bestmove`.
#[derive(Clone, Debug)]
pub struct SearchOutput {
    /// Every line, `bestmove` last.
    pub lines: Vec<String>,
    /// The `info` lines (not `info string`), in order.
    pub infos: Vec<InfoLine>,
    /// `info string` texts.
    pub strings: Vec<String>,
    /// The best move as printed (`(none)` when there is no legal move).
    pub best: String,
    /// The ponder move, if any.
    pub ponder: Option<String>,
}

impl SearchOutput {
    /// Parses the lines of a search; the last must be `bestmove`.
    pub fn parse(lines: &[String]) -> Result<SearchOutput, String> {
        let mut infos = Vec::new();
        let mut strings = Vec::new();
        let (last, body) = lines.split_last().ok_or("no lines")?;
        for l in body {
            if let Some(s) = l.strip_prefix("info string ") {
                strings.push(s.to_string());
            } else if l.starts_with("info ") {
                infos.push(InfoLine::parse(l)?);
            } else if !l.trim().is_empty() {
                return Err(format!("unexpected line during a search: {l}"));
            }
        }
        let toks: Vec<&str> = last.split_whitespace().collect();
        let (best, ponder) = match toks.as_slice() {
            ["bestmove", b] => (b.to_string(), None),
            ["bestmove", b, "ponder", p] => (b.to_string(), Some(p.to_string())),
            _ => return Err(format!("malformed bestmove line: {last}")),
        };
        Ok(SearchOutput { lines: lines.to_vec(), infos, strings, best, ponder })
    }

    /// The last `info` line with a score.
    pub fn last_scored(&self) -> Option<&InfoLine> {
        self.infos.iter().rev().find(|i| i.score.is_some())
    }

    /// The deepest depth reported.
    pub fn max_depth(&self) -> i32 {
        self.infos.iter().filter_map(|i| i.depth).max().unwrap_or(0)
    }
}

/// Does `s` match python-chess's `UCI_REGEX` (`[a-h][1-8][a-h][1-8][pnbrqk]?|[PNBRQK]@[a-h][1-8]`)
/// in full? Drops must be upper case.
pub fn uci_move_text_ok(s: &str) -> bool {
    let b = s.as_bytes();
    let file = |c: u8| (b'a'..=b'h').contains(&c);
    let rank = |c: u8| (b'1'..=b'8').contains(&c);
    match b.len() {
        4 if b[1] == b'@' => b"PNBRQK".contains(&b[0]) && file(b[2]) && rank(b[3]),
        4 => file(b[0]) && rank(b[1]) && file(b[2]) && rank(b[3]),
        5 => file(b[0]) && rank(b[1]) && file(b[2]) && rank(b[3]) && b"pnbrqk".contains(&b[4]),
        _ => false,
    }
}

/// Parses a move the engine printed: right form and legal in `pos`.
pub fn engine_move(pos: &Position, text: &str) -> Result<Move, String> {
    if !uci_move_text_ok(text) {
        return Err(format!("'{text}' is not in UCI form (drops upper case)"));
    }
    pos.parse_uci(text).map_err(|e| format!("'{text}' in {}: {e}", pos.fen()))
}

/// Plays a list of moves, each of which must be printed right and legal; returns the final
/// position.
pub fn replay(pos: &Position, moves: &[String]) -> Result<Position, String> {
    let mut p = pos.clone();
    for (i, m) in moves.iter().enumerate() {
        let mv = engine_move(&p, m).map_err(|e| format!("move {} of {moves:?}: {e}", i + 1))?;
        p = p.after(mv);
    }
    Ok(p)
}

/// Checks a search's output against the position searched:
/// - `bestmove` legal and in UCI form (or `(none)` exactly when there is no legal move), and the
///   ponder move legal after it;
/// - the last scored `info` line has an exact score (no `lowerbound`/`upperbound`);
/// - every PV legal when replayed, drops upper case;
/// - with `wdl`, the three numbers sum to 1000.
pub fn check_search(pos: &Position, out: &SearchOutput) -> Result<(), String> {
    for info in &out.infos {
        replay(pos, &info.pv).map_err(|e| format!("bad PV in '{}': {e}", info.raw))?;
        if let Some((w, d, l)) = info.wdl {
            if w + d + l != 1000 {
                return Err(format!("wdl does not sum to 1000: {}", info.raw));
            }
        }
    }
    let last = out.last_scored().ok_or("no info line with a score before bestmove")?;
    if last.bound.is_some() {
        return Err(format!("the last score before bestmove is a bound: {}", last.raw));
    }
    if out.best == "(none)" {
        if pos.has_legal_move() {
            return Err(format!("bestmove (none) with legal moves in {}", pos.fen()));
        }
        return Ok(());
    }
    let best = engine_move(pos, &out.best).map_err(|e| format!("bestmove: {e}"))?;
    if let Some(p) = &out.ponder {
        engine_move(&pos.after(best), p).map_err(|e| format!("ponder move: {e}"))?;
    }
    Ok(())
}

/// The crazyhouse start position.
pub fn startpos() -> Position {
    Position::startpos(Variant::Crazyhouse)
}

/// A crazyhouse position from a FEN (test data; panics when invalid).
pub fn pos(fen: &str) -> Position {
    Position::from_fen(fen, Variant::Crazyhouse).unwrap_or_else(|e| panic!("{fen}: {e}"))
}

/// Plays moves given as text (must be legal).
pub fn play(pos: &Position, moves: &[&str]) -> Position {
    let mut p = pos.clone();
    for m in moves {
        let mv = p.parse_uci(m).unwrap_or_else(|e| panic!("{m}: {e}"));
        p = p.after(mv);
    }
    p
}

pub use madhouse::rng::Rng;

/// A legal random game of exactly `plies` plies from the start position that never reaches a
/// position without legal moves; moves in UCI text. Prefers board moves over drops so that the
/// game stays long-lived.
pub fn random_game(plies: usize, seed: u64) -> (Vec<String>, Position) {
    'seed: for s in seed.. {
        let mut rng = Rng::new(s);
        let mut p = startpos();
        let mut moves = Vec::with_capacity(plies);
        for _ in 0..plies {
            let legal = p.legal_moves();
            let legal = legal.as_slice();
            if legal.is_empty() {
                continue 'seed;
            }
            let board: Vec<Move> = legal.iter().copied().filter(|m| !m.is_drop()).collect();
            let m = if !board.is_empty() && rng.below(4) != 0 {
                board[rng.below(board.len())]
            } else {
                legal[rng.below(legal.len())]
            };
            moves.push(m.to_string());
            p = p.after(m);
        }
        if p.has_legal_move() {
            return (moves, p);
        }
    }
    unreachable!()
}
