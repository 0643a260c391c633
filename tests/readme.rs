//! The README's table of UCI options against the engine's option table
//! (`madhouse::protocol::options::TABLE`): every option of a normal build appears with its
//! XBoard name, default and range, and no row names an option that does not exist.
//!
//! The table is the one under `### UCI options`, with the columns
//! `| option | XBoard | default | values | meaning |`:
//! - XBoard: the option's name in XBoard's `feature option=`, or empty (or a note in
//!   parentheses, such as `(memory)`) for options XBoard sets through commands of its own;
//! - default: the default as `setoption` would write it; `(button)` for a button, `(empty)`
//!   for empty text;
//! - values: `min..max` for a number, `true, false` for a check, the choices of a combo
//!   separated by `, `, `text` for text, `a file` for a file path, nothing for a button.

// The tuning build appends one option per tunable constant, which the README leaves out.
#![cfg(not(feature = "tune-search"))]

use madhouse::protocol::options::{Kind, Spec, TABLE};

const README: &str = include_str!("../README.md");
const HEADER: &str = "| option | XBoard | default | values | meaning |";

/// One row of the README's options table.
#[derive(Debug)]
struct Row {
    line: usize,
    name: String,
    xboard: String,
    default: String,
    values: String,
}

/// A cell without its padding and without the backticks around code.
fn cell(text: &str) -> String {
    let t = text.trim();
    let t = t.strip_prefix('`').and_then(|s| s.strip_suffix('`')).unwrap_or(t);
    t.to_string()
}

/// The rows of the options table, or a panic saying why none were found.
fn readme_rows() -> Vec<Row> {
    let lines: Vec<&str> = README.lines().collect();
    let start = lines
        .iter()
        .position(|l| l.trim() == HEADER)
        .unwrap_or_else(|| panic!("README.md has no options table with the header {HEADER}"));
    assert!(
        lines.get(start + 1).is_some_and(|l| l.starts_with("|---")),
        "README.md line {}: the options table's header is not followed by |---|",
        start + 2
    );
    let mut rows = Vec::new();
    for (i, line) in lines.iter().enumerate().skip(start + 2) {
        if !line.starts_with('|') {
            break;
        }
        let cells: Vec<&str> = line.split('|').collect();
        // A leading and a trailing empty piece around the five cells.
        assert!(
            cells.len() == 7 && cells[0].is_empty() && cells[6].trim().is_empty(),
            "README.md line {}: an options row needs five cells: {line}",
            i + 1
        );
        rows.push(Row {
            line: i + 1,
            name: cell(cells[1]),
            xboard: cell(cells[2]),
            default: cell(cells[3]),
            values: cell(cells[4]),
        });
    }
    assert!(!rows.is_empty(), "README.md: the options table has no rows");
    rows
}

/// What the README should show for an option: (default, values).
fn expected(spec: &Spec) -> (String, String) {
    match spec.kind {
        Kind::Spin { default, min, max } => (default.to_string(), format!("{min}..{max}")),
        Kind::Check { default } => (default.to_string(), "true, false".to_string()),
        Kind::Combo { default, choices } => (default.to_string(), choices.join(", ")),
        Kind::Button => ("(button)".to_string(), String::new()),
        Kind::Text { default } => {
            let shown = if default.is_empty() { "(empty)" } else { default };
            (shown.to_string(), "text".to_string())
        }
        Kind::File { default } => (default.to_string(), "a file".to_string()),
    }
}

/// Every difference between the README's rows and the option table.
fn differences(rows: &[Row]) -> Vec<String> {
    let mut problems = Vec::new();
    for (i, row) in rows.iter().enumerate() {
        if rows[..i].iter().any(|r| r.name == row.name) {
            problems.push(format!("line {}: {} has a second row", row.line, row.name));
        }
        if !TABLE.iter().any(|s| s.uci == row.name) {
            problems.push(format!("line {}: no option is named '{}'", row.line, row.name));
        }
    }
    for spec in TABLE {
        let Some(row) = rows.iter().find(|r| r.name == spec.uci) else {
            problems.push(format!("the option '{}' has no row", spec.uci));
            continue;
        };
        let (default, values) = expected(spec);
        if row.default != default {
            problems.push(format!(
                "line {}: {} default '{}', the engine's is '{default}'",
                row.line, spec.uci, row.default
            ));
        }
        if row.values != values {
            problems.push(format!(
                "line {}: {} values '{}', the engine's are '{values}'",
                row.line, spec.uci, row.values
            ));
        }
        let xboard_ok = match spec.xboard {
            Some(name) => row.xboard == name,
            None => row.xboard.is_empty() || row.xboard.starts_with('('),
        };
        if !xboard_ok {
            problems.push(format!(
                "line {}: {} XBoard name '{}', the engine's is {:?}",
                row.line, spec.uci, row.xboard, spec.xboard
            ));
        }
    }
    problems
}

#[test]
fn readme_options_table_matches_the_engine() {
    let problems = differences(&readme_rows());
    assert!(
        problems.is_empty(),
        "README.md's UCI options table differs from protocol::options::TABLE:\n  {}",
        problems.join("\n  ")
    );
}

#[test]
fn a_wrong_row_is_caught() {
    // The check itself: a changed default, a changed range, an unknown option and a missing
    // one are each reported.
    let mut rows = readme_rows();
    let first = TABLE[0].uci;
    let row = rows.iter_mut().find(|r| r.name == first).unwrap();
    row.default.push('0');
    row.values = "0..1".to_string();
    rows.push(Row {
        line: 0,
        name: "No Such Option".to_string(),
        xboard: String::new(),
        default: "1".to_string(),
        values: String::new(),
    });
    let last = TABLE[TABLE.len() - 1].uci;
    rows.retain(|r| r.name != last);
    let problems = differences(&rows);
    for expect in [
        format!("{first} default"),
        format!("{first} values"),
        "no option is named 'No Such Option'".to_string(),
        format!("'{last}' has no row"),
    ] {
        assert!(
            problems.iter().any(|p| p.contains(&expect)),
            "not reported: {expect}; got {problems:?}"
        );
    }
}
