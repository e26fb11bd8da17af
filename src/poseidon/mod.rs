//! Poseidon, constraint-identical to neptune 11's `circuit::poseidon_hash` (the gadget the
//! Filecoin circuits call: column hashes, tree_c and tree_r_last inclusion paths, comm_r, the
//! empty-sector update's randomness), with neptune's own [`PoseidonConstants`].
//!
//! Two paths lay out the same variables and constraints:
//! - building constraints (`constraints`): every constraint's combinations are written
//!   straight into the constraint system's linear combinations, from coefficient rows kept
//!   per hash, instead of through a temporary combination per MDS product;
//! - in a witness generator (`is_witness_generator`) with every preimage value known
//!   (`native`): the permutation is computed on field elements and every aux value the
//!   constraint path allocates is written in one bulk allocation, in the same order with the
//!   same values; the constraints are counted, not built. The hash itself is allocated as a
//!   real variable.
//!
//! Both follow the optimized schedule neptune's gadget uses: compressed round constants, a
//! dense MDS product in full rounds, the pre-sparse matrix before the partial rounds and one
//! sparse matrix per partial round. The permutation's intermediate values depend on that
//! schedule, so it is the one to follow, not the textbook one.
//!
//! Where ours differs from neptune's on purpose: a preimage whose length is not the arity,
//! a constant-length hash type of another length, and constants whose tables do not have
//! the sizes their round numbers need are errors (`IncompatibleLengthVector`) where neptune
//! asserts or indexes out of bounds.

mod constraints;
mod montgomery_sums;
mod native;
#[cfg(target_arch = "x86_64")]
#[allow(unsafe_code)]
mod native_lanes;
mod partial_rows;

use bellpepper_core::num::AllocatedNum;
use bellpepper_core::{ConstraintSystem, SynthesisError};
use ff::PrimeField;
use neptune::hash_type::HashType;
use neptune::poseidon::{Arity, PoseidonConstants};

/// The Poseidon hash of `preimage` (exactly `A` elements), laid out as neptune 11's
/// `circuit::poseidon_hash` lays it out: the same variables, constraints and values in the
/// same order, the same error where a value is missing.
pub fn poseidon_hash<CS, Scalar, A>(
    mut cs: CS,
    preimage: Vec<AllocatedNum<Scalar>>,
    constants: &PoseidonConstants<Scalar, A>,
) -> Result<AllocatedNum<Scalar>, SynthesisError>
where
    CS: ConstraintSystem<Scalar>,
    Scalar: PrimeField,
    A: Arity<Scalar>,
{
    let schedule = Schedule::new(constants, preimage.len())?;
    if cs.is_witness_generator() {
        let values: Option<Vec<Scalar>> = preimage.iter().map(AllocatedNum::get_value).collect();
        if let Some(values) = values {
            return native::hash(&mut cs, &schedule, &values);
        }
    }
    constraints::hash(&mut cs, &schedule, &preimage)
}

/// The first round: the domain tag's s-box is a constant; every preimage element takes a
/// round key before its s-box and one after; then the dense product with `matrix`.
struct FirstRound<'c, Scalar> {
    pre: &'c [Scalar],
    post: &'c [Scalar],
    matrix: &'c [Vec<Scalar>],
}

/// A later round of the permutation: its s-boxes with their round keys, then its MDS
/// product. Full rounds mix with a dense matrix, partial rounds with a sparse one; neptune's
/// schedule never pairs them otherwise, and both paths rely on it.
#[derive(Clone, Copy)]
enum Round<'c, Scalar> {
    /// A full round: every element, with a round key after it unless it is the last round.
    Full {
        post: Option<&'c [Scalar]>,
        matrix: &'c [Vec<Scalar>],
    },
    /// A partial round: element 0 only, with a round key after it; then
    /// `state'[0] = Σ_i state[i] · w_hat[i]` and `state'[j] = state[j] + state[0] · v_rest[j - 1]`.
    Partial {
        key: Scalar,
        w_hat: &'c [Scalar],
        v_rest: &'c [Scalar],
    },
}

/// The permutation's rounds for one set of constants, checked once per hash.
struct Schedule<'c, Scalar: PrimeField, A: Arity<Scalar>> {
    constants: &'c PoseidonConstants<Scalar, A>,
    width: usize,
    half: usize,
    partial: usize,
}

/// An error for constants or a preimage this gadget cannot hash.
fn unusable(what: String) -> SynthesisError {
    SynthesisError::IncompatibleLengthVector(format!("poseidon_hash: {what}"))
}

impl<'c, Scalar: PrimeField, A: Arity<Scalar>> Schedule<'c, Scalar, A> {
    /// The schedule of `constants` for a preimage of `len` elements; an error when the
    /// preimage is not of the arity or the constants' tables are not of the sizes their
    /// round numbers need (neptune panics on both).
    fn new(
        constants: &'c PoseidonConstants<Scalar, A>,
        len: usize,
    ) -> Result<Self, SynthesisError> {
        let (arity, width) = (constants.arity(), constants.width());
        if len != arity {
            return Err(unusable(format!(
                "a preimage of {len} elements for arity {arity}"
            )));
        }
        if let HashType::ConstantLength(length) = constants.hash_type {
            if length != arity {
                return Err(unusable(format!(
                    "a constant-length hash of {length} elements at arity {arity} (no padding)"
                )));
            }
        }
        let (full, partial) = (constants.full_rounds, constants.partial_rounds);
        let square = |m: &[Vec<Scalar>]| m.len() == width && m.iter().all(|row| row.len() == width);
        let sparse_ok = constants.sparse_matrixes.len() >= partial
            && constants.sparse_matrixes[..partial]
                .iter()
                .all(|s| s.w_hat.len() == width && s.v_rest.len() == width - 1);
        let keys_ok = full
            .checked_mul(width)
            .and_then(|k| k.checked_add(partial))
            .is_some_and(|k| constants.compressed_round_constants.len() >= k);
        if full < 2
            || full % 2 != 0
            || constants.half_full_rounds != full / 2
            || !square(&constants.mds_matrices.m)
            || !square(&constants.pre_sparse_matrix)
            || !sparse_ok
            || !keys_ok
        {
            return Err(unusable(format!(
                "constants for width {width} whose round numbers ({full} full, {partial} \
                 partial) do not match their tables"
            )));
        }
        Ok(Schedule {
            constants,
            width,
            half: full / 2,
            partial,
        })
    }

    /// Number of rounds.
    fn rounds(&self) -> usize {
        2 * self.half + self.partial
    }

    /// The last full round before the partial rounds mixes with the pre-sparse matrix.
    fn full_matrix(&self, r: usize) -> &'c [Vec<Scalar>] {
        if r + 1 == self.half {
            &self.constants.pre_sparse_matrix
        } else {
            &self.constants.mds_matrices.m
        }
    }

    /// Round 0.
    fn first(&self) -> FirstRound<'c, Scalar> {
        let (w, keys) = (self.width, &self.constants.compressed_round_constants);
        FirstRound {
            pre: &keys[..w],
            post: &keys[w..2 * w],
            matrix: self.full_matrix(0),
        }
    }

    /// Round `r`, from 1 to [`Self::rounds`] (excluded), with its round keys and MDS
    /// product.
    fn round(&self, r: usize) -> Round<'c, Scalar> {
        let (w, half, partial) = (self.width, self.half, self.partial);
        let keys = &self.constants.compressed_round_constants;
        let matrix = self.full_matrix(r);
        if r < half {
            Round::Full {
                post: Some(&keys[(r + 1) * w..(r + 2) * w]),
                matrix,
            }
        } else if r < half + partial {
            let sparse = &self.constants.sparse_matrixes[r - half];
            Round::Partial {
                key: keys[(half + 1) * w + (r - half)],
                w_hat: &sparse.w_hat,
                v_rest: &sparse.v_rest,
            }
        } else if r + 1 < self.rounds() {
            let at = (half + 1) * w + partial + (r - half - partial) * w;
            Round::Full {
                post: Some(&keys[at..at + w]),
                matrix,
            }
        } else {
            Round::Full { post: None, matrix }
        }
    }

    /// The partial rounds' sparse matrices, in order.
    fn sparse_rounds(&self) -> Vec<partial_rows::Sparse<'c, Scalar>> {
        self.constants.sparse_matrixes[..self.partial]
            .iter()
            .map(|sparse| (&sparse.w_hat[..], &sparse.v_rest[..]))
            .collect()
    }

    /// The namespace of round `r`, as neptune names it.
    fn round_name(&self, r: usize) -> String {
        let (half, partial) = (self.half, self.partial);
        if r == 0 {
            "first round".into()
        } else if r < half {
            format!("initial full round {r}")
        } else if r < half + partial {
            format!("partial round {}", r - half)
        } else if r + 1 < self.rounds() {
            format!("final full round {}", r - half - partial)
        } else {
            "terminal full round".into()
        }
    }

    /// Aux values one hash allocates: three per preimage s-box of the first round, four
    /// (the s-box input, x², x⁴, x⁵) per later s-box, and the hash.
    fn aux(&self) -> usize {
        let w = self.width;
        3 * (w - 1) + 4 * (w * (2 * self.half - 1) + self.partial) + 1
    }

    /// Constraints one hash enforces: one per aux value.
    fn constraints(&self) -> usize {
        self.aux()
    }
}

/// `(x + pre)^5 + post`, the s-box with its round keys, on a value.
fn quintic<Scalar: PrimeField>(x: Scalar, pre: Option<Scalar>, post: Option<Scalar>) -> Scalar {
    let x = pre.map_or(x, |pre| x + pre);
    let x4 = x.square().square();
    let x5 = x4 * x;
    post.map_or(x5, |post| x5 + post)
}

/// What one hash's MDS products on values need, made once per hash: a scratch state for
/// the dense product, and the wide sums where the field and the CPU allow them.
struct Mixer<Scalar> {
    scratch: Vec<Scalar>,
    sums: Option<montgomery_sums::MontgomerySums>,
}

impl<Scalar: PrimeField> Mixer<Scalar> {
    /// The mixer of a state of `width` elements.
    fn new(width: usize) -> Self {
        Mixer {
            scratch: Vec::with_capacity(width),
            sums: montgomery_sums::MontgomerySums::for_field::<Scalar>(),
        }
    }

    /// `state` times the dense `matrix` (`state'[j] = Σ_i state[i] · matrix[i][j]`).
    fn dense(&mut self, state: &mut [Scalar], matrix: &[Vec<Scalar>]) {
        if let Some(sums) = &self.sums {
            if sums.dense_mix(state, matrix) {
                return;
            }
        }
        self.scratch.clear();
        self.scratch.extend((0..state.len()).map(|j| {
            state
                .iter()
                .zip(matrix)
                .fold(Scalar::ZERO, |acc, (x, row)| acc + *x * row[j])
        }));
        state.copy_from_slice(&self.scratch);
    }

    /// A partial round's sparse product.
    fn sparse(&self, state: &mut [Scalar], w_hat: &[Scalar], v_rest: &[Scalar]) {
        let first = state[0];
        let fast = self.sums.as_ref().and_then(|sums| sums.dot(state, w_hat));
        let sum = fast.unwrap_or_else(|| {
            state
                .iter()
                .zip(w_hat)
                .fold(Scalar::ZERO, |acc, (x, w)| acc + *x * w)
        });
        for (x, v) in state[1..].iter_mut().zip(v_rest) {
            *x += first * v;
        }
        state[0] = sum;
    }
}
