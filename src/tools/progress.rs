//! Progress of the long commands (`datagen`, `train`) on stderr, shown the way command-line
//! tools show it: on a terminal one status line redrawn in place, with a bar, the rate and the
//! time left; when stderr is a file or a pipe (a log, CI, a background job) plain lines at a
//! slower pace, so a log of an hours-long run stays readable.
//!
//! Written here rather than taken from a crate (indicatif): the two commands need one line and
//! a bar, and the runtime dependencies stay the five the project allows.

use std::io::{self, IsTerminal, Write};
use std::time::{Duration, Instant};

/// Redraw interval of the status line on a terminal.
const TERMINAL_EVERY: Duration = Duration::from_millis(500);
/// Interval of plain progress lines when stderr is not a terminal.
const LOG_EVERY: Duration = Duration::from_secs(30);
/// Width of the bar, in characters between the brackets.
const BAR_WIDTH: usize = 24;

/// Paces and draws the progress of one command.
pub struct Meter {
    terminal: bool,
    every: Duration,
    last: Instant,
    /// A status line is on the terminal without its newline.
    open_line: bool,
}

impl Meter {
    /// A meter for stderr, redrawing in place when stderr is a terminal.
    pub fn new() -> Meter {
        Meter::with_terminal(io::stderr().is_terminal())
    }

    /// A meter that behaves as on a terminal (`true`) or as in a log (`false`).
    pub fn with_terminal(terminal: bool) -> Meter {
        Meter {
            terminal,
            every: if terminal { TERMINAL_EVERY } else { LOG_EVERY },
            last: Instant::now(),
            open_line: false,
        }
    }

    /// Whether stderr is a terminal (lines are redrawn in place).
    pub const fn is_terminal(&self) -> bool {
        self.terminal
    }

    /// Whether a periodic status is due; when it is, the interval starts again.
    pub fn due(&mut self) -> bool {
        if self.last.elapsed() >= self.every {
            self.last = Instant::now();
            true
        } else {
            false
        }
    }

    /// Shows a status: on a terminal `text` after a bar of `done` out of `total` (no bar
    /// when `total` is 0), redrawn in place; otherwise `text` as a line of its own.
    pub fn status(&mut self, done: u64, total: u64, text: &str) {
        if self.terminal {
            let bar =
                if total > 0 { format!("{} ", bar(done, total, BAR_WIDTH)) } else { String::new() };
            eprint!("\r{bar}{text}\x1b[K");
            let _ = io::stderr().flush();
            self.open_line = true;
        } else {
            eprintln!("{text}");
        }
    }

    /// Prints a line that stays (a result, an epoch's losses), replacing the status line.
    pub fn line(&mut self, text: &str) {
        if self.open_line {
            eprint!("\r\x1b[K");
            self.open_line = false;
        }
        eprintln!("{text}");
    }
}

impl Default for Meter {
    fn default() -> Self {
        Meter::new()
    }
}

/// A bar of `width` characters with the percentage: `[######------]  50%`.
pub fn bar(done: u64, total: u64, width: usize) -> String {
    let frac = if total == 0 { 1.0 } else { (done.min(total) as f64) / total as f64 };
    let filled = ((frac * width as f64).floor() as usize).min(width);
    format!("[{}{}] {:>3}%", "#".repeat(filled), "-".repeat(width - filled), (frac * 100.0) as u32)
}

/// Seconds left at the rate so far: `done` of `total` in `elapsed` seconds (`None` before any
/// progress or when finished).
pub fn seconds_left(done: u64, total: u64, elapsed: f64) -> Option<f64> {
    (done > 0 && done < total).then(|| elapsed * (total - done) as f64 / done as f64)
}

/// A duration for people: `1h05m` from an hour up, else `3m07s`.
pub fn format_duration(secs: f64) -> String {
    let s = secs.max(0.0).round() as u64;
    if s >= 3600 {
        format!("{}h{:02}m", s / 3600, s / 60 % 60)
    } else {
        format!("{}m{:02}s", s / 60, s % 60)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn bar_fills_in_proportion_and_never_overflows() {
        assert_eq!(bar(0, 10, 10), "[----------]   0%");
        assert_eq!(bar(5, 10, 10), "[#####-----]  50%");
        assert_eq!(bar(10, 10, 10), "[##########] 100%");
        assert_eq!(bar(25, 10, 10), "[##########] 100%");
        assert_eq!(bar(1, 3, 6), "[##----]  33%");
    }

    #[test]
    fn time_left_follows_the_rate() {
        assert_eq!(seconds_left(0, 10, 5.0), None);
        assert_eq!(seconds_left(10, 10, 5.0), None);
        assert_eq!(seconds_left(1, 4, 10.0), Some(30.0));
    }

    #[test]
    fn durations_read_as_minutes_or_hours() {
        assert_eq!(format_duration(59.4), "0m59s");
        assert_eq!(format_duration(187.0), "3m07s");
        assert_eq!(format_duration(3900.0), "1h05m");
    }

    #[test]
    fn a_log_meter_waits_its_interval() {
        let mut m = Meter::with_terminal(false);
        assert!(!m.is_terminal());
        assert!(!m.due(), "a log line is not due right after the start");
    }
}
