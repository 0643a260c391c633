//! UCI, with the `UCI_Variant` option (crazyhouse, loop, chessgi).
//!
//! Built to what cutechess-cli and python-chess (lichess-bot) send: options are set before
//! `ucinewgame` and keep their values across games; `position` keeps the previous position
//! when its FEN or a move is bad; `bestmove` never comes before `stop` or `ponderhit` in
//! `go infinite` and `go ponder`. Problems are reported as `info string`.

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::mpsc::Receiver;
use std::sync::Arc;

use super::options::{self, Dialect, OptionError, Settings};
use super::Event;
use crate::core::Game;
use crate::core::{Move, Variant};
use crate::engine::{Engine, SearchRequest, SearchResult};
use crate::score::{Score, MATE_BOUND};
use crate::search::{Info, Reporter};
use crate::time::{Clock, Limits};
use crate::tt::Bound;

/// Options GUIs send that Madhouse does not offer; accepted silently.
const IGNORED_OPTIONS: [&str; 2] = ["UCI_Opponent", "UCI_Chess960"];

/// Formats an internal score as UCI `cp X` or `mate N`.
pub fn uci_score(v: i32) -> String {
    match Score::from_internal(v) {
        Score::Cp(cp) => format!("cp {cp}"),
        Score::Mate(n) => format!("mate {n}"),
    }
}

/// Win/draw/loss permille for a score, from a logistic model of crazyhouse results
/// (decisive games dominate; draws are rare).
pub fn wdl(v: i32) -> (u32, u32, u32) {
    if v >= MATE_BOUND {
        return (1000, 0, 0);
    }
    if v <= -MATE_BOUND {
        return (0, 0, 1000);
    }
    let f = |x: f64| 1.0 / (1.0 + (-(x - 60.0) / 90.0).exp());
    let w = (f(v as f64) * 1000.0).round() as u32;
    let l = (f(-v as f64) * 1000.0).round() as u32;
    let l = l.min(1000 - w);
    (w, 1000 - w - l, l)
}

struct UciReporter {
    show_wdl: AtomicBool,
}

impl Reporter for UciReporter {
    fn info(&self, i: &Info) {
        let bound = match i.bound {
            Bound::Lower => " lowerbound",
            Bound::Upper => " upperbound",
            _ => "",
        };
        let wdl = if self.show_wdl.load(Ordering::Relaxed) {
            let (w, d, l) = wdl(i.score);
            format!(" wdl {w} {d} {l}")
        } else {
            String::new()
        };
        let pv: Vec<String> = i.pv.iter().map(Move::to_string).collect();
        let pv = if pv.is_empty() { String::new() } else { format!(" pv {}", pv.join(" ")) };
        println!(
            "info depth {} seldepth {} multipv {} score {}{}{} nodes {} nps {} hashfull {} tbhits 0 time {}{}",
            i.depth,
            i.seldepth,
            i.multipv,
            uci_score(i.score),
            bound,
            wdl,
            i.nodes,
            i.nps(),
            i.hashfull,
            i.time_ms,
            pv
        );
    }

    fn message(&self, text: &str) {
        println!("info string {text}");
    }
}

/// The UCI session state.
pub struct Uci {
    engine: Engine,
    game: Game,
    settings: Settings,
    reporter: Arc<UciReporter>,
    /// `stop` was sent to the running search, whose `bestmove` may not be out yet.
    stopping: bool,
}

impl Default for Uci {
    fn default() -> Self {
        Uci::new()
    }
}

fn info_string(text: &str) {
    println!("info string {text}");
}

impl Uci {
    /// A fresh session.
    pub fn new() -> Uci {
        let settings = Settings::default();
        Uci {
            engine: Engine::new(),
            game: Game::new(settings.variant),
            reporter: Arc::new(UciReporter { show_wdl: AtomicBool::new(settings.show_wdl) }),
            settings,
            stopping: false,
        }
    }

    /// Processes `first` (if any) and then every line from `rx` until `quit` or end of input.
    pub fn run(mut self, first: Option<String>, rx: &Receiver<Event>) {
        if let Some(line) = first {
            if !self.handle(&line) {
                return self.shutdown();
            }
        }
        while let Ok(event) = rx.recv() {
            if let Event::Line(line) = event {
                if !self.handle(&line) {
                    break;
                }
            }
        }
        self.shutdown();
    }

    fn shutdown(mut self) {
        self.engine.stop();
        self.engine.wait();
    }

    /// The current position as a FEN (for tests and tools).
    pub fn fen(&self) -> String {
        self.game.current().fen()
    }

    /// The variant set with `UCI_Variant`.
    pub fn variant(&self) -> Variant {
        self.settings.variant
    }

    /// Is a search running whose `bestmove` has not been printed yet?
    pub fn is_searching(&self) -> bool {
        self.engine.is_searching()
    }

    /// Handles one command line; false means quit.
    pub fn handle(&mut self, line: &str) -> bool {
        log::debug!("uci command: {line}");
        let mut tokens = line.split_whitespace();
        let Some(cmd) = tokens.next() else { return true };
        let rest: Vec<&str> = tokens.collect();
        match cmd {
            "uci" => self.cmd_uci(),
            "isready" => println!("readyok"),
            "debug" | "register" => {}
            "setoption" => self.cmd_setoption(&rest),
            "ucinewgame" => {
                self.engine.stop();
                self.engine.clear();
            }
            "position" => self.cmd_position(&rest),
            "go" => self.cmd_go(&rest),
            "stop" => {
                self.engine.stop();
                self.stopping = true;
            }
            "ponderhit" => self.engine.ponderhit(),
            "quit" => {
                self.engine.stop();
                return false;
            }
            "d" => println!("{}", self.game.current()),
            "eval" => {
                // The network's output beside the hand-written breakdown, whichever is in use.
                let pos = self.game.current();
                let nn = crate::nnue::evaluate_position(self.engine.network(), pos);
                println!(
                    "Network ({}, {}): {nn} cp from {}'s side ({} cp from White's)",
                    self.settings.eval_file,
                    if self.engine.uses_network() {
                        "in use"
                    } else {
                        "not in use: Use NNUE false"
                    },
                    pos.turn().name(),
                    nn * pos.turn().sign()
                );
                println!();
                println!("Hand-written evaluation:");
                for l in crate::eval::breakdown(pos).lines() {
                    println!("{l}");
                }
            }
            "bench" => {
                if self.engine.is_searching() {
                    info_string("bench is not available during a search");
                } else {
                    let depth = rest
                        .first()
                        .and_then(|d| d.parse().ok())
                        .unwrap_or(crate::bench::DEFAULT_DEPTH);
                    crate::bench::print(depth.clamp(1, 30));
                }
            }
            "flip" => {}
            // The tuning build lists its tunable options with their SPSA steps.
            #[cfg(feature = "tune-search")]
            "tune" => {
                for line in options::TABLE.iter().filter_map(options::Spec::tune_line) {
                    println!("{line}");
                }
            }
            _ => info_string(&format!("unknown command '{}'", truncate(line, 80))),
        }
        true
    }

    fn cmd_uci(&self) {
        println!("id name {}", crate::ENGINE_NAME);
        println!("id author {}", crate::AUTHORS);
        println!();
        for spec in options::TABLE {
            println!("{}", spec.uci_line());
        }
        println!("uciok");
    }

    fn cmd_setoption(&mut self, rest: &[&str]) {
        // setoption name <words...> [value <words...>]
        let Some(name_at) = rest.iter().position(|t| t.eq_ignore_ascii_case("name")) else {
            return info_string("setoption needs 'name'");
        };
        let value_at = rest.iter().position(|t| t.eq_ignore_ascii_case("value"));
        let name_end = value_at.unwrap_or(rest.len());
        if name_end <= name_at + 1 {
            return info_string("setoption needs an option name");
        }
        let name = rest[name_at + 1..name_end].join(" ");
        let value = value_at.map(|v| rest[v + 1..].join(" ")).unwrap_or_default();
        let result = match options::find_uci(&name) {
            // Options of other engines that GUIs send unasked: accepted, without effect.
            None if IGNORED_OPTIONS.iter().any(|o| o.eq_ignore_ascii_case(&name)) => Ok(()),
            None => Err(OptionError::Unknown(name.clone())),
            Some(spec) => spec
                .parse(&name, &value, Dialect::Uci)
                .and_then(|v| self.settings.set(&mut self.engine, spec, v)),
        };
        if let Err(e) = result {
            return info_string(&e.to_string());
        }
        self.reporter.show_wdl.store(self.settings.show_wdl, Ordering::Relaxed);
        if self.settings.variant != self.game.current().variant() {
            self.game = Game::new(self.settings.variant);
        }
    }

    fn cmd_position(&mut self, rest: &[&str]) {
        let moves_at = rest.iter().position(|&t| t == "moves");
        let spec_end = moves_at.unwrap_or(rest.len());
        let mut game = match rest.first() {
            Some(&"startpos") => Game::new(self.settings.variant),
            Some(&"fen") => {
                match Game::from_fen(&rest[1..spec_end].join(" "), self.settings.variant) {
                    Ok(g) => g,
                    Err(e) => return info_string(&format!("{e}; position unchanged")),
                }
            }
            _ => return info_string("position needs 'startpos' or 'fen'; position unchanged"),
        };
        if let Some(m) = moves_at {
            for text in &rest[m + 1..] {
                if let Err(e) = game.current().parse_uci(text).map(|mv| game.push(mv)) {
                    return info_string(&format!(
                        "{e} after {} moves; position unchanged",
                        game.ply()
                    ));
                }
            }
        }
        self.game = game;
    }

    /// Parses `go`'s parameters. As the UCI specification asks, an unknown token or a bad
    /// value is skipped (and reported in `warnings`) and the rest of the line still counts,
    /// so that every `go` gets its `bestmove`.
    fn parse_go(&self, rest: &[&str], warnings: &mut Vec<String>) -> (Limits, Option<u32>) {
        let keyword = |t: &str| {
            matches!(
                t,
                "wtime"
                    | "btime"
                    | "winc"
                    | "binc"
                    | "movestogo"
                    | "depth"
                    | "nodes"
                    | "mate"
                    | "movetime"
                    | "perft"
                    | "infinite"
                    | "ponder"
                    | "searchmoves"
            )
        };
        let mut limits = Limits::default();
        let mut perft = None;
        let (mut wtime, mut btime, mut winc, mut binc, mut mtg) = (None, None, 0u64, 0u64, None);
        let mut i = 0;
        while i < rest.len() {
            let key = rest[i];
            if !keyword(key) {
                warnings.push(format!("unknown go parameter '{key}' ignored"));
                i += 1;
                continue;
            }
            match key {
                "infinite" | "ponder" => {
                    limits.infinite |= key == "infinite";
                    limits.ponder |= key == "ponder";
                    i += 1;
                    continue;
                }
                "searchmoves" => {
                    // The moves run to the end of the line; `0000` is python-chess's empty list.
                    for t in rest[i + 1..].iter().filter(|t| **t != "0000") {
                        match self.game.current().parse_uci(t) {
                            Ok(m) => limits.searchmoves.push(m),
                            Err(e) => warnings.push(format!("searchmoves: {e} ignored")),
                        }
                    }
                    break;
                }
                _ => {}
            }
            let v = match rest.get(i + 1).map(|t| t.parse::<i64>()) {
                Some(Ok(v)) => {
                    i += 2;
                    v
                }
                Some(Err(_)) if !keyword(rest[i + 1]) => {
                    warnings.push(format!("bad value '{}' for '{key}' ignored", rest[i + 1]));
                    i += 2;
                    continue;
                }
                _ => {
                    warnings.push(format!("'{key}' needs a value; ignored"));
                    i += 1;
                    continue;
                }
            };
            match key {
                "wtime" => wtime = Some(v.max(0) as u64),
                "btime" => btime = Some(v.max(0) as u64),
                "winc" => winc = v.max(0) as u64,
                "binc" => binc = v.max(0) as u64,
                "movestogo" => mtg = Some(v.clamp(1, 1000) as u32),
                "depth" => limits.depth = Some(v.clamp(1, 1000) as i32),
                "nodes" => limits.nodes = Some(v.max(1) as u64),
                "mate" => limits.mate = Some(v.clamp(1, 500) as i32),
                "movetime" => limits.movetime = Some(v.max(1) as u64),
                _ => perft = Some(v.clamp(0, 20) as u32),
            }
        }
        let pos = self.game.current();
        let (time, inc) = match pos.turn() {
            crate::core::Color::White => (wtime, winc),
            crate::core::Color::Black => (btime, binc),
        };
        if let Some(t) = time {
            limits.clock = Some(Clock { time_ms: t, inc_ms: inc, movestogo: mtg });
        }
        limits.analysis = self.settings.analyse_mode;
        if self.settings.analyse_mode && limits.clock.is_none() && limits.movetime.is_none() {
            limits.infinite |=
                limits.depth.is_none() && limits.nodes.is_none() && limits.mate.is_none();
        }
        (limits, perft)
    }

    fn cmd_go(&mut self, rest: &[&str]) {
        if self.engine.is_searching() {
            if !self.stopping {
                return info_string("already searching; send stop first");
            }
            // Stopped but not finished: let it print its bestmove, then start the new search.
            self.engine.wait();
        }
        self.stopping = false;
        let mut warnings = Vec::new();
        let (limits, perft) = self.parse_go(rest, &mut warnings);
        for w in &warnings {
            info_string(w);
        }
        if let Some(depth) = perft {
            return crate::core::perft::print_divide(self.game.current(), depth);
        }
        if limits.ponder && !self.settings.ponder {
            log::debug!("go ponder without the Ponder option set");
        }
        let req = SearchRequest {
            root: self.game.current().clone(),
            history: self.game.history_keys(),
            limits,
        };
        let on_done = Box::new(|r: SearchResult| match r.best {
            Some(b) => match r.ponder {
                Some(p) => println!("bestmove {b} ponder {p}"),
                None => println!("bestmove {b}"),
            },
            None => println!("bestmove (none)"),
        });
        self.engine.start(req, self.reporter.clone(), on_done);
    }
}

fn truncate(s: &str, n: usize) -> &str {
    match s.char_indices().nth(n) {
        Some((i, _)) => &s[..i],
        None => s,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn wdl_sums_to_1000_and_is_monotone() {
        let mut last = 0;
        for v in (-2000..2000).step_by(37) {
            let (w, d, l) = wdl(v);
            assert_eq!(w + d + l, 1000);
            assert!(w >= last);
            last = w;
        }
        assert_eq!(wdl(MATE_BOUND + 5), (1000, 0, 0));
    }

    #[test]
    fn scores() {
        assert_eq!(uci_score(35), "cp 35");
        assert_eq!(uci_score(crate::score::MATE - 1), "mate 1");
        assert_eq!(uci_score(-crate::score::MATE + 2), "mate -1");
    }
}
