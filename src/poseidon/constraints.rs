//! The constraint-building path: the permutation's variables and constraints as neptune's
//! gadget lays them out, names included, with each MDS combination kept as a row of
//! coefficients over the variables it ranges over and written straight into the one
//! constraint that allocates it; element 0's rows through the partial rounds, which the
//! constants alone decide, made once per thread (`partial_rows`).
//!
//! Between s-boxes every state element is such a combination, and all of them range over
//! the same variables (the basis): after a full round, the round's s-box outputs (in the
//! first round the constant one, standing for the domain tag's constant s-box, and the
//! preimage's outputs); each partial round adds its one s-box output. neptune's
//! combinations hold a term for every basis variable (its MDS products keep terms whose
//! coefficient is zero), so dense rows reproduce them term for term.

use bellpepper_core::num::AllocatedNum;
use bellpepper_core::{ConstraintSystem, LinearCombination, SynthesisError, Variable};
use ff::PrimeField;
use neptune::poseidon::Arity;

use std::rc::Rc;

use super::partial_rows::{PartialRows, Sparse};
use super::{quintic, FirstRound, Mixer, Round, Schedule};

/// The state between s-boxes: element `j` is `Σ_k rows[j][k] · basis[k]`, with its value
/// when every value is known.
struct Combinations<Scalar> {
    basis: Vec<Variable>,
    rows: Vec<Vec<Scalar>>,
    values: Option<Vec<Scalar>>,
}

impl<Scalar: PrimeField> Combinations<Scalar> {
    /// The state after a full round's dense product of its s-box `outputs` (variable,
    /// factor: what the variable is multiplied by before the product, one but for the
    /// domain tag's constant).
    fn dense(
        outputs: &[(Variable, Scalar)],
        values: Option<Vec<Scalar>>,
        matrix: &[Vec<Scalar>],
        mixer: &mut Mixer<Scalar>,
    ) -> Self {
        let rows = (0..outputs.len())
            .map(|j| {
                outputs
                    .iter()
                    .zip(matrix)
                    .map(|((_, factor), row)| {
                        if *factor == Scalar::ONE {
                            row[j]
                        } else {
                            *factor * row[j]
                        }
                    })
                    .collect()
            })
            .collect();
        let values = values.map(|mut state| {
            mixer.dense(&mut state, matrix);
            state
        });
        Combinations {
            basis: outputs.iter().map(|(variable, _)| *variable).collect(),
            rows,
            values,
        }
    }

    /// A partial round's sparse product, element 0 having become the s-box output `s`
    /// (with `value`): element 0 is `w_hat[0] · s + Σ_{i≥1} w_hat[i] · element i`, whose
    /// row is `first` (made by [`PartialRows`]), element `j ≥ 1` gains `v_rest[j - 1] · s`.
    fn sparse(
        &mut self,
        s: Variable,
        value: Option<Scalar>,
        first: &[Scalar],
        (w_hat, v_rest): Sparse<'_, Scalar>,
        mixer: &Mixer<Scalar>,
    ) {
        for (row, v) in self.rows[1..].iter_mut().zip(v_rest) {
            row.push(*v);
        }
        self.rows[0].clear();
        self.rows[0].extend_from_slice(first);
        self.basis.push(s);
        self.values = match (self.values.take(), value) {
            (Some(mut state), Some(value)) => {
                state[0] = value;
                mixer.sparse(&mut state, w_hat, v_rest);
                Some(state)
            }
            _ => None,
        };
    }

    /// `lc + element j`.
    fn add_to(&self, mut lc: LinearCombination<Scalar>, j: usize) -> LinearCombination<Scalar> {
        lc.reserve(1, self.basis.len());
        for (coefficient, variable) in self.rows[j].iter().zip(&self.basis) {
            lc.add_assign_term(*coefficient, *variable);
        }
        lc
    }

    /// Element `j` allocated, with the constraint `element · 1 = allocated`, as neptune's
    /// `ensure_allocated` does.
    fn allocate<CS: ConstraintSystem<Scalar>>(
        &self,
        cs: &mut CS,
        j: usize,
    ) -> Result<AllocatedNum<Scalar>, SynthesisError> {
        let value = self.values.as_ref().map(|values| values[j]);
        let v = AllocatedNum::alloc(cs.namespace(|| "allocate for Elt::Num"), || {
            value.ok_or(SynthesisError::AssignmentMissing)
        })?;
        // The element's value is already known: a prover's assignment need not sum its
        // terms (up to 66 of them in the full rounds after the partial ones).
        cs.enforce_with_a_value(
            || "enforce num allocation preserves lc",
            |lc| self.add_to(lc, j),
            value,
            |lc| lc + CS::one(),
            |lc| lc + v.get_variable(),
        );
        Ok(v)
    }
}

/// Hashes `preimage`, building every constraint.
pub(super) fn hash<CS, Scalar, A>(
    cs: &mut CS,
    schedule: &Schedule<'_, Scalar, A>,
    preimage: &[AllocatedNum<Scalar>],
) -> Result<AllocatedNum<Scalar>, SynthesisError>
where
    CS: ConstraintSystem<Scalar>,
    Scalar: PrimeField,
    A: Arity<Scalar>,
{
    let mut mixer = Mixer::new(schedule.width);
    let mut state = first_round(cs, schedule, preimage, &mut mixer)?;
    let sparse = schedule.sparse_rounds();
    let mut partial_rows: Option<Rc<PartialRows<Scalar>>> = None;
    for r in 1..schedule.rounds() {
        let mut cs = cs.namespace(|| schedule.round_name(r));
        match schedule.round(r) {
            Round::Full { post, matrix } => {
                let mut outputs = Vec::with_capacity(schedule.width);
                let mut values = Some(Vec::with_capacity(schedule.width));
                for i in 0..schedule.width {
                    let mut cs = cs.namespace(|| format!("quintic s-box {i}"));
                    let out = sbox(&mut cs, &state, i, post.map(|keys| keys[i]))?;
                    outputs.push((out.get_variable(), Scalar::ONE));
                    values = push_value(values, &out);
                }
                state = Combinations::dense(&outputs, values, matrix, &mut mixer);
            }
            Round::Partial { key, w_hat, v_rest } => {
                let mut cs = cs.namespace(|| "solitary quintic s-box");
                let out = sbox(&mut cs, &state, 0, Some(key))?;
                let rows = partial_rows
                    .get_or_insert_with(|| PartialRows::for_rounds(&state.rows, &sparse));
                state.sparse(
                    out.get_variable(),
                    out.get_value(),
                    rows.first(r - schedule.half),
                    (w_hat, v_rest),
                    &mixer,
                );
            }
        }
    }
    state.allocate(&mut cs.namespace(|| "hash result"), 1)
}

/// The first round: the domain tag's s-box folds into a constant (a coefficient on the
/// constant one), each preimage element takes its s-box with round keys before and after,
/// then the dense product.
fn first_round<CS, Scalar, A>(
    cs: &mut CS,
    schedule: &Schedule<'_, Scalar, A>,
    preimage: &[AllocatedNum<Scalar>],
    mixer: &mut Mixer<Scalar>,
) -> Result<Combinations<Scalar>, SynthesisError>
where
    CS: ConstraintSystem<Scalar>,
    Scalar: PrimeField,
    A: Arity<Scalar>,
{
    let FirstRound { pre, post, matrix } = schedule.first();
    let mut cs = cs.namespace(|| schedule.round_name(0));
    let tag = quintic(schedule.constants.domain_tag, Some(pre[0]), Some(post[0]));
    let mut outputs = Vec::with_capacity(schedule.width);
    outputs.push((CS::one(), tag));
    let mut values = Some(vec![tag]);
    for (i, x) in preimage.iter().enumerate() {
        let mut cs = cs.namespace(|| format!("quintic s-box {}", i + 1));
        let out = sbox_pre_add(&mut cs, x, pre[i + 1], post[i + 1])?;
        outputs.push((out.get_variable(), Scalar::ONE));
        values = push_value(values, &out);
    }
    Ok(Combinations::dense(&outputs, values, matrix, mixer))
}

/// `values` with `out`'s value appended, while every value is known.
fn push_value<Scalar: PrimeField>(
    values: Option<Vec<Scalar>>,
    out: &AllocatedNum<Scalar>,
) -> Option<Vec<Scalar>> {
    let (mut values, value) = (values?, out.get_value()?);
    values.push(value);
    Some(values)
}

/// A first-round s-box on the preimage element `x`: `(x + pre)^2`, its square, then
/// `(x + pre)^5 + post`.
fn sbox_pre_add<CS, Scalar>(
    cs: &mut CS,
    x: &AllocatedNum<Scalar>,
    pre: Scalar,
    post: Scalar,
) -> Result<AllocatedNum<Scalar>, SynthesisError>
where
    CS: ConstraintSystem<Scalar>,
    Scalar: PrimeField,
{
    let x2 = {
        let mut cs = cs.namespace(|| "(l+rk)^2");
        let x2 = AllocatedNum::alloc(cs.namespace(|| "squared sum"), || {
            let x = x.get_value().ok_or(SynthesisError::AssignmentMissing)?;
            Ok((x + pre).square())
        })?;
        cs.enforce(
            || "squared sum constraint",
            |lc| lc + x.get_variable() + (pre, CS::one()),
            |lc| lc + x.get_variable() + (pre, CS::one()),
            |lc| lc + x2.get_variable(),
        );
        x2
    };
    let x4 = x2.square(cs.namespace(|| "l^4"))?;
    mul_sum(
        &mut cs.namespace(|| "l4 * (l + rk)"),
        &x4,
        x,
        Some(pre),
        Some(post),
    )
}

/// A later s-box on element `i` of `state`: the element allocated, its square and fourth
/// power, then `x^5 (+ post)`.
fn sbox<CS, Scalar>(
    cs: &mut CS,
    state: &Combinations<Scalar>,
    i: usize,
    post: Option<Scalar>,
) -> Result<AllocatedNum<Scalar>, SynthesisError>
where
    CS: ConstraintSystem<Scalar>,
    Scalar: PrimeField,
{
    let x = state.allocate(&mut cs.namespace(|| "S-box input"), i)?;
    let x2 = x.square(cs.namespace(|| "l^2"))?;
    let x4 = x2.square(cs.namespace(|| "l^4"))?;
    mul_sum(&mut cs.namespace(|| "(l4 * l) + rk)"), &x4, &x, None, post)
}

/// `a · (b + pre) + post`, allocated, with the constraint `(b + pre) · a = result - post`.
fn mul_sum<CS, Scalar>(
    cs: &mut CS,
    a: &AllocatedNum<Scalar>,
    b: &AllocatedNum<Scalar>,
    pre: Option<Scalar>,
    post: Option<Scalar>,
) -> Result<AllocatedNum<Scalar>, SynthesisError>
where
    CS: ConstraintSystem<Scalar>,
    Scalar: PrimeField,
{
    let result = AllocatedNum::alloc(cs.namespace(|| "mul_sum"), || {
        let b = b.get_value().ok_or(SynthesisError::AssignmentMissing)?;
        let b = pre.map_or(b, |pre| b + pre);
        let product = b * a.get_value().ok_or(SynthesisError::AssignmentMissing)?;
        Ok(post.map_or(product, |post| product + post))
    })?;
    let annotation = match (pre.is_some(), post.is_some()) {
        (true, true) => "mul sum constraint pre-post-add",
        (false, true) => "mul sum constraint post-add",
        (true, false) => "mul sum constraint pre-add",
        (false, false) => "mul sum constraint",
    };
    cs.enforce(
        || annotation,
        |lc| {
            let lc = lc + b.get_variable();
            match pre {
                Some(pre) => lc + (pre, CS::one()),
                None => lc,
            }
        },
        |lc| lc + a.get_variable(),
        |lc| {
            let lc = lc + result.get_variable();
            match post {
                Some(post) => lc + (-post, CS::one()),
                None => lc,
            }
        },
    );
    Ok(result)
}
