//! Opening a file the library reads (a recording, a parameters file's head) so that what is
//! at the path cannot wedge the caller: opened non-blocking, so a FIFO or a device under the
//! name returns at once instead of waiting for a writer, and refused unless it is a regular
//! file, judged on the open file itself (no window between a check and the open).

use std::fs::{File, Metadata, OpenOptions};
use std::path::Path;

use crate::error::{Error, FileProblem};

/// Whether a symbolic link at the name is followed.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Links {
    Follow,
    /// Refused (an error naming the file): the name must be the file itself.
    Refuse,
}

/// Opens `path` for reading: the file and what it was when opened (its length, its times),
/// or an error naming it when it cannot be opened or is not a regular file.
pub(crate) fn open(path: &Path, links: Links) -> Result<(File, Metadata), Error> {
    let fail = |problem| Error::file(path, problem);
    let mut options = OpenOptions::new();
    options.read(true);
    #[cfg(unix)]
    {
        use std::os::unix::fs::OpenOptionsExt;
        // Reads of a regular file ignore O_NONBLOCK; only the open of a FIFO or device
        // changes, from waiting to returning.
        let no_follow = match links {
            Links::Follow => 0,
            Links::Refuse => libc::O_NOFOLLOW,
        };
        options.custom_flags(libc::O_NONBLOCK | no_follow);
    }
    #[cfg(not(unix))]
    {
        // Without a non-blocking open, ask first; a file replaced in between is the rest.
        let metadata = match links {
            Links::Follow => std::fs::metadata(path),
            Links::Refuse => std::fs::symlink_metadata(path),
        }
        .map_err(|e| fail(FileProblem::Io(e)))?;
        if !metadata.is_file() {
            return Err(fail(FileProblem::NotRegular));
        }
    }
    let file = options.open(path).map_err(|e| fail(FileProblem::Io(e)))?;
    let metadata = file.metadata().map_err(|e| fail(FileProblem::Io(e)))?;
    if !metadata.is_file() {
        return Err(fail(FileProblem::NotRegular));
    }
    Ok((file, metadata))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn directories_and_fifos_are_refused_without_blocking() {
        let dir = std::env::temp_dir().join(format!("synthpool-regular-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let refused = |path: &Path| match open(path, Links::Follow) {
            Err(Error::File {
                problem: FileProblem::NotRegular,
                ..
            }) => {}
            other => panic!(
                "{}: {:?}",
                path.display(),
                other.map(|(_, seen)| seen.len())
            ),
        };
        refused(&dir);
        #[cfg(unix)]
        {
            let fifo = dir.join("fifo");
            let made = std::process::Command::new("mkfifo").arg(&fifo).status();
            assert!(made.unwrap().success(), "mkfifo {}", fifo.display());
            // Without the non-blocking open this waits for a writer forever.
            refused(&fifo);
        }
        let regular = dir.join("regular");
        std::fs::write(&regular, b"12345").unwrap();
        assert_eq!(open(&regular, Links::Follow).unwrap().1.len(), 5);
        std::fs::remove_dir_all(&dir).unwrap();
    }
}
