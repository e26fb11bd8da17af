//! A recording file's header: magic, version, field, key, counts, and the table of
//! sections, read and checked against the file's length before anything else is.

use super::*;

/// Little-endian integers from a reader.
pub(super) struct Fields<R> {
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
}

/// Header fields, as read.
pub(super) struct Header {
    pub(super) key: Key,
    pub(super) inputs: usize,
    pub(super) aux: usize,
    pub(super) rows: usize,
    pub(super) dictionary: usize,
    pub(super) nonzeros: [usize; 3],
    /// Bytes of a coefficient's representation.
    pub(super) repr_len: usize,
    /// Offset and length of every section.
    pub(super) table: Vec<(u64, u64)>,
}

impl Header {
    /// Nonzeros of the three matrices together (saturating: the counts are checked after).
    pub(super) fn total_nonzeros(&self) -> usize {
        self.nonzeros
            .iter()
            .fold(0usize, |sum, &n| sum.saturating_add(n))
    }

    /// Bytes the copied recording will hold at least: its terms, row offsets and
    /// dictionary.
    pub(super) fn memory_needed(&self) -> usize {
        self.total_nonzeros()
            .saturating_mul(6)
            .saturating_add(self.rows.saturating_add(1).saturating_mul(12))
            .saturating_add(self.dictionary.saturating_mul(self.repr_len))
    }
}

/// Bytes of the header before its table, for a modulus of `modulus_len` bytes.
pub(super) fn fixed_header_len(modulus_len: usize) -> u64 {
    (8 + 4 + 4 + modulus_len + 4 + KEY_LEN + COUNTS * 8 + 4) as u64
}

/// Opens the recording file at `path` and reads its header: the file, what it was when
/// opened (its length, against which the header is checked, and its times) and the header,
/// checked against this field and `expected_key` when given.
pub(super) fn open<Scalar: PrimeField>(
    path: &Path,
    expected_key: Option<&Key>,
) -> Result<(File, std::fs::Metadata, Header), Error> {
    if cfg!(not(target_endian = "little")) {
        return Err(Error::file(
            path,
            FileProblem::Corrupt("recording files are read on little-endian machines only".into()),
        ));
    }
    // A keyed file is a recording cache's: the cache writes no links, so a link at the
    // name is not followed.
    let links = match expected_key {
        Some(_) => Links::Refuse,
        None => Links::Follow,
    };
    let (mut file, opened) = crate::regular_file::open(path, links)?;
    let header = read_header::<Scalar>(&mut file, path, opened.len())?;
    if let Some(expected) = expected_key {
        if *expected != header.key {
            return Err(Error::file(path, FileProblem::Key));
        }
    }
    Ok((file, opened, header))
}

/// Reads and checks the header of the recording file at `path` (`file_len` bytes long):
/// magic, version, field, counts, and a table of sections that lie end to end, each padded,
/// up to the digest that ends the file.
pub(super) fn read_header<Scalar: PrimeField>(
    file: &mut File,
    path: &Path,
    file_len: u64,
) -> Result<Header, Error> {
    let failed = io_error(path);
    let broken = |problem| Error::file(path, problem);
    let mut fields = Fields {
        inner: io::BufReader::with_capacity(1 << 16, file),
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
    let sections = fields.u32().map_err(&failed)?;
    if sections > MAX_SECTIONS {
        return Err(broken(FileProblem::Corrupt(format!(
            "a table of {sections} sections"
        ))));
    }
    let header_len = fixed_header_len(modulus_len) + 16 * u64::from(sections);
    let mut expected = header_len + padding(header_len);
    let mut table = Vec::with_capacity(sections as usize);
    for index in 0..sections {
        let (offset, len) = (
            fields.u64().map_err(&failed)?,
            fields.u64().map_err(&failed)?,
        );
        if offset != expected {
            return Err(broken(FileProblem::Corrupt(format!(
                "section {index} starts at {offset}, not at {expected}"
            ))));
        }
        table.push((offset, len));
        expected = len
            .checked_next_multiple_of(ALIGN)
            .and_then(|padded| padded.checked_add(offset))
            .ok_or_else(|| broken(FileProblem::Corrupt("a section overflows".into())))?;
    }
    let implied = expected.checked_add(DIGEST_LEN);
    if implied != Some(file_len) {
        return Err(broken(FileProblem::Length {
            implied,
            actual: file_len,
        }));
    }
    let header = Header {
        key,
        inputs: counts[0],
        aux: counts[1],
        rows: counts[2],
        dictionary: counts[3],
        nonzeros: [counts[4], counts[5], counts[6]],
        repr_len,
        table,
    };
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
