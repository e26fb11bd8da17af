//! The on-disk format of a [`Recording`]: versioned, checked, written atomically.
//!
//! Layout (integers little-endian):
//! - magic `SYNTHPCE`, format version (u32);
//! - the field: its modulus as text (u32 length + bytes) and its repr length (u32);
//! - a 32-byte key: all zeros from [`Recording::save`]; the drop-ins' cache files carry a
//!   digest of the parameters' verifying key, and refuse a file under any other;
//! - shape: inputs, aux, rows, dictionary length, nonzeros of A, B, C (u64 each);
//! - the dictionary (repr bytes per entry);
//! - per matrix A, B, C: row starts (u32 × rows+1), columns (u32 × nonzeros), coefficient ids
//!   (u16 × nonzeros);
//! - a BLAKE2sp-256 digest of everything before it.
//!
//! Saving writes a temporary file created exclusively, under a name no other save uses, in
//! the target's directory, syncs it and renames it onto the target: readers see the old file
//! or the new one, whole, and concurrent saves (of one path or of siblings) never mix.
//!
//! Loading checks the header against the file's length, asks for the memory the header
//! implies without touching it (so an impossible size is an error at once, not an abort
//! later), verifies the digest in a streaming pass before allocating anything large, then
//! reads each section into fallibly reserved vectors and checks every invariant of
//! [`Matrix`]'s module: a damaged or hostile file is an error, never a panic, an abort or an
//! out-of-bounds read later.

use std::fs::{File, OpenOptions};
use std::io::{self, BufReader, BufWriter, Read, Seek, SeekFrom, Write};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};

use blake2s_simd::blake2sp::State as Digest;
use ff::PrimeField;

use super::matrix::{check_counts, Matrix};
use super::Recording;
use crate::error::{Error, FileProblem};
use crate::vectors::reserve;

const MAGIC: &[u8; 8] = b"SYNTHPCE";
/// The format version this build writes and reads.
pub const FORMAT_VERSION: u32 = 2;
const DIGEST_LEN: usize = 32;
/// Bytes of the key that names what a file was recorded for.
pub(crate) const KEY_LEN: usize = 32;
const COUNTS: usize = 7;
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

impl<W: Write> DigestingWriter<W> {
    fn put(&mut self, bytes: &[u8]) -> io::Result<()> {
        self.digest.update(bytes);
        self.inner.write_all(bytes)
    }
}

/// Little-endian integers from a reader.
struct Fields<R> {
    inner: R,
}

impl<R: Read> Fields<R> {
    fn bytes<const N: usize>(&mut self) -> io::Result<[u8; N]> {
        let mut buf = [0; N];
        self.inner.read_exact(&mut buf)?;
        Ok(buf)
    }

    fn u32(&mut self) -> io::Result<u32> {
        self.bytes().map(u32::from_le_bytes)
    }

    fn u64(&mut self) -> io::Result<u64> {
        self.bytes().map(u64::from_le_bytes)
    }

    /// Reads `count` little-endian integers of `N` bytes into a fallibly reserved vector,
    /// converting in chunks.
    fn vector<T, const N: usize>(
        &mut self,
        count: usize,
        what: &'static str,
        decode: fn([u8; N]) -> T,
    ) -> Result<Vec<T>, ReadError> {
        let mut out = Vec::new();
        reserve(&mut out, count, what).map_err(ReadError::Memory)?;
        let mut chunk = vec![0u8; CHUNK / N * N];
        let mut left = count;
        while left > 0 {
            let n = left.min(chunk.len() / N);
            let bytes = &mut chunk[..n * N];
            self.inner.read_exact(bytes).map_err(ReadError::Io)?;
            out.extend(
                bytes
                    .chunks_exact(N)
                    .map(|b| decode(b.try_into().expect("chunks of N bytes"))),
            );
            left -= n;
        }
        Ok(out)
    }
}

/// A failure while reading a section.
enum ReadError {
    Io(io::Error),
    Memory(Error),
}

/// Header fields, as read.
struct Header {
    key: [u8; KEY_LEN],
    inputs: usize,
    aux: usize,
    rows: usize,
    dictionary: usize,
    nonzeros: [usize; 3],
    /// Bytes of the header itself, where the body starts.
    len: u64,
    /// Bytes of a coefficient's representation.
    repr_len: usize,
}

impl Header {
    /// Nonzeros of the three matrices together (saturating: the counts are checked after).
    fn total_nonzeros(&self) -> usize {
        self.nonzeros
            .iter()
            .fold(0usize, |sum, &n| sum.saturating_add(n))
    }

    /// Bytes after the counts, digest included; `None` on overflow.
    fn body_len(&self, repr_len: usize) -> Option<u64> {
        let mut total = (self.dictionary as u64).checked_mul(repr_len as u64)?;
        for &nnz in &self.nonzeros {
            total = total
                .checked_add((self.rows as u64).checked_add(1)?.checked_mul(4)?)?
                .checked_add((nnz as u64).checked_mul(6)?)?;
        }
        total.checked_add(DIGEST_LEN as u64)
    }

    /// Bytes the loaded recording will hold: its terms, row offsets, dictionary and
    /// density bitmaps.
    fn memory_needed(&self, repr_len: usize, nonzeros: usize) -> usize {
        nonzeros
            .saturating_mul(6)
            .saturating_add(self.rows.saturating_add(1).saturating_mul(12))
            .saturating_add(self.dictionary.saturating_mul(repr_len))
            .saturating_add(self.aux.saturating_mul(2).saturating_add(self.inputs) / 8)
    }
}

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
            ".{name}.{}.{unique}.synthpool-tmp",
            std::process::id()
        ));
        match OpenOptions::new()
            .write(true)
            .create_new(true)
            .open(&temporary)
        {
            Ok(file) => return Ok((temporary, file)),
            // Left behind by a crashed process that had this id: pick the next name.
            Err(e) if e.kind() == io::ErrorKind::AlreadyExists => continue,
            Err(e) => return Err(Error::file(temporary, FileProblem::Io(e))),
        }
    }
}

impl<Scalar: PrimeField> Recording<Scalar> {
    /// Writes the recording to `path`, atomically (see the module documentation).
    pub fn save(&self, path: &Path) -> Result<(), Error> {
        self.save_keyed(path, &[0; KEY_LEN])
    }

    /// [`Self::save`], naming what the recording was made for with `key` (the drop-ins'
    /// cache uses a digest of the parameters' verifying key); [`Self::load_keyed`] refuses
    /// the file under any other key. Only the drop-ins write keyed files.
    pub(crate) fn save_keyed(&self, path: &Path, key: &[u8; KEY_LEN]) -> Result<(), Error> {
        let (temporary, file) = create_temporary(path)?;
        let written = self.write_to(file, key);
        let result = match written {
            Ok(()) => {
                std::fs::rename(&temporary, path).map_err(|e| Error::file(path, FileProblem::Io(e)))
            }
            Err(e) => Err(Error::file(path, FileProblem::Io(e))),
        };
        if result.is_err() {
            // Ours alone (created exclusively above); nothing else is ever removed.
            let _ = std::fs::remove_file(&temporary);
        }
        result
    }

    fn write_to(&self, file: File, key: &[u8; KEY_LEN]) -> io::Result<()> {
        let mut out = DigestingWriter {
            inner: BufWriter::with_capacity(CHUNK, file),
            digest: Digest::new(),
        };
        out.put(MAGIC)?;
        out.put(&FORMAT_VERSION.to_le_bytes())?;
        out.put(&(Scalar::MODULUS.len() as u32).to_le_bytes())?;
        out.put(Scalar::MODULUS.as_bytes())?;
        let repr_len = Scalar::Repr::default().as_ref().len() as u32;
        out.put(&repr_len.to_le_bytes())?;
        out.put(key)?;
        let counts = [
            self.inputs,
            self.aux,
            self.matrices[0].rows(),
            self.dictionary_len(),
        ]
        .into_iter()
        .chain(self.matrices.iter().map(Matrix::nonzeros));
        for count in counts {
            out.put(&(count as u64).to_le_bytes())?;
        }
        for value in self.coefficients.dictionary() {
            out.put(value.to_repr().as_ref())?;
        }
        for matrix in &self.matrices {
            for &start in &matrix.row_starts {
                out.put(&start.to_le_bytes())?;
            }
            for &column in &matrix.columns {
                out.put(&column.to_le_bytes())?;
            }
            for &id in &matrix.coeff_ids {
                out.put(&id.to_le_bytes())?;
            }
        }
        let digest = out.digest.finalize();
        out.inner.write_all(digest.as_bytes())?;
        let file = out
            .inner
            .into_inner()
            .map_err(io::IntoInnerError::into_error)?;
        file.sync_all()
    }

    /// Reads a recording written by [`Self::save`] for this field, under any key. Truncated,
    /// damaged, foreign-version or foreign-field files are errors naming the file.
    pub fn load(path: &Path) -> Result<Self, Error> {
        Self::load_checked(path, None, &|| {})
    }

    /// [`Self::load`], refusing a file saved under another key than `key`.
    #[cfg(test)]
    pub(crate) fn load_keyed(path: &Path, key: &[u8; KEY_LEN]) -> Result<Self, Error> {
        Self::load_checked(path, Some(key), &|| {})
    }

    /// [`Self::load`], refusing a file saved under another key than `key` and calling
    /// `progress` after each read of the file (at most 1 MiB), so a watchdog can tell a
    /// slow read from a hung one.
    #[cfg(any(feature = "bellperson-0.26", feature = "bellperson-0.27"))]
    pub(crate) fn load_keyed_reporting(
        path: &Path,
        key: &[u8; KEY_LEN],
        progress: &dyn Fn(),
    ) -> Result<Self, Error> {
        Self::load_checked(path, Some(key), progress)
    }

    fn load_checked(
        path: &Path,
        expected_key: Option<&[u8; KEY_LEN]>,
        progress: &dyn Fn(),
    ) -> Result<Self, Error> {
        let failed = io_error(path);
        let (file, file_len) = crate::regular_file::open(path)?;
        progress();
        let mut file = Reporting { file, progress };
        let header = read_header::<Scalar>(&mut file, path, file_len)?;
        if let Some(expected) = expected_key {
            if *expected != header.key {
                return Err(Error::file(path, FileProblem::Key));
            }
        }
        // Ask for the memory the header implies, touching none of it: an impossible size is
        // an error now rather than an abort half-way through.
        reserve(
            &mut Vec::<u8>::new(),
            header.memory_needed(header.repr_len, header.total_nonzeros()),
            "bytes of recording",
        )?;
        verify_digest(&mut file, file_len).map_err(|e| match e {
            DigestError::Io(e) => failed(e),
            DigestError::Mismatch => Error::file(path, FileProblem::Checksum),
        })?;
        file.seek(SeekFrom::Start(header.len)).map_err(&failed)?;
        read_body(&mut file, path, &header)
    }
}

/// Reads and checks the header of the recording file at `path` (`file_len` bytes long):
/// magic, version, field, counts, and that they imply the file's length.
fn read_header<Scalar: PrimeField>(
    file: &mut impl Read,
    path: &Path,
    file_len: u64,
) -> Result<Header, Error> {
    let failed = io_error(path);
    let broken = |problem| Error::file(path, problem);
    let mut fields = Fields {
        inner: BufReader::with_capacity(CHUNK, file),
    };
    if &fields.bytes::<8>().map_err(&failed)? != MAGIC {
        return Err(broken(FileProblem::NotARecording));
    }
    let version = fields.u32().map_err(&failed)?;
    if version != FORMAT_VERSION {
        return Err(broken(FileProblem::Version {
            found: version,
            supported: FORMAT_VERSION,
        }));
    }
    let modulus_len = fields.u32().map_err(&failed)? as usize;
    if modulus_len > 4096 || modulus_len as u64 > file_len {
        return Err(broken(FileProblem::Corrupt(
            "impossible field description".into(),
        )));
    }
    let mut modulus = vec![0u8; modulus_len];
    fields.inner.read_exact(&mut modulus).map_err(&failed)?;
    if modulus != Scalar::MODULUS.as_bytes() {
        return Err(broken(FileProblem::Field {
            found: String::from_utf8_lossy(&modulus).into_owned(),
            expected: Scalar::MODULUS,
        }));
    }
    let repr_len = fields.u32().map_err(&failed)? as usize;
    if repr_len != Scalar::Repr::default().as_ref().len() {
        return Err(broken(FileProblem::Corrupt(
            "coefficient size differs from this field's".into(),
        )));
    }
    let key = fields.bytes::<KEY_LEN>().map_err(&failed)?;
    let mut counts = [0usize; COUNTS];
    for count in &mut counts {
        *count = usize::try_from(fields.u64().map_err(&failed)?)
            .map_err(|_| broken(FileProblem::Corrupt("a count exceeds this platform".into())))?;
    }
    let header = Header {
        key,
        inputs: counts[0],
        aux: counts[1],
        rows: counts[2],
        dictionary: counts[3],
        nonzeros: [counts[4], counts[5], counts[6]],
        len: (8 + 4 + 4 + modulus_len + 4 + KEY_LEN + COUNTS * 8) as u64,
        repr_len,
    };
    let implied = header
        .body_len(repr_len)
        .and_then(|body| body.checked_add(header.len));
    if implied != Some(file_len) {
        return Err(broken(FileProblem::Length {
            implied,
            actual: file_len,
        }));
    }
    if header.dictionary < 2 || header.dictionary > 1 << 16 {
        return Err(broken(FileProblem::Corrupt(
            "impossible dictionary size".into(),
        )));
    }
    check_counts(
        header.inputs,
        header.aux,
        header.rows,
        header.total_nonzeros(),
    )
    .map_err(|message| broken(FileProblem::Corrupt(message)))?;
    Ok(header)
}

/// Reads the sections after the header (the digest already verified) into fallibly
/// reserved vectors, and checks the recording they make.
fn read_body<Scalar: PrimeField>(
    file: &mut impl Read,
    path: &Path,
    header: &Header,
) -> Result<Recording<Scalar>, Error> {
    let failed = io_error(path);
    let broken = |problem| Error::file(path, problem);
    let mut fields = Fields {
        inner: BufReader::with_capacity(CHUNK, file),
    };
    let section = |e: ReadError| match e {
        ReadError::Io(e) => failed(e),
        ReadError::Memory(e) => e,
    };
    let mut dictionary = Vec::new();
    reserve(&mut dictionary, header.dictionary, "coefficients")?;
    for _ in 0..header.dictionary {
        let mut repr = Scalar::Repr::default();
        fields.inner.read_exact(repr.as_mut()).map_err(&failed)?;
        let value: Option<Scalar> = Scalar::from_repr(repr).into();
        dictionary.push(value.ok_or_else(|| {
            broken(FileProblem::Corrupt(
                "a dictionary entry is not a field element".into(),
            ))
        })?);
    }
    let mut matrices: [Matrix; 3] = Default::default();
    for (matrix, &nnz) in matrices.iter_mut().zip(&header.nonzeros) {
        matrix.row_starts = fields
            .vector(header.rows + 1, "row offsets", u32::from_le_bytes)
            .map_err(section)?;
        matrix.columns = fields
            .vector(nnz, "columns", u32::from_le_bytes)
            .map_err(section)?;
        matrix.coeff_ids = fields
            .vector(nnz, "coefficient ids", u16::from_le_bytes)
            .map_err(section)?;
    }
    Recording::checked(header.inputs, header.aux, matrices, dictionary, |message| {
        broken(FileProblem::Corrupt(message))
    })
}

/// A file that calls `progress` after each read.
struct Reporting<'a> {
    file: File,
    progress: &'a dyn Fn(),
}

impl Read for Reporting<'_> {
    fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
        let read = self.file.read(buf);
        (self.progress)();
        read
    }
}

impl Seek for Reporting<'_> {
    fn seek(&mut self, position: SeekFrom) -> io::Result<u64> {
        self.file.seek(position)
    }
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
    let mut left = file_len - DIGEST_LEN as u64;
    while left > 0 {
        let n = left.min(CHUNK as u64) as usize;
        file.read_exact(&mut buffer[..n]).map_err(DigestError::Io)?;
        digest.update(&buffer[..n]);
        left -= n as u64;
    }
    let mut stored = [0u8; DIGEST_LEN];
    file.read_exact(&mut stored).map_err(DigestError::Io)?;
    if digest.finalize().as_bytes() == stored {
        Ok(())
    } else {
        Err(DigestError::Mismatch)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use bellpepper_core::{Circuit, ConstraintSystem, SynthesisError};

    /// x * x = y, y public.
    struct Square;

    impl Circuit<blstrs::Scalar> for Square {
        fn synthesize<CS: ConstraintSystem<blstrs::Scalar>>(
            self,
            cs: &mut CS,
        ) -> Result<(), SynthesisError> {
            let x = cs.alloc(|| "x", || Ok(3u64.into()))?;
            let y = cs.alloc_input(|| "y", || Ok(9u64.into()))?;
            cs.enforce(|| "square", |lc| lc + x, |lc| lc + x, |lc| lc + y);
            Ok(())
        }
    }

    #[test]
    fn a_keyed_file_loads_under_its_key_only() {
        let dir = std::env::temp_dir().join(format!("synthpool-keyed-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let path = dir.join("keyed.rec");
        let recording = Recording::<blstrs::Scalar>::record(Square).unwrap();
        recording.save_keyed(&path, &[7; KEY_LEN]).unwrap();
        let loaded = Recording::<blstrs::Scalar>::load_keyed(&path, &[7; KEY_LEN]).unwrap();
        assert_eq!(loaded.shape(), recording.shape());
        let err = Recording::<blstrs::Scalar>::load_keyed(&path, &[8; KEY_LEN]).unwrap_err();
        assert!(
            matches!(
                err,
                Error::File {
                    problem: FileProblem::Key,
                    ..
                }
            ),
            "{err}"
        );
        // Unkeyed loading takes any key.
        assert!(Recording::<blstrs::Scalar>::load(&path).is_ok());
        std::fs::remove_dir_all(dir).unwrap();
    }
}
