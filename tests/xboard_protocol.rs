//! XBoard / CECP v2 over pipes: the sequences of `shared/docs/protocols.md` §2.2 and §5 tests
//! 4-5 (XBoard, cutechess-cli, python-chess), replayed against the built binary.
//!
//! Checked throughout: every `move X` legal (the crate's own `Position::parse_uci`), in
//! coordinates with upper-case drops; thinking lines match
//! `^\d+ -?\d+ \d+ \d+( \d+ \d+ \d+)?\t` with a PV of legal coordinate moves only; no line
//! starting with `Error` or `Illegal` except where the specification asks for one; no thinking
//! output while pondering; `pong` when idle or pondering, after the move when thinking.
//! Searches are short (`st` <= 0.3 s, `sd` <= 6, small clocks). Deadlines only catch hangs;
//! how fast the engine answers is measured by `scripts/latency.py`.

mod proto;

use std::time::{Duration, Instant};

use madhouse::core::Position;
use proto::{engine_move, pos, startpos, uci_move_text_ok, Engine, HANG, T};

fn ms(n: u64) -> Duration {
    Duration::from_millis(n)
}

/// Is this a thinking line (starts with a digit)? Then it must be well formed.
fn is_thinking(l: &str) -> bool {
    l.as_bytes().first().is_some_and(u8::is_ascii_digit)
}

/// Checks a thinking line against `^\d+ -?\d+ \d+ \d+( \d+ \d+ \d+)?\t` and its PV against
/// `pos`: coordinate moves only (no move numbers, no `...`), all legal in sequence.
fn check_thinking(pos: &Position, l: &str) -> Result<(), String> {
    let (head, pv) = l.split_once('\t').ok_or_else(|| format!("no tab: {l:?}"))?;
    let nums: Vec<&str> = head.split(' ').collect();
    let digits = |s: &str| !s.is_empty() && s.bytes().all(|b| b.is_ascii_digit());
    let ok = (nums.len() == 4 || nums.len() == 7)
        && nums.iter().enumerate().all(|(i, n)| {
            if i == 1 {
                digits(n.strip_prefix('-').unwrap_or(n))
            } else {
                digits(n)
            }
        });
    if !ok {
        return Err(format!("thinking line does not match the format: {l:?}"));
    }
    let mut p = pos.clone();
    for m in pv.split_whitespace() {
        if !uci_move_text_ok(m) {
            return Err(format!("PV token '{m}' is not a coordinate move: {l:?}"));
        }
        let mv = engine_move(&p, m).map_err(|e| format!("PV of {l:?}: {e}"))?;
        p = p.after(mv);
    }
    Ok(())
}

/// The lines an engine printed for one move of ours: thinking lines then `move X` (and maybe a
/// result and `Hint:`). Checks each thinking line against `pos`, and that nothing starts with
/// `Error`/`Illegal`. Returns the move text and the lines.
fn read_move(e: &mut Engine, pos: &Position, timeout: Duration) -> (String, Vec<String>) {
    let lines = e.read_until(|l| l.starts_with("move "), timeout);
    for l in &lines {
        if is_thinking(l) {
            if let Err(m) = check_thinking(pos, l) {
                e.fail(&m);
            }
        } else if l.starts_with("Error") || l.starts_with("Illegal") || !l.starts_with("move ") {
            e.fail(&format!("unexpected line while thinking: {l}"));
        }
    }
    let mv = lines.last().unwrap()["move ".len()..].to_string();
    if let Err(m) = engine_move(pos, &mv) {
        e.fail(&format!("engine move: {m}"));
    }
    (mv, lines)
}

/// Sends commands, then a ping; nothing before the pong may start with `Error` or `Illegal`.
fn quietly(e: &mut Engine, cmds: &[&str], n: u32) -> Vec<String> {
    for c in cmds {
        e.send(c);
    }
    let lines = e.ping(n);
    if let Some(l) = lines.iter().find(|l| l.starts_with("Error") || l.starts_with("Illegal")) {
        e.fail(&format!("{cmds:?} answered with '{l}'"));
    }
    lines
}

/// cutechess's feature regex `(\w+)\s*=\s*("[^"]+"|\w+)`, applied repeatedly to a line.
fn cutechess_features(line: &str) -> Vec<(String, String)> {
    let c: Vec<char> = line.chars().collect();
    let w = |ch: char| ch.is_alphanumeric() || ch == '_';
    let mut out = Vec::new();
    let mut start = 0;
    'outer: while start < c.len() {
        let mut i = start;
        while i < c.len() && w(c[i]) {
            i += 1;
        }
        if i > start {
            let key: String = c[start..i].iter().collect();
            let mut j = i;
            while j < c.len() && c[j].is_whitespace() {
                j += 1;
            }
            if j < c.len() && c[j] == '=' {
                j += 1;
                while j < c.len() && c[j].is_whitespace() {
                    j += 1;
                }
                if j < c.len() && c[j] == '"' {
                    if let Some(end) = c[j + 1..].iter().position(|&ch| ch == '"') {
                        if end > 0 {
                            out.push((key, c[j..j + end + 2].iter().collect()));
                            start = j + end + 2;
                            continue 'outer;
                        }
                    }
                } else {
                    let mut k = j;
                    while k < c.len() && w(c[k]) {
                        k += 1;
                    }
                    if k > j {
                        out.push((key, c[j..k].iter().collect()));
                        start = k;
                        continue 'outer;
                    }
                }
            }
        }
        start += 1;
    }
    out
}

/// python-chess's view of a feature line: `shlex.split` (POSIX quotes), then `key=value`.
fn shlex_features(rest: &str) -> Result<Vec<(String, String)>, String> {
    let mut tokens = Vec::new();
    let mut cur = String::new();
    let mut in_token = false;
    let mut quote: Option<char> = None;
    let mut chars = rest.chars();
    while let Some(ch) = chars.next() {
        match quote {
            Some(q) if ch == q => quote = None,
            Some('"') if ch == '\\' => cur.push(chars.next().ok_or("dangling backslash")?),
            Some(_) => cur.push(ch),
            None if ch == '"' || ch == '\'' => {
                quote = Some(ch);
                in_token = true;
            }
            None if ch == '\\' => {
                cur.push(chars.next().ok_or("dangling backslash")?);
                in_token = true;
            }
            None if ch.is_whitespace() => {
                if in_token {
                    tokens.push(std::mem::take(&mut cur));
                    in_token = false;
                }
            }
            None => {
                cur.push(ch);
                in_token = true;
            }
        }
    }
    if quote.is_some() {
        return Err(format!("unbalanced quote in: {rest}"));
    }
    if in_token {
        tokens.push(cur);
    }
    tokens
        .into_iter()
        .map(|t| match t.split_once('=') {
            Some((k, v)) => Ok((k.to_string(), v.to_string())),
            None => Err(format!("feature token without '=': {t}")),
        })
        .collect()
}

/// `xboard`, `protover 2` → feature lines ending with `feature done=1`; required
/// features present; every line parses the same under cutechess's regex and python-chess's
/// `shlex.split`; option names have no spaces (python-chess takes the first word).
#[test]
fn handshake_features() {
    let mut e = Engine::start();
    e.send("xboard");
    e.send("protover 2");
    let lines = e.read_until(|l| l.starts_with("feature") && l.contains("done=1"), T);
    e.check(lines.last().unwrap() == "feature done=1", "last feature line is not done=1 alone");
    let mut features = std::collections::HashMap::new();
    for l in &lines {
        let rest =
            l.strip_prefix("feature ").unwrap_or_else(|| e.fail(&format!("not a feature: {l}")));
        let shlex = shlex_features(rest).unwrap_or_else(|m| e.fail(&m));
        let cc: Vec<(String, String)> = cutechess_features(l)
            .into_iter()
            .map(|(k, v)| (k, v.trim_matches('"').to_string()))
            .collect();
        e.check(shlex == cc, &format!("shlex {shlex:?} vs cutechess {cc:?} on: {l}"));
        for (k, v) in shlex {
            if k == "option" {
                let name = v.split_whitespace().next().unwrap_or("");
                e.check(
                    v.split(" -").next() == Some(name),
                    &format!("option name with spaces: {v}"),
                );
                continue;
            }
            features.insert(k, v);
        }
    }
    for (k, want) in
        [("ping", "1"), ("setboard", "1"), ("usermove", "1"), ("san", "0"), ("reuse", "1")]
    {
        e.check(
            features.get(k).map(String::as_str) == Some(want),
            &format!("feature {k}={want} missing: {features:?}"),
        );
    }
    e.check(features.get("sigterm").map(String::as_str) != Some("0"), "sigterm=0");
    let name = features.get("myname").cloned().unwrap_or_default();
    e.check(!name.is_empty() && !name.contains('\''), &format!("bad myname {name:?}"));
    let variants = features.get("variants").cloned().unwrap_or_default();
    e.check(!variants.contains(' '), &format!("spaces in variants: {variants:?}"));
    e.check(
        variants.split(',').any(|v| v == "crazyhouse"),
        &format!("crazyhouse not among variants: {variants:?}"),
    );
    // The GUI answers each feature; the engine stays silent.
    quietly(&mut e, &["accepted ping", "accepted setboard", "rejected nps", "accepted done"], 1);
}

/// cutechess (§2.2): `new`, `variant crazyhouse`, `force`, a dummy `b2b3`, `setboard` with
/// black to move, `level`, `post`, `easy`, `computer`, `name`; then `time`/`otim` + `go`, and
/// `usermove` replies; at the end `force` + `result`.
#[test]
fn cutechess_sequence() {
    let (mut e, _) = Engine::xboard();
    let fen = "r1bqkbnr/pppp1ppp/2n5/8/3P4/2N5/PPP2PPP/R1BQKBNR[Pp] b KQkq - 0 4";
    quietly(
        &mut e,
        &[
            "accepted ping",
            "new",
            "variant crazyhouse",
            "force",
            "b2b3",
            &format!("setboard {fen}"),
            "level 0 0:05 0.5",
            "post",
            "easy",
            "computer",
            "name cutechess-opponent",
        ],
        1,
    );
    let mut p = pos(fen);
    let (mut mine, mut theirs) = (500u64, 500u64);
    for turn in 0..4 {
        e.send(&format!("time {mine}"));
        e.send(&format!("otim {theirs}"));
        if turn == 0 {
            e.send("go");
        } else {
            // Our reply: the first board move the library lists.
            let legal = p.legal_moves();
            let m = legal.as_slice().iter().find(|m| !m.is_drop()).copied().unwrap();
            e.send(&format!("usermove {m}"));
            p = p.after(m);
            theirs -= 10;
        }
        let t0 = Instant::now();
        let (mv, _) = read_move(&mut e, &p, T);
        mine = (mine + 50).saturating_sub(t0.elapsed().as_millis() as u64 / 10);
        p = p.after(engine_move(&p, &mv).unwrap());
        if !p.has_legal_move() {
            break;
        }
    }
    let lines = quietly(&mut e, &["force", "result 1-0 {White mates}"], 2);
    e.check(lines.is_empty(), &format!("output after result: {lines:?}"));
    e.send("quit");
    let st = e.wait_exit(HANG);
    e.check(st.is_some_and(|s| s.success()), "no clean exit after quit");
}

/// python-chess / lichess-bot (§2.2): `new`, `variant`, `name`, `rating`, `computer`, `force`,
/// `setboard <FEN with []>` + every move as `usermove` (a drop among them), `st 10.0` then
/// `level 0 2:59 2.0` (a float increment; `level` must cancel `st`, or the engine would think
/// for 10 s), `time`, `otim`, `post`, `easy`, `go`; `ping` after the move. Next turn:
/// `force`, `undo`/`remove`, new moves, `go`.
#[test]
fn python_chess_sequence() {
    let (mut e, _) = Engine::xboard();
    let root = "rnbqkbnr/pppppppp/8/8/8/8/PPPPPPPP/RNBQKBNR[] w KQkq - 0 1";
    let moves = ["e2e4", "d7d5", "e4d5", "d8d5", "P@e4"];
    let mut cmds: Vec<String> =
        ["new", "variant crazyhouse", "name BOT somebody", "rating 2000 2100", "computer", "force"]
            .iter()
            .map(|s| s.to_string())
            .collect();
    cmds.push(format!("setboard {root}"));
    cmds.extend(moves.iter().map(|m| format!("usermove {m}")));
    cmds.extend(
        ["st 10.0", "level 0 2:59 2.0", "time 100", "otim 100", "post", "easy"].map(String::from),
    );
    let refs: Vec<&str> = cmds.iter().map(String::as_str).collect();
    quietly(&mut e, &refs, 1);

    let mut p = startpos();
    for m in moves {
        p = p.after(p.parse_uci(m).unwrap());
    }
    // `level` must cancel the earlier `st 10.0`: the move comes on the 1 s clock, and with
    // `st 10.0` still in force it would not come before this 9 s deadline.
    e.send("go");
    let (mv, _) = read_move(&mut e, &p, Duration::from_secs(9));
    let lines = e.ping(2);
    e.check(lines.is_empty(), &format!("output before pong: {lines:?}"));
    p = p.after(engine_move(&p, &mv).unwrap());

    // Next turn, python-chess style: force, take back our last move pair and replay it.
    let reply = p.legal_moves().as_slice()[0];
    p = p.after(reply);
    // After undo (1 ply) and remove (2 plies) we are back before `P@e4`; replay from there.
    quietly(&mut e, &["force", &format!("usermove {reply}"), "undo", "remove"], 3);
    let replay = [moves[4].to_string(), mv.clone(), reply.to_string()];
    let cmds: Vec<String> = replay.iter().map(|m| format!("usermove {m}")).collect();
    let refs: Vec<&str> = cmds.iter().map(String::as_str).collect();
    quietly(&mut e, &refs, 4);
    quietly(&mut e, &["time 100", "otim 100", "nopost"], 5);
    e.send("go");
    let (_, lines) = read_move(&mut e, &p, Duration::from_secs(9));
    e.check(lines.len() == 1, &format!("thinking output after nopost: {lines:?}"));
    let lines = e.ping(6);
    e.check(lines.is_empty(), &format!("output before pong: {lines:?}"));
}

/// `ping N` → `pong N` at once when idle; while thinking the pong comes after the move (SPEC
/// §8); `?` makes the engine move now.
#[test]
fn ping_and_move_now() {
    let (mut e, _) = Engine::xboard();
    let lines = e.ping(7);
    e.check(lines.is_empty(), "idle ping");

    quietly(&mut e, &["new", "force", "st 30", "post"], 8);
    e.send("go");
    let first = e.collect_for(ms(300));
    e.check(!first.iter().any(|l| l.starts_with("move")), "moved before ?");
    e.send("ping 9");
    let held = e.collect_for(ms(200));
    e.check(!held.iter().any(|l| l == "pong 9"), "pong 9 before the move while thinking");
    // `st 30`: only `?` makes the move come within this deadline.
    e.send("?");
    let lines = e.read_until(|l| l == "pong 9", HANG);
    let at = lines.iter().position(|l| l.starts_with("move "));
    e.check(at.is_some(), "pong 9 came before the move");
    let mv = &lines[at.unwrap()]["move ".len()..];
    let p = startpos();
    if let Err(m) = engine_move(&p, mv) {
        e.fail(&m);
    }
    for l in first.iter().chain(held.iter()).chain(lines.iter()).filter(|l| is_thinking(l)) {
        if let Err(m) = check_thinking(&p, l) {
            e.fail(&m);
        }
    }
}

/// `hard`: after its move the engine prints `Hint: X` and ponders without thinking output
/// (even with `post`), answers `ping` at once, and moves after the user's move, whether it
/// equals the hint (ponder hit) or not.
#[test]
fn pondering() {
    let (mut e, _) = Engine::xboard();
    quietly(&mut e, &["new", "variant crazyhouse", "hard", "post", "level 0 0:03 0"], 1);
    let mut p = startpos();
    let first = p.parse_uci("e2e4").unwrap();
    p = p.after(first);
    e.send("time 300");
    e.send("otim 300");
    e.send("usermove e2e4");
    for (round, follow_hint) in [(0, true), (1, false), (2, true)] {
        let (mv, _) = read_move(&mut e, &p, T);
        p = p.after(engine_move(&p, &mv).unwrap());
        let hint = e.read_until(|l| !is_thinking(l), T).pop().unwrap();
        let Some(hint) = hint.strip_prefix("Hint: ") else {
            e.fail(&format!("expected Hint: after the move, got {hint:?}"))
        };
        let hinted = engine_move(&p, hint).unwrap_or_else(|m| e.fail(&m));
        let quiet = e.collect_for(ms(500));
        e.check(quiet.is_empty(), &format!("output while pondering: {quiet:?}"));
        let lines = e.ping(10 + round);
        e.check(lines.is_empty(), &format!("output while pondering: {lines:?}"));
        let user = if follow_hint {
            hinted
        } else {
            let legal = p.legal_moves();
            legal.as_slice().iter().copied().find(|&m| m != hinted).unwrap()
        };
        p = p.after(user);
        e.send("time 300");
        e.send("otim 300");
        e.send(&format!("usermove {user}"));
        if round == 2 {
            let (mv, _) = read_move(&mut e, &p, T);
            p = p.after(engine_move(&p, &mv).unwrap());
        }
    }
    // `easy` stops pondering; `force` too.
    quietly(&mut e, &["easy", "force"], 20);
    let quiet = e.collect_for(ms(300));
    e.check(quiet.is_empty(), &format!("output after easy/force: {quiet:?}"));
    let _ = p;
}

/// `force`, `undo`, `remove`, `new`: checked through which moves are then accepted.
#[test]
fn force_undo_remove_new() {
    let (mut e, _) = Engine::xboard();
    quietly(
        &mut e,
        &["new", "force", "usermove e2e4", "usermove e7e5", "undo", "usermove e7e6"],
        1,
    );
    // remove: back to the start, white to move.
    quietly(&mut e, &["remove"], 2);
    e.send("usermove e7e5");
    let l = e.read_until(|_| true, T).pop().unwrap();
    e.check(l == "Illegal move: e7e5", &format!("black move accepted after remove: {l}"));
    quietly(&mut e, &["usermove d2d4", "usermove d7d5", "undo", "undo", "undo"], 3);
    // undo past the start is harmless.
    quietly(&mut e, &["usermove e2e4"], 4);
    // new: start position, engine plays black, leaves force mode.
    quietly(&mut e, &["new", "st 0.2", "post"], 5);
    e.send("usermove e2e4");
    let p = startpos().after(startpos().parse_uci("e2e4").unwrap());
    read_move(&mut e, &p, T);
    e.ping(6);
    // playother-less start: `go` makes the engine play the side to move.
    quietly(&mut e, &["new", "force", "usermove g1f3", "sd 3"], 7);
    e.send("go");
    let p = startpos().after(startpos().parse_uci("g1f3").unwrap());
    read_move(&mut e, &p, T);
}

/// Each variant over XBoard, on the rules where they differ (as python-chess for crazyhouse and
/// Fairy-Stockfish for loop and chessgi have them): a captured promoted queen is a queen in
/// hand in loop and chessgi, a pawn in crazyhouse; a pawn may be dropped on its first rank in
/// chessgi only.
#[test]
fn variants() {
    let (mut e, _) = Engine::xboard();
    let fen = "4k3/1Q~6/8/8/4b3/8/Kpp5/8[] b - - 0 1";
    for (n, variant) in ["loop", "chessgi"].into_iter().enumerate() {
        let n = 10 * n as u32;
        quietly(&mut e, &["new", &format!("variant {variant}"), "force"], n + 1);
        quietly(&mut e, &[&format!("setboard {fen}"), "usermove e4b7", "usermove a2a3"], n + 2);
        quietly(&mut e, &["usermove Q@e1"], n + 3);
    }
    quietly(&mut e, &["new", "variant crazyhouse", "force"], 4);
    quietly(&mut e, &[&format!("setboard {fen}"), "usermove e4b7", "usermove a2a3"], 5);
    e.send("usermove Q@e1");
    let l = e.read_until(|_| true, T).pop().unwrap();
    e.check(l == "Illegal move: Q@e1", &format!("crazyhouse kept a promoted queen: {l}"));
    // A pawn on the first rank: chessgi only.
    let pawns = "4k3/8/8/8/8/8/8/4K3[Pp] w - - 0 1";
    quietly(&mut e, &["new", "variant chessgi", "force", &format!("setboard {pawns}")], 6);
    quietly(&mut e, &["usermove P@a1", "usermove P@h8"], 7);
    for variant in ["crazyhouse", "loop"] {
        quietly(&mut e, &["new", &format!("variant {variant}"), "force"], 8);
        quietly(&mut e, &[&format!("setboard {pawns}")], 9);
        e.send("usermove P@a1");
        let l = e.read_until(|_| true, T).pop().unwrap();
        e.check(l == "Illegal move: P@a1", &format!("{variant}: first-rank pawn drop: {l}"));
    }
}

/// Chess.com's FEN as users paste it (pocket and promoted squares after the counters) through
/// `setboard`: the pockets are there (white drops a rook, black a pawn) and the queen on h2
/// is a promoted one (captured, it gives white a pawn, not a queen), as python-chess reads
/// the same position written with brackets and `~`.
#[test]
fn chesscom_fen_through_setboard() {
    let (mut e, _) = Engine::xboard();
    let chesscom = "r1b1k2r/ppp2ppp/2n5/8/4P3/8/PPP2PPq/R1B1K2R w KQkq - 0 26 NNBRpr h2";
    quietly(&mut e, &["new", "force", &format!("setboard {chesscom}")], 1);
    quietly(&mut e, &["usermove h1h2", "usermove e8g8"], 2);
    e.send("usermove Q@d3");
    let l = e.read_until(|_| true, T).pop().unwrap();
    e.check(l == "Illegal move: Q@d3", &format!("the promoted queen came back a queen: {l}"));
    quietly(&mut e, &["usermove P@d3", "usermove P@d6", "usermove R@b1"], 3);
}

/// A threefold repetition completed by the engine's own move is claimed after the move
/// (python-chess: the position after h1h2 then stands for the third time). White's only move
/// is h1h2 each time the rook checks from a1.
#[test]
fn claims_the_repetition_its_move_completes() {
    let (mut e, _) = Engine::xboard();
    let fen = "6Q1/k7/8/8/8/8/5PP1/r6K[-] w - - 0 1";
    let mut cmds =
        vec!["new".to_string(), "force".into(), "sd 2".into(), format!("setboard {fen}")];
    for _ in 0..2 {
        cmds.extend(["h1h2", "a1a2", "h2h1", "a2a1"].iter().map(|m| format!("usermove {m}")));
    }
    let cmds: Vec<&str> = cmds.iter().map(String::as_str).collect();
    quietly(&mut e, &cmds, 1);
    e.send("go");
    let p = pos("6Q1/k7/8/8/8/8/5PP1/r6K[] w - - 0 1");
    let (mv, _) = read_move(&mut e, &p, T);
    e.check(mv == "h1h2", &format!("the only move is h1h2, not {mv}"));
    let l = e.read_until(|_| true, T).pop().unwrap();
    e.check(l == "1/2-1/2 {Draw by repetition}", &format!("no claim after the move: {l:?}"));
}

/// `holding [PN] [p]` sets the pockets: checked through drops accepted or refused in force
/// mode.
#[test]
fn holding_changes_pockets() {
    let (mut e, _) = Engine::xboard();
    quietly(&mut e, &["new", "force", "setboard 4k3/8/8/8/8/8/8/4K3[-] w - - 0 1"], 1);
    e.send("usermove N@f3");
    let l = e.read_until(|_| true, T).pop().unwrap();
    e.check(l == "Illegal move: N@f3", &format!("drop from an empty pocket: {l}"));
    quietly(&mut e, &["holding [PNN] [p]", "usermove N@f3", "usermove P@e5", "usermove P@d4"], 2);
    // Black to move: the knights were white's.
    e.send("usermove N@g3");
    let l = e.read_until(|_| true, T).pop().unwrap();
    e.check(l == "Illegal move: N@g3", &format!("black dropped one of white's knights: {l}"));
    // White still holds a knight; a fresh holding replaces both pockets instead of adding.
    quietly(&mut e, &["usermove e8d8", "holding [Q] [rp]", "usermove Q@a1", "usermove R@h8"], 3);
    e.send("usermove N@a2");
    let l = e.read_until(|_| true, T).pop().unwrap();
    e.check(l == "Illegal move: N@a2", &format!("knight left in hand after holding: {l}"));
    // The black pawn given by the holding is there.
    quietly(&mut e, &["usermove e1e2", "usermove P@c6"], 4);
}

/// `setboard` with garbage → `tellusererror Illegal position`; moves are refused and `go`
/// does nothing until the next valid `setboard`.
#[test]
fn setboard_garbage() {
    let (mut e, _) = Engine::xboard();
    quietly(&mut e, &["new", "force"], 1);
    for bad in ["garbage", "8/8/8/8/8/8/8/8[-] w - - 0 1", "rnbqkbnr/pppppppp/8/8 w", ""] {
        e.send(&format!("setboard {bad}"));
        let l = e.read_until(|_| true, T).pop().unwrap();
        e.check(l == "tellusererror Illegal position", &format!("setboard {bad:?}: {l}"));
        e.send("usermove e2e4");
        let l = e.read_until(|_| true, T).pop().unwrap();
        e.check(l.starts_with("Illegal move"), &format!("move after a bad setboard: {l}"));
    }
    e.send("go");
    let quiet = e.collect_for(ms(500));
    e.check(quiet.is_empty(), &format!("go after a bad setboard: {quiet:?}"));
    quietly(
        &mut e,
        &["force", "setboard rnbqkbnr/pppppppp/8/8/8/8/PPPPPPPP/RNBQKBNR[-] w KQkq - 0 1"],
        2,
    );
    quietly(&mut e, &["usermove e2e4", "usermove e7e5"], 3);
}

/// `analyze`: thinking lines (legal PVs); `.` → `stat01:`; analysis follows `usermove` and
/// `undo`; `exit` ends it.
#[test]
fn analyze_mode() {
    let (mut e, _) = Engine::xboard();
    let fen = "r1bqkbnr/pppp1ppp/2n5/8/3P4/2N5/PPP2PPP/R1BQKBNR[Pp] b KQkq - 0 4";
    quietly(&mut e, &["new", "force", &format!("setboard {fen}"), "post"], 1);
    let p = pos(fen);
    e.send("analyze");
    let lines = e.read_until(is_thinking, HANG);
    let more = e.collect_for(ms(200));
    for l in lines.iter().chain(more.iter()).filter(|l| is_thinking(l)) {
        if let Err(m) = check_thinking(&p, l) {
            e.fail(&m);
        }
    }
    e.send(".");
    let stat = e.read_until(|l| l.starts_with("stat01:"), HANG).pop().unwrap();
    let nums: Vec<&str> = stat["stat01:".len()..].split_whitespace().collect();
    e.check(
        nums.len() >= 4 && nums.iter().all(|n| n.parse::<u64>().is_ok()),
        &format!("bad stat01: {stat}"),
    );
    // After a move, analysis goes on from the new position (lines after the pong are new).
    let m = p.legal_moves().as_slice()[0];
    e.send(&format!("usermove {m}"));
    let before = e.ping(2);
    e.check(!before.iter().any(|l| l.starts_with("Error") || l.starts_with("Illegal")), "usermove");
    let p2 = p.after(m);
    let lines = e.read_until(is_thinking, HANG);
    for l in lines.iter().filter(|l| is_thinking(l)) {
        if let Err(msg) = check_thinking(&p2, l) {
            e.fail(&msg);
        }
    }
    e.send("undo");
    e.ping(3);
    let lines = e.read_until(is_thinking, HANG);
    for l in lines.iter().filter(|l| is_thinking(l)) {
        if let Err(msg) = check_thinking(&p, l) {
            e.fail(&msg);
        }
    }
    // setboard: analysis goes on from the new position; a bad one pauses it until the next
    // valid setboard.
    let fen2 = "6k1/5ppp/8/8/8/8/8/K7[R] w - - 0 1";
    e.send(&format!("setboard {fen2}"));
    e.ping(4);
    let lines = e.read_until(is_thinking, HANG);
    for l in lines.iter().filter(|l| is_thinking(l)) {
        if let Err(msg) = check_thinking(&pos(fen2), l) {
            e.fail(&msg);
        }
    }
    e.send("setboard garbage");
    let lines = e.ping(5);
    e.check(lines.contains(&"tellusererror Illegal position".to_string()), "bad setboard");
    let quiet = e.collect_for(ms(300));
    e.check(quiet.is_empty(), &format!("analysing an illegal position: {quiet:?}"));
    // new (+ variant, as XBoard sends them): analysis of the start position.
    e.send("new");
    e.send("variant crazyhouse");
    e.ping(6);
    let lines = e.read_until(is_thinking, HANG);
    for l in lines.iter().filter(|l| is_thinking(l)) {
        if let Err(msg) = check_thinking(&startpos(), l) {
            e.fail(&msg);
        }
    }
    e.send("exit");
    e.ping(7);
    let quiet = e.collect_for(ms(400));
    e.check(quiet.is_empty(), &format!("output after exit: {quiet:?}"));
}

/// Routine commands produce no output at all (in particular nothing starting with `Error` or
/// `Illegal`).
#[test]
fn routine_commands_are_silent() {
    let (mut e, _) = Engine::xboard();
    let lines = quietly(
        &mut e,
        &[
            "accepted ping",
            "rejected x",
            "new",
            "random",
            "post",
            "nopost",
            "computer",
            "name X",
            "name Some Player With Spaces",
            "rating 2000 2100",
            "ics -",
            "ics freechess.org",
            "memory 32",
            "cores 1",
            "egtpath syzygy /tmp",
            "easy",
            "hard",
            "draw",
            "hint",
            "bk",
            "otim 1000",
            "time 1000",
            "level 40 5 0",
            "level 0 2:30 0.5",
            "st 30",
            "st 0.5",
            "sd 5",
            "nps 0",
            "option MultiPV=1",
            "option MoveOverhead=50",
            "option ClearHash",
            "variant crazyhouse",
            "force",
            "result 1-0 {x}",
            "result 1/2-1/2 {Draw by repetition}",
            "result * {Aborted}",
            "",
            "   ",
        ],
        1,
    );
    e.check(lines.is_empty(), &format!("routine commands printed {lines:?}"));
}

/// Unknown command → `Error (unknown command): ...`; illegal moves → `Illegal move: ...`.
#[test]
fn errors_where_due() {
    let (mut e, _) = Engine::xboard();
    quietly(&mut e, &["new", "force"], 1);
    for (cmd, want) in [
        ("foo bar", "Error (unknown command): foo bar"),
        ("xyzzy", "Error (unknown command): xyzzy"),
        ("usermove e2e5", "Illegal move: e2e5"),
        ("e2e5", "Illegal move: e2e5"),
        ("usermove P@e4", "Illegal move: P@e4"),
        ("usermove zz99", "Illegal move: zz99"),
    ] {
        e.send(cmd);
        let l = e.read_until(|_| true, T).pop().unwrap();
        e.check(l == want, &format!("'{cmd}': got {l:?}, want {want:?}"));
    }
    e.ping(2);
    e.assert_healthy();
}

/// Game over by rule after the engine's move: `move` then `0-1 {Black mates}` /
/// `1-0 {White mates}`; `go` in a finished game prints the result and no move.
#[test]
fn result_after_mating_move() {
    let (mut e, _) = Engine::xboard();
    for (fen, result) in [
        ("k7/8/8/8/8/8/5PPP/6K1[r] b - - 0 1", "0-1 {Black mates}"),
        ("6k1/5ppp/8/8/8/8/8/K7[R] w - - 0 1", "1-0 {White mates}"),
    ] {
        quietly(&mut e, &["new", "force", &format!("setboard {fen}"), "sd 4", "post"], 1);
        e.send("go");
        let p = pos(fen);
        let (mv, _) = read_move(&mut e, &p, T);
        let l = e.read_until(|_| true, T).pop().unwrap();
        e.check(l == result, &format!("after mate {mv}: got {l:?}, want {result:?}"));
        let after = p.after(engine_move(&p, &mv).unwrap());
        e.check(!after.has_legal_move(), "engine move is not mate");
        e.ping(2);
    }
    // A finished game: the result, no move.
    let mated = "rnb1kbnr/pppp1ppp/8/4p3/6Pq/5P2/PPPPP2P/RNBQKBNR[-] w KQkq - 1 3";
    quietly(&mut e, &["new", "force", &format!("setboard {mated}")], 3);
    e.send("go");
    let l = e.read_until(|_| true, T).pop().unwrap();
    e.check(l == "0-1 {Black mates}", &format!("go when mated: {l:?}"));
    let lines = e.ping(4);
    e.check(!lines.iter().any(|l| l.starts_with("move")), "moved in a finished game");
}

/// A threefold repetition completed by the opponent's move is not announced in place of a
/// move: python-chess plays on after one, so the engine moves (as over UCI).
#[test]
fn moves_after_the_opponents_repetition() {
    let (mut e, _) = Engine::xboard();
    let shuffle = ["g1f3", "g8f6", "f3g1", "f6g8"];
    let mut cmds = vec!["new".to_string(), "force".to_string(), "sd 3".to_string()];
    for _ in 0..2 {
        cmds.extend(shuffle.iter().map(|m| format!("usermove {m}")));
    }
    let cmds: Vec<&str> = cmds.iter().map(String::as_str).collect();
    quietly(&mut e, &cmds, 1);
    // The start position has now stood three times, white to move.
    e.send("go");
    let start = pos("rnbqkbnr/pppppppp/8/8/8/8/PPPPPPPP/RNBQKBNR[] w KQkq - 0 1");
    let (mv, _) = read_move(&mut e, &start, T);
    e.check(engine_move(&start, &mv).is_ok(), &format!("illegal move {mv}"));
    e.ping(2);
    e.assert_healthy();
}

/// `quit` while thinking exits (before the search would end); end of input exits too.
#[test]
fn quit_and_eof() {
    let (mut e, _) = Engine::xboard();
    quietly(&mut e, &["new", "st 30"], 1);
    e.send("go");
    e.collect_for(ms(200));
    // `st 30`: the process must end well before the search would.
    e.send("quit");
    let st = e.wait_exit(HANG);
    e.check(st.is_some_and(|s| s.success()), &format!("quit: {st:?}"));

    let (mut e, _) = Engine::xboard();
    quietly(&mut e, &["new", "analyze"], 1);
    e.close_stdin();
    let st = e.wait_exit(HANG);
    e.check(st.is_some_and(|s| s.success()), &format!("EOF while analysing: {st:?}"));
}
