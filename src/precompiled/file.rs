//! The on-disk format of a [`Recording`]: versioned, written atomically, laid out so that
//! a process can use it in place ([`Recording::map_unverified`]) or read and check all of
//! it ([`Recording::load`]).
//!
//! Layout (integers little-endian, the only byte order this build reads or writes):
//! - header: magic `SYNTHPCE`, format version (u32); the field, as its modulus in text (u32
//!   length + bytes) and its repr length (u32); a 32-byte key (all zeros from
//!   [`Recording::save`]; the drop-ins' cache files carry a digest of the parameters'
//!   verifying key, and refuse a file under any other); the shape: inputs, aux, rows,
//!   dictionary length, nonzeros of A, B, C (u64 each); the number of sections (u32) and
//!   each one's offset and length in bytes (u64 each); zeros up to a multiple of 64 bytes;
//! - the sections, each at the offset the table gives (a multiple of 64, right after the
//!   previous one's padding): the dictionary (repr bytes per entry); per matrix A, B, C its
//!   row starts (u32 × rows+1), columns (u32 × nonzeros) and coefficient ids (u16 ×
//!   nonzeros); where the parts the circuit spread over threads put their aux values
//!   (u64 triples: the aux count where each was taken, its first aux index, its count);
//!   then what evaluation derives from them, so no process derives it again:
//!   the density bitmaps, each matrix's layout (block classes, runs of powers of two, rows
//!   of general coefficients, wide rows), the rows that state a value with their folded
//!   check, and the stretches of field rows (see each part's `write_sections`);
//! - a BLAKE2sp-256 digest of everything before it.
//!
//! Saving writes a temporary file created exclusively, under a name no other save uses, in
//! the target's directory, syncs it and renames it onto the target: readers see the old file
//! or the new one, whole, concurrent saves (of one path or of siblings, from processes on
//! one machine or on several sharing the directory) never mix, and a process that mapped
//! the old file keeps reading the old file.
//!
//! Opening checks the header against the file's length (a truncated file is refused then);
//! [`Recording::load`] then verifies the digest in a streaming pass before allocating
//! anything large, reads the dictionary and the matrices into fallibly reserved vectors,
//! checks every invariant of [`Matrix`]'s module and derives the rest afresh: a damaged or
//! hostile file is an error, never a panic, an abort or an out-of-bounds read later.
//! [`Recording::map_unverified`] reads the header and the dictionary only; see its
//! documentation for what it trusts.

use std::fs::{File, OpenOptions};
use std::io::{self, BufWriter, Read, Seek, SeekFrom, Write};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};

use blake2s_simd::blake2sp::State as Digest;
use ff::PrimeField;

use crate::error::{Error, FileProblem};
use crate::precompiled::rows::claims::Claims;
use crate::precompiled::rows::coefficients::CoefficientTable;
use crate::precompiled::rows::density::Densities;
use crate::precompiled::rows::field_rows::FieldRows;
use crate::precompiled::rows::layout::MatrixLayout;
use crate::precompiled::rows::matrix::{check_counts, validate_dictionary, Matrix};
use crate::precompiled::storage::sections::{
    padding, Copied, SectionReader, SectionWriter, Sections, Source, ALIGN,
};
use crate::precompiled::witness::parts::Parts;
use crate::precompiled::Recording;
use crate::regular_file::Links;
use crate::vectors::reserve;

use self::header::{fixed_header_len, open, Header};

const MAGIC: &[u8; 8] = b"SYNTHPCE";
/// The format version this build writes and reads.
pub const FORMAT_VERSION: u32 = 4;
const DIGEST_LEN: u64 = 32;
/// Bytes of the key that names what a file was recorded for.
pub(crate) const KEY_LEN: usize = 32;

/// What a keyed file is saved under, in its header: the drop-ins' cache names a structure
/// by a digest of its parameters' verifying key.
pub(crate) type Key = [u8; KEY_LEN];

/// The mode recording files are written with, whatever the umask: the owner writes, anyone
/// may read (a recording holds no secret, and every proving user of a machine may map it).
#[cfg(unix)]
const FILE_MODE: u32 = 0o644;
const COUNTS: usize = 7;
/// More sections than any recording has: a table longer than this is not a recording's.
const MAX_SECTIONS: u32 = 1024;
const CHUNK: usize = 1 << 20;

fn io_error(path: &Path) -> impl Fn(io::Error) -> Error + '_ {
    move |e| {
        if e.kind() == io::ErrorKind::UnexpectedEof {
            Error::file(path, FileProblem::Truncated)
        } else {
            Error::file(path, FileProblem::Io(e))
        }
    }
}

/// A writer that digests what it writes.
struct DigestingWriter<W> {
    inner: W,
    digest: Digest,
}

impl<W: Write> Write for DigestingWriter<W> {
    fn write(&mut self, bytes: &[u8]) -> io::Result<usize> {
        let written = self.inner.write(bytes)?;
        self.digest.update(&bytes[..written]);
        Ok(written)
    }

    fn flush(&mut self) -> io::Result<()> {
        self.inner.flush()
    }
}

/// How a save's temporary file name ends (it starts with a dot).
pub(crate) const TEMPORARY_SUFFIX: &str = ".synthpool-tmp";

/// Unique temporary names within this process; the process id separates processes.
static TEMPORARIES: AtomicU64 = AtomicU64::new(0);

/// Creates, exclusively, a temporary file beside `path` that no other save names.
fn create_temporary(path: &Path) -> Result<(PathBuf, File), Error> {
    let name = path
        .file_name()
        .ok_or_else(|| {
            Error::file(
                path,
                FileProblem::Io(io::Error::new(
                    io::ErrorKind::InvalidInput,
                    "not a file name",
                )),
            )
        })?
        .to_string_lossy()
        .into_owned();
    loop {
        let unique = TEMPORARIES.fetch_add(1, Ordering::Relaxed);
        let temporary = path.with_file_name(format!(
            ".{name}.{}.{unique}{TEMPORARY_SUFFIX}",
            std::process::id()
        ));
        let mut options = OpenOptions::new();
        // Made here, never an existing name (a link included) opened.
        options.write(true).create_new(true);
        #[cfg(unix)]
        std::os::unix::fs::OpenOptionsExt::mode(&mut options, FILE_MODE);
        match options.open(&temporary) {
            Ok(file) => {
                // The mode whatever the umask took off it.
                #[cfg(unix)]
                {
                    use std::os::unix::fs::PermissionsExt;
                    let mode = std::fs::Permissions::from_mode(FILE_MODE);
                    if let Err(e) = file.set_permissions(mode) {
                        let _ = std::fs::remove_file(&temporary);
                        return Err(Error::file(temporary, FileProblem::Io(e)));
                    }
                }
                return Ok((temporary, file));
            }
            // Left behind by a crashed process that had this id, or written by a process of
            // another machine with the same id: pick the next name.
            Err(e) if e.kind() == io::ErrorKind::AlreadyExists => continue,
            Err(e) => return Err(Error::file(temporary, FileProblem::Io(e))),
        }
    }
}

/// The recording's parts other than its dictionary and matrices, as the file holds them.
struct Derived<Scalar> {
    densities: Densities,
    layouts: [MatrixLayout; 3],
    claims: Claims<Scalar>,
    field_rows: FieldRows,
}

impl<Scalar: PrimeField> Recording<Scalar> {
    /// Writes the recording to `path`, atomically (see the module documentation).
    pub fn save(&self, path: &Path) -> Result<(), Error> {
        self.save_keyed(path, &[0; KEY_LEN])
    }

    /// [`Self::save`], naming what the recording was made for with `key` (the drop-ins'
    /// cache uses a digest of the parameters' verifying key); [`Self::load_keyed`] refuses
    /// the file under any other key. Only the drop-ins write keyed files.
    pub(crate) fn save_keyed(&self, path: &Path, key: &Key) -> Result<(), Error> {
        let (temporary, file) = create_temporary(path)?;
        let written = self
            .write_to(file, key)
            .map_err(|e| Error::file(path, FileProblem::Io(e)))
            // A recording read in place is copied from its file: the copy holds only if
            // that file did not change meanwhile (its digest would seal whatever was read).
            .and_then(|()| self.still_as_mapped());
        let result = written.and_then(|()| {
            std::fs::rename(&temporary, path).map_err(|e| Error::file(path, FileProblem::Io(e)))
        });
        if result.is_err() {
            // Ours alone (created exclusively above); nothing else is ever removed.
            let _ = std::fs::remove_file(&temporary);
        }
        result
    }

    /// Writes every section through `out`, in the format's order.
    fn write_sections(&self, out: &mut SectionWriter<'_>) -> io::Result<()> {
        let mut dictionary = Vec::new();
        for value in self.coefficients.dictionary() {
            dictionary.extend_from_slice(value.to_repr().as_ref());
        }
        out.words(&dictionary)?;
        for matrix in &self.matrices {
            out.words(&matrix.row_starts)?;
            out.words(&matrix.columns)?;
            out.words(&matrix.coeff_ids)?;
        }
        self.parts.write_sections(out)?;
        self.densities.write_sections(out)?;
        for layout in &self.layouts {
            layout.write_sections(out)?;
        }
        self.claims.write_sections(out)?;
        self.field_rows.write_sections(out)
    }

    fn write_to(&self, file: File, key: &Key) -> io::Result<()> {
        let lengths = {
            let mut sizing = SectionWriter::sizing();
            self.write_sections(&mut sizing)?;
            sizing.lengths()
        };
        let fixed = fixed_header_len(Scalar::MODULUS.len());
        let header_len = fixed + 16 * lengths.len() as u64;
        let mut offset = header_len + padding(header_len);
        let mut out = DigestingWriter {
            inner: BufWriter::with_capacity(CHUNK, file),
            digest: Digest::new(),
        };
        out.write_all(MAGIC)?;
        out.write_all(&FORMAT_VERSION.to_le_bytes())?;
        out.write_all(&(Scalar::MODULUS.len() as u32).to_le_bytes())?;
        out.write_all(Scalar::MODULUS.as_bytes())?;
        let repr_len = Scalar::Repr::default().as_ref().len() as u32;
        out.write_all(&repr_len.to_le_bytes())?;
        out.write_all(key)?;
        let counts = [
            self.inputs,
            self.aux,
            self.matrices[0].rows(),
            self.dictionary_len(),
        ]
        .into_iter()
        .chain(self.matrices.iter().map(Matrix::nonzeros));
        for count in counts {
            out.write_all(&(count as u64).to_le_bytes())?;
        }
        out.write_all(&(lengths.len() as u32).to_le_bytes())?;
        for len in lengths {
            out.write_all(&offset.to_le_bytes())?;
            out.write_all(&len.to_le_bytes())?;
            offset += len + padding(len);
        }
        out.write_all(&[0; ALIGN as usize][..padding(header_len) as usize])?;
        self.write_sections(&mut SectionWriter::writing(&mut out))?;
        let digest = out.digest.finalize();
        out.inner.write_all(digest.as_bytes())?;
        let file = out
            .inner
            .into_inner()
            .map_err(io::IntoInnerError::into_error)?;
        file.sync_all()
    }

    /// Reads a recording written by [`Self::save`] for this field, under any key, into
    /// memory, checking all of it (the digest, every invariant of the matrices) and deriving
    /// what evaluation needs afresh. Truncated, damaged, foreign-version or foreign-field
    /// files are errors naming the file. Costs a pass over the file and a copy of it; see
    /// [`Self::map_unverified`] for a recording opened in place.
    pub fn load(path: &Path) -> Result<Self, Error> {
        Self::load_checked(path, None)
    }

    /// [`Self::load`], refusing a file saved under another key than `key`.
    #[cfg(test)]
    pub(crate) fn load_keyed(path: &Path, key: &Key) -> Result<Self, Error> {
        Self::load_checked(path, Some(key))
    }

    fn load_checked(path: &Path, expected_key: Option<&Key>) -> Result<Self, Error> {
        let failed = io_error(path);
        let (mut file, opened, header) = open::<Scalar>(path, expected_key)?;
        let file_len = opened.len();
        // Ask for the memory the header implies, touching none of it: an impossible size is
        // an error now rather than an abort half-way through.
        reserve(
            &mut Vec::<u8>::new(),
            header.memory_needed(),
            "bytes of recording",
        )?;
        verify_digest(&mut file, file_len).map_err(|e| match e {
            DigestError::Io(e) => failed(e),
            DigestError::Mismatch => Error::file(path, FileProblem::Checksum),
        })?;
        let source = Copied {
            file,
            path: path.to_path_buf(),
        };
        let mut sections = SectionReader::new(source, path, header.table.clone());
        let (dictionary, matrices) = read_matrices(&mut sections, &header)?;
        let parts = Parts::read_sections(&mut sections, header.aux)?;
        sections.skip_rest();
        sections.finish()?;
        Recording::checked(
            header.inputs,
            header.aux,
            matrices,
            dictionary,
            parts,
            |message| Error::file(path, FileProblem::Corrupt(message)),
        )
    }

    /// Opens a recording written by [`Self::save`] for this field, under any key, in place,
    /// without checking most of it: the file is mapped into memory and evaluation reads it
    /// there, so opening costs the same at any size and every process that maps the file
    /// shares one copy of its pages. [`Self::load`] checks all of it instead.
    ///
    /// What a caller can trust of a file opened this way:
    /// - Its header: checked against the file's length, field, version and key, as
    ///   [`Self::load`] checks it. The digest and the invariants of the rest are not (that
    ///   is a pass over the whole file).
    /// - Memory safety and the process: only integers are read in place, at checked bounds;
    ///   contents that break the format make the evaluation an error (nothing printed), and
    ///   a file cut while mapped reads as zeros instead of raising SIGBUS.
    /// - What an evaluation returns: every recorded row holds for the witness, and every
    ///   byte it used (rows, densities) was read before its last check that the file is
    ///   still the one opened (same file, size, modification and change times), so a file
    ///   cut or written on this machine from opening to that check makes it an error. Not
    ///   seen: a write another machine makes that a network file system's cached
    ///   attributes hide, or one through a descriptor kept open to a file since unlinked
    ///   that also sets its times back.
    ///
    /// What it cannot be trusted for: that the file is the circuit's. A damaged or forged
    /// file gives vectors that satisfy its own rows, with its own densities, which nothing
    /// compares with the circuit's: a proof from them may not verify. Take this path only
    /// where every proof made from its vectors is verified against the parameters'
    /// verifying key (as the drop-ins do, making a failed member again), or where you wrote
    /// the file yourself and nothing else can write it; otherwise use [`Self::load`].
    ///
    /// Where files cannot be mapped (not a 64-bit little-endian Unix, or more than 128
    /// files mapped at once) this is [`Self::load`].
    pub fn map_unverified(path: &Path) -> Result<Self, Error> {
        Self::map_checked(path, None)
    }

    /// [`Self::map_unverified`], refusing a file saved under another key than `key`.
    #[cfg(any(feature = "bellperson-0.26", feature = "bellperson-0.27", test))]
    pub(crate) fn map_keyed(path: &Path, key: &Key) -> Result<Self, Error> {
        Self::map_checked(path, Some(key))
    }

    #[cfg(all(unix, target_pointer_width = "64", target_endian = "little"))]
    fn map_checked(path: &Path, expected_key: Option<&Key>) -> Result<Self, Error> {
        use crate::precompiled::storage::mapping::Mapping;
        use crate::precompiled::storage::sections::Mapped;
        let (file, opened, header) = open::<Scalar>(path, expected_key)?;
        let Some(mapping) = Mapping::new(file, path, &opened)? else {
            return Self::load_checked(path, expected_key);
        };
        let mut sections = SectionReader::new(
            Mapped(std::sync::Arc::clone(&mapping)),
            path,
            header.table.clone(),
        );
        let (dictionary, matrices) = read_matrices(&mut sections, &header)?;
        let parts = Parts::read_sections(&mut sections, header.aux)?;
        let derived = Derived {
            densities: Densities::read_sections(&mut sections, header.inputs, header.aux)?,
            layouts: [
                MatrixLayout::read_sections(&mut sections)?,
                MatrixLayout::read_sections(&mut sections)?,
                MatrixLayout::read_sections(&mut sections)?,
            ],
            claims: Claims::read_sections(&mut sections)?,
            field_rows: FieldRows::read_sections(&mut sections)?,
        };
        sections.finish()?;
        // What was copied out of the file just now (the dictionary, the parts, the counts)
        // holds only if the file did not change while it was read.
        mapping.unchanged()?;
        Ok(Recording {
            inputs: header.inputs,
            aux: header.aux,
            matrices,
            coefficients: CoefficientTable::new(dictionary),
            layouts: derived.layouts,
            densities: derived.densities,
            claims: derived.claims,
            field_rows: derived.field_rows,
            parts,
            mapping: Some(mapping),
        })
    }

    #[cfg(not(all(unix, target_pointer_width = "64", target_endian = "little")))]
    fn map_checked(path: &Path, expected_key: Option<&Key>) -> Result<Self, Error> {
        Self::load_checked(path, expected_key)
    }
}

/// The dictionary (checked: field elements, one and minus one first, no zero) and the
/// three matrices (their lengths checked against the header), the first sections.
fn read_matrices<Scalar: PrimeField, S: Source>(
    sections: &mut SectionReader<S>,
    header: &Header,
) -> Result<(Vec<Scalar>, [Matrix; 3]), Error> {
    let reprs = sections.exactly::<u8>(header.dictionary * header.repr_len, "dictionary")?;
    let mut dictionary = Vec::new();
    reserve(&mut dictionary, header.dictionary, "coefficients")?;
    for bytes in reprs.chunks_exact(header.repr_len) {
        let mut repr = Scalar::Repr::default();
        repr.as_mut().copy_from_slice(bytes);
        let value: Option<Scalar> = Scalar::from_repr(repr).into();
        dictionary.push(
            value.ok_or_else(|| {
                sections.corrupt("a dictionary entry is not a field element".into())
            })?,
        );
    }
    validate_dictionary(&dictionary).map_err(|message| sections.corrupt(message))?;
    let row_starts = header
        .rows
        .checked_add(1)
        .ok_or_else(|| sections.corrupt("impossible row count".into()))?;
    let mut matrix = |nonzeros: usize| -> Result<Matrix, Error> {
        Ok(Matrix {
            row_starts: sections.exactly(row_starts, "row offsets")?,
            columns: sections.exactly(nonzeros, "columns")?,
            coeff_ids: sections.exactly::<u16>(nonzeros, "coefficient ids")?,
        })
    };
    let matrices = [
        matrix(header.nonzeros[0])?,
        matrix(header.nonzeros[1])?,
        matrix(header.nonzeros[2])?,
    ];
    Ok((dictionary, matrices))
}

enum DigestError {
    Io(io::Error),
    Mismatch,
}

/// Digests the file up to its last [`DIGEST_LEN`] bytes in bounded chunks and compares.
fn verify_digest(file: &mut (impl Read + Seek), file_len: u64) -> Result<(), DigestError> {
    file.seek(SeekFrom::Start(0)).map_err(DigestError::Io)?;
    let mut digest = Digest::new();
    let mut buffer = vec![0u8; CHUNK];
    let mut left = file_len - DIGEST_LEN;
    while left > 0 {
        let n = left.min(CHUNK as u64) as usize;
        file.read_exact(&mut buffer[..n]).map_err(DigestError::Io)?;
        digest.update(&buffer[..n]);
        left -= n as u64;
    }
    let mut stored = [0u8; DIGEST_LEN as usize];
    file.read_exact(&mut stored).map_err(DigestError::Io)?;
    if digest.finalize().as_bytes() == stored {
        Ok(())
    } else {
        Err(DigestError::Mismatch)
    }
}

mod header;
#[cfg(test)]
mod tests;
