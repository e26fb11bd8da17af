//! A recording file mapped read-only into memory, so that opening it costs the same at any
//! size and every process that maps it shares one copy of its pages (the page cache's).
//!
//! What a mapping can and cannot be trusted for:
//! - Memory safety never depends on the file: only plain integers are read in place
//!   ([`super::plain::Plain`]), every stretch is checked against the mapping's bounds and
//!   its type's alignment when it is made, and evaluation indexes with bounds checks, so
//!   a file with any bytes in it is read as some integers.
//! - A file that shrinks under the mapping (truncated in place; replaced on a network file
//!   system's server) reads as zeros from its new end instead of raising a fatal SIGBUS
//!   (`bus_guard.rs`), and [`Mapping::unchanged`] reports it.
//! - A file rewritten in place changes what the mapping reads; [`Mapping::unchanged`]
//!   compares the file's identity, size, modification time and change time with those seen
//!   when it was opened. A write moves the change time even where the writer restores the
//!   modification time (no process can set it back), so any write on this machine is
//!   caught, save one: a file unlinked (or renamed over) since, whose change time moved
//!   with its link count, is taken as unchanged, since a rename over the name is how the
//!   cache replaces files; a write to that unlinked file through a descriptor kept open
//!   that also restores its modification time is not seen, and neither is a write a
//!   network file system's cached attributes hide.
//! - Whether the contents are a correct recording is not checked in full when the file is
//!   opened (that would read all of it): see [`crate::precompiled::Recording::map_unverified`].
//!
//! The drop-ins never save in place: a file is written under a temporary name and renamed
//! over the old one, which leaves every existing mapping of the old one intact.

use std::fs::File;
use std::os::unix::fs::MetadataExt;
use std::os::unix::io::AsRawFd;
use std::path::{Path, PathBuf};
use std::sync::Arc;

use crate::error::{Error, FileProblem};
use crate::precompiled::storage::bus_guard::{self, Guarded};
use crate::precompiled::storage::plain::Plain;

/// What identifies a file's contents as they were when it was mapped.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
struct Seen {
    device: u64,
    inode: u64,
    size: u64,
    modified: (i64, i64),
    /// Moved by every write, and by what a writer does to hide one (setting the times back),
    /// but also by unlinking the file, which leaves its contents as they were.
    changed: (i64, i64),
    links: u64,
}

impl Seen {
    fn of(metadata: &std::fs::Metadata) -> Self {
        Seen {
            device: metadata.dev(),
            inode: metadata.ino(),
            size: metadata.size(),
            modified: (metadata.mtime(), metadata.mtime_nsec()),
            changed: (metadata.ctime(), metadata.ctime_nsec()),
            links: metadata.nlink(),
        }
    }

    /// Whether a file seen as `now` still holds the contents seen as `self`: the same file,
    /// size and modification time, and a change time that moved only with a link dropped
    /// (the file unlinked, or another renamed over its name).
    fn same_contents(&self, now: &Seen) -> bool {
        let file = (self.device, self.inode, self.size, self.modified);
        file == (now.device, now.inode, now.size, now.modified)
            && (self.changed == now.changed || now.links < self.links)
    }
}

/// A whole file mapped read-only.
pub(crate) struct Mapping {
    start: *const u8,
    len: usize,
    file: File,
    path: PathBuf,
    seen: Seen,
    /// Unregistered before the pages are unmapped; `None` only while being dropped.
    guard: Option<Guarded>,
}

// SAFETY: the mapping is read-only for its whole life and unmapped only on drop, when no
// reference into it remains; reading it from several threads at once is reading shared
// immutable memory.
unsafe impl Send for Mapping {}
// SAFETY: as above.
unsafe impl Sync for Mapping {}

impl std::fmt::Debug for Mapping {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Mapping")
            .field("path", &self.path)
            .field("len", &self.len)
            .finish_non_exhaustive()
    }
}

impl Mapping {
    /// Maps the whole of `file`, opened from `path` and seen as `opened` when it was opened
    /// (before anything was read from it, so a change since then is reported); `None` when
    /// the file is empty or cannot be mapped or guarded here (the caller reads it instead).
    pub(crate) fn new(
        file: File,
        path: &Path,
        opened: &std::fs::Metadata,
    ) -> Result<Option<Arc<Self>>, Error> {
        let fail = |e| Error::file(path, FileProblem::Io(e));
        let len = match usize::try_from(opened.len()) {
            Ok(len) if len > 0 => len,
            _ => return Ok(None),
        };
        let seen = Seen::of(opened);
        // SAFETY: a fresh read-only shared mapping of a file descriptor we hold, at an
        // address the kernel picks; nothing aliases it mutably.
        let start = unsafe {
            libc::mmap(
                std::ptr::null_mut(),
                len,
                libc::PROT_READ,
                libc::MAP_SHARED,
                file.as_raw_fd(),
                0,
            )
        };
        if start == libc::MAP_FAILED {
            return Err(fail(std::io::Error::last_os_error()));
        }
        let Some(guard) = bus_guard::register(start as usize, len) else {
            // SAFETY: the mapping made just above, referenced by nothing.
            unsafe { libc::munmap(start, len) };
            return Ok(None);
        };
        let mapping = Arc::new(Mapping {
            start: start as *const u8,
            len,
            file,
            path: path.to_path_buf(),
            seen,
            guard: Some(guard),
        });
        // Read ahead, so a file not yet in the page cache arrives while the witness is
        // generated: on a thread of its own, since the advice walks the whole range
        // (about a millisecond per hundred megabytes even of cached pages) and opening
        // costs the same at any size. Advice only: its failure changes nothing.
        let ahead = Arc::clone(&mapping);
        let spawned = std::thread::Builder::new()
            .name("synthpool-readahead".into())
            .spawn(move || ahead.advise_will_need());
        drop(spawned);
        Ok(Some(mapping))
    }

    fn advise_will_need(&self) {
        // SAFETY: advice on our own live mapping's range (`self` keeps it mapped).
        unsafe {
            libc::madvise(
                self.start as *mut libc::c_void,
                self.len,
                libc::MADV_WILLNEED,
            )
        };
    }

    /// The path the file was opened from.
    pub(crate) fn path(&self) -> &Path {
        &self.path
    }

    /// `count` elements of `T` at byte `offset`, if they lie within the file and `offset`
    /// is aligned for `T`.
    pub(crate) fn stretch<T: Plain>(
        self: &Arc<Self>,
        offset: usize,
        count: usize,
    ) -> Option<Stretch<T>> {
        let bytes = count.checked_mul(std::mem::size_of::<T>())?;
        let end = offset.checked_add(bytes)?;
        let aligned = (self.start as usize + offset).is_multiple_of(std::mem::align_of::<T>());
        (end <= self.len && aligned).then(|| Stretch {
            map: Arc::clone(self),
            offset,
            count,
            kind: std::marker::PhantomData,
        })
    }

    /// Whether the file is still what was mapped: no read past its end was served with
    /// zeros, and its identity, size and times are those seen when it was opened.
    pub(crate) fn unchanged(&self) -> Result<(), Error> {
        let changed = |why: &str| Err(Error::file(&self.path, FileProblem::Changed(why.into())));
        if self.guard.as_ref().is_some_and(Guarded::tripped) {
            return changed("it was truncated while mapped");
        }
        match self.file.metadata() {
            Ok(metadata) if self.seen.same_contents(&Seen::of(&metadata)) => Ok(()),
            Ok(_) => changed("it was written to while mapped"),
            Err(e) => Err(Error::file(&self.path, FileProblem::Io(e))),
        }
    }
}

impl Drop for Mapping {
    fn drop(&mut self) {
        // Unregistered first: once unmapped, the range may be handed to another mapping,
        // whose faults are not ours to serve.
        drop(self.guard.take());
        // SAFETY: our own mapping, which no reference outlives (every `Stretch` holds the
        // `Arc` this is the last of).
        unsafe { libc::munmap(self.start as *mut libc::c_void, self.len) };
    }
}

/// `count` elements of `T` within a mapping, checked when made.
pub(crate) struct Stretch<T> {
    map: Arc<Mapping>,
    offset: usize,
    count: usize,
    kind: std::marker::PhantomData<T>,
}

impl<T: Plain> Stretch<T> {
    /// The elements.
    #[inline]
    pub(crate) fn get(&self) -> &[T] {
        // SAFETY: `Mapping::stretch` checked that the bytes lie within the live mapping
        // (which `map` keeps alive) and are aligned for `T`, and `T: Plain` makes any bytes
        // a valid value. We never write the mapping; another process writing the file while
        // it is mapped changes the integers read (as for any reader of a mapped file), which
        // `Mapping::unchanged` reports after evaluation.
        unsafe {
            std::slice::from_raw_parts(self.map.start.add(self.offset) as *const T, self.count)
        }
    }
}

impl<T> Clone for Stretch<T> {
    fn clone(&self) -> Self {
        Stretch {
            map: Arc::clone(&self.map),
            offset: self.offset,
            count: self.count,
            kind: std::marker::PhantomData,
        }
    }
}
