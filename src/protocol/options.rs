//! The engine's options, declared once for both protocols.
//!
//! [`TABLE`] lists every option: its UCI name, its XBoard name (options XBoard sets through
//! commands of its own, such as `memory`, `cores`, `variant` or `hard`, have none), its kind
//! with default and range, and when it may change. UCI prints `option name ...` lines from it
//! and XBoard `feature option="..."` lines; both parse values through it; [`Settings::set`]
//! holds the effect of each option. Adding an option is one line of the table plus its effect.
//!
//! The tuning build (cargo feature `tune-search`) appends one spin option per row of the
//! search's table of tunable constants ([`crate::params::TUNABLES`]), named like the
//! constant, with its default and range; the UCI command `tune` of that build lists them with
//! their SPSA steps (`Spec::tune_line`). Normal builds have none of them.

use std::fmt;

use crate::core::{UnknownVariant, Variant};
use std::sync::Arc;

use crate::engine::{
    Engine, DEFAULT_HASH_MB, DEFAULT_MOVE_OVERHEAD_MS, DEFAULT_MULTIPV, DEFAULT_THREADS,
    DEFAULT_USE_NNUE, MAX_HASH_MB, MAX_MOVE_OVERHEAD_MS, MAX_MULTIPV, MAX_THREADS,
};
#[cfg(feature = "tune-search")]
use crate::params::{self, TUNABLES};
use crate::search::skill::{ELO_MAX, ELO_MIN, SEED_MAX, SKILL_LEVEL_MAX};

/// Which option (what [`Settings::set`] dispatches on).
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub enum Id {
    /// Search threads.
    Threads,
    /// Transposition table size, MB.
    Hash,
    /// Empty the transposition table and histories.
    ClearHash,
    /// The GUI may send `go ponder`.
    Ponder,
    /// Principal variations reported.
    MultiPv,
    /// Milliseconds kept in reserve per move.
    MoveOverhead,
    /// The variant played.
    Variant,
    /// Analysis mode: `go` without limits searches until `stop`.
    AnalyseMode,
    /// Win/draw/loss figures in info lines.
    ShowWdl,
    /// Accepted for lichess-bot's default configuration; never read.
    SyzygyPath,
    /// Evaluate with the network (else the hand-written evaluation).
    UseNnue,
    /// The network file (`<internal>`: the built-in network).
    EvalFile,
    /// Play at `UCI_Elo` (else at `Skill Level`).
    LimitStrength,
    /// The strength played at under `UCI_LimitStrength`.
    Elo,
    /// 0..19: a limited level; 20: full strength.
    SkillLevel,
    /// The seed of a limited level's choices; 0: a new one every search.
    SkillSeed,
    /// A tunable search constant (tuning build only): its row in `params::TUNABLES`.
    #[cfg(feature = "tune-search")]
    Tune(usize),
}

/// The type of an option, with its default and range.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub enum Kind {
    /// An integer in `min..=max`.
    Spin {
        /// Default value.
        default: i64,
        /// Smallest value.
        min: i64,
        /// Largest value.
        max: i64,
    },
    /// A boolean.
    Check {
        /// Default value.
        default: bool,
    },
    /// One of a list of words.
    Combo {
        /// Default value.
        default: &'static str,
        /// The words allowed.
        choices: &'static [&'static str],
    },
    /// An action without a value.
    Button,
    /// Free text.
    Text {
        /// Default value.
        default: &'static str,
    },
    /// A file path.
    File {
        /// Default value.
        default: &'static str,
    },
}

/// When an option's new value takes effect.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub enum When {
    /// At once (values a running search copied at its start are not affected).
    Now,
    /// At once when idle; during a search, the engine keeps it until the search ends.
    AfterSearch,
    /// Refused during a search.
    Idle,
}

/// One option.
#[derive(Copy, Clone, Debug)]
pub struct Spec {
    /// What it sets.
    pub id: Id,
    /// Its UCI name.
    pub uci: &'static str,
    /// Its name in XBoard's `feature option=`, if XBoard sets it that way.
    pub xboard: Option<&'static str>,
    /// Type, default and range.
    pub kind: Kind,
    /// When a change takes effect.
    pub when: When,
}

/// Protocol names of the variants, in `Variant::ALL` order.
const VARIANT_NAMES: [&str; Variant::ALL.len()] = {
    let mut names = [""; Variant::ALL.len()];
    let mut i = 0;
    while i < names.len() {
        names[i] = Variant::ALL[i].name();
        i += 1;
    }
    names
};

/// Every option, in the order GUIs show them.
#[cfg(not(feature = "tune-search"))]
pub const TABLE: &[Spec] = ENGINE_OPTIONS;

/// Every option, in the order GUIs show them: the engine's, then the tunable constants.
#[cfg(feature = "tune-search")]
pub const TABLE: &[Spec] = &with_tunables();

/// The options of the tuning build: the engine's, then a spin option per tunable constant
/// (changes are refused during a search, which reads the constants live).
#[cfg(feature = "tune-search")]
const fn with_tunables() -> [Spec; ENGINE_OPTIONS.len() + TUNABLES.len()] {
    let mut table = [ENGINE_OPTIONS[0]; ENGINE_OPTIONS.len() + TUNABLES.len()];
    let mut i = 0;
    while i < ENGINE_OPTIONS.len() {
        table[i] = ENGINE_OPTIONS[i];
        i += 1;
    }
    let mut row = 0;
    while row < TUNABLES.len() {
        let t = &TUNABLES[row];
        let kind = Kind::Spin { default: t.default, min: t.min, max: t.max };
        table[ENGINE_OPTIONS.len() + row] = spec(Id::Tune(row), t.name, None, kind, When::Idle);
        row += 1;
    }
    table
}

/// The engine's own options (every build).
const ENGINE_OPTIONS: &[Spec] = &[
    spec(Id::Threads, "Threads", None, spin(DEFAULT_THREADS, 1, MAX_THREADS), When::AfterSearch),
    spec(Id::Hash, "Hash", None, spin(DEFAULT_HASH_MB, 1, MAX_HASH_MB), When::AfterSearch),
    spec(Id::ClearHash, "Clear Hash", Some("ClearHash"), Kind::Button, When::Idle),
    spec(Id::Ponder, "Ponder", None, Kind::Check { default: false }, When::Now),
    spec(Id::MultiPv, "MultiPV", Some("MultiPV"), spin(DEFAULT_MULTIPV, 1, MAX_MULTIPV), When::Now),
    spec(
        Id::MoveOverhead,
        "Move Overhead",
        Some("MoveOverhead"),
        spin(DEFAULT_MOVE_OVERHEAD_MS as usize, 0, MAX_MOVE_OVERHEAD_MS as usize),
        When::Now,
    ),
    spec(
        Id::Variant,
        "UCI_Variant",
        None,
        Kind::Combo { default: VARIANT_NAMES[0], choices: &VARIANT_NAMES },
        When::Now,
    ),
    spec(Id::AnalyseMode, "UCI_AnalyseMode", None, Kind::Check { default: false }, When::Now),
    spec(Id::ShowWdl, "UCI_ShowWDL", None, Kind::Check { default: false }, When::Now),
    spec(Id::SyzygyPath, "SyzygyPath", None, Kind::Text { default: "" }, When::Now),
    spec(
        Id::UseNnue,
        "Use NNUE",
        Some("UseNNUE"),
        Kind::Check { default: DEFAULT_USE_NNUE },
        When::Now,
    ),
    spec(
        Id::EvalFile,
        "EvalFile",
        Some("EvalFile"),
        Kind::File { default: INTERNAL_NET },
        When::Now,
    ),
    spec(
        Id::LimitStrength,
        "UCI_LimitStrength",
        Some("LimitStrength"),
        Kind::Check { default: false },
        When::Now,
    ),
    spec(
        Id::Elo,
        "UCI_Elo",
        Some("Elo"),
        Kind::Spin { default: ELO_MAX, min: ELO_MIN, max: ELO_MAX },
        When::Now,
    ),
    spec(
        Id::SkillLevel,
        "Skill Level",
        Some("SkillLevel"),
        Kind::Spin { default: SKILL_LEVEL_MAX, min: 0, max: SKILL_LEVEL_MAX },
        When::Now,
    ),
    spec(
        Id::SkillSeed,
        "Skill Seed",
        Some("SkillSeed"),
        Kind::Spin { default: 0, min: 0, max: SEED_MAX },
        When::Now,
    ),
];

/// The `EvalFile` value that names the built-in network.
pub const INTERNAL_NET: &str = "<internal>";

const fn spec(
    id: Id,
    uci: &'static str,
    xboard: Option<&'static str>,
    kind: Kind,
    when: When,
) -> Spec {
    Spec { id, uci, xboard, kind, when }
}

const fn spin(default: usize, min: usize, max: usize) -> Kind {
    Kind::Spin { default: default as i64, min: min as i64, max: max as i64 }
}

/// A parsed option value.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Value {
    /// A spin value.
    Int(i64),
    /// A check value.
    Bool(bool),
    /// A combo or text value.
    Text(String),
    /// A button press.
    Press,
}

impl fmt::Display for Value {
    /// The value as a GUI would send it (`32`, `true`, a text; a button as `pressed`).
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Value::Int(i) => write!(f, "{i}"),
            Value::Bool(b) => write!(f, "{b}"),
            Value::Text(t) => f.write_str(t),
            Value::Press => f.write_str("pressed"),
        }
    }
}

/// Why an option was not set. The text is what the protocols show.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum OptionError {
    /// No option of that name.
    Unknown(String),
    /// The value does not fit the option.
    Invalid {
        /// Option name as given.
        name: String,
        /// The value given.
        value: String,
        /// What was expected.
        expected: String,
    },
    /// The option cannot change during a search.
    Busy(&'static str),
    /// The value was understood but could not be applied (a network file that does not load).
    Failed {
        /// Option name.
        name: &'static str,
        /// Why.
        reason: String,
    },
}

impl fmt::Display for OptionError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            OptionError::Unknown(name) => write!(f, "unknown option '{name}'"),
            OptionError::Invalid { name, value, expected } => {
                write!(f, "invalid value '{value}' for {name}: expected {expected}")
            }
            OptionError::Busy(name) => write!(f, "{name} ignored during a search"),
            OptionError::Failed { name, reason } => write!(f, "{name} not changed: {reason}"),
        }
    }
}

impl std::error::Error for OptionError {}

/// The protocol an option line or value is written for.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub enum Dialect {
    /// UCI: `true`/`false` checks, `<empty>` for an empty string.
    Uci,
    /// XBoard: `1`/`0` checks.
    Xboard,
}

/// The option with this UCI name (case-insensitive, as the UCI specification asks).
pub fn find_uci(name: &str) -> Option<&'static Spec> {
    TABLE.iter().find(|s| s.uci.eq_ignore_ascii_case(name))
}

/// The option with this XBoard name.
pub fn find_xboard(name: &str) -> Option<&'static Spec> {
    TABLE.iter().find(|s| s.xboard == Some(name))
}

/// The option with this id.
pub fn spec_of(id: Id) -> &'static Spec {
    TABLE.iter().find(|s| s.id == id).expect("every id is in the table")
}

impl Spec {
    /// The UCI `option name ...` line.
    pub fn uci_line(&self) -> String {
        let kind = match self.kind {
            Kind::Spin { default, min, max } => {
                format!("type spin default {default} min {min} max {max}")
            }
            Kind::Check { default } => format!("type check default {default}"),
            Kind::Combo { default, choices } => {
                let vars: Vec<String> = choices.iter().map(|c| format!("var {c}")).collect();
                format!("type combo default {default} {}", vars.join(" "))
            }
            Kind::Button => "type button".to_string(),
            Kind::Text { default } | Kind::File { default } => {
                format!(
                    "type string default {}",
                    if default.is_empty() { "<empty>" } else { default }
                )
            }
        };
        format!("option name {} {kind}", self.uci)
    }

    /// For a tunable constant of the tuning build, the line of the UCI command `tune` that
    /// gives its SPSA step beside its range (`tune NAME default D min A max B step S`;
    /// `scripts/spsa.py` reads it).
    #[cfg(feature = "tune-search")]
    pub fn tune_line(&self) -> Option<String> {
        let Id::Tune(row) = self.id else { return None };
        let t = TUNABLES.get(row)?;
        Some(format!(
            "tune {} default {} min {} max {} step {}",
            t.name, t.default, t.min, t.max, t.step
        ))
    }

    /// The XBoard `feature option="..."` line, for options XBoard sets by name.
    pub fn xboard_feature(&self) -> Option<String> {
        let name = self.xboard?;
        let kind = match self.kind {
            Kind::Spin { default, min, max } => format!("-spin {default} {min} {max}"),
            Kind::Check { default } => format!("-check {}", default as u8),
            Kind::Combo { default, choices } => {
                let rest: Vec<&str> = choices.iter().copied().filter(|c| *c != default).collect();
                format!("-combo *{default} /// {}", rest.join(" /// "))
            }
            Kind::Button => "-button".to_string(),
            Kind::Text { default } => format!("-string {default}"),
            Kind::File { default } => format!("-file {default}"),
        };
        Some(format!("feature option=\"{name} {kind}\""))
    }

    /// Parses `value` for this option (`name` is the name as given, for messages).
    pub fn parse(&self, name: &str, value: &str, dialect: Dialect) -> Result<Value, OptionError> {
        let invalid = |expected: String| OptionError::Invalid {
            name: name.to_string(),
            value: value.to_string(),
            expected,
        };
        match self.kind {
            Kind::Spin { min, max, .. } => match value.trim().parse::<i64>() {
                Ok(v) if (min..=max).contains(&v) => Ok(Value::Int(v)),
                _ => Err(invalid(format!("{min}..{max}"))),
            },
            Kind::Check { .. } => match (dialect, value.trim().to_ascii_lowercase().as_str()) {
                (Dialect::Uci, "true") | (Dialect::Xboard, "1") => Ok(Value::Bool(true)),
                (Dialect::Uci, "false") | (Dialect::Xboard, "0") => Ok(Value::Bool(false)),
                (Dialect::Uci, _) => Err(invalid("true or false".into())),
                (Dialect::Xboard, _) => Err(invalid("1 or 0".into())),
            },
            Kind::Combo { choices, .. } => choices
                .iter()
                .find(|c| c.eq_ignore_ascii_case(value.trim()))
                .map(|c| Value::Text(c.to_string()))
                .ok_or_else(|| invalid(choices.join(", "))),
            Kind::Button => Ok(Value::Press),
            Kind::Text { .. } | Kind::File { .. } => {
                let v = value.trim();
                let v = if dialect == Dialect::Uci && v == "<empty>" { "" } else { v };
                Ok(Value::Text(v.to_string()))
            }
        }
    }
}

/// What the options set outside the engine: the protocol session's side of them.
#[derive(Clone, Debug)]
pub struct Settings {
    /// The GUI may send `go ponder` (UCI `Ponder`).
    pub ponder: bool,
    /// `go` without limits searches until `stop`.
    pub analyse_mode: bool,
    /// Info lines carry `wdl W D L`.
    pub show_wdl: bool,
    /// The variant played.
    pub variant: Variant,
    /// Accepted and never read: crazyhouse has no tablebases.
    pub syzygy_path: String,
    /// The network file set with `EvalFile` (the engine holds the network itself).
    pub eval_file: String,
}

impl Default for Settings {
    /// Every option at its table default.
    fn default() -> Self {
        let check = |id| matches!(spec_of(id).kind, Kind::Check { default: true });
        let text = |id| match spec_of(id).kind {
            Kind::Text { default } | Kind::Combo { default, .. } | Kind::File { default } => {
                default
            }
            _ => "",
        };
        Settings {
            ponder: check(Id::Ponder),
            analyse_mode: check(Id::AnalyseMode),
            show_wdl: check(Id::ShowWdl),
            variant: text(Id::Variant).parse().unwrap_or(Variant::ALL[0]),
            syzygy_path: text(Id::SyzygyPath).to_string(),
            eval_file: text(Id::EvalFile).to_string(),
        }
    }
}

impl Settings {
    /// Sets option `spec` to `value` (already parsed by [`Spec::parse`]): the one place where
    /// each option takes effect. Options that wait for the search are kept by the engine.
    pub fn set(
        &mut self,
        engine: &mut Engine,
        spec: &Spec,
        value: Value,
    ) -> Result<(), OptionError> {
        if spec.when == When::Idle && engine.is_searching() {
            return Err(OptionError::Busy(spec.uci));
        }
        let int = |v: &Value| match v {
            Value::Int(i) => *i as u64,
            _ => 0,
        };
        let flag = matches!(value, Value::Bool(true));
        // For the log, before the value moves into the setting.
        let shown = value.to_string();
        match spec.id {
            Id::Threads => engine.set_threads(int(&value) as usize),
            Id::Hash => engine.set_hash(int(&value) as usize),
            Id::ClearHash => engine.clear(),
            Id::Ponder => self.ponder = flag,
            Id::MultiPv => engine.options.multipv = int(&value) as usize,
            Id::MoveOverhead => engine.options.move_overhead_ms = int(&value),
            Id::Variant => {
                if let Value::Text(name) = &value {
                    self.variant =
                        name.parse().map_err(|e: UnknownVariant| OptionError::Invalid {
                            name: spec.uci.to_string(),
                            value: name.clone(),
                            expected: e.to_string(),
                        })?;
                }
            }
            Id::AnalyseMode => self.analyse_mode = flag,
            Id::ShowWdl => self.show_wdl = flag,
            Id::SyzygyPath => {
                if let Value::Text(path) = value {
                    self.syzygy_path = path;
                }
            }
            Id::UseNnue => engine.use_network(flag),
            Id::LimitStrength => engine.options.strength.limit_strength = flag,
            Id::Elo => engine.options.strength.elo = int(&value) as i64,
            Id::SkillLevel => engine.options.strength.skill_level = int(&value) as i64,
            Id::SkillSeed => engine.options.strength.seed = int(&value),
            Id::EvalFile => {
                if let Value::Text(path) = value {
                    // A file that does not load changes nothing: the network in use stays.
                    let net = if path.is_empty() || path == INTERNAL_NET {
                        crate::nnue::embedded()
                    } else {
                        Arc::new(crate::nnue::load_file(&path).map_err(|e| {
                            OptionError::Failed { name: spec.uci, reason: e.to_string() }
                        })?)
                    };
                    engine.set_network(net);
                    self.eval_file = path;
                }
            }
            #[cfg(feature = "tune-search")]
            Id::Tune(row) => {
                if let Value::Int(v) = value {
                    params::set_tunable(row, v);
                }
            }
        }
        log::debug!("option {} set to {shown}", spec.uci);
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_are_unique() {
        for (i, a) in TABLE.iter().enumerate() {
            for b in &TABLE[i + 1..] {
                assert!(!a.uci.eq_ignore_ascii_case(b.uci), "{}", a.uci);
                assert!(a.xboard.is_none() || a.xboard != b.xboard, "{:?}", a.xboard);
                assert_ne!(a.id, b.id);
            }
        }
    }

    #[test]
    fn lines_and_parsing() {
        let hash = find_uci("hash").unwrap();
        assert_eq!(
            hash.uci_line(),
            format!("option name Hash type spin default 16 min 1 max {MAX_HASH_MB}")
        );
        assert_eq!(hash.parse("Hash", "64", Dialect::Uci), Ok(Value::Int(64)));
        assert!(hash.parse("Hash", "0", Dialect::Uci).is_err());
        assert!(hash.parse("Hash", "x", Dialect::Uci).is_err());
        let mpv = find_xboard("MultiPV").unwrap();
        assert_eq!(mpv.xboard_feature().unwrap(), "feature option=\"MultiPV -spin 1 1 500\"");
        let wdl = find_uci("UCI_ShowWDL").unwrap();
        assert_eq!(wdl.parse("x", "TRUE", Dialect::Uci), Ok(Value::Bool(true)));
        assert!(wdl.parse("x", "1", Dialect::Uci).is_err());
        assert_eq!(wdl.parse("x", "1", Dialect::Xboard), Ok(Value::Bool(true)));
        let var = find_uci("uci_variant").unwrap();
        assert_eq!(
            var.uci_line(),
            "option name UCI_Variant type combo default crazyhouse var crazyhouse var loop var chessgi"
        );
        assert_eq!(var.parse("v", "Loop", Dialect::Uci), Ok(Value::Text("loop".into())));
        assert!(var.parse("v", "atomic", Dialect::Uci).is_err());
        assert_eq!(
            find_uci("syzygypath").unwrap().parse("s", "<empty>", Dialect::Uci),
            Ok(Value::Text(String::new()))
        );
    }
}
