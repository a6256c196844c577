//! The vector files on disk: their names (tenant and generation), their
//! header and its check against the configured embedder, and positioned
//! writes.

use std::fs::{File, OpenOptions};
use std::path::{Path, PathBuf};

use super::{VectorSpec, HEADER_BYTES, MAGIC, MAX_EMBEDDER_ID_BYTES, VERSION};
use crate::error::{Error, Result};

pub(super) fn file_path(dir: &Path, tenant_id: i64, generation: i64, ext: &str) -> PathBuf {
    dir.join(format!("t{tenant_id}.g{generation}.{ext}"))
}

/// Where a compaction fills the tenant's next generation before the
/// writer renames it into place (`VectorIndex::scratch`): a name no
/// generation has, so filling it can never touch files in use.
pub(super) fn scratch_path(dir: &Path, tenant_id: i64, ext: &str) -> PathBuf {
    dir.join(format!("t{tenant_id}.next.{ext}"))
}

/// Deletes the tenant's scratch files (an interrupted or abandoned
/// compaction's), if any.
pub(super) fn remove_scratch(dir: &Path, tenant_id: i64) -> std::io::Result<()> {
    for ext in ["q8", super::LEGACY_EXACT] {
        match std::fs::remove_file(scratch_path(dir, tenant_id, ext)) {
            Err(e) if e.kind() != std::io::ErrorKind::NotFound => return Err(e),
            _ => {}
        }
    }
    Ok(())
}

/// Makes renames in `dir` durable (unix: the directory's own entry list
/// is synced; elsewhere the rename is as durable as the system makes it).
pub(super) fn sync_dir(dir: &Path) -> std::io::Result<()> {
    #[cfg(unix)]
    {
        File::open(dir)?.sync_all()
    }
    #[cfg(not(unix))]
    {
        let _ = dir;
        Ok(())
    }
}

/// Deletes the tenant's vector files of every generation but `keep`
/// (leftovers of an interrupted compact or reindex).
pub(super) fn remove_other_generations(dir: &Path, tenant_id: i64, keep: i64) -> Result<()> {
    let Ok(entries) = std::fs::read_dir(dir) else {
        return Ok(());
    };
    let prefix = format!("t{tenant_id}.g");
    let current = format!("t{tenant_id}.g{keep}.");
    for e in entries.flatten() {
        let name = e.file_name().to_string_lossy().into_owned();
        if name.starts_with(&prefix) && !name.starts_with(&current) {
            log::info!("removing stale vector file {name}");
            std::fs::remove_file(e.path())?;
        }
    }
    Ok(())
}

fn header(spec: &VectorSpec, dtype: u8) -> Vec<u8> {
    let mut h = vec![0u8; HEADER_BYTES as usize];
    h[..8].copy_from_slice(MAGIC);
    h[8..12].copy_from_slice(&VERSION.to_le_bytes());
    h[12..16].copy_from_slice(&(spec.dim as u32).to_le_bytes());
    h[16] = dtype;
    let id = spec.embedder_id.as_bytes();
    h[20..22].copy_from_slice(&(id.len() as u16).to_le_bytes());
    h[64..64 + id.len()].copy_from_slice(id);
    h
}

fn mismatch(path: &Path, what: String) -> Error {
    log::error!(
        "vector file {} does not match the configuration: {what}",
        path.display()
    );
    Error::Unavailable(format!(
        "the stored vectors do not match the configured embedder ({what}); run \
         `alayasiki-mcp reindex` to re-embed everything with the current embedder, or \
         configure the embedder the memory was built with"
    ))
}

pub(super) fn check_header(f: &mut File, spec: &VectorSpec, path: &Path) -> Result<()> {
    use std::io::Read;
    let mut h = vec![0u8; HEADER_BYTES as usize];
    f.read_exact(&mut h)
        .map_err(|_| mismatch(path, "file too short for a header".into()))?;
    if &h[..8] != MAGIC {
        return Err(mismatch(path, "not a vector file".into()));
    }
    let version = u32::from_le_bytes(h[8..12].try_into().expect("4 bytes"));
    if version != VERSION {
        return Err(mismatch(
            path,
            format!("format version {version}, expected {VERSION}"),
        ));
    }
    let dim = u32::from_le_bytes(h[12..16].try_into().expect("4 bytes")) as usize;
    let id_len = (u16::from_le_bytes(h[20..22].try_into().expect("2 bytes")) as usize)
        .min(MAX_EMBEDDER_ID_BYTES);
    let id = String::from_utf8_lossy(&h[64..64 + id_len]).into_owned();
    if dim != spec.dim || id != spec.embedder_id {
        return Err(mismatch(
            path,
            format!(
                "built by {id} with dimension {dim}; configured: {} with dimension {}",
                spec.embedder_id, spec.dim
            ),
        ));
    }
    Ok(())
}

pub(super) fn open_file(path: &Path, spec: &VectorSpec, dtype: u8) -> Result<File> {
    let mut f = OpenOptions::new()
        .read(true)
        .write(true)
        .create(true)
        .truncate(false)
        .open(path)?;
    if f.metadata()?.len() < HEADER_BYTES {
        use std::io::Write;
        f.set_len(0)?;
        f.write_all(&header(spec, dtype))?;
        f.sync_all()?;
    } else {
        check_header(&mut f, spec, path)?;
    }
    Ok(f)
}

/// Positioned write of the whole buffer (no shared cursor, so readers of
/// the same file are never disturbed).
pub(super) fn write_all_at(file: &File, buf: &[u8], offset: u64) -> std::io::Result<()> {
    #[cfg(unix)]
    {
        use std::os::unix::fs::FileExt;
        file.write_all_at(buf, offset)
    }
    #[cfg(windows)]
    {
        use std::os::windows::fs::FileExt;
        let (mut buf, mut offset) = (buf, offset);
        while !buf.is_empty() {
            let n = file.seek_write(buf, offset)?;
            if n == 0 {
                return Err(std::io::ErrorKind::WriteZero.into());
            }
            buf = &buf[n..];
            offset += n as u64;
        }
        Ok(())
    }
}
