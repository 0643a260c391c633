//! The one reader of training data, used by `madhouse train` and `madhouse tune`.
//!
//! Two forms are read:
//! - record files, the fixed-size binary records `madhouse datagen` writes (layout in
//!   [`crate::nnue::data`]);
//! - text files of `<FEN> | <score> | <result>` lines (score in centipawns, result 1, 0.5 or
//!   0, both from White's view) or `<FEN> | <result>` lines (no score).
//!
//! One rule for both: blank lines and lines starting with `#` are not data and are passed
//! over; a position with a mate score (`|score| >= MATE_BOUND`) is skipped and counted, as is
//! a record or line that cannot be read (the first few named by file and number on stderr).
//! A file is a record file when it starts with a data-file header
//! ([`crate::tools::datafile`]), and only the records the header vouches for are read; any
//! other file is read as text. Records from before the header are refused with the command
//! that converts them, never guessed at.
//!
//! A [`Filter`] then passes over the positions a run does not want, counted by reason: by
//! default those in check and those whose searched move captures or promotes (only files of
//! `datagen --all-positions` hold either; the trainer's `--keep-checks`, `--keep-captures`
//! and `--min-ply` set it).

use std::fs::File;
use std::io::{self, BufRead, BufReader, Read, Seek, SeekFrom};
use std::path::{Path, PathBuf};

use rayon::prelude::*;

use crate::core::{Position, Variant};
use crate::nnue::data::{self, game_ply, RecordReader, Sample};
use crate::score::MATE_BOUND;
use crate::tools::datafile::{Header, HeaderError, HEADER_BYTES};
use crate::tools::file_error;

/// The data files `paths` name: a file stands for itself; a folder (of shards, say) for
/// every data file in it with a header, in name order. Other files in a folder are passed
/// over and named on stderr; a folder without a data file is an error naming it.
pub fn expand_paths(paths: &[PathBuf]) -> io::Result<Vec<PathBuf>> {
    let mut out = Vec::new();
    for path in paths {
        if !path.is_dir() {
            out.push(path.clone());
            continue;
        }
        let named = |e: io::Error| file_error(path, "reading", e);
        let mut entries: Vec<PathBuf> = std::fs::read_dir(path)
            .map_err(named)?
            .map(|e| e.map(|e| e.path()))
            .collect::<io::Result<_>>()
            .map_err(named)?;
        entries.sort();
        let before = out.len();
        for entry in entries.into_iter().filter(|p| p.is_file()) {
            let is_data = File::open(&entry).ok().is_some_and(|mut f| Header::read(&mut f).is_ok());
            if is_data {
                out.push(entry);
            } else {
                eprintln!("{}: not a data file with a header, passed over", entry.display());
            }
        }
        if out.len() == before {
            return Err(io::Error::other(format!(
                "reading {}: the folder holds no data file with a header",
                path.display()
            )));
        }
    }
    Ok(out)
}

/// Unreadable records or lines named on stderr per file; the rest are only counted.
const BAD_SHOWN: u64 = 5;

/// A position with its game result and, where the data has one, its search score.
#[derive(Clone, Debug)]
pub struct Labelled {
    /// The position.
    pub pos: Position,
    /// Search score in centipawns, White's view (`None` for `FEN | result` lines).
    pub score: Option<i16>,
    /// Game result from White's view: 1, 0.5 or 0.
    pub result: f32,
    /// The searched move captures or promotes ([`Sample::noisy`]; false in text data).
    pub noisy: bool,
}

impl Labelled {
    /// The sample for training, when the position has a score.
    pub fn scored(self) -> Option<Sample> {
        let score = self.score?;
        Some(Sample { pos: self.pos, score, result: self.result, noisy: self.noisy })
    }
}

/// Which positions a reader passes on. The default keeps what `datagen` records without
/// `--all-positions`: quiet positions (not in check, the searched move neither a capture
/// nor a promotion) from every ply.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub struct Filter {
    /// Keep positions whose searched move captures or promotes ([`Sample::noisy`]).
    pub keep_noisy: bool,
    /// Keep positions where the side to move is in check.
    pub keep_checks: bool,
    /// Pass over positions before this game ply (0 is White's first move; see
    /// [`game_ply`]).
    pub min_ply: u32,
}

impl Default for Filter {
    fn default() -> Filter {
        Filter::QUIET
    }
}

impl Filter {
    /// The default: quiet positions from every ply.
    pub const QUIET: Filter = Filter { keep_noisy: false, keep_checks: false, min_ply: 0 };

    /// Does the filter pass over this position? If it does, the reason is counted in
    /// `skipped`.
    fn passes_over(&self, pos: &Position, noisy: bool, skipped: &mut Skipped) -> bool {
        if noisy && !self.keep_noisy {
            skipped.noisy += 1;
        } else if !self.keep_checks && pos.in_check() {
            skipped.check += 1;
        } else if game_ply(pos) < self.min_ply {
            skipped.early += 1;
        } else {
            return false;
        }
        true
    }
}

/// Records or lines passed over so far.
#[derive(Copy, Clone, Debug, Default, PartialEq, Eq)]
pub struct Skipped {
    /// Records or lines that could not be read.
    pub unreadable: u64,
    /// Positions with a mate score.
    pub mate: u64,
    /// Positions whose searched move captures or promotes, passed over by the [`Filter`].
    pub noisy: u64,
    /// Positions in check, passed over by the [`Filter`].
    pub check: u64,
    /// Positions before the [`Filter`]'s first ply.
    pub early: u64,
}

impl Skipped {
    /// All of them.
    pub fn total(&self) -> u64 {
        self.unreadable + self.mate + self.noisy + self.check + self.early
    }
}

impl std::fmt::Display for Skipped {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(
            f,
            "{} unreadable, {} with a mate score, {} where the searched move captures or \
             promotes, {} in check, {} before the first ply kept",
            self.unreadable, self.mate, self.noisy, self.check, self.early
        )
    }
}

enum Form {
    Records(RecordReader<BufReader<std::io::Take<File>>>),
    Text { reader: BufReader<File>, lines: Vec<(u64, String)> },
}

/// An open data file, read in chunks.
pub struct DataReader {
    path: PathBuf,
    variant: Variant,
    form: Form,
    /// Records or lines read so far (numbering starts at 1).
    number: u64,
    skipped: Skipped,
    filter: Filter,
}

impl DataReader {
    /// Opens `path`, a data file or a text file of `variant` positions. Errors name the file.
    pub fn open(path: &Path, variant: Variant) -> io::Result<DataReader> {
        let named = |doing: &str, e: &dyn std::fmt::Display| file_error(path, doing, e);
        if path.is_dir() {
            return Err(named("reading", &"is a directory, not a data file"));
        }
        let mut file = File::open(path).map_err(|e| named("opening", &e))?;
        let form = match Header::read(&mut file) {
            Ok(header) => {
                if header.variant != variant {
                    return Err(named(
                        "reading",
                        &format!(
                            "it holds {} data and this run reads {} (--variant)",
                            header.variant.name(),
                            variant.name()
                        ),
                    ));
                }
                file.seek(SeekFrom::Start(HEADER_BYTES)).map_err(|e| named("reading", &e))?;
                let data = file.take(header.data_bytes);
                Form::Records(RecordReader::new(BufReader::with_capacity(1 << 16, data)))
            }
            Err(HeaderError::NotData) => {
                file.seek(SeekFrom::Start(0)).map_err(|e| named("reading", &e))?;
                Form::Text { reader: BufReader::new(file), lines: Vec::new() }
            }
            Err(e) => return Err(named("reading", &e)),
        };
        Ok(DataReader {
            path: path.to_path_buf(),
            variant,
            form,
            number: 0,
            skipped: Skipped::default(),
            filter: Filter::default(),
        })
    }

    /// The reader with `filter` in place of the default one.
    pub fn with_filter(self, filter: Filter) -> DataReader {
        DataReader { filter, ..self }
    }

    /// The file read.
    pub fn path(&self) -> &Path {
        &self.path
    }

    /// Is it a record file (else text)?
    pub fn is_records(&self) -> bool {
        matches!(self.form, Form::Records(_))
    }

    /// Records or lines passed over so far.
    pub fn skipped(&self) -> Skipped {
        self.skipped
    }

    fn bad(&mut self, what: &str, number: u64, error: &dyn std::fmt::Display) {
        self.skipped.unreadable += 1;
        if self.skipped.unreadable <= BAD_SHOWN {
            eprintln!("{}: {what} {number}: {error}; skipped", self.path.display());
        }
    }

    /// Appends up to `max` more positions to `out`; returns how many, 0 only at the end of
    /// the file.
    pub fn read_chunk(&mut self, max: usize, out: &mut Vec<Labelled>) -> io::Result<usize> {
        let before = out.len();
        // A batch may be all skipped lines: read on until one gives a position, or the end.
        while out.len() == before {
            if self.read_batch(max.max(1), out)? {
                break;
            }
        }
        Ok(out.len() - before)
    }

    /// Reads up to `max` records or lines into `out`; returns whether the file ended.
    fn read_batch(&mut self, max: usize, out: &mut Vec<Labelled>) -> io::Result<bool> {
        let mut ended = false;
        match &mut self.form {
            Form::Records(reader) => {
                let mut got = Vec::new();
                while got.len() < max {
                    match reader.next() {
                        None => {
                            ended = true;
                            break;
                        }
                        Some(r) => {
                            self.number += 1;
                            got.push((self.number, r));
                        }
                    }
                }
                for (number, r) in got {
                    match r {
                        Ok(s) if (s.score as i32).abs() >= MATE_BOUND => self.skipped.mate += 1,
                        Ok(s) if self.filter.passes_over(&s.pos, s.noisy, &mut self.skipped) => {}
                        Ok(s) => out.push(Labelled {
                            pos: s.pos,
                            score: Some(s.score),
                            result: s.result,
                            noisy: s.noisy,
                        }),
                        Err(data::DataError::Io(e)) => {
                            return Err(io::Error::new(
                                e.kind(),
                                format!("{}: reading record {number}: {e}", self.path.display()),
                            ))
                        }
                        Err(e) => self.bad("record", number, &e),
                    }
                }
            }
            Form::Text { reader, lines } => {
                lines.clear();
                let mut line = String::new();
                while lines.len() < max {
                    line.clear();
                    let n = reader.read_line(&mut line).map_err(|e| {
                        let why = if e.kind() == io::ErrorKind::InvalidData {
                            "not text, and not a data file with a header".to_string()
                        } else {
                            e.to_string()
                        };
                        io::Error::new(
                            e.kind(),
                            format!(
                                "reading {}: line {}: {why}",
                                self.path.display(),
                                self.number + 1
                            ),
                        )
                    })?;
                    if n == 0 {
                        ended = true;
                        break;
                    }
                    self.number += 1;
                    let t = line.trim();
                    if !t.is_empty() && !t.starts_with('#') {
                        lines.push((self.number, t.to_string()));
                    }
                }
                let variant = self.variant;
                let parsed: Vec<(u64, Result<data::TextLine, data::DataError>)> = lines
                    .par_iter()
                    .map(|(n, l)| (*n, data::parse_text_line(l, variant)))
                    .collect();
                for (number, r) in parsed {
                    match r {
                        Ok((_, Some(s), _)) if s.abs() >= MATE_BOUND => self.skipped.mate += 1,
                        Ok((pos, _, _))
                            if self.filter.passes_over(&pos, false, &mut self.skipped) => {}
                        Ok((pos, score, result)) => match score.map(i16::try_from) {
                            Some(Err(_)) => self.bad("line", number, &"score out of range"),
                            score => out.push(Labelled {
                                pos,
                                score: score.map(|s| s.expect("checked above")),
                                result,
                                noisy: false,
                            }),
                        },
                        Err(e) => self.bad("line", number, &e),
                    }
                }
            }
        }
        Ok(ended)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn record_and_text_files_read_the_same_samples() {
        // The same positions written as datagen records and as text lines: the reader
        // recognises each format and yields equal samples; a mate score is skipped in both;
        // a comment line is not data.
        let lines = [
            "rnbqkb1r/pp3ppp/3ppn2/2p5/3PP3/2Q5/PPP2PPP/RNB1KBNR[] w KQkq - 0 2 | -155 | 0",
            "rnbqkb1r/pppp1ppp/5n2/4p3/4P3/5N2/PPPP1PPP/RNBQKB1R[] w KQkq - 2 3 | 40 | 0.5",
            "4k3/8/8/8/8/8/8/4K3[QQp] w - - 0 1 | 31900 | 1",
            "r1bqkbnr/pppp1ppp/2n5/4p3/4P3/5N2/PPPP1PPP/RNBQKB1R[Nb] b KQkq - 2 3 | 12 | 1",
        ];
        let dir = std::env::temp_dir().join(format!("madhouse-data-src-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let (text, records) = (dir.join("d.txt"), dir.join("d.bin"));
        std::fs::write(&text, format!("# scored positions\n{}", lines.join("\n"))).unwrap();
        let mut bytes = Vec::new();
        for l in lines {
            let (pos, score, result) = data::parse_text_line(l, Variant::Crazyhouse).unwrap();
            let score = score.unwrap().clamp(-32000, 32000) as i16;
            let sample = Sample { pos, score, result, noisy: false };
            bytes.extend_from_slice(&data::encode(&sample).unwrap());
        }
        let header = Header::new(Variant::Crazyhouse, crate::tools::datafile::Source::Text);
        crate::tools::datafile::write_file(&records, header, &bytes).unwrap();
        let read = |path: &Path| {
            let mut src = DataReader::open(path, Variant::Crazyhouse).unwrap();
            let mut out = Vec::new();
            while src.read_chunk(2, &mut out).unwrap() > 0 {}
            (out, src.skipped())
        };
        let (from_text, skipped_text) = read(&text);
        let (from_records, skipped_records) = read(&records);
        let one_mate = Skipped { mate: 1, ..Skipped::default() };
        assert_eq!((skipped_text, skipped_records), (one_mate, one_mate));
        assert_eq!(from_text.len(), 3);
        assert_eq!(from_records.len(), 3);
        for (a, b) in from_text.iter().zip(&from_records) {
            assert_eq!((a.pos.fen(), a.score, a.result), (b.pos.fen(), b.score, b.result));
        }
        let want = Position::from_fen(lines[3].split('|').next().unwrap(), Variant::Crazyhouse);
        assert_eq!(from_records[2].pos.fen(), want.unwrap().fen());
        let _ = std::fs::remove_dir_all(&dir);
    }

    #[test]
    fn text_lines_with_and_without_scores_and_bad_ones() {
        let fen = "r1bqk2r/pppp1ppp/2n1p3/4P3/1b1Pn3/2NB1N2/PPP2PPP/R1BQK2R[QNNpp] b KQkq - 0 1";
        let dir = std::env::temp_dir().join(format!("madhouse-data-txt-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let path = dir.join("t.txt");
        let text = format!(
            "{fen} | -155 | 0.5\n\n# comment\n{fen} | 1\n{fen} | -31900 | 0\n{fen} | 12 | 2\n\
             {fen} | x | 1\n{fen} | 1 | 1 | 1\n"
        );
        std::fs::write(&path, text).unwrap();
        let mut r = DataReader::open(&path, Variant::Crazyhouse).unwrap();
        assert!(!r.is_records());
        let mut out = Vec::new();
        while r.read_chunk(100, &mut out).unwrap() > 0 {}
        assert_eq!(out.len(), 2);
        assert_eq!((out[0].score, out[0].result), (Some(-155), 0.5));
        assert_eq!(out[0].pos.turn(), crate::core::Color::Black);
        assert_eq!(out[0].pos.hand(crate::core::Color::White).count(crate::core::Role::Knight), 2);
        assert_eq!((out[1].score, out[1].result), (None, 1.0));
        assert!(out[1].clone().scored().is_none());
        assert_eq!(r.skipped(), Skipped { unreadable: 3, mate: 1, ..Skipped::default() });
        let _ = std::fs::remove_dir_all(&dir);
    }

    #[test]
    fn a_missing_file_a_directory_and_headerless_records_are_refused_by_name() {
        let path = Path::new("/nonexistent-madhouse-dir/data.bin");
        let err = DataReader::open(path, Variant::Crazyhouse).err().expect("refused");
        assert!(err.to_string().contains("nonexistent-madhouse-dir/data.bin"), "{err}");
        let dir = std::env::temp_dir().join(format!("madhouse-data-bad-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let err = DataReader::open(&dir, Variant::Crazyhouse).err().expect("refused");
        assert!(err.to_string().contains("directory"), "{err}");
        let legacy = dir.join("old.bin");
        let pos = Position::startpos(Variant::Crazyhouse);
        let rec = data::encode(&Sample { pos, score: 3, result: 1.0, noisy: false }).unwrap();
        std::fs::write(&legacy, [rec, rec].concat()).unwrap();
        let err = DataReader::open(&legacy, Variant::Crazyhouse).err().expect("refused");
        assert!(err.to_string().contains("--convert-legacy"), "{err}");
        // Data of another variant than the run's.
        let other = dir.join("loop.bin");
        crate::tools::datafile::write_file(
            &other,
            Header::new(Variant::Loop, crate::tools::datafile::Source::Text),
            &[],
        )
        .unwrap();
        let err = DataReader::open(&other, Variant::Crazyhouse).err().expect("refused");
        assert!(err.to_string().contains("loop"), "{err}");
        let _ = std::fs::remove_dir_all(&dir);
    }

    #[test]
    fn a_folder_stands_for_its_data_files_in_name_order() {
        let dir = std::env::temp_dir().join(format!("madhouse-data-dir-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(dir.join("sub")).unwrap();
        let header = || Header::new(Variant::Crazyhouse, crate::tools::datafile::Source::Text);
        for name in ["seed-2.bin", "seed-1.bin"] {
            crate::tools::datafile::write_file(&dir.join(name), header(), &[]).unwrap();
        }
        std::fs::write(dir.join("run.log"), "datagen: 10 games\n").unwrap();
        let single = dir.join("notes.txt");
        let got = expand_paths(&[dir.clone(), single.clone()]).unwrap();
        assert_eq!(got, vec![dir.join("seed-1.bin"), dir.join("seed-2.bin"), single]);
        let empty = dir.join("sub");
        let e = expand_paths(&[empty]).unwrap_err().to_string();
        assert!(e.contains("sub") && e.contains("no data file"), "{e}");
        let _ = std::fs::remove_dir_all(&dir);
    }
}
