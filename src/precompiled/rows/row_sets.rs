//! Sets of a matrix's rows, one bit per row: which rows take a path, and for the paths
//! that keep data per row, each member's index among the members; and the pieces of rows
//! the derivations that find those rows run by on the pool, joined back in row order.

use std::io;
use std::ops::Range;

use rayon::prelude::*;

use crate::error::Error;
use crate::precompiled::storage::sections::{SectionReader, SectionWriter, Sections, Source};
use crate::precompiled::storage::words::Words;

/// A set of rows, one bit each.
#[derive(Default)]
pub(crate) struct RowSet {
    words: Words<u64>,
}

/// Rows of the smallest piece [`pieces`] cuts.
const PIECE_MIN: usize = 1 << 16;

/// `0..rows` in consecutive pieces for the pool's threads, four per thread or more (a
/// derivation's rows vary in cost, and the threads take pieces as they finish), each but
/// the last a whole number of a [`RowSet`]'s words: derivations run by rows find their
/// pieces' members at once and put them together with [`RowSet::joined`].
pub(crate) fn pieces(rows: usize) -> Vec<Range<usize>> {
    let len = rows
        .div_ceil(4 * rayon::current_num_threads())
        .max(PIECE_MIN)
        .next_multiple_of(64);
    pieces_of(rows, len)
}

/// `0..rows` in pieces of `len` rows (a multiple of 64), the last shorter.
pub(crate) fn pieces_of(rows: usize, len: usize) -> Vec<Range<usize>> {
    debug_assert!(len > 0 && len.is_multiple_of(64));
    (0..rows)
        .step_by(len)
        .map(|start| start..rows.min(start + len))
        .collect()
}

/// Where each row's data starts, from 0, for rows found in consecutive pieces: `ends`
/// holds, per piece, where each of its rows' data ends counted from the piece's first.
pub(crate) fn joined_starts<'a>(ends: impl IntoIterator<Item = &'a [u32]>) -> Vec<u32> {
    let mut starts = vec![0];
    for ends in ends {
        let before = *starts.last().expect("starts from 0");
        starts.extend(ends.iter().map(|end| before + end));
    }
    starts
}

impl RowSet {
    /// The rows of `0..rows` that `pick` holds of, looked at on the pool's threads.
    pub(crate) fn picked(rows: usize, pick: impl Fn(usize) -> bool + Sync) -> Self {
        let sets: Vec<RowSet> = pieces(rows)
            .into_par_iter()
            .map(|piece| RowSet::picked_in(piece, &pick))
            .collect();
        RowSet::joined(sets)
    }

    /// The rows of `piece` that `pick` holds of, from its first: a piece's set for
    /// [`RowSet::joined`].
    fn picked_in(piece: Range<usize>, pick: impl Fn(usize) -> bool) -> Self {
        let mut set = RowSet::with_rows(piece.len());
        for row in piece.clone().filter(|&row| pick(row)) {
            set.insert(row - piece.start);
        }
        set
    }

    /// One set of the sets of consecutive pieces from [`pieces`] or [`pieces_of`], each
    /// holding its rows from its first.
    pub(crate) fn joined(sets: impl IntoIterator<Item = RowSet>) -> Self {
        let mut words = Vec::new();
        for set in sets {
            words.extend_from_slice(&set.words);
        }
        RowSet {
            words: words.into(),
        }
    }

    /// The empty set of a matrix of `rows` rows.
    pub(crate) fn with_rows(rows: usize) -> Self {
        RowSet {
            words: vec![0; rows.div_ceil(64)].into(),
        }
    }

    /// Adds `row`.
    pub(crate) fn insert(&mut self, row: usize) {
        self.words
            .update(|words| words[row / 64] |= 1 << (row % 64));
    }

    /// Whether no row is in the set.
    pub(crate) fn is_empty(&self) -> bool {
        self.words.iter().all(|&word| word == 0)
    }

    /// Whether `row` is in the set.
    #[inline]
    pub(crate) fn holds(&self, row: usize) -> bool {
        self.words
            .get(row / 64)
            .is_some_and(|word| word >> (row % 64) & 1 == 1)
    }

    /// The set with each member's index among the members.
    pub(crate) fn ranked(self) -> RankedRows {
        let mut seen = 0u32;
        let ranks = self
            .words
            .iter()
            .map(|word| {
                let before = seen;
                seen += word.count_ones();
                before
            })
            .collect::<Vec<u32>>()
            .into();
        RankedRows { set: self, ranks }
    }

    /// Bytes held.
    pub(crate) fn bytes(&self) -> usize {
        8 * self.words.len()
    }
}

/// A [`RowSet`] whose members have indices: 0 for the first member, and so on.
#[derive(Default)]
pub(crate) struct RankedRows {
    set: RowSet,
    /// Members before each word of the set.
    ranks: Words<u32>,
}

impl RankedRows {
    /// The index of `row` among the members, if it is one.
    #[inline]
    pub(crate) fn index(&self, row: usize) -> Option<usize> {
        let word = *self.set.words.get(row / 64)?;
        let bit = 1u64 << (row % 64);
        (word & bit != 0)
            .then(|| self.ranks[row / 64] as usize + (word & (bit - 1)).count_ones() as usize)
    }

    /// Bytes held.
    pub(crate) fn bytes(&self) -> usize {
        self.set.bytes() + 4 * self.ranks.len()
    }
}

impl Sections for RowSet {
    fn write_sections(&self, out: &mut SectionWriter<'_>) -> io::Result<()> {
        out.words(&self.words)
    }

    fn read_sections<S: Source>(input: &mut SectionReader<S>) -> Result<Self, Error> {
        Ok(RowSet {
            words: input.words()?,
        })
    }
}

impl Sections for RankedRows {
    fn write_sections(&self, out: &mut SectionWriter<'_>) -> io::Result<()> {
        self.set.write_sections(out)?;
        out.words(&self.ranks)
    }

    fn read_sections<S: Source>(input: &mut SectionReader<S>) -> Result<Self, Error> {
        let set = RowSet::read_sections(input)?;
        let ranks = input.exactly(set.words.len(), "row set ranks")?;
        Ok(RankedRows { set, ranks })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn members_are_indexed_in_row_order_across_words() {
        let mut set = RowSet::with_rows(200);
        assert!(set.is_empty());
        for row in [3, 63, 64, 130, 199] {
            set.insert(row);
        }
        assert!(!set.is_empty() && set.holds(64) && !set.holds(65) && !set.holds(500));
        let ranked = set.ranked();
        let indices: Vec<Option<usize>> = [3, 4, 63, 64, 130, 199, 500]
            .map(|row| ranked.index(row))
            .to_vec();
        assert_eq!(
            indices,
            [Some(0), None, Some(1), Some(2), Some(3), Some(4), None]
        );
        assert_eq!(ranked.bytes(), 4 * 12);
    }

    #[test]
    fn pieces_cover_the_rows_in_whole_words_and_join_to_one_set() {
        let rows = 1000;
        let cut = pieces_of(rows, 192);
        assert_eq!(cut.first(), Some(&(0..192)));
        assert_eq!(cut.last(), Some(&(960..1000)));
        assert!(cut.windows(2).all(|w| w[0].end == w[1].start));
        let member = |row: usize| row % 7 == 3 || row == 191 || row == 192 || row == 999;
        let joined = RowSet::joined(
            cut.into_iter()
                .map(|piece| RowSet::picked_in(piece, member)),
        );
        let picked = RowSet::picked(rows, member);
        for set in [&joined, &picked] {
            assert_eq!(set.words.len(), rows.div_ceil(64));
            assert!((0..rows + 64).all(|row| set.holds(row) == (row < rows && member(row))));
        }
        assert_eq!(pieces(0), []);
        assert_eq!((pieces(10).len(), pieces(10).first()), (1, Some(&(0..10))));
    }
}
