//! Outputs checked before a long run starts: a training or tuning run that learns only at
//! its end that it cannot write its result has lost hours.
//!
//! The check changes nothing the user owns: an existing file is opened for appending, which
//! neither truncates nor moves it, and a new one is tried as a temporary file of our own
//! beside it, removed at once.

use std::fs::OpenOptions;
use std::io;
use std::path::Path;

/// Checks that `path` can be written: an existing regular file is opened for appending, a
/// missing one is tried as a new temporary file in its folder. The error names the path and
/// what failed (open or create). A device or pipe (`/dev/null`) is left to the run: opening a
/// pipe would wait for its reader.
pub fn check_writable(path: &Path) -> io::Result<()> {
    let named = |what: &str, e: io::Error| {
        io::Error::new(e.kind(), format!("cannot {what} {}: {e}", path.display()))
    };
    match std::fs::metadata(path) {
        Ok(meta) if meta.is_dir() => Err(io::Error::new(
            io::ErrorKind::InvalidInput,
            format!("cannot create {}: it is a directory", path.display()),
        )),
        Ok(meta) if meta.is_file() => OpenOptions::new()
            .append(true)
            .open(path)
            .map(drop)
            .map_err(|e| named("open for writing", e)),
        Ok(_) => Ok(()),
        Err(e) if e.kind() == io::ErrorKind::NotFound => {
            let folder = match path.parent() {
                Some(p) if !p.as_os_str().is_empty() => p,
                _ => Path::new("."),
            };
            let name = path.file_name().map(|n| n.to_string_lossy()).unwrap_or_default();
            let probe = folder.join(format!(".{name}.{}.write-check", std::process::id()));
            OpenOptions::new()
                .write(true)
                .create_new(true)
                .open(&probe)
                .map_err(|e| named("create", e))?;
            // Ours, created a moment ago: removing it loses nothing.
            let _ = std::fs::remove_file(&probe);
            Ok(())
        }
        Err(e) => Err(named("open", e)),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn writable_outputs_pass_and_others_are_named() {
        let dir = std::env::temp_dir().join(format!("madhouse-output-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        // A new file in a writable folder: nothing is left behind.
        let new = dir.join("new.bin");
        check_writable(&new).unwrap();
        assert_eq!(std::fs::read_dir(&dir).unwrap().count(), 0, "the probe was left behind");
        // An existing file keeps its contents.
        std::fs::write(&new, b"keep").unwrap();
        check_writable(&new).unwrap();
        assert_eq!(std::fs::read(&new).unwrap(), b"keep");
        // A missing folder and a directory: refused, naming the path and the operation.
        let missing = dir.join("no-such-folder/x.bin");
        let e = check_writable(&missing).unwrap_err().to_string();
        assert!(e.contains("cannot create") && e.contains(&*missing.to_string_lossy()), "{e}");
        let e = check_writable(&dir).unwrap_err().to_string();
        assert!(e.contains("it is a directory"), "{e}");
        std::fs::remove_dir_all(&dir).unwrap();
    }
}
