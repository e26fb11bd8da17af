//! What evaluation derives from each matrix once, when a recording is built or loaded: the
//! class of every block of rows (which loop sums it), the runs of powers of two in
//! MultiEq's rows, and which rows hold general coefficients (summed in the field, or as wide
//! integers when the coefficients sit on variables).

use super::coefficients::{CoefficientTable, SMALL_MIN};
use super::matrix::Matrix;
use super::runs::PowerRuns;
use super::wide::WideRows;

/// Rows evaluated per pass over one matrix.
pub(super) const BLOCK: usize = 256;

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
    /// The class of every block of [`BLOCK`] rows, from row 0.
    pub(super) classes: Vec<BlockClass>,
    /// The runs of powers of two in the rows the common loop leaves.
    pub(super) runs: PowerRuns,
    /// The rows holding a general coefficient, summed in the field.
    pub(super) general: RowSet,
    /// Those of them with a general coefficient on a variable, summed as wide integers.
    pub(super) wide: WideRows,
}

/// A set of rows, one bit each.
#[derive(Default)]
pub(crate) struct RowSet {
    words: Vec<u64>,
}

impl RowSet {
    /// The rows of `matrix` for which `pick` holds of some coefficient id.
    fn of(matrix: &Matrix, pick: impl Fn(u16) -> bool) -> Self {
        let mut words = vec![0u64; matrix.rows().div_ceil(64)];
        for row in 0..matrix.rows() {
            let terms = matrix.row_starts[row] as usize..matrix.row_starts[row + 1] as usize;
            if matrix.coeff_ids[terms].iter().any(|&id| pick(id)) {
                words[row / 64] |= 1 << (row % 64);
            }
        }
        // A matrix without such rows holds no bitmap.
        if words.iter().all(|&word| word == 0) {
            words = Vec::new();
        }
        RowSet { words }
    }

    #[inline]
    pub(super) fn holds(&self, row: usize) -> bool {
        self.words
            .get(row / 64)
            .is_some_and(|word| word >> (row % 64) & 1 == 1)
    }
}

impl MatrixLayout {
    /// The layout of `matrix`, whose coefficient ids index `table` and whose constant one
    /// is at position `one` (the aux count).
    pub(crate) fn new<Scalar>(matrix: &Matrix, table: &CoefficientTable<Scalar>, one: u32) -> Self {
        let classes = block_classes(matrix, table);
        let runs = match table.integers {
            Some(_) => {
                // Only a block with a large coefficient can hold a row the common loop
                // leaves for one.
                let mixed = classes
                    .iter()
                    .enumerate()
                    .filter(|(_, &c)| c == BlockClass::Mixed);
                let rows = mixed
                    .flat_map(|(block, _)| BLOCK * block..matrix.rows().min(BLOCK * (block + 1)));
                PowerRuns::find(matrix, rows, |id| table.is_large(id), |id| table.powers(id))
            }
            None => PowerRuns::default(),
        };
        let (general, wide) = match table.integers {
            Some(_) => (
                RowSet::of(matrix, |id| table.is_general(id)),
                WideRows::new(matrix, one, |id| table.is_general(id)),
            ),
            None => Default::default(),
        };
        MatrixLayout {
            classes,
            runs,
            general,
            wide,
        }
    }

    /// Bytes held.
    pub(crate) fn bytes(&self) -> usize {
        self.classes.len() + self.runs.bytes() + 8 * self.general.words.len() + self.wide.bytes()
    }
}

/// The class of every block of [`BLOCK`] rows of `matrix`, from row 0.
fn block_classes<Scalar>(matrix: &Matrix, table: &CoefficientTable<Scalar>) -> Vec<BlockClass> {
    let starts = &matrix.row_starts;
    let coefficient = |term: usize| table.small[usize::from(matrix.coeff_ids[term])];
    (0..matrix.rows())
        .step_by(BLOCK)
        .map(|first| {
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
