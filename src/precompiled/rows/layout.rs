//! What evaluation derives from each matrix once, when a recording is built or loaded: the
//! class of every block of rows (which loop sums it), the runs of powers of two in
//! MultiEq's rows, and which rows hold general coefficients (summed in the field, or as wide
//! integers when the coefficients sit on variables).

use std::io;

use rayon::prelude::*;

use crate::error::Error;
use crate::precompiled::rows::coefficients::{CoefficientTable, SMALL_MIN};
use crate::precompiled::rows::matrix::Matrix;
use crate::precompiled::rows::row_sets::RowSet;
use crate::precompiled::rows::runs::PowerRuns;
use crate::precompiled::rows::wide::WideRows;
use crate::precompiled::storage::sections::{SectionReader, SectionWriter, Sections, Source};
use crate::precompiled::storage::words::Words;

/// Rows evaluated per pass over one matrix.
pub(crate) const BLOCK: usize = 256;

/// What the rows of a block of [`BLOCK`] rows of one matrix are made of, which picks the
/// loop that sums them.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum BlockClass {
    /// Every row is one term of coefficient 1: its sum is the value's kind.
    Unit,
    /// Every coefficient is small: no term needs checking for a large one.
    Small,
    /// Some coefficient is large.
    Mixed,
}

/// What evaluation derives from a matrix once, when a recording is built or loaded.
pub(crate) struct MatrixLayout {
    /// The class of every block of [`BLOCK`] rows, from row 0 (as [`BlockClass::code`]).
    classes: Words<u8>,
    /// The runs of powers of two in the rows the common loop leaves.
    pub(crate) runs: PowerRuns,
    /// The rows holding a general coefficient and no large power of two, summed in the
    /// field.
    pub(crate) general: RowSet,
    /// Those of them with a general coefficient on a variable, summed as wide integers.
    pub(crate) wide: WideRows,
}

impl MatrixLayout {
    /// The layout of `matrix`, whose coefficient ids index `table` and whose constant one
    /// is at position `one` (the aux count); rows `claimed` holds of are evaluated as the
    /// value they state (see `claims.rs`), so they are not laid out as wide rows.
    pub(crate) fn new<Scalar: Sync>(
        matrix: &Matrix,
        table: &CoefficientTable<Scalar>,
        one: u32,
        claimed: &(dyn Fn(usize) -> bool + Sync),
    ) -> Self {
        // A row that also packs bits by powers of two (SHA-256's MultiEq adding a round
        // constant on the one) stays on the integer path: its bits cost a table lookup each
        // there, and the constant one more 320-bit addition. Rows of field elements with a
        // general constant (Poseidon's round keys) are cheaper summed in the field at once.
        let general = |ids: &[u16]| {
            ids.iter().any(|&id| table.is_general(id))
                && !ids
                    .iter()
                    .any(|&id| table.is_large(id) && !table.is_general(id))
        };
        // The derivations that do not read each other at once: a first member's recording
        // waits on the longest of them.
        let ((classes, runs), (general, wide)) = rayon::join(
            || {
                let classes = block_classes(matrix, table);
                let runs = match table.integers {
                    // Only a block with a large coefficient can hold a row the common loop
                    // leaves for one.
                    Some(_) => PowerRuns::find(
                        matrix,
                        |row| classes[row / BLOCK] == BlockClass::Mixed,
                        |id| table.is_large(id),
                        |id| table.powers(id),
                    ),
                    None => PowerRuns::default(),
                };
                (classes, runs)
            },
            || match table.integers {
                Some(_) => rayon::join(
                    || general_rows(matrix, general),
                    || WideRows::new(matrix, one, |id| table.is_general(id), claimed),
                ),
                None => Default::default(),
            },
        );
        MatrixLayout {
            classes: classes
                .iter()
                .map(|class| class.code())
                .collect::<Vec<u8>>()
                .into(),
            runs,
            general,
            wide,
        }
    }

    /// The class of block `block` (of [`BLOCK`] rows from row 0); past the last block,
    /// `Mixed`, the loop that assumes nothing.
    #[inline]
    pub(crate) fn class(&self, block: usize) -> BlockClass {
        self.classes
            .get(block)
            .map_or(BlockClass::Mixed, |&code| BlockClass::from_code(code))
    }

    /// Bytes held.
    pub(crate) fn bytes(&self) -> usize {
        self.classes.len() + self.runs.bytes() + self.general.bytes() + self.wide.bytes()
    }
}

impl BlockClass {
    /// The class as a byte of a recording file.
    fn code(self) -> u8 {
        match self {
            BlockClass::Unit => 0,
            BlockClass::Small => 1,
            BlockClass::Mixed => 2,
        }
    }

    /// The class a byte of a recording file names; any byte but 0 and 1 is `Mixed`, the
    /// loop that makes no assumption about the coefficients.
    fn from_code(code: u8) -> Self {
        match code {
            0 => BlockClass::Unit,
            1 => BlockClass::Small,
            _ => BlockClass::Mixed,
        }
    }
}

impl Sections for MatrixLayout {
    fn write_sections(&self, out: &mut SectionWriter<'_>) -> io::Result<()> {
        out.words(&self.classes)?;
        self.runs.write_sections(out)?;
        self.general.write_sections(out)?;
        self.wide.write_sections(out)
    }

    fn read_sections<S: Source>(input: &mut SectionReader<S>) -> Result<Self, Error> {
        Ok(MatrixLayout {
            classes: input.words()?,
            runs: PowerRuns::read_sections(input)?,
            general: RowSet::read_sections(input)?,
            wide: WideRows::read_sections(input)?,
        })
    }
}

/// The rows of `matrix` for which `pick` holds of their coefficient ids (no bitmap when
/// there are none).
fn general_rows(matrix: &Matrix, pick: impl Fn(&[u16]) -> bool + Sync) -> RowSet {
    let set = RowSet::picked(matrix.rows(), |row| pick(matrix.row(row).1));
    if set.is_empty() {
        RowSet::default()
    } else {
        set
    }
}

/// The class of every block of [`BLOCK`] rows of `matrix`, from row 0.
fn block_classes<Scalar: Sync>(
    matrix: &Matrix,
    table: &CoefficientTable<Scalar>,
) -> Vec<BlockClass> {
    let starts = &matrix.row_starts;
    let coefficient = |term: usize| table.small[usize::from(matrix.coeff_ids[term])];
    (0..matrix.rows().div_ceil(BLOCK))
        .into_par_iter()
        .map(|block| {
            let first = block * BLOCK;
            let last = matrix.rows().min(first + BLOCK);
            let unit = (first..last).all(|row| {
                let (start, end) = (starts[row] as usize, starts[row + 1] as usize);
                end == start + 1 && coefficient(start) == 1
            });
            let terms = starts[first] as usize..starts[last] as usize;
            if unit {
                BlockClass::Unit
            } else if terms.into_iter().all(|term| coefficient(term) > SMALL_MIN) {
                BlockClass::Small
            } else {
                BlockClass::Mixed
            }
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use blstrs::Scalar as Fr;
    use ff::Field;

    /// Which rows are summed in the field: a general constant beside field elements
    /// (Poseidon's round keys) is; beside bits packed by large powers of two (SHA-256's
    /// round constants added in MultiEq) it stays on the integer path; a general coefficient
    /// on a variable makes a wide row; a row without one is neither.
    #[test]
    fn rows_of_general_constants_go_to_the_field_unless_they_pack_bits() {
        let general = Fr::from(7u64).pow_vartime([100]);
        let table = CoefficientTable::new(vec![Fr::ONE, Fr::from(2u64).pow_vartime([40]), general]);
        assert!(table.is_general(2) && table.is_large(1) && !table.is_general(1));
        let one = 10;
        let rows: [&[(u32, u16)]; 4] = [
            &[(0, 1), (1, 1), (one, 2)],
            &[(0, 0), (one, 2)],
            &[(0, 2), (one, 0)],
            &[(0, 0), (1, 0)],
        ];
        let matrix = Matrix::from_rows(rows);
        let layout = MatrixLayout::new(&matrix, &table, one, &|_| false);
        let in_field: Vec<bool> = (0..4).map(|row| layout.general.holds(row)).collect();
        let wide: Vec<bool> = (0..4).map(|row| layout.wide.index(row).is_some()).collect();
        assert_eq!(in_field, [false, true, true, false]);
        assert_eq!(wide, [false, false, true, false]);
    }
}
