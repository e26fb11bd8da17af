//! The head of a bellperson `.params` file: its verifying key and how many bases each query
//! holds, read without the bases themselves (a 32 GiB PoRep file is tens of gigabytes).
//!
//! The layout is bellperson's `Parameters::write`, the one supraseal's loader reads: the
//! verifying key (uncompressed points, then the `ic` count and points), then for H, L, A,
//! B in G1 and B in G2 a 4-byte big-endian count and that many uncompressed points (96
//! bytes in G1, 192 in G2).

use std::io::{self, BufReader, Read, Seek};
use std::path::{Path, PathBuf};

use pairing::MultiMillerLoop;

use super::upstream::groth16::VerifyingKey;
use crate::error::{Error, FileProblem};

/// Bytes of an uncompressed point of G1 and of G2 on BLS12-381.
const G1_BYTES: u64 = 96;
const G2_BYTES: u64 = 192;

/// What a `.params` file says about the circuit it was made for.
#[derive(Clone, Debug)]
pub struct ParametersFile<E: MultiMillerLoop> {
    path: PathBuf,
    vk: VerifyingKey<E>,
    /// Bases of H, L, A, B in G1 and B in G2.
    queries: [usize; 5],
}

impl<E: MultiMillerLoop> ParametersFile<E> {
    /// Reads the head of the `.params` file at `path`: an error naming the file when it is
    /// not a regular file, cannot be read, or is shorter than its counts say.
    pub fn read(path: impl AsRef<Path>) -> Result<Self, Error> {
        let path = path.as_ref();
        let fail = |problem| Error::file(path, problem);
        let (file, opened) = crate::regular_file::open(path, crate::regular_file::Links::Follow)?;
        let file_len = opened.len();
        let mut reader = BufReader::new(file);
        let vk = VerifyingKey::<E>::read(&mut reader).map_err(|e| fail(FileProblem::Io(e)))?;
        let mut queries = [0; 5];
        let point_bytes = [G1_BYTES, G1_BYTES, G1_BYTES, G1_BYTES, G2_BYTES];
        for (count, bytes) in queries.iter_mut().zip(point_bytes) {
            *count = read_count(&mut reader).map_err(|e| fail(FileProblem::Io(e)))?;
            let skip = i64::try_from(*count as u64 * bytes).expect("a u32 count of points");
            reader
                .seek_relative(skip)
                .map_err(|e| fail(FileProblem::Io(e)))?;
        }
        let end = reader
            .stream_position()
            .map_err(|e| fail(FileProblem::Io(e)))?;
        if end > file_len {
            return Err(fail(FileProblem::Length {
                implied: Some(end),
                actual: file_len,
            }));
        }
        Ok(ParametersFile {
            path: path.to_path_buf(),
            vk,
            queries,
        })
    }

    /// The file.
    pub fn path(&self) -> &Path {
        &self.path
    }

    /// The verifying key.
    pub fn verifying_key(&self) -> &VerifyingKey<E> {
        &self.vk
    }

    /// Bases of the H, L, A, B in G1 and B in G2 queries.
    pub fn query_sizes(&self) -> [usize; 5] {
        self.queries
    }
}

/// A 4-byte big-endian count.
fn read_count(reader: &mut impl Read) -> io::Result<usize> {
    let mut bytes = [0; 4];
    reader.read_exact(&mut bytes)?;
    Ok(u32::from_be_bytes(bytes) as usize)
}
