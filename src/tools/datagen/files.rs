//! Working with data files: text lines to a data file (`madhouse datagen --convert-text`),
//! records from before the header to a data file (`--convert-legacy`), and a summary of a
//! data file (`madhouse datagen --info`). Training tools read data through
//! [`crate::tools::data`].
//!
//! Text lines are `<FEN> | <score> | <result>` (score in centipawns from white's view,
//! result `1`, `0.5` or `0` from white's view), as the text-writing datagen of earlier
//! versions produced; the tuner also accepts `<FEN> | <result>`.

use std::fmt;
use std::fs::File;
use std::io::{self, BufRead, BufReader, BufWriter, Read, Seek, SeekFrom, Write};
use std::path::Path;
use std::time::{Duration, Instant};

use crate::core::{Color, Variant};
use crate::nnue::data::{
    decode, encode, game_ply, parse_text_line, DataError, RecordReader, Sample, RECORD_BYTES,
};
use crate::score::MATE_BOUND;
use crate::tools::datafile::{self, Header, HeaderError, Source, HEADER_BYTES};
use crate::tools::file_error;

/// What a conversion did.
#[derive(Clone, Debug, Default)]
pub struct ConvertSummary {
    /// Lines read (blank and `#` lines excluded).
    pub lines: u64,
    /// Records written.
    pub written: u64,
    /// Lines left out because their score is a mate score (`|score| >= MATE_BOUND`).
    pub mate_scores: u64,
    /// Lines left out because they could not be read or encoded.
    pub bad: u64,
    /// An unterminated last line (a file still being written) was left out.
    pub partial_last_line: bool,
    /// Wall time.
    pub elapsed: Duration,
}

/// How many bad lines are reported one by one.
const BAD_LINES_SHOWN: u64 = 5;

/// Converts the text lines of `input` into a new record file `out` (which must not exist:
/// converting a growing file twice into one would duplicate its lines; join files with
/// `cat`). Lines without a score, with a mate score or that do not parse are left out and
/// counted.
pub fn convert_text(input: &Path, out: &Path, variant: Variant) -> io::Result<ConvertSummary> {
    let started = Instant::now();
    let input_file = File::open(input).map_err(|e| file_error(input, "opening", e))?;
    let mut reader = BufReader::with_capacity(1 << 16, input_file);
    let (mut header, file) = create_data_file(out, variant, Source::Text)?;
    let mut writer = BufWriter::with_capacity(1 << 16, file);
    let mut s = ConvertSummary::default();
    let mut line = Vec::new();
    let mut number = 0u64;
    loop {
        line.clear();
        if reader.read_until(b'\n', &mut line).map_err(|e| file_error(input, "reading", e))? == 0 {
            break;
        }
        number += 1;
        if line.last() != Some(&b'\n') {
            s.partial_last_line = true;
            break;
        }
        let text = String::from_utf8_lossy(&line);
        let text = text.trim();
        if text.is_empty() || text.starts_with('#') {
            continue;
        }
        s.lines += 1;
        let record = parse_text_line(text, variant).and_then(|(pos, score, result)| {
            let score = score.ok_or_else(|| DataError::Text("no score".into()))?;
            if score.abs() >= MATE_BOUND {
                return Ok(None);
            }
            let score = i16::try_from(score)
                .map_err(|_| DataError::Text(format!("score {score} out of range")))?;
            encode(&Sample { pos, score, result, noisy: false }).map(Some)
        });
        match record {
            Ok(Some(r)) => {
                writer.write_all(&r).map_err(|e| file_error(out, "writing", e))?;
                s.written += 1;
            }
            Ok(None) => s.mate_scores += 1,
            Err(e) => {
                s.bad += 1;
                if s.bad <= BAD_LINES_SHOWN {
                    eprintln!("convert: {}:{number}: {e}", input.display());
                }
            }
        }
    }
    finish_data_file(out, writer, &mut header, s.written)?;
    s.elapsed = started.elapsed();
    Ok(s)
}

/// Creates the new data file `out` (refused if it exists) with a header and no records,
/// positioned for the first record.
fn create_data_file(out: &Path, variant: Variant, source: Source) -> io::Result<(Header, File)> {
    let mut header = Header::new(variant, source);
    let file = datafile::create(out, &mut header)?;
    Ok((header, file))
}

/// Flushes the records written after the header and makes the header vouch for them.
fn finish_data_file(
    out: &Path,
    mut writer: BufWriter<File>,
    header: &mut Header,
    records: u64,
) -> io::Result<()> {
    writer.flush().map_err(|e| file_error(out, "writing", e))?;
    let mut file = writer.into_inner().map_err(|e| file_error(out, "writing", e.error()))?;
    file.sync_data().map_err(|e| file_error(out, "writing", e))?;
    header.data_bytes = records * RECORD_BYTES as u64;
    header.write(&mut file).map_err(|e| file_error(out, "writing", e))
}

/// What a conversion of headerless records did.
#[derive(Clone, Debug, Default)]
pub struct LegacySummary {
    /// Records read.
    pub records: u64,
    /// Records written.
    pub written: u64,
    /// Records that do not decode, or of another variant than the first, left out.
    pub bad: u64,
    /// Bytes of a torn record at the end, left out.
    pub torn_bytes: usize,
}

impl fmt::Display for LegacySummary {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "{} records read, {} written, {} bad ones and a torn tail of {} bytes left out",
            self.records, self.written, self.bad, self.torn_bytes
        )
    }
}

/// Converts a file of records without a header (datagen before headers existed) into a new
/// data file `out` with one. The variant is the first record's; records of another variant
/// or that do not decode are left out and counted. The old file is only read.
pub fn convert_legacy(input: &Path, out: &Path) -> io::Result<LegacySummary> {
    let mut probe = File::open(input).map_err(|e| file_error(input, "opening", e))?;
    match Header::read(&mut probe) {
        Err(HeaderError::Legacy) => {}
        Ok(_) => return Err(file_error(input, "converting", "it has a header already")),
        Err(HeaderError::Io(e)) => return Err(file_error(input, "reading", e)),
        Err(e) => {
            return Err(file_error(
                input,
                "converting",
                format!("{e}; not records without a header"),
            ))
        }
    }
    let mut first = [0u8; RECORD_BYTES];
    probe.seek(SeekFrom::Start(0)).map_err(|e| file_error(input, "reading", e))?;
    probe.read_exact(&mut first).map_err(|e| file_error(input, "reading", e))?;
    let variant = decode(&first).map_err(|e| file_error(input, "reading", e))?.pos.variant();
    let (mut header, file) = create_data_file(out, variant, Source::Legacy)?;
    let mut writer = BufWriter::with_capacity(1 << 16, file);
    let mut s = LegacySummary::default();
    let mut reader = RecordReader::open(input).map_err(|e| file_error(input, "opening", e))?;
    while let Some(r) = reader.next_record() {
        match r {
            Ok(bytes) => {
                s.records += 1;
                match decode(&bytes) {
                    Ok(sample) if sample.pos.variant() == variant => {
                        writer.write_all(&bytes).map_err(|e| file_error(out, "writing", e))?;
                        s.written += 1;
                    }
                    _ => s.bad += 1,
                }
            }
            Err(DataError::Truncated { bytes }) => s.torn_bytes = bytes,
            Err(DataError::Io(e)) => return Err(file_error(input, "reading", e)),
            Err(_) => s.bad += 1,
        }
    }
    finish_data_file(out, writer, &mut header, s.written)?;
    Ok(s)
}

impl fmt::Display for ConvertSummary {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let secs = self.elapsed.as_secs_f64().max(1e-9);
        write!(
            f,
            "{} lines, {} records written, {} mate scores and {} bad lines left out{}; \
             {:.2} s, {:.0} lines/s",
            self.lines,
            self.written,
            self.mate_scores,
            self.bad,
            if self.partial_last_line { ", unfinished last line left out" } else { "" },
            secs,
            self.lines as f64 / secs
        )
    }
}

/// Upper edges of the score histogram buckets (centipawns, white's view); the last bucket
/// takes everything above.
const SCORE_EDGES: [i32; 12] = [-1600, -800, -400, -200, -100, -50, 50, 100, 200, 400, 800, 1600];

/// A summary of a data file.
#[derive(Clone, Debug, Default)]
pub struct FileInfo {
    /// The file's header.
    pub header: Option<Header>,
    /// Records that decode.
    pub records: u64,
    /// Records that do not.
    pub corrupt: u64,
    /// Bytes of a torn record at the end.
    pub torn_bytes: usize,
    /// Results: white won, draw, black won.
    pub results: [u64; 3],
    /// Records per variant (crazyhouse, loop, chessgi).
    pub variants: [u64; 3],
    /// Counts per score bucket (see `SCORE_EDGES`): below -1600, -1600..-800, ..., above 1600.
    pub buckets: [u64; SCORE_EDGES.len() + 1],
    /// Records with a mate score (the trainer skips them).
    pub mate_scores: u64,
    /// Records with any piece in a pocket.
    pub with_pockets: u64,
    /// Records whose searched move captures or promotes (`--all-positions` data only).
    pub noisy: u64,
    /// Records in check, and not noisy (`--all-positions` data only).
    pub in_check: u64,
    /// Sum of scores and of squared scores (mean and spread).
    sum: f64,
    sum_sq: f64,
    /// Sum and maximum of the game ply.
    ply_sum: u64,
    /// Largest game ply.
    pub max_ply: u32,
}

impl FileInfo {
    fn add(&mut self, s: &Sample) {
        self.records += 1;
        self.results[if s.result == 1.0 {
            0
        } else if s.result == 0.5 {
            1
        } else {
            2
        }] += 1;
        self.variants[Variant::ALL.iter().position(|&v| v == s.pos.variant()).unwrap_or(0)] += 1;
        let score = s.score as i32;
        self.buckets[SCORE_EDGES.iter().take_while(|&&e| score >= e).count()] += 1;
        if score.abs() >= MATE_BOUND {
            self.mate_scores += 1;
        }
        if !s.pos.hand(Color::White).is_empty() || !s.pos.hand(Color::Black).is_empty() {
            self.with_pockets += 1;
        }
        if s.noisy {
            self.noisy += 1;
        } else if s.pos.in_check() {
            self.in_check += 1;
        }
        self.sum += score as f64;
        self.sum_sq += (score as f64).powi(2);
        let ply = game_ply(&s.pos);
        self.ply_sum += ply as u64;
        self.max_ply = self.max_ply.max(ply);
    }
}

/// Reads a whole data file and summarises it.
pub fn info(path: &Path) -> io::Result<FileInfo> {
    let mut file = File::open(path).map_err(|e| file_error(path, "opening", e))?;
    let header = Header::read(&mut file).map_err(|e| file_error(path, "reading", e))?;
    file.seek(SeekFrom::Start(HEADER_BYTES)).map_err(|e| file_error(path, "reading", e))?;
    let data = BufReader::with_capacity(1 << 16, file.take(header.data_bytes));
    let mut info = FileInfo { header: Some(header), ..FileInfo::default() };
    for sample in RecordReader::new(data) {
        match sample {
            Ok(s) => info.add(&s),
            Err(DataError::Truncated { bytes }) => info.torn_bytes = bytes,
            Err(DataError::Io(e)) => return Err(file_error(path, "reading", e)),
            Err(_) => info.corrupt += 1,
        }
    }
    Ok(info)
}

impl fmt::Display for FileInfo {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let n = self.records.max(1) as f64;
        let pct = |k: u64| 100.0 * k as f64 / n;
        if let Some(h) = &self.header {
            writeln!(f, "{h}")?;
        }
        writeln!(f, "records      {} ({} bytes each)", self.records, RECORD_BYTES)?;
        if self.corrupt > 0 || self.torn_bytes > 0 {
            writeln!(
                f,
                "corrupt      {} records, torn tail {} bytes",
                self.corrupt, self.torn_bytes
            )?;
        }
        writeln!(
            f,
            "results      white {:.1}%  draw {:.1}%  black {:.1}%",
            pct(self.results[0]),
            pct(self.results[1]),
            pct(self.results[2])
        )?;
        writeln!(
            f,
            "variants     crazyhouse {}  loop {}  chessgi {}",
            self.variants[0], self.variants[1], self.variants[2]
        )?;
        let mean = self.sum / n;
        let sd = (self.sum_sq / n - mean * mean).max(0.0).sqrt();
        writeln!(
            f,
            "score        mean {mean:.1} cp, standard deviation {sd:.1} cp, {} mate scores",
            self.mate_scores
        )?;
        for (i, &count) in self.buckets.iter().enumerate() {
            let range = match i {
                0 => format!("< {}", SCORE_EDGES[0]),
                i if i == SCORE_EDGES.len() => format!(">= {}", SCORE_EDGES[i - 1]),
                i => format!("{} .. {}", SCORE_EDGES[i - 1], SCORE_EDGES[i] - 1),
            };
            writeln!(f, "  {range:>14}  {count:>10}  {:5.1}%", pct(count))?;
        }
        writeln!(
            f,
            "pockets      {:.1}% of positions hold a piece in hand",
            pct(self.with_pockets)
        )?;
        writeln!(
            f,
            "not quiet    {:.1}% the searched move captures or promotes, {:.1}% in check \
             (train skips both unless --keep-captures, --keep-checks)",
            pct(self.noisy),
            pct(self.in_check)
        )?;
        write!(f, "ply          mean {:.1}, max {}", self.ply_sum as f64 / n, self.max_ply)
    }
}
