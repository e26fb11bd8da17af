//! The recorded rows as evaluation reads them: the matrices and the densities they imply,
//! and what is derived from them once (the coefficient table, each block's layout,
//! MultiEq's runs, rows of general coefficients, rows that state a value, stretches
//! evaluated in the field).

pub(crate) mod claims;
pub(crate) mod coefficients;
pub(crate) mod density;
pub(crate) mod field_rows;
#[cfg(all(target_arch = "x86_64", feature = "neptune-11"))]
#[allow(unsafe_code)]
pub(crate) mod lanes_x86_64;
pub(crate) mod layout;
pub(crate) mod matrix;
pub(crate) mod row_sets;
pub(crate) mod runs;
pub(crate) mod wide;
