//! NNUE inference: incremental accumulator updates against refreshes over random games in
//! all three variants, every SIMD path against scalar on real positions, the network file's
//! round trip and every corruption, and a hand-set network with a hand-computed output.

mod common;

use madhouse::core::{Color, Move, MoveKind, Position, Variant};
use madhouse::nnue::features::output_bucket;
use madhouse::nnue::network::fnv1a;
use madhouse::nnue::{
    self, Accumulator, BucketCache, InputLayout, Kernel, Network, NnueError, INPUTS,
    MAX_OUTPUT_BUCKETS, OUTPUT_WEIGHT_MAX,
};
use madhouse::rng::Rng;
use std::sync::Arc;

/// A network with random weights: accumulator weights in +-`range`, output weights over
/// their whole allowed range, `buckets` output layers with different biases.
fn random_net(h: usize, buckets: usize, range: i32, seed: u64) -> Network {
    random_net_with(InputLayout::PLAIN, h, buckets, range, seed)
}

/// As [`random_net`] with inputs arranged as `inputs` (king buckets).
fn random_net_with(
    inputs: InputLayout,
    h: usize,
    buckets: usize,
    range: i32,
    seed: u64,
) -> Network {
    let mut rng = Rng::new(seed);
    let mut r = |n: usize, m: i32| -> Vec<i16> {
        (0..n).map(|_| (rng.below(2 * m as usize + 1) as i32 - m) as i16).collect()
    };
    let ft_w = r(inputs.rows() * h, range);
    let ft_b = r(h, range);
    let out_w = r(buckets * 2 * h, OUTPUT_WEIGHT_MAX);
    let out_b = (0..buckets as i32).map(|b| 1234 + 50_000 * b).collect();
    Network::with_inputs(inputs, h, ft_w, ft_b, out_w, out_b).expect("valid network")
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
    /// Moves after which a perspective's king is in another king bucket.
    bucket_changes: u32,
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

/// One kernel's copy of the network following a game with its own accumulators and
/// king-bucket cache, as a search thread does.
struct Follower {
    net: Network,
    acc: Box<Accumulator>,
    next: Box<Accumulator>,
    cache: BucketCache,
}

/// Plays random games with a network of `inputs`; after every move checks against a
/// refresh with the scalar kernel: the update without a cache, and each kernel's update
/// through its own cache (kept across games, so entries are reused from far-away
/// positions); the piece count that picks the output bucket; and every kernel's evaluation.
fn random_games(variant: Variant, games: usize, seed: u64, inputs: InputLayout) -> Seen {
    let h = 64;
    let net = random_net_with(inputs, h, MAX_OUTPUT_BUCKETS, 300, seed);
    let mut followers: Vec<Follower> = Kernel::available()
        .into_iter()
        .filter_map(|k| net.with_kernel(k))
        .map(|net| {
            let mut cache = BucketCache::new();
            cache.prepare(&net);
            Follower { net, acc: Box::default(), next: Box::default(), cache }
        })
        .collect();
    let scalar = net.with_kernel(Kernel::Scalar).expect("scalar always available");
    let mut rng = Rng::new(seed);
    let mut seen = Seen::default();
    let (mut acc, mut next, mut fresh) =
        (Box::new(Accumulator::new()), Box::new(Accumulator::new()), Box::new(Accumulator::new()));
    for _ in 0..games {
        let mut pos = Position::startpos(variant);
        acc.refresh(&net, &pos);
        for f in &mut followers {
            f.acc.refresh(&f.net, &pos);
        }
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
            if Color::ALL.iter().any(|&c| inputs.bucket(&pos, c) != inputs.bucket(&child, c)) {
                seen.bucket_changes += 1;
            }
            let what = format!("{} after {m:?} from {}", variant.name(), pos.fen());
            next.update(&net, &acc, &pos, &child);
            fresh.refresh(&scalar, &child);
            assert_same(&next, &fresh, h, &what);
            assert_eq!(next.board_pieces(), child.occupied().count() as usize, "{}", child.fen());
            let want = scalar.evaluate(&fresh, child.turn());
            for f in &mut followers {
                f.next.update_cached(&f.net, &f.acc, &pos, &child, &mut f.cache);
                assert_same(
                    &f.next,
                    &fresh,
                    h,
                    &format!("{} cached: {what}", f.net.kernel().name()),
                );
                assert_eq!(f.next.board_pieces(), fresh.board_pieces());
                assert_eq!(
                    nnue::evaluate(&f.net, &f.next, child.turn()),
                    want,
                    "{:?} at {}",
                    f.net.kernel(),
                    child.fen()
                );
                std::mem::swap(&mut f.acc, &mut f.next);
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

/// As `check_coverage`, and kings changed bucket often enough that every cache entry was
/// reused many times.
fn check_bucket_coverage(seen: &Seen, inputs: InputLayout) {
    check_coverage(seen, true);
    assert!(seen.bucket_changes as usize > 20 * inputs.king_buckets(), "{seen:?}");
}

fn layout(king_buckets: usize, bucketed_pockets: bool) -> InputLayout {
    InputLayout::new(king_buckets, bucketed_pockets).expect("a predefined layout")
}

#[test]
fn incremental_equals_refresh_crazyhouse() {
    check_coverage(&random_games(Variant::Crazyhouse, 400, 1, InputLayout::PLAIN), true);
}

#[test]
fn incremental_equals_refresh_loop() {
    check_coverage(&random_games(Variant::Loop, 400, 2, InputLayout::PLAIN), true);
}

#[test]
fn incremental_equals_refresh_chessgi() {
    check_coverage(&random_games(Variant::Chessgi, 400, 3, InputLayout::PLAIN), true);
}

#[test]
fn incremental_equals_refresh_with_king_buckets_crazyhouse() {
    let inputs = layout(32, false);
    check_bucket_coverage(&random_games(Variant::Crazyhouse, 200, 4, inputs), inputs);
    let inputs = layout(4, true);
    check_bucket_coverage(&random_games(Variant::Crazyhouse, 100, 5, inputs), inputs);
}

#[test]
fn incremental_equals_refresh_with_king_buckets_loop() {
    let inputs = layout(16, true);
    check_bucket_coverage(&random_games(Variant::Loop, 200, 6, inputs), inputs);
    let inputs = layout(8, false);
    check_bucket_coverage(&random_games(Variant::Loop, 100, 7, inputs), inputs);
}

#[test]
fn incremental_equals_refresh_with_king_buckets_chessgi() {
    let inputs = layout(32, true);
    check_bucket_coverage(&random_games(Variant::Chessgi, 200, 8, inputs), inputs);
    let inputs = layout(16, false);
    check_bucket_coverage(&random_games(Variant::Chessgi, 100, 9, inputs), inputs);
}

#[test]
fn null_move_and_unrelated_positions_update_correctly() {
    // A null move changes no feature; a jump to an unrelated position changes many and must
    // fall back to a refresh (with king buckets: from the cache, for both perspectives).
    let h = 32;
    let a = Position::from_fen(
        "r1bqk2r/pppp1ppp/2n1p3/4P3/1b1Pn3/2NB1N2/PPP2PPP/R1BQK2R[QNNpp] b KQkq - 0 1",
        Variant::Crazyhouse,
    )
    .unwrap();
    let b = Position::startpos(Variant::Crazyhouse);
    let c = Position::from_fen("8/2k5/8/8/8/8/5K2/8[QRp] w - - 0 1", Variant::Crazyhouse).unwrap();
    let mut null = a.clone();
    null.play_null();
    for inputs in [InputLayout::PLAIN, layout(8, false), layout(32, true)] {
        let net = random_net_with(inputs, h, MAX_OUTPUT_BUCKETS, 1000, 9);
        let mut cache = BucketCache::new();
        cache.prepare(&net);
        let (mut acc_a, mut out, mut fresh) =
            (Accumulator::new(), Accumulator::new(), Accumulator::new());
        acc_a.refresh(&net, &a);
        for (to, what) in
            [(&null, "null move"), (&b, "unrelated"), (&c, "kings moved"), (&b, "back")]
        {
            fresh.refresh(&net, to);
            out.update(&net, &acc_a, &a, to);
            assert_same(&out, &fresh, h, &format!("{inputs:?}: {what}"));
            out.update_cached(&net, &acc_a, &a, to, &mut cache);
            assert_same(&out, &fresh, h, &format!("{inputs:?}: {what}, cached"));
        }
    }
}

#[test]
fn king_bucket_rows_by_hand() {
    // H = 32, 4 king buckets (bucket 0: back rank a-d, 1: back rank e-h, 2 and 3: the rest
    // by halves). With shared pockets the rows are bucket * 768 + feature for the board and
    // 3 * 768 + feature for pockets; bucketed, bucket * 928 + feature for both.
    let h = 32;
    let white_e1 =
        Position::from_fen("4k3/8/8/8/8/8/8/4K3[P] w - - 0 1", Variant::Crazyhouse).unwrap();
    let white_d1 = white_e1.after(Move::normal(
        madhouse::core::Square::parse("e1").unwrap(),
        madhouse::core::Square::parse("d1").unwrap(),
    ));
    for bucketed_pockets in [false, true] {
        let inputs = layout(4, bucketed_pockets);
        let stride = if bucketed_pockets { 928 } else { 768 };
        let mut ft_w = vec![0i16; inputs.rows() * h];
        // Own king on e1 (feature 5 * 64 + 4 = 324) in bucket 1 -> neuron 0: 100.
        ft_w[(stride + 324) * h] = 100;
        // Own king on d1 (323) in bucket 0 -> neuron 0: 7.
        ft_w[323 * h] = 7;
        // Their king on e8 (11 * 64 + 60 = 764) in bucket 1 -> neuron 1: 50.
        ft_w[(stride + 764) * h + 1] = 50;
        // One own pawn in hand (feature 768) -> neuron 2: 9 in bucket 1, or shared; 3 in
        // bucket 0 when pockets are bucketed.
        if bucketed_pockets {
            ft_w[(928 + 768) * h + 2] = 9;
            ft_w[768 * h + 2] = 3;
        } else {
            ft_w[(3 * 768 + 768) * h + 2] = 9;
        }
        let net =
            Network::with_inputs(inputs, h, ft_w, vec![0; h], vec![0; 2 * h], vec![0]).unwrap();
        // Ke1: White's view [100, 50, 9]. Black's view: own king e8 -> e1 (324, bucket 1)
        // gives 100, their king e1 -> e8 (764) 50, White's pawn is theirs (848): 0.
        // Kd1: White's bucket 0: own king d1 7, their king 764 of bucket 0 is zero, the pawn
        // 9 shared or 3 in bucket 0. Black's view: their king now on d8 (763): [100, 0, 0].
        let pocket_d1 = if bucketed_pockets { 3 } else { 9 };
        for k in Kernel::available() {
            let net = net.with_kernel(k).unwrap();
            let mut cache = BucketCache::new();
            cache.prepare(&net);
            let (mut e1, mut d1) = (Accumulator::new(), Accumulator::new());
            e1.refresh(&net, &white_e1);
            assert_eq!(e1.values(Color::White)[..4], [100, 50, 9, 0], "{k:?} {inputs:?}");
            assert_eq!(e1.values(Color::Black)[..4], [100, 50, 0, 0], "{k:?} {inputs:?}");
            for cached in [false, true] {
                if cached {
                    d1.update_cached(&net, &e1, &white_e1, &white_d1, &mut cache);
                } else {
                    d1.update(&net, &e1, &white_e1, &white_d1);
                }
                assert_eq!(d1.values(Color::White)[..4], [7, 0, pocket_d1, 0], "{k:?} {inputs:?}");
                assert_eq!(d1.values(Color::Black)[..4], [100, 0, 0, 0], "{k:?} {inputs:?}");
            }
            assert!(d1.values(Color::White)[4..h].iter().all(|&v| v == 0));
        }
    }
}

/// The hand-set network of `hand_computed_output`: H = 32, zero except a few weights.
fn hand_net() -> Network {
    let (ft_w, ft_b, out_w, out_b) = hand_arrays();
    Network::new(32, ft_w, ft_b, out_w, out_b).unwrap()
}

/// The arrays of [`hand_net`]: accumulator weights and biases, output weights and biases.
fn hand_arrays() -> (Vec<i16>, Vec<i16>, Vec<i16>, Vec<i32>) {
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
    (ft_w, vec![0; h], out_w, vec![5000])
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

    for version in [0u32, 3, 100] {
        let mut b = good.clone();
        b[4..8].copy_from_slice(&version.to_le_bytes());
        reseal(&mut b);
        let (e, s) = error_of(&b);
        assert_eq!(e, NnueError::WrongVersion(version));
        assert!(s.contains(&format!("version {version} is not supported")), "{s}");
    }

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

/// A version-1 file laid out here field by field (not by `to_bytes`): magic, version 1,
/// inputs, hidden, output buckets, the arrays, the checksum.
fn v1_file(h: u32, ft_w: &[i16], ft_b: &[i16], out_w: &[i16], out_b: &[i32]) -> Vec<u8> {
    let mut b = b"MHNN".to_vec();
    for x in [1u32, 928, h, out_b.len() as u32] {
        b.extend_from_slice(&x.to_le_bytes());
    }
    for x in ft_w.iter().chain(ft_b).chain(out_w) {
        b.extend_from_slice(&x.to_le_bytes());
    }
    for x in out_b {
        b.extend_from_slice(&x.to_le_bytes());
    }
    b.extend_from_slice(&[0; 8]);
    reseal(&mut b);
    b
}

/// The version-2 header of `v1` (king buckets and input flags after the inputs) with the
/// same arrays.
fn as_v2(v1: &[u8], king_buckets: u32, flags: u32) -> Vec<u8> {
    let mut b = b"MHNN".to_vec();
    b.extend_from_slice(&2u32.to_le_bytes());
    b.extend_from_slice(&v1[8..12]);
    b.extend_from_slice(&king_buckets.to_le_bytes());
    b.extend_from_slice(&flags.to_le_bytes());
    b.extend_from_slice(&v1[12..]);
    reseal(&mut b);
    b
}

#[test]
fn a_version_1_file_loads_and_evaluates_as_before() {
    // The built-in network writes back byte for byte, so its identity (recorded in training
    // data) is unchanged. A plain network of real weights (one of its king buckets) is
    // written as version 1 and loads back as one king bucket, byte for byte.
    let embedded = nnue::embedded();
    assert_eq!(embedded.to_bytes(), nnue::EMBEDDED);
    let plain = common::plain_network_from_bucket(&embedded, 0).to_bytes();
    assert_eq!(u32::from_le_bytes(plain[4..8].try_into().unwrap()), 1);
    let back = Network::from_bytes(&plain).expect("version 1 loads");
    assert_eq!(back.inputs(), InputLayout::PLAIN);
    assert_eq!(back.to_bytes(), plain);
    // A version-1 file made here gives the network of its arrays, evaluates as the hand-set
    // network (hand_computed_output's 156 cp) and writes back as the same version-1 bytes.
    let h = 32;
    let (w, b, o, ob) = hand_arrays();
    let mut rng = Rng::new(3);
    let file = v1_file(h as u32, &w, &b, &o, &ob);
    assert_eq!(hand_net().to_bytes(), file, "a plain network is written as version 1");
    let net = Network::from_bytes(&file).expect("version 1 loads");
    assert_eq!(net.inputs(), InputLayout::PLAIN);
    let pos = Position::from_fen("4k3/8/8/8/8/8/4P3/4K3[] w - - 0 1", Variant::Crazyhouse).unwrap();
    let mut acc = Accumulator::new();
    acc.refresh(&net, &pos);
    assert_eq!(net.evaluate(&acc, Color::White), 156);
    // The same arrays under a version-2 header with one king bucket: the same network,
    // written back as version 1. Random weights this time, over random positions.
    let rand: Vec<i16> = (0..928 * h).map(|_| rng.below(601) as i16 - 300).collect();
    let v1 = v1_file(h as u32, &rand, &b, &o, &[77]);
    let (a, c) =
        (Network::from_bytes(&v1).unwrap(), Network::from_bytes(&as_v2(&v1, 1, 0)).unwrap());
    assert_eq!(c.inputs(), InputLayout::PLAIN);
    assert_eq!(c.to_bytes(), v1);
    let mut pos = Position::startpos(Variant::Crazyhouse);
    let (mut x, mut y) = (Accumulator::new(), Accumulator::new());
    for _ in 0..60 {
        let moves = pos.legal_moves();
        if moves.is_empty() {
            break;
        }
        pos = pos.after(rng.pick(moves.as_slice()));
        x.refresh(&a, &pos);
        y.refresh(&c, &pos);
        assert_eq!(a.evaluate(&x, pos.turn()), c.evaluate(&y, pos.turn()));
    }
}

#[test]
fn a_king_bucket_file_round_trips_as_version_2() {
    let h = 32;
    for (king_buckets, bucketed_pockets) in [(4, false), (8, true), (32, false)] {
        let inputs = layout(king_buckets, bucketed_pockets);
        let net = random_net_with(inputs, h, 2, 500, king_buckets as u64);
        let bytes = net.to_bytes();
        // Header by hand: version 2, 928 inputs, the buckets, flag bit 0 for bucketed
        // pockets, H, 2 output buckets; then N * 768 + 160 (or N * 928) rows.
        let flags = u32::from(bucketed_pockets);
        let header: Vec<u8> = [2u32, 928, king_buckets as u32, flags, 32, 2]
            .iter()
            .flat_map(|x| x.to_le_bytes())
            .collect();
        assert_eq!(&bytes[..4], b"MHNN");
        assert_eq!(bytes[4..28], header[..]);
        let rows = if bucketed_pockets { king_buckets * 928 } else { king_buckets * 768 + 160 };
        assert_eq!(bytes.len(), 28 + 2 * (rows + 1 + 2 * 2) * h + 4 * 2 + 8);
        assert_eq!(bytes.len(), net.file_size());
        let back = Network::from_bytes(&bytes).expect("version 2 loads");
        assert_eq!(back.inputs(), inputs);
        assert_eq!(back.to_bytes(), bytes);
        let path = std::env::temp_dir()
            .join(format!("madhouse-nnue-v2-{}-{king_buckets}.nnue", std::process::id()));
        net.save(&path).unwrap();
        let loaded = nnue::load_file(&path).expect("load_file");
        std::fs::remove_file(&path).ok();
        assert_eq!(loaded.to_bytes(), bytes);
        let mut rng = Rng::new(king_buckets as u64);
        let mut pos = Position::startpos(Variant::Crazyhouse);
        let (mut a, mut b) = (Accumulator::new(), Accumulator::new());
        for _ in 0..80 {
            let moves = pos.legal_moves();
            if moves.is_empty() {
                break;
            }
            pos = pos.after(rng.pick(moves.as_slice()));
            a.refresh(&net, &pos);
            b.refresh(&loaded, &pos);
            assert_eq!(net.evaluate(&a, pos.turn()), loaded.evaluate(&b, pos.turn()));
        }
        // Header fields this build does not know, and a truncated weight array.
        for (at, value, want) in [
            (12, 5u32, NnueError::BadKingBuckets(5)),
            (12, 64, NnueError::BadKingBuckets(64)),
            (16, 2, NnueError::BadInputFlags(2)),
        ] {
            let mut b = bytes.clone();
            b[at..at + 4].copy_from_slice(&value.to_le_bytes());
            let (e, s) = error_of(&b);
            assert_eq!(e, want);
            assert!(s.contains(&value.to_string()), "{s}");
        }
        let (e, _) = error_of(&bytes[..28 + 2 * rows * h - 1]);
        assert_eq!(e, NnueError::Truncated("accumulator weights"));
        // Fewer king buckets in the header than the arrays hold: a size error, not a load.
        if king_buckets > 4 {
            let mut b = bytes.clone();
            b[12..16].copy_from_slice(&4u32.to_le_bytes());
            reseal(&mut b);
            assert!(Network::from_bytes(&b).is_err());
        }
    }
}

#[test]
fn the_largest_layout_fits_the_file_cap() {
    // 32 king buckets with bucketed pockets at the largest hidden size and output buckets:
    // 28 header bytes, 2 * (32 * 928 + 1 + 8 * 2) * 1024 weight bytes, 8 i32 biases, the
    // checksum = 60,852,292 bytes, the most load_file reads.
    let (h, ob) = (nnue::MAX_HIDDEN, MAX_OUTPUT_BUCKETS);
    let inputs = layout(32, true);
    let net = Network::with_inputs(
        inputs,
        h,
        vec![0; inputs.rows() * h],
        vec![0; h],
        vec![0; ob * 2 * h],
        vec![0; ob],
    )
    .unwrap();
    assert_eq!(net.file_size(), 60_852_292);
    assert_eq!(nnue::MAX_FILE_BYTES, 60_852_292);
}

#[test]
fn a_network_copied_into_every_king_bucket_searches_as_the_plain_one() {
    // A plain network (the built-in network's first king bucket) copied into every king
    // bucket evaluates every position as the plain one does, so a search with it must be
    // the same search, node for node;
    // the two follow the game by different code (the bucketed update and its cache against
    // the plain update), and a wrong accumulator anywhere would change the tree.
    use madhouse::engine::{Engine, SearchRequest};
    use madhouse::search::{Info, Reporter};
    struct Quiet;
    impl Reporter for Quiet {
        fn info(&self, _: &Info) {}
    }
    let plain = Arc::new(common::plain_network_from_bucket(&nnue::embedded(), 0));
    let h = plain.hidden();
    let bytes = plain.to_bytes();
    // Version 1: 20 header bytes, then the arrays (see the network module's layout).
    let i16s = |from: usize, n: usize| -> Vec<i16> {
        bytes[from..from + 2 * n]
            .chunks_exact(2)
            .map(|c| i16::from_le_bytes([c[0], c[1]]))
            .collect()
    };
    let ft = i16s(20, INPUTS * h);
    let bias = i16s(20 + 2 * INPUTS * h, h);
    let out_w = i16s(20 + 2 * (INPUTS + 1) * h, plain.buckets() * 2 * h);
    let at = 20 + 2 * (INPUTS + 1 + 2 * plain.buckets()) * h;
    let out_b: Vec<i32> = bytes[at..at + 4 * plain.buckets()]
        .chunks_exact(4)
        .map(|c| i32::from_le_bytes([c[0], c[1], c[2], c[3]]))
        .collect();
    let fens = [
        "r1bqkb1r/ppp2ppp/3p4/5P2/3b1P2/2NQ2KP/PPP3P1/R1B1R3[NNPnp] b kq - 1 16",
        "r1b1k3/p1nnbprp/2p1p3/4P3/2BP4/2P2NKP/PP4P1/R1BQR3[QNPppp] w q - 0 21",
        "5rk1/ppp1bppp/3r1B2/1N2n3/4p1b1/2P1P3/PPPK1PPP/R4B1R[QNPqn] w - - 0 17",
    ];
    let search = |net: Arc<Network>, fen: &str| {
        let mut engine = Engine::new();
        engine.set_network(net);
        let root = Position::from_fen(fen, Variant::Crazyhouse).unwrap();
        let limits = madhouse::time::Limits { depth: Some(10), ..Default::default() };
        let r = engine
            .search_sync(SearchRequest { root, history: Vec::new(), limits }, Arc::new(Quiet));
        (r.best, r.score, r.depth, r.nodes)
    };
    for inputs in [layout(32, false), layout(8, true)] {
        let mut rows = vec![0i16; inputs.rows() * h];
        for b in 0..inputs.king_buckets() {
            for f in 0..INPUTS {
                let r = inputs.row(f, b);
                rows[r * h..(r + 1) * h].copy_from_slice(&ft[f * h..(f + 1) * h]);
            }
        }
        let bucketed = Arc::new(
            Network::with_inputs(inputs, h, rows, bias.clone(), out_w.clone(), out_b.clone())
                .unwrap(),
        );
        for fen in fens {
            let want = search(plain.clone(), fen);
            assert!(want.3 > 10_000, "{fen}: a search of {} nodes", want.3);
            assert_eq!(search(bucketed.clone(), fen), want, "{inputs:?} {fen}");
        }
    }
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

#[test]
fn a_king_bucket_taken_out_evaluates_as_the_network_does_in_that_bucket() {
    // Checks the test helper that the searches above and the trainer's tests build on: the
    // plain network made of bucket b's rows must score every position where both kings
    // (each from its own side) stand in bucket b exactly as the built-in network does.
    let net = nnue::embedded();
    let inputs = net.inputs();
    let plains: Vec<_> =
        (0..inputs.king_buckets()).map(|b| common::plain_network_from_bucket(&net, b)).collect();
    // Every position of random games, not only their ends: with 8 or more buckets, both
    // kings in one of the back-rank buckets (two squares each) is rare at any one ply.
    let mut checked = vec![0; plains.len()];
    let mut rng = Rng::new(17);
    for _ in 0..1000 {
        let mut pos = Position::startpos(Variant::Crazyhouse);
        for _ in 0..120 {
            let b = inputs.bucket(&pos, Color::White);
            if inputs.bucket(&pos, Color::Black) == b {
                let (want, got) = (
                    nnue::evaluate_position(&net, &pos),
                    nnue::evaluate_position(&plains[b], &pos),
                );
                assert_eq!(got, want, "bucket {b}: {pos:?}");
                checked[b] += 1;
            }
            let moves = pos.legal_moves();
            if moves.is_empty() {
                break;
            }
            pos = pos.after(rng.pick(moves.as_slice()));
        }
    }
    for (b, &n) in checked.iter().enumerate() {
        assert!(
            n > 0,
            "no position with both kings in bucket {b} (checked per bucket: {checked:?})"
        );
    }
}
