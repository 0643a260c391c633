//! The `madhouse` binary: command-line tools (`bench`, `perft`, `--help`, `--version`) or,
//! without arguments, the UCI/XBoard protocol loop on stdin/stdout.

use madhouse::core::{Position, Variant, START_FEN};
use madhouse::protocol::uci::{run_bench, run_perft, ENGINE_NAME};

const HELP: &str = "\
Madhouse: a crazyhouse chess engine (also loop chess and chessgi).

Usage:
  madhouse                         speak UCI or XBoard on stdin/stdout (first command decides)
  madhouse bench [depth]           search the bench positions; prints the node signature
  madhouse perft <depth> [fen]     count leaf nodes (per-move divide and 'Nodes searched: N')
           [--variant crazyhouse|loop|chessgi]
  madhouse --help | --version

Logs go to stderr; set RUST_LOG=debug for more.";

fn main() {
    env_logger::Builder::from_env(env_logger::Env::default().default_filter_or("warn"))
        .target(env_logger::Target::Stderr)
        .init();
    let args: Vec<String> = std::env::args().skip(1).collect();
    let Some(cmd) = args.first() else {
        return madhouse::protocol::run();
    };
    match cmd.as_str() {
        "--help" | "-h" | "help" => println!("{HELP}"),
        "--version" | "-V" | "version" => println!("{ENGINE_NAME}"),
        "bench" => {
            let depth = match args.get(1).map(|d| d.parse::<i32>()) {
                None => madhouse::bench::DEFAULT_DEPTH,
                Some(Ok(d)) if (1..=30).contains(&d) => d,
                Some(_) => fail("bench depth must be a number from 1 to 30"),
            };
            run_bench(depth);
        }
        "perft" => {
            let mut rest: Vec<&str> = args[1..].iter().map(String::as_str).collect();
            let mut variant = Variant::Crazyhouse;
            if let Some(i) = rest.iter().position(|&a| a == "--variant") {
                let v = rest.get(i + 1).copied().unwrap_or("");
                variant = v.parse().unwrap_or_else(|e: String| fail(&e));
                rest.drain(i..(i + 2).min(rest.len()));
            }
            let depth = match rest.first().map(|d| d.parse::<u32>()) {
                Some(Ok(d)) if d <= 20 => d,
                _ => fail("perft needs a depth from 0 to 20"),
            };
            let fen = if rest.len() > 1 { rest[1..].join(" ") } else { START_FEN.to_string() };
            match Position::from_fen(&fen, variant) {
                Ok(pos) => run_perft(&pos, depth),
                Err(e) => fail(&e.to_string()),
            }
        }
        other => fail(&format!("unknown argument '{other}' (see --help)")),
    }
}

fn fail(msg: &str) -> ! {
    eprintln!("madhouse: {msg}");
    std::process::exit(2);
}
