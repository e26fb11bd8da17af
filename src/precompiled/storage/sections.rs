//! A recording file's body: a fixed sequence of arrays ("sections"), each starting at a
//! multiple of [`ALIGN`] bytes, listed by offset and length in the header, so a reader can
//! take any of them in place from a mapping, or read only the ones it needs.
//!
//! Each part of a recording writes its arrays through a [`SectionWriter`] and reads them
//! back, in the same order, through a [`SectionReader`]; what the arrays mean is the
//! part's own business (see each part's `write_sections` / `read_sections`).

use std::io::{self, Read, Seek, SeekFrom, Write};
use std::path::{Path, PathBuf};

#[cfg(all(unix, target_pointer_width = "64", target_endian = "little"))]
use std::sync::Arc;

use crate::error::{Error, FileProblem};
#[cfg(all(unix, target_pointer_width = "64", target_endian = "little"))]
use crate::precompiled::storage::mapping::Mapping;
use crate::precompiled::storage::plain::{as_bytes, as_bytes_mut, Plain};
use crate::precompiled::storage::words::Words;
use crate::vectors::reserve;

/// Every section starts at a multiple of this many bytes (a cache line; more than any
/// element's alignment).
pub(crate) const ALIGN: u64 = 64;

/// Zeros to pad a section to [`ALIGN`].
const PADDING: [u8; ALIGN as usize] = [0; ALIGN as usize];

/// Bytes of padding after `len` bytes.
pub(crate) fn padding(len: u64) -> u64 {
    len.next_multiple_of(ALIGN) - len
}

/// Takes the sections of a recording, first to learn their lengths (for the header's
/// table), then to write them.
pub(crate) struct SectionWriter<'w> {
    lengths: Vec<u64>,
    out: Option<&'w mut dyn Write>,
}

impl<'w> SectionWriter<'w> {
    /// A writer that only records each section's length.
    pub(crate) fn sizing() -> Self {
        SectionWriter {
            lengths: Vec::new(),
            out: None,
        }
    }

    /// A writer that writes each section, padded, to `out`.
    pub(crate) fn writing(out: &'w mut dyn Write) -> Self {
        SectionWriter {
            lengths: Vec::new(),
            out: Some(out),
        }
    }

    /// The next section: `items`, as this (little-endian) machine holds them.
    pub(crate) fn words<T: Plain>(&mut self, items: &[T]) -> io::Result<()> {
        let bytes = as_bytes(items);
        self.lengths.push(bytes.len() as u64);
        if let Some(out) = &mut self.out {
            out.write_all(bytes)?;
            out.write_all(&PADDING[..padding(bytes.len() as u64) as usize])?;
        }
        Ok(())
    }

    /// Each section's length in bytes, in order.
    pub(crate) fn lengths(self) -> Vec<u64> {
        self.lengths
    }
}

/// Where the sections' bytes come from.
pub(crate) trait Source {
    /// `count` elements of `T` at byte `offset` of the file, or why not.
    fn words<T: Plain>(&mut self, offset: u64, count: usize) -> Result<Words<T>, Error>;
}

/// Sections read in place from a mapping of the file.
#[cfg(all(unix, target_pointer_width = "64", target_endian = "little"))]
pub(crate) struct Mapped(pub(crate) Arc<Mapping>);

#[cfg(all(unix, target_pointer_width = "64", target_endian = "little"))]
impl Source for Mapped {
    fn words<T: Plain>(&mut self, offset: u64, count: usize) -> Result<Words<T>, Error> {
        usize::try_from(offset)
            .ok()
            .and_then(|offset| self.0.stretch(offset, count))
            .map(Words::mapped)
            .ok_or_else(|| {
                Error::file(
                    self.0.path(),
                    FileProblem::Corrupt("a section lies outside the file".into()),
                )
            })
    }
}

/// Sections read from the file into memory.
pub(crate) struct Copied<R> {
    pub(crate) file: R,
    pub(crate) path: PathBuf,
}

impl<R: Read + Seek> Source for Copied<R> {
    fn words<T: Plain>(&mut self, offset: u64, count: usize) -> Result<Words<T>, Error> {
        let failed = |e: io::Error| {
            let problem = if e.kind() == io::ErrorKind::UnexpectedEof {
                FileProblem::Truncated
            } else {
                FileProblem::Io(e)
            };
            Error::file(&self.path, problem)
        };
        self.file.seek(SeekFrom::Start(offset)).map_err(failed)?;
        let mut items = Vec::new();
        reserve(&mut items, count, "recording elements")?;
        items.resize(count, T::default());
        self.file
            .read_exact(as_bytes_mut(&mut items))
            .map_err(failed)?;
        Ok(items.into())
    }
}

/// Hands out a file's sections in order, each checked against the element type asked
/// for.
pub(crate) struct SectionReader<S> {
    source: S,
    path: PathBuf,
    /// Offset and length in bytes of each section.
    table: Vec<(u64, u64)>,
    next: usize,
}

impl<S: Source> SectionReader<S> {
    /// A reader of the sections `table` lists, from `source`.
    pub(crate) fn new(source: S, path: &Path, table: Vec<(u64, u64)>) -> Self {
        SectionReader {
            source,
            path: path.to_path_buf(),
            table,
            next: 0,
        }
    }

    /// The error for a file whose sections break the format, saying how.
    pub(crate) fn corrupt(&self, what: String) -> Error {
        Error::file(&self.path, FileProblem::Corrupt(what))
    }

    /// The next section as an array of `T`, whatever its length.
    pub(crate) fn words<T: Plain>(&mut self) -> Result<Words<T>, Error> {
        let index = self.next;
        let &(offset, len) = self
            .table
            .get(index)
            .ok_or_else(|| self.corrupt("fewer sections than the format has".into()))?;
        let size = std::mem::size_of::<T>() as u64;
        if len % size != 0 {
            return Err(self.corrupt(format!(
                "section {index} is {len} bytes, not a whole number of {size}-byte elements"
            )));
        }
        self.next += 1;
        self.source.words(offset, (len / size) as usize)
    }

    /// The next section, which must hold exactly `count` elements of `T`.
    pub(crate) fn exactly<T: Plain>(
        &mut self,
        count: usize,
        what: &str,
    ) -> Result<Words<T>, Error> {
        let words = self.words::<T>()?;
        if words.len() != count {
            return Err(self.corrupt(format!(
                "{what}: {} elements where {count} were expected",
                words.len()
            )));
        }
        Ok(words)
    }

    /// Skips the rest of the sections (a reader that needs only the first ones).
    pub(crate) fn skip_rest(&mut self) {
        self.next = self.table.len();
    }

    /// Checks that every section was read: the file has the format's number of them.
    pub(crate) fn finish(self) -> Result<(), Error> {
        if self.next == self.table.len() {
            Ok(())
        } else {
            Err(self.corrupt("more sections than the format has".into()))
        }
    }
}

/// What a part of a recording needs to be written to a file and read back.
pub(crate) trait Sections: Sized {
    /// Writes the part's arrays, in a fixed order.
    fn write_sections(&self, out: &mut SectionWriter<'_>) -> io::Result<()>;
    /// Reads them back in that order. The arrays are taken as they are; nothing checks
    /// that they are what the part would derive (see `Recording::map_unverified`).
    fn read_sections<S: Source>(input: &mut SectionReader<S>) -> Result<Self, Error>;
}
