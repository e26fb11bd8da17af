//! The persistent cache's files: `{inputs}-{key}.rec` in the cache directory, written
//! atomically once a recording is trusted, read by later processes (which trust them only
//! after a proof of their own verifies), removed when a proof made from their contents does
//! not verify. Every read runs under the watchdog, so a hung disk costs a batch its cache,
//! never its progress.

use std::path::{Path, PathBuf};
use std::time::Instant;

use ff::PrimeField;

use super::key::Key;
use super::own_dir::own_dir;
use super::settings::cache_dir;
use super::watchdog::{watched, GaveUp, STALL};
use crate::error::{Error, FileProblem};
use crate::precompiled::{Recording, KEY_LEN};
use crate::warn_once::warn_once;

fn hex(key: &Key) -> String {
    key.iter().map(|byte| format!("{byte:02x}")).collect()
}

/// The recording cache directory, made if missing, when it is this process's own; else
/// none (a warning naming it, its owner and mode, once), so no other user's file is read.
pub(crate) fn trusted_cache_dir() -> Option<std::path::PathBuf> {
    let dir = cache_dir()?;
    match own_dir(&dir) {
        Ok(()) => Some(dir),
        Err(e) => {
            warn_once(format!("not own {}", dir.display()), || {
                format!(
                    "synthpool: not using the recording cache: {}; recordings are made and kept \
                     in memory only",
                    e.chain()
                )
            });
            None
        }
    }
}

/// `{inputs}-{key}.rec`: the input count lets a lookup ask for the key before reading.
pub(crate) fn file_name(inputs: usize, key: &Key) -> String {
    format!("{inputs}-{}.rec", hex(key))
}

/// The input count of a cache file's name, if it is one.
fn inputs_of(name: &str) -> Option<usize> {
    let (inputs, rest) = name.strip_suffix(".rec")?.split_once('-')?;
    (rest.len() == 2 * KEY_LEN && rest.bytes().all(|b| b.is_ascii_hexdigit()))
        .then(|| inputs.parse().ok())
        .flatten()
}

/// The cache files of a directory: each one's input count and name.
pub(crate) type Listing = Vec<(usize, String)>;

/// The cache files in `dir`, listed in bounded time; a directory that cannot be read holds
/// none.
pub(crate) fn listing(dir: &Path) -> Result<Listing, GaveUp> {
    let dir = dir.to_path_buf();
    watched(STALL, move |_| match std::fs::read_dir(&dir) {
        Ok(listing) => listing
            .filter_map(Result::ok)
            .filter_map(|entry| {
                let name = entry.file_name().to_string_lossy().into_owned();
                inputs_of(&name).map(|inputs| (inputs, name))
            })
            .collect(),
        Err(_) => Vec::new(),
    })
}

/// What tells one file at a path from another written there later: the cache's files are
/// replaced by renaming, so a new file is a new inode (its length and modification time
/// stand in where there are no inodes).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct FileId {
    device: u64,
    inode: u64,
    len: u64,
    modified: Option<std::time::SystemTime>,
}

fn identity(path: &Path) -> Option<FileId> {
    let metadata = std::fs::symlink_metadata(path).ok()?;
    #[cfg(unix)]
    let (device, inode) = {
        use std::os::unix::fs::MetadataExt;
        (metadata.dev(), metadata.ino())
    };
    #[cfg(not(unix))]
    let (device, inode) = (0, 0);
    Some(FileId {
        device,
        inode,
        len: metadata.len(),
        modified: metadata.modified().ok(),
    })
}

/// A cache file a recording was loaded from: its path, and which file was there.
#[derive(Clone, Debug)]
pub(crate) struct CacheFile {
    pub(crate) path: PathBuf,
    id: Option<FileId>,
}

/// What a lookup found on disk.
pub(crate) enum OnDisk<Scalar: PrimeField> {
    /// No file for this key.
    Absent,
    /// A file that loads, under probation.
    Loaded(Box<Recording<Scalar>>, CacheFile),
    /// A file that cannot be used (it is left for the next trusted recording to replace).
    Refused,
}

/// Opens the cache file at `path` of `key` (for `inputs` inputs) in place
/// ([`Recording::map_unverified`]: the header and dictionary are read, the rest is mapped;
/// every proof made from it is verified) in bounded time: one whose opening makes no
/// progress for [`STALL`] is refused like a damaged one.
pub(crate) fn load<Scalar: PrimeField>(path: &Path, inputs: usize, key: &Key) -> OnDisk<Scalar> {
    let started = Instant::now();
    let (reading, key) = (path.to_path_buf(), *key);
    let read = watched(STALL, move |progress| {
        // Asked before opening: a file renamed over this one meanwhile is not the one read.
        let id = identity(&reading);
        progress();
        let recording = Recording::<Scalar>::map_keyed(&reading, &key);
        (id, recording)
    });
    let why = match read {
        Ok((id, Ok(recording))) if recording.shape().inputs == inputs => {
            log::info!(
                "synthpool: opened the recording {} ({} constraints, {} nonzeros) in {:.1?}; \
                 it serves other batches once a proof made with it verifies",
                path.display(),
                recording.shape().constraints,
                recording.nonzeros(),
                started.elapsed()
            );
            let file = CacheFile {
                path: path.to_path_buf(),
                id,
            };
            return OnDisk::Loaded(Box::new(recording), file);
        }
        Ok((_, Ok(_))) => format!("{}: its input count is not its name's", path.display()),
        Ok((
            _,
            Err(Error::File {
                problem: FileProblem::Io(e),
                ..
            }),
        )) if e.kind() == std::io::ErrorKind::NotFound => return OnDisk::Absent,
        Ok((_, Err(e))) => e.chain(),
        Err(gave_up) => format!("{}: {gave_up}", path.display()),
    };
    warn_once(path.display().to_string(), || {
        format!("synthpool: not using the cached recording ({why}); recording anew")
    });
    OnDisk::Refused
}

/// Writes `recording` (trusted) as the cache file of `key` in `dir`: the file written, or
/// `None` after a failure, which is logged once, never an error of the batch.
pub(crate) fn save<Scalar: PrimeField>(
    dir: &Path,
    inputs: usize,
    key: &Key,
    recording: &Recording<Scalar>,
) -> Option<CacheFile> {
    let path = dir.join(file_name(inputs, key));
    let started = Instant::now();
    // The directory is the one the batch listed, made and checked then.
    match recording.save_keyed(&path, key) {
        Ok(()) => {
            log::info!(
                "synthpool: saved the recording {} ({} bytes) in {:.1?}",
                path.display(),
                std::fs::symlink_metadata(&path).map_or(0, |m| m.len()),
                started.elapsed()
            );
            sweep_abandoned(dir);
            let id = identity(&path);
            Some(CacheFile { path, id })
        }
        Err(e) => {
            warn_once(path.display().to_string(), || {
                format!("synthpool: could not save the recording: {}", e.chain())
            });
            None
        }
    }
}

/// How old a save's temporary file must be to count as abandoned by a process that ended
/// while writing it: saves take seconds to minutes, even of a 32 GiB PoRep's recording over
/// a network file system.
const ABANDONED: std::time::Duration = std::time::Duration::from_secs(24 * 3600);

/// Removes the temporary files of saves in `dir` that were abandoned (a process killed
/// while writing, on this machine or another sharing the directory), each as large as a
/// recording; a save in progress is younger than [`ABANDONED`] and stays.
fn sweep_abandoned(dir: &Path) {
    let Ok(listing) = std::fs::read_dir(dir) else {
        return;
    };
    for entry in listing.filter_map(Result::ok) {
        let name = entry.file_name();
        let name = name.to_string_lossy();
        if !(name.starts_with('.') && name.ends_with(crate::precompiled::TEMPORARY_SUFFIX)) {
            continue;
        }
        let old = entry
            .metadata()
            .and_then(|metadata| metadata.modified())
            .ok()
            .and_then(|modified| modified.elapsed().ok())
            .is_some_and(|age| age > ABANDONED);
        if old && std::fs::remove_file(entry.path()).is_ok() {
            log::info!(
                "synthpool: removed {}, a save abandoned more than a day ago",
                entry.path().display()
            );
        }
    }
}

/// Removes the cache file holding a recording that a proof rejected, saying why once; a
/// file written at its path since (by another process) is left alone.
pub(crate) fn remove_loaded(file: &CacheFile, why: &str) {
    let path = &file.path;
    if file.id.is_none() || identity(path) != file.id {
        warn_once(format!("replaced {}", path.display()), || {
            format!(
                "synthpool: the cached recording loaded from {} failed ({why}); the file there \
                 now is another, left in place",
                path.display()
            )
        });
        return;
    }
    remove(path, why);
}

fn remove(path: &Path, why: &str) {
    let removed = std::fs::remove_file(path);
    warn_once(format!("removed {}", path.display()), || match removed {
        Ok(()) => format!(
            "synthpool: removed the cached recording {} ({why})",
            path.display()
        ),
        Err(e) => format!(
            "synthpool: the cached recording {} failed ({why}) and could not be removed: {e}",
            path.display()
        ),
    });
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn file_names_carry_the_input_count_and_only_cache_files_parse() {
        let key = [0xab; KEY_LEN];
        let name = file_name(17, &key);
        assert_eq!(inputs_of(&name), Some(17));
        for other in [
            "17-ab.rec",
            "x-abab.rec",
            "porep.partial",
            &format!("17-{}.bin", hex(&key)),
        ] {
            assert_eq!(inputs_of(other), None, "{other}");
        }
    }
}
