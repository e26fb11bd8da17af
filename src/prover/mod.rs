//! Proving from synthesized [`ProverVectors`], one module per bellperson release (each
//! behind its cargo feature, the same code compiled for each: `release.rs`): the FFTs for
//! H, the multi-exponentiations and the randomized proof, through bellperson's public
//! domain, multiexp and parameter-source APIs, so a GPU build of bellperson (`cuda`,
//! `opencl`) proves on the GPU here too.
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

use ff::Field;

use crate::error::Error;
use crate::shape::Shape;
use crate::vectors::ProverVectors;

mod member;
#[cfg(feature = "bellperson-0.26")]
pub mod v0_26;
#[cfg(feature = "bellperson-0.27")]
pub mod v0_27;

pub(crate) use member::MemberProver;

/// A member's proof, and its storage (its values spent) when it was asked to keep it.
pub(crate) type Proven<Proof, Scalar> = (Proof, Option<ProverVectors<Scalar>>);

/// The zero-knowledge randomness bellperson's random provers draw for a batch of `count`
/// proofs: every `r`, then every `s`, from `rng`.
pub fn random_rs<F: Field>(count: usize, rng: &mut impl rand_core::RngCore) -> (Vec<F>, Vec<F>) {
    let r = (0..count).map(|_| F::random(&mut *rng)).collect();
    let s = (0..count).map(|_| F::random(&mut *rng)).collect();
    (r, s)
}

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

    /// That `vectors` are laid out as this batch's first member.
    pub(crate) fn check<Scalar>(&self, vectors: &ProverVectors<Scalar>) -> Result<(), Error> {
        let layout = Layout::of(vectors)?;
        if layout != *self {
            return Err(Error::ShapeMismatch {
                first: self.shape,
                this: layout.shape,
            });
        }
        Ok(())
    }
}

/// Checks a whole batch before its first member is proven: one `r` and one `s` per
/// member, every member laid out as the first; the first member, unless there is none.
pub(crate) fn check_batch<'a, Scalar>(
    assignments: &'a [ProverVectors<Scalar>],
    r: &[Scalar],
    s: &[Scalar],
) -> Result<Option<&'a ProverVectors<Scalar>>, Error> {
    if r.len() != assignments.len() || s.len() != assignments.len() {
        return Err(Error::Randomness {
            assignments: assignments.len(),
            r: r.len(),
            s: s.len(),
        });
    }
    let Some(first) = assignments.first() else {
        return Ok(None);
    };
    let layout = Layout::of(first).map_err(|e| e.member(0))?;
    for (index, member) in assignments.iter().enumerate().skip(1) {
        layout.check(member).map_err(|e| e.member(index))?;
    }
    Ok(Some(first))
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
