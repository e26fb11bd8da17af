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

use super::matrix::Matrix;
use super::sections::{SectionReader, SectionWriter, Sections, Source};
use super::words::Words;
use crate::Error;

/// The stretches of field rows of a recording: half-open ranges of rows, sorted and
/// disjoint.
#[derive(Default)]
pub(crate) struct FieldRows {
    ranges: Words<[u32; 2]>,
}

/// What one side of a row is, for [`FieldRows::new`].
#[derive(Clone, Copy, PartialEq, Eq)]
enum Side {
    /// Not a value with coefficient 1 beside a constant.
    Other,
    /// Such a value, or a constant alone, or nothing; `general`: the constant is a general
    /// coefficient.
    Value { general: bool },
}

/// The id of coefficient 1: the dictionary starts with one (invariant 3 of the matrices).
pub(super) const UNIT: u16 = 0;

/// What side `row` of `matrix` is (the constant one at position `one`; `general` holds of
/// the ids of general coefficients).
fn side(matrix: &Matrix, row: usize, one: u32, general: &impl Fn(u16) -> bool) -> Side {
    let (columns, ids) = matrix.row(row);
    let (mut variables, mut constants, mut any_general) = (0, 0, false);
    for (&column, &id) in columns.iter().zip(ids) {
        if column == one {
            constants += 1;
            any_general |= general(id);
        } else if id == UNIT {
            variables += 1;
        } else {
            return Side::Other;
        }
    }
    if variables <= 1 && constants <= 1 {
        Side::Value {
            general: any_general,
        }
    } else {
        Side::Other
    }
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
        // What each row is (`None`: no field row; `Some(anchor)`: one, holding a general
        // coefficient or not), on the pool's threads: reading its three sides is nearly all
        // the work, and a first member's recording waits on it. A byte per row.
        let kinds: Vec<Option<bool>> = (0..a.rows())
            .into_par_iter()
            .map(|row| {
                let [sa, sb, sc] = [a, b, c].map(|matrix| side(matrix, row, one, &general));
                let value = |s: Side| matches!(s, Side::Value { .. });
                let general = |s: Side| matches!(s, Side::Value { general: true });
                if claimed(row) && value(sb) && value(sc) {
                    Some(true)
                } else if value(sa) && value(sb) && value(sc) {
                    Some(general(sa) || general(sb) || general(sc))
                } else {
                    None
                }
            })
            .collect();
        let mut ranges = Vec::new();
        // The run being read: its rows from the first to the last holding a general
        // coefficient.
        let mut anchored: Option<(usize, usize)> = None;
        // A row past the last ends the last run.
        for (row, &kind) in kinds.iter().chain([&None]).enumerate() {
            match kind {
                Some(anchor) => {
                    if anchor {
                        let first = anchored.map_or(row, |(first, _)| first);
                        anchored = Some((first, row + 1));
                    }
                }
                None => {
                    if let Some((first, end)) = anchored.take() {
                        ranges.push([first as u32, end as u32]);
                    }
                }
            }
        }
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
}
