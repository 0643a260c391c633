//! NNUE inference: incremental accumulator updates against refreshes over random games in
//! all three variants, every SIMD path against scalar on real positions, the network file's
//! round trip and every corruption, and a hand-set network with a hand-computed output.

use madhouse::core::{Color, Move, MoveKind, Position, Variant};
use madhouse::nnue::features::output_bucket;
use madhouse::nnue::network::fnv1a;
use madhouse::nnue::{
    self, Accumulator, Kernel, Network, NnueError, INPUTS, MAX_OUTPUT_BUCKETS, OUTPUT_WEIGHT_MAX,
};
use madhouse::rng::Rng;

/// A network with random weights: accumulator weights in +-`range`, output weights over
/// their whole allowed range, `buckets` output layers with different biases.
fn random_net(h: usize, buckets: usize, range: i32, seed: u64) -> Network {
    let mut rng = Rng::new(seed);
    let mut r = |n: usize, m: i32| -> Vec<i16> {
        (0..n).map(|_| (rng.below(2 * m as usize + 1) as i32 - m) as i16).collect()
    };
    let ft_w = r(INPUTS * h, range);
    let ft_b = r(h, range);
    let out_w = r(buckets * 2 * h, OUTPUT_WEIGHT_MAX);
    let out_b = (0..buckets as i32).map(|b| 1234 + 50_000 * b).collect();
    Network::new(h, ft_w, ft_b, out_w, out_b).expect("valid network")
}

fn assert_same(a: &Accumulator, b: &Accumulator, h: usize, what: &str) {
    for c in Color::ALL {
        assert_eq!(&a.values(c)[..h], &b.values(c)[..h], "{what}: {c:?} perspective");
    }
}

/// Move kinds seen, to prove the random games exercise every kind of update.
#[derive(Default, Debug)]
struct Seen {
    quiet: u32,
    capture: u32,
    captured_promoted: u32,
    drop: u32,
    promotion: u32,
    castle: u32,
    en_passant: u32,
}

impl Seen {
    fn record(&mut self, pos: &Position, m: Move) {
        match m.kind() {
            MoveKind::Drop(_) => self.drop += 1,
            MoveKind::Castle => self.castle += 1,
            MoveKind::EnPassant => self.en_passant += 1,
            MoveKind::Promotion(_) => self.promotion += 1,
            MoveKind::Normal if !pos.is_capture(m) => self.quiet += 1,
            MoveKind::Normal => {}
        }
        if pos.is_capture(m) {
            self.capture += 1;
            if pos.promoted().contains(m.to()) {
                self.captured_promoted += 1;
            }
        }
    }
}

/// Plays random games; after every move checks the updated accumulator against a refresh
/// (values and the piece count that picks the output bucket) and every kernel's evaluation
/// against scalar.
fn random_games(variant: Variant, games: usize, seed: u64) -> Seen {
    let h = 64;
    let net = random_net(h, MAX_OUTPUT_BUCKETS, 300, seed);
    let kernels: Vec<Network> =
        Kernel::available().into_iter().filter_map(|k| net.with_kernel(k)).collect();
    let scalar = net.with_kernel(Kernel::Scalar).expect("scalar always available");
    let mut rng = Rng::new(seed);
    let mut seen = Seen::default();
    let (mut acc, mut next, mut fresh) =
        (Box::new(Accumulator::new()), Box::new(Accumulator::new()), Box::new(Accumulator::new()));
    for _ in 0..games {
        let mut pos = Position::startpos(variant);
        acc.refresh(&net, &pos);
        for _ply in 0..300 {
            let moves = pos.legal_moves();
            if moves.is_empty() {
                break;
            }
            // Favour captures, promotions, castling and en passant a little, so promoted
            // pieces get made and then captured.
            let special: Vec<Move> = moves
                .iter()
                .copied()
                .filter(|&m| {
                    pos.is_capture(m) || !matches!(m.kind(), MoveKind::Normal | MoveKind::Drop(_))
                })
                .collect();
            let m = if !special.is_empty() && rng.chance(1, 3) {
                rng.pick(&special)
            } else {
                rng.pick(moves.as_slice())
            };
            seen.record(&pos, m);
            let child = pos.after(m);
            next.update(&net, &acc, &pos, &child);
            fresh.refresh(&net, &child);
            assert_same(
                &next,
                &fresh,
                h,
                &format!("{} after {m:?} from {}", variant.name(), pos.fen()),
            );
            assert_eq!(next.board_pieces(), child.occupied().count() as usize, "{}", child.fen());
            let want = scalar.evaluate(&fresh, child.turn());
            for k in &kernels {
                assert_eq!(
                    nnue::evaluate(k, &next, child.turn()),
                    want,
                    "{k:?} at {}",
                    child.fen()
                );
            }
            std::mem::swap(&mut acc, &mut next);
            pos = child;
        }
    }
    seen
}

fn check_coverage(seen: &Seen, promoted_captures: bool) {
    eprintln!("{seen:?}");
    assert!(seen.quiet > 0 && seen.capture > 0 && seen.drop > 0, "{seen:?}");
    assert!(seen.promotion > 0 && seen.castle > 0 && seen.en_passant > 0, "{seen:?}");
    if promoted_captures {
        assert!(seen.captured_promoted > 0, "{seen:?}");
    }
}

#[test]
fn incremental_equals_refresh_crazyhouse() {
    check_coverage(&random_games(Variant::Crazyhouse, 400, 1), true);
}

#[test]
fn incremental_equals_refresh_loop() {
    check_coverage(&random_games(Variant::Loop, 400, 2), true);
}

#[test]
fn incremental_equals_refresh_chessgi() {
    check_coverage(&random_games(Variant::Chessgi, 400, 3), true);
}

#[test]
fn null_move_and_unrelated_positions_update_correctly() {
    // A null move changes no feature; a jump to an unrelated position changes many and must
    // fall back to a refresh.
    let h = 32;
    let net = random_net(h, MAX_OUTPUT_BUCKETS, 1000, 9);
    let a = Position::from_fen(
        "r1bqk2r/pppp1ppp/2n1p3/4P3/1b1Pn3/2NB1N2/PPP2PPP/R1BQK2R[QNNpp] b KQkq - 0 1",
        Variant::Crazyhouse,
    )
    .unwrap();
    let b = Position::startpos(Variant::Crazyhouse);
    let mut null = a.clone();
    null.play_null();
    let (mut acc_a, mut out, mut fresh) =
        (Accumulator::new(), Accumulator::new(), Accumulator::new());
    acc_a.refresh(&net, &a);
    out.update(&net, &acc_a, &a, &null);
    fresh.refresh(&net, &null);
    assert_same(&out, &fresh, h, "null move");
    out.update(&net, &acc_a, &a, &b);
    fresh.refresh(&net, &b);
    assert_same(&out, &fresh, h, "unrelated position");
}

/// The hand-set network of `hand_computed_output`: H = 32, zero except a few weights.
fn hand_net() -> Network {
    let h = 32;
    let mut ft_w = vec![0i16; INPUTS * h];
    // Feature 324 (own king on e1) -> neuron 0: 100; 764 (their king on e8) -> neuron 1: 50;
    // 12 (own pawn on e2) -> neuron 2: 300; 436 (their pawn on e7) -> neuron 3: -20.
    ft_w[324 * h] = 100;
    ft_w[764 * h + 1] = 50;
    ft_w[12 * h + 2] = 300;
    ft_w[436 * h + 3] = -20;
    let mut out_w = vec![0i16; 2 * h];
    out_w[0] = 10;
    out_w[1] = -5;
    out_w[2] = 3;
    out_w[h] = 7;
    out_w[h + 2] = -2;
    out_w[h + 3] = 100;
    Network::new(h, ft_w, vec![0; h], out_w, vec![5000]).unwrap()
}

#[test]
fn hand_computed_output() {
    let net = hand_net();
    for k in Kernel::available() {
        let net = net.with_kernel(k).unwrap();
        let mut acc = Accumulator::new();
        // White: Ke1, Pe2; Black: Ke8. White's view: own K e1 (324), own P e2 (12), their K e8
        // (764) -> [100, 50, 300, 0]. Black's view: own K e8->e1 (324), their K e1->e8 (764),
        // their P e2->e7 (6*64+52 = 436) -> [100, 50, 0, -20].
        let w =
            Position::from_fen("4k3/8/8/8/8/8/4P3/4K3[] w - - 0 1", Variant::Crazyhouse).unwrap();
        acc.refresh(&net, &w);
        // White to move: us [100, 50, 255 (clamped), 0], them [100, 50, 0, 0 (clamped)]:
        // 100^2*10 - 50^2*5 + 255^2*3 + 100^2*7 = 352575; 352575/255 = 1382; (1382 + 5000) *
        // 400 / (255 * 64) = 2552800 / 16320 = 156.
        assert_eq!(nnue::evaluate(&net, &acc, Color::White), 156, "{k:?}");
        // Black to move: us [100, 50, 0, 0], them [100, 50, 255, 0]: 100000 - 12500 + 70000
        // - 255^2*2 = 27450; 27450/255 = 107; (107 + 5000) * 400 / 16320 = 125.
        let b =
            Position::from_fen("4k3/8/8/8/8/8/4P3/4K3[] b - - 0 1", Variant::Crazyhouse).unwrap();
        acc.refresh(&net, &b);
        assert_eq!(nnue::evaluate(&net, &acc, Color::Black), 125, "{k:?}");
    }
}

#[test]
fn output_buckets_split_the_piece_count_evenly() {
    // 1 to 32 pieces on the board: 8 buckets of 4 counts each, in order; one bucket is 0.
    let buckets: Vec<usize> = (1..=32).map(|n| output_bucket(n, 8)).collect();
    for (b, run) in buckets.chunks(4).enumerate() {
        assert!(run.iter().all(|&x| x == b), "{buckets:?}");
    }
    assert!((1..=32).all(|n| output_bucket(n, 1) == 0));
    assert_eq!((1..=32).map(|n| output_bucket(n, 4)).max(), Some(3));
}

#[test]
fn the_output_bucket_follows_the_pieces_on_the_board() {
    // Zero weights, bucket b's bias (b + 1) * 16320 = (b + 1) * 400 cp after the scaling
    // (bias * 400 / (255 * 64)): the evaluation names the bucket used.
    let h = 32;
    let out_b: Vec<i32> = (1..=8).map(|b| b * 16320).collect();
    let net = Network::new(h, vec![0; INPUTS * h], vec![0; h], vec![0; 8 * 2 * h], out_b).unwrap();
    assert_eq!(net.buckets(), 8);
    let mut acc = Accumulator::new();
    for (fen, pieces) in [
        ("rnbqkbnr/pppppppp/8/8/8/8/PPPPPPPP/RNBQKBNR[] w KQkq - 0 1", 32),
        ("4k3/8/8/8/8/8/4P3/4K3[QRRBBNNPPPPPPPqrrbbnnpppppppp] w - - 0 1", 3),
        ("r3k3/p7/8/8/8/8/4P3/R3K3[QRBBNNPPPPPPPqrbbnnppppppp] b - - 0 1", 6),
    ] {
        let pos = Position::from_fen(fen, Variant::Crazyhouse).unwrap();
        acc.refresh(&net, &pos);
        let want = ((pieces - 1) / 4 + 1) * 400;
        assert_eq!(nnue::evaluate(&net, &acc, pos.turn()), want, "{fen}");
    }
}

#[test]
fn file_round_trip() {
    let net = random_net(32, 1, 500, 4);
    let bytes = net.to_bytes();
    assert_eq!(bytes.len(), net.file_size());
    // 20 header bytes, (928 + 1 + 2) * 32 i16, one i32 bias, the u64 checksum.
    assert_eq!(bytes.len(), 20 + 2 * 931 * 32 + 4 + 8);
    // With 8 output buckets: 8 output layers of 2 * 32 weights and 8 biases.
    let eight = random_net(32, 8, 500, 4);
    let eight_bytes = eight.to_bytes();
    assert_eq!(eight_bytes.len(), 20 + 2 * (929 + 16) * 32 + 4 * 8 + 8);
    assert_eq!(Network::from_bytes(&eight_bytes).expect("8 buckets").to_bytes(), eight_bytes);
    let back = Network::from_bytes(&bytes).expect("round trip");
    assert_eq!(back.to_bytes(), bytes);
    let pos = Position::startpos(Variant::Crazyhouse);
    let (mut a, mut b) = (Accumulator::new(), Accumulator::new());
    a.refresh(&net, &pos);
    b.refresh(&back, &pos);
    assert_eq!(net.evaluate(&a, Color::White), back.evaluate(&b, Color::White));
    let path = std::env::temp_dir().join(format!("madhouse-nnue-test-{}.nnue", std::process::id()));
    net.save(&path).unwrap();
    let loaded = nnue::load_file(&path).expect("load_file");
    std::fs::remove_file(&path).ok();
    assert_eq!(loaded.to_bytes(), bytes);
    let missing = nnue::load_file("/nonexistent/madhouse.nnue").unwrap_err();
    assert!(matches!(missing, NnueError::Io(_)) && missing.to_string().contains("/nonexistent"));
}

/// Replaces the checksum so that a deliberately changed header or weight is what fails.
fn reseal(bytes: &mut [u8]) {
    let n = bytes.len() - 8;
    let sum = fnv1a(&bytes[..n]);
    bytes[n..].copy_from_slice(&sum.to_le_bytes());
}

fn error_of(bytes: &[u8]) -> (NnueError, String) {
    let e = Network::from_bytes(bytes).unwrap_err();
    let s = e.to_string();
    (e, s)
}

#[test]
fn every_corruption_gives_its_error() {
    let good = random_net(32, 1, 500, 5).to_bytes();
    let h = 32;
    // Truncation anywhere, including inside each part, names truncation.
    let weights_end = 20 + 2 * INPUTS * h;
    for len in
        [0, 3, 4, 7, 19, 20, 21, weights_end - 1, weights_end + 5, good.len() - 9, good.len() - 1]
    {
        let (e, s) = error_of(&good[..len]);
        assert!(matches!(e, NnueError::Truncated(_)), "length {len}: {e:?}");
        assert!(s.contains("truncated"), "{s}");
    }
    let mut b = good.clone();
    b[0] = b'X';
    let (e, s) = error_of(&b);
    assert_eq!(e, NnueError::BadMagic);
    assert!(s.contains("magic"));

    let mut b = good.clone();
    b[4..8].copy_from_slice(&2u32.to_le_bytes());
    reseal(&mut b);
    let (e, s) = error_of(&b);
    assert_eq!(e, NnueError::WrongVersion(2));
    assert!(s.contains("version 2"));

    let mut b = good.clone();
    b[8..12].copy_from_slice(&768u32.to_le_bytes());
    reseal(&mut b);
    let (e, s) = error_of(&b);
    assert_eq!(e, NnueError::FeatureMismatch { found: 768, expected: INPUTS as u32 });
    assert!(s.contains("feature count mismatch"), "{s}");

    for hidden in [0u32, 31, 2048] {
        let mut b = good.clone();
        b[12..16].copy_from_slice(&hidden.to_le_bytes());
        let (e, s) = error_of(&b);
        assert_eq!(e, NnueError::BadHidden(hidden));
        assert!(s.contains("hidden size"));
    }

    for buckets in [0u32, MAX_OUTPUT_BUCKETS as u32 + 1] {
        let mut b = good.clone();
        b[16..20].copy_from_slice(&buckets.to_le_bytes());
        let (e, s) = error_of(&b);
        assert_eq!(e, NnueError::BadBuckets(buckets));
        assert!(s.contains("output buckets"));
    }
    // A header with more buckets than the arrays hold reads past the end.
    let mut b = good.clone();
    b[16..20].copy_from_slice(&4u32.to_le_bytes());
    let (e, _) = error_of(&b);
    assert!(matches!(e, NnueError::Truncated(_)), "{e:?}");

    // One flipped bit in the weights, or in the checksum itself.
    for at in [100, weights_end + 3, good.len() - 1] {
        let mut b = good.clone();
        b[at] ^= 0x10;
        let (e, s) = error_of(&b);
        assert!(matches!(e, NnueError::Checksum { .. }), "byte {at}: {e:?}");
        assert!(s.contains("checksum"));
    }

    let mut b = good.clone();
    b.extend_from_slice(&[0, 0]);
    assert_eq!(error_of(&b).0, NnueError::TrailingBytes(2));

    // An output weight beyond the limit, with a valid checksum.
    let mut b = good.clone();
    let out_at = weights_end + 2 * h;
    b[out_at..out_at + 2].copy_from_slice(&128i16.to_le_bytes());
    reseal(&mut b);
    let (e, s) = error_of(&b);
    assert_eq!(e, NnueError::OutputWeightRange(128));
    assert!(s.contains("outside"));

    assert!(Network::from_bytes(&good).is_ok());
}

/// `fen` with the board mirrored left to right, written from the FEN text alone (ranks
/// reversed token by token, a promoted mark staying with its piece; the en-passant file
/// mirrored), so it checks the feature code from outside.
fn mirror_fen_files(fen: &str) -> String {
    let mut fields: Vec<String> = fen.split_whitespace().map(str::to_string).collect();
    let (board, pocket) = match fields[0].find('[') {
        Some(i) => (fields[0][..i].to_string(), fields[0][i..].to_string()),
        None => (fields[0].clone(), String::new()),
    };
    let ranks: Vec<String> = board
        .split('/')
        .map(|rank| {
            let mut tokens: Vec<String> = Vec::new();
            for c in rank.chars() {
                match (c, tokens.last_mut()) {
                    ('~', Some(last)) => last.push('~'),
                    _ => tokens.push(c.to_string()),
                }
            }
            tokens.reverse();
            tokens.concat()
        })
        .collect();
    fields[0] = format!("{}{pocket}", ranks.join("/"));
    if fields[3] != "-" {
        let b = fields[3].as_bytes();
        fields[3] = format!("{}{}", (b'a' + b'h' - b[0]) as char, b[1] as char);
    }
    fields.join(" ")
}

#[test]
fn file_mirroring_of_features_matches_the_mirrored_position() {
    // The trainer's augmentation (`features::mirror_files`) must name the features of the
    // position mirrored left to right, for both perspectives.
    let mut rng = Rng::new(31);
    let mut checked = 0;
    for game in 0..40 {
        let mut pos = Position::startpos(Variant::Crazyhouse);
        for _ in 0..120 {
            let moves: Vec<Move> = pos.legal_moves().iter().copied().collect();
            if moves.is_empty() {
                break;
            }
            pos = pos.after(moves[rng.below(moves.len())]);
            if pos.fen().split_whitespace().nth(2).is_none_or(|c| c != "-") {
                continue;
            }
            let mirrored = Position::from_fen(&mirror_fen_files(&pos.fen()), Variant::Crazyhouse)
                .unwrap_or_else(|e| panic!("game {game}: {} -> {e}", pos.fen()));
            for perspective in [Color::White, Color::Black] {
                let mut want: Vec<u16> =
                    nnue::features::active(&mirrored, perspective).as_slice().to_vec();
                let mut got: Vec<u16> = nnue::features::active(&pos, perspective)
                    .as_slice()
                    .iter()
                    .map(|&f| nnue::features::mirror_files(f))
                    .collect();
                want.sort_unstable();
                got.sort_unstable();
                assert_eq!(got, want, "{} ({perspective:?})", pos.fen());
            }
            checked += 1;
        }
    }
    assert!(checked > 1000, "only {checked} positions without castling rights");
}
