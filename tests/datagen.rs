//! Training data: the binary record format (round trips over random games in all three
//! variants, garbage and corrupted records), the streaming reader, text and legacy
//! conversion, `datagen` runs that resume every seed after an interruption and write the same
//! games, and the files datagen refuses to write into.

mod common;

use std::path::{Path, PathBuf};

use common::{playout, start_positions, Rng};
use madhouse::core::{Color, Position, Variant};
use madhouse::nnue::data::game_ply;
use madhouse::score::MATE_BOUND;
use madhouse::tools::data::{DataReader, Filter, Labelled, Skipped};
use madhouse::tools::datafile::{Header, HEADER_BYTES};
use madhouse::tools::datagen::files::{convert_legacy, convert_text};
use madhouse::tools::datagen::{
    self, decode, encode, DataError, DatagenConfig, RecordReader, Sample, SearchLimit, RECORD_BYTES,
};

const RESULTS: [f32; 3] = [0.0, 0.5, 1.0];

fn random_sample(pos: Position, rng: &mut Rng) -> Sample {
    Sample {
        pos,
        score: rng.next_u64() as i16,
        result: rng.pick(&RESULTS),
        noisy: rng.next_u64() & 1 == 1,
    }
}

#[test]
fn round_trip_over_random_games_in_every_variant() {
    let mut rng = Rng::new(0xda7a);
    // How often the rarer fields came up: the test means nothing if they never do.
    let (mut promoted, mut ep, mut pockets, mut black, mut partial_castling, mut total) =
        (0, 0, 0, 0, 0, 0);
    for variant in Variant::ALL {
        for (i, start) in start_positions(variant).iter().enumerate() {
            for game in 0..6 {
                for pos in playout(start, (i * 6 + game) as u64 ^ 0x5eed, 160) {
                    let sample = random_sample(pos, &mut rng);
                    let rec = encode(&sample).unwrap_or_else(|e| panic!("{}: {e}", sample.pos));
                    let back = decode(&rec).unwrap_or_else(|e| panic!("{}: {e}", sample.pos));
                    assert_eq!(back.pos.fen(), sample.pos.fen());
                    assert_eq!(back.pos.key(), sample.pos.key(), "{}", sample.pos.fen());
                    assert_eq!(back.pos.variant(), variant);
                    assert_eq!((back.score, back.result), (sample.score, sample.result));
                    assert_eq!(back.pos, sample.pos);
                    let p = &sample.pos;
                    total += 1;
                    promoted += p.promoted().any() as u32;
                    ep += p.ep_square().is_some() as u32;
                    pockets += (!p.hand(Color::White).is_empty()
                        && !p.hand(Color::Black).is_empty()) as u32;
                    black += (p.turn() == Color::Black) as u32;
                    partial_castling += matches!(p.castling().bits(), 1..=14) as u32;
                }
            }
        }
    }
    eprintln!(
        "{total} positions: {promoted} with promoted pieces, {ep} with e.p., {pockets} with \
         both pockets filled, {black} black to move, {partial_castling} with some castling"
    );
    assert!(total > 10_000);
    for (what, n) in [
        ("promoted", promoted),
        ("en passant", ep),
        ("pockets", pockets),
        ("black to move", black),
        ("partial castling", partial_castling),
    ] {
        assert!(n >= 50, "only {n} positions with {what}");
    }
}

#[test]
fn extreme_positions_round_trip_or_are_refused() {
    for (fen, variant) in [
        // 30 pawns in one pocket (more than 16 of a kind), the most a 32-piece game allows.
        ("4k3/8/8/8/8/8/8/4K3[PPPPPPPPPPPPPPPPPPPPPPPPPPPPPP] w - - 0 1", Variant::Crazyhouse),
        // 62 queens in hand: the most a position may hold (64 pieces with the kings).
        (&format!("4k3/8/8/8/8/8/8/4K3[{}] b - - 0 1", "q".repeat(62)), Variant::Loop),
        // A pawn on its own first rank (chessgi only), a promoted rook, huge counters.
        ("r~3k3/8/8/8/8/8/8/P3K3[] w - - 65535 32768", Variant::Chessgi),
        // Every piece on the board: 32 of them.
        ("rnbqkbnr/pppppppp/8/8/8/8/PPPPPPPP/RNBQKBNR[] b Kq - 0 1", Variant::Crazyhouse),
    ] {
        let pos = Position::from_fen(fen, variant).unwrap();
        let back = decode(
            &encode(&Sample { pos: pos.clone(), score: 0, result: 0.5, noisy: false }).unwrap(),
        )
        .unwrap();
        assert_eq!(back.pos.fen(), pos.fen());
        assert_eq!(back.pos.key(), pos.key());
    }
    // 33 pieces on the board do not fit in a record.
    let crowded = Position::from_fen(
        "rnbqkbnr/pppppppp/8/8/8/4N3/PPPPPPPP/RNBQKBNR[] w KQkq - 0 1",
        Variant::Crazyhouse,
    )
    .unwrap();
    let sample = Sample { pos: crowded, score: 0, result: 1.0, noisy: false };
    assert!(matches!(encode(&sample), Err(DataError::Unencodable(_))));
    let sample =
        Sample { pos: Position::startpos(Variant::Loop), score: 0, result: 0.25, noisy: false };
    assert!(matches!(encode(&sample), Err(DataError::Unencodable(_))));
}

fn start_record() -> [u8; RECORD_BYTES] {
    let fen = "r3k2r/8/8/8/3pP3/8/8/R3K2R[Nb] b KQkq e3 0 20";
    let pos = Position::from_fen(fen, Variant::Crazyhouse).unwrap();
    assert!(pos.ep_square().is_some());
    encode(&Sample { pos, score: 57, result: 0.0, noisy: false }).unwrap()
}

#[test]
fn corrupted_records_are_refused() {
    let good = start_record();
    assert!(decode(&good).is_ok());
    let corrupt = |f: &dyn Fn(&mut [u8; RECORD_BYTES])| {
        let mut r = good;
        f(&mut r);
        decode(&r)
    };
    // Pieces in square order: a1 R, e1 K, h1 R, d4 p, e4 P, a8 r, e8 k, h8 r.
    // Piece codes: a code above 11, and a nibble set past the last piece.
    assert!(matches!(corrupt(&|r| r[8] |= 0x0c), Err(DataError::Corrupt(_))));
    assert!(matches!(corrupt(&|r| r[12] |= 0x01), Err(DataError::Corrupt(_))));
    // A promoted flag past the last piece, on the e1 king and on the d4 pawn.
    assert!(matches!(corrupt(&|r| r[25] |= 0x01), Err(DataError::Corrupt(_))));
    assert!(matches!(corrupt(&|r| r[24] |= 0x02), Err(DataError::Position(_))));
    assert!(matches!(corrupt(&|r| r[24] |= 0x08), Err(DataError::Position(_))));
    // Reserved pocket bits, variant 3, result 3, e.p. byte 9.
    assert!(matches!(corrupt(&|r| r[35] |= 0x10), Err(DataError::Corrupt(_))));
    assert!(matches!(corrupt(&|r| r[36] |= 0x30), Err(DataError::Corrupt(_))));
    assert!(matches!(corrupt(&|r| r[36] |= 0xc0), Err(DataError::Corrupt(_))));
    assert!(matches!(corrupt(&|r| r[37] = 9), Err(DataError::Corrupt(_))));
    // An e.p. file where no pawn can capture, and white to move with black's e.p. square.
    assert!(matches!(corrupt(&|r| r[37] = 1), Err(DataError::Corrupt(_))));
    assert!(matches!(corrupt(&|r| r[40] ^= 1), Err(DataError::Corrupt(_))));
    // The e1 king becomes a queen: white has no king.
    assert!(matches!(corrupt(&|r| r[8] = (r[8] & 0x0f) | 0x40), Err(DataError::Position(_))));
    // Lengths.
    assert!(matches!(decode(&good[..43]), Err(DataError::Truncated { bytes: 43 })));
    assert!(matches!(decode(&[]), Err(DataError::Truncated { bytes: 0 })));
    let mut long = good.to_vec();
    long.push(0);
    assert!(matches!(decode(&long), Err(DataError::Corrupt(_))));
}

#[test]
fn castling_rights_without_their_rook_are_refused() {
    // Without the h1 rook the position keeps only Q, k and q; set K in the record.
    let pos =
        Position::from_fen("r3k2r/8/8/8/3pP3/8/8/R3K3[Nb] b KQkq e3 0 20", Variant::Crazyhouse)
            .unwrap();
    let mut r = encode(&Sample { pos, score: 57, result: 0.0, noisy: false }).unwrap();
    assert_eq!(r[36] & 15, 0b1110);
    assert!(decode(&r).is_ok());
    r[36] |= 1;
    assert!(matches!(decode(&r), Err(DataError::Corrupt(_))));
}

#[test]
fn garbage_never_panics_and_what_decodes_is_canonical() {
    let mut rng = Rng::new(0x6a7b);
    let good = start_record();
    let mut accepted = 0;
    for i in 0..200_000 {
        let mut buf = vec![0u8; RECORD_BYTES];
        match i % 4 {
            // Uniform noise.
            0 => buf.iter_mut().for_each(|b| *b = rng.next_u64() as u8),
            // A good record with a few bits flipped.
            1 | 2 => {
                buf.copy_from_slice(&good);
                for _ in 0..1 + rng.below(3) {
                    let bit = rng.below(RECORD_BYTES * 8);
                    buf[bit / 8] ^= 1 << (bit % 8);
                }
            }
            // Noise of any length.
            _ => {
                buf.resize(rng.below(2 * RECORD_BYTES), 0);
                buf.iter_mut().for_each(|b| *b = rng.next_u64() as u8);
            }
        }
        if let Ok(s) = decode(&buf) {
            accepted += 1;
            assert_eq!(encode(&s).unwrap().as_slice(), buf.as_slice(), "{}", s.pos.fen());
        }
    }
    // Flips of the score and counter bits are valid records; most flips are not.
    assert!(accepted > 1000 && accepted < 100_000, "{accepted}");
}

fn temp_dir(name: &str) -> PathBuf {
    let dir = std::env::temp_dir().join(format!("madhouse-datagen-{name}-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    dir
}

#[test]
fn reader_streams_records_skips_corrupt_ones_and_reports_a_torn_tail() {
    let mut rng = Rng::new(11);
    let positions = playout(&Position::startpos(Variant::Crazyhouse), 3, 40);
    let samples: Vec<Sample> = positions.into_iter().map(|p| random_sample(p, &mut rng)).collect();
    let mut bytes = Vec::new();
    for s in &samples {
        bytes.extend_from_slice(&encode(s).unwrap());
    }
    bytes[5 * RECORD_BYTES + 36] |= 0xc0; // record 5: result code 3
    bytes.extend_from_slice(&[1, 2, 3]);
    let dir = temp_dir("reader");
    let path = dir.join("r.bin");
    std::fs::write(&path, &bytes).unwrap();
    let read: Vec<_> = RecordReader::open(&path).unwrap().collect();
    assert_eq!(read.len(), samples.len() + 1);
    for (i, (r, s)) in read.iter().zip(&samples).enumerate() {
        match r {
            Ok(got) if i != 5 => assert_eq!(got, s),
            Err(DataError::Corrupt(_)) if i == 5 => {}
            other => panic!("record {i}: {other:?}"),
        }
    }
    assert!(matches!(read.last(), Some(Err(DataError::Truncated { bytes: 3 }))));
    std::fs::remove_dir_all(&dir).unwrap();
}

const SAMPLE_TEXT: &str = include_str!("data/scored-sample.txt");

#[test]
fn text_lines_convert_to_records() {
    let dir = temp_dir("convert");
    let input = dir.join("in.txt");
    let mut text = SAMPLE_TEXT.to_string();
    let good_lines = SAMPLE_TEXT.lines().count() as u64;
    text.push_str("# a comment\n\n");
    text.push_str("rnbqkbnr/pppppppp/8/8/8/8/PPPPPPPP/RNBQKBNR[] w KQkq - 0 1 | 31900 | 1\n");
    text.push_str("rnbqkbnr/pppppppp/8/8/8/8/PPPPPPPP/RNBQKBNR[] w KQkq - 0 1 | -31872 | 0\n");
    text.push_str("rnbqkbnr/pppppppp/8/8/8/8/PPPPPPPP/RNBQKBNR[] w KQkq - 0 1 | 12 | 2\n");
    text.push_str("rnbqkbnr/pppppppp/8/8/8/8/PPPPPPPP/RNBQKBNR[] w KQkq - 0 1 | 1\n");
    text.push_str("rnbqkbnr/pppppppp/8/8/8/8/PPPPPPPP/RNBQKBNX[] w KQkq - 0 1 | 12 | 1\n");
    text.push_str("rnbqkbnr/pppppppp/8/8/8/8/PPPPPPPP/RNBQKBNR[] w KQkq - 0 1 | 40000 | 1\n");
    text.push_str("rnbqkbnr/pppppppp/8/8/8/8/PPPPPPPP/RNBQKBNR[] w KQkq - 0 1 | 12 | 0.5"); // unfinished
    std::fs::write(&input, &text).unwrap();
    let out = dir.join("out.bin");
    let s = convert_text(&input, &out, Variant::Crazyhouse).unwrap();
    assert_eq!((s.lines, s.written, s.mate_scores, s.bad), (good_lines + 6, good_lines, 3, 3));
    assert!(s.partial_last_line);
    let read = records_of(&out);
    assert_eq!(read.len() as u64, good_lines);
    for (line, sample) in SAMPLE_TEXT.lines().zip(&read) {
        let fields: Vec<&str> = line.split(" | ").collect();
        assert_eq!(sample.pos.fen(), fields[0]);
        assert_eq!(sample.score.to_string(), fields[1]);
        assert_eq!(sample.result, fields[2].parse::<f32>().unwrap());
    }
    // The output must be new.
    assert!(convert_text(&input, &out, Variant::Crazyhouse).is_err());
    // The tuner and the trainer read the same positions and results from either file,
    // through the one reader.
    let read_all = |path: &Path| {
        let (out, skipped) = read_through(path, Filter::default(), 3);
        let items: Vec<(String, f32)> = out.iter().map(|l| (l.pos.fen(), l.result)).collect();
        (items, skipped)
    };
    let (from_text, text_skipped) = read_all(&input);
    let (from_bin, bin_skipped) = read_all(&out);
    assert_eq!(from_text[..good_lines as usize], from_bin[..]);
    assert_eq!(bin_skipped, Skipped::default());
    // The reader reads a file at rest: besides the good lines it takes the `FEN | result`
    // line and the unterminated last line, skips the three mate-score lines (one rule for
    // records and text) and counts the bad result and the bad FEN as unreadable.
    assert_eq!(from_text.len() as u64, good_lines + 2);
    assert_eq!(text_skipped, Skipped { unreadable: 2, mate: 3, ..Skipped::default() });
    std::fs::remove_dir_all(&dir).unwrap();
}

fn config(out: &Path, games: u64, seed: u64) -> DatagenConfig {
    let openings = vec![
        Position::from_fen(
            "r1bqkbnr/pppp1ppp/2n5/8/3P4/2N5/PPP2PPP/R1BQKBNR[Pp] b KQkq - 0 4",
            Variant::Crazyhouse,
        )
        .unwrap(),
        Position::startpos(Variant::Crazyhouse),
    ];
    DatagenConfig {
        out: out.to_path_buf(),
        games,
        limit: SearchLimit::Nodes(300),
        threads: 2,
        openings,
        random_plies: 2,
        seed,
        variant: Variant::Crazyhouse,
        network: None,
        openings_identity: 77,
        all_positions: false,
        add_seed: false,
        allow_mixed_settings: false,
    }
}

/// Everything the one reader passes on from `path` under `filter`, read `chunk` positions at a
/// time, and what it passed over.
fn read_through(path: &Path, filter: Filter, chunk: usize) -> (Vec<Labelled>, Skipped) {
    let mut r = DataReader::open(path, Variant::Crazyhouse).unwrap().with_filter(filter);
    let mut out = Vec::new();
    while r.read_chunk(chunk, &mut out).unwrap() > 0 {}
    (out, r.skipped())
}

/// The records a data file's header vouches for, decoded.
fn records_of(path: &Path) -> Vec<Sample> {
    let mut f = std::fs::File::open(path).unwrap();
    let h = Header::read(&mut f).unwrap();
    let bytes = std::fs::read(path).unwrap();
    let data = &bytes[HEADER_BYTES as usize..(HEADER_BYTES + h.data_bytes) as usize];
    RecordReader::new(data).map(Result::unwrap).collect()
}

/// The bytes of the records a data file's header vouches for.
fn data_of(path: &Path) -> Vec<u8> {
    let h = Header::read(&mut std::fs::File::open(path).unwrap()).unwrap();
    let bytes = std::fs::read(path).unwrap();
    bytes[HEADER_BYTES as usize..(HEADER_BYTES + h.data_bytes) as usize].to_vec()
}

#[test]
fn all_positions_adds_the_noisy_ones_and_the_default_filter_takes_them_out_again() {
    // The same seed and settings play the same games whatever is recorded, so the quiet
    // run's records must be exactly the all-positions run's records that are neither
    // flagged noisy nor in check, in the same order.
    let dir = temp_dir("all");
    let (quiet, all) = (dir.join("quiet.bin"), dir.join("all.bin"));
    let run = |out: &Path, all_positions: bool| {
        datagen::run(&DatagenConfig { all_positions, ..config(out, 6, 31) }).unwrap();
    };
    run(&quiet, false);
    run(&all, true);
    let (q, a) = (records_of(&quiet), records_of(&all));
    let noisy = a.iter().filter(|s| s.noisy).count() as u64;
    let checks = a.iter().filter(|s| !s.noisy && s.pos.in_check()).count() as u64;
    assert!(!q.is_empty() && noisy > 0 && checks > 0, "{} {noisy} {checks}", q.len());
    assert!(q.iter().all(|s| !s.noisy && !s.pos.in_check()));
    // The flag, checked against the next record of the same game (the next ply; every
    // position is recorded): a capture puts a piece in the mover's pocket, a promotion adds a
    // promoted piece of the mover's to the board, and no other move does either.
    let mut pairs = 0;
    for (x, y) in a.iter().zip(&a[1..]) {
        if game_ply(&y.pos) != game_ply(&x.pos) + 1 {
            continue;
        }
        let mover = x.pos.turn();
        let promoted = |p: &Position| (p.promoted() & p.us(mover)).count();
        let captured = y.pos.hand(mover).total() > x.pos.hand(mover).total();
        let promotes = promoted(&y.pos) > promoted(&x.pos);
        assert_eq!(x.noisy, captured || promotes, "{} then {}", x.pos.fen(), y.pos.fen());
        pairs += 1;
    }
    assert!(pairs > a.len() / 2, "{pairs} of {}", a.len());
    let quiet_part: Vec<&Sample> = a.iter().filter(|s| !s.noisy && !s.pos.in_check()).collect();
    assert_eq!(quiet_part, q.iter().collect::<Vec<_>>());
    // The header says which kind of run made each file.
    let all_header = Header::read(&mut std::fs::File::open(&all).unwrap()).unwrap();
    assert!(all_header.to_string().contains("--all-positions"), "{all_header}");
    // The reader: by default it passes over what the quiet run left out; the trainer's
    // flags keep it; --min-ply passes over the early plies.
    let read = |path: &Path, filter: Filter| {
        let (out, skipped) = read_through(path, filter, 50);
        (out.iter().map(|l| l.pos.fen()).collect::<Vec<_>>(), skipped)
    };
    let fens = |v: &[Sample]| v.iter().map(|s| s.pos.fen()).collect::<Vec<_>>();
    let (got, skipped) = read(&all, Filter::default());
    assert_eq!(got, fens(&q));
    assert_eq!((skipped.noisy, skipped.check, skipped.early), (noisy, checks, 0));
    let everything = Filter { keep_noisy: true, keep_checks: true, min_ply: 0 };
    assert_eq!(read(&all, everything).0, fens(&a));
    let late = Filter { min_ply: 30, ..everything };
    let (got, skipped) = read(&all, late);
    let want: Vec<&Sample> = a.iter().filter(|s| s.pos.fullmoves() > 15).collect();
    assert_eq!(got, want.iter().map(|s| s.pos.fen()).collect::<Vec<_>>());
    assert_eq!(skipped.early, (a.len() - want.len()) as u64);
    std::fs::remove_dir_all(&dir).unwrap();
}

#[test]
fn datagen_searches_with_the_network_it_is_given() {
    // The same seed and openings with the built-in network instead of the hand-written
    // evaluation: the stored scores must come from the network's searches, so the data
    // differs (the hand-written and learned evaluations disagree on nearly every position).
    let dir = temp_dir("net");
    let (a, b) = (dir.join("hce.bin"), dir.join("nnue.bin"));
    datagen::run(&config(&a, 2, 9)).unwrap();
    let with_net = DatagenConfig { network: Some(madhouse::nnue::embedded()), ..config(&b, 2, 9) };
    datagen::run(&with_net).unwrap();
    let (ha, hb) = (data_of(&a), data_of(&b));
    assert!(!ha.is_empty() && !hb.is_empty());
    assert_ne!(ha, hb, "datagen ignored the network it was given");
    std::fs::remove_dir_all(&dir).unwrap();
}

#[test]
fn datagen_resumes_every_seed_and_replays_the_same_games() {
    let dir = temp_dir("run");
    let a = dir.join("a.bin");
    let summary = datagen::run(&config(&a, 5, 42)).unwrap();
    let whole = data_of(&a);
    assert_eq!(summary.games + summary.skipped_games, 5);
    assert_eq!(whole.len() as u64, summary.positions * RECORD_BYTES as u64);
    assert!(summary.positions > 20);
    for s in records_of(&a) {
        assert!(!s.pos.in_check());
        assert!((s.score as i32).abs() < MATE_BOUND);
    }

    // The same run in two parts, with a kill in between that left a torn game behind.
    let b = dir.join("b.bin");
    datagen::run(&config(&b, 2, 42)).unwrap();
    let part = data_of(&b);
    assert!(part.len() < whole.len() && whole.starts_with(&part));
    let mut torn = std::fs::read(&b).unwrap();
    torn.extend_from_slice(&whole[part.len()..part.len() + RECORD_BYTES + 17]);
    std::fs::write(&b, &torn).unwrap();
    datagen::run(&config(&b, 5, 42)).unwrap();
    assert!(data_of(&b) == whole, "the resumed run wrote different games");
    let len = std::fs::metadata(&b).unwrap().len();
    assert_eq!(len, HEADER_BYTES + whole.len() as u64, "the torn game was not cut off");

    // Nothing left to do: the data stays as it is.
    datagen::run(&config(&b, 5, 42)).unwrap();
    assert!(data_of(&b) == whole);

    // A second seed needs --add-seed; then an interrupted third run, and the first seed run
    // again to a larger total: every seed resumes where it stopped (the build before the
    // header replayed an older seed from game 0, duplicating its games).
    let refused = datagen::run(&config(&b, 1, 43)).unwrap_err().to_string();
    assert!(refused.contains("--add-seed") && refused.contains("b.bin"), "{refused}");
    assert!(data_of(&b) == whole);
    let add = |games, seed| DatagenConfig { add_seed: true, ..config(&b, games, seed) };
    datagen::run(&add(1, 43)).unwrap();
    let with_43 = data_of(&b);
    assert!(with_43.len() > whole.len() && with_43.starts_with(&whole));
    datagen::run(&add(6, 42)).unwrap();
    let header = Header::read(&mut std::fs::File::open(&b).unwrap()).unwrap();
    let games: Vec<(u64, u64)> = header.runs.iter().map(|r| (r.seed, r.games)).collect();
    assert_eq!(games, vec![(42, 6), (43, 1)]);
    // Seed 42's sixth game equals the sixth game of a fresh six-game run.
    let fresh = dir.join("fresh.bin");
    datagen::run(&config(&fresh, 6, 42)).unwrap();
    let fresh = data_of(&fresh);
    assert_eq!(data_of(&b)[with_43.len()..], fresh[whole.len()..]);
    std::fs::remove_dir_all(&dir).unwrap();
}

#[test]
fn datagen_refuses_files_that_are_not_its_own_and_changes_nothing() {
    let dir = temp_dir("refuse");
    let legacy_record = encode(&Sample {
        pos: Position::startpos(Variant::Crazyhouse),
        score: 5,
        result: 0.5,
        noisy: false,
    })
    .unwrap();
    let system_like = std::fs::read(std::env::current_exe().unwrap()).unwrap();
    let cases: Vec<(&str, Vec<u8>, &str)> = vec![
        ("notes.txt", b"a user's notes\nsecond line\n".to_vec(), "not a Madhouse data file"),
        ("system", system_like[..4096.min(system_like.len())].to_vec(), "not a Madhouse data"),
        ("empty.bin", Vec::new(), "empty"),
        ("old.bin", [legacy_record, legacy_record].concat(), "--convert-legacy"),
        ("torn.bin", [&legacy_record[..], &legacy_record[..17]].concat(), "--convert-legacy"),
    ];
    for (name, bytes, says) in cases {
        let path = dir.join(name);
        std::fs::write(&path, &bytes).unwrap();
        let e = datagen::run(&config(&path, 1, 1)).unwrap_err().to_string();
        assert!(e.contains(name) && e.contains(says), "{name}: {e}");
        assert_eq!(std::fs::read(&path).unwrap(), bytes, "{name} was changed");
    }
    // A directory and a path whose folder does not exist.
    let e = datagen::run(&config(&dir, 1, 1)).unwrap_err().to_string();
    assert!(e.contains("directory"), "{e}");
    let missing = dir.join("no/such/folder/x.bin");
    let e = datagen::run(&config(&missing, 1, 1)).unwrap_err().to_string();
    assert!(e.contains("creating") && e.contains("no/such/folder"), "{e}");

    // Data made with other settings: refused even with --add-seed, unless mixing is asked.
    let ours = dir.join("ours.bin");
    datagen::run(&config(&ours, 1, 1)).unwrap();
    let before = std::fs::read(&ours).unwrap();
    let deeper =
        DatagenConfig { limit: SearchLimit::Nodes(400), add_seed: true, ..config(&ours, 1, 2) };
    let e = datagen::run(&deeper).unwrap_err().to_string();
    assert!(e.contains("--nodes 300") && e.contains("--nodes 400"), "{e}");
    assert_eq!(std::fs::read(&ours).unwrap(), before);
    // The same seed with other settings is refused outright.
    let same_seed = DatagenConfig { limit: SearchLimit::Nodes(400), ..config(&ours, 2, 1) };
    assert!(datagen::run(&same_seed).is_err());
    assert_eq!(std::fs::read(&ours).unwrap(), before);
    let mixed = DatagenConfig { allow_mixed_settings: true, ..deeper };
    datagen::run(&mixed).unwrap();
    assert!(data_of(&ours).len() > before.len() - HEADER_BYTES as usize);

    // Records from before the header convert once, explicitly; the old file stays.
    let old = dir.join("old.bin");
    let converted = dir.join("converted.bin");
    let s = convert_legacy(&old, &converted).unwrap();
    assert_eq!((s.records, s.written, s.bad), (2, 2, 0));
    assert_eq!(records_of(&converted).len(), 2);
    assert!(convert_legacy(&old, &converted).is_err(), "the output must be new");
    // Converted data is not a datagen run to add to.
    let e = datagen::run(&config(&converted, 1, 1)).unwrap_err().to_string();
    assert!(e.contains("converted"), "{e}");
    std::fs::remove_dir_all(&dir).unwrap();
}

/// Runs `madhouse ARGS` in the temporary folder: did it succeed, and its stderr.
fn run_tool(args: &[&str]) -> (bool, String) {
    let out = std::process::Command::new(env!("CARGO_BIN_EXE_madhouse"))
        .args(args)
        .current_dir(std::env::temp_dir())
        .output()
        .unwrap();
    (out.status.success(), String::from_utf8_lossy(&out.stderr).into_owned())
}

#[test]
fn command_line_tools_refuse_flags_they_do_not_know() {
    // A misspelt flag must stop the run with its name, not be ignored (a training run that
    // silently dropped `--init` started from random weights). Each command is otherwise
    // complete, so without the check it would go on to open the missing files.
    // The last two: a flag the chosen mode does not read (`--info` only prints a file's
    // summary) is refused too, and before any file is opened (the openings do not exist).
    // The messages are clap's: an unknown flag is an "unexpected argument", a flag of another
    // mode one that "cannot be used with" the mode's.
    let cases: [(&[&str], &str); 5] = [
        (
            &["train", "--data", "missing.bin", "--out", "x.nnue", "--initt", "net.nnue"],
            "unexpected argument '--initt'",
        ),
        (&["tune", "--data", "missing.txt", "--epoch", "3"], "unexpected argument '--epoch'"),
        (&["datagen", "--out", "x.bin", "--node", "5"], "unexpected argument '--node'"),
        (
            &["datagen", "--info", "missing.bin", "--games", "5"],
            "'--info <FILE>' cannot be used with '--games <N>'",
        ),
        (
            &["datagen", "--out", "x.bin", "--openings", "missing.epd", "--seeds", "5"],
            "unexpected argument '--seeds'",
        ),
    ];
    for (args, expected) in cases {
        let (ok, err) = run_tool(args);
        assert!(!ok, "{args:?} succeeded");
        assert!(err.contains(expected), "{args:?}: {err}");
    }
}

#[test]
fn command_line_switches_and_values_are_told_apart() {
    // `--resume` and `--mirror-files` take no value; every other flag takes one. A switch in
    // front of a flag must not swallow it, a value after a switch and a flag left without its
    // value are refused by name, and a file the tool cannot open is named. Each expected
    // message is what a user needs to mend the command (the 9cb2511 build answered the second
    // and third with `unexpected argument ...`, reading `--out` as the data file, and the last
    // without the file's name). Only the file name is expected of an OS error: its wording
    // differs between systems. The usage errors are worded by clap: a value after a switch is
    // an unexpected argument, named.
    let cases: [(&[&str], &str); 6] = [
        (
            &["train", "--resume", "--data", "missing.bin", "--out", "x.nnue", "--mirror-files"],
            "missing.bin: ",
        ),
        (
            &["train", "--data", "missing.bin", "--out", "x.nnue", "--mirror-files", "5"],
            "unexpected argument '5'",
        ),
        (
            &["train", "--data", "missing.bin", "--out", "x.nnue", "--mirror-files=5"],
            "unexpected value '5' for '--mirror-files'",
        ),
        (&["train", "--data", "--out", "x.nnue"], "a value is required for '--data"),
        (&["datagen", "--out", "x.bin", "--resume"], "unexpected argument '--resume'"),
        // --out: outside a checkout tune has no default output.
        (&["tune", "--data", "missing.txt", "--out", "w.rs", "--epochs", "3"], "missing.txt: "),
    ];
    for (args, expected) in cases {
        let (ok, err) = run_tool(args);
        assert!(!ok, "{args:?} succeeded");
        assert!(err.contains(expected), "{args:?}: {err}");
    }
}

#[test]
fn train_takes_the_size_of_its_init_network() {
    // `--init` without `--hidden` starts from the file as it is, whatever its size (the
    // 3518dc7 build refused the built-in H = 512 network: "this run is H = 256"); an explicit
    // smaller `--hidden` is still refused, as a network cannot be narrowed. The 38 sample
    // positions are too few to train on, which is the error expected once the sizes agree.
    let root = env!("CARGO_MANIFEST_DIR");
    // A plain network of real weights (the built-in network may have king buckets, which a
    // run cannot respread): the built-in network's first bucket.
    let plain = common::plain_network_from_bucket(&madhouse::nnue::embedded(), 0);
    let dir = std::env::temp_dir().join(format!("madhouse-init-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let init = dir.join("plain.nnue");
    plain.save(&init).unwrap();
    let init = init.to_str().unwrap().to_string();
    let data = format!("{root}/tests/data/scored-sample.txt");
    let smaller = (plain.hidden() / 2).to_string();
    let base = ["train", "--data", &data, "--out", "never-written.nnue", "--init", &init];
    let (ok, err) = run_tool(&base);
    assert!(!ok && err.contains("too few positions"), "{err}");
    let (ok, err) = run_tool(&[&base[..], &["--hidden", &smaller]].concat());
    assert!(!ok && err.contains("can be widened, not narrowed"), "{err}");
    // `--king-buckets` spreads the plain network over king buckets (then the same data
    // error); a count without a table is refused before any data is read.
    let (ok, err) = run_tool(&[&base[..], &["--king-buckets", "8", "--bucketed-pockets"]].concat());
    assert!(!ok && err.contains("spread over InputLayout(8 king buckets, bucketed"), "{err}");
    assert!(err.contains("too few positions"), "{err}");
    let (ok, err) = run_tool(&[&base[..], &["--king-buckets", "5"]].concat());
    assert!(!ok && err.contains("--king-buckets must be one of [1, 4, 8, 16, 32]"), "{err}");
    let _ = std::fs::remove_dir_all(&dir);
}
