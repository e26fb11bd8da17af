//! The native witness of a Poseidon hash: the permutation on field elements, every aux
//! value the constraint path allocates written in one bulk allocation (the hash itself
//! allocated as a real variable after them), and the constraints counted.

use bellpepper_core::num::AllocatedNum;
use bellpepper_core::{ConstraintSystem, SynthesisError};
use ff::PrimeField;
use neptune::poseidon::Arity;

use super::{quintic, FirstRound, Mixer, Round, Schedule};

/// Hashes `preimage` (known values) in the witness generator `cs`.
pub(super) fn hash<CS, Scalar, A>(
    cs: &mut CS,
    schedule: &Schedule<'_, Scalar, A>,
    preimage: &[Scalar],
) -> Result<AllocatedNum<Scalar>, SynthesisError>
where
    CS: ConstraintSystem<Scalar>,
    Scalar: PrimeField,
    A: Arity<Scalar>,
{
    // Every aux value but the hash, in the constraint path's order. `allocate_empty`, not
    // `allocate_empty_aux`: it is the one every witness generator implements (bellperson's
    // and bellpepper's `WitnessCS` have no other), and the trait's defaults panic.
    let (slots, _) = cs.allocate_empty(schedule.aux() - 1, 0);
    #[cfg(target_arch = "x86_64")]
    if let Some(ifma) = super::native_lanes::lanes_for::<Scalar>(schedule.width) {
        let hash = super::native_lanes::permute(ifma, schedule, preimage, slots);
        return finish(cs, schedule, hash);
    }
    let hash = permute(schedule, preimage, slots);
    finish(cs, schedule, hash)
}

/// The permutation on field elements: writes every aux value but the hash into `slots`,
/// in the constraint path's order, and returns the hash.
pub(super) fn permute<Scalar: PrimeField, A: Arity<Scalar>>(
    schedule: &Schedule<'_, Scalar, A>,
    preimage: &[Scalar],
    slots: &mut [Scalar],
) -> Scalar {
    let mut state = Vec::with_capacity(schedule.width);
    state.push(schedule.constants.domain_tag);
    state.extend_from_slice(preimage);
    let mut mixer = Mixer::new(schedule.width);
    let mut written = 0;
    let mut put = |value: Scalar| {
        slots[written] = value;
        written += 1;
    };
    let FirstRound { pre, post, matrix } = schedule.first();
    state[0] = quintic(state[0], Some(pre[0]), Some(post[0]));
    for ((x, &pre), &post) in state[1..].iter_mut().zip(&pre[1..]).zip(&post[1..]) {
        let shifted = *x + pre;
        let x2 = shifted.square();
        let x4 = x2.square();
        let x5 = x4 * shifted + post;
        put(x2);
        put(x4);
        put(x5);
        *x = x5;
    }
    mixer.dense(&mut state, matrix);
    let last = schedule.rounds() - 1;
    for r in 1..schedule.rounds() {
        match schedule.round(r) {
            Round::Full { post, matrix } => {
                for (i, x) in state.iter_mut().enumerate() {
                    *x = sbox(&mut put, *x, post.map(|keys| keys[i]));
                }
                if r == last {
                    // Only element 1, the hash, is read after the last round.
                    state[1] = state
                        .iter()
                        .zip(matrix)
                        .fold(Scalar::ZERO, |acc, (x, row)| acc + *x * row[1]);
                } else {
                    mixer.dense(&mut state, matrix);
                }
            }
            Round::Partial { key, w_hat, v_rest } => {
                state[0] = sbox(&mut put, state[0], Some(key));
                mixer.sparse(&mut state, w_hat, v_rest);
            }
        }
    }
    debug_assert_eq!(written, schedule.aux() - 1, "every slot written");
    state[1]
}

/// Allocates the hash as a real variable and counts the hash's constraints.
fn finish<CS, Scalar, A>(
    cs: &mut CS,
    schedule: &Schedule<'_, Scalar, A>,
    hash: Scalar,
) -> Result<AllocatedNum<Scalar>, SynthesisError>
where
    CS: ConstraintSystem<Scalar>,
    Scalar: PrimeField,
    A: Arity<Scalar>,
{
    let hash = AllocatedNum::alloc(cs.namespace(|| "hash result"), || Ok(hash))?;
    for _ in 0..schedule.constraints() {
        cs.enforce(|| "", |lc| lc, |lc| lc, |lc| lc);
    }
    Ok(hash)
}

/// One s-box after the first round: its input, x², x⁴ and x⁵ (plus the round key) are
/// allocated; returns the output.
#[inline]
fn sbox<Scalar: PrimeField>(
    put: &mut impl FnMut(Scalar),
    x: Scalar,
    post: Option<Scalar>,
) -> Scalar {
    let x2 = x.square();
    let x4 = x2.square();
    let x5 = x4 * x;
    let out = post.map_or(x5, |post| x5 + post);
    put(x);
    put(x2);
    put(x4);
    put(out);
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_s_box_helper_matches_quintic() {
        use blstrs::Scalar as Fr;
        let x = Fr::from(7u64);
        let mut seen = Vec::new();
        let out = sbox(&mut |v| seen.push(v), x, Some(Fr::from(3u64)));
        assert_eq!(out, quintic(x, None, Some(Fr::from(3u64))));
        assert_eq!(seen, [x, Fr::from(49u64), Fr::from(2401u64), out]);
    }
}
