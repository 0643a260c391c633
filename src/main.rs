//! The `madhouse` binary: command-line tools (`bench`, `perft`, `datagen`, `tune`, `train`,
//! `--help`, `--version`) or, without arguments, the UCI/XBoard protocol loop on stdin/stdout.

use madhouse::core::variant::UnknownVariant;
use madhouse::core::{Position, Variant, START_FEN};
use madhouse::ENGINE_NAME;

const HELP: &str = "\
Madhouse: a crazyhouse chess engine (also loop chess and chessgi).

Usage:
  madhouse                         speak UCI or XBoard on stdin/stdout (first command decides)
  madhouse bench [depth]           search the bench positions; prints the node signature
  madhouse perft <depth> [fen]     count leaf nodes (per-move divide and 'Nodes searched: N')
           [--variant crazyhouse|loop|chessgi]
  madhouse datagen --out FILE.bin [--games N] [--nodes N | --depth N] [--threads N]
                   [--openings EPD] [--random-plies N] [--seed N] [--variant V]
                   [--eval nnue|hce|NET]
                                   self-play games: quiet positions with search score and
                                   result, appended as binary records; the same command
                                   resumes an interrupted run
  madhouse datagen --convert-text IN.txt --out OUT.bin [--variant V]
                                   'FEN | score | result' lines to records (OUT must be new)
  madhouse datagen --info FILE.bin   count, results and score distribution of a record file
  madhouse tune --data FILE [--out src/eval/tuned.rs] [--epochs N] [--rate X] [--limit N] [--l2 X]
                [--optimizer gd|adam] [--start current|hand-made] [--k X]
                                   fit the evaluation weights to the results (Texel)
  madhouse train --data FILE[,FILE..] --out NET [--hidden 256] [--buckets 1] [--epochs 20]
                 [--batch 16384] [--king-buckets 1|4|8|16|32] [--bucketed-pockets]
                 [--lr 0.001] [--lr-end X] [--lambda 1.0] [--k 400] [--validation 0.05]
                 [--limit N] [--threads N] [--seed N] [--variant V] [--checkpoint FILE]
                 [--resume] [--mirror-files] [--init NET]
                                   train an NNUE network on `FEN | score | result` lines
                                   or datagen records (--init: start from NET's weights
                                   and size; a larger --hidden widens NET, and
                                   --king-buckets spreads a NET without them over them)
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
            madhouse::bench::print(depth);
        }
        "perft" => {
            let mut rest: Vec<&str> = args[1..].iter().map(String::as_str).collect();
            let mut variant = Variant::Crazyhouse;
            if let Some(i) = rest.iter().position(|&a| a == "--variant") {
                let v = rest.get(i + 1).copied().unwrap_or("");
                variant = v.parse().unwrap_or_else(|e: UnknownVariant| fail(&e.to_string()));
                rest.drain(i..(i + 2).min(rest.len()));
            }
            let depth = match rest.first().map(|d| d.parse::<u32>()) {
                Some(Ok(d)) if d <= 20 => d,
                _ => fail("perft needs a depth from 0 to 20"),
            };
            let fen = if rest.len() > 1 { rest[1..].join(" ") } else { START_FEN.to_string() };
            match Position::from_fen(&fen, variant) {
                Ok(pos) => madhouse::core::perft::print_divide(&pos, depth),
                Err(e) => fail(&e.to_string()),
            }
        }
        "datagen" => datagen(&Flags::parse(&args[1..])),
        "tune" => {
            let flags = Flags::parse(&args[1..]);
            let cfg = madhouse::tools::tune::TuneConfig {
                data: flags
                    .get("data")
                    .unwrap_or_else(|| fail("tune needs --data FILE"))
                    .to_string(),
                epochs: flags.num("epochs", 500),
                rate: flags
                    .get("rate")
                    .map_or(if flags.get("optimizer") == Some("adam") { 0.5 } else { 1e5 }, |r| {
                        r.parse().unwrap_or_else(|_| fail("bad --rate"))
                    }),
                out: flags.get("out").unwrap_or("src/eval/tuned.rs").to_string(),
                limit: flags.num("limit", 0),
                adam: flags.get("optimizer") == Some("adam"),
                from_hand_made: flags.get("start") == Some("hand-made"),
                l2: flags.get("l2").map_or(0.0, |r| r.parse().unwrap_or_else(|_| fail("bad --l2"))),
                k: flags.get("k").map(|r| r.parse().unwrap_or_else(|_| fail("bad --k"))),
            };
            flags.finish();
            if let Err(e) = madhouse::tools::tune::tune(&cfg) {
                fail(&e.to_string());
            }
        }
        "train" => {
            let flags = Flags::parse(&args[1..]);
            let data = flags.get("data").unwrap_or_else(|| fail("train needs --data FILE"));
            let out = flags.get("out").unwrap_or_else(|| fail("train needs --out FILE"));
            let mut cfg = madhouse::tools::train::TrainConfig::new(
                data.split(',').map(Into::into).collect(),
                out.into(),
            );
            cfg.resume = flags.switch("resume");
            cfg.mirror_files = flags.switch("mirror-files");
            cfg.init = flags.get("init").map(Into::into);
            // The run is the size of the --init network unless --hidden or --buckets say
            // otherwise (a larger --hidden widens it). An unreadable file keeps the defaults:
            // training reports it before loading any data.
            if let Some(net) = cfg.init.as_ref().and_then(|p| madhouse::nnue::load_file(p).ok()) {
                (cfg.hidden, cfg.buckets) = (net.hidden(), net.buckets());
                (cfg.king_buckets, cfg.bucketed_pockets) =
                    (net.inputs().king_buckets(), net.inputs().bucketed_pockets());
            }
            cfg.hidden = flags.num("hidden", cfg.hidden);
            cfg.buckets = flags.num("buckets", cfg.buckets);
            cfg.king_buckets = flags.num("king-buckets", cfg.king_buckets);
            cfg.bucketed_pockets |= flags.switch("bucketed-pockets");
            cfg.epochs = flags.num("epochs", cfg.epochs);
            cfg.batch = flags.num("batch", cfg.batch);
            cfg.limit = flags.num("limit", cfg.limit);
            cfg.threads = flags.num("threads", cfg.threads);
            cfg.seed = flags.num("seed", cfg.seed as usize) as u64;
            cfg.lr = flags.float("lr", cfg.lr);
            cfg.lr_end =
                flags.float("lr-end", cfg.lr * madhouse::tools::train::DEFAULT_LR_END_FRACTION);
            cfg.lambda = flags.float("lambda", cfg.lambda);
            cfg.k = flags.float("k", cfg.k);
            cfg.validation = flags.float("validation", cfg.validation);
            if let Some(v) = flags.get("variant") {
                cfg.variant = v.parse().unwrap_or_else(|e: UnknownVariant| fail(&e.to_string()));
            }
            if let Some(c) = flags.get("checkpoint") {
                cfg.checkpoint = c.into();
            }
            flags.finish();
            if let Err(e) = madhouse::tools::train::train(&cfg) {
                fail(&e.to_string());
            }
        }
        other => fail(&format!("unknown argument '{other}' (see --help)")),
    }
}

fn datagen(flags: &Flags) {
    use madhouse::tools::datagen::{self, files};
    use std::io::Write;
    use std::path::Path;
    let variant: Variant = flags
        .get("variant")
        .unwrap_or("crazyhouse")
        .parse()
        .unwrap_or_else(|e: UnknownVariant| fail(&e.to_string()));
    if let Some(path) = flags.get("info") {
        flags.finish();
        match files::info(Path::new(path)) {
            // A closed pipe (`| head`) is not an error worth a panic.
            Ok(info) => drop(writeln!(std::io::stdout(), "{info}")),
            Err(e) => fail(&format!("{path}: {e}")),
        }
        return;
    }
    let out = flags.get("out").unwrap_or_else(|| fail("datagen needs --out FILE"));
    if let Some(input) = flags.get("convert-legacy") {
        flags.finish();
        match files::convert_legacy(Path::new(input), Path::new(out)) {
            Ok(summary) => eprintln!("convert: {summary}"),
            Err(e) => fail(&e.to_string()),
        }
        return;
    }
    if let Some(input) = flags.get("convert-text") {
        flags.finish();
        match files::convert_text(Path::new(input), Path::new(out), variant) {
            Ok(summary) => eprintln!("convert: {summary}"),
            Err(e) => fail(&e.to_string()),
        }
        return;
    }
    let limit = match (flags.get("nodes"), flags.get("depth")) {
        (Some(_), Some(_)) => fail("give --nodes or --depth, not both"),
        (None, Some(_)) => datagen::SearchLimit::Depth(flags.num("depth", 8).clamp(1, 64) as i32),
        _ => datagen::SearchLimit::Nodes(flags.num("nodes", 5000).max(1) as u64),
    };
    let cores = std::thread::available_parallelism().map_or(1, |n| n.get());
    let (games, threads) = (flags.num("games", 1000) as u64, flags.num("threads", cores).max(1));
    let (random_plies, seed) = (flags.num("random-plies", 2), flags.num("seed", 1) as u64);
    let (openings, eval) = (flags.get("openings"), flags.get("eval"));
    let (add_seed, allow_mixed_settings) =
        (flags.switch("add-seed"), flags.switch("allow-mixed-settings"));
    // Every flag is read: refuse a stray one before loading files or starting games.
    flags.finish();
    let openings_path = openings;
    let openings = match openings {
        Some(path) => datagen::read_openings(Path::new(path), variant)
            .unwrap_or_else(|e| fail(&format!("{path}: {e}"))),
        None => Vec::new(),
    };
    // Without --eval, the games are played with the engine's default evaluation.
    let default_eval = if madhouse::engine::DEFAULT_USE_NNUE { "nnue" } else { "hce" };
    let openings_identity =
        madhouse::tools::datafile::openings_identity(openings_path.map(Path::new))
            .unwrap_or_else(|e| fail(&e.to_string()));
    let cfg = datagen::DatagenConfig {
        openings_identity,
        add_seed,
        allow_mixed_settings,
        out: out.into(),
        games,
        limit,
        threads,
        openings,
        random_plies,
        seed,
        variant,
        network: match eval.unwrap_or(default_eval) {
            "hce" => None,
            "nnue" => Some(madhouse::nnue::embedded()),
            path => Some(std::sync::Arc::new(
                madhouse::nnue::load_file(path).unwrap_or_else(|e| fail(&format!("{path}: {e}"))),
            )),
        },
    };
    if let Err(e) = datagen::run(&cfg) {
        fail(&e.to_string());
    }
}

fn fail(msg: &str) -> ! {
    eprintln!("madhouse: {msg}");
    std::process::exit(2);
}

/// `--name value` pairs and `--switch`es of a subcommand. Each lookup remembers the name it
/// asked for, so `finish` can refuse whatever the subcommand never read: a misspelt flag must
/// not be silently ignored, and the names live only where they are read. A flag followed by
/// another flag (or by nothing) has no value; `get` refuses that for a flag that needs one,
/// and `switch` refuses a value given to a switch.
struct Flags {
    /// Name and value, `None` when none followed.
    pairs: Vec<(String, Option<String>)>,
    read: std::cell::RefCell<Vec<String>>,
}

impl Flags {
    fn parse(args: &[String]) -> Flags {
        let mut out = Vec::new();
        let mut it = args.iter().peekable();
        while let Some(a) = it.next() {
            let Some(name) = a.strip_prefix("--") else {
                fail(&format!("unexpected argument '{a}'"))
            };
            let value = it.next_if(|v| !v.starts_with("--")).cloned();
            out.push((name.to_string(), value));
        }
        Flags { pairs: out, read: Default::default() }
    }

    /// Was the switch `--name` given? A value after it is refused (it would otherwise be a
    /// stray argument nobody reads).
    fn switch(&self, name: &str) -> bool {
        self.read.borrow_mut().push(name.to_string());
        match self.pairs.iter().find(|(n, _)| n == name) {
            None => false,
            Some((_, None)) => true,
            Some((_, Some(v))) => fail(&format!("--{name} takes no value (got '{v}')")),
        }
    }

    /// Fails on a flag that no lookup so far asked for. Called once the subcommand has read
    /// everything it uses and before it starts work.
    fn finish(&self) {
        let read = self.read.borrow();
        if let Some((n, _)) = self.pairs.iter().find(|(n, _)| !read.contains(n)) {
            fail(&format!("unknown flag --{n}, or one this command does not use (see --help)"));
        }
    }

    fn get(&self, name: &str) -> Option<&str> {
        self.read.borrow_mut().push(name.to_string());
        match self.pairs.iter().rev().find(|(n, _)| n == name) {
            None => None,
            Some((_, Some(v))) => Some(v),
            Some((_, None)) => fail(&format!("--{name} needs a value")),
        }
    }

    fn float(&self, name: &str, default: f32) -> f32 {
        match self.get(name) {
            None => default,
            Some(v) => v.parse().unwrap_or_else(|_| fail(&format!("--{name} needs a number"))),
        }
    }

    fn num(&self, name: &str, default: usize) -> usize {
        match self.get(name) {
            None => default,
            Some(v) => v.parse().unwrap_or_else(|_| fail(&format!("--{name} needs a number"))),
        }
    }
}
