//! Stretches of constraints whose values are field elements, evaluated a constraint at a
//! time in the field (A, B and C together) instead of by the integer path's passes.
//!
//! Poseidon lays out nearly nothing else: an s-box is `x·x = x²`, `x²·x² = x⁴` and
//! `x⁴·(x + k) = x⁵ − k'`, each side one variable with coefficient 1 beside at most a
//! constant on the one, and every MDS combination is a row that states a value
//! (`claims.rs`). Their values are almost never 0 or 1, so the integer path, built for
//! SHA-256's bits, gives up on each of their terms and hands it to the field one by one,
//! after a pass per matrix and a lookup per path; here each side is one or two loads and
//! at most one addition, and the row's check its one product.
//!
//! Which constraints: a run of rows whose three sides are each such a value (or an A that
//! states one, with `B = 1`), trimmed to start and end at a row holding a general
//! coefficient (a round key, an MDS weight), so SHA-256's bit products (`a·b = c`, the same
//! shape over bits) stay on the integer path unless Poseidon's rows surround them. Any row
//! evaluates to the same field element on either path: which path a row takes changes only
//! the time, never the value.

use std::io;

use rayon::prelude::*;

use crate::error::Error;
use crate::precompiled::rows::matrix::Matrix;
use crate::precompiled::rows::row_sets::pieces;
use crate::precompiled::storage::sections::{SectionReader, SectionWriter, Sections, Source};
use crate::precompiled::storage::words::Words;

/// The stretches of field rows of a recording: half-open ranges of rows, sorted and
/// disjoint.
#[derive(Default)]
pub(crate) struct FieldRows {
    ranges: Words<[u32; 2]>,
}

/// What one side of a row is, for [`FieldRows::new`].
#[derive(Clone, Copy, PartialEq, Eq)]
enum RowSide {
    /// Not a value with coefficient 1 beside a constant.
    Other,
    /// Such a value, or a constant alone, or nothing; `general`: the constant is a general
    /// coefficient.
    Value { general: bool },
}

/// The id of coefficient 1: the dictionary starts with one (invariant 3 of the matrices).
pub(crate) const UNIT: u16 = 0;

/// What side `row` of `matrix` is (the constant one at position `one`; `general` holds of
/// the ids of general coefficients).
fn side(matrix: &Matrix, row: usize, one: u32, general: &impl Fn(u16) -> bool) -> RowSide {
    let (columns, ids) = matrix.row(row);
    let (mut variables, mut constants, mut any_general) = (0, 0, false);
    for (&column, &id) in columns.iter().zip(ids) {
        if column == one {
            constants += 1;
            any_general |= general(id);
        } else if id == UNIT {
            variables += 1;
        } else {
            return RowSide::Other;
        }
    }
    if variables <= 1 && constants <= 1 {
        RowSide::Value {
            general: any_general,
        }
    } else {
        RowSide::Other
    }
}

/// Rows `first..end` of a run of field rows: from its first row holding a general
/// coefficient to its last.
type Anchors = (usize, usize);

/// One run's anchors after `before`'s, which come first.
fn joined(before: Option<Anchors>, after: Option<Anchors>) -> Option<Anchors> {
    match (before, after) {
        (Some((first, _)), Some((_, end))) => Some((first, end)),
        (anchors, None) | (None, anchors) => anchors,
    }
}

/// Ends a run: its stretch, if it has anchors, pushed to `ranges`.
fn close(ranges: &mut Vec<[u32; 2]>, anchors: Option<Anchors>) {
    ranges.extend(anchors.map(|(first, end)| [first as u32, end as u32]));
}

/// What one piece of rows holds of the stretches.
struct PieceStretches {
    /// The anchors, within the piece, of the run the piece starts in, when a row of the
    /// piece that is no field row ends that run; else `None`.
    head: Option<Anchors>,
    /// Whether a row of the piece is no field row: if not, the whole piece continues the
    /// run before it, and `tail` holds the piece's anchors.
    broken: bool,
    /// The stretches that start and end inside the piece.
    inside: Vec<[u32; 2]>,
    /// The anchors of the run open at the piece's end.
    tail: Option<Anchors>,
}

/// The stretches of a piece of rows, each row's kind from `kind` (`None`: no field row;
/// `Some(anchor)`: one, holding a general coefficient or not).
fn piece_stretches(
    rows: std::ops::Range<usize>,
    kind: impl Fn(usize) -> Option<bool>,
) -> PieceStretches {
    let mut piece = PieceStretches {
        head: None,
        broken: false,
        inside: Vec::new(),
        tail: None,
    };
    for row in rows {
        match kind(row) {
            Some(true) => piece.tail = joined(piece.tail, Some((row, row + 1))),
            Some(false) => {}
            None if piece.broken => close(&mut piece.inside, piece.tail.take()),
            None => {
                piece.head = piece.tail.take();
                piece.broken = true;
            }
        }
    }
    piece
}

/// The stretches of the rows of consecutive `pieces`, found by piece on the pool's
/// threads and joined in row order: a run that crosses pieces is one stretch.
fn stretches(
    pieces: Vec<std::ops::Range<usize>>,
    kind: impl Fn(usize) -> Option<bool> + Sync,
) -> Vec<[u32; 2]> {
    let found: Vec<PieceStretches> = pieces
        .into_par_iter()
        .map(|piece| piece_stretches(piece, &kind))
        .collect();
    let mut ranges = Vec::new();
    // The anchors of the run open where the pieces so far end.
    let mut open = None;
    for piece in found {
        if piece.broken {
            close(&mut ranges, joined(open, piece.head));
            ranges.extend(piece.inside);
            open = piece.tail;
        } else {
            open = joined(open, piece.tail);
        }
    }
    close(&mut ranges, open);
    ranges
}

impl FieldRows {
    /// The stretches of `[a, b, c]` (constant one at position `one`; `general` holds of
    /// general coefficient ids; `claimed` of the rows of A that state a value).
    pub(crate) fn new(
        [a, b, c]: &[Matrix; 3],
        one: u32,
        general: impl Fn(u16) -> bool + Sync,
        claimed: impl Fn(usize) -> bool + Sync,
    ) -> Self {
        // What each row is, found by pieces of rows on the pool's threads (reading its
        // three sides is nearly all the work, and a first member's recording waits on it),
        // each piece's stretches then joined in row order.
        let kind = |row: usize| {
            let [sa, sb, sc] = [a, b, c].map(|matrix| side(matrix, row, one, &general));
            let value = |s: RowSide| matches!(s, RowSide::Value { .. });
            let general = |s: RowSide| matches!(s, RowSide::Value { general: true });
            if claimed(row) && value(sb) && value(sc) {
                Some(true)
            } else if value(sa) && value(sb) && value(sc) {
                Some(general(sa) || general(sb) || general(sc))
            } else {
                None
            }
        };
        let ranges = stretches(pieces(a.rows()), kind);
        FieldRows {
            ranges: ranges.into(),
        }
    }

    /// Calls `visit(start, count, field)` for the consecutive pieces of rows
    /// `first..first + count`, in order: `field` for the pieces inside a stretch.
    #[inline]
    pub(crate) fn pieces(
        &self,
        first: usize,
        count: usize,
        mut visit: impl FnMut(usize, usize, bool),
    ) {
        let end = first + count;
        let mut at = first;
        let mut next = self
            .ranges
            .partition_point(|&[_, stop]| stop as usize <= at);
        while at < end {
            match self.ranges.get(next) {
                Some(&[start, stop]) if (start as usize) < end => {
                    let (start, stop) = (start as usize, stop as usize);
                    if start > at {
                        visit(at, start - at, false);
                        at = start;
                    }
                    let stop = stop.min(end);
                    visit(at, stop - at, true);
                    at = stop;
                    next += 1;
                }
                _ => {
                    visit(at, end - at, false);
                    at = end;
                }
            }
        }
    }

    /// Bytes held.
    pub(crate) fn bytes(&self) -> usize {
        8 * self.ranges.len()
    }
}

impl Sections for FieldRows {
    fn write_sections(&self, out: &mut SectionWriter<'_>) -> io::Result<()> {
        out.words(&self.ranges)
    }

    fn read_sections<S: Source>(input: &mut SectionReader<S>) -> Result<Self, Error> {
        Ok(FieldRows {
            ranges: input.words()?,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::precompiled::rows::row_sets::pieces_of;

    /// A matrix of the given rows of (column, coefficient id) terms.
    fn matrix(rows: &[&[(u32, u16)]]) -> Matrix {
        Matrix::from_rows(rows.iter().copied())
    }

    #[test]
    fn stretches_are_runs_of_field_rows_trimmed_to_general_coefficients() {
        // Ids: 0 is 1, 1 is -1, 2 a general coefficient. The one at position 9.
        let one = 9;
        let general = |id: u16| id == 2;
        let unit = |x: u32| -> &'static [(u32, u16)] {
            match x {
                0 => &[(0, 0)],
                1 => &[(1, 0)],
                _ => &[(2, 0)],
            }
        };
        let keyed: &[(u32, u16)] = &[(0, 0), (one, 2)];
        let minus: &[(u32, u16)] = &[(0, 1)];
        let wide: &[(u32, u16)] = &[(0, 2), (1, 2)];
        let b_one: &[(u32, u16)] = &[(one, 0)];
        // Rows: 0 a bit product (unit, leading: trimmed), 1 keyed, 2 unit, 3 claimed, 4 unit
        // (trailing: trimmed), 5 not a field row (-1), 6 unit (trimmed), 7 keyed, 8 unit
        // (trimmed), 9 not a field row, 10 keyed on its own.
        let a = matrix(&[
            unit(0),
            keyed,
            unit(1),
            wide,
            unit(1),
            minus,
            unit(0),
            keyed,
            unit(2),
            minus,
            keyed,
        ]);
        let b = matrix(&[
            unit(1),
            unit(0),
            unit(1),
            b_one,
            unit(1),
            unit(1),
            unit(1),
            unit(1),
            unit(0),
            unit(0),
            unit(0),
        ]);
        let c = matrix(&[unit(2); 11]);
        let rows = FieldRows::new(&[a, b, c], one, general, |row| row == 3);
        assert_eq!(*rows.ranges, [[1, 4], [7, 8], [10, 11]]);
        let mut seen = Vec::new();
        rows.pieces(0, 11, |start, count, field| {
            seen.push((start, count, field))
        });
        assert_eq!(
            seen,
            [
                (0, 1, false),
                (1, 3, true),
                (4, 3, false),
                (7, 1, true),
                (8, 2, false),
                (10, 1, true)
            ]
        );
        // Pieces of a window that starts and ends inside stretches.
        seen.clear();
        rows.pieces(2, 6, |start, count, field| seen.push((start, count, field)));
        assert_eq!(seen, [(2, 2, true), (4, 3, false), (7, 1, true)]);
        // No stretch: one piece.
        seen.clear();
        FieldRows::default().pieces(4, 3, |start, count, field| seen.push((start, count, field)));
        assert_eq!(seen, [(4, 3, false)]);
    }

    /// The stretches of rows of the given kinds, by their definition: each maximal run of
    /// field rows, from its first row holding a general coefficient to its last.
    fn defined(kinds: &[Option<bool>]) -> Vec<[u32; 2]> {
        let mut ranges = Vec::new();
        let mut run_start = 0;
        for (row, kind) in kinds.iter().chain([&None]).enumerate() {
            if kind.is_none() {
                let run = &kinds[run_start..row];
                let first = run.iter().position(|&kind| kind == Some(true));
                let last = run.iter().rposition(|&kind| kind == Some(true));
                if let (Some(first), Some(last)) = (first, last) {
                    ranges.push([(run_start + first) as u32, (run_start + last + 1) as u32]);
                }
                run_start = row + 1;
            }
        }
        ranges
    }

    #[test]
    fn stretches_found_by_pieces_are_those_of_the_rows_in_one_run() {
        // Runs of every length up to past two pieces of 64, with and without anchors,
        // starting and ending anywhere, from a fixed generator.
        let mut state = 0x9e37_79b9_7f4a_7c15u64;
        let mut next = |bound: u64| {
            state ^= state << 13;
            state ^= state >> 7;
            state ^= state << 17;
            state % bound
        };
        let mut kinds = Vec::new();
        while kinds.len() < 8_000 {
            let run = next(150);
            let anchors = next(4);
            for _ in 0..run {
                kinds.push(Some(anchors > 0 && next(24 / anchors) == 0));
            }
            for _ in 0..next(3) + 1 {
                kinds.push(None);
            }
        }
        // Pieces of field rows alone, without anchors and with.
        kinds.splice(640..640, [Some(false); 200]);
        kinds.splice(1280..1280, [Some(true); 150]);
        let expected = defined(&kinds);
        assert!(expected.len() > 50, "{} stretches", expected.len());
        for len in [64, 128, 192, 1024, kinds.len().next_multiple_of(64)] {
            let found = stretches(pieces_of(kinds.len(), len), |row| kinds[row]);
            assert_eq!(found, expected, "pieces of {len} rows");
        }
    }
}
