//! Progress of the long commands (`datagen`, `train`) on stderr, shown the way command-line
//! tools show it: on a terminal an indicatif bar redrawn in place, with the rate and the time
//! left in its message; when stderr is a file or a pipe (a log, CI, a background job) plain
//! lines at a slower pace, so a log of an hours-long run stays readable.
//!
//! The callers pace themselves with [`Meter::due`] and say what to show; this file decides how.

use std::io::{self, IsTerminal};
use std::time::{Duration, Instant};

use indicatif::{ProgressBar, ProgressDrawTarget, ProgressStyle};

/// Interval of status updates on a terminal.
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
    /// The bar on the terminal, from the first status on (never when not a terminal).
    bar: Option<ProgressBar>,
    /// The bar's style: with a bar (`total > 0`) or its message alone; `None` before the first.
    with_bar: Option<bool>,
}

impl Meter {
    /// A meter for stderr, with a bar when stderr is a terminal.
    pub fn new() -> Meter {
        Meter::with_terminal(io::stderr().is_terminal())
    }

    /// A meter that behaves as on a terminal (`true`) or as in a log (`false`).
    pub fn with_terminal(terminal: bool) -> Meter {
        Meter {
            terminal,
            every: if terminal { TERMINAL_EVERY } else { LOG_EVERY },
            last: Instant::now(),
            bar: None,
            with_bar: None,
        }
    }

    /// Whether stderr is a terminal (the status is a bar redrawn in place).
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
        if !self.terminal {
            eprintln!("{text}");
            return;
        }
        let bar = self.bar.get_or_insert_with(|| {
            ProgressBar::with_draw_target(None, ProgressDrawTarget::stderr())
        });
        if self.with_bar != Some(total > 0) {
            self.with_bar = Some(total > 0);
            bar.set_style(style(total > 0));
        }
        bar.set_length(total);
        bar.set_position(done.min(total));
        bar.set_message(text.to_string());
    }

    /// Prints a line that stays (a result, an epoch's losses) above the status.
    pub fn line(&mut self, text: &str) {
        match &self.bar {
            // The bar steps aside for the line and is drawn again below it.
            Some(bar) => bar.suspend(|| eprintln!("{text}")),
            None => eprintln!("{text}"),
        }
    }
}

/// The bar's look: `[######------]  50% text` as [`bar`] draws it, or the text alone.
fn template(with_bar: bool) -> String {
    if with_bar {
        format!("[{{bar:{BAR_WIDTH}}}] {{percent:>3}}% {{msg}}")
    } else {
        "{msg}".to_string()
    }
}

fn style(with_bar: bool) -> ProgressStyle {
    // Both templates parse (tested): the fallback is never taken.
    ProgressStyle::with_template(&template(with_bar))
        .unwrap_or_else(|_| ProgressStyle::default_bar())
        .progress_chars("#-")
}

impl Drop for Meter {
    /// A run that ends, or fails, takes its status off the terminal: what follows (the
    /// summary, an error) starts on a line of its own.
    fn drop(&mut self) {
        if let Some(bar) = self.bar.take() {
            bar.finish_and_clear();
        }
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
    fn a_log_meter_waits_its_interval_and_draws_no_bar() {
        let mut m = Meter::with_terminal(false);
        assert!(!m.is_terminal());
        assert!(!m.due(), "a log line is not due right after the start");
        m.status(5, 10, "meter test: a log line");
        m.line("meter test: a line that stays");
        assert!(m.bar.is_none(), "a log gets plain lines, never a bar");
    }

    #[test]
    fn a_terminal_meter_keeps_its_bar_in_step_and_clears_it_at_the_end() {
        // Under the test harness stderr is not a terminal: indicatif draws nothing, but the
        // bar's state is what it would draw.
        let mut m = Meter::with_terminal(true);
        m.status(5, 10, "half");
        let bar = m.bar.clone().expect("a terminal meter draws a bar");
        assert_eq!((bar.position(), bar.length()), (5, Some(10)));
        assert_eq!(bar.message(), "half");
        assert_eq!(m.with_bar, Some(true));
        // Past the total the bar stays full; a total of 0 shows the text alone.
        m.status(25, 10, "over");
        assert_eq!(bar.position(), 10);
        m.status(3, 0, "no total");
        assert_eq!((m.with_bar, bar.message().as_str()), (Some(false), "no total"));
        m.line("meter test: a line above the bar");
        assert!(!bar.is_finished());
        drop(m);
        assert!(bar.is_finished(), "the status is taken off the terminal at the end");
    }

    #[test]
    fn the_bar_templates_parse() {
        // A bad template would fall back to indicatif's default look without a word.
        for with_bar in [true, false] {
            assert!(ProgressStyle::with_template(&template(with_bar)).is_ok());
        }
        assert_eq!(template(true), "[{bar:24}] {percent:>3}% {msg}");
    }
}
