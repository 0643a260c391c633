//! XBoard / WinBoard, CECP version 2, for crazyhouse, loop and chessgi.
//!
//! Built to what XBoard, cutechess-cli and python-chess send (`shared/docs/protocols.md`):
//! one feature reply to `protover 2`; `setboard` in every FEN dialect; `holding`; fractional
//! `level` increments; `st` and `level` cancelling each other; thinking lines with plain
//! coordinate PVs and mates as ±(100000+N); no thinking output while pondering; `Error` and
//! `Illegal move` only where the specification calls for them.

use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::mpsc::{Receiver, Sender};
use std::sync::Arc;

use super::options::{self, Dialect, OptionError, Settings, Spec};
use super::Event;
use crate::core::fen::parse_pocket;
use crate::core::Game;
use crate::core::{Color, Move, Pocket, Variant};
use crate::engine::{Engine, SearchRequest};
use crate::score::Score;
use crate::search::{Info, Reporter};
use crate::time::{Clock, Limits, TimeBudget};
use crate::tt::Bound;

/// Formats an internal score the XBoard way: centipawns, or ±(100000 + moves) for mates.
pub fn xboard_score(v: i32) -> i64 {
    match Score::from_internal(v) {
        Score::Cp(cp) => cp as i64,
        Score::Mate(n) if n > 0 => 100_000 + n as i64,
        Score::Mate(n) => -100_000 + n as i64,
    }
}

/// Prints thinking lines while allowed, and keeps the latest figures for `.`.
struct XbReporter {
    post: AtomicBool,
    muted: AtomicBool,
    analyzing: AtomicBool,
    last_depth: AtomicU64,
    last_nodes: AtomicU64,
    last_time_ms: AtomicU64,
}

impl Reporter for XbReporter {
    fn info(&self, i: &Info) {
        self.last_depth.store(i.depth.max(0) as u64, Ordering::Relaxed);
        self.last_nodes.store(i.nodes, Ordering::Relaxed);
        self.last_time_ms.store(i.time_ms, Ordering::Relaxed);
        let show = self.analyzing.load(Ordering::Relaxed)
            || (self.post.load(Ordering::Relaxed) && !self.muted.load(Ordering::Relaxed));
        if !show || i.bound != Bound::Exact || i.multipv != 1 || i.pv.is_empty() {
            return;
        }
        let pv: Vec<String> = i.pv.iter().map(Move::to_string).collect();
        println!(
            "{} {} {} {} {} {} 0\t{}",
            i.depth,
            xboard_score(i.score),
            i.time_ms / 10,
            i.nodes,
            i.seldepth,
            i.nps(),
            pv.join(" ")
        );
    }

    fn message(&self, text: &str) {
        println!("# {text}");
    }
}

/// The clock rules set by `level` or `st`.
#[derive(Copy, Clone, Debug, PartialEq)]
enum TimeControl {
    /// `level MPS BASE INC`.
    Level { mps: u32, base_ms: u64, inc_ms: u64 },
    /// `st SECONDS`: a fixed time per move.
    PerMove { ms: u64 },
}

/// What the engine is doing.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
enum Mode {
    Idle,
    /// Searching for its own move (search id).
    Thinking(u64),
    /// Searching the position after the expected reply `guess` on the opponent's time.
    Pondering {
        id: u64,
        guess: Move,
    },
    /// Analysing the current position until told otherwise.
    Analyzing(u64),
}

/// The XBoard session state.
pub struct Xboard {
    engine: Engine,
    events: Sender<Event>,
    game: Game,
    force: bool,
    engine_side: Option<Color>,
    tc: TimeControl,
    depth: Option<i32>,
    nps: Option<u64>,
    time_ms: Option<u64>,
    bad_position: bool,
    mode: Mode,
    next_id: u64,
    reporter: Arc<XbReporter>,
    settings: Settings,
    /// `ping`s received while thinking about our move: answered after the move (SPEC §8).
    pending_pongs: Vec<String>,
}

fn error(kind: &str, text: &str) {
    println!("Error ({kind}): {text}");
}

/// Parses `level`'s base time: minutes `M`, or `M:SS`.
fn parse_base(s: &str) -> Option<u64> {
    let (m, sec) = match s.split_once(':') {
        Some((m, sec)) => (m.parse::<f64>().ok()?, sec.parse::<f64>().ok()?),
        None => (s.parse::<f64>().ok()?, 0.0),
    };
    let ms = (m * 60.0 + sec) * 1000.0;
    (ms.is_finite() && ms >= 0.0).then_some(ms.min(1e15) as u64)
}

/// The bracketed fields of a `holding` argument (`[PNp] [qb]` gives `PNp` and `qb`), in
/// order; an unclosed bracket ends the list.
pub fn holding_fields(arg: &str) -> Vec<&str> {
    let mut fields = Vec::new();
    let mut rest = arg;
    while let Some(open) = rest.find('[') {
        let Some(close) = rest[open..].find(']') else { break };
        fields.push(&rest[open + 1..open + close]);
        rest = &rest[open + close + 1..];
    }
    fields
}

impl Xboard {
    /// A fresh session; `events` lets finished searches report back to the loop.
    pub fn new(events: Sender<Event>) -> Xboard {
        Xboard {
            engine: Engine::new(),
            events,
            game: Game::new(Settings::default().variant),
            force: false,
            engine_side: Some(Color::Black),
            tc: TimeControl::Level { mps: 0, base_ms: 5 * 60_000, inc_ms: 0 },
            depth: None,
            nps: None,
            time_ms: None,
            bad_position: false,
            mode: Mode::Idle,
            next_id: 1,
            reporter: Arc::new(XbReporter {
                post: AtomicBool::new(true),
                muted: AtomicBool::new(false),
                analyzing: AtomicBool::new(false),
                last_depth: AtomicU64::new(0),
                last_nodes: AtomicU64::new(0),
                last_time_ms: AtomicU64::new(0),
            }),
            settings: Settings::default(),
            pending_pongs: Vec::new(),
        }
    }

    /// Processes events until `quit` or end of input.
    pub fn run(mut self, rx: &Receiver<Event>) {
        while let Ok(event) = rx.recv() {
            match event {
                Event::Line(line) => {
                    if !self.handle(&line) {
                        break;
                    }
                }
                Event::Searched { id, result } => self.search_done(id, result),
            }
        }
        self.cancel();
    }

    /// Stops any search and forgets its result.
    fn cancel(&mut self) {
        self.engine.stop();
        self.engine.wait();
        self.mode = Mode::Idle;
        self.reporter.muted.store(false, Ordering::Relaxed);
        self.reporter.analyzing.store(false, Ordering::Relaxed);
        self.flush_pongs();
    }

    /// Answers the `ping`s held back while thinking.
    fn flush_pongs(&mut self) {
        for n in self.pending_pongs.drain(..) {
            println!("pong {n}");
        }
    }

    fn start_search(&mut self, game: &Game, limits: Limits) -> u64 {
        let id = self.next_id;
        self.next_id += 1;
        let tx = self.events.clone();
        let req =
            SearchRequest { root: game.current().clone(), history: game.history_keys(), limits };
        self.engine.start(
            req,
            self.reporter.clone(),
            Box::new(move |result| {
                let _ = tx.send(Event::Searched { id, result });
            }),
        );
        id
    }

    /// Limits for the engine's own move from the clock settings.
    fn limits(&self) -> Limits {
        let mut limits = Limits { depth: self.depth, ..Limits::default() };
        match self.tc {
            TimeControl::PerMove { ms } => limits.movetime = Some(ms.max(1)),
            TimeControl::Level { mps, base_ms, inc_ms } => {
                let movestogo = (mps > 0).then(|| mps - (self.game.ply() as u32 / 2) % mps);
                let time_ms = self.time_ms.unwrap_or(base_ms);
                limits.clock = Some(Clock { time_ms, inc_ms, movestogo });
            }
        }
        if let Some(nps) = self.nps {
            // Node-based clock: the time budget, converted to nodes.
            let budget = TimeBudget::new(&limits, self.engine.options.move_overhead_ms);
            let ms = budget.soft_ms.unwrap_or(1000);
            limits.nodes = Some((ms.saturating_mul(nps) / 1000).max(1));
            limits.clock = None;
            limits.movetime = None;
        }
        limits
    }

    /// Starts thinking about the engine's move, or announces the result if the position ends
    /// the game. A threefold repetition reached by the opponent's move is not announced here:
    /// python-chess (lichess-bot) plays on after one and expects a move; the engine claims a
    /// repetition its own move completes, after that move (`play_result`).
    fn think(&mut self) {
        self.cancel();
        if let Some(r) = self.game.result_on_board() {
            println!("{} {{{}}}", r.outcome.pgn(), r.reason);
            return;
        }
        let game = self.game.clone();
        let limits = self.limits();
        let id = self.start_search(&game, limits);
        self.mode = Mode::Thinking(id);
    }

    fn analyze(&mut self) {
        self.cancel();
        if self.bad_position || self.game.result().is_some() {
            self.mode = Mode::Analyzing(0);
            self.reporter.analyzing.store(true, Ordering::Relaxed);
            return;
        }
        let game = self.game.clone();
        let id = self.start_search(&game, Limits { infinite: true, ..Limits::default() });
        self.reporter.analyzing.store(true, Ordering::Relaxed);
        self.mode = Mode::Analyzing(id);
    }

    /// The current position as a FEN (for tests and tools).
    pub fn fen(&self) -> String {
        self.game.current().fen()
    }

    /// The variant set with `variant` (crazyhouse after `new`).
    pub fn variant(&self) -> Variant {
        self.settings.variant
    }

    /// Is a search running (thinking, pondering or analysing)?
    pub fn is_searching(&self) -> bool {
        self.mode != Mode::Idle
    }

    /// Takes a finished search's report, as `run` does with `Event::Searched`: plays the move
    /// if the search is still the current one.
    pub fn search_done(&mut self, id: u64, result: crate::engine::SearchResult) {
        let Mode::Thinking(current) = self.mode else { return };
        if id != current {
            return;
        }
        self.play_result(result);
        self.flush_pongs();
    }

    /// Plays the finished search's move, announces a game end, and starts pondering.
    fn play_result(&mut self, result: crate::engine::SearchResult) {
        self.engine.wait();
        self.mode = Mode::Idle;
        let Some(best) = result.best else {
            if let Some(r) = self.game.result() {
                println!("{} {{{}}}", r.outcome.pgn(), r.reason);
            }
            return;
        };
        self.game.push(best);
        println!("move {best}");
        if let Some(r) = self.game.result() {
            println!("{} {{{}}}", r.outcome.pgn(), r.reason);
            return;
        }
        if self.settings.ponder && !self.force {
            if let Some(guess) = result.ponder.filter(|&g| self.game.current().is_legal(g)) {
                println!("Hint: {guess}");
                let mut after = self.game.clone();
                after.push(guess);
                if after.result().is_some() {
                    return;
                }
                let mut limits = self.limits();
                limits.ponder = true;
                self.reporter.muted.store(true, Ordering::Relaxed);
                let id = self.start_search(&after, limits);
                self.mode = Mode::Pondering { id, guess };
            }
        }
    }

    /// Handles one command line; false means quit.
    pub fn handle(&mut self, line: &str) -> bool {
        log::debug!("xboard command: {line}");
        let (cmd, arg) = match line.split_once(char::is_whitespace) {
            Some((c, a)) => (c, a.trim()),
            None => (line, ""),
        };
        match cmd {
            "protover" => self.features(),
            "new" => {
                let analyzing = self.reporter_analyzing();
                self.cancel();
                self.settings.variant = Settings::default().variant;
                self.game = Game::new(self.settings.variant);
                self.force = false;
                self.engine_side = Some(Color::Black);
                self.depth = None;
                self.time_ms = None;
                self.bad_position = false;
                self.engine.clear();
                self.restart_analysis(analyzing);
            }
            "variant" => match arg.parse::<Variant>() {
                Ok(v) => {
                    let analyzing = self.reporter_analyzing();
                    self.cancel();
                    self.settings.variant = v;
                    self.game = Game::new(v);
                    self.bad_position = false;
                    self.restart_analysis(analyzing);
                }
                Err(_) => error("unsupported variant", arg),
            },
            "force" => {
                self.cancel();
                self.force = true;
            }
            "go" => {
                self.force = false;
                self.engine_side = Some(self.game.current().turn());
                if self.bad_position {
                    return true;
                }
                self.think();
            }
            "playother" => {
                self.cancel();
                self.force = false;
                self.engine_side = Some(self.game.current().turn().flip());
            }
            "white" | "black" => {
                // CECP v1 idioms, harmless with colors=0.
                self.cancel();
            }
            "level" => self.cmd_level(arg),
            "st" => match arg.parse::<f64>() {
                Ok(s) if s.is_finite() && s > 0.0 => {
                    self.tc = TimeControl::PerMove { ms: (s * 1000.0).min(1e12) as u64 };
                }
                _ => error("bad st", arg),
            },
            "sd" => match arg.parse::<i32>() {
                Ok(d) if d >= 1 => self.depth = Some(d.min(crate::params::MAX_DEPTH)),
                _ => error("bad sd", arg),
            },
            "nps" => match arg.parse::<u64>() {
                Ok(0) => self.nps = None,
                Ok(n) => self.nps = Some(n),
                Err(_) => error("bad nps", arg),
            },
            "time" => match arg.parse::<i64>() {
                Ok(cs) => self.time_ms = Some((cs.max(0) as u64).saturating_mul(10)),
                Err(_) => error("bad time", arg),
            },
            "?" => {
                if let Mode::Thinking(_) = self.mode {
                    self.engine.stop();
                }
            }
            "ping" => {
                if let Mode::Thinking(_) = self.mode {
                    // Our move first: "you must not send the pong reply until after you send
                    // your move" (SPEC §8). While pondering, answer at once.
                    self.pending_pongs.push(arg.to_string());
                } else {
                    println!("pong {arg}");
                }
            }
            "undo" => self.take_back(1),
            "remove" => self.take_back(2),
            "post" => self.reporter.post.store(true, Ordering::Relaxed),
            "nopost" => self.reporter.post.store(false, Ordering::Relaxed),
            "hard" => self.settings.ponder = true,
            "easy" => {
                self.settings.ponder = false;
                if let Mode::Pondering { .. } = self.mode {
                    self.cancel();
                }
            }
            "analyze" => self.analyze(),
            "exit" => {
                if let Mode::Analyzing(_) = self.mode {
                    self.cancel();
                }
            }
            "." => {
                if let Mode::Analyzing(_) = self.mode {
                    let r = &self.reporter;
                    println!(
                        "stat01: {} {} {} 0 0",
                        r.last_time_ms.load(Ordering::Relaxed) / 10,
                        r.last_nodes.load(Ordering::Relaxed),
                        r.last_depth.load(Ordering::Relaxed)
                    );
                }
            }
            // XBoard sends what the user chose, clamped here to the option's range. These
            // options come by other names than the table's: logged as its options are.
            "memory" => match arg.parse::<usize>() {
                Ok(mb) => {
                    self.engine.set_hash(mb);
                    log::debug!("option Hash set to {mb} (memory)");
                }
                Err(_) => error("bad memory", arg),
            },
            "cores" => match arg.parse::<usize>() {
                Ok(n) => {
                    self.engine.set_threads(n);
                    log::debug!("option Threads set to {n} (cores)");
                }
                Err(_) => error("bad cores", arg),
            },
            "option" => self.cmd_option(arg),
            "result" => {
                self.cancel();
                self.force = true;
            }
            "setboard" => self.cmd_setboard(arg),
            "holding" => self.cmd_holding(arg),
            "usermove" => self.user_move(arg),
            "edit" => error("unsupported", "edit (use setboard)"),
            "quit" => return false,
            // Routine commands with nothing to do here.
            "" | "xboard" | "accepted" | "rejected" | "random" | "computer" | "name" | "rating"
            | "ics" | "draw" | "hint" | "bk" | "egtpath" | "otim" => {}
            _ if self.looks_like_move(cmd) => self.user_move(cmd),
            _ => error("unknown command", line),
        }
        true
    }

    fn features(&self) {
        let variants: Vec<&str> = Variant::ALL.iter().map(|v| v.name()).collect();
        println!(
            "feature ping=1 setboard=1 usermove=1 san=0 time=1 draw=0 reuse=1 analyze=1 colors=0 \
             playother=1 sigint=0 sigterm=1 memory=1 smp=1 nps=1 debug=1 myname=\"{}\" \
             variants=\"{}\"",
            crate::ENGINE_NAME,
            variants.join(",")
        );
        for line in options::TABLE.iter().filter_map(Spec::xboard_feature) {
            println!("{line}");
        }
        println!("feature done=1");
    }

    fn cmd_level(&mut self, arg: &str) {
        let parts: Vec<&str> = arg.split_whitespace().collect();
        let parsed = match parts.as_slice() {
            [mps, base, inc] => {
                mps.parse::<u32>().ok().zip(parse_base(base)).zip(inc.parse::<f64>().ok())
            }
            _ => None,
        };
        match parsed {
            Some(((mps, base_ms), inc)) if inc.is_finite() && inc >= 0.0 => {
                self.tc =
                    TimeControl::Level { mps, base_ms, inc_ms: (inc * 1000.0).min(1e12) as u64 };
            }
            _ => error("bad level", arg),
        }
    }

    fn cmd_option(&mut self, arg: &str) {
        let (name, value) = match arg.split_once('=') {
            Some((n, v)) => (n.trim(), v.trim()),
            None => (arg.trim(), ""),
        };
        let Some(spec) = options::find_xboard(name) else {
            return error("unknown option", name);
        };
        self.set_option(spec, value, arg);
    }

    /// Sets an option from the table (`option`, `memory`, `cores`); `arg` is quoted in errors.
    fn set_option(&mut self, spec: &Spec, value: &str, arg: &str) {
        let result = spec
            .parse(spec.uci, value, Dialect::Xboard)
            .and_then(|v| self.settings.set(&mut self.engine, spec, v));
        match result {
            Ok(()) => {}
            // XBoard's Clear Hash during a search is dropped silently, as before.
            Err(OptionError::Busy(_)) => {}
            // Understood but not applied (a network file that does not load): tell the user.
            Err(e @ OptionError::Failed { .. }) => println!("tellusererror {e}"),
            Err(_) => error("bad option value", arg),
        }
    }

    fn cmd_setboard(&mut self, fen: &str) {
        let analyzing = self.reporter_analyzing();
        self.cancel();
        match Game::from_fen(fen, self.settings.variant) {
            Ok(g) => {
                self.game = g;
                self.bad_position = false;
            }
            Err(e) => {
                log::info!("setboard refused: {e}");
                println!("tellusererror Illegal position");
                self.bad_position = true;
            }
        }
        self.restart_analysis(analyzing);
    }

    /// `holding [QRp] [nn]` (optionally followed by the piece just acquired): both pockets.
    fn cmd_holding(&mut self, arg: &str) {
        let fields = holding_fields(arg);
        if fields.len() < 2 {
            return error("bad holding", arg);
        }
        let mut hands = [Pocket::EMPTY; 2];
        // XBoard writes both pockets in upper case: the first is white's, the second black's.
        for (i, text) in fields.iter().take(2).enumerate() {
            let mut parsed = [Pocket::EMPTY; 2];
            if parse_pocket(text, &mut parsed).is_err() {
                return error("bad holding", arg);
            }
            let mut merged = parsed[0];
            for role in crate::core::Role::DROPPABLE {
                merged.set(role, parsed[0].count(role) + parsed[1].count(role));
            }
            hands[i] = merged;
        }
        let analyzing = self.reporter_analyzing();
        if analyzing || matches!(self.mode, Mode::Pondering { .. }) {
            self.cancel();
        }
        let mut pos = self.game.current().clone();
        match pos.set_hands(hands) {
            Ok(()) => {
                // The pockets changed under the game: restart it from here.
                self.game = Game::from_position(pos);
            }
            Err(e) => error("bad holding", &e.to_string()),
        }
        self.restart_analysis(analyzing);
    }

    fn take_back(&mut self, plies: usize) {
        let analyzing = self.reporter_analyzing();
        self.cancel();
        for _ in 0..plies {
            self.game.undo();
        }
        self.restart_analysis(analyzing);
    }

    /// Analysis goes on after `new`, `variant`, `setboard`, `undo`, `remove` and `holding`:
    /// `analyzing` tells whether it ran before the command (which cancelled it).
    fn restart_analysis(&mut self, analyzing: bool) {
        if analyzing {
            self.analyze();
        }
    }

    fn reporter_analyzing(&self) -> bool {
        matches!(self.mode, Mode::Analyzing(_))
    }

    fn looks_like_move(&self, s: &str) -> bool {
        let b = s.as_bytes();
        (b.len() == 4 || b.len() == 5) && b[0].is_ascii_lowercase() && b[1].is_ascii_digit()
            || s.contains('@')
            || s.starts_with("O-O")
    }

    fn user_move(&mut self, text: &str) {
        if self.bad_position {
            println!("Illegal move (illegal position): {text}");
            return;
        }
        let analyzing = self.reporter_analyzing();
        let m = match self.game.current().parse_san(text) {
            Ok(m) => m,
            Err(e) => {
                log::info!("{e}");
                println!("Illegal move: {text}");
                return;
            }
        };
        if let Mode::Pondering { guess, .. } = self.mode {
            if guess == m {
                // Ponder hit: the search already runs on the right position.
                self.game.push(m);
                self.reporter.muted.store(false, Ordering::Relaxed);
                if let Mode::Pondering { id, .. } = self.mode {
                    self.mode = Mode::Thinking(id);
                }
                self.engine.ponderhit();
                return;
            }
        }
        if !analyzing {
            self.cancel();
        }
        self.game.push(m);
        if analyzing {
            self.analyze();
        } else if !self.force && self.engine_side == Some(self.game.current().turn()) {
            self.think();
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn level_base_times() {
        assert_eq!(parse_base("5"), Some(300_000));
        assert_eq!(parse_base("2:30"), Some(150_000));
        assert_eq!(parse_base("0:10"), Some(10_000));
        assert_eq!(parse_base("x"), None);
    }

    #[test]
    fn mate_scores() {
        use crate::score::MATE;
        assert_eq!(xboard_score(MATE - 1), 100_001);
        assert_eq!(xboard_score(-MATE + 2), -100_001);
        assert_eq!(xboard_score(-57), -57);
    }
}
