//! Evaluation of linear-combination terms against an assignment: the hot loop of synthesis.
//!
//! One entry, [`evaluate`], runs the loop of the kernel [`EvalKernel`] names, chosen at run
//! time by the caller (once per constraint) so a single binary can compare them: the
//! portable loop, or the same loop issuing a prefetch for the value a few terms ahead
//! (compiled in with the `prefetch` feature on x86_64 and aarch64; on other targets or
//! without the feature it falls back to the portable loop).
//!
//! A second axis, chosen the same way: the bit-value fast path, which looks at the
//! assignment value first: a zero value adds nothing, a one adds the coefficient, so the
//! boolean-heavy SHA-256 circuits evaluate almost without multiplications.
//!
//! All follow bellperson's rules exactly: a term with a zero coefficient is skipped before
//! anything else ([`is_dropped`], the one statement of that rule), so it adds nothing, marks
//! no density and may even name a variable that does not exist; the density depends on the
//! coefficient only, never on the value; coefficient one skips the multiplication.
//! Coefficient minus one subtracts instead of multiplying. Field arithmetic is exact, so
//! every path gives the same field element.

mod prefetch;

use ec_gpu_gen::multiexp_cpu::DensityTracker;
use ff::PrimeField;

/// Which evaluation loop to run.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum EvalKernel {
    /// Plain loop over the terms.
    Portable,
    /// The same loop, prefetching the assignment value of the term four
    /// positions ahead.
    Prefetch,
    /// The plain loop with the bit-value fast path.
    BitValues,
    /// Prefetching and the bit-value fast path.
    BitValuesPrefetch,
}

impl EvalKernel {
    /// Every kernel, for tests and benches that compare them.
    pub const ALL: [EvalKernel; 4] = [
        EvalKernel::Portable,
        EvalKernel::Prefetch,
        EvalKernel::BitValues,
        EvalKernel::BitValuesPrefetch,
    ];

    /// Whether this kernel runs as named on this build: the prefetching ones, without the
    /// `prefetch` feature or on a target without a prefetch instruction, skip the prefetch.
    pub fn is_native(self) -> bool {
        match self {
            EvalKernel::Portable | EvalKernel::BitValues => true,
            EvalKernel::Prefetch | EvalKernel::BitValuesPrefetch => prefetch::PREFETCH_AVAILABLE,
        }
    }
}

/// Whether a term with this coefficient is left out: of evaluation, of the densities and of
/// recordings. bellperson skips exactly the zero coefficients, before it looks at the
/// variable; so does everything here.
#[inline(always)]
pub(crate) fn is_dropped<Scalar: PrimeField>(coeff: &Scalar) -> bool {
    // `==` rather than `is_zero_vartime`: for blstrs the latter goes through the
    // constant-time comparison (with an optimization barrier) on every term.
    *coeff == Scalar::ZERO
}

/// Field constants the loop compares against, computed once per assignment rather than
/// once per combination (negation is a field operation).
#[derive(Clone, Copy, Debug)]
pub(crate) struct Constants<Scalar> {
    one: Scalar,
    minus_one: Scalar,
}

impl<Scalar: PrimeField> Default for Constants<Scalar> {
    fn default() -> Self {
        Constants {
            one: Scalar::ONE,
            minus_one: -Scalar::ONE,
        }
    }
}

/// How many terms ahead the prefetching kernel requests a value.
pub(crate) const PREFETCH_DISTANCE: usize = 4;

/// A term named a variable the assignment does not have.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct OutOfRange {
    /// The variable index the term named.
    pub index: usize,
    /// How many values the assignment holds.
    pub len: usize,
}

/// Where the loop reads the values its terms name: one slice (a system's own vector), or
/// [`TwoPlaces`] (a branch reading the values before it where they lie). The loop is
/// compiled for each, so a system reading one slice runs the loop it ran before branches
/// could share values.
pub(crate) trait Values<Scalar> {
    /// The value of variable `index`, if there is one.
    fn value(&self, index: usize) -> Option<&Scalar>;
    /// How many values there are.
    fn count(&self) -> usize;
}

impl<Scalar> Values<Scalar> for [Scalar] {
    #[inline(always)]
    fn value(&self, index: usize) -> Option<&Scalar> {
        self.get(index)
    }

    fn count(&self) -> usize {
        self.len()
    }
}

/// The values of a branch that reads those of its system before the branch point in place:
/// `before` are variables `0..before.len()`, `own` the ones after.
#[derive(Clone, Copy)]
pub(crate) struct TwoPlaces<'a, Scalar> {
    pub(crate) before: &'a [Scalar],
    pub(crate) own: &'a [Scalar],
}

impl<Scalar> Values<Scalar> for TwoPlaces<'_, Scalar> {
    #[inline(always)]
    fn value(&self, index: usize) -> Option<&Scalar> {
        match index.checked_sub(self.before.len()) {
            None => self.before.get(index),
            Some(own) => self.own.get(own),
        }
    }

    fn count(&self) -> usize {
        self.before.len() + self.own.len()
    }
}

/// `acc + sum(coeff * values[index])` over `terms`, marking each index with a nonzero
/// coefficient in `density` when one is given, with the kernel `PREFETCH` and `BIT_VALUES`
/// name ([`EvalKernel`]'s two axes, chosen once by the caller). `density`, if given, must
/// track `values` (same length). Starting from `acc` lets a caller sum the input and aux
/// halves of a combination with one accumulator, as bellperson does, instead of adding two
/// results.
#[inline(always)]
pub(crate) fn evaluate<
    Scalar: PrimeField,
    V: Values<Scalar> + ?Sized,
    const PREFETCH: bool,
    const BIT_VALUES: bool,
>(
    constants: &Constants<Scalar>,
    terms: &[(usize, Scalar)],
    values: &V,
    density: Option<&mut DensityTracker>,
    acc: Scalar,
) -> Result<Scalar, OutOfRange> {
    accumulate::<Scalar, V, PREFETCH, BIT_VALUES, true>(constants, terms, values, density, acc)
}

/// What [`evaluate`] does to `density`, and its range check against `values`, without the
/// sum: for a side whose value the caller already has. It runs evaluation's own loop with
/// the sum compiled out, so the density is the one [`evaluate`] would mark.
#[inline]
pub(crate) fn mark<Scalar: PrimeField, V: Values<Scalar> + ?Sized>(
    constants: &Constants<Scalar>,
    terms: &[(usize, Scalar)],
    values: &V,
    density: Option<&mut DensityTracker>,
) -> Result<(), OutOfRange> {
    accumulate::<Scalar, V, false, false, false>(constants, terms, values, density, Scalar::ZERO)
        .map(drop)
}

#[inline(always)]
fn accumulate<
    Scalar: PrimeField,
    V: Values<Scalar> + ?Sized,
    const PREFETCH: bool,
    const BIT_VALUES: bool,
    const SUM: bool,
>(
    constants: &Constants<Scalar>,
    terms: &[(usize, Scalar)],
    values: &V,
    mut density: Option<&mut DensityTracker>,
    mut acc: Scalar,
) -> Result<Scalar, OutOfRange> {
    let Constants { one, minus_one } = *constants;
    for (position, &(index, coeff)) in terms.iter().enumerate() {
        if PREFETCH {
            if let Some(&(ahead, _)) = terms.get(position + PREFETCH_DISTANCE) {
                if let Some(value) = values.value(ahead) {
                    prefetch::prefetch_read(value);
                }
            }
        }
        if is_dropped(&coeff) {
            continue;
        }
        let value = *values.value(index).ok_or_else(|| OutOfRange {
            index,
            len: values.count(),
        })?;
        if let Some(tracker) = density.as_deref_mut() {
            mark_density(tracker, index);
        }
        if !SUM {
            continue;
        }
        if BIT_VALUES {
            if value == Scalar::ZERO {
                continue;
            }
            if value == one {
                acc += coeff;
                continue;
            }
        }
        if coeff == one {
            acc += value;
        } else if coeff == minus_one {
            acc -= value;
        } else {
            acc += value * coeff;
        }
    }
    Ok(acc)
}

/// Marks `index` in `tracker`, counting it if it was not marked: ec-gpu-gen's
/// `DensityTracker::inc`, inline (that one is a call per marked term, three per constraint,
/// about 63 instructions per constraint of direct synthesis). Panics, as `inc` does, where
/// `index` is past the tracker's length.
#[inline(always)]
pub(crate) fn mark_density(tracker: &mut DensityTracker, index: usize) {
    if !tracker.bv.replace(index, true) {
        tracker.total_density += 1;
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use blstrs::Scalar as Fr;
    use ff::Field;

    /// [`super::evaluate`] with `kernel`'s two axes, as the assignment chooses them.
    fn evaluate(
        kernel: EvalKernel,
        constants: &Constants<Fr>,
        terms: &[(usize, Fr)],
        values: &[Fr],
        density: Option<&mut DensityTracker>,
        acc: Fr,
    ) -> Result<Fr, OutOfRange> {
        let evaluate = match kernel {
            EvalKernel::Portable => super::evaluate::<Fr, [Fr], false, false>,
            EvalKernel::Prefetch => super::evaluate::<Fr, [Fr], true, false>,
            EvalKernel::BitValues => super::evaluate::<Fr, [Fr], false, true>,
            EvalKernel::BitValuesPrefetch => super::evaluate::<Fr, [Fr], true, true>,
        };
        evaluate(constants, terms, values, density, acc)
    }

    fn tracker(len: usize) -> DensityTracker {
        let mut tracker = DensityTracker::new();
        (0..len).for_each(|_| tracker.add_element());
        tracker
    }

    /// Values 0 and 1 exercise the bit-value path, the others the general one; the terms
    /// have coefficients one, minus one, zero and others.
    fn values_and_terms() -> (Vec<Fr>, Vec<(usize, Fr)>) {
        let values = [0u64, 2, 3, 4, 1, 6, 7, 8, 9, 10].map(Fr::from).to_vec();
        let terms = vec![
            (0, Fr::ONE),
            (2, -Fr::ONE),
            (3, Fr::ZERO),
            (5, Fr::from(4u64)),
            (7, Fr::ONE),
            (9, Fr::from(3u64)),
        ];
        (values, terms)
    }

    #[test]
    fn kernels_agree_and_skip_zero_terms_for_density() {
        let (values, terms) = values_and_terms();
        let expected = Fr::from(4 * 6 + 8 + 3 * 10u64) - Fr::from(3u64);
        for kernel in EvalKernel::ALL {
            let mut density = tracker(values.len());
            let constants = Constants::default();
            let got = evaluate(
                kernel,
                &constants,
                &terms,
                &values,
                Some(&mut density),
                Fr::ONE,
            );
            assert_eq!(got.unwrap(), expected + Fr::ONE, "{kernel:?}");
            assert_eq!(density.get_total_density(), 5);
            assert!(!density.bv[3]);
        }
    }

    /// The inline mark sets the bits and the count ec-gpu-gen's `inc` sets, a bit marked
    /// again counted once.
    #[test]
    fn a_density_mark_is_incs_mark() {
        let indices = [0, 63, 64, 5, 63, 129, 0, 200];
        let (mut ours, mut theirs) = (tracker(201), tracker(201));
        for index in indices {
            mark_density(&mut ours, index);
            theirs.inc(index);
        }
        assert_eq!(ours.bv, theirs.bv);
        assert_eq!(ours.get_total_density(), 6);
        assert_eq!(theirs.get_total_density(), 6);
    }

    #[test]
    fn marking_marks_what_evaluation_marks() {
        let values: Vec<Fr> = [5u64, 0, 1, 7].map(Fr::from).to_vec();
        let terms = vec![
            (0, Fr::from(3u64)),
            (1, Fr::ZERO),
            (3, -Fr::ONE),
            (9, Fr::ZERO),
        ];
        let mut evaluated = tracker(values.len());
        let sum = evaluate(
            EvalKernel::Portable,
            &Constants::default(),
            &terms,
            &values,
            Some(&mut evaluated),
            Fr::ZERO,
        );
        assert_eq!(sum, Ok(Fr::from(8u64)));
        let mut marked = tracker(values.len());
        let constants = Constants::default();
        assert_eq!(
            mark(&constants, &terms, &values[..], Some(&mut marked)),
            Ok(())
        );
        assert_eq!(marked.bv, evaluated.bv);
        assert_eq!(marked.get_total_density(), 2);
        assert_eq!(
            mark(&constants, &[(4, Fr::ONE)], &values[..], None),
            Err(OutOfRange { index: 4, len: 4 })
        );
    }

    /// A branch's values read from two places sum, mark and fail as the same values in one
    /// slice, wherever the cut lies (before the first term, between any two, after all).
    #[test]
    fn values_in_two_places_evaluate_as_in_one() {
        let (values, terms) = values_and_terms();
        let constants = Constants::default();
        for kernel in EvalKernel::ALL {
            let mut one_density = tracker(values.len());
            let one = evaluate(
                kernel,
                &constants,
                &terms,
                &values,
                Some(&mut one_density),
                Fr::ONE,
            );
            for cut in 0..=values.len() {
                let (before, own) = values.split_at(cut);
                let two = TwoPlaces { before, own };
                let mut density = tracker(values.len());
                let sum = match kernel {
                    EvalKernel::Portable => super::evaluate::<Fr, _, false, false>,
                    EvalKernel::Prefetch => super::evaluate::<Fr, _, true, false>,
                    EvalKernel::BitValues => super::evaluate::<Fr, _, false, true>,
                    EvalKernel::BitValuesPrefetch => super::evaluate::<Fr, _, true, true>,
                }(&constants, &terms, &two, Some(&mut density), Fr::ONE);
                assert_eq!(sum, one, "{kernel:?}, cut at {cut}");
                assert_eq!(density.bv, one_density.bv, "{kernel:?}, cut at {cut}");
                let mut marked = tracker(values.len());
                assert_eq!(mark(&constants, &terms, &two, Some(&mut marked)), Ok(()));
                assert_eq!(marked.bv, one_density.bv, "marked, cut at {cut}");
                let past = super::evaluate::<Fr, _, false, true>(
                    &constants,
                    &[(1, Fr::ONE), (10, Fr::ONE)],
                    &two,
                    None,
                    Fr::ZERO,
                );
                assert_eq!(past, Err(OutOfRange { index: 10, len: 10 }), "cut at {cut}");
            }
        }
    }

    #[test]
    fn out_of_range_terms_are_errors_unless_their_coefficient_is_zero() {
        let values = vec![Fr::ONE; 3];
        for kernel in EvalKernel::ALL {
            let dropped = [(0, Fr::ONE), (9, Fr::ZERO)];
            let sum = evaluate(
                kernel,
                &Constants::default(),
                &dropped,
                &values,
                None,
                Fr::ZERO,
            );
            assert_eq!(sum, Ok(Fr::ONE), "{kernel:?}");
        }
        let terms = vec![(0, Fr::ONE), (3, Fr::ONE)];
        for kernel in EvalKernel::ALL {
            assert_eq!(
                evaluate(
                    kernel,
                    &Constants::default(),
                    &terms,
                    &values,
                    None,
                    Fr::ZERO
                ),
                Err(OutOfRange { index: 3, len: 3 })
            );
        }
    }
}
