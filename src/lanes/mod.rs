//! Eight BLS12-381 scalars at a time: Montgomery products, lazily summed products and
//! additions on AVX-512 IFMA's 52-bit multiply-adds, for the products Poseidon is made of
//! (its native witness, and the checks of its rows in pre-compiled evaluation).
//!
//! One `vpmadd52luq` multiplies eight 52-bit limbs and adds the low halves of the
//! products, so eight 5-limb products take 50 instructions and their Montgomery reduction
//! about 55 more: about a third of the time of eight of blst's scalar multiplications
//! where the CPU has it (Intel since Ice Lake, AMD since Zen 4). The scalars stay in
//! blstrs' Montgomery form (`x·2^256 mod p`), cut into five 52-bit limbs, so values go in
//! and out with shifts alone; the reduction divides by `2^260`, and the missing `2^4` is
//! carried by one operand of every product: constants are stored as the Montgomery form
//! of `16·c`, and a variable operand is shifted left by four bits (below `2^259`, it still
//! fits five limbs). Every result comes back fully reduced, so the bits are the field's.
//!
//! Only x86_64 with the `neptune-11` feature (which brings blstrs) has this path, chosen at
//! compile time and asked of the CPU at run time; everything that uses it keeps its scalar
//! path for other CPUs (and for valgrind, whose CPU has no AVX-512).

#[cfg(target_arch = "x86_64")]
#[allow(unsafe_code)]
mod ifma_x86_64;

#[cfg(target_arch = "x86_64")]
pub(crate) use ifma_x86_64::{Fr8, Ifma, Wide8};

use std::any::{Any, TypeId};
use std::sync::atomic::{AtomicBool, Ordering};

use blst::blst_fr;
use ff::PrimeField;

/// Whether the lanes are used where the CPU has them (`tuning::Knobs::lanes`); read once
/// per hash or evaluated stretch.
static ON: AtomicBool = AtomicBool::new(true);

/// Turns the lanes off or back on for the whole process.
pub(crate) fn set_enabled(on: bool) {
    ON.store(on, Ordering::Relaxed);
}

/// Whether the lanes may be used (they are unless turned off).
#[cfg(target_arch = "x86_64")]
#[inline]
pub(crate) fn enabled() -> bool {
    ON.load(Ordering::Relaxed)
}

/// Whether `Scalar` is blstrs' scalar, the one type these limbs describe.
#[inline(always)]
pub(crate) fn is_blstrs<Scalar: 'static>() -> bool {
    TypeId::of::<Scalar>() == TypeId::of::<blstrs::Scalar>()
}

/// The Montgomery limbs of `value`, through blstrs' public conversion to blst's `blst_fr`
/// (the type check is resolved at compile time: `Scalar` is known where this is inlined).
/// Only called once `Scalar` is known to be blstrs'.
#[inline(always)]
pub(crate) fn limbs<Scalar: PrimeField>(value: &Scalar) -> [u64; 4] {
    let value: &blstrs::Scalar = (value as &dyn Any)
        .downcast_ref()
        .expect("only blstrs scalars have these limbs");
    blst_fr::from(*value).l
}

/// Sets `value` to the scalar whose Montgomery limbs are `limbs`, fully reduced.
#[inline(always)]
pub(crate) fn set_limbs<Scalar: PrimeField>(value: &mut Scalar, limbs: [u64; 4]) {
    let value: &mut blstrs::Scalar = (value as &mut dyn Any)
        .downcast_mut()
        .expect("only blstrs scalars have these limbs");
    *value = blstrs::Scalar::from(blst_fr { l: limbs });
}

/// `x·16 mod p` for a scalar's Montgomery limbs below `p`: how a constant operand is
/// stored (see the module's comment).
#[cfg(target_arch = "x86_64")]
#[inline]
pub(crate) fn times_16(limbs: [u64; 4]) -> [u64; 4] {
    let mut x = limbs;
    for _ in 0..4 {
        x = double(x);
    }
    x
}

/// The BLS12-381 scalar field's modulus, little-endian.
pub(crate) const P: [u64; 4] = [
    0xffff_ffff_0000_0001,
    0x53bd_a402_fffe_5bfe,
    0x3339_d808_09a1_d805,
    0x73ed_a753_299d_7d48,
];

/// `2x mod p` for `x < p` (`p < 2^255`, so `2x` fits four limbs), without a branch: the
/// values are random, so a branch on them would be mispredicted half the time.
#[cfg(target_arch = "x86_64")]
#[inline]
fn double(x: [u64; 4]) -> [u64; 4] {
    let mut d = [0u64; 4];
    let mut carry = 0;
    for (d, &x) in d.iter_mut().zip(&x) {
        *d = x << 1 | carry;
        carry = x >> 63;
    }
    let mut r = [0u64; 4];
    let mut borrow = 0u64;
    for ((r, &d), &p) in r.iter_mut().zip(&d).zip(&P) {
        let (v, b1) = d.overflowing_sub(p);
        let (v, b2) = v.overflowing_sub(borrow);
        *r = v;
        borrow = u64::from(b1 | b2);
    }
    // All ones where 2x < p (keep it), zero where 2x - p is the answer.
    let keep = borrow.wrapping_neg();
    std::array::from_fn(|k| (d[k] & keep) | (r[k] & !keep))
}

#[cfg(all(test, target_arch = "x86_64"))]
mod tests {
    use super::*;
    use blstrs::Scalar as Fr;
    use ff::Field;

    #[test]
    fn times_16_is_sixteen_times_in_the_field() {
        let mut x = Fr::from(3u64);
        for _ in 0..100 {
            let limbs = blst_fr::from(x).l;
            let expected = blst_fr::from(x * Fr::from(16u64)).l;
            assert_eq!(times_16(limbs), expected);
            x = x.square() + Fr::ONE;
        }
        let top = -Fr::ONE;
        assert_eq!(
            times_16(blst_fr::from(top).l),
            blst_fr::from(top * Fr::from(16u64)).l
        );
    }
}
