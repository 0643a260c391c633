//! Build script: finds magic numbers for rook and bishop attacks and writes the slider attack
//! table into `OUT_DIR/magics.rs`, which `src/core/attacks.rs` includes; and tells the binary
//! the commit it is built from (`MADHOUSE_COMMIT`, shown by `madhouse --version`).
//!
//! Doing this at build time keeps generated tables out of the repository and costs nothing at
//! start-up. The search is deterministic (fixed seed), so every build produces the same table.

use std::env;
use std::fmt::Write as _;
use std::fs;
use std::path::Path;
use std::process::Command;

// The crate's own generator, compiled into the build script too (only part of it is used here).
#[allow(dead_code)]
#[path = "src/rng.rs"]
mod rng;
use rng::Rng;

const ROOK_DIRS: [(i32, i32); 4] = [(1, 0), (-1, 0), (0, 1), (0, -1)];
const BISHOP_DIRS: [(i32, i32); 4] = [(1, 1), (1, -1), (-1, 1), (-1, -1)];

/// Squares a slider on `sq` reaches with the given blockers (blockers themselves included).
fn slide(sq: usize, occ: u64, dirs: &[(i32, i32); 4]) -> u64 {
    let (f0, r0) = ((sq % 8) as i32, (sq / 8) as i32);
    let mut att = 0u64;
    for &(df, dr) in dirs {
        let (mut f, mut r) = (f0 + df, r0 + dr);
        while (0..8).contains(&f) && (0..8).contains(&r) {
            let bit = 1u64 << (r * 8 + f);
            att |= bit;
            if occ & bit != 0 {
                break;
            }
            f += df;
            r += dr;
        }
    }
    att
}

/// The blockers that matter for a slider on `sq`: its rays without the last square of each.
fn relevant_mask(sq: usize, dirs: &[(i32, i32); 4]) -> u64 {
    let (f0, r0) = ((sq % 8) as i32, (sq / 8) as i32);
    let mut mask = 0u64;
    for &(df, dr) in dirs {
        let (mut f, mut r) = (f0 + df, r0 + dr);
        while (0..8).contains(&(f + df)) && (0..8).contains(&(r + dr)) {
            mask |= 1u64 << (r * 8 + f);
            f += df;
            r += dr;
        }
    }
    mask
}

/// Three random words ANDed: candidates with few bits set make good magics.
fn sparse(rng: &mut Rng) -> u64 {
    rng.next_u64() & rng.next_u64() & rng.next_u64()
}

struct Found {
    mask: u64,
    magic: u64,
    shift: u32,
    offset: usize,
}

fn find_magics(dirs: &[(i32, i32); 4], rng: &mut Rng, table: &mut Vec<u64>) -> Vec<Found> {
    let mut out = Vec::with_capacity(64);
    for sq in 0..64 {
        let mask = relevant_mask(sq, dirs);
        let bits = mask.count_ones();
        let shift = 64 - bits;
        let size = 1usize << bits;
        // Every subset of the mask (carry-rippler enumeration) with its attack set.
        let mut occs = Vec::with_capacity(size);
        let mut atts = Vec::with_capacity(size);
        let mut sub = 0u64;
        loop {
            occs.push(sub);
            atts.push(slide(sq, sub, dirs));
            sub = sub.wrapping_sub(mask) & mask;
            if sub == 0 {
                break;
            }
        }
        let mut slots = vec![0u64; size];
        let mut epoch = vec![0u32; size];
        let mut attempt = 0u32;
        let magic = loop {
            let magic = sparse(rng);
            if (mask.wrapping_mul(magic) >> 56).count_ones() < 6 {
                continue;
            }
            attempt += 1;
            let ok = occs.iter().zip(&atts).all(|(&occ, &att)| {
                let idx = (occ.wrapping_mul(magic) >> shift) as usize;
                if epoch[idx] != attempt {
                    epoch[idx] = attempt;
                    slots[idx] = att;
                    true
                } else {
                    slots[idx] == att
                }
            });
            if ok {
                break magic;
            }
        };
        let offset = table.len();
        table.extend_from_slice(&slots);
        out.push(Found { mask, magic, shift, offset });
    }
    out
}

fn write_magics(code: &mut String, name: &str, found: &[Found]) {
    writeln!(code, "/// Magic lookup data for {name} attacks, one entry per square.").unwrap();
    writeln!(code, "pub(crate) static {name}_MAGICS: [Magic; 64] = [").unwrap();
    for f in found {
        writeln!(
            code,
            "    Magic {{ mask: {:#018x}, magic: {:#018x}, shift: {}, offset: {} }},",
            f.mask, f.magic, f.shift, f.offset
        )
        .unwrap();
    }
    writeln!(code, "];").unwrap();
}

/// Runs `git ARGS` in the package folder: its trimmed output, `None` when git is missing or
/// fails (a source archive without `.git`, a machine without git).
fn git(args: &[&str]) -> Option<String> {
    let out = Command::new("git").args(args).output().ok()?;
    out.status.success().then(|| String::from_utf8_lossy(&out.stdout).trim().to_string())
}

/// The short hash of HEAD, with `-dirty` when tracked files differ from it; `unknown` without
/// git. Also asks cargo to run this script again when HEAD moves (a commit, a checkout) or
/// the tree changes, so that the mark follows.
fn commit() -> String {
    let Some(hash) = git(&["rev-parse", "--short", "HEAD"]) else {
        return "unknown".to_string();
    };
    // Paths through git, as a worktree's `.git` is a file and its refs live elsewhere.
    let head_ref = git(&["rev-parse", "--symbolic-full-name", "HEAD"]).unwrap_or_default();
    for name in ["HEAD", "index", "packed-refs", head_ref.as_str()] {
        if let Some(path) = git(&["rev-parse", "--git-path", name]).filter(|_| !name.is_empty()) {
            println!("cargo:rerun-if-changed={path}");
        }
    }
    for path in ["src", "Cargo.toml", "Cargo.lock"] {
        println!("cargo:rerun-if-changed={path}");
    }
    // `git diff --quiet` exits 1 when the tree differs; another failure says nothing.
    let dirty = Command::new("git")
        .args(["diff", "--quiet", "HEAD", "--"])
        .status()
        .is_ok_and(|s| s.code() == Some(1));
    if dirty {
        format!("{hash}-dirty")
    } else {
        hash
    }
}

fn main() {
    println!("cargo:rerun-if-changed=build.rs");
    println!("cargo:rerun-if-changed=src/rng.rs");
    println!("cargo:rustc-env=MADHOUSE_COMMIT={}", commit());
    let mut rng = Rng::from_state(0x9e37_79b9_7f4a_7c15);
    let mut table = Vec::new();
    let rook = find_magics(&ROOK_DIRS, &mut rng, &mut table);
    let bishop = find_magics(&BISHOP_DIRS, &mut rng, &mut table);

    let mut code = String::new();
    write_magics(&mut code, "ROOK", &rook);
    write_magics(&mut code, "BISHOP", &bishop);
    writeln!(code, "/// Attack sets for every (square, relevant occupancy) of both slider kinds.")
        .unwrap();
    writeln!(code, "pub(crate) static SLIDER_TABLE: [u64; {}] = [", table.len()).unwrap();
    for chunk in table.chunks(8) {
        code.push_str("   ");
        for v in chunk {
            write!(code, " {v:#x},").unwrap();
        }
        code.push('\n');
    }
    writeln!(code, "];").unwrap();

    let out = Path::new(&env::var("OUT_DIR").expect("cargo sets OUT_DIR")).join("magics.rs");
    fs::write(out, code).expect("write magics.rs");
}
