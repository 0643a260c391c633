//! The network options through the protocols: `EvalFile` loads a network file (a bad one is
//! refused with a message and the network in use stays), `Use NNUE` switches to the
//! hand-written evaluation, and the built-in network loads.

mod proto;

use std::time::Duration;

use madhouse::nnue::{Network, INPUTS, QA, QB, SCALE};
use proto::Engine;

/// A network whose every weight is zero but the output bias: it scores every position
/// `bias * SCALE / (QA * QB)` centipawns, a value computed here by hand from the file format.
fn constant_network(dir: &std::path::Path, cp: i32) -> std::path::PathBuf {
    let h = 32;
    let bias = cp * QA * QB / SCALE;
    assert_eq!(bias * SCALE / (QA * QB), cp, "pick a cp the quantisation represents exactly");
    let net = Network::new(h, vec![0; INPUTS * h], vec![0; h], vec![0; 2 * h], vec![bias]).unwrap();
    let path = dir.join(format!("constant-{cp}.nnue"));
    net.save(&path).unwrap();
    path
}

/// The network's score line of `eval`, in centipawns from White's side.
fn network_eval(e: &mut Engine) -> i32 {
    e.send("eval");
    let lines = e.read_until(|l| l.starts_with("Network ("), Duration::from_secs(20));
    let line = lines.last().unwrap_or_else(|| e.fail("no network line from eval"));
    let white = line.rsplit('(').next().unwrap();
    let cp = white.split_whitespace().next().unwrap().parse().unwrap_or_else(|_| e.fail(line));
    e.sync(); // the hand-written breakdown follows
    cp
}

#[test]
fn the_built_in_network_loads() {
    let net = madhouse::nnue::embedded();
    assert!(net.hidden() > 0);
    // Not a constant network: the two sides' positions score differently.
    let start = madhouse::core::Position::startpos(madhouse::core::Variant::Crazyhouse);
    let up = madhouse::core::Position::from_fen(
        "rnbqkbnr/pppppppp/8/8/8/8/PPPPPPPP/RNBQKBNR[QQ] w KQkq - 0 1",
        madhouse::core::Variant::Crazyhouse,
    )
    .unwrap();
    let (a, b) = (
        madhouse::nnue::evaluate_position(&net, &start),
        madhouse::nnue::evaluate_position(&net, &up),
    );
    assert!(b > a + 300, "two extra queens in hand: {b} against {a}");
}

#[test]
fn eval_file_over_uci() {
    let dir = std::env::temp_dir().join(format!("madhouse-nnue-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let good = constant_network(&dir, 100);
    let truncated = dir.join("truncated.nnue");
    let bytes = std::fs::read(&good).unwrap();
    std::fs::write(&truncated, &bytes[..bytes.len() / 2]).unwrap();

    let (mut e, _) = Engine::uci();
    e.send("setoption name Use NNUE value true");
    e.send("position startpos moves e2e4");
    let built_in = network_eval(&mut e);

    #[allow(unused_mut)] // nothing is pushed on Windows
    let mut bad_files = vec![dir.join("missing.nnue"), truncated];
    // A device that never ends is refused too, without reading it all (Unix only: Windows
    // has no such file, and a missing path is the first case already).
    #[cfg(unix)]
    bad_files.push(std::path::PathBuf::from("/dev/zero"));
    for bad in bad_files {
        e.send(&format!("setoption name EvalFile value {}", bad.display()));
        let lines = e.sync();
        e.check(
            lines.iter().any(|l| l.starts_with("info string EvalFile not changed")),
            &format!("no refusal for {}: {lines:?}", bad.display()),
        );
        let now = network_eval(&mut e);
        e.check(now == built_in, "a refused file changed the network");
    }

    e.send(&format!("setoption name EvalFile value {}", good.display()));
    let lines = e.sync();
    e.check(lines.iter().all(|l| !l.starts_with("info string")), "good file refused");
    // Black to move: 100 cp for the side to move is -100 from White's side.
    let now = network_eval(&mut e);
    e.check(now == -100, "the loaded network is not in use");
    // The search evaluates with it: every leaf of a depth-1 search has White to move and
    // scores +100 for White, so Black's root score is -100.
    let out = e.go("go depth 1", Duration::from_secs(20));
    let last = out.last_scored().map(|l| l.raw.clone()).unwrap_or_default();
    e.check(last.contains("score cp -100 "), &format!("search score: {last}"));

    // Another network (200 cp): the next search scores with it, not with the first one's
    // evaluations left in the hash table (the build before the switch started afresh kept
    // them and reported -100 again).
    let other = constant_network(&dir, 200);
    e.send(&format!("setoption name EvalFile value {}", other.display()));
    e.sync();
    let out = e.go("go depth 1", Duration::from_secs(20));
    let last = out.last_scored().map(|l| l.raw.clone()).unwrap_or_default();
    e.check(last.contains("score cp -200 "), &format!("after a new EvalFile: {last}"));

    // The hand-written evaluation: neither network's score comes back from the table.
    e.send("setoption name Use NNUE value false");
    let out = e.go("go depth 1", Duration::from_secs(20));
    let last = out.last_scored().map(|l| l.raw.clone()).unwrap_or_default();
    e.check(
        !last.is_empty() && !last.contains("score cp -200 ") && !last.contains("score cp -100 "),
        &format!("Use NNUE false still scores with the network: {last}"),
    );

    e.send("setoption name EvalFile value <internal>");
    e.send("setoption name Use NNUE value true");
    let now = network_eval(&mut e);
    e.check(now == built_in, "<internal> does not restore the built-in network");
    e.assert_healthy();
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn eval_file_over_xboard() {
    let (mut e, features) = Engine::xboard();
    let use_nnue = format!("UseNNUE -check {}", madhouse::engine::DEFAULT_USE_NNUE as u8);
    for name in ["EvalFile -file <internal>", use_nnue.as_str()] {
        e.check(
            features.iter().any(|l| l.contains(&format!("option=\"{name}\""))),
            &format!("no feature for {name}: {features:?}"),
        );
    }
    e.send("option EvalFile=/nonexistent/net.nnue");
    let lines = e.ping(1);
    e.check(
        lines.iter().any(|l| l.contains("EvalFile not changed")),
        &format!("no refusal: {lines:?}"),
    );
    e.send("option UseNNUE=0");
    e.send("option UseNNUE=2");
    let lines = e.ping(2);
    e.check(lines.iter().any(|l| l.starts_with("Error (bad option value)")), "UseNNUE=2 accepted");
    e.assert_healthy();
}

/// The score of the first thinking line (`ply score time nodes pv`) before the engine's
/// `move` over XBoard.
fn xboard_think_score(e: &mut Engine) -> i32 {
    e.send("go");
    let lines = e.read_until(|l| l.starts_with("move "), Duration::from_secs(20));
    let think = lines
        .iter()
        .find(|l| l.split_whitespace().next().is_some_and(|w| w.parse::<u32>().is_ok()))
        .unwrap_or_else(|| e.fail(&format!("no thinking line: {lines:?}")));
    think.split_whitespace().nth(1).and_then(|s| s.parse().ok()).unwrap_or_else(|| e.fail(think))
}

#[test]
fn a_new_network_over_xboard_starts_the_search_afresh() {
    // As over UCI: after EvalFile names another network, the next search scores with it and
    // not with the first network's evaluations left in the hash table (no `new` between).
    let dir = std::env::temp_dir().join(format!("madhouse-nnue-xb-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let (first, second) = (constant_network(&dir, 100), constant_network(&dir, 200));
    let (mut e, _) = Engine::xboard();
    let fen = "rnbqkbnr/pppppppp/8/8/4P3/8/PPPP1PPP/RNBQKBNR[] b KQkq - 0 1";
    for c in ["new", "force", &format!("setboard {fen}"), "sd 1", "post"] {
        e.send(c);
    }
    e.send(&format!("option EvalFile={}", first.display()));
    e.ping(1);
    // Black to move; every leaf has White to move at +100 for White: Black scores -100.
    let score = xboard_think_score(&mut e);
    e.check(score == -100, &format!("first network: {score}"));
    for c in ["force", "undo"] {
        e.send(c);
    }
    e.send(&format!("option EvalFile={}", second.display()));
    e.ping(2);
    let score = xboard_think_score(&mut e);
    e.check(score == -200, &format!("after a new EvalFile: {score}"));
    e.assert_healthy();
    let _ = std::fs::remove_dir_all(&dir);
}
