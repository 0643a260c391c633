//! The `madhouse` binary: command-line tools (`bench`, `perft`, `datagen`, `train`, `tune`,
//! `--help`, `--version`) or, without arguments, the UCI/XBoard protocol loop on stdin/stdout.
//! The command line is parsed in [`cli`]; this file maps it to the tools' configs.

mod cli;

use std::io::Write;

use clap::Parser;
use madhouse::core::{Position, START_FEN};
use madhouse::ENGINE_NAME;

use cli::{Cli, Command, DatagenArgs, Optimizer, PerftArgs, Start, TrainArgs, TuneArgs};

fn main() {
    env_logger::Builder::from_env(env_logger::Env::default().default_filter_or("warn"))
        .target(env_logger::Target::Stderr)
        .init();
    let cli = Cli::parse();
    if cli.version {
        // The commit (build.rs) and the kernel the network runs on, detected as at load.
        let kernel = madhouse::nnue::Kernel::detect().name();
        let line = format!("{ENGINE_NAME} (commit {}, simd {kernel})", env!("MADHOUSE_COMMIT"));
        // A closed pipe (`| head -c0`) is not an error worth a panic.
        drop(writeln!(std::io::stdout(), "{line}"));
        return;
    }
    match cli.command {
        None => madhouse::protocol::run(),
        Some(Command::Bench(args)) => madhouse::bench::print(args.depth),
        Some(Command::Perft(args)) => perft(&args),
        Some(Command::Datagen(args)) => datagen(args),
        Some(Command::Train(args)) => train(args),
        Some(Command::Tune(args)) => tune(args),
    }
}

fn perft(args: &PerftArgs) {
    let fen = if args.fen.is_empty() { START_FEN.to_string() } else { args.fen.join(" ") };
    match Position::from_fen(&fen, args.variant) {
        Ok(pos) => madhouse::core::perft::print_divide(&pos, args.depth),
        Err(e) => fail(&e.to_string()),
    }
}

fn datagen(args: DatagenArgs) {
    use madhouse::tools::datagen::{self, files};
    if let Some(path) = &args.info {
        match files::info(path) {
            // A closed pipe (`| head`) is not an error worth a panic.
            Ok(info) => drop(writeln!(std::io::stdout(), "{info}")),
            Err(e) => fail(&format!("{}: {e}", path.display())),
        }
        return;
    }
    // clap requires --out unless --info is given; --shard-dir names the file for --seed.
    let out = match (args.out, &args.shard_dir) {
        (Some(out), _) => out,
        (None, Some(dir)) => {
            if let Err(e) = fs_err::create_dir_all(dir) {
                fail(&format!("--shard-dir: {e}"));
            }
            dir.join(datagen::shard_name(args.variant, args.seed))
        }
        (None, None) => fail("datagen needs --out FILE or --shard-dir DIR"),
    };
    if let Some(input) = &args.convert_legacy {
        match files::convert_legacy(input, &out) {
            Ok(summary) => eprintln!("convert: {summary}"),
            Err(e) => fail(&e.to_string()),
        }
        return;
    }
    if let Some(input) = &args.convert_text {
        // The input opens, or the error names it (the conversion's own would not).
        if let Err(e) = fs_err::File::open(input) {
            fail(&format!("--convert-text: {e}"));
        }
        match files::convert_text(input, &out, args.variant) {
            Ok(summary) => eprintln!("convert: {summary}"),
            Err(e) => fail(&e.to_string()),
        }
        return;
    }
    let limit = match args.depth {
        Some(depth) => datagen::SearchLimit::Depth(depth),
        None => datagen::SearchLimit::Nodes(args.nodes),
    };
    let openings = match &args.openings {
        Some(path) => datagen::read_openings(path, args.variant)
            .unwrap_or_else(|e| fail(&format!("{}: {e}", path.display()))),
        None => Vec::new(),
    };
    let openings_identity = madhouse::tools::datafile::openings_identity(args.openings.as_deref())
        .unwrap_or_else(|e| fail(&e.to_string()));
    let cfg = datagen::DatagenConfig {
        openings_identity,
        all_positions: args.all_positions,
        add_seed: args.add_seed,
        allow_mixed_settings: args.allow_mixed_settings,
        out,
        games: args.games,
        limit,
        threads: args.threads.unwrap_or_else(cores),
        openings,
        random_plies: args.random_plies,
        seed: args.seed,
        variant: args.variant,
        network: match args.eval.as_str() {
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

fn train(args: TrainArgs) {
    use madhouse::tools::train::{self, TrainConfig, DEFAULT_LR_END_FRACTION};
    let mut cfg = TrainConfig::new(args.data, args.out);
    // The run is the size of the --init network unless --hidden or --buckets say otherwise
    // (a larger --hidden widens it). An unreadable file keeps the defaults: training reports
    // it before loading any data.
    if let Some(net) = args.init.as_ref().and_then(|p| madhouse::nnue::load_file(p).ok()) {
        (cfg.hidden, cfg.buckets) = (net.hidden(), net.buckets());
        (cfg.king_buckets, cfg.bucketed_pockets) =
            (net.inputs().king_buckets(), net.inputs().bucketed_pockets());
    }
    cfg.init = args.init;
    cfg.hidden = args.hidden.unwrap_or(cfg.hidden);
    cfg.buckets = args.buckets.unwrap_or(cfg.buckets);
    cfg.king_buckets = args.king_buckets.unwrap_or(cfg.king_buckets);
    cfg.bucketed_pockets |= args.bucketed_pockets;
    cfg.epochs = args.epochs;
    cfg.batch = args.batch;
    cfg.lr = args.lr;
    cfg.lr_end = args.lr_end.unwrap_or(args.lr * DEFAULT_LR_END_FRACTION);
    cfg.bucket_lr = args.bucket_lr;
    cfg.input_lr = args.input_lr;
    cfg.lambda = args.lambda;
    cfg.k = args.k;
    cfg.validation = args.validation;
    cfg.limit = args.limit.unwrap_or(0);
    cfg.threads = args.threads.unwrap_or(0);
    cfg.seed = args.seed;
    cfg.variant = args.variant;
    if let Some(c) = args.checkpoint {
        cfg.checkpoint = c;
    }
    cfg.resume = args.resume;
    cfg.mirror_files = args.mirror_files;
    cfg.filter = madhouse::tools::data::Filter {
        keep_noisy: args.keep_captures,
        keep_checks: args.keep_checks,
        min_ply: args.min_ply,
    };
    if let Err(e) = train::train(&cfg) {
        fail(&e.to_string());
    }
}

fn tune(args: TuneArgs) {
    use madhouse::tools::tune::{self, TuneConfig, DEFAULT_OUT, DEFAULT_RATE_ADAM};
    // The default output is the checkout's source file; elsewhere there is none to rewrite,
    // and a run that found out only when writing would lose its epochs.
    let out = match args.out {
        Some(out) => out,
        None if std::path::Path::new(DEFAULT_OUT).is_file() => DEFAULT_OUT.into(),
        None => fail(&format!(
            "tune needs --out FILE here: its default, {DEFAULT_OUT}, is a file of a Madhouse \
             checkout and there is none in this directory"
        )),
    };
    let mut cfg = TuneConfig::new(args.data, out);
    cfg.adam = args.optimizer == Optimizer::Adam;
    cfg.rate = args.rate.unwrap_or(if cfg.adam { DEFAULT_RATE_ADAM } else { cfg.rate });
    cfg.epochs = args.epochs;
    cfg.limit = args.limit.unwrap_or(0);
    cfg.from_hand_made = args.start == Start::HandMade;
    cfg.l2 = args.l2;
    cfg.k = args.k;
    cfg.threads = args.threads.unwrap_or(0);
    if let Err(e) = tune::tune(&cfg) {
        fail(&e.to_string());
    }
}

/// Every core: the default of `--threads`.
fn cores() -> usize {
    std::thread::available_parallelism().map_or(1, |n| n.get())
}

/// Ends a tool that failed: the message on stderr, exit code 2 (as clap's usage errors).
fn fail(msg: &str) -> ! {
    eprintln!("madhouse: {msg}");
    std::process::exit(2);
}
