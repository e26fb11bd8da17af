//! Synthesis split from proving.
//!
//! [`synthesize`] / [`synthesize_batch`] do what bellperson's prover does before its first
//! FFT: allocate the constant-one input, synthesize the circuit, then add `input * 0 = 0`
//! for every input. `prove` (in [`v0_26`] and [`v0_27`], one per bellperson release) does
//! the rest (FFTs for H, the multi-exponentiations, the randomized proof) from those
//! assignments, through bellperson's public domain, multiexp and parameter-source APIs.

use bellpepper_core::{Circuit, ConstraintSystem, Index, SynthesisError, Variable};
use ff::PrimeField;
use rayon::prelude::*;

use crate::assignment::{ProvingAssignment, SynthesisOptions};

/// Synthesizes `circuit` with the default options (pool on, portable kernel).
pub fn synthesize<Scalar, C>(circuit: C) -> Result<ProvingAssignment<Scalar>, SynthesisError>
where
    Scalar: PrimeField,
    C: Circuit<Scalar>,
{
    synthesize_with(circuit, &SynthesisOptions::default())
}

/// Synthesizes `circuit` into an assignment ready for `prove`.
pub fn synthesize_with<Scalar, C>(
    circuit: C,
    options: &SynthesisOptions,
) -> Result<ProvingAssignment<Scalar>, SynthesisError>
where
    Scalar: PrimeField,
    C: Circuit<Scalar>,
{
    let mut assignment = ProvingAssignment::with_options(options);
    assignment.alloc_input(|| "", || Ok(Scalar::ONE))?;
    circuit.synthesize(&mut assignment)?;
    for i in 0..assignment.input_assignment.len() {
        assignment.enforce(
            || "",
            |lc| lc + Variable::new_unchecked(Index::Input(i)),
            |lc| lc,
            |lc| lc,
        );
    }
    assignment.check()?;
    Ok(assignment)
}

/// Synthesizes every circuit on the rayon pool, each into its own assignment (and so its own
/// buffer pool), with the default options. Returns them in order.
pub fn synthesize_batch<Scalar, C>(
    circuits: Vec<C>,
) -> Result<Vec<ProvingAssignment<Scalar>>, SynthesisError>
where
    Scalar: PrimeField,
    C: Circuit<Scalar> + Send,
{
    synthesize_batch_with(circuits, &SynthesisOptions::default())
}

/// [`synthesize_batch`] with explicit options.
pub fn synthesize_batch_with<Scalar, C>(
    circuits: Vec<C>,
    options: &SynthesisOptions,
) -> Result<Vec<ProvingAssignment<Scalar>>, SynthesisError>
where
    Scalar: PrimeField,
    C: Circuit<Scalar> + Send,
{
    circuits
        .into_par_iter()
        .map(|circuit| synthesize_with(circuit, options))
        .collect()
}

/// Generates `prove` for one bellperson release; the releases share this API but their
/// types are distinct.
macro_rules! prover_for {
    ($bellperson:ident) => {
        use std::sync::Arc;

        use ec_gpu_gen::multiexp_cpu::FullDensity;
        use ec_gpu_gen::threadpool::Worker;
        use ff::{Field, PrimeField};
        use group::{prime::PrimeCurveAffine, Curve};
        use pairing::MultiMillerLoop;
        use $bellperson::domain::EvaluationDomain;
        use $bellperson::gpu::{GpuName, LockedFftKernel, LockedMultiexpKernel};
        use $bellperson::groth16::{ParameterSource, Proof};
        use $bellperson::multiexp::multiexp;
        use $bellperson::SynthesisError;

        use crate::assignment::ProvingAssignment;

        fn gpu_error(e: impl std::fmt::Display) -> SynthesisError {
            SynthesisError::IoError(std::io::Error::other(e.to_string()))
        }

        fn reprs<F: PrimeField>(values: &[F]) -> Arc<Vec<F::Repr>> {
            Arc::new(values.iter().map(PrimeField::to_repr).collect())
        }

        /// The coefficients of H = (A·B - C) / Z, as bellperson computes them.
        fn h_coefficients<F: PrimeField + GpuName>(
            worker: &Worker,
            assignment: &ProvingAssignment<F>,
        ) -> Result<Arc<Vec<F::Repr>>, SynthesisError> {
            let mut fft: Option<LockedFftKernel<F>> = None;
            let mut a = EvaluationDomain::from_coeffs(assignment.a.clone())?;
            let mut b = EvaluationDomain::from_coeffs(assignment.b.clone())?;
            let mut c = EvaluationDomain::from_coeffs(assignment.c.clone())?;
            EvaluationDomain::ifft_many(&mut [&mut a, &mut b, &mut c], worker, &mut fft)
                .map_err(gpu_error)?;
            EvaluationDomain::coset_fft_many(&mut [&mut a, &mut b, &mut c], worker, &mut fft)
                .map_err(gpu_error)?;
            a.mul_assign(worker, &b);
            drop(b);
            a.sub_assign(worker, &c);
            drop(c);
            a.divide_by_z_on_coset(worker);
            a.icoset_fft(worker, &mut fft).map_err(gpu_error)?;
            let mut coeffs = a.into_coeffs();
            coeffs.pop();
            Ok(reprs(&coeffs))
        }

        /// Groth16 proofs for `assignments` (from [`crate::synthesize`] or
        /// [`crate::synthesize_batch`]), with randomness `r[i]`, `s[i]` for the i-th: the
        /// same proofs bellperson's `create_proof_batch` makes for the same circuits and
        /// randomness. All assignments must have the same shape.
        pub fn prove<E, P>(
            params: P,
            assignments: &[ProvingAssignment<E::Fr>],
            r: &[E::Fr],
            s: &[E::Fr],
        ) -> Result<Vec<Proof<E>>, SynthesisError>
        where
            E: MultiMillerLoop,
            E::Fr: GpuName,
            E::G1Affine: GpuName,
            E::G2Affine: GpuName,
            P: ParameterSource<E>,
        {
            let Some(first) = assignments.first() else {
                return Ok(Vec::new());
            };
            if r.len() != assignments.len() || s.len() != assignments.len() {
                return Err(SynthesisError::IncompatibleLengthVector(format!(
                    "{} assignments but {} r and {} s values",
                    assignments.len(),
                    r.len(),
                    s.len()
                )));
            }
            let shape = first.shape();
            let densities = |x: &ProvingAssignment<E::Fr>| {
                (
                    x.a_aux_density.get_total_density(),
                    x.b_input_density.get_total_density(),
                    x.b_aux_density.get_total_density(),
                )
            };
            if let Some(other) = assignments
                .iter()
                .find(|x| x.shape() != shape || densities(x) != densities(first))
            {
                return Err(SynthesisError::IncompatibleLengthVector(format!(
                    "assignments of different circuits in one batch: {:?} and {:?}",
                    shape,
                    other.shape()
                )));
            }
            for assignment in assignments {
                assignment
                    .check()
                    .map_err(|e| SynthesisError::IncompatibleLengthVector(e.to_string()))?;
            }

            let worker = Worker::new();
            let vk = params.get_vk(shape.inputs)?.clone();
            if bool::from(vk.delta_g1.is_identity() | vk.delta_g2.is_identity()) {
                return Err(SynthesisError::UnexpectedIdentity);
            }
            let (a_aux_total, b_input_total, b_aux_total) = densities(first);
            let h_bases = params.get_h(shape.constraints)?;
            let l_bases = params.get_l(shape.aux)?;
            let (a_input_bases, a_aux_bases) = params.get_a(shape.inputs, a_aux_total)?;
            let (b_g1_input_bases, b_g1_aux_bases) = params.get_b_g1(b_input_total, b_aux_total)?;
            let (b_g2_input_bases, b_g2_aux_bases) = params.get_b_g2(b_input_total, b_aux_total)?;
            let mut g1_kernel = LockedMultiexpKernel::<E::G1Affine>::new(false);
            let mut g2_kernel = LockedMultiexpKernel::<E::G2Affine>::new(false);

            let mut proofs = Vec::with_capacity(assignments.len());
            for ((assignment, &r), &s) in assignments.iter().zip(r).zip(s) {
                let h_exponents = h_coefficients(&worker, assignment)?;
                let inputs = reprs(&assignment.input_assignment);
                let aux = reprs(&assignment.aux_assignment);
                let a_aux_density = Arc::new(assignment.a_aux_density.clone());
                let b_input_density = Arc::new(assignment.b_input_density.clone());
                let b_aux_density = Arc::new(assignment.b_aux_density.clone());

                let mut g1 = |bases: &_, exponents: &Arc<Vec<_>>, dense: Option<&Arc<_>>| {
                    let bases = Clone::clone(bases);
                    match dense {
                        None => multiexp(
                            &worker,
                            bases,
                            FullDensity,
                            exponents.clone(),
                            &mut g1_kernel,
                        ),
                        Some(density) => multiexp(
                            &worker,
                            bases,
                            Arc::clone(density),
                            exponents.clone(),
                            &mut g1_kernel,
                        ),
                    }
                    .wait()
                    .map_err(gpu_error)
                };
                let h = g1(&h_bases, &h_exponents, None)?;
                let l = g1(&l_bases, &aux, None)?;
                let a_answer = g1(&a_input_bases, &inputs, None)?
                    + g1(&a_aux_bases, &aux, Some(&a_aux_density))?;
                let b_g1_answer = g1(&b_g1_input_bases, &inputs, Some(&b_input_density))?
                    + g1(&b_g1_aux_bases, &aux, Some(&b_aux_density))?;
                let b_g2_answer = multiexp(
                    &worker,
                    b_g2_input_bases.clone(),
                    b_input_density.clone(),
                    inputs.clone(),
                    &mut g2_kernel,
                )
                .wait()
                .map_err(gpu_error)?
                    + multiexp(
                        &worker,
                        b_g2_aux_bases.clone(),
                        b_aux_density.clone(),
                        aux.clone(),
                        &mut g2_kernel,
                    )
                    .wait()
                    .map_err(gpu_error)?;

                let g_a = vk.delta_g1 * r + vk.alpha_g1 + a_answer;
                let g_b = vk.delta_g2 * s + vk.beta_g2 + b_g2_answer;
                let g_c = a_answer * s
                    + b_g1_answer * r
                    + vk.delta_g1 * (r * s)
                    + vk.alpha_g1 * s
                    + vk.beta_g1 * r
                    + h
                    + l;
                proofs.push(Proof {
                    a: g_a.to_affine(),
                    b: g_b.to_affine(),
                    c: g_c.to_affine(),
                });
            }
            Ok(proofs)
        }

        /// The zero-knowledge randomness bellperson's random prover draws: `r` then `s` for
        /// each proof, from `rng`.
        pub fn random_rs<F: Field>(
            count: usize,
            rng: &mut impl rand_core::RngCore,
        ) -> (Vec<F>, Vec<F>) {
            let r = (0..count).map(|_| F::random(&mut *rng)).collect();
            let s = (0..count).map(|_| F::random(&mut *rng)).collect();
            (r, s)
        }
    };
}

/// `prove` for bellperson 0.26 (filecoin-proofs 19.0).
pub mod v0_26 {
    prover_for!(bellperson);
}

/// `prove` for bellperson 0.27 (filecoin-proofs 19.1).
pub mod v0_27 {
    prover_for!(bellperson_027);
}
