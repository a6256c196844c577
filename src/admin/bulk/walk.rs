//! What `ingest PATH...` reads: the paths given, checked before anything
//! is stored, and the files found under them.
//!
//! A path named on the command line must exist and be readable, or the
//! whole command is refused ([`unusable_paths`]): a typo must not pass for
//! an empty folder. Inside a folder, a file that cannot be read is one
//! line of the report, like any other skipped file.

use std::path::{Path, PathBuf};

use super::report::Report;
use crate::admin::progress::megabytes;
use crate::admin::Console;
use crate::limits::{MAX_CONTENT_BYTES, MAX_WALK_DEPTH};

/// A file found by the walk.
#[derive(Debug, Clone)]
pub(super) struct Candidate {
    pub path: PathBuf,
    pub size: u64,
}

/// The paths given that cannot be ingested at all, each with the reason
/// (they do not exist, cannot be opened, or are neither file nor folder).
pub(super) fn unusable_paths(paths: &[PathBuf]) -> Vec<(PathBuf, String)> {
    paths
        .iter()
        .filter_map(|p| unusable(p).map(|reason| (p.clone(), reason)))
        .collect()
}

fn unusable(path: &Path) -> Option<String> {
    // A named path is followed even if it is a symbolic link.
    let meta = match std::fs::metadata(path) {
        Ok(m) => m,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => {
            return Some(if std::fs::symlink_metadata(path).is_ok() {
                "it is a symbolic link to something that does not exist".into()
            } else {
                "it does not exist".into()
            });
        }
        Err(e) => return Some(io_reason(&e)),
    };
    if meta.is_dir() {
        std::fs::read_dir(path)
            .err()
            .map(|e| format!("folder cannot be listed: {}", io_reason(&e)))
    } else if meta.is_file() {
        std::fs::File::open(path).err().map(|e| io_reason(&e))
    } else {
        Some("it is neither a file nor a folder (a device, socket or pipe)".into())
    }
}

/// Collects regular files under `root` (or `root` itself), in name order,
/// noting what is skipped and why. Returns false if a termination signal
/// stopped the walk before it was complete.
pub(super) fn walk(
    console: &Console,
    root: &Path,
    files: &mut Vec<Candidate>,
    report: &mut Report,
) -> bool {
    let mut stack = vec![(root.to_path_buf(), 0usize)];
    while let Some((path, depth)) = stack.pop() {
        if console.stopping() {
            return false;
        }
        let meta = match std::fs::symlink_metadata(&path) {
            Ok(m) => m,
            Err(e) => {
                report.skip(format!("cannot read: {}", io_reason(&e)), &path);
                continue;
            }
        };
        let kind = meta.file_type();
        if kind.is_symlink() && depth > 0 {
            report.skip("symbolic link (not followed)", &path);
            continue;
        }
        // A path given on the command line is followed even if it is a link.
        let meta = if kind.is_symlink() {
            match std::fs::metadata(&path) {
                Ok(m) => m,
                Err(e) => {
                    report.skip(format!("cannot read: {}", io_reason(&e)), &path);
                    continue;
                }
            }
        } else {
            meta
        };
        if meta.is_dir() {
            if depth >= MAX_WALK_DEPTH {
                report.skip(
                    format!("folder nested deeper than {MAX_WALK_DEPTH} (MAX_WALK_DEPTH)"),
                    &path,
                );
                continue;
            }
            let entries = match std::fs::read_dir(&path) {
                Ok(e) => e,
                Err(e) => {
                    report.skip(format!("cannot read folder: {}", io_reason(&e)), &path);
                    continue;
                }
            };
            let mut children: Vec<PathBuf> = Vec::new();
            for entry in entries.flatten() {
                if entry.file_name().to_string_lossy().starts_with('.') {
                    report.skip("hidden (name starts with a dot)", &entry.path());
                } else {
                    children.push(entry.path());
                }
            }
            // Reverse name order on the stack pops in name order.
            children.sort();
            stack.extend(children.into_iter().rev().map(|c| (c, depth + 1)));
        } else if !meta.is_file() {
            report.skip("not a regular file", &path);
        } else if meta.len() == 0 {
            report.skip("empty", &path);
        } else if meta.len() > MAX_CONTENT_BYTES as u64 {
            report.skip(too_large(), &path);
        } else {
            files.push(Candidate {
                path,
                size: meta.len(),
            });
        }
    }
    true
}

/// The skip reason of a file over [`MAX_CONTENT_BYTES`].
pub(super) fn too_large() -> String {
    format!(
        "larger than {} (MAX_CONTENT_BYTES)",
        megabytes(MAX_CONTENT_BYTES as u64)
    )
}

pub(super) fn io_reason(e: &std::io::Error) -> String {
    match e.kind() {
        std::io::ErrorKind::PermissionDenied => "permission denied".into(),
        std::io::ErrorKind::NotFound => "not found".into(),
        _ => e.kind().to_string(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn missing_paths_are_named_with_the_reason() {
        let dir = std::env::temp_dir().join(format!("alayasiki-walk-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let file = dir.join("a.txt");
        std::fs::write(&file, b"x").unwrap();
        let missing = dir.join("missing");
        let found = unusable_paths(&[dir.clone(), missing.clone(), file]);
        std::fs::remove_dir_all(&dir).unwrap();
        assert_eq!(found, [(missing, "it does not exist".to_string())]);
    }
}
