//! The on-disk format of a [`PreparedCircuit`]: versioned, checked, streamed.
//!
//! Layout (integers little-endian):
//! - magic `SYNTHPCE`, format version (u32);
//! - the field: its modulus as text (u32 length + bytes) and its repr length (u32);
//! - shape: inputs, aux, rows, dictionary length, nonzeros of A, B, C (u64 each);
//! - the dictionary (repr bytes per entry);
//! - per matrix A, B, C: row starts (u32 × rows+1), columns (u32 × nonzeros), coefficient ids
//!   (u16 × nonzeros);
//! - a BLAKE2s-256 digest of everything before it.
//!
//! Loading checks the length the header implies against the file before allocating, reads
//! each section straight into its vector (no second copy), verifies the digest, then checks
//! every matrix invariant, so a damaged or hostile file is an error, never a panic or an
//! out-of-bounds read later.

use std::fs::File;
use std::io::{self, BufReader, BufWriter, Read, Write};
use std::path::Path;

use blake2s_simd::State as Blake2s;
use ff::PrimeField;

use super::matrix::{Matrix, INPUT_FLAG};
use super::PreparedCircuit;

const MAGIC: &[u8; 8] = b"SYNTHPCE";
/// The format version this build writes and reads.
pub const FORMAT_VERSION: u32 = 1;
const DIGEST_LEN: usize = 32;

fn invalid(path: &Path, message: impl std::fmt::Display) -> io::Error {
    io::Error::new(
        io::ErrorKind::InvalidData,
        format!("{}: {message}", path.display()),
    )
}

fn with_path(path: &Path) -> impl Fn(io::Error) -> io::Error + '_ {
    move |e| io::Error::new(e.kind(), format!("{}: {e}", path.display()))
}

/// A writer that hashes what it writes.
struct Hashing<W> {
    inner: W,
    hasher: Blake2s,
}

impl<W: Write> Hashing<W> {
    fn put(&mut self, bytes: &[u8]) -> io::Result<()> {
        self.hasher.update(bytes);
        self.inner.write_all(bytes)
    }
}

/// A reader that hashes what it reads.
struct Reading<R> {
    inner: R,
    hasher: Blake2s,
}

impl<R: Read> Reading<R> {
    fn take(&mut self, buf: &mut [u8]) -> io::Result<()> {
        self.inner.read_exact(buf)?;
        self.hasher.update(buf);
        Ok(())
    }

    fn u32(&mut self) -> io::Result<u32> {
        let mut buf = [0; 4];
        self.take(&mut buf)?;
        Ok(u32::from_le_bytes(buf))
    }

    fn u64(&mut self) -> io::Result<u64> {
        let mut buf = [0; 8];
        self.take(&mut buf)?;
        Ok(u64::from_le_bytes(buf))
    }

    /// Reads `count` little-endian integers of `N` bytes, converting in 64 KiB chunks.
    fn vector<T, const N: usize>(
        &mut self,
        count: usize,
        decode: fn([u8; N]) -> T,
    ) -> io::Result<Vec<T>> {
        let mut out = Vec::with_capacity(count);
        let mut chunk = vec![0u8; 65536 / N * N];
        let mut left = count;
        while left > 0 {
            let n = left.min(chunk.len() / N);
            let bytes = &mut chunk[..n * N];
            self.take(bytes)?;
            out.extend(
                bytes
                    .chunks_exact(N)
                    .map(|b| decode(b.try_into().expect("chunks of N"))),
            );
            left -= n;
        }
        Ok(out)
    }
}

/// Header fields, as read.
struct Header {
    inputs: usize,
    aux: usize,
    rows: usize,
    dictionary: usize,
    nonzeros: [usize; 3],
}

impl Header {
    /// Bytes after the field description, digest included; `None` on overflow.
    fn body_len(&self, repr_len: usize) -> Option<u64> {
        let mut total = (self.dictionary as u64).checked_mul(repr_len as u64)?;
        for &nnz in &self.nonzeros {
            total = total
                .checked_add((self.rows as u64).checked_add(1)?.checked_mul(4)?)?
                .checked_add((nnz as u64).checked_mul(6)?)?;
        }
        total.checked_add(DIGEST_LEN as u64)
    }
}

fn check_matrix(matrix: &Matrix, name: char, header: &Header) -> Result<(), String> {
    let starts = &matrix.row_starts;
    if starts.first() != Some(&0)
        || starts.last().map(|&e| e as usize) != Some(matrix.columns.len())
    {
        return Err(format!("matrix {name}: row offsets do not span its terms"));
    }
    if starts.windows(2).any(|w| w[0] > w[1]) {
        return Err(format!("matrix {name}: row offsets decrease"));
    }
    for &column in &matrix.columns {
        let (index, bound, kind) = if column & INPUT_FLAG == 0 {
            (column as usize, header.aux, "aux")
        } else {
            ((column & !INPUT_FLAG) as usize, header.inputs, "input")
        };
        if index >= bound {
            return Err(format!(
                "matrix {name}: {kind} column {index} out of range (< {bound})"
            ));
        }
    }
    if let Some(id) = matrix
        .coeff_ids
        .iter()
        .find(|&&id| id as usize >= header.dictionary)
    {
        return Err(format!(
            "matrix {name}: coefficient id {id} outside the dictionary"
        ));
    }
    Ok(())
}

impl<Scalar: PrimeField> PreparedCircuit<Scalar> {
    /// Writes the prepared circuit to `path` (through a temporary file renamed into place,
    /// so a crash never leaves a half-written file under that name).
    pub fn save(&self, path: &Path) -> io::Result<()> {
        // `load` refuses these counts (see there); never write a file it would refuse.
        if self.inputs > self.a.rows() || self.aux > self.nonzeros() {
            return Err(io::Error::new(
                io::ErrorKind::InvalidInput,
                format!(
                    "{}: the circuit has aux variables no constraint mentions, which no Groth16 \
                     setup accepts; not saved",
                    path.display()
                ),
            ));
        }
        let partial = path.with_extension("partial");
        let file = File::create(&partial).map_err(with_path(&partial))?;
        let mut out = Hashing {
            inner: BufWriter::new(file),
            hasher: Blake2s::new(),
        };
        let write = |out: &mut Hashing<BufWriter<File>>| -> io::Result<()> {
            out.put(MAGIC)?;
            out.put(&FORMAT_VERSION.to_le_bytes())?;
            out.put(&(Scalar::MODULUS.len() as u32).to_le_bytes())?;
            out.put(Scalar::MODULUS.as_bytes())?;
            let repr_len = Scalar::Repr::default().as_ref().len() as u32;
            out.put(&repr_len.to_le_bytes())?;
            let matrices = [&self.a, &self.b, &self.c];
            let counts = [self.inputs, self.aux, self.a.rows(), self.dictionary.len()]
                .into_iter()
                .chain(matrices.iter().map(|m| m.nonzeros()));
            for count in counts {
                out.put(&(count as u64).to_le_bytes())?;
            }
            for value in &self.dictionary {
                out.put(value.to_repr().as_ref())?;
            }
            for matrix in matrices {
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
            let digest = out.hasher.finalize();
            out.inner.write_all(digest.as_bytes())?;
            out.inner.flush()?;
            out.inner.get_ref().sync_all()
        };
        write(&mut out).map_err(with_path(&partial))?;
        std::fs::rename(&partial, path).map_err(with_path(path))
    }

    /// Reads a prepared circuit written by [`Self::save`] for this field. Truncated, damaged,
    /// foreign-version or foreign-field files are `InvalidData` errors naming the file.
    pub fn load(path: &Path) -> io::Result<Self> {
        let file = File::open(path).map_err(with_path(path))?;
        let file_len = file.metadata().map_err(with_path(path))?.len();
        let mut input = Reading {
            inner: BufReader::with_capacity(1 << 20, file),
            hasher: Blake2s::new(),
        };
        let truncated = |e: io::Error| {
            if e.kind() == io::ErrorKind::UnexpectedEof {
                invalid(path, "truncated")
            } else {
                with_path(path)(e)
            }
        };

        let mut magic = [0u8; 8];
        input.take(&mut magic).map_err(truncated)?;
        if &magic != MAGIC {
            return Err(invalid(
                path,
                "not a synthpool prepared-circuit file (bad magic)",
            ));
        }
        let version = input.u32().map_err(truncated)?;
        if version != FORMAT_VERSION {
            return Err(invalid(
                path,
                format!("format version {version}; this build reads version {FORMAT_VERSION}"),
            ));
        }
        let modulus_len = input.u32().map_err(truncated)? as usize;
        if modulus_len > 4096 || modulus_len as u64 > file_len {
            return Err(invalid(path, "corrupt field description"));
        }
        let mut modulus = vec![0u8; modulus_len];
        input.take(&mut modulus).map_err(truncated)?;
        if modulus != Scalar::MODULUS.as_bytes() {
            return Err(invalid(
                path,
                format!(
                    "recorded for the field with modulus {}, not {}",
                    String::from_utf8_lossy(&modulus),
                    Scalar::MODULUS
                ),
            ));
        }
        let repr_len = input.u32().map_err(truncated)? as usize;
        if repr_len != Scalar::Repr::default().as_ref().len() {
            return Err(invalid(path, "coefficient size differs from this field's"));
        }
        let mut counts = [0usize; 7];
        for count in &mut counts {
            *count = usize::try_from(input.u64().map_err(truncated)?)
                .map_err(|_| invalid(path, "count exceeds this platform"))?;
        }
        let header = Header {
            inputs: counts[0],
            aux: counts[1],
            rows: counts[2],
            dictionary: counts[3],
            nonzeros: [counts[4], counts[5], counts[6]],
        };
        let header_len = (8 + 4 + 4 + modulus_len + 4 + 7 * 8) as u64;
        let expected = header
            .body_len(repr_len)
            .and_then(|body| body.checked_add(header_len));
        if expected != Some(file_len) {
            return Err(invalid(
                path,
                format!(
                    "the header implies {} bytes but the file has {file_len} (truncated or corrupt)",
                    expected.map_or("an impossible number of".to_string(), |n| n.to_string())
                ),
            ));
        }
        if header.inputs == 0 || header.dictionary < 2 || header.dictionary > 1 << 16 {
            return Err(invalid(path, "corrupt shape"));
        }

        let mut dictionary = Vec::with_capacity(header.dictionary);
        for _ in 0..header.dictionary {
            let mut repr = Scalar::Repr::default();
            input.take(repr.as_mut()).map_err(truncated)?;
            let value: Option<Scalar> = Scalar::from_repr(repr).into();
            match value {
                Some(v) if v != Scalar::ZERO => dictionary.push(v),
                _ => {
                    return Err(invalid(
                        path,
                        "a dictionary entry is not a nonzero field element",
                    ))
                }
            }
        }
        let mut matrices = Vec::with_capacity(3);
        for &nnz in &header.nonzeros {
            let row_starts = input
                .vector(header.rows + 1, u32::from_le_bytes)
                .map_err(truncated)?;
            let columns = input.vector(nnz, u32::from_le_bytes).map_err(truncated)?;
            let coeff_ids = input.vector(nnz, u16::from_le_bytes).map_err(truncated)?;
            matrices.push(Matrix {
                row_starts,
                columns,
                coeff_ids,
            });
        }
        let computed = input.hasher.finalize();
        let mut stored = [0u8; DIGEST_LEN];
        input.inner.read_exact(&mut stored).map_err(truncated)?;
        if computed.as_bytes() != stored {
            return Err(invalid(path, "checksum mismatch: the file is damaged"));
        }
        if dictionary[0] != Scalar::ONE || dictionary[1] != -Scalar::ONE {
            return Err(invalid(path, "corrupt dictionary"));
        }
        // Every input has its own `input * 0 = 0` row, and an aux variable no constraint
        // mentions cannot be proven: larger counts are damage (and would size the density
        // bitmaps from nothing but the header).
        let nonzeros: usize = header.nonzeros.iter().sum();
        if header.inputs > header.rows || header.aux > nonzeros {
            return Err(invalid(
                path,
                "variable counts exceed what the matrices can reference",
            ));
        }
        for (matrix, name) in matrices.iter().zip(['A', 'B', 'C']) {
            check_matrix(matrix, name, &header).map_err(|e| invalid(path, e))?;
        }
        let [a, b, c]: [Matrix; 3] = matrices.try_into().expect("three matrices were read");
        Ok(PreparedCircuit::from_parts(
            header.inputs,
            header.aux,
            [a, b, c],
            dictionary,
        ))
    }
}
