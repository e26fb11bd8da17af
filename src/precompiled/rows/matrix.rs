//! One recorded R1CS matrix in compressed sparse row form, dictionary-coded, and the checks
//! every recording passes before anything evaluates it.
//!
//! Invariants, established by the recorder and checked by [`validate`] before a recording
//! is handed out, whether it was just recorded or loaded from a file:
//! 1. `row_starts` has one entry per row plus one, starts at 0, never decreases, and ends at
//!    `columns.len() == coeff_ids.len()`; the three matrices have the same number of rows.
//! 2. A column is a variable's position: aux variable `i` is position `i`, input `i` is
//!    position `aux + i` (the aux count plus its index), and every column is below
//!    `aux + inputs`. (While recording, columns carry [`INPUT_FLAG`] instead, since the aux
//!    count is not final until the recording is; [`to_positions`] converts them.)
//! 3. Every coefficient id is below the dictionary's length; the dictionary starts with one
//!    and minus one and holds no zero (zero terms are dropped when recording, as evaluation
//!    and the densities skip them).
//! 4. There is at least the constant-one input, no more inputs than rows (each input has its
//!    own `input * 0 = 0` row), no more aux variables than nonzero terms (an aux variable in
//!    no constraint cannot be proven) and at most 2^31 variables of each kind (what columns
//!    can name while recording); so the counts never size memory the matrices do not
//!    justify, and every position fits a `u32`.

use ff::PrimeField;
use rayon::prelude::*;

use crate::error::Side;
use crate::precompiled::storage::words::Words;

/// Set in a column for an input variable while recording; clear for an aux variable.
pub(crate) const INPUT_FLAG: u32 = 1 << 31;

/// A sparse matrix: for row `r`, the terms `row_starts[r]..row_starts[r + 1]`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) struct Matrix {
    pub(crate) row_starts: Words<u32>,
    pub(crate) columns: Words<u32>,
    pub(crate) coeff_ids: Words<u16>,
}

impl Default for Matrix {
    fn default() -> Self {
        MatrixBuilder::default().into()
    }
}

/// A matrix being recorded, row by row.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) struct MatrixBuilder {
    pub(crate) row_starts: Vec<u32>,
    pub(crate) columns: Vec<u32>,
    pub(crate) coeff_ids: Vec<u16>,
}

impl Default for MatrixBuilder {
    fn default() -> Self {
        MatrixBuilder {
            row_starts: vec![0],
            columns: Vec::new(),
            coeff_ids: Vec::new(),
        }
    }
}

impl From<MatrixBuilder> for Matrix {
    fn from(built: MatrixBuilder) -> Self {
        Matrix {
            row_starts: built.row_starts.into(),
            columns: built.columns.into(),
            coeff_ids: built.coeff_ids.into(),
        }
    }
}

impl MatrixBuilder {
    /// Drops everything after row `rows`.
    pub(crate) fn truncate_rows(&mut self, rows: usize) {
        self.row_starts.truncate(rows + 1);
        let end = self.row_starts[rows] as usize;
        self.columns.truncate(end);
        self.coeff_ids.truncate(end);
    }
}

impl Matrix {
    /// Number of rows.
    pub(crate) fn rows(&self) -> usize {
        self.row_starts.len().saturating_sub(1)
    }

    /// Number of stored (nonzero) terms.
    pub(crate) fn nonzeros(&self) -> usize {
        self.columns.len()
    }

    /// Bytes held: columns, coefficient ids and row offsets.
    pub(crate) fn bytes(&self) -> usize {
        self.row_starts.len() * 4 + self.columns.len() * 4 + self.coeff_ids.len() * 2
    }

    /// The columns and coefficient ids of `row`'s terms.
    #[inline]
    pub(crate) fn row(&self, row: usize) -> (&[u32], &[u16]) {
        let terms = self.row_starts[row] as usize..self.row_starts[row + 1] as usize;
        (&self.columns[terms.clone()], &self.coeff_ids[terms])
    }

    /// Whether `row` has a coefficient `pick` holds of on a variable other than the
    /// constant one (at `one`).
    #[inline]
    pub(crate) fn picks_on_a_variable(
        &self,
        row: usize,
        one: u32,
        pick: impl Fn(u16) -> bool,
    ) -> bool {
        let (columns, ids) = self.row(row);
        columns
            .iter()
            .zip(ids)
            .any(|(&column, &id)| column != one && pick(id))
    }

    /// A matrix of `rows`, each a list of (column, coefficient id).
    #[cfg(test)]
    pub(crate) fn from_rows<R: AsRef<[(u32, u16)]>>(rows: impl IntoIterator<Item = R>) -> Self {
        let mut matrix = MatrixBuilder::default();
        for row in rows {
            for &(column, id) in row.as_ref() {
                matrix.columns.push(column);
                matrix.coeff_ids.push(id);
            }
            matrix.row_starts.push(matrix.columns.len() as u32);
        }
        matrix.into()
    }
}

/// A matrix column for `index`: the input flag for inputs, `None` past the column limit.
pub(crate) fn column(is_input: bool, index: u64) -> Option<u32> {
    let index = u32::try_from(index).ok().filter(|&i| i < INPUT_FLAG)?;
    Some(encoded(is_input, index))
}

/// The column for `index`, known to be below the column limit.
#[inline]
pub(crate) fn encoded(is_input: bool, index: u32) -> u32 {
    debug_assert!(index < INPUT_FLAG);
    if is_input {
        index | INPUT_FLAG
    } else {
        index
    }
}

/// Converts the columns of a finished recording from their recording form (an input flag)
/// to positions (inputs after the `aux` aux variables), invariant 2, on the pool's threads:
/// a partition's recording holds a billion columns, and a first member waits on them.
pub(crate) fn to_positions(matrices: &mut [MatrixBuilder; 3], aux: usize) {
    let input_offset = (aux as u32).wrapping_sub(INPUT_FLAG);
    for matrix in matrices {
        matrix.columns.par_iter_mut().for_each(|column| {
            if *column & INPUT_FLAG != 0 {
                *column = column.wrapping_add(input_offset);
            }
        });
    }
}

/// Checks invariants 1 to 4 (the module's) for a recording of this shape; the message names
/// the first broken one.
pub(crate) fn validate<Scalar: PrimeField>(
    inputs: usize,
    aux: usize,
    matrices: &[Matrix; 3],
    dictionary: &[Scalar],
) -> Result<(), String> {
    validate_dictionary(dictionary)?;
    let rows = matrices[0].rows();
    // The matrices at once (a recording of a partition holds a billion terms); the first
    // broken one in order A, B, C is named, as one after another would name it.
    let sides = [Side::A, Side::B, Side::C];
    let checked: Vec<Result<(), String>> = matrices[..]
        .par_iter()
        .zip(&sides[..])
        .map(|(matrix, &side)| check_matrix(matrix, side, rows, inputs, aux, dictionary.len()))
        .collect();
    checked.into_iter().collect::<Result<(), String>>()?;
    let nonzeros: usize = matrices.iter().map(Matrix::nonzeros).sum();
    check_counts(inputs, aux, rows, nonzeros)
}

/// Invariant 3's rules for the dictionary itself: one and minus one first, no zero.
pub(crate) fn validate_dictionary<Scalar: PrimeField>(dictionary: &[Scalar]) -> Result<(), String> {
    if dictionary.len() < 2 || dictionary[0] != Scalar::ONE || dictionary[1] != -Scalar::ONE {
        return Err("the dictionary does not start with one and minus one".into());
    }
    if dictionary.contains(&Scalar::ZERO) {
        return Err("the dictionary holds a zero coefficient".into());
    }
    Ok(())
}

/// Invariant 4: the variable counts are what `rows` rows of `nonzeros` terms can reference.
pub(crate) fn check_counts(
    inputs: usize,
    aux: usize,
    rows: usize,
    nonzeros: usize,
) -> Result<(), String> {
    if aux > INPUT_FLAG as usize || inputs > INPUT_FLAG as usize {
        return Err(format!(
            "{inputs} inputs and {aux} aux variables exceed the 2^31 variables of each kind a \
             column can name"
        ));
    }
    if inputs == 0 || inputs > rows || aux > nonzeros {
        return Err(format!(
            "{inputs} inputs and {aux} aux variables cannot be the variables of {rows} rows \
             with {nonzeros} nonzero terms (every input has its own row, every aux variable a \
             term)"
        ));
    }
    Ok(())
}

fn check_matrix(
    matrix: &Matrix,
    side: Side,
    rows: usize,
    inputs: usize,
    aux: usize,
    dictionary: usize,
) -> Result<(), String> {
    let starts = &matrix.row_starts;
    if matrix.rows() != rows || starts.len() != rows + 1 {
        return Err(format!(
            "matrix {side} has {} rows, A has {rows}",
            matrix.rows()
        ));
    }
    if starts[0] != 0
        || starts[rows] as usize != matrix.columns.len()
        || matrix.columns.len() != matrix.coeff_ids.len()
    {
        return Err(format!("matrix {side}: row offsets do not span its terms"));
    }
    // Each scan split over the pool's threads, the first offender in order named.
    let pieces = starts.len().div_ceil(SCAN_CHUNK);
    let decreasing = (0..pieces).into_par_iter().any(|piece| {
        let end = (piece * SCAN_CHUNK + SCAN_CHUNK + 1).min(starts.len());
        starts[piece * SCAN_CHUNK..end]
            .windows(2)
            .any(|w| w[0] > w[1])
    });
    if decreasing {
        return Err(format!("matrix {side}: row offsets decrease"));
    }
    let variables = aux + inputs;
    if let Some(column) = first_where(&matrix.columns, |c| c as usize >= variables) {
        return Err(format!(
            "matrix {side}: column {column} out of range (< {variables} variables)"
        ));
    }
    if let Some(id) = first_where(&matrix.coeff_ids, |id| id as usize >= dictionary) {
        return Err(format!(
            "matrix {side}: coefficient id {id} outside the dictionary of {dictionary}"
        ));
    }
    Ok(())
}

/// Elements a thread scans at once when a check is split over the pool: enough that a
/// thread's turn costs far more than taking it.
const SCAN_CHUNK: usize = 1 << 16;

/// The first element of `items` for which `bad` holds: chunks scanned on the pool's
/// threads, each a plain loop.
fn first_where<T: Copy + Send + Sync>(items: &[T], bad: impl Fn(T) -> bool + Sync) -> Option<T> {
    items
        .par_chunks(SCAN_CHUNK)
        .find_map_first(|chunk| chunk.iter().copied().find(|&item| bad(item)))
}

#[cfg(test)]
mod tests {
    use blstrs::Scalar as Fr;
    use ff::Field;

    use super::{validate, Matrix, SCAN_CHUNK};

    /// The matrices are checked at once; the message still names the first broken one in
    /// order, whichever finished first.
    #[test]
    fn the_first_broken_matrix_in_order_is_named() {
        let dictionary = [Fr::ONE, -Fr::ONE];
        let good = || Matrix::from_rows([[(0u32, 0u16)], [(1, 0)]]);
        let out_of_range = || Matrix::from_rows([[(0u32, 0u16)], [(9, 0)]]);
        let cases = [
            ([good(), good(), good()], None),
            ([good(), out_of_range(), out_of_range()], Some("matrix B")),
            ([out_of_range(), good(), out_of_range()], Some("matrix A")),
            ([good(), good(), out_of_range()], Some("matrix C")),
        ];
        for (matrices, broken) in cases {
            let named = validate(1, 1, &matrices, &dictionary).err();
            match broken {
                None => assert_eq!(named, None),
                Some(side) => {
                    let message = named.expect("a broken matrix is refused");
                    assert!(message.starts_with(side), "{message}");
                }
            }
        }
    }

    /// Scans split into chunks still name the first offender in order, and see a decrease
    /// of the row offsets that straddles two chunks.
    #[test]
    fn split_scans_name_the_first_offender_and_see_across_chunks() {
        let dictionary = [Fr::ONE, -Fr::ONE];
        let rows = 3 * SCAN_CHUNK;
        let check = |matrix: Matrix| {
            let matrices = [matrix.clone(), matrix.clone(), matrix];
            validate(1, 10, &matrices, &dictionary).err()
        };
        let with_columns = |bad: &[(usize, u32)]| {
            Matrix::from_rows((0..rows).map(|row| {
                let column = bad
                    .iter()
                    .find(|&&(at, _)| at == row)
                    .map_or(0, |&(_, c)| c);
                [(column, 0u16)]
            }))
        };
        assert_eq!(check(with_columns(&[])), None);
        let bad = [(SCAN_CHUNK + 7, 90), (2 * SCAN_CHUNK + 5, 80)];
        let message = check(with_columns(&bad)).expect("out of range");
        assert!(message.contains("column 90 "), "{message}");

        let mut matrix = with_columns(&[]);
        let mut starts = matrix.row_starts.to_vec();
        starts[SCAN_CHUNK] = SCAN_CHUNK as u32 - 2;
        matrix.row_starts = starts.into();
        let message = check(matrix).expect("a decrease at a chunk's edge");
        assert!(message.contains("row offsets decrease"), "{message}");
    }
}
