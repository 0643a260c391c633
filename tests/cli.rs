//! The command line as a user meets it, through the built binary: every subcommand's
//! `--help` exits 0 and shows each flag with its default, `--flag=value` works, and unknown
//! flags, `--threads 0` and flags without their value are refused by name.

use std::path::PathBuf;
use std::process::{Command, Output};

use madhouse::tools::{train, tune};

/// Runs `madhouse ARGS` in `dir` (the temporary folder when `None`).
fn run_in(dir: Option<&PathBuf>, args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_madhouse"))
        .args(args)
        .current_dir(dir.cloned().unwrap_or_else(std::env::temp_dir))
        .output()
        .unwrap()
}

fn run(args: &[&str]) -> Output {
    run_in(None, args)
}

fn stdout(o: &Output) -> String {
    String::from_utf8_lossy(&o.stdout).into_owned()
}

fn stderr(o: &Output) -> String {
    String::from_utf8_lossy(&o.stderr).into_owned()
}

/// A folder of its own for one test.
fn temp_dir(name: &str) -> PathBuf {
    let dir = std::env::temp_dir().join(format!("madhouse-cli-{name}-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    dir
}

/// Checks `madhouse SUB --help`: exit 0, and each flag of `flags` on a line of its own with
/// the default given (`None`: no default is shown), and no flag the table does not know (a
/// new flag must be added here with its default).
fn check_help(sub: &str, flags: &[(&str, Option<String>)]) {
    let out = run(&[sub, "--help"]);
    assert!(out.status.success(), "{sub} --help: {}", stderr(&out));
    let help = stdout(&out);
    for (flag, default) in flags {
        let line = help
            .lines()
            .find(|l| l.trim_start().starts_with(&format!("{flag} ")) || l.trim() == *flag)
            .unwrap_or_else(|| panic!("{sub} --help does not show {flag}:\n{help}"));
        match default {
            Some(d) => {
                assert!(line.contains(&format!("[default: {d}")), "{sub} {flag}: {line}")
            }
            None => assert!(!line.contains("[default:"), "{sub} {flag}: {line}"),
        }
    }
    let shown = help.lines().filter(|l| l.trim_start().starts_with("--")).count();
    // The table has every flag but --help (shown as `-h, --help`).
    assert_eq!(shown, flags.len(), "{sub}: a flag missing from the table:\n{help}");
}

fn d(v: impl ToString) -> Option<String> {
    Some(v.to_string())
}

#[test]
fn every_subcommand_shows_each_flag_with_its_default() {
    let all_cores = d("all cores");
    check_help(
        "datagen",
        &[
            ("--out", None),
            ("--shard-dir", None),
            ("--games", d(1000)),
            ("--nodes", d(5000)),
            ("--depth", None),
            ("--threads", all_cores.clone()),
            ("--openings", d("the start position")),
            ("--random-plies", d(2)),
            ("--seed", d(1)),
            ("--variant", d("crazyhouse")),
            ("--eval", d(if madhouse::engine::DEFAULT_USE_NNUE { "nnue" } else { "hce" })),
            ("--all-positions", None),
            ("--add-seed", None),
            ("--allow-mixed-settings", None),
            ("--convert-text", None),
            ("--convert-legacy", None),
            ("--info", None),
        ],
    );
    check_help(
        "train",
        &[
            ("--data", None),
            ("--out", None),
            ("--init", None),
            ("--hidden", d(madhouse::nnue::DEFAULT_HIDDEN)),
            ("--buckets", d(train::DEFAULT_BUCKETS)),
            ("--king-buckets", d(train::DEFAULT_KING_BUCKETS)),
            ("--bucketed-pockets", None),
            ("--epochs", d(train::DEFAULT_EPOCHS)),
            ("--batch", d(train::DEFAULT_BATCH)),
            ("--lr", d(train::DEFAULT_LR)),
            ("--lr-end", d(format!("--lr x {}", train::DEFAULT_LR_END_FRACTION))),
            ("--bucket-lr", d(train::DEFAULT_BUCKET_LR)),
            ("--input-lr", d(train::DEFAULT_INPUT_LR)),
            ("--lambda", d(train::DEFAULT_LAMBDA)),
            ("--k", d(train::DEFAULT_K)),
            ("--validation", d(train::DEFAULT_VALIDATION)),
            ("--limit", d("all")),
            ("--threads", all_cores.clone()),
            ("--seed", d(train::DEFAULT_SEED)),
            ("--variant", d("crazyhouse")),
            ("--checkpoint", d("NET.ckpt")),
            ("--resume", None),
            ("--mirror-files", None),
            ("--keep-captures", None),
            ("--keep-checks", None),
            ("--min-ply", d(train::DEFAULT_MIN_PLY)),
        ],
    );
    check_help(
        "tune",
        &[
            ("--data", None),
            ("--out", d(tune::DEFAULT_OUT)),
            ("--epochs", d(tune::DEFAULT_EPOCHS)),
            ("--rate", d(format!("{} with gd", tune::DEFAULT_RATE_GD))),
            ("--limit", d("all")),
            ("--l2", d(tune::DEFAULT_L2)),
            ("--optimizer", d("gd")),
            ("--start", d("current")),
            ("--k", d("fitted")),
            ("--threads", all_cores.clone()),
        ],
    );
    check_help("perft", &[("--variant", d("crazyhouse"))]);
    check_help("bench", &[]);
    let bench = stdout(&run(&["bench", "--help"]));
    assert!(bench.contains(&format!("[default: {}]", madhouse::bench::DEFAULT_DEPTH)), "{bench}");
    // The top level: help and version exit 0.
    let top = run(&["--help"]);
    assert!(top.status.success());
    for sub in ["bench", "perft", "datagen", "train", "tune"] {
        assert!(stdout(&top).contains(sub), "{}", stdout(&top));
    }
    // The version names the commit (a hash, `unknown` without git) and the SIMD kernel.
    let version = run(&["--version"]);
    assert!(version.status.success());
    let text = stdout(&version);
    let kernel = madhouse::nnue::Kernel::detect().name();
    assert!(text.starts_with(&format!("{} (commit ", madhouse::ENGINE_NAME)), "{text}");
    assert!(text.trim_end().ends_with(&format!(", simd {kernel})")), "{text}");
    let commit = text.split("(commit ").nth(1).and_then(|t| t.split(',').next()).unwrap();
    let hash = commit.trim_end_matches("-dirty");
    assert!(
        commit == "unknown" || (hash.len() >= 7 && hash.chars().all(|c| c.is_ascii_hexdigit())),
        "{text}"
    );
}

#[test]
fn flags_take_their_value_after_an_equals_sign() {
    // `--out=x` reaches the tool: the conversion writes the file it names.
    let dir = temp_dir("equals");
    let data = format!("{}/tests/data/scored-sample.txt", env!("CARGO_MANIFEST_DIR"));
    let out = run_in(
        Some(&dir),
        &["datagen", &format!("--convert-text={data}"), "--out=x.bin", "--variant=crazyhouse"],
    );
    assert!(out.status.success(), "{}", stderr(&out));
    assert!(std::fs::metadata(dir.join("x.bin")).unwrap().len() > 0);
    // And the same in a tool that then fails on the data: the error is about the file, not
    // about the command line.
    let out = run(&["train", "--data=missing.bin", "--out=x.nnue", "--epochs=3"]);
    assert!(!out.status.success());
    assert!(stderr(&out).contains("missing.bin"), "{}", stderr(&out));
    std::fs::remove_dir_all(&dir).unwrap();
}

#[test]
fn bad_command_lines_are_refused_by_name() {
    let cases: [(&[&str], &str); 10] = [
        (&["train", "--data", "d.bin", "--out", "n.nnue", "--bogus", "1"], "'--bogus'"),
        (&["datagen", "--out", "x.bin", "--threads", "0"], "invalid value '0' for '--threads"),
        (&["train", "--data", "d.bin", "--out", "n.nnue", "--threads", "0"], "'--threads"),
        (&["tune", "--data", "d.txt", "--out", "w.rs", "--threads", "0"], "'--threads"),
        (&["train", "--data", "d.bin", "--out"], "a value is required for '--out"),
        (&["datagen", "--out", "x.bin", "--games"], "a value is required for '--games"),
        (&["tune", "--data", "d.txt", "--epochs", "many"], "invalid value 'many' for '--epochs"),
        (&["bench", "31"], "invalid value '31'"),
        (&["perft", "1", "--variant", "atomic"], "unsupported variant 'atomic'"),
        (&["frobnicate"], "unrecognized subcommand 'frobnicate'"),
    ];
    for (args, expected) in cases {
        let out = run(args);
        assert!(!out.status.success(), "{args:?} succeeded");
        assert!(stderr(&out).contains(expected), "{args:?}: {}", stderr(&out));
        assert!(stdout(&out).is_empty(), "{args:?} printed on stdout: {}", stdout(&out));
    }
    // `--threads 0` says what to do instead.
    let out = run(&["datagen", "--out", "x.bin", "--threads", "0"]);
    assert!(stderr(&out).contains("leave --threads out to use every core"), "{}", stderr(&out));
}

#[test]
fn perft_takes_a_fen_as_words_and_a_variant() {
    let out = run(&["perft", "2", "--variant", "loop"]);
    assert!(out.status.success(), "{}", stderr(&out));
    assert!(stdout(&out).contains("Nodes searched: 400"), "{}", stdout(&out));
    // The FEN's fields as separate words, the flag after them.
    let fen = "rnbqkbnr/pppppppp/8/8/8/8/PPPPPPPP/RNBQKBNR[] w KQkq - 0 1";
    let words: Vec<&str> = fen.split(' ').collect();
    let out = run(&[&["perft", "1"], &words[..], &["--variant=crazyhouse"]].concat());
    assert!(out.status.success(), "{}", stderr(&out));
    assert!(stdout(&out).contains("Nodes searched: 20"), "{}", stdout(&out));
}

#[test]
fn tune_writes_no_source_file_outside_a_checkout() {
    // In a folder without src/eval/tuned.rs, tune wants --out, and says so before reading the
    // data (which exists and would take the run to its end otherwise).
    let dir = temp_dir("tune-out");
    let data = format!("{}/tests/data/scored-sample.txt", env!("CARGO_MANIFEST_DIR"));
    let out = run_in(Some(&dir), &["tune", "--data", &data, "--epochs", "1"]);
    assert!(!out.status.success());
    let err = stderr(&out);
    assert!(err.contains("tune needs --out FILE") && err.contains(tune::DEFAULT_OUT), "{err}");
    assert!(!err.contains("training and"), "the data was read first: {err}");
    // In a checkout the default holds: the run goes on to the data (too few positions with
    // --limit 10), and the source file is not written.
    std::fs::create_dir_all(dir.join("src/eval")).unwrap();
    std::fs::write(dir.join(tune::DEFAULT_OUT), "// placeholder\n").unwrap();
    let args = ["tune", "--data", &data, "--epochs", "1", "--threads", "1", "--limit", "10"];
    let out = run_in(Some(&dir), &args);
    assert!(stderr(&out).contains("too few positions"), "{}", stderr(&out));
    assert_eq!(std::fs::read_to_string(dir.join(tune::DEFAULT_OUT)).unwrap(), "// placeholder\n");
    std::fs::remove_dir_all(&dir).unwrap();
}

#[test]
fn file_errors_name_the_file_and_come_before_the_work() {
    // Each run's data exists and is read only after the check: the message that the data was
    // loaded ("too few positions" for this small sample, or tune's count) must not appear.
    let data = format!("{}/tests/data/scored-sample.txt", env!("CARGO_MANIFEST_DIR"));
    let dir = temp_dir("file-errors");
    let folder = dir.to_string_lossy().into_owned();
    let cases: [(&[&str], &[&str]); 5] = [
        (
            &["train", "--data", &data, "--out", "/nonexistent/n.nnue"],
            &["cannot create /nonexistent/n.nnue"],
        ),
        (
            &["train", "--data", &data, "--out", "n.nnue", "--resume"],
            &["--resume", "failed to open file `n.nnue.ckpt`"],
        ),
        (&["train", "--data", &data, "--out", &folder], &["it is a directory", &folder]),
        (
            &["tune", "--data", &data, "--out", "/nonexistent/w.rs"],
            &["cannot create /nonexistent/w.rs"],
        ),
        (
            &["datagen", "--convert-text", "/nope.txt", "--out", "x.bin"],
            &["--convert-text", "failed to open file `/nope.txt`"],
        ),
    ];
    for (args, expected) in cases {
        let out = run_in(Some(&dir), args);
        let err = stderr(&out);
        assert!(!out.status.success(), "{args:?} succeeded");
        for e in expected {
            assert!(err.contains(e), "{args:?}: {err}");
        }
        assert!(!err.contains("too few") && !err.contains("positions"), "{args:?}: {err}");
    }
    // Nothing was left behind: no probe, no output, no converted file.
    assert_eq!(std::fs::read_dir(&dir).unwrap().count(), 0);
    std::fs::remove_dir_all(&dir).unwrap();
}

#[test]
fn shards_are_named_by_seed_and_refused_files_are_left_as_they_were() {
    let dir = temp_dir("shards");
    let shards = dir.join("shards");
    for seed in ["7", "8"] {
        let out = run_in(
            Some(&dir),
            &["datagen", "--shard-dir", "shards", "--seed", seed, "--games", "1", "--depth", "1"],
        );
        assert!(out.status.success(), "{}", stderr(&out));
    }
    let mut names: Vec<String> = std::fs::read_dir(&shards)
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    names.sort();
    assert_eq!(names, ["crazyhouse-seed7.bin", "crazyhouse-seed8.bin"]);
    // --info reads a shard's header; a text file given as --out is refused and kept.
    let info = run_in(Some(&dir), &["datagen", "--info", "shards/crazyhouse-seed7.bin"]);
    assert!(stdout(&info).contains("seed 7: 1 games"), "{}", stdout(&info));
    std::fs::write(dir.join("notes.txt"), "keep me\n").unwrap();
    let out = run_in(Some(&dir), &["datagen", "--out=notes.txt", "--games", "1", "--depth", "1"]);
    assert_eq!(out.status.code(), Some(2));
    assert!(stderr(&out).contains("notes.txt"), "{}", stderr(&out));
    assert_eq!(std::fs::read_to_string(dir.join("notes.txt")).unwrap(), "keep me\n");
    let _ = std::fs::remove_dir_all(&dir);
}
