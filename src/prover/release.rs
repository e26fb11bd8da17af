//! The prover for one bellperson release, compiled once per release: `super::upstream` is
//! that release's crate (see `v0_26.rs`, `v0_27.rs`).
//!
//! bellperson's GPU kernels are held in boxed closures rather than in fields of their own
//! type: with bellperson's `cuda` or `opencl` feature the kernel types carry a lifetime, and
//! without they do not, so no code here names them and it compiles under every feature set
//! of bellperson, whichever crate of the graph turned it on.

use std::sync::Arc;

use ec_gpu_gen::multiexp_cpu::{DensityTracker, FullDensity, SourceBuilder};
use ec_gpu_gen::threadpool::Worker;
use ff::PrimeField;
use group::{prime::PrimeCurveAffine, Curve};
use pairing::MultiMillerLoop;

use super::upstream::domain::EvaluationDomain;
use super::upstream::gpu::{GpuName, LockedFftKernel, LockedMultiexpKernel};
use super::upstream::groth16::{
    prepare_verifying_key, verify_proof, ParameterSource, PreparedVerifyingKey, Proof, VerifyingKey,
};
use super::upstream::multiexp::multiexp;
use super::upstream::SynthesisError;
use crate::error::Error;
use crate::prover::{check_query, Layout, MemberProver, Proven};
use crate::vectors::ProverVectors;

fn gpu_error(e: impl std::fmt::Display) -> Error {
    Error::Prover(e.to_string())
}

/// The values' byte representations; the values are dropped, or kept in `spent` (storage
/// for the next synthesis, which overwrites them) when it is asked for.
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

/// The exponents of the quotient H for a member's a, b and c, storage kept in the spent
/// vectors when they are given.
type QuotientFn<F> = Box<
    dyn FnMut(
        &Worker,
        [Vec<F>; 3],
        Option<&mut ProverVectors<F>>,
    ) -> Result<Arc<Vec<<F as PrimeField>::Repr>>, Error>,
>;

/// A multi-exponentiation of one query's bases, over every exponent or those a density
/// marks.
type MultiexpFn<G, B> = Box<
    dyn FnMut(
        &Worker,
        &B,
        Option<&Arc<DensityTracker>>,
        &Arc<Vec<<<G as PrimeCurveAffine>::Scalar as PrimeField>::Repr>>,
    ) -> Result<<G as PrimeCurveAffine>::Curve, Error>,
>;

/// The FFT kernel for one batch, and the quotient computed with it.
fn quotient<F: PrimeField + GpuName>(priority: bool) -> QuotientFn<F> {
    let mut fft = Some(LockedFftKernel::<F>::new(priority));
    Box::new(move |worker, abc, spent| h_coefficients(worker, abc, &mut fft, spent))
}

/// A multi-exponentiation kernel of `G` for one batch.
fn multiexp_kernel<G, B>(priority: bool) -> MultiexpFn<G, B>
where
    G: PrimeCurveAffine + GpuName,
    B: SourceBuilder<G>,
{
    let mut kernel = LockedMultiexpKernel::<G>::new(priority);
    Box::new(move |worker, bases, density, exponents| {
        let bases = Clone::clone(bases);
        match density {
            None => multiexp(worker, bases, FullDensity, exponents.clone(), &mut kernel),
            Some(density) => multiexp(
                worker,
                bases,
                Arc::clone(density),
                exponents.clone(),
                &mut kernel,
            ),
        }
        .wait()
        .map_err(gpu_error)
    })
}

/// The coefficients of H = (A·B - C) / Z, as bellperson computes them; a, b and c move
/// into the evaluation domains, and their storage is dropped as soon as it is used, or kept
/// in `spent` when it is asked for.
fn h_coefficients<F: PrimeField + GpuName>(
    worker: &Worker,
    [a, b, c]: [Vec<F>; 3],
    fft: &mut Option<LockedFftKernel<F>>,
    spent: Option<&mut ProverVectors<F>>,
) -> Result<Arc<Vec<F::Repr>>, Error> {
    let mut a = EvaluationDomain::from_coeffs(a)?;
    let mut b = EvaluationDomain::from_coeffs(b)?;
    let mut c = EvaluationDomain::from_coeffs(c)?;
    EvaluationDomain::ifft_many(&mut [&mut a, &mut b, &mut c], worker, fft).map_err(gpu_error)?;
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

/// The verifying key's checks every prover makes before proving with it: one base of `ic`
/// per input, and no identity delta (which would make every proof trivially forgeable).
pub(crate) fn check_verifying_key<E: MultiMillerLoop>(
    vk: &VerifyingKey<E>,
    inputs: usize,
) -> Result<(), Error> {
    if vk.ic.len() != inputs {
        return Err(Error::InputCount {
            parameters: vk.ic.len(),
            assignment: inputs,
        });
    }
    if bool::from(vk.delta_g1.is_identity() | vk.delta_g2.is_identity()) {
        return Err(SynthesisError::UnexpectedIdentity.into());
    }
    Ok(())
}

/// Whether `proof` verifies against `prepared` (made from `vk` on first use) for these
/// public inputs (the constant one excluded).
pub(crate) fn verifies<E: MultiMillerLoop>(
    vk: &VerifyingKey<E>,
    prepared: &mut Option<PreparedVerifyingKey<E>>,
    proof: &Proof<E>,
    public: &[E::Fr],
) -> bool {
    let prepared = prepared.get_or_insert_with(|| prepare_verifying_key(vk));
    matches!(verify_proof(prepared, proof, public), Ok(true))
}

/// One batch's proving: the parameters' queries read and checked once, for the layout
/// every member shares, then one member at a time. (Under `cuda-supraseal` bellperson
/// 0.27's drop-ins prove with `SrsProver` instead, so its verification goes unused there.)
#[cfg_attr(feature = "cuda-supraseal", allow(dead_code))]
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
    quotient: QuotientFn<E::Fr>,
    g1: MultiexpFn<E::G1Affine, P::G1Builder>,
    g2: MultiexpFn<E::G2Affine, P::G2Builder>,
}

impl<E, P> BatchProver<E, P>
where
    E: ProvingEngine,
    P: ParameterSource<E>,
{
    /// Reads the parameters' queries for members laid out as `first`, and checks that each
    /// fits; `priority` goes to bellperson's GPU kernels (a prioritized proof is never
    /// pushed to the CPU).
    pub(crate) fn new(
        params: &P,
        first: &ProverVectors<E::Fr>,
        priority: bool,
    ) -> Result<Self, Error> {
        super::refuse_supraseal::<E, P>(params)?;
        let layout = Layout::of(first)?;
        let shape = layout.shape;
        let vk = params.get_vk(shape.inputs)?.clone();
        check_verifying_key(&vk, shape.inputs)?;
        let h = params.get_h(layout.domain())?;
        let l = params.get_l(shape.aux)?;
        let a = params.get_a(shape.inputs, layout.a_aux)?;
        let b_g1 = params.get_b_g1(layout.b_input, layout.b_aux)?;
        let b_g2 = params.get_b_g2(layout.b_input, layout.b_aux)?;
        let len = |bases: &P::G1Builder| bases.clone().get().len_skip();
        let len2 = |bases: &P::G2Builder| bases.clone().get().len_skip();
        // The quotient H has one coefficient fewer than the domain.
        check_query("H", len(&h), layout.domain() - 1, true)?;
        check_query("L", len(&l), shape.aux, true)?;
        check_query("A (inputs)", len(&a.0), shape.inputs, false)?;
        check_query("A (aux)", len(&a.1), layout.a_aux, true)?;
        check_query("B in G1 (inputs)", len(&b_g1.0), layout.b_input, false)?;
        check_query("B in G1 (aux)", len(&b_g1.1), layout.b_aux, true)?;
        check_query("B in G2 (inputs)", len2(&b_g2.0), layout.b_input, false)?;
        check_query("B in G2 (aux)", len2(&b_g2.1), layout.b_aux, true)?;
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
            quotient: quotient(priority),
            g1: multiexp_kernel(priority),
            g2: multiexp_kernel(priority),
        })
    }
}

impl<E, P> MemberProver<E::Fr> for BatchProver<E, P>
where
    E: ProvingEngine,
    P: ParameterSource<E>,
{
    /// Keeping holds a, b and c past the FFTs and the aux values beside their
    /// representations, through the multi-exponentiations: more memory per member in flight,
    /// so only retention asks for it.
    const KEEPS_FOR_FREE: bool = false;

    type Proof = Proof<E>;

    fn fits(&self, vectors: &ProverVectors<E::Fr>) -> Result<(), Error> {
        self.layout.check(vectors)
    }

    /// Proves through bellperson's FFT and multiexp kernels; kept storage has a, b and c
    /// spent (the FFTs ran in them), its input and aux values intact.
    fn prove(
        &mut self,
        assignment: ProverVectors<E::Fr>,
        r: E::Fr,
        s: E::Fr,
        keep: bool,
    ) -> Result<Proven<Proof<E>, E::Fr>, Error> {
        self.layout.check(&assignment)?;
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
        let h_exponents = (self.quotient)(worker, [a, b, c], kept.as_mut())?;
        let inputs = reprs(
            input_assignment,
            kept.as_mut().map(|k| &mut k.input_assignment),
        );
        let aux = reprs(aux_assignment, kept.as_mut().map(|k| &mut k.aux_assignment));
        let a_aux_density = Arc::new(a_aux_density);
        let b_input_density = Arc::new(b_input_density);
        let b_aux_density = Arc::new(b_aux_density);

        let g1 = &mut self.g1;
        let h = g1(worker, &self.h, None, &h_exponents)?;
        drop(h_exponents);
        let l = g1(worker, &self.l, None, &aux)?;
        let a_answer = g1(worker, &self.a.0, None, &inputs)?
            + g1(worker, &self.a.1, Some(&a_aux_density), &aux)?;
        let b_g1_answer = g1(worker, &self.b_g1.0, Some(&b_input_density), &inputs)?
            + g1(worker, &self.b_g1.1, Some(&b_aux_density), &aux)?;
        let g2 = &mut self.g2;
        let b_g2_answer = g2(worker, &self.b_g2.0, Some(&b_input_density), &inputs)?
            + g2(worker, &self.b_g2.1, Some(&b_aux_density), &aux)?;

        let proof = randomized::<E>(&self.vk, (a_answer, b_g1_answer, b_g2_answer), h + l, r, s);
        Ok((proof, kept))
    }

    fn verifies(&mut self, proof: &Proof<E>, public: &[E::Fr]) -> bool {
        verifies(&self.vk, &mut self.prepared, proof, public)
    }
}

/// The proof from the multi-exponentiations' answers (A, B in G1, B in G2, and H + L), with
/// the zero-knowledge randomness `r`, `s`: Groth16's A, B and C.
fn randomized<E: MultiMillerLoop>(
    vk: &VerifyingKey<E>,
    (a_answer, b_g1_answer, b_g2_answer): (E::G1, E::G1, E::G2),
    h_plus_l: E::G1,
    r: E::Fr,
    s: E::Fr,
) -> Proof<E> {
    let g_a = vk.delta_g1 * r + vk.alpha_g1 + a_answer;
    let g_b = vk.delta_g2 * s + vk.beta_g2 + b_g2_answer;
    let g_c = a_answer * s
        + b_g1_answer * r
        + vk.delta_g1 * (r * s)
        + vk.alpha_g1 * s
        + vk.beta_g1 * r
        + h_plus_l;
    Proof {
        a: g_a.to_affine(),
        b: g_b.to_affine(),
        c: g_c.to_affine(),
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

/// The pairing engines the provers and drop-ins take: bellperson's bounds for its GPU
/// kernels (each curve type named for them) and scalars whose representations threads
/// share, stated once. Every engine that meets them is one (`blstrs::Bls12`, Filecoin's).
pub trait ProvingEngine:
    MultiMillerLoop<Fr: GpuName + PrimeField<Repr: Sync>, G1Affine: GpuName, G2Affine: GpuName>
{
}

impl<E> ProvingEngine for E where
    E: MultiMillerLoop<Fr: GpuName + PrimeField<Repr: Sync>, G1Affine: GpuName, G2Affine: GpuName>
{
}

/// Groth16 proofs for `assignments` (from [`crate::synthesize`], a recording, or
/// [`crate::synthesize_batch`]), with randomness `r[i]`, `s[i]` for the i-th: the same
/// proofs bellperson's `create_proof_batch` makes for the same circuits and randomness.
/// All assignments must be of one circuit, the one `params` was made for.
pub fn prove<E, P>(
    params: P,
    assignments: Vec<ProverVectors<E::Fr>>,
    r: &[E::Fr],
    s: &[E::Fr],
) -> Result<Vec<Proof<E>>, Error>
where
    E: ProvingEngine,
    P: ParameterSource<E>,
{
    prove_with_priority(params, assignments, r, s, false)
}

/// [`prove`], with `priority` passed to bellperson's GPU kernels (as its `*_in_priority`
/// functions do: a prioritized proof is never pushed to the CPU).
pub fn prove_with_priority<E, P>(
    params: P,
    assignments: Vec<ProverVectors<E::Fr>>,
    r: &[E::Fr],
    s: &[E::Fr],
    priority: bool,
) -> Result<Vec<Proof<E>>, Error>
where
    E: ProvingEngine,
    P: ParameterSource<E>,
{
    let (proofs, _) = prove_batch(&params, assignments, r, s, priority, false)?;
    Ok(proofs)
}

/// [`prove_with_priority`], handing back every member's vectors (their storage; the values
/// are spent) for the next synthesis of the structure, such as
/// [`crate::precompiled::Recording::synthesize_into`]. A proof then holds its a, b, c and
/// aux storage until it is made, where [`prove`] frees each as soon as it is used.
#[allow(clippy::type_complexity)]
pub fn prove_keeping_buffers<E, P>(
    params: P,
    assignments: Vec<ProverVectors<E::Fr>>,
    r: &[E::Fr],
    s: &[E::Fr],
    priority: bool,
) -> Result<(Vec<Proof<E>>, Vec<ProverVectors<E::Fr>>), Error>
where
    E: ProvingEngine,
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
    E: ProvingEngine,
    P: ParameterSource<E>,
{
    let Some(first) = crate::prover::check_batch(&assignments, r, s)? else {
        return Ok((Vec::new(), Vec::new()));
    };
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
