//! The data file: a header that says what the file holds, then the records.
//!
//! Every file `madhouse datagen`, `--convert-text` and `--convert-legacy` write starts with
//! a header of [`HEADER_BYTES`]; the fixed-size records of [`crate::nnue::data`] follow. The
//! header names the format, the variant, where the data came from, and for self-play data
//! each run: its seed, its search settings (node or depth limit, evaluation, random plies,
//! openings) and how many games of it the file holds. So a tool can refuse a file that is not
//! data, or data made otherwise, before it writes a byte, and datagen resumes every seed a
//! file holds where it stopped.
//!
//! # Layout (little-endian)
//!
//! The header is two slots of [`SLOT_BYTES`], each a whole copy with a sequence number and a
//! checksum. A writer replaces the older slot, so a crash while writing the header leaves the
//! other one intact; a reader takes the valid slot with the higher sequence number.
//!
//! | offset in slot | bytes | field |
//! |---|---|---|
//! | 0 | 8 | magic [`MAGIC`] (not text: a text file never starts with it) |
//! | 8 | 4 | header version ([`VERSION`]) |
//! | 12 | 4 | record size ([`RECORD_BYTES`]) |
//! | 16 | 8 | sequence number |
//! | 24 | 8 | bytes of records the header vouches for (whole games, synced) |
//! | 32 | 1 | variant (0 crazyhouse, 1 loop, 2 chessgi) |
//! | 33 | 1 | source: 0 self-play (datagen), 1 converted text, 2 converted headerless records |
//! | 34 | 2 | zero |
//! | 36 | 4 | number of runs |
//! | 40 | 48 each | runs: seed u64, games u64, limit kind u8 (1 nodes, 2 depth), positions recorded u8 (0 quiet ones only, 1 all: `--all-positions`), 2 zero bytes, random plies u32, limit u64, evaluation u64 (0 the hand-written one, else the network's identity, [`crate::nnue::Network::identity`]), openings u64 (0 none, else FNV-1a of the opening file's bytes) |
//! | `SLOT_BYTES - 8` | 8 | FNV-1a of the slot's bytes before it |
//!
//! Version 2 added the positions-recorded byte (and the flag of noisy positions in the
//! records, [`crate::nnue::data`]); in version 1 it is 0, so version 1 files read as quiet
//! data. A file this build writes to gets version 2; older builds refuse it by its version
//! instead of misreading it.
//!
//! Bytes after the records the header vouches for are a game torn by a crash: datagen cuts
//! them off when it resumes (it wrote them), readers ignore them.

use std::fmt;
use std::fs::File;
use std::io::{self, Read, Seek, SeekFrom, Write};
use std::path::Path;

use crate::core::Variant;
use crate::nnue::data::{decode, RECORD_BYTES};
use crate::nnue::network::fnv1a;
use crate::tools::file_error;

/// First bytes of a data file's header slot.
pub const MAGIC: [u8; 8] = [0x89, b'M', b'H', b'D', b'A', b'T', b'A', 0x1a];
/// Header format version this build writes.
pub const VERSION: u32 = 2;
/// The oldest header version this build reads.
pub const OLDEST_VERSION: u32 = 1;
/// Bytes of one header slot.
pub const SLOT_BYTES: usize = 8192;
/// Bytes before the first record: two slots.
pub const HEADER_BYTES: u64 = 2 * SLOT_BYTES as u64;
/// Bytes of one run's entry.
const RUN_BYTES: usize = 48;
/// Offset of the first run in a slot.
const RUNS_AT: usize = 40;
/// Most runs one file can record; more seeds go to other files (shards).
pub const MAX_RUNS: usize = (SLOT_BYTES - RUNS_AT - 8) / RUN_BYTES;

/// Where a file's data came from.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub enum Source {
    /// Self-play games of `madhouse datagen`, by run.
    SelfPlay,
    /// `madhouse datagen --convert-text`.
    Text,
    /// `madhouse datagen --convert-legacy`: records from before files had a header.
    Legacy,
}

impl Source {
    const fn code(self) -> u8 {
        match self {
            Source::SelfPlay => 0,
            Source::Text => 1,
            Source::Legacy => 2,
        }
    }

    fn from_code(c: u8) -> Option<Source> {
        [Source::SelfPlay, Source::Text, Source::Legacy].into_iter().find(|s| s.code() == c)
    }
}

impl fmt::Display for Source {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            Source::SelfPlay => "self-play (madhouse datagen)",
            Source::Text => "converted text lines",
            Source::Legacy => "converted records from before the header",
        })
    }
}

/// How each move of a run was searched.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub enum Limit {
    /// A fixed node count.
    Nodes(u64),
    /// A fixed depth.
    Depth(u64),
}

/// Which of its searched positions a run records.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub enum Recorded {
    /// Quiet ones only: not in check, and the move played neither captures nor promotes.
    Quiet,
    /// Every searched position, the noisy ones flagged ([`crate::nnue::data::Sample::noisy`]).
    All,
}

impl Recorded {
    const fn code(self) -> u8 {
        match self {
            Recorded::Quiet => 0,
            Recorded::All => 1,
        }
    }

    fn from_code(c: u8) -> Option<Recorded> {
        [Recorded::Quiet, Recorded::All].into_iter().find(|r| r.code() == c)
    }
}

/// The settings that shape a run's data: two runs with equal settings make data of one kind.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub struct Settings {
    /// Search per move.
    pub limit: Limit,
    /// Random plies after the opening.
    pub random_plies: u32,
    /// The evaluation searched with: 0 the hand-written one, else the network's identity.
    pub eval: u64,
    /// The opening file: 0 none (the start position), else FNV-1a of its bytes.
    pub openings: u64,
    /// Which positions are recorded.
    pub recorded: Recorded,
}

impl fmt::Display for Settings {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self.limit {
            Limit::Nodes(n) => write!(f, "--nodes {n}")?,
            Limit::Depth(d) => write!(f, "--depth {d}")?,
        }
        write!(f, ", --random-plies {}, ", self.random_plies)?;
        match self.eval {
            0 => write!(f, "hand-written evaluation")?,
            id => write!(f, "network {id:016x}")?,
        }
        match self.openings {
            0 => write!(f, ", no opening file")?,
            id => write!(f, ", openings {id:016x}")?,
        }
        match self.recorded {
            Recorded::Quiet => Ok(()),
            Recorded::All => write!(f, ", --all-positions"),
        }
    }
}

/// One self-play run in a file.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub struct Run {
    /// Its seed: game `i` depends on `(seed, i)` only.
    pub seed: u64,
    /// Games `0..games` are in the file.
    pub games: u64,
    /// Its settings.
    pub settings: Settings,
}

/// What a data file's header says.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Header {
    /// The variant of every record.
    pub variant: Variant,
    /// Where the data came from.
    pub source: Source,
    /// Bytes of records vouched for (after the header).
    pub data_bytes: u64,
    /// The self-play runs, oldest first (none for converted data).
    pub runs: Vec<Run>,
    /// Sequence number of the slot it was read from (or will be written as).
    sequence: u64,
    /// Version of the slot it was read from (a header written by this build: [`VERSION`]).
    version: u32,
}

/// Why a file is not a data file this tool can use.
#[derive(Debug)]
pub enum HeaderError {
    /// Reading failed.
    Io(io::Error),
    /// The file is empty.
    Empty,
    /// No header: text, another program's file, or anything else.
    NotData,
    /// Records without a header, as datagen wrote them before headers existed.
    Legacy,
    /// The magic is there but neither slot is whole (checksum, version or fields).
    Damaged(&'static str),
    /// The file is shorter than its header says.
    Short {
        /// The file's length.
        len: u64,
        /// What the header needs.
        needed: u64,
    },
}

impl fmt::Display for HeaderError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            HeaderError::Io(e) => write!(f, "{e}"),
            HeaderError::Empty => f.write_str("the file is empty, not a Madhouse data file"),
            HeaderError::NotData => {
                f.write_str("not a Madhouse data file (no data-file header at its start)")
            }
            HeaderError::Legacy => f.write_str(
                "records without a header, from a datagen before data files had one: convert \
                 them once with `madhouse datagen --convert-legacy FILE --out NEW`",
            ),
            HeaderError::Damaged(what) => write!(f, "damaged data-file header ({what})"),
            HeaderError::Short { len, needed } => write!(
                f,
                "the file has {len} bytes but its header vouches for {needed}: damaged or cut"
            ),
        }
    }
}

impl std::error::Error for HeaderError {}

impl From<io::Error> for HeaderError {
    fn from(e: io::Error) -> HeaderError {
        HeaderError::Io(e)
    }
}

fn variant_code(v: Variant) -> u8 {
    Variant::ALL.iter().position(|&x| x == v).unwrap_or(0) as u8
}

impl Header {
    /// A header for a new file without records.
    pub fn new(variant: Variant, source: Source) -> Header {
        Header { variant, source, data_bytes: 0, runs: Vec::new(), sequence: 0, version: VERSION }
    }

    /// Records the header vouches for.
    pub fn records(&self) -> u64 {
        self.data_bytes / RECORD_BYTES as u64
    }

    /// The run of `seed`, if the file holds one.
    pub fn run(&self, seed: u64) -> Option<&Run> {
        self.runs.iter().find(|r| r.seed == seed)
    }

    fn encode(&self) -> [u8; SLOT_BYTES] {
        let mut b = [0u8; SLOT_BYTES];
        b[..8].copy_from_slice(&MAGIC);
        b[8..12].copy_from_slice(&VERSION.to_le_bytes());
        b[12..16].copy_from_slice(&(RECORD_BYTES as u32).to_le_bytes());
        b[16..24].copy_from_slice(&self.sequence.to_le_bytes());
        b[24..32].copy_from_slice(&self.data_bytes.to_le_bytes());
        b[32] = variant_code(self.variant);
        b[33] = self.source.code();
        b[36..40].copy_from_slice(&(self.runs.len() as u32).to_le_bytes());
        for (i, r) in self.runs.iter().enumerate() {
            let e = &mut b[RUNS_AT + i * RUN_BYTES..RUNS_AT + (i + 1) * RUN_BYTES];
            let (kind, limit) = match r.settings.limit {
                Limit::Nodes(n) => (1u8, n),
                Limit::Depth(d) => (2u8, d),
            };
            e[0..8].copy_from_slice(&r.seed.to_le_bytes());
            e[8..16].copy_from_slice(&r.games.to_le_bytes());
            e[16] = kind;
            e[17] = r.settings.recorded.code();
            e[20..24].copy_from_slice(&r.settings.random_plies.to_le_bytes());
            e[24..32].copy_from_slice(&limit.to_le_bytes());
            e[32..40].copy_from_slice(&r.settings.eval.to_le_bytes());
            e[40..48].copy_from_slice(&r.settings.openings.to_le_bytes());
        }
        let sum = fnv1a(&b[..SLOT_BYTES - 8]);
        b[SLOT_BYTES - 8..].copy_from_slice(&sum.to_le_bytes());
        b
    }

    fn decode(b: &[u8]) -> Result<Header, &'static str> {
        let u32_at = |o: usize| u32::from_le_bytes(b[o..o + 4].try_into().expect("4 bytes"));
        let u64_at = |o: usize| u64::from_le_bytes(b[o..o + 8].try_into().expect("8 bytes"));
        if b.len() != SLOT_BYTES || b[..8] != MAGIC {
            return Err("no magic");
        }
        if u64_at(SLOT_BYTES - 8) != fnv1a(&b[..SLOT_BYTES - 8]) {
            return Err("checksum");
        }
        let version = u32_at(8);
        if !(OLDEST_VERSION..=VERSION).contains(&version) {
            return Err("a header version this build does not read: made by a newer Madhouse?");
        }
        if u32_at(12) as usize != RECORD_BYTES {
            return Err("record size");
        }
        let variant = *Variant::ALL.get(b[32] as usize).ok_or("variant")?;
        let source = Source::from_code(b[33]).ok_or("source")?;
        let count = u32_at(36) as usize;
        if count > MAX_RUNS {
            return Err("run count");
        }
        let mut runs = Vec::with_capacity(count);
        for i in 0..count {
            let o = RUNS_AT + i * RUN_BYTES;
            let limit = match b[o + 16] {
                1 => Limit::Nodes(u64_at(o + 24)),
                2 => Limit::Depth(u64_at(o + 24)),
                _ => return Err("run limit"),
            };
            let recorded = match Recorded::from_code(b[o + 17]) {
                // Version 1 had no such byte (it was zero).
                Some(Recorded::All) if version < 2 => None,
                r => r,
            }
            .ok_or("run positions recorded")?;
            runs.push(Run {
                seed: u64_at(o),
                games: u64_at(o + 8),
                settings: Settings {
                    limit,
                    random_plies: u32_at(o + 20),
                    eval: u64_at(o + 32),
                    openings: u64_at(o + 40),
                    recorded,
                },
            });
        }
        let data_bytes = u64_at(24);
        if data_bytes % RECORD_BYTES as u64 != 0 {
            return Err("data length");
        }
        Ok(Header { variant, source, data_bytes, runs, sequence: u64_at(16), version })
    }

    /// Reads the header of `file` and checks the file holds what it vouches for.
    pub fn read(file: &mut File) -> Result<Header, HeaderError> {
        let len = file.metadata()?.len();
        if len == 0 {
            return Err(HeaderError::Empty);
        }
        file.seek(SeekFrom::Start(0))?;
        let mut head = vec![0u8; HEADER_BYTES.min(len) as usize];
        file.read_exact(&mut head)?;
        if head.len() < 8 || head[..8] != MAGIC {
            let legacy = head.len() >= RECORD_BYTES && decode(&head[..RECORD_BYTES]).is_ok();
            return Err(if legacy { HeaderError::Legacy } else { HeaderError::NotData });
        }
        if head.len() < HEADER_BYTES as usize {
            return Err(HeaderError::Damaged("shorter than a header"));
        }
        let slots = [Header::decode(&head[..SLOT_BYTES]), Header::decode(&head[SLOT_BYTES..])];
        let header = match slots {
            [Ok(a), Ok(b)] => {
                if a.sequence >= b.sequence {
                    a
                } else {
                    b
                }
            }
            [Ok(h), Err(_)] | [Err(_), Ok(h)] => h,
            [Err(e), Err(_)] => return Err(HeaderError::Damaged(e)),
        };
        // A crafted header must not overflow the sum (a panic with overflow checks on).
        let needed = HEADER_BYTES
            .checked_add(header.data_bytes)
            .ok_or(HeaderError::Damaged("data length"))?;
        if len < needed {
            return Err(HeaderError::Short { len, needed });
        }
        Ok(header)
    }

    /// Writes the header as the next sequence number into the slot that holds the older
    /// copy, and syncs it: the other slot still holds the previous header.
    pub fn write(&mut self, file: &mut File) -> io::Result<()> {
        self.sequence += 1;
        self.version = VERSION;
        let slot = (self.sequence % 2) * SLOT_BYTES as u64;
        file.seek(SeekFrom::Start(slot))?;
        file.write_all(&self.encode())?;
        file.sync_data()
    }

    /// Writes a new file's header into both slots (sequence 1 and 0).
    pub fn write_new(&mut self, file: &mut File) -> io::Result<()> {
        self.sequence = 0;
        file.seek(SeekFrom::Start(0))?;
        file.write_all(&self.encode())?;
        self.write(file)
    }
}

impl fmt::Display for Header {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        writeln!(f, "format       Madhouse data file, header version {}", self.version)?;
        writeln!(f, "variant      {}", self.variant.name())?;
        write!(f, "source       {}", self.source)?;
        for r in &self.runs {
            write!(f, "\nrun          seed {}: {} games; {}", r.seed, r.games, r.settings)?;
        }
        Ok(())
    }
}

/// Creates the new data file `path` (refused if it exists) with `header` in both slots,
/// positioned at the first record. Errors name the file and what failed.
pub fn create(path: &Path, header: &mut Header) -> io::Result<File> {
    let mut file =
        std::fs::OpenOptions::new().read(true).write(true).create_new(true).open(path).map_err(
            |e| file_error(path, "creating", format!("{e} (the output must be a new file)")),
        )?;
    header.write_new(&mut file).map_err(|e| file_error(path, "writing", e))?;
    file.seek(SeekFrom::Start(HEADER_BYTES)).map_err(|e| file_error(path, "writing", e))?;
    Ok(file)
}

/// Writes a new data file at `path` (refused if it exists): `header` vouching for `records`
/// (whole records back to back), then the records.
pub fn write_file(path: &Path, mut header: Header, records: &[u8]) -> io::Result<()> {
    if !records.len().is_multiple_of(RECORD_BYTES) {
        return Err(io::Error::other("records must be whole"));
    }
    header.data_bytes = records.len() as u64;
    let mut file = create(path, &mut header)?;
    file.write_all(records).map_err(|e| file_error(path, "writing", e))?;
    file.sync_data().map_err(|e| file_error(path, "writing", e))
}

/// Identity of an opening file for the header: FNV-1a of its bytes, 0 for none.
pub fn openings_identity(path: Option<&Path>) -> io::Result<u64> {
    match path {
        None => Ok(0),
        Some(p) => {
            let bytes = std::fs::read(p)
                .map_err(|e| io::Error::new(e.kind(), format!("reading {}: {e}", p.display())))?;
            Ok(fnv1a(&bytes).max(1))
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn temp(name: &str) -> std::path::PathBuf {
        let dir = std::env::temp_dir().join(format!("madhouse-datafile-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        dir.join(name)
    }

    fn settings(nodes: u64) -> Settings {
        Settings {
            limit: Limit::Nodes(nodes),
            random_plies: 2,
            eval: 7,
            openings: 9,
            recorded: Recorded::Quiet,
        }
    }

    #[test]
    fn a_header_reads_back_and_survives_a_torn_slot() {
        let path = temp("h.bin");
        let mut f = std::fs::OpenOptions::new()
            .read(true)
            .write(true)
            .create(true)
            .truncate(true)
            .open(&path)
            .unwrap();
        let mut h = Header::new(Variant::Loop, Source::SelfPlay);
        h.write_new(&mut f).unwrap();
        assert_eq!(Header::read(&mut f).unwrap().runs, vec![]);
        h.runs.push(Run { seed: 5, games: 3, settings: settings(5000) });
        h.runs.push(Run {
            seed: 6,
            games: 0,
            settings: Settings { limit: Limit::Depth(8), ..settings(1) },
        });
        h.write(&mut f).unwrap();
        let back = Header::read(&mut f).unwrap();
        assert_eq!(
            (back.variant, back.source, &back.runs),
            (Variant::Loop, Source::SelfPlay, &h.runs)
        );
        // Damage the newer slot: the older copy (no runs) is read.
        let newer = (h.sequence % 2) * SLOT_BYTES as u64;
        f.seek(SeekFrom::Start(newer + 100)).unwrap();
        f.write_all(&[0xff; 4]).unwrap();
        assert_eq!(Header::read(&mut f).unwrap().runs, vec![]);
        // Both damaged: refused.
        f.seek(SeekFrom::Start((1 - h.sequence % 2) * SLOT_BYTES as u64 + 50)).unwrap();
        f.write_all(&[0xff; 4]).unwrap();
        assert!(matches!(Header::read(&mut f), Err(HeaderError::Damaged(_))));
        let _ = std::fs::remove_file(&path);
    }

    /// A slot of `header` as `version` would have it, with `recorded_byte` for its first
    /// run and the checksum made good.
    fn slot_as(header: &Header, version: u32, recorded_byte: u8) -> Vec<u8> {
        let mut b = header.encode().to_vec();
        b[8..12].copy_from_slice(&version.to_le_bytes());
        b[RUNS_AT + 17] = recorded_byte;
        let sum = fnv1a(&b[..SLOT_BYTES - 8]);
        b[SLOT_BYTES - 8..].copy_from_slice(&sum.to_le_bytes());
        b
    }

    #[test]
    fn version_1_headers_read_as_quiet_data_and_newer_ones_are_refused() {
        let mut h = Header::new(Variant::Crazyhouse, Source::SelfPlay);
        let all = Settings { recorded: Recorded::All, ..settings(5000) };
        h.runs.push(Run { seed: 1, games: 4, settings: all });
        // This build writes version 2 and the byte.
        let b = h.encode();
        assert_eq!((u32::from_le_bytes(b[8..12].try_into().unwrap()), b[RUNS_AT + 17]), (2, 1));
        assert_eq!(Header::decode(&b).unwrap().runs[0].settings.recorded, Recorded::All);
        // Version 1, where the byte was always zero: quiet data.
        let v1 = Header::decode(&slot_as(&h, 1, 0)).unwrap();
        assert_eq!((v1.version, v1.runs[0].settings.recorded), (1, Recorded::Quiet));
        assert!(v1.to_string().contains("header version 1"), "{v1}");
        // A version 1 header claiming all positions, an unknown code, a newer version.
        assert_eq!(Header::decode(&slot_as(&h, 1, 1)), Err("run positions recorded"));
        assert_eq!(Header::decode(&slot_as(&h, 2, 2)), Err("run positions recorded"));
        let newer = Header::decode(&slot_as(&h, 3, 1)).unwrap_err();
        assert!(newer.contains("newer Madhouse"), "{newer}");
    }

    #[test]
    fn foreign_empty_short_and_legacy_files_are_told_apart() {
        let path = temp("f.bin");
        let open = |p: &Path| std::fs::File::open(p).unwrap();
        std::fs::write(&path, b"").unwrap();
        assert!(matches!(Header::read(&mut open(&path)), Err(HeaderError::Empty)));
        std::fs::write(&path, b"some notes\nand more\n").unwrap();
        assert!(matches!(Header::read(&mut open(&path)), Err(HeaderError::NotData)));
        let pos = crate::core::Position::startpos(Variant::Crazyhouse);
        let sample = crate::nnue::data::Sample { pos, score: 12, result: 0.5, noisy: false };
        let rec = crate::nnue::data::encode(&sample).unwrap();
        std::fs::write(&path, [rec, rec].concat()).unwrap();
        assert!(matches!(Header::read(&mut open(&path)), Err(HeaderError::Legacy)));
        // A header vouching for a record the file lacks.
        let mut f = std::fs::OpenOptions::new().read(true).write(true).truncate(true).open(&path);
        let f = f.as_mut().unwrap();
        let mut h = Header::new(Variant::Crazyhouse, Source::Text);
        h.data_bytes = RECORD_BYTES as u64;
        h.write_new(f).unwrap();
        assert!(matches!(Header::read(f), Err(HeaderError::Short { .. })));
        // A length near u64::MAX must be refused, not wrapped round to a small one (which a
        // resuming datagen would then cut the file back to).
        h.data_bytes = u64::MAX / RECORD_BYTES as u64 * RECORD_BYTES as u64;
        h.write(f).unwrap();
        assert!(matches!(Header::read(f), Err(HeaderError::Damaged("data length"))));
        let _ = std::fs::remove_file(&path);
    }
}
