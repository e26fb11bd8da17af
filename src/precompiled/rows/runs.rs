//! Runs of powers of two over consecutive variables, summed a word at a time.
//!
//! MultiEq packs many 32-bit additions into one constraint: each word's bits appear as
//! terms `bit_i * 2^(k + i)`. A word's bits are consecutive variables, and a row's terms are
//! in column order, so the row holds runs: consecutive columns whose coefficients are
//! consecutive powers of two of one sign, rising with the column (bits allocated from the
//! lowest, as results are) or falling (words read from big-endian bits). A word added
//! twice in one constraint (SHA-256's `temp1` goes into both of a round's sums) has sums of
//! two powers, `2^(k + i) + 2^(j + i)`, which run the same way. Such rows are
//! few (about one in 500) but hold about a fifth of all terms, and every one of them leaves
//! the common integer loop for its large coefficients.
//!
//! Over values that are all 0 or 1 a run's sum is the run's kinds read as the bits of one
//! integer, shifted by its lowest power: eight kinds (one byte each) become eight bits with
//! one multiplication. Runs are found once per recording, when it is built or loaded; the
//! file format does not change.

use std::io;
use std::ops::Range;

use rayon::prelude::*;

use crate::error::Error;
use crate::precompiled::rows::matrix::Matrix;
use crate::precompiled::rows::row_sets::{joined_starts, pieces};
use crate::precompiled::storage::plain::Plain;
use crate::precompiled::storage::sections::{SectionReader, SectionWriter, Sections, Source};
use crate::precompiled::storage::words::Words;

/// Shorter runs are summed term by term: packing pays from about a word's byte.
const MIN_RUN: usize = 8;

/// A run's sum fits a `u64`, so shifted by its power it fits the kernel's 320-bit sums.
const MAX_RUN: usize = 64;

/// Multiplying a `u64` whose bytes are each 0 or 1 by this puts byte `i` at bit `56 + i`:
/// the 64 partial products land on distinct bits, so nothing carries.
const PACK_BYTES: u64 = 0x0102_0408_1020_4080;

/// Set in a `u64` of kinds where a byte is neither 0 nor 1.
const NOT_A_BIT: u64 = 0xFEFE_FEFE_FEFE_FEFE;

/// A coefficient `± (2^k + 2^j)` or `± 2^k`: its sign, `k`, and `j` if there is one.
pub(crate) type Powers = (bool, u8, Option<u8>);

/// Terms at consecutive columns from `column` with coefficients `± 2^(low + i)` (plus
/// `2^(second + i)` for sums of two powers) for `i` in `0..len`, rising or falling with the
/// column. Eight bytes: a recording holds one per run (a SHA-256 partition has hundreds of
/// thousands).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
#[repr(C)]
pub(crate) struct Run {
    column: u32,
    len: u8,
    /// The smallest power of two in the run.
    pub(crate) low: u8,
    /// The smallest of the second powers in a run of sums of two, else [`NO_SECOND`].
    second: u8,
    /// [`NEGATIVE`] and [`FALLING`] (the powers fall as the column rises).
    flags: u8,
}

// SAFETY: `Run` is `#[repr(C)]` of a `u32` and four `u8`s, eight bytes without padding
// (asserted below), every field an integer: any bytes are a `Run`.
#[allow(unsafe_code)]
unsafe impl Plain for Run {}
const _: () = assert!(std::mem::size_of::<Run>() == 8);

/// `Run::second` of a run of single powers (no power of a field element reaches it).
const NO_SECOND: u8 = u8::MAX;
const NEGATIVE: u8 = 1;
const FALLING: u8 = 2;

impl Run {
    fn new(
        column: u32,
        len: u8,
        (low, second): (u8, Option<u8>),
        negative: bool,
        falling: bool,
    ) -> Run {
        debug_assert!(
            second != Some(NO_SECOND),
            "powers of field elements stay below 255"
        );
        Run {
            column,
            len,
            low,
            second: second.unwrap_or(NO_SECOND),
            flags: if negative { NEGATIVE } else { 0 } | if falling { FALLING } else { 0 },
        }
    }

    /// The smallest of the second powers, in a run of sums of two.
    #[inline]
    pub(crate) fn second(&self) -> Option<u8> {
        (self.second != NO_SECOND).then_some(self.second)
    }

    /// Whether the run's coefficients are negative.
    #[inline]
    pub(crate) fn negative(&self) -> bool {
        self.flags & NEGATIVE != 0
    }

    #[inline]
    fn falling(&self) -> bool {
        self.flags & FALLING != 0
    }

    /// The run's sum divided by `2^low`, when every value it covers is 0 or 1 (`kinds`
    /// holds one byte per value: 0, 1, or more for any other); `None` otherwise.
    #[inline]
    pub(crate) fn bits(&self, kinds: &[u8]) -> Option<u64> {
        let start = self.column as usize;
        let len = usize::from(self.len);
        let bytes = kinds.get(start..start + len)?;
        let (mut packed, mut seen) = (0u64, 0u64);
        let mut add = |i: usize, word: u64| {
            seen |= word;
            packed |= (word.wrapping_mul(PACK_BYTES) >> 56) << (8 * i);
        };
        let mut chunks = bytes.chunks_exact(8);
        for (i, chunk) in (&mut chunks).enumerate() {
            add(
                i,
                u64::from_le_bytes(chunk.try_into().expect("eight bytes")),
            );
        }
        let tail = chunks.remainder();
        if !tail.is_empty() {
            let word = tail
                .iter()
                .rev()
                .fold(0, |word, &b| word << 8 | u64::from(b));
            add(len / 8, word);
        }
        if seen & NOT_A_BIT != 0 {
            return None;
        }
        // A falling run's first column carries the highest power.
        Some(if self.falling() {
            packed.reverse_bits() >> (64 - len)
        } else {
            packed
        })
    }
}

/// The rows of one matrix that hold runs: for each, its runs and its other terms.
#[derive(Default)]
pub(crate) struct PowerRuns {
    /// The rows, ascending.
    rows: Words<u32>,
    /// Row `rows[i]`'s runs are `runs[run_starts[i]..run_starts[i + 1]]`.
    run_starts: Words<u32>,
    runs: Words<Run>,
    /// Row `rows[i]`'s other terms are at the offsets `rest[rest_starts[i]..rest_starts[i +
    /// 1]]` among the row's terms in the matrix (two bytes each, where a copy of the terms
    /// took six).
    rest_starts: Words<u32>,
    rest: Words<u16>,
}

/// The rows of one piece of a matrix's rows that hold runs, with their runs and other
/// terms.
#[derive(Default)]
struct Located {
    rows: Vec<u32>,
    /// Where each row's runs and other terms end, counted from the piece's first.
    run_ends: Vec<u32>,
    runs: Vec<Run>,
    rest_ends: Vec<u32>,
    rest: Vec<u16>,
}

impl Located {
    /// The runs of the rows among `rows` (see [`PowerRuns::find`]).
    fn new(
        matrix: &Matrix,
        rows: Range<usize>,
        candidate: &(impl Fn(usize) -> bool + Sync),
        large: &(impl Fn(u16) -> bool + Sync),
        power: &(impl Fn(u16) -> Option<Powers> + Sync),
    ) -> Self {
        let mut found = Located::default();
        for row in rows.filter(|&row| candidate(row)) {
            // Rows past what `rows` can name keep the spilled path.
            let Ok(name) = u32::try_from(row) else { break };
            let (columns, ids) = matrix.row(row);
            // So do rows of more terms than an offset names (MultiEq's hold hundreds).
            if ids.len() < MIN_RUN || ids.len() > 1 << 16 || !ids.iter().any(|&id| large(id)) {
                continue;
            }
            let (runs, rest) = (found.runs.len(), found.rest.len());
            let mut term = 0;
            while term < columns.len() {
                match run_at(&columns[term..], &ids[term..], power) {
                    Some(run) => {
                        found.runs.push(run);
                        term += usize::from(run.len);
                    }
                    None => {
                        found.rest.push(term as u16);
                        term += 1;
                    }
                }
            }
            if found.runs.len() == runs {
                found.rest.truncate(rest);
                continue;
            }
            found.rows.push(name);
            // Fewer runs and other terms than the matrix has terms, which `u32` counts.
            found.run_ends.push(found.runs.len() as u32);
            found.rest_ends.push(found.rest.len() as u32);
        }
        found
    }
}

/// One row's runs and the offsets of its terms outside them among the row's terms.
pub(crate) struct RunRow<'a> {
    pub(crate) runs: &'a [Run],
    pub(crate) rest: &'a [u16],
}

impl PowerRuns {
    /// The runs of those of `matrix`'s rows `candidate` holds of that hold a
    /// coefficient `large(id)` says is large (the rows the common loop leaves), each run
    /// from [`MIN_RUN`] to [`MAX_RUN`] terms long; `power(id)`: the coefficient's [`Powers`]
    /// when it is a power of two or a sum of two.
    pub(crate) fn find(
        matrix: &Matrix,
        candidate: impl Fn(usize) -> bool + Sync,
        large: impl Fn(u16) -> bool + Sync,
        power: impl Fn(u16) -> Option<Powers> + Sync,
    ) -> PowerRuns {
        Self::by_pieces(matrix, pieces(matrix.rows()), candidate, large, power)
    }

    /// [`PowerRuns::find`], its rows looked at in `pieces` (from [`pieces`] or
    /// [`crate::precompiled::rows::row_sets::pieces_of`]) on the pool's threads.
    fn by_pieces(
        matrix: &Matrix,
        pieces: Vec<Range<usize>>,
        candidate: impl Fn(usize) -> bool + Sync,
        large: impl Fn(u16) -> bool + Sync,
        power: impl Fn(u16) -> Option<Powers> + Sync,
    ) -> PowerRuns {
        let found: Vec<Located> = pieces
            .into_par_iter()
            .map(|rows| Located::new(matrix, rows, &candidate, &large, &power))
            .collect();
        let run_starts = joined_starts(found.iter().map(|piece| &piece.run_ends[..]));
        let rest_starts = joined_starts(found.iter().map(|piece| &piece.rest_ends[..]));
        fn joined<T: Plain>(found: &[Located], part: impl Fn(&Located) -> &Vec<T>) -> Words<T> {
            let joined: Vec<T> = found.iter().flat_map(part).copied().collect();
            joined.into()
        }
        PowerRuns {
            rows: joined(&found, |piece| &piece.rows),
            run_starts: run_starts.into(),
            runs: joined(&found, |piece| &piece.runs),
            rest_starts: rest_starts.into(),
            rest: joined(&found, |piece| &piece.rest),
        }
    }

    /// Row `row`'s runs and other terms, if it holds runs.
    pub(crate) fn row(&self, row: usize) -> Option<RunRow<'_>> {
        let i = self.rows.binary_search(&u32::try_from(row).ok()?).ok()?;
        let runs = self.run_starts[i] as usize..self.run_starts[i + 1] as usize;
        let rest = self.rest_starts[i] as usize..self.rest_starts[i + 1] as usize;
        Some(RunRow {
            runs: &self.runs[runs],
            rest: &self.rest[rest],
        })
    }

    /// Bytes held.
    pub(crate) fn bytes(&self) -> usize {
        4 * (self.rows.len() + self.run_starts.len() + self.rest_starts.len())
            + std::mem::size_of::<Run>() * self.runs.len()
            + 2 * self.rest.len()
    }
}

impl Sections for PowerRuns {
    fn write_sections(&self, out: &mut SectionWriter<'_>) -> io::Result<()> {
        out.words(&self.rows)?;
        out.words(&self.run_starts)?;
        out.words(&self.runs)?;
        out.words(&self.rest_starts)?;
        out.words(&self.rest)
    }

    fn read_sections<S: Source>(input: &mut SectionReader<S>) -> Result<Self, Error> {
        let rows = input.words()?;
        Ok(PowerRuns {
            rows,
            run_starts: input.words()?,
            runs: input.words()?,
            rest_starts: input.words()?,
            rest: input.words()?,
        })
    }
}

/// The run that the first terms of `columns` and `ids` start, if at least [`MIN_RUN`]
/// long (at most [`MAX_RUN`]).
fn run_at(columns: &[u32], ids: &[u16], power: impl Fn(u16) -> Option<Powers>) -> Option<Run> {
    // Powers widened, so that stepping past 0 or 255 just stops matching.
    let widen = |(negative, k, j): Powers| (negative, i16::from(k), j.map(i16::from));
    let (negative, first, second) = widen(power(ids[0])?);
    let (_, next, _) = widen(power(*ids.get(1)?)?);
    let step = next - first;
    if step.abs() != 1 {
        return None;
    }
    let limit = columns.len().min(MAX_RUN);
    let mut len = 1;
    while len < limit && columns[len] == columns[0].wrapping_add(len as u32) {
        let moved = step * len as i16;
        let expected = (negative, first + moved, second.map(|j| j + moved));
        if power(ids[len]).map(widen) != Some(expected) {
            break;
        }
        len += 1;
    }
    let lowest = |k: i16| (if step < 0 { k - (len as i16 - 1) } else { k }) as u8;
    (len >= MIN_RUN).then(|| {
        Run::new(
            columns[0],
            len as u8,
            (lowest(first), second.map(lowest)),
            negative,
            step < 0,
        )
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::precompiled::rows::row_sets::pieces_of;

    /// Coefficient id `k` is `2^k` for `k < 100`, id `100 + k` is `-2^k`, id `300 + k` is
    /// `2^k + 2^(k + 35)`; id 200 is 3.
    fn power(id: u16) -> Option<Powers> {
        match id {
            0..100 => Some((false, id as u8, None)),
            100..200 => Some((true, (id - 100) as u8, None)),
            300..400 => Some((false, (id - 300) as u8, Some((id - 265) as u8))),
            _ => None,
        }
    }

    #[test]
    fn runs_are_found_rising_falling_and_split_at_their_longest() {
        // Row 0: a rising run of 72 (split 64 + 8), a term of 3, a falling negative run of
        // 10 from 2^20, a falling run of 9 sums of two powers from 2^40 + 2^75, and a run
        // broken by a gap in its columns (5 + 5 terms). Row 1: a run of 7 only (too short).
        // Row 2: no large coefficient.
        let mut row0: Vec<(u32, u16)> = (0..72).map(|j| (100 + j, j as u16)).collect();
        row0.push((5, 200));
        row0.extend((0..10).map(|j| (300 + j, 100 + 20 - j as u16)));
        row0.extend((0..9).map(|j| (400 + j, 300 + 40 - j as u16)));
        row0.extend((0..10).map(|j| (500 + j + j / 5, j as u16)));
        let row1: Vec<(u32, u16)> = (0..7).map(|j| (10 + j, j as u16)).collect();
        let row2: Vec<(u32, u16)> = (0..12).map(|j| (10 + j, j as u16)).collect();
        let matrix = Matrix::from_rows([row0, row1, row2]);
        let runs = PowerRuns::find(&matrix, |row| row < 3, |id| id != 5, power);
        let row = runs.row(0).expect("row 0 holds runs");
        let run = Run::new;
        assert_eq!(
            row.runs,
            [
                run(100, 64, (0, None), false, false),
                run(164, 8, (64, None), false, false),
                run(300, 10, (11, None), true, true),
                run(400, 9, (32, Some(67)), false, true),
            ]
        );
        // The rest: the term of 3 after the first two runs, and the gapped run's ten.
        let (columns, ids) = matrix.row(0);
        let rest: Vec<(u32, u16)> = row
            .rest
            .iter()
            .map(|&at| (columns[usize::from(at)], ids[usize::from(at)]))
            .collect();
        let gapped = (0..10).map(|j| (500 + j + j / 5, j as u16));
        assert_eq!(
            rest,
            std::iter::once((5, 200)).chain(gapped).collect::<Vec<_>>()
        );
        assert_eq!(std::mem::size_of::<Run>(), 8);
        assert!(runs.row(1).is_none(), "seven terms are no run");
        let only_small = PowerRuns::find(&matrix, |row| row < 3, |id| id == 200, power);
        assert!(
            only_small.row(2).is_none(),
            "a row without a large coefficient"
        );
    }

    /// However the rows are cut, the same rows hold the same runs and other terms, and
    /// the rows left out stay out.
    #[test]
    fn runs_found_by_pieces_are_those_of_the_whole_matrix() {
        // Row r: a rising run of 8 + r % 30 terms, then a term of 3 every third row; every
        // fifth row a run of 7 only (too short), every seventh no large coefficient.
        let rows = 700;
        let matrix = Matrix::from_rows((0..rows as u32).map(|r| {
            let len = if r % 5 == 0 { 7 } else { 8 + r % 30 };
            let id = |j: u32| if r % 7 == 0 { 200 } else { (j + r % 20) as u16 };
            let mut row: Vec<(u32, u16)> = (0..len).map(|j| (10 * r + j, id(j))).collect();
            if r % 3 == 0 {
                row.push((5, 200));
            }
            row
        }));
        let candidate = |row: usize| row % 11 != 4;
        let whole = PowerRuns::by_pieces(
            &matrix,
            pieces_of(rows, rows.next_multiple_of(64)),
            candidate,
            |id| id != 200,
            power,
        );
        let held = (0..rows).filter(|&row| whole.row(row).is_some()).count();
        assert_eq!(
            held,
            (0..rows)
                .filter(|r| r % 5 != 0 && r % 7 != 0 && candidate(*r))
                .count()
        );
        for len in [64, 192] {
            let cut = PowerRuns::by_pieces(
                &matrix,
                pieces_of(rows, len),
                candidate,
                |id| id != 200,
                power,
            );
            for row in 0..rows {
                let both = [&whole, &cut]
                    .map(|runs| runs.row(row).map(|r| (r.runs.to_vec(), r.rest.to_vec())));
                assert_eq!(both[0], both[1], "row {row}, pieces of {len}");
            }
        }
    }

    #[test]
    fn a_run_reads_its_kinds_as_bits() {
        let kinds: Vec<u8> = (0..80).map(|i| ((i * 7 + i / 3) % 2) as u8).collect();
        let expected = |start: usize, len: usize, falling: bool| -> u64 {
            (0..len)
                .map(|j| {
                    let bit = if falling { len - 1 - j } else { j };
                    u64::from(kinds[start + j]) << bit
                })
                .sum()
        };
        for len in [8, 9, 15, 16, 31, 32, 33, 56, 63, 64] {
            for falling in [false, true] {
                let run = Run::new(3, len as u8, (0, None), false, falling);
                assert_eq!(run.bits(&kinds), Some(expected(3, len, falling)));
                let mut other = kinds.clone();
                other[3 + len - 1] = 2;
                assert_eq!(run.bits(&other), None, "a value other than 0 and 1");
                assert_eq!(run.bits(&kinds[..3 + len - 1]), None, "past the map");
            }
        }
    }
}
