//! One recorded R1CS matrix in compressed sparse row form, dictionary-coded.
//!
//! Invariants, established by the recorder and checked by the loader:
//! 1. `row_starts` has one entry per row plus one, starts at 0, never decreases, and ends at
//!    `columns.len() == coeff_ids.len()`.
//! 2. A column with [`INPUT_FLAG`] set names input `column & !INPUT_FLAG`, below the
//!    circuit's input count; any other column names an aux variable below its aux count.
//! 3. Every coefficient id is below the dictionary's length, and no stored coefficient is zero
//!    (zero terms are dropped when recording, as evaluation and density skip them).

/// Set in a column for an input variable; clear for an aux variable.
pub const INPUT_FLAG: u32 = 1 << 31;

/// A sparse matrix: for row `r`, the terms `row_starts[r]..row_starts[r + 1]`.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Matrix {
    pub(crate) row_starts: Vec<u32>,
    pub(crate) columns: Vec<u32>,
    pub(crate) coeff_ids: Vec<u16>,
}

impl Matrix {
    pub(crate) fn new() -> Self {
        Matrix {
            row_starts: vec![0],
            columns: Vec::new(),
            coeff_ids: Vec::new(),
        }
    }

    /// Number of rows.
    pub fn rows(&self) -> usize {
        self.row_starts.len() - 1
    }

    /// Number of stored (nonzero) terms.
    pub fn nonzeros(&self) -> usize {
        self.columns.len()
    }

    /// Bytes held per stored term (column and coefficient id, row offsets spread over them).
    pub fn bytes(&self) -> usize {
        self.row_starts.len() * 4 + self.columns.len() * 4 + self.coeff_ids.len() * 2
    }

    /// The terms of row `row` as `(column, coefficient id)` slices.
    #[inline]
    pub(crate) fn row(&self, row: usize) -> (&[u32], &[u16]) {
        let range = self.row_starts[row] as usize..self.row_starts[row + 1] as usize;
        (&self.columns[range.clone()], &self.coeff_ids[range])
    }
}
