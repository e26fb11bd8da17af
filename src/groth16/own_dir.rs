//! Whether the recording cache directory is this process's own, the only kind it trusts:
//! whoever can write there decides which recording a batch opens first. A directory is its
//! own when it is a directory (not a symbolic link), owned by the process's user or by
//! root, not writable by group or others, and every directory above it is owned by one of
//! those two and writable by no one else unless sticky (as `/var/tmp` is), so that no other
//! user can rename it away and put one of theirs in its place. A missing directory is made
//! (its missing parents too) with mode 0755 whatever the umask, so that another user cannot
//! have made it first unnoticed: if one did, it is not this process's own.

use std::path::Path;

use crate::error::{Error, FileProblem};

/// The mode of the directories the cache makes: only the owner writes them.
#[cfg(unix)]
const DIR_MODE: u32 = 0o755;

/// Makes `dir` if it is missing, and checks that it is this process's own: an error naming
/// it, its owner and its mode when it is not.
pub(crate) fn own_dir(dir: &Path) -> Result<(), Error> {
    let fail = |problem| Error::file(dir, problem);
    match std::fs::symlink_metadata(dir) {
        Ok(_) => {}
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => {
            make(dir).map_err(|e| fail(FileProblem::Io(e)))?
        }
        Err(e) => return Err(fail(FileProblem::Io(e))),
    }
    checked(dir)
}

#[cfg(unix)]
fn make(dir: &Path) -> std::io::Result<()> {
    use std::os::unix::fs::{DirBuilderExt, PermissionsExt};
    let mut missing = Vec::new();
    let mut at = Some(dir);
    while let Some(path) = at.filter(|path| std::fs::symlink_metadata(path).is_err()) {
        missing.push(path);
        at = path
            .parent()
            .filter(|parent| !parent.as_os_str().is_empty());
    }
    for path in missing.into_iter().rev() {
        match std::fs::DirBuilder::new().mode(DIR_MODE).create(path) {
            // Made by this process: the umask may have taken bits off the mode.
            Ok(()) => std::fs::set_permissions(path, std::fs::Permissions::from_mode(DIR_MODE))?,
            // Made meanwhile by another process: its owner is checked next.
            Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists => {}
            Err(e) => return Err(e),
        }
    }
    Ok(())
}

#[cfg(not(unix))]
fn make(dir: &Path) -> std::io::Result<()> {
    std::fs::create_dir_all(dir)
}

#[cfg(unix)]
fn checked(dir: &Path) -> Result<(), Error> {
    use std::os::unix::fs::MetadataExt;
    let untrusted = |path: &Path, why: String| {
        Err(Error::file(
            dir,
            FileProblem::NotOwn(if path == dir {
                why
            } else {
                format!("{} above it {why}", path.display())
            }),
        ))
    };
    let user = effective_user();
    let own = |uid: u32| uid == user || uid == 0;
    let metadata =
        std::fs::symlink_metadata(dir).map_err(|e| Error::file(dir, FileProblem::Io(e)))?;
    if metadata.file_type().is_symlink() {
        return untrusted(dir, "is a symbolic link".into());
    }
    if !metadata.is_dir() {
        return untrusted(dir, "is not a directory".into());
    }
    let described = |metadata: &std::fs::Metadata| {
        format!(
            "owner uid {}, mode {:04o}",
            metadata.uid(),
            metadata.mode() & 0o7777
        )
    };
    if !own(metadata.uid()) || metadata.mode() & 0o022 != 0 {
        return untrusted(
            dir,
            format!(
                "({}) is not owned by this process's user (uid {user}) or root with no write \
                 access for group or others",
                described(&metadata)
            ),
        );
    }
    let above = std::fs::canonicalize(dir).map_err(|e| Error::file(dir, FileProblem::Io(e)))?;
    for path in above.ancestors().skip(1) {
        let metadata =
            std::fs::metadata(path).map_err(|e| Error::file(path, FileProblem::Io(e)))?;
        let sticky = metadata.mode() & 0o1000 != 0;
        if !own(metadata.uid()) || (metadata.mode() & 0o022 != 0 && !sticky) {
            return untrusted(
                path,
                format!(
                    "({}) lets another user replace it: not owned by this process's user or \
                     root, or writable by others without the sticky bit",
                    described(&metadata)
                ),
            );
        }
    }
    Ok(())
}

/// The user whose permissions this process has.
#[cfg(unix)]
#[allow(unsafe_code)]
fn effective_user() -> u32 {
    // SAFETY: geteuid has no preconditions and cannot fail.
    unsafe { libc::geteuid() }
}

#[cfg(not(unix))]
fn checked(dir: &Path) -> Result<(), Error> {
    if std::fs::symlink_metadata(dir)
        .map_err(|e| Error::file(dir, FileProblem::Io(e)))?
        .is_dir()
    {
        Ok(())
    } else {
        Err(Error::file(
            dir,
            FileProblem::NotOwn("is not a directory".into()),
        ))
    }
}
