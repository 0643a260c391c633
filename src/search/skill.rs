//! The strength limit: `Skill Level`, `UCI_LimitStrength` / `UCI_Elo` and `Skill Seed`.
//!
//! A limited level plays like a weaker player rather than a random blunderer:
//!
//! 1. **It searches less.** The level caps the search's nodes and depth ([`LEVELS`]), so a
//!    weak level sees only short tactics: a deep drop attack or a long mate lies beyond its
//!    horizon, as it does for a weak human, while a piece left hanging one move ahead does
//!    not. Nodes rather than time make a level equally strong on every machine and at every
//!    time control (as long as the clock allows the nodes), and make its games reproducible.
//!    It also spends only a share of the normal time budget, so a weak level moves quickly
//!    instead of burning its clock on a search it will not use.
//! 2. **It chooses among its best few moves.** The search scores the level's `candidates`
//!    best root moves exactly (MultiPV), and the level picks one at random, a move that loses
//!    `half_life_cp` centipawns against the best being half as likely as the best, one losing
//!    twice that a quarter as likely, and so on. Weak levels have long half-lives: they often
//!    play a second- or third-best move. Strong levels almost always play the best one.
//! 3. **Some moves are never chosen**, because people who play at that level would not choose
//!    them either, and because a bot that throws away a won game at random is no fun:
//!    - a move losing more than `max_loss_cp` against the best (a weak level does not hang its
//!      queen when its own search shows that it hangs);
//!    - a move the search sees being mated after, when another candidate is not mated (when
//!      all are, the longest resistance);
//!    - when the best candidate is winning (at least [`KEEP_WINNING_CP`]), a move that is no
//!      longer winning: a level converts its won positions instead of giving them away one
//!      move at a time;
//!    - when the search found a forced mate, anything but its shortest mate: a mate found is
//!      always played, at every level (weak levels find only short ones).
//!
//! The random choice uses the `Skill Seed` option (mixed with the position's key): with a
//! seed other than 0, the same game replays move for move (with one thread and no clock
//! cutting the search short; a limited search always uses one thread). Seed 0 draws a new
//! seed for every search, so that a bot does not repeat its games.
//!
//! The limit applies to play only. Analysis (`go infinite`, `UCI_AnalyseMode`, XBoard's
//! `analyze`) searches at full strength and shows the full search.
//!
//! `UCI_Elo` maps to a fractional level through [`LEVEL_ELO`], interpolating between rows of
//! [`LEVELS`]; `Skill Level` 0..19 are the rows themselves and 20 is the unlimited engine.
//! [`LEVEL_ELO`] is what the calibration (scripts/calibrate.py, docs/strength-limit.md) measures and corrects.

use std::sync::atomic::{AtomicU64, Ordering};

use super::{RootMove, Shared};
use crate::rng::Rng;
use crate::score::{INFINITE, MATE_BOUND};
use crate::time::Limits;

/// `Skill Level` of the unlimited engine (the option's maximum and default).
pub const SKILL_LEVEL_MAX: i64 = 20;

/// Largest `Skill Seed` (the largest 32-bit signed value, which every GUI can enter).
pub const SEED_MAX: i64 = i32::MAX as i64;

/// The Elo each row of [`LEVELS`] plays at, measured (docs/strength-limit.md, Calibration): the
/// calibration ladder of `scripts/calibrate.py` at 5+0.05, level 6 against Sjeng 11.2 (taken
/// as 2300) and SjaakII 1.4.1 (2350), every other level chained from it by matches of 100
/// games between neighbouring levels (and the strongest limited level), rounded to 10.
/// `UCI_Elo` is turned into a level by interpolating in this table: if a new calibration
/// measures a level more than 100 Elo away, its entry here is what changes.
pub const LEVEL_ELO: [i64; LEVEL_ROWS] = [
    1650, 1720, 1870, 1980, 2170, 2250, 2300, 2320, 2370, 2460, 2550, 2690, 2870, 2950, 3070, 3140,
    3310, 3400, 3570, 3730, 3850,
];

/// Smallest `UCI_Elo`: the weakest level's.
pub const ELO_MIN: i64 = LEVEL_ELO[0];
/// Largest `UCI_Elo`: the strongest limited level's (also the option's default).
pub const ELO_MAX: i64 = LEVEL_ELO[LEVEL_ROWS - 1];

/// When the best candidate scores at least this (centipawns), only moves that still score
/// at least this are chosen: a won position stays won by the level's own judgement.
pub const KEEP_WINNING_CP: i32 = 300;

/// Rows of [`LEVELS`]: levels 0 to 20.
pub const LEVEL_ROWS: usize = 21;

/// What a level may do: the search budget and how it chooses among the moves found.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub struct LevelParams {
    /// Node budget of a search (the whole search, MultiPV lines and mate solver included).
    pub nodes: u64,
    /// Deepest iteration.
    pub depth: i32,
    /// Root moves scored exactly and considered (MultiPV lines searched).
    pub candidates: usize,
    /// A move this many centipawns worse than the best is half as likely to be chosen.
    pub half_life_cp: i32,
    /// Moves losing more than this against the best are never chosen.
    pub max_loss_cp: i32,
    /// Share of the normal time budget the level may use, per mille.
    pub time_permille: u64,
}

const fn row(
    nodes: u64,
    depth: i32,
    candidates: usize,
    half_life_cp: i32,
    max_loss_cp: i32,
    time_permille: u64,
) -> LevelParams {
    LevelParams { nodes, depth, candidates, half_life_cp, max_loss_cp, time_permille }
}

/// Every level-dependent constant, one row per `Skill Level` (row 20 is the strongest
/// limited level, reached only through `UCI_Elo`); fractional levels (from `UCI_Elo`)
/// interpolate between rows.
/// - Nodes grow by about 1.47 a level, from 50 (in effect a one-ply search with its
///   captures and checks, whatever the budget: the first iteration always completes) to
///   110,000 (about a tenth of a second's search).
/// - Depth grows by two every three levels; the node budget binds first from the middle
///   levels on.
/// - Candidates: the weakest levels consider eight moves, strong ones three.
/// - The half-life of a move's chance falls from 300 to 8 cp and the largest loss from
///   900 cp to 40 cp, both geometrically. Level 0 may thus lose a minor piece (a swing of
///   500-600 cp in crazyhouse, where the piece also goes to the opponent's hand) but never
///   a queen; level 4 (350 cp) no longer loses a piece its search sees. The first calibration
///   had levels 0-5 with half-lives of 120-61 cp and caps of 400-225 cp: levels 0-7 then
///   spanned only about 200 Elo (a one-ply search with the network is already strong), so
///   the bottom rows were made more random to spread them (the calibration's second run).
/// - The time share rises from 10% to 60% of the normal budget.
#[rustfmt::skip]
pub const LEVELS: [LevelParams; LEVEL_ROWS] = [
    //  nodes  depth cand half-life max-loss time‰
    row(    50,  1,   8,   300,      900,     100), // 0
    row(    74,  1,   8,   235,      740,     125), // 1
    row(   110,  2,   7,   180,      600,     150), // 2
    row(   160,  3,   7,   135,      460,     175), // 3
    row(   230,  3,   6,   100,      350,     200), // 4
    row(   340,  4,   6,    72,      260,     225), // 5
    row(   500,  5,   5,    53,      200,     250), // 6
    row(   740,  5,   5,    47,      180,     275), // 7
    row(  1100,  6,   5,    41,      160,     300), // 8
    row(  1600,  7,   5,    35,      140,     325), // 9
    row(  2400,  7,   5,    31,      125,     350), // 10
    row(  3500,  8,   5,    27,      115,     375), // 11
    row(  5100,  9,   4,    24,      100,     400), // 12
    row(  7500,  9,   4,    21,       90,     425), // 13
    row( 11000, 10,   4,    18,       80,     450), // 14
    row( 16000, 11,   4,    16,       70,     475), // 15
    row( 24000, 11,   4,    14,       65,     500), // 16
    row( 35000, 12,   4,    12,       55,     525), // 17
    row( 51000, 13,   3,    10,       50,     550), // 18
    row( 76000, 13,   3,     9,       45,     575), // 19
    row(110000, 14,   3,     8,       40,     600), // 20
];

/// `2^(-i/16)` in units of 1/65536, for `i` in 0..16: the fractional halvings of a weight.
const POW2_SIXTEENTHS: [u64; 16] = [
    65536, 62757, 60097, 57549, 55109, 52773, 50535, 48393, 46341, 44376, 42495, 40693, 38968,
    37316, 35734, 34219,
];

/// A limited level in hundredths (0 to 2000): `Skill Level` n is `100 n`, `UCI_Elo` may fall
/// between rows.
#[derive(Copy, Clone, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub struct Level(u16);

impl Level {
    /// The hundredths of the strongest limited level.
    const MAX_HUNDREDTHS: i64 = (LEVEL_ROWS as i64 - 1) * 100;

    /// `Skill Level` `n` (clamped to 0..=20; 20 here is the strongest *limited* level).
    pub fn from_skill(n: i64) -> Level {
        Level((n.clamp(0, LEVEL_ROWS as i64 - 1) * 100) as u16)
    }

    /// The level meant to play at `elo` (clamped to `ELO_MIN..=ELO_MAX`), interpolated in
    /// [`LEVEL_ELO`].
    pub fn from_elo(elo: i64) -> Level {
        let elo = elo.clamp(ELO_MIN, ELO_MAX);
        for i in 0..LEVEL_ROWS - 1 {
            let (lo, hi) = (LEVEL_ELO[i], LEVEL_ELO[i + 1]);
            if elo <= hi {
                let frac = if hi > lo { (elo - lo) * 100 / (hi - lo) } else { 0 };
                return Level((i as i64 * 100 + frac) as u16);
            }
        }
        Level(Self::MAX_HUNDREDTHS as u16)
    }

    /// The level in hundredths.
    pub fn hundredths(self) -> u16 {
        self.0
    }

    /// The Elo the level is meant to play at (from [`LEVEL_ELO`]).
    pub fn elo(self) -> i64 {
        let (i, frac) = self.split();
        let lo = LEVEL_ELO[i];
        let hi = LEVEL_ELO[(i + 1).min(LEVEL_ROWS - 1)];
        lo + (hi - lo) * frac / 100
    }

    /// The row below the level and the hundredths above it.
    fn split(self) -> (usize, i64) {
        let h = (self.0 as i64).min(Self::MAX_HUNDREDTHS);
        ((h / 100) as usize, h % 100)
    }

    /// The level's budget and choice parameters, interpolated between rows.
    pub fn params(self) -> LevelParams {
        let (i, frac) = self.split();
        let (a, b) = (LEVELS[i], LEVELS[(i + 1).min(LEVEL_ROWS - 1)]);
        let mix = |x: i64, y: i64| x + (y - x) * frac / 100;
        LevelParams {
            nodes: mix(a.nodes as i64, b.nodes as i64) as u64,
            depth: mix(a.depth as i64, b.depth as i64) as i32,
            candidates: mix(a.candidates as i64, b.candidates as i64) as usize,
            half_life_cp: mix(a.half_life_cp as i64, b.half_life_cp as i64) as i32,
            max_loss_cp: mix(a.max_loss_cp as i64, b.max_loss_cp as i64) as i32,
            time_permille: mix(a.time_permille as i64, b.time_permille as i64) as u64,
        }
    }
}

/// The strength options as set (`UCI_LimitStrength`, `UCI_Elo`, `Skill Level`, `Skill Seed`).
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub struct StrengthOptions {
    /// `UCI_LimitStrength`: play at `elo`.
    pub limit_strength: bool,
    /// `UCI_Elo`.
    pub elo: i64,
    /// `Skill Level`, used when `limit_strength` is off; 20 is full strength.
    pub skill_level: i64,
    /// `Skill Seed`; 0 draws a new seed for every search.
    pub seed: u64,
}

impl Default for StrengthOptions {
    /// Full strength: limit off, `UCI_Elo` at the top, `Skill Level` 20, seed 0.
    fn default() -> Self {
        StrengthOptions {
            limit_strength: false,
            elo: ELO_MAX,
            skill_level: SKILL_LEVEL_MAX,
            seed: 0,
        }
    }
}

impl StrengthOptions {
    /// The level to play at: `UCI_Elo`'s when `UCI_LimitStrength` is on, else `Skill Level`'s
    /// below 20; `None` at full strength.
    pub fn level(&self) -> Option<Level> {
        if self.limit_strength {
            Some(Level::from_elo(self.elo))
        } else if self.skill_level < SKILL_LEVEL_MAX {
            Some(Level::from_skill(self.skill_level))
        } else {
            None
        }
    }

    /// The strength limit of a search with `limits`, capping them to the level's nodes and
    /// depth: none at full strength or for analysis. Its seed is `Skill Seed`, or a fresh one
    /// for every search when that is 0.
    pub fn for_search(&self, limits: &mut Limits) -> Option<Skill> {
        if limits.is_analysis() {
            return None;
        }
        let seed = match self.seed {
            0 => fresh_seed(),
            s => s,
        };
        let skill = Skill::new(self.level()?, seed);
        skill.limit(limits);
        Some(skill)
    }
}

/// A seed for a search under `Skill Seed` 0: the clock's nanoseconds and a counter, so that
/// two searches in the same nanosecond still differ.
fn fresh_seed() -> u64 {
    static COUNTER: AtomicU64 = AtomicU64::new(0);
    let nanos = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| d.as_nanos() as u64);
    let n = COUNTER.fetch_add(1, Ordering::Relaxed);
    (nanos ^ n.wrapping_mul(0x9e37_79b9_7f4a_7c15)).max(1)
}

/// One limited search: its level and the seed of its choice.
#[derive(Copy, Clone, Debug)]
pub struct Skill {
    level: Level,
    params: LevelParams,
    seed: u64,
}

impl Skill {
    /// A search at `level` whose choice draws from `seed` (mixed with the position's key).
    pub fn new(level: Level, seed: u64) -> Skill {
        Skill { level, params: level.params(), seed }
    }

    /// The level.
    pub fn level(&self) -> Level {
        self.level
    }

    /// The level's parameters.
    pub fn params(&self) -> &LevelParams {
        &self.params
    }

    /// Principal variations a search under this limit scores: the level's candidates, or
    /// the `shown` lines the GUI asked for if more.
    pub fn searched_multipv(&self, shown: usize) -> usize {
        shown.max(self.params.candidates)
    }

    /// Shapes a search about to start: one thread (the caller's part), the level's share of
    /// the time budget, the `shown` lines reported while the candidates are scored, and the
    /// limit itself for choosing the move at the end.
    pub fn shape(self, shared: &mut Shared, shown: usize) {
        shared.budget = shared.budget.share(self.params.time_permille);
        shared.shown_multipv = shown.max(1);
        shared.skill = Some(self);
    }

    /// Caps `limits` with the level's node and depth budget (the lower of the two wins).
    pub fn limit(&self, limits: &mut Limits) {
        let p = &self.params;
        limits.nodes = Some(limits.nodes.map_or(p.nodes, |n| n.min(p.nodes)));
        limits.depth = Some(limits.depth.map_or(p.depth, |d| d.min(p.depth)));
    }

    /// Which of `root_moves` (best first, as the search leaves them) to play in the position
    /// with Zobrist key `key`: an index into `root_moves`.
    pub fn choose(&self, root_moves: &[RootMove], key: u64) -> usize {
        let scores: Vec<i32> = root_moves
            .iter()
            .take(self.params.candidates)
            .map(|rm| if rm.score != -INFINITE { rm.score } else { rm.prev_score })
            .collect();
        self.pick(&scores, key)
    }

    /// Which of the candidate `scores` (internal units, side to move's view, `-INFINITE` for
    /// a move not scored) to play: an index into `scores`, 0 if it is empty. Only the first
    /// `candidates` scores count.
    pub fn pick(&self, scores: &[i32], key: u64) -> usize {
        let p = &self.params;
        let scores = &scores[..scores.len().min(p.candidates.max(1))];
        let Some((best_at, &best)) = scores
            .iter()
            .enumerate()
            .filter(|(_, &s)| s != -INFINITE)
            .max_by_key(|(i, &s)| (s, -(*i as i64)))
        else {
            return 0;
        };
        // A mate found is played by its shortest line; when every candidate is mated, the
        // longest resistance.
        if best >= MATE_BOUND || best <= -MATE_BOUND {
            return best_at;
        }
        let eligible = |s: i32| {
            s != -INFINITE
                && best - s <= p.max_loss_cp
                && s > -MATE_BOUND
                && (best < KEEP_WINNING_CP || s >= KEEP_WINNING_CP)
        };
        let weights: Vec<u64> = scores
            .iter()
            .map(|&s| if eligible(s) { weight(best - s, p.half_life_cp) } else { 0 })
            .collect();
        let total: u64 = weights.iter().sum();
        if total == 0 {
            return best_at;
        }
        let mut rng = Rng::new(self.seed ^ key);
        let mut r = rng.next_u64() % total;
        for (i, &w) in weights.iter().enumerate() {
            if r < w {
                return i;
            }
            r -= w;
        }
        best_at
    }
}

/// The weight of a move `loss` centipawns worse than the best: `65536 * 2^(-loss/half_life)`,
/// in integers so that every platform makes the same choice.
fn weight(loss: i32, half_life: i32) -> u64 {
    let sixteenths = loss.max(0) as u64 * 16 / half_life.max(1) as u64;
    let (whole, frac) = (sixteenths / 16, (sixteenths % 16) as usize);
    if whole >= 16 {
        return 0;
    }
    POW2_SIXTEENTHS[frac] >> whole
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::score::MATE;

    #[test]
    fn rows_grow_stronger() {
        for w in LEVELS.windows(2) {
            let (a, b) = (w[0], w[1]);
            assert!(b.nodes > a.nodes && b.depth >= a.depth && b.candidates <= a.candidates);
            assert!(b.half_life_cp < a.half_life_cp && b.max_loss_cp < a.max_loss_cp);
            assert!(b.time_permille > a.time_permille && b.time_permille <= 1000);
            assert!(a.candidates >= 1 && a.depth >= 1);
        }
        for w in LEVEL_ELO.windows(2) {
            assert!(w[1] > w[0], "LEVEL_ELO must increase: {w:?}");
        }
    }

    #[test]
    fn elo_maps_to_levels() {
        assert_eq!(Level::from_elo(ELO_MIN), Level::from_skill(0));
        assert_eq!(Level::from_elo(ELO_MAX), Level::from_skill(20));
        assert_eq!(Level::from_elo(-5), Level::from_skill(0));
        assert_eq!(Level::from_elo(LEVEL_ELO[7]), Level::from_skill(7));
        let mid = (LEVEL_ELO[7] + LEVEL_ELO[8]) / 2;
        assert_eq!(Level::from_elo(mid).hundredths(), 750);
        assert_eq!(Level::from_elo(mid).elo(), mid);
        let p = Level::from_elo(mid).params();
        assert_eq!(p.nodes, (LEVELS[7].nodes + LEVELS[8].nodes) / 2);
        let opts = StrengthOptions::default();
        assert_eq!(opts.level(), None);
        assert_eq!(StrengthOptions { skill_level: 3, ..opts }.level(), Some(Level::from_skill(3)));
        let limited = StrengthOptions { limit_strength: true, skill_level: 3, ..opts };
        assert_eq!(limited.level(), Some(Level::from_skill(20)));
    }

    #[test]
    fn weights_halve() {
        assert_eq!(weight(0, 50), 65536);
        assert_eq!(weight(50, 50), 32768);
        assert_eq!(weight(100, 50), 16384);
        assert!(weight(25, 50).abs_diff(46341) <= 1);
        assert_eq!(weight(10_000, 1), 0);
    }

    fn picks(level: i64, scores: &[i32], n: u64) -> Vec<usize> {
        (0..n).map(|s| Skill::new(Level::from_skill(level), s).pick(scores, 12345)).collect()
    }

    #[test]
    fn weak_levels_vary_strong_levels_do_not() {
        let scores = [40, 20, 0, -30, -60, -90];
        let weak = picks(0, &scores, 1000);
        let not_best = weak.iter().filter(|&&i| i != 0).count();
        assert!((300..900).contains(&not_best), "level 0 chose another move {not_best}/1000");
        let strong = picks(19, &scores, 1000);
        let not_best = strong.iter().filter(|&&i| i != 0).count();
        assert!(not_best < 300, "level 19 chose another move {not_best}/1000");
        // Always a candidate of the level (level 19 has three).
        assert!(strong.iter().all(|&i| i < 3));
    }

    #[test]
    fn caps_mates_and_wins() {
        // A move losing more than the cap is never chosen.
        let cap = LEVELS[0].max_loss_cp;
        assert!(picks(0, &[0, -cap - 1, -cap - 1], 500).iter().all(|&i| i == 0));
        // Never a move that is mated when another is not, even far behind.
        let mated = -MATE + 4;
        assert!(picks(0, &[-350, mated, -360], 500).iter().all(|&i| i != 1));
        // All mated: the longest resistance.
        assert!(picks(0, &[-MATE + 9, -MATE + 2], 50).iter().all(|&i| i == 0));
        // A mate found is played, the shortest one.
        assert!(picks(0, &[MATE - 5, MATE - 3, 200], 200).iter().all(|&i| i == 1));
        // Winning stays winning.
        let p = picks(0, &[500, 310, 290, 250], 500);
        assert!(p.iter().all(|&i| i <= 1) && p.contains(&1));
        // Unscored moves are never chosen; no scores at all gives the first move.
        assert!(picks(0, &[-INFINITE, 0, -INFINITE], 100).iter().all(|&i| i == 1));
        assert_eq!(picks(0, &[], 1), vec![0]);
    }

    #[test]
    fn the_seed_decides() {
        let scores = [0, -10, -20, -30, -40, -50];
        assert_eq!(picks(0, &scores, 64), picks(0, &scores, 64));
        let by_key: Vec<usize> = (0..64)
            .map(|k| Skill::new(Level::from_skill(0), 7).pick(&scores, k * 0x9e37_79b9))
            .collect();
        assert!(by_key.iter().any(|&i| i != by_key[0]), "the key never changed the choice");
    }

    #[test]
    fn limits_take_the_lower_budget() {
        let skill = Skill::new(Level::from_skill(0), 1);
        let mut limits = Limits { nodes: Some(10), ..Limits::default() };
        skill.limit(&mut limits);
        assert_eq!(limits.nodes, Some(10));
        assert_eq!(limits.depth, Some(LEVELS[0].depth));
        let mut limits = Limits { depth: Some(30), ..Limits::default() };
        skill.limit(&mut limits);
        assert_eq!(limits.nodes, Some(LEVELS[0].nodes));
    }
}
