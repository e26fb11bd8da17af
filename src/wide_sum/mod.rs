//! Sums of field products kept as wide integers and reduced once: what the pre-compiled
//! kernel's rows of general coefficients and the native Poseidon's MDS products both are.
//!
//! A field multiplication reduces its product at once. Summed lazily instead, a term is a
//! 256 × 256-bit integer product added into a ten-word sum, and the sum is reduced once by
//! Montgomery's rule: `STEPS` word-by-word steps turn `T` into `(T + m·p) / 2^(64·STEPS)`,
//! congruent to `T · 2^(-64·STEPS)`, and subtracting `p` while it is not below `p` brings
//! it into the field. Callers choose what their operands are (canonical integers scaled by
//! `2^320`, or Montgomery forms) so that the result is the field element they want.
//!
//! The product comes from a [`Multiplier`]: the portable `u128` schoolbook, or on x86_64
//! (chosen at compile time, asked of the CPU at run time) `mulx` with ADX's two carry
//! chains. The assembly one serves the native Poseidon (feature `neptune-11`); the kernel's
//! wide rows were no faster with it (docs/journal.md).

#[cfg(all(target_arch = "x86_64", feature = "neptune-11"))]
#[allow(unsafe_code)]
mod mulx_x86_64;

/// How 256 × 256-bit products are computed on this CPU.
#[derive(Clone, Copy)]
pub(crate) enum Multiplier {
    /// `u128` multiply-accumulates: any CPU.
    Portable,
    /// BMI2's `mulx` with ADX's carry chains: about a third of the portable instructions.
    #[cfg(all(target_arch = "x86_64", feature = "neptune-11"))]
    Mulx(mulx_x86_64::Mulx),
}

impl Multiplier {
    /// The fastest multiplier this CPU has.
    #[cfg(feature = "neptune-11")]
    pub(crate) fn detect() -> Multiplier {
        #[cfg(target_arch = "x86_64")]
        if let Some(mulx) = mulx_x86_64::Mulx::detect() {
            return Multiplier::Mulx(mulx);
        }
        Multiplier::Portable
    }

    /// Whether products come from assembly rather than portable code.
    #[cfg(feature = "neptune-11")]
    pub(crate) fn is_native(self) -> bool {
        !matches!(self, Multiplier::Portable)
    }

    /// `a · b`, little-endian 64-bit limbs.
    #[inline(always)]
    pub(crate) fn product(self, a: &[u64; 4], b: &[u64; 4]) -> [u64; 8] {
        match self {
            Multiplier::Portable => portable_product(a, b),
            #[cfg(all(target_arch = "x86_64", feature = "neptune-11"))]
            Multiplier::Mulx(mulx) => mulx.product(a, b),
        }
    }
}

/// `a + b · c + carry` as (low word, high word): never overflows 128 bits.
#[inline(always)]
fn mac(a: u64, b: u64, c: u64, carry: u64) -> (u64, u64) {
    let t = u128::from(a) + u128::from(b) * u128::from(c) + u128::from(carry);
    (t as u64, (t >> 64) as u64)
}

/// `a + b + carry` as (sum, carry).
#[inline(always)]
fn adc(a: u64, b: u64, carry: u64) -> (u64, u64) {
    let t = u128::from(a) + u128::from(b) + u128::from(carry);
    (t as u64, (t >> 64) as u64)
}

/// The schoolbook product by rows of multiply-accumulates.
#[inline(always)]
fn portable_product(a: &[u64; 4], b: &[u64; 4]) -> [u64; 8] {
    let (p0, c) = mac(0, a[0], b[0], 0);
    let (p1, c) = mac(0, a[0], b[1], c);
    let (p2, c) = mac(0, a[0], b[2], c);
    let (p3, p4) = mac(0, a[0], b[3], c);
    let (p1, c) = mac(p1, a[1], b[0], 0);
    let (p2, c) = mac(p2, a[1], b[1], c);
    let (p3, c) = mac(p3, a[1], b[2], c);
    let (p4, p5) = mac(p4, a[1], b[3], c);
    let (p2, c) = mac(p2, a[2], b[0], 0);
    let (p3, c) = mac(p3, a[2], b[1], c);
    let (p4, c) = mac(p4, a[2], b[2], c);
    let (p5, p6) = mac(p5, a[2], b[3], c);
    let (p3, c) = mac(p3, a[3], b[0], 0);
    let (p4, c) = mac(p4, a[3], b[1], c);
    let (p5, c) = mac(p5, a[3], b[2], c);
    let (p6, p7) = mac(p6, a[3], b[3], c);
    [p0, p1, p2, p3, p4, p5, p6, p7]
}

/// `-p^{-1} mod 2^64` for the odd lowest limb `p0` of the order (Newton's iteration doubles
/// the correct low bits each step: 1, 2, 4, ... 64).
pub(crate) const fn montgomery_inverse(p0: u64) -> u64 {
    let mut inverse = 1u64;
    let mut step = 0;
    while step < 6 {
        inverse = inverse.wrapping_mul(2u64.wrapping_sub(p0.wrapping_mul(inverse)));
        step += 1;
    }
    inverse.wrapping_neg()
}

/// A sum of 512-bit products as a ten-word integer: fewer than 2^32 products stay below
/// 2^542, and the reduction's additions below 2^704.
#[derive(Default)]
pub(crate) struct WideSum {
    words: [u64; 10],
}

impl WideSum {
    /// Adds one product.
    #[inline(always)]
    pub(crate) fn add(&mut self, product: [u64; 8]) {
        let w = &mut self.words;
        let mut carry = 0;
        for (word, p) in w.iter_mut().zip(product) {
            (*word, carry) = adc(*word, p, carry);
        }
        (w[8], carry) = adc(w[8], 0, carry);
        w[9] += carry;
    }

    /// `T · 2^(-64·STEPS) mod p` for the sum `T`, below `p` (`inverse` is
    /// [`montgomery_inverse`] of `modulus[0]`). `STEPS` is 4 or 5: the caller's operands
    /// make `T` below `2^(64·STEPS) · k·p` for a small `k`, the number of subtractions.
    #[inline(always)]
    pub(crate) fn reduce<const STEPS: usize>(&self, modulus: &[u64; 4], inverse: u64) -> [u64; 4] {
        let mut t = [0u64; 11];
        t[..10].copy_from_slice(&self.words);
        for k in 0..STEPS {
            let m = t[k].wrapping_mul(inverse);
            let mut carry = 0u128;
            for (w, &p) in modulus.iter().enumerate() {
                let total = u128::from(t[k + w]) + u128::from(m) * u128::from(p) + carry;
                t[k + w] = total as u64;
                carry = total >> 64;
            }
            let mut at = k + 4;
            while carry != 0 {
                let total = u128::from(t[at]) + carry;
                t[at] = total as u64;
                carry = total >> 64;
                at += 1;
            }
        }
        let mut u = [0u64; 5];
        u.copy_from_slice(&t[STEPS..STEPS + 5]);
        let p = [modulus[0], modulus[1], modulus[2], modulus[3], 0];
        // Subtract p until the subtraction borrows: k tries for a result below k·p.
        loop {
            let mut d = [0u64; 5];
            let mut borrow = false;
            for ((d, &x), &p) in d.iter_mut().zip(&u).zip(&p) {
                let (v, b1) = x.overflowing_sub(p);
                let (v, b2) = v.overflowing_sub(u64::from(borrow));
                *d = v;
                borrow = b1 | b2;
            }
            if borrow {
                return [u[0], u[1], u[2], u[3]];
            }
            u = d;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use blstrs::Scalar as Fr;
    use ff::{Field, PrimeField};
    use rand_core::SeedableRng;
    use rand_xorshift::XorShiftRng;

    /// Little-endian limbs of a canonical representation.
    fn integer(x: Fr) -> [u64; 4] {
        let repr = x.to_repr();
        let mut limbs = [0u64; 4];
        for (limb, chunk) in limbs.iter_mut().zip(repr.as_ref().chunks(8)) {
            *limb = u64::from_le_bytes(chunk.try_into().unwrap());
        }
        limbs
    }

    fn field(limbs: [u64; 4]) -> Fr {
        let mut bytes = [0u8; 32];
        for (chunk, limb) in bytes.chunks_mut(8).zip(limbs) {
            chunk.copy_from_slice(&limb.to_le_bytes());
        }
        Fr::from_repr(bytes).unwrap()
    }

    /// `a < b` for little-endian integers of the same length.
    fn less(a: &[u64], b: &[u64]) -> bool {
        a.iter().rev().cmp(b.iter().rev()).is_lt()
    }

    fn modulus() -> [u64; 4] {
        let mut p = integer(-Fr::ONE);
        p[0] += 1;
        p
    }

    #[test]
    fn the_montgomery_inverse_inverts_the_lowest_limb() {
        for p0 in [1u64, 3, 0xffff_ffff_0000_0001, u64::MAX] {
            assert_eq!(p0.wrapping_mul(montgomery_inverse(p0)), u64::MAX, "{p0:#x}");
        }
    }

    /// Every multiplier this CPU has against the `u128` reference, on random limbs and
    /// the extremes.
    #[test]
    fn products_match_the_reference() {
        let reference = |a: &[u64; 4], b: &[u64; 4]| {
            let mut r = [0u64; 8];
            for (i, &x) in a.iter().enumerate() {
                let mut carry = 0u128;
                for (j, &y) in b.iter().enumerate() {
                    let t = u128::from(r[i + j]) + u128::from(x) * u128::from(y) + carry;
                    r[i + j] = t as u64;
                    carry = t >> 64;
                }
                r[i + 4] = carry as u64;
            }
            r
        };
        let mut cases = vec![[0u64; 4], [u64::MAX; 4], [1, 0, 0, 0], [0, 0, 0, 1 << 63]];
        let mut x = 0x9e37_79b9_7f4a_7c15u64;
        for _ in 0..200 {
            let mut limbs = [0u64; 4];
            for limb in &mut limbs {
                x ^= x << 13;
                x ^= x >> 7;
                x ^= x << 17;
                *limb = x;
            }
            cases.push(limbs);
        }
        let detected = Multiplier::detect();
        if !detected.is_native() {
            eprintln!("no assembly multiplier on this CPU: the portable one only");
        }
        for multiplier in [Multiplier::Portable, detected] {
            for a in &cases {
                for b in &cases[..20] {
                    assert_eq!(multiplier.product(a, b), reference(a, b), "{a:x?} · {b:x?}");
                    assert_eq!(multiplier.product(b, a), reference(a, b), "{b:x?} · {a:x?}");
                }
            }
        }
    }

    /// Sums of products of canonical integers, one side scaled by `2^320`, reduced in five
    /// steps, against the field's own arithmetic: random elements, the largest, many terms.
    #[test]
    fn five_step_sums_of_scaled_integers_reduce_to_the_field_sum() {
        let mut rng = XorShiftRng::seed_from_u64(9);
        let modulus = modulus();
        let inverse = montgomery_inverse(modulus[0]);
        let two_320 = Fr::from(2u64).pow_vartime([320]);
        let multiplier = Multiplier::detect();
        for terms in [0usize, 1, 2, 9, 66, 1000] {
            for extreme in [false, true] {
                let mut sum = WideSum::default();
                let mut expected = Fr::ZERO;
                for _ in 0..terms {
                    let (v, c) = if extreme {
                        (-Fr::ONE, -Fr::ONE)
                    } else {
                        (Fr::random(&mut rng), Fr::random(&mut rng))
                    };
                    sum.add(multiplier.product(&integer(v), &integer(c * two_320)));
                    expected += v * c;
                }
                let got = sum.reduce::<5>(&modulus, inverse);
                assert!(less(&got, &modulus), "{terms} terms: not reduced");
                assert_eq!(field(got), expected, "{terms} terms, extreme {extreme}");
            }
        }
    }

    /// Four steps on sums of up to twelve products of the largest integers below `p`: the
    /// most subtractions the Poseidon path needs.
    #[test]
    fn four_step_sums_come_back_below_p() {
        let modulus = modulus();
        let inverse = montgomery_inverse(modulus[0]);
        let top = integer(-Fr::ONE);
        let r_inverse = Fr::from(2u64).pow_vartime([256]).invert().unwrap();
        for terms in 1..=12u64 {
            let mut sum = WideSum::default();
            for _ in 0..terms {
                sum.add(Multiplier::detect().product(&top, &top));
            }
            let got = sum.reduce::<4>(&modulus, inverse);
            assert!(less(&got, &modulus), "{terms} terms: not reduced");
            assert_eq!(field(got), Fr::from(terms) * r_inverse, "{terms} terms");
        }
    }
}
