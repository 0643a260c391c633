//! The stdin/stdout protocol layer: UCI and XBoard (CECP v2).
//!
//! Input is read on its own thread and handed over a channel, so commands such as `stop`,
//! `isready`, `ping` or `?` are answered while a search runs. The first command decides the
//! protocol: `xboard` starts CECP, anything else (normally `uci`) UCI. Output lines go through
//! `println!`, which locks and flushes stdout per line; logs go to stderr only.

pub mod options;
pub mod uci;
pub mod xboard;

use std::io::BufRead;
use std::sync::mpsc::{self, Receiver, Sender};

use crate::engine::SearchResult;

/// Longest input line we process; longer lines are refused (a `position` with 1000 moves is
/// about 6 KB).
pub const MAX_LINE: usize = 1 << 20;

/// What the protocol loop reacts to: an input line, or the end of a search.
#[derive(Debug)]
pub enum Event {
    /// A line from stdin, trimmed.
    Line(String),
    /// A search finished; `id` tells which one (stale results are ignored).
    Searched {
        /// The id the protocol gave the search.
        id: u64,
        /// Its result.
        result: SearchResult,
    },
}

/// Starts the stdin reader thread. Lines arrive trimmed; the channel closes at end of input
/// (once every other sender is gone too).
pub fn spawn_reader() -> (Sender<Event>, Receiver<Event>) {
    let (tx, rx) = mpsc::channel();
    let reader_tx = tx.clone();
    std::thread::Builder::new()
        .name("stdin".into())
        .spawn(move || {
            let stdin = std::io::stdin();
            let mut lock = stdin.lock();
            let mut buf = Vec::new();
            loop {
                buf.clear();
                match lock.read_until(b'\n', &mut buf) {
                    Ok(0) => break,
                    Ok(_) => {
                        let line = String::from_utf8_lossy(&buf);
                        let line = if line.len() > MAX_LINE { "" } else { line.trim() };
                        if reader_tx.send(Event::Line(line.to_string())).is_err() {
                            break;
                        }
                    }
                    Err(e) => {
                        log::warn!("stdin: {e}");
                        break;
                    }
                }
            }
            // End of input reads as `quit`.
            let _ = reader_tx.send(Event::Line("quit".to_string()));
        })
        .expect("spawn stdin reader");
    (tx, rx)
}

/// Runs the protocol loop on stdin/stdout until `quit` or end of input.
pub fn run() {
    let (tx, rx) = spawn_reader();
    while let Ok(event) = rx.recv() {
        let Event::Line(line) = event else { continue };
        match line.split_whitespace().next() {
            None => continue,
            Some("xboard") => {
                log::debug!("xboard command: {line} (speaking XBoard)");
                return xboard::Xboard::new(tx).run(&rx);
            }
            Some(_) => return uci::Uci::new().run(Some(line), &rx),
        }
    }
}
