//! Evaluation of linear-combination terms against an assignment: the hot loop of synthesis.
//!
//! One public entry, [`evaluate`], runs one of two kernels chosen at run time, so a single
//! binary can compare them: the portable loop, and the same loop issuing a prefetch for the
//! value a few terms ahead (compiled in with the `prefetch` feature on x86_64 and aarch64; on
//! other targets or without the feature it falls back to the portable loop).
//!
//! Both follow bellperson's rules exactly: a term with a zero coefficient adds nothing and
//! does not mark the density; coefficient one skips the multiplication. Coefficient minus one
//! subtracts instead of multiplying, which gives the same field element.

mod hint;

use ec_gpu_gen::multiexp_cpu::DensityTracker;
use ff::PrimeField;

/// Which evaluation loop to run.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum EvalKernel {
    /// Plain loop over the terms.
    Portable,
    /// The same loop, prefetching the assignment value of the term [`PREFETCH_DISTANCE`]
    /// positions ahead.
    Prefetch,
}

impl EvalKernel {
    /// Whether this kernel runs as named on this build: `Prefetch` without the `prefetch`
    /// feature or on a target without a prefetch instruction runs the portable loop.
    pub fn is_native(self) -> bool {
        match self {
            EvalKernel::Portable => true,
            EvalKernel::Prefetch => hint::PREFETCH_AVAILABLE,
        }
    }
}

/// How many terms ahead the prefetching kernel requests a value.
pub const PREFETCH_DISTANCE: usize = 4;

/// A term named a variable the assignment does not have.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct OutOfRange {
    /// The variable index the term named.
    pub index: usize,
    /// How many values the assignment holds.
    pub len: usize,
}

/// `sum(coeff * values[index])` over `terms`, marking each index with a nonzero coefficient
/// in `density` when one is given. `density`, if given, must track `values` (same length).
#[inline]
pub fn evaluate<Scalar: PrimeField>(
    kernel: EvalKernel,
    terms: &[(usize, Scalar)],
    values: &[Scalar],
    density: Option<&mut DensityTracker>,
) -> Result<Scalar, OutOfRange> {
    match kernel {
        EvalKernel::Portable => accumulate::<Scalar, false>(terms, values, density),
        EvalKernel::Prefetch => accumulate::<Scalar, true>(terms, values, density),
    }
}

#[inline(always)]
fn accumulate<Scalar: PrimeField, const PREFETCH: bool>(
    terms: &[(usize, Scalar)],
    values: &[Scalar],
    mut density: Option<&mut DensityTracker>,
) -> Result<Scalar, OutOfRange> {
    let minus_one = -Scalar::ONE;
    let mut acc = Scalar::ZERO;
    for (position, &(index, coeff)) in terms.iter().enumerate() {
        if PREFETCH {
            if let Some(&(ahead, _)) = terms.get(position + PREFETCH_DISTANCE) {
                if let Some(value) = values.get(ahead) {
                    hint::prefetch_read(value);
                }
            }
        }
        let value = *values.get(index).ok_or(OutOfRange {
            index,
            len: values.len(),
        })?;
        // `==` rather than `is_zero_vartime`: for blstrs the latter goes through the
        // constant-time comparison (with an optimization barrier) on every term.
        if coeff == Scalar::ZERO {
            continue;
        }
        if coeff == Scalar::ONE {
            acc += value;
        } else if coeff == minus_one {
            acc -= value;
        } else {
            acc += value * coeff;
        }
        if let Some(tracker) = density.as_deref_mut() {
            tracker.inc(index);
        }
    }
    Ok(acc)
}

#[cfg(test)]
mod tests {
    use super::*;
    use blstrs::Scalar as Fr;
    use ff::Field;

    fn tracker(len: usize) -> DensityTracker {
        let mut tracker = DensityTracker::new();
        (0..len).for_each(|_| tracker.add_element());
        tracker
    }

    #[test]
    fn kernels_agree_and_skip_zero_terms_for_density() {
        let values: Vec<Fr> = (1..=10u64).map(Fr::from).collect();
        let terms = vec![
            (0, Fr::ONE),
            (2, -Fr::ONE),
            (3, Fr::ZERO),
            (5, Fr::from(4u64)),
            (7, Fr::ONE),
            (9, Fr::from(3u64)),
        ];
        let expected = Fr::from(1 + 4 * 6 + 8 + 3 * 10u64) - Fr::from(3u64);
        for kernel in [EvalKernel::Portable, EvalKernel::Prefetch] {
            let mut density = tracker(values.len());
            let got = evaluate(kernel, &terms, &values, Some(&mut density)).unwrap();
            assert_eq!(got, expected, "{kernel:?}");
            assert_eq!(density.get_total_density(), 5);
            assert!(!density.bv[3]);
        }
    }

    #[test]
    fn out_of_range_terms_are_errors() {
        let values = vec![Fr::ONE; 3];
        let terms = vec![(0, Fr::ONE), (3, Fr::ONE)];
        for kernel in [EvalKernel::Portable, EvalKernel::Prefetch] {
            assert_eq!(
                evaluate(kernel, &terms, &values, None),
                Err(OutOfRange { index: 3, len: 3 })
            );
        }
    }
}
