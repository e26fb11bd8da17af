//! Proving from synthesized [`ProverVectors`], one module per bellperson release (each
//! behind its cargo feature): the FFTs for H, the multi-exponentiations and the randomized
//! proof, through bellperson's public domain, multiexp and parameter-source APIs, so a GPU
//! build of bellperson proves on the GPU here too.
//!
//! A batch reads each of the parameters' queries once (a mapped parameter file is tens of
//! gigabytes at 32 GiB) and checks, before any multi-exponentiation, that every query fits
//! the circuit: the H query one base per coefficient of the domain's quotient, L one per
//! aux value, A and B one per input and per variable their densities mark. Parameters of
//! another circuit are an error naming the query, not a proof that cannot verify.
//!
//! `prove` consumes the vectors: a, b and c move into the FFT domain and the aux values are
//! dropped as soon as their byte representations exist, so a proof holds less memory than
//! bellperson's own prover, which keeps every member's vectors until its last FFT.

use crate::error::Error;
use crate::vectors::{ProverVectors, Shape};

/// What every member of one batch must share with the first: its shape and its densities'
/// totals (the parameters' A and B queries are read for those).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct Layout {
    pub(crate) shape: Shape,
    pub(crate) a_aux: usize,
    pub(crate) b_input: usize,
    pub(crate) b_aux: usize,
}

impl Layout {
    /// The layout of `vectors`, checked for consistency (a hand-built value may not be).
    pub(crate) fn of<Scalar>(vectors: &ProverVectors<Scalar>) -> Result<Layout, Error> {
        let shape = vectors.shape();
        if vectors.b.len() != shape.constraints || vectors.c.len() != shape.constraints {
            return Err(Error::InconsistentAssignment("a, b and c differ in length"));
        }
        if vectors.b_input_density.bv.len() != shape.inputs {
            return Err(Error::InconsistentAssignment(
                "the B input density does not cover the inputs",
            ));
        }
        if vectors.a_aux_density.bv.len() != shape.aux
            || vectors.b_aux_density.bv.len() != shape.aux
        {
            return Err(Error::InconsistentAssignment(
                "the aux densities do not cover the aux values",
            ));
        }
        if shape.inputs == 0 || shape.constraints == 0 {
            return Err(Error::EmptyAssignment);
        }
        Ok(Layout {
            shape,
            a_aux: vectors.a_aux_density.get_total_density(),
            b_input: vectors.b_input_density.get_total_density(),
            b_aux: vectors.b_aux_density.get_total_density(),
        })
    }

    /// The FFT domain the prover evaluates a, b and c over: the smallest power of two at
    /// or above the number of constraints.
    pub(crate) fn domain(&self) -> usize {
        self.shape.constraints.next_power_of_two()
    }
}

/// Bases a query holds for the circuit: `(bases, skipped)` as a parameter source hands
/// them out (a builder may skip the first bases of a shared vector).
pub(crate) fn check_query(
    query: &'static str,
    (bases, skipped): (usize, usize),
    needed: usize,
    exact: bool,
) -> Result<(), Error> {
    let held = bases.saturating_sub(skipped);
    if held == needed || (!exact && held > needed) {
        Ok(())
    } else {
        Err(Error::ParameterMismatch {
            query,
            bases: held,
            needed,
        })
    }
}

/// Generates the prover for one bellperson release; the releases share this API but their
/// types are distinct.
macro_rules! prover_for {
    ($bellperson:ident) => {
        use std::sync::Arc;

        use ec_gpu_gen::multiexp_cpu::{FullDensity, SourceBuilder};
        use ec_gpu_gen::threadpool::Worker;
        use ff::{Field, PrimeField};
        use group::{prime::PrimeCurveAffine, Curve};
        use pairing::MultiMillerLoop;
        use $bellperson::domain::EvaluationDomain;
        use $bellperson::gpu::{GpuName, LockedFftKernel, LockedMultiexpKernel};
        use $bellperson::groth16::{
            prepare_verifying_key, verify_proof, ParameterSource, PreparedVerifyingKey, Proof,
            VerifyingKey,
        };
        use $bellperson::multiexp::multiexp;
        use $bellperson::SynthesisError;

        use super::{check_query, Layout};
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

        /// One batch's proving: the parameters' queries read and checked once, for the
        /// layout every member shares, then one member at a time.
        pub(crate) struct BatchProver<E: MultiMillerLoop, P: ParameterSource<E>> {
            layout: Layout,
            vk: VerifyingKey<E>,
            prepared: Option<PreparedVerifyingKey<E>>,
            h: P::G1Builder,
            l: P::G1Builder,
            a: (P::G1Builder, P::G1Builder),
            b_g1: (P::G1Builder, P::G1Builder),
            b_g2: (P::G2Builder, P::G2Builder),
            worker: Worker,
            fft: Option<LockedFftKernel<E::Fr>>,
            g1: LockedMultiexpKernel<E::G1Affine>,
            g2: LockedMultiexpKernel<E::G2Affine>,
        }

        impl<E, P> BatchProver<E, P>
        where
            E: MultiMillerLoop,
            E::Fr: GpuName,
            E::G1Affine: GpuName,
            E::G2Affine: GpuName,
            P: ParameterSource<E>,
        {
            /// Reads the parameters' queries for members laid out as `first`, and checks
            /// that each fits; `priority` goes to bellperson's GPU kernels (a prioritized
            /// proof is never pushed to the CPU).
            pub(crate) fn new(
                params: &P,
                first: &ProverVectors<E::Fr>,
                priority: bool,
            ) -> Result<Self, Error> {
                let layout = Layout::of(first)?;
                let shape = layout.shape;
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
                let h = params.get_h(layout.domain())?;
                let l = params.get_l(shape.aux)?;
                let a = params.get_a(shape.inputs, layout.a_aux)?;
                let b_g1 = params.get_b_g1(layout.b_input, layout.b_aux)?;
                let b_g2 = params.get_b_g2(layout.b_input, layout.b_aux)?;
                // The quotient H has one coefficient fewer than the domain.
                check_query("H", h.clone().get().len_skip(), layout.domain() - 1, true)?;
                check_query("L", l.clone().get().len_skip(), shape.aux, true)?;
                check_query(
                    "A (inputs)",
                    a.0.clone().get().len_skip(),
                    shape.inputs,
                    false,
                )?;
                check_query("A (aux)", a.1.clone().get().len_skip(), layout.a_aux, true)?;
                let b1 = (
                    b_g1.0.clone().get().len_skip(),
                    b_g1.1.clone().get().len_skip(),
                );
                check_query("B in G1 (inputs)", b1.0, layout.b_input, false)?;
                check_query("B in G1 (aux)", b1.1, layout.b_aux, true)?;
                let b2 = (
                    b_g2.0.clone().get().len_skip(),
                    b_g2.1.clone().get().len_skip(),
                );
                check_query("B in G2 (inputs)", b2.0, layout.b_input, false)?;
                check_query("B in G2 (aux)", b2.1, layout.b_aux, true)?;
                Ok(BatchProver {
                    layout,
                    vk,
                    prepared: None,
                    h,
                    l,
                    a,
                    b_g1,
                    b_g2,
                    worker: Worker::new(),
                    fft: Some(LockedFftKernel::<E::Fr>::new(priority)),
                    g1: LockedMultiexpKernel::<E::G1Affine>::new(priority),
                    g2: LockedMultiexpKernel::<E::G2Affine>::new(priority),
                })
            }

            /// The proof of one member with randomness `r`, `s`, and, when `keep`, the
            /// member's storage (its values spent) for the next synthesis. A member laid
            /// out otherwise than the first is an error.
            pub(crate) fn prove(
                &mut self,
                assignment: ProverVectors<E::Fr>,
                r: E::Fr,
                s: E::Fr,
                keep: bool,
            ) -> Result<(Proof<E>, Option<ProverVectors<E::Fr>>), Error> {
                let layout = Layout::of(&assignment)?;
                if layout != self.layout {
                    return Err(Error::ShapeMismatch {
                        first: self.layout.shape,
                        this: layout.shape,
                    });
                }
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
                let mut kept = keep.then(ProverVectors::default);
                let worker = &self.worker;
                let h_exponents = h_coefficients(worker, [a, b, c], &mut self.fft, kept.as_mut())?;
                let inputs = reprs(
                    input_assignment,
                    kept.as_mut().map(|k| &mut k.input_assignment),
                );
                let aux = reprs(aux_assignment, kept.as_mut().map(|k| &mut k.aux_assignment));
                let a_aux_density = Arc::new(a_aux_density);
                let b_input_density = Arc::new(b_input_density);
                let b_aux_density = Arc::new(b_aux_density);

                let g1_kernel = &mut self.g1;
                let mut g1 = |bases: &P::G1Builder,
                              exponents: &Arc<Vec<_>>,
                              dense: Option<&Arc<_>>| {
                    let bases = Clone::clone(bases);
                    match dense {
                        None => multiexp(worker, bases, FullDensity, exponents.clone(), g1_kernel),
                        Some(density) => multiexp(
                            worker,
                            bases,
                            Arc::clone(density),
                            exponents.clone(),
                            g1_kernel,
                        ),
                    }
                    .wait()
                    .map_err(gpu_error)
                };
                let h = g1(&self.h, &h_exponents, None)?;
                drop(h_exponents);
                let l = g1(&self.l, &aux, None)?;
                let a_answer =
                    g1(&self.a.0, &inputs, None)? + g1(&self.a.1, &aux, Some(&a_aux_density))?;
                let b_g1_answer = g1(&self.b_g1.0, &inputs, Some(&b_input_density))?
                    + g1(&self.b_g1.1, &aux, Some(&b_aux_density))?;
                let g2_kernel = &mut self.g2;
                let mut g2 = |bases: &P::G2Builder, exponents: &Arc<Vec<_>>, density: &Arc<_>| {
                    multiexp(
                        worker,
                        Clone::clone(bases),
                        Arc::clone(density),
                        exponents.clone(),
                        g2_kernel,
                    )
                    .wait()
                    .map_err(gpu_error)
                };
                let b_g2_answer = g2(&self.b_g2.0, &inputs, &b_input_density)?
                    + g2(&self.b_g2.1, &aux, &b_aux_density)?;

                let vk = &self.vk;
                let g_a = vk.delta_g1 * r + vk.alpha_g1 + a_answer;
                let g_b = vk.delta_g2 * s + vk.beta_g2 + b_g2_answer;
                let g_c = a_answer * s
                    + b_g1_answer * r
                    + vk.delta_g1 * (r * s)
                    + vk.alpha_g1 * s
                    + vk.beta_g1 * r
                    + h
                    + l;
                let proof = Proof {
                    a: g_a.to_affine(),
                    b: g_b.to_affine(),
                    c: g_c.to_affine(),
                };
                Ok((proof, kept))
            }

            /// Whether `proof` verifies against the parameters' verifying key for these
            /// public inputs (the constant one excluded).
            pub(crate) fn verifies(&mut self, proof: &Proof<E>, public: &[E::Fr]) -> bool {
                let prepared = self
                    .prepared
                    .get_or_insert_with(|| prepare_verifying_key(&self.vk));
                matches!(verify_proof(prepared, proof, public), Ok(true))
            }
        }

        /// The length and skip of a parameter source's bases.
        trait LenSkip {
            fn len_skip(self) -> (usize, usize);
        }

        impl<G> LenSkip for (Arc<Vec<G>>, usize) {
            fn len_skip(self) -> (usize, usize) {
                (self.0.len(), self.1)
            }
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
            let (proofs, _) = prove_batch(&params, assignments, r, s, priority, false)?;
            Ok(proofs)
        }

        /// [`prove_with_priority`], handing back every member's vectors (their storage; the
        /// values are spent) for the next synthesis of the structure, such as
        /// [`crate::precompiled::Recording::synthesize_into`]. A proof then holds its a, b, c
        /// and aux storage until it is made, where [`prove`] frees each as soon as it is
        /// used.
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
            prove_batch(&params, assignments, r, s, priority, true)
        }

        #[allow(clippy::type_complexity)]
        fn prove_batch<E, P>(
            params: &P,
            assignments: Vec<ProverVectors<E::Fr>>,
            r: &[E::Fr],
            s: &[E::Fr],
            priority: bool,
            keep: bool,
        ) -> Result<(Vec<Proof<E>>, Vec<ProverVectors<E::Fr>>), Error>
        where
            E: MultiMillerLoop,
            E::Fr: GpuName,
            E::G1Affine: GpuName,
            E::G2Affine: GpuName,
            P: ParameterSource<E>,
        {
            if r.len() != assignments.len() || s.len() != assignments.len() {
                return Err(Error::Randomness {
                    assignments: assignments.len(),
                    r: r.len(),
                    s: s.len(),
                });
            }
            let Some(first) = assignments.first() else {
                return Ok((Vec::new(), Vec::new()));
            };
            // Every member is checked before the first is proven.
            let layout = Layout::of(first).map_err(|e| e.member(0))?;
            for (index, member) in assignments.iter().enumerate().skip(1) {
                let this = Layout::of(member).map_err(|e| e.member(index))?;
                if this != layout {
                    return Err(Error::ShapeMismatch {
                        first: layout.shape,
                        this: this.shape,
                    }
                    .member(index));
                }
            }
            let mut prover = BatchProver::new(params, first, priority)?;
            let mut proofs = Vec::with_capacity(assignments.len());
            let mut spent = Vec::new();
            for ((assignment, &r), &s) in assignments.into_iter().zip(r).zip(s) {
                let (proof, kept) = prover.prove(assignment, r, s, keep)?;
                proofs.push(proof);
                spent.extend(kept);
            }
            Ok((proofs, spent))
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
