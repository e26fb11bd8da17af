//! Proving from synthesized [`ProverVectors`], one module per bellperson release (each
//! behind its cargo feature): the FFTs for H, the multi-exponentiations and the randomized
//! proof, through bellperson's public domain, multiexp and parameter-source APIs, so a GPU
//! build of bellperson proves on the GPU here too.
//!
//! `prove` consumes the vectors: a, b and c move into the FFT domain and the aux values are
//! dropped as soon as their byte representations exist, so a proof holds less memory than
//! bellperson's own prover, which keeps every member's vectors until its last FFT.

use crate::vectors::ProverVectors;

/// Checks that the vectors agree with each other, as a hand-built value may not.
fn check_consistent<Scalar>(vectors: &ProverVectors<Scalar>) -> Result<(), crate::Error> {
    use crate::Error;
    let rows = vectors.a.len();
    if vectors.b.len() != rows || vectors.c.len() != rows {
        return Err(Error::InconsistentAssignment("a, b and c differ in length"));
    }
    if vectors.b_input_density.bv.len() != vectors.input_assignment.len() {
        return Err(Error::InconsistentAssignment(
            "the B input density does not cover the inputs",
        ));
    }
    let aux = vectors.aux_assignment.len();
    if vectors.a_aux_density.bv.len() != aux || vectors.b_aux_density.bv.len() != aux {
        return Err(Error::InconsistentAssignment(
            "the aux densities do not cover the aux values",
        ));
    }
    Ok(())
}

/// The checks before any work: randomness counts, empty or inconsistent assignments, one
/// shape and one set of densities for the whole batch. Errors name the member.
fn check_batch<Scalar>(
    assignments: &[ProverVectors<Scalar>],
    r: usize,
    s: usize,
) -> Result<(), crate::Error> {
    use crate::Error;
    if r != assignments.len() || s != assignments.len() {
        return Err(Error::Randomness {
            assignments: assignments.len(),
            r,
            s,
        });
    }
    let summary = |x: &ProverVectors<Scalar>| {
        let shape = x.shape();
        (
            (shape.inputs, shape.aux, shape.constraints),
            (
                x.a_aux_density.get_total_density(),
                x.b_input_density.get_total_density(),
                x.b_aux_density.get_total_density(),
            ),
        )
    };
    let Some(first) = assignments.first().map(summary) else {
        return Ok(());
    };
    for (index, assignment) in assignments.iter().enumerate() {
        check_consistent(assignment).map_err(|e| e.member(index))?;
        let (shape, densities) = summary(assignment);
        if shape.0 == 0 || shape.2 == 0 {
            return Err(Error::EmptyAssignment.member(index));
        }
        if (shape, densities) != first {
            return Err(Error::ShapeMismatch {
                first: first.0,
                this: shape,
            }
            .member(index));
        }
    }
    Ok(())
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

        use crate::vectors::ProverVectors;
        use crate::Error;

        fn gpu_error(e: impl std::fmt::Display) -> Error {
            Error::Synthesis(SynthesisError::IoError(std::io::Error::other(
                e.to_string(),
            )))
        }

        /// The values' byte representations; the values are dropped, or kept in `spent`
        /// (storage for the next synthesis, which overwrites them) when it is asked for.
        fn reprs<F: PrimeField>(values: Vec<F>, spent: Option<&mut Vec<F>>) -> Arc<Vec<F::Repr>> {
            match spent {
                None => Arc::new(values.into_iter().map(|v| v.to_repr()).collect()),
                Some(spent) => {
                    let reprs = Arc::new(values.iter().map(|v| v.to_repr()).collect());
                    *spent = values;
                    reprs
                }
            }
        }

        /// The coefficients of H = (A·B - C) / Z, as bellperson computes them; a, b and c
        /// move into the evaluation domains, and their storage is dropped as soon as it is
        /// used, or kept in `spent` when it is asked for.
        fn h_coefficients<F: PrimeField + GpuName>(
            worker: &Worker,
            [a, b, c]: [Vec<F>; 3],
            fft: &mut Option<LockedFftKernel<F>>,
            spent: Option<&mut ProverVectors<F>>,
        ) -> Result<Arc<Vec<F::Repr>>, Error> {
            let mut a = EvaluationDomain::from_coeffs(a)?;
            let mut b = EvaluationDomain::from_coeffs(b)?;
            let mut c = EvaluationDomain::from_coeffs(c)?;
            EvaluationDomain::ifft_many(&mut [&mut a, &mut b, &mut c], worker, fft)
                .map_err(gpu_error)?;
            EvaluationDomain::coset_fft_many(&mut [&mut a, &mut b, &mut c], worker, fft)
                .map_err(gpu_error)?;
            a.mul_assign(worker, &b);
            let b = spent.is_some().then(|| b.into_coeffs());
            a.sub_assign(worker, &c);
            let c = spent.is_some().then(|| c.into_coeffs());
            a.divide_by_z_on_coset(worker);
            a.icoset_fft(worker, fft).map_err(gpu_error)?;
            let mut coeffs = a.into_coeffs();
            coeffs.pop();
            Ok(match (spent, b, c) {
                (Some(spent), Some(b), Some(c)) => {
                    (spent.b, spent.c) = (b, c);
                    reprs(coeffs, Some(&mut spent.a))
                }
                _ => reprs(coeffs, None),
            })
        }

        /// Groth16 proofs for `assignments` (from [`crate::synthesize`], a recording, or
        /// [`crate::synthesize_batch`]), with randomness `r[i]`, `s[i]` for the i-th: the
        /// same proofs bellperson's `create_proof_batch` makes for the same circuits and
        /// randomness. All assignments must be of one circuit, the one `params` was made for.
        pub fn prove<E, P>(
            params: P,
            assignments: Vec<ProverVectors<E::Fr>>,
            r: &[E::Fr],
            s: &[E::Fr],
        ) -> Result<Vec<Proof<E>>, Error>
        where
            E: MultiMillerLoop,
            E::Fr: GpuName,
            E::G1Affine: GpuName,
            E::G2Affine: GpuName,
            P: ParameterSource<E>,
        {
            prove_with_priority(params, assignments, r, s, false)
        }

        /// [`prove`], with `priority` passed to bellperson's GPU kernels (as its
        /// `*_in_priority` functions do: a prioritized proof is never pushed to the CPU).
        pub fn prove_with_priority<E, P>(
            params: P,
            assignments: Vec<ProverVectors<E::Fr>>,
            r: &[E::Fr],
            s: &[E::Fr],
            priority: bool,
        ) -> Result<Vec<Proof<E>>, Error>
        where
            E: MultiMillerLoop,
            E::Fr: GpuName,
            E::G1Affine: GpuName,
            E::G2Affine: GpuName,
            P: ParameterSource<E>,
        {
            prove_batch(params, assignments, r, s, priority, None)
        }

        /// [`prove_with_priority`], handing back every member's vectors (their storage; the
        /// values are spent) for the next synthesis of the structure (see
        /// [`crate::precompiled::cache::give_back`]). A proof then holds its a, b, c and aux
        /// storage until it is made, where [`prove`] frees each as soon as it is used.
        #[allow(clippy::type_complexity)]
        pub fn prove_keeping_buffers<E, P>(
            params: P,
            assignments: Vec<ProverVectors<E::Fr>>,
            r: &[E::Fr],
            s: &[E::Fr],
            priority: bool,
        ) -> Result<(Vec<Proof<E>>, Vec<ProverVectors<E::Fr>>), Error>
        where
            E: MultiMillerLoop,
            E::Fr: GpuName,
            E::G1Affine: GpuName,
            E::G2Affine: GpuName,
            P: ParameterSource<E>,
        {
            let mut spent = Vec::with_capacity(assignments.len());
            let proofs = prove_batch(params, assignments, r, s, priority, Some(&mut spent))?;
            Ok((proofs, spent))
        }

        fn prove_batch<E, P>(
            params: P,
            assignments: Vec<ProverVectors<E::Fr>>,
            r: &[E::Fr],
            s: &[E::Fr],
            priority: bool,
            mut spent: Option<&mut Vec<ProverVectors<E::Fr>>>,
        ) -> Result<Vec<Proof<E>>, Error>
        where
            E: MultiMillerLoop,
            E::Fr: GpuName,
            E::G1Affine: GpuName,
            E::G2Affine: GpuName,
            P: ParameterSource<E>,
        {
            super::check_batch(&assignments, r.len(), s.len())?;
            let Some(first) = assignments.first() else {
                return Ok(Vec::new());
            };
            let shape = first.shape();
            let a_aux_total = first.a_aux_density.get_total_density();
            let b_input_total = first.b_input_density.get_total_density();
            let b_aux_total = first.b_aux_density.get_total_density();

            let vk = params.get_vk(shape.inputs)?.clone();
            if vk.ic.len() != shape.inputs {
                return Err(Error::InputCount {
                    parameters: vk.ic.len(),
                    assignment: shape.inputs,
                });
            }
            if bool::from(vk.delta_g1.is_identity() | vk.delta_g2.is_identity()) {
                return Err(SynthesisError::UnexpectedIdentity.into());
            }
            let worker = Worker::new();
            let h_bases = params.get_h(shape.constraints)?;
            let l_bases = params.get_l(shape.aux)?;
            let (a_input_bases, a_aux_bases) = params.get_a(shape.inputs, a_aux_total)?;
            let (b_g1_input_bases, b_g1_aux_bases) = params.get_b_g1(b_input_total, b_aux_total)?;
            let (b_g2_input_bases, b_g2_aux_bases) = params.get_b_g2(b_input_total, b_aux_total)?;
            let mut fft_kernel = Some(LockedFftKernel::<E::Fr>::new(priority));
            let mut g1_kernel = LockedMultiexpKernel::<E::G1Affine>::new(priority);
            let mut g2_kernel = LockedMultiexpKernel::<E::G2Affine>::new(priority);

            let mut proofs = Vec::with_capacity(assignments.len());
            for ((assignment, &r), &s) in assignments.into_iter().zip(r).zip(s) {
                let ProverVectors {
                    a,
                    b,
                    c,
                    input_assignment,
                    aux_assignment,
                    a_aux_density,
                    b_input_density,
                    b_aux_density,
                } = assignment;
                let mut kept = spent.is_some().then(ProverVectors::default);
                let h_exponents =
                    h_coefficients(&worker, [a, b, c], &mut fft_kernel, kept.as_mut())?;
                let inputs = reprs(
                    input_assignment,
                    kept.as_mut().map(|k| &mut k.input_assignment),
                );
                let aux = reprs(aux_assignment, kept.as_mut().map(|k| &mut k.aux_assignment));
                let a_aux_density = Arc::new(a_aux_density);
                let b_input_density = Arc::new(b_input_density);
                let b_aux_density = Arc::new(b_aux_density);

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
                drop(h_exponents);
                let l = g1(&l_bases, &aux, None)?;
                let a_answer = g1(&a_input_bases, &inputs, None)?
                    + g1(&a_aux_bases, &aux, Some(&a_aux_density))?;
                let b_g1_answer = g1(&b_g1_input_bases, &inputs, Some(&b_input_density))?
                    + g1(&b_g1_aux_bases, &aux, Some(&b_aux_density))?;
                let mut g2 = |bases: &_, exponents: &Arc<Vec<_>>, density: &Arc<_>| {
                    multiexp(
                        &worker,
                        Clone::clone(bases),
                        Arc::clone(density),
                        exponents.clone(),
                        &mut g2_kernel,
                    )
                    .wait()
                    .map_err(gpu_error)
                };
                let b_g2_answer = g2(&b_g2_input_bases, &inputs, &b_input_density)?
                    + g2(&b_g2_aux_bases, &aux, &b_aux_density)?;

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
                if let (Some(spent), Some(kept)) = (spent.as_deref_mut(), kept) {
                    spent.push(kept);
                }
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
#[cfg(feature = "bellperson-0.26")]
pub mod v0_26 {
    prover_for!(bellperson);
}

/// `prove` for bellperson 0.27 (filecoin-proofs 19.1).
#[cfg(feature = "bellperson-0.27")]
pub mod v0_27 {
    prover_for!(bellperson_027);
}
