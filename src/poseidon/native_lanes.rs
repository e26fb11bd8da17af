//! The native permutation with the state's elements 1 to 8 side by side in eight lanes
//! (`crate::lanes`, AVX-512 IFMA), element 0 on its own: for states of at most nine
//! elements (arities 2, 4 and 8: the tree_r_last and tree_c paths, comm_r, every PoSt
//! hash) on blstrs scalars where the CPU has IFMA. Everything else takes `native`'s scalar
//! permutation.
//!
//! The schedule is `native`'s: a full round's s-boxes are three lane products for the eight
//! elements and three scalar ones for element 0, its dense MDS product nine lane products
//! summed unreduced (one per row of the matrix, the row's element broadcast) plus element
//! 0's column as a sum across the lanes; a partial round's s-box is element 0's alone
//! (scalar), its `w_hat` sum a sum across the lanes and its `v_rest` updates one lane
//! product. Every value comes back fully reduced from the lanes, so what is written is the
//! scalar permutation's values bit for bit (the tests below hold it to the scalar
//! permutation slot for slot; `tests/poseidon_identity.rs` holds the path the CPU takes to
//! neptune's gadget).

use ff::PrimeField;
use neptune::poseidon::Arity;

use super::{quintic, FirstRound, Round, Schedule};
use crate::lanes::{is_blstrs, limbs, set_limbs, times_16, Fr8, Ifma, Wide8};

/// Lanes for element 1 onwards.
const LANES: usize = 8;

/// The lanes, when this hash can take them: blstrs scalars, a state of at most nine
/// elements, a CPU with AVX-512 IFMA.
pub(super) fn lanes_for<Scalar: PrimeField>(width: usize) -> Option<Ifma> {
    if is_blstrs::<Scalar>() && (2..=LANES + 1).contains(&width) {
        Ifma::detect()
    } else {
        None
    }
}

/// Hashes `preimage` on the lanes: writes every aux value but the hash into `slots`, in
/// the constraint path's order, and returns the hash.
pub(super) fn permute<Scalar: PrimeField, A: Arity<Scalar>>(
    _: Ifma,
    schedule: &Schedule<'_, Scalar, A>,
    preimage: &[Scalar],
    slots: &mut [Scalar],
) -> Scalar {
    // SAFETY: an `Ifma` exists only where the CPU has AVX-512F and IFMA, the features
    // `run` is compiled for; `lanes_for` gave it for blstrs scalars and at most nine
    // elements, which `run` relies on.
    unsafe { run(schedule, preimage, slots) }
}

/// Montgomery limbs of up to eight scalars, the lanes past them zero.
fn lane_limbs<Scalar: PrimeField>(values: &[Scalar]) -> [[u64; 4]; LANES] {
    let mut out = [[0u64; 4]; LANES];
    for (out, value) in out.iter_mut().zip(values) {
        *out = limbs(value);
    }
    out
}

/// A scalar from Montgomery limbs below `p`.
fn scalar<Scalar: PrimeField>(l: [u64; 4]) -> Scalar {
    let mut value = Scalar::ZERO;
    set_limbs(&mut value, l);
    value
}

/// Writes the aux values of a hash in order.
struct LaneSlots<'s, Scalar> {
    slots: &'s mut [Scalar],
    at: usize,
}

impl<Scalar: PrimeField> LaneSlots<'_, Scalar> {
    fn put(&mut self, value: Scalar) {
        self.slots[self.at] = value;
        self.at += 1;
    }

    /// Each of the first `n` lanes' values, lane by lane: that lane's value from every
    /// vector in `vectors`.
    fn put_lanes<const K: usize>(&mut self, n: usize, vectors: [[[u64; 4]; LANES]; K]) {
        for lane in 0..n {
            for vector in &vectors {
                set_limbs(&mut self.slots[self.at], vector[lane]);
                self.at += 1;
            }
        }
    }
}

/// `x`, `x²`, `x⁴` and `x⁵ (+ key)` in each lane: the s-box after the first round.
#[target_feature(enable = "avx512f,avx512ifma")]
fn sboxes(x: &Fr8, keys: Option<&Fr8>) -> [Fr8; 3] {
    let x2 = x.mul(&x.times_16());
    let x4 = x2.mul(&x2.times_16());
    let x5 = x4.mul(&x.times_16());
    [x2, x4, keys.map_or(x5, |keys| x5.add(keys))]
}

/// `Σ_i s_i · matrix[i][column]` with `s_0 = first` and `s_{i≥1}` the lanes: a sum across
/// the lanes plus element 0's product.
#[target_feature(enable = "avx512f,avx512ifma")]
fn column_sum<Scalar: PrimeField>(
    first: Scalar,
    rest: &Fr8,
    matrix: &[Vec<Scalar>],
    column: usize,
) -> Scalar {
    let mut weights = [[0u64; 4]; LANES];
    for (weight, row) in weights.iter_mut().zip(&matrix[1..]) {
        *weight = limbs(&row[column]);
    }
    let mut sum = Wide8::new();
    sum.add(rest, &Fr8::new(&weights).times_16());
    scalar::<Scalar>(sum.total()) + first * matrix[0][column]
}

/// The dense MDS product: element 0 and the lanes after it.
#[target_feature(enable = "avx512f,avx512ifma")]
fn dense<Scalar: PrimeField>(first: Scalar, rest: &Fr8, matrix: &[Vec<Scalar>]) -> (Scalar, Fr8) {
    // Each element broadcast as a factor: 16 times it, reduced (nine terms of weight 1).
    let elements = rest.times_16_reduced().limbs();
    let mut sum = Wide8::new();
    for (i, row) in matrix.iter().enumerate() {
        let element = if i == 0 {
            times_16(limbs(&first))
        } else {
            elements[i - 1]
        };
        sum.add(
            &Fr8::new(&lane_limbs(&row[1..])),
            &Fr8::splat(element).sixteenfold(),
        );
    }
    (column_sum(first, rest, matrix, 0), sum.reduce())
}

#[target_feature(enable = "avx512f,avx512ifma")]
fn run<Scalar: PrimeField, A: Arity<Scalar>>(
    schedule: &Schedule<'_, Scalar, A>,
    preimage: &[Scalar],
    slots: &mut [Scalar],
) -> Scalar {
    let n = schedule.width - 1;
    let lanes = |values: &[Scalar]| Fr8::new(&lane_limbs(values));
    let mut out = LaneSlots { slots, at: 0 };
    let FirstRound { pre, post, matrix } = schedule.first();
    let first = quintic(schedule.constants.domain_tag, Some(pre[0]), Some(post[0]));
    let shifted = lanes(preimage).add(&lanes(&pre[1..]));
    let [x2, x4, x5] = sboxes(&shifted, None);
    let x5 = x5.add(&lanes(&post[1..]));
    out.put_lanes(n, [x2.limbs(), x4.limbs(), x5.limbs()]);
    let (mut first, mut rest) = dense(first, &x5, matrix);
    let last = schedule.rounds() - 1;
    let mut hash = None;
    for r in 1..schedule.rounds() {
        match schedule.round(r) {
            Round::Full { post, matrix } => {
                let x = first;
                let x2 = x.square();
                let x4 = x2.square();
                let x5 = x4 * x;
                let y = post.map_or(x5, |keys| x5 + keys[0]);
                for value in [x, x2, x4, y] {
                    out.put(value);
                }
                let keys = post.map(|keys| lanes(&keys[1..]));
                let [x2, x4, ys] = sboxes(&rest, keys.as_ref());
                out.put_lanes(n, [rest.limbs(), x2.limbs(), x4.limbs(), ys.limbs()]);
                if r == last {
                    // Only element 1, the hash, is read after the last round.
                    hash = Some(column_sum(y, &ys, matrix, 1));
                } else {
                    (first, rest) = dense(y, &ys, matrix);
                }
            }
            Round::Partial { key, w_hat, v_rest } => {
                let x = first;
                let x2 = x.square();
                let x4 = x2.square();
                let y = x4 * x + key;
                for value in [x, x2, x4, y] {
                    out.put(value);
                }
                let mut sum = Wide8::new();
                sum.add(&rest, &lanes(&w_hat[1..]).times_16());
                first = scalar::<Scalar>(sum.total()) + y * w_hat[0];
                rest = rest.add(&Fr8::splat(limbs(&y)).mul(&lanes(v_rest).times_16()));
            }
        }
    }
    // The schedule always ends with a full round; were it not, element 1 is the hash.
    hash.unwrap_or_else(|| scalar(rest.limbs()[0]))
}

#[cfg(test)]
mod tests {
    use super::*;
    use blstrs::Scalar as Fr;
    use ff::Field;
    use generic_array::typenum::{U2, U4, U8};
    use neptune::hash_type::HashType;
    use neptune::poseidon::PoseidonConstants;
    use rand_core::SeedableRng;
    use rand_xorshift::XorShiftRng;

    /// LaneSlots and hash of both permutations, for random preimages and the extremes.
    fn both_agree<A: Arity<Fr>>(constants: &PoseidonConstants<Fr, A>) {
        let Some(ifma) = lanes_for::<Fr>(constants.width()) else {
            eprintln!("this CPU has no AVX-512 IFMA: nothing to compare");
            return;
        };
        let schedule = Schedule::new(constants, constants.arity()).unwrap();
        let mut rng = XorShiftRng::seed_from_u64(constants.arity() as u64);
        for round in 0..20 {
            let preimage: Vec<Fr> = (0..constants.arity())
                .map(|i| match (round, i % 3) {
                    (0, _) => Fr::ZERO,
                    (1, 0) => -Fr::ONE,
                    (1, _) => Fr::ONE,
                    _ => Fr::random(&mut rng),
                })
                .collect();
            let mut scalar = vec![Fr::ZERO; schedule.aux() - 1];
            let mut on_lanes = vec![Fr::ONE; schedule.aux() - 1];
            let expected = super::super::native::permute(&schedule, &preimage, &mut scalar);
            let got = permute(ifma, &schedule, &preimage, &mut on_lanes);
            assert_eq!(got, expected, "arity {}, round {round}", constants.arity());
            assert_eq!(
                on_lanes,
                scalar,
                "arity {}, round {round}",
                constants.arity()
            );
        }
    }

    #[test]
    fn lanes_write_the_scalar_permutations_values() {
        both_agree(&PoseidonConstants::<Fr, U2>::new());
        both_agree(&PoseidonConstants::<Fr, U4>::new());
        both_agree(&PoseidonConstants::<Fr, U8>::new());
        both_agree(&PoseidonConstants::<Fr, U8>::new_with_strength_and_type(
            neptune::Strength::Standard,
            HashType::ConstantLength(8),
        ));
        both_agree(&PoseidonConstants::<Fr, U2>::new_with_strength_and_type(
            neptune::Strength::Strengthened,
            HashType::MerkleTree,
        ));
    }

    #[test]
    fn wider_states_and_other_fields_keep_the_scalar_path() {
        assert!(lanes_for::<Fr>(12).is_none());
        assert!(lanes_for::<pasta_curves::Fp>(9).is_none());
    }
}
