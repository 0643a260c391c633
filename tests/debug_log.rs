//! `RUST_LOG=debug` shows what a user debugging a game in a GUI needs, on stderr only: each
//! command received (UCI and XBoard), each option set with its value, the network loaded
//! (file and size) and the time the move gets when a search starts.

use std::io::Write;
use std::process::{Child, Command, Output, Stdio};

/// The engine with `RUST_LOG=debug`, its three streams piped.
fn spawn() -> Child {
    Command::new(env!("CARGO_BIN_EXE_madhouse"))
        .env("RUST_LOG", "debug")
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap()
}

/// Runs the engine with `RUST_LOG=debug`, sends `lines` and closes its input (which reads as
/// `quit`); waits for it to end.
fn session(lines: &[&str]) -> Output {
    let mut child = spawn();
    let mut stdin = child.stdin.take().unwrap();
    for l in lines {
        writeln!(stdin, "{l}").unwrap();
    }
    drop(stdin);
    child.wait_with_output().unwrap()
}

fn check(out: &Output, expected: &[String]) {
    let (stdout, stderr) =
        (String::from_utf8_lossy(&out.stdout), String::from_utf8_lossy(&out.stderr));
    assert!(out.status.success(), "{stderr}");
    for e in expected {
        assert!(stderr.contains(e.as_str()), "stderr lacks '{e}':\n{stderr}");
    }
    for marker in ["DEBUG", "command:", "set to", "network loaded", "search started"] {
        assert!(!stdout.contains(marker), "a log line reached stdout ({marker}):\n{stdout}");
    }
}

#[test]
fn uci_session_logs_commands_options_network_and_time() {
    let net = format!("{}/src/nnue/default.nnue", env!("CARGO_MANIFEST_DIR"));
    let size = std::fs::metadata(&net).unwrap().len();
    let eval_file = format!("setoption name EvalFile value {net}");
    let out = session(&[
        "uci",
        "setoption name Hash value 32",
        &eval_file,
        "ucinewgame",
        "position startpos moves e2e4",
        "go wtime 60000 btime 60000 winc 1000 binc 1000",
        "isready",
        "quit",
    ]);
    check(
        &out,
        &[
            "uci command: uci".into(),
            "uci command: position startpos moves e2e4".into(),
            "option Hash set to 32".into(),
            format!("option EvalFile set to {net}"),
            format!("network loaded: {net} ({size} bytes"),
            "search started: time soft ".into(),
        ],
    );
    // A timed search shows its budget in milliseconds.
    let stderr = String::from_utf8_lossy(&out.stderr);
    let line = stderr.lines().find(|l| l.contains("search started")).unwrap();
    assert!(line.contains(" ms, hard ") && !line.contains("soft none"), "{line}");
    // The protocol's own output is still there.
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(stdout.contains("uciok") && stdout.contains("bestmove"), "{stdout}");
}

#[test]
fn xboard_session_logs_commands_and_options() {
    let out =
        session(&["xboard", "protover 2", "memory 16", "option MultiPV=2", "new", "sd 2", "go"]);
    check(
        &out,
        &[
            "xboard command: xboard".into(),
            "xboard command: protover 2".into(),
            "option Hash set to 16".into(),
            "option MultiPV set to 2".into(),
            "search started:".into(),
        ],
    );
}

/// With more than one thread, each search ends with one line giving every thread's
/// completed depth, move and score and the thread whose move is played (`scripts/threads.py
/// --movetime` sums these lines up); one thread logs no such line.
#[test]
fn a_search_with_threads_logs_how_they_spread() {
    use std::io::{BufRead, BufReader, Read};
    let lines = |threads: u32| -> Vec<String> {
        let mut child = spawn();
        let mut stdin = child.stdin.take().unwrap();
        writeln!(stdin, "uci\nsetoption name Threads value {threads}\nposition startpos").unwrap();
        writeln!(stdin, "go depth 8").unwrap();
        // The search must end by itself: `quit` would stop it early.
        let mut stdout = BufReader::new(child.stdout.take().unwrap());
        let mut shown = String::new();
        while !shown.contains("bestmove") {
            let mut line = String::new();
            assert!(stdout.read_line(&mut line).unwrap() > 0, "no bestmove:\n{shown}");
            shown.push_str(&line);
        }
        writeln!(stdin, "quit").unwrap();
        let mut stderr = String::new();
        child.stderr.take().unwrap().read_to_string(&mut stderr).unwrap();
        assert!(child.wait().unwrap().success(), "{stderr}");
        assert!(!shown.contains("played: thread"), "a log line reached stdout:\n{shown}");
        stderr.lines().filter(|l| l.contains("played: thread")).map(str::to_owned).collect()
    };
    let two = lines(2);
    assert_eq!(two.len(), 1, "{two:?}");
    let line = &two[0];
    assert!(line.contains("threads 0: depth 8 ") && line.contains(", 1: depth "), "{line}");
    assert!(line.ends_with("played: thread 0") || line.ends_with("played: thread 1"), "{line}");
    assert!(lines(1).is_empty());
}
