//! The eight-lane arithmetic on AVX-512 IFMA (`vpmadd52luq`, `vpmadd52huq`). Every
//! function that computes is a `#[target_feature]` function, safe to call from another
//! with the same features (callers' kernels are) and inlined there; the only `unsafe` is
//! reading a vector register's eight words.

use std::arch::x86_64::{
    __m512i, _mm512_add_epi64, _mm512_and_si512, _mm512_cmpeq_epi64_mask, _mm512_cmplt_epi64_mask,
    _mm512_madd52hi_epu64, _mm512_madd52lo_epu64, _mm512_mask_blend_epi64, _mm512_or_si512,
    _mm512_set1_epi64, _mm512_set_epi64, _mm512_setzero_si512, _mm512_shuffle_epi32,
    _mm512_shuffle_i64x2, _mm512_slli_epi64, _mm512_srli_epi64, _mm512_sub_epi64,
};

use super::P;

/// Bits per limb.
const BITS: u32 = 52;
const MASK: u64 = (1 << BITS) - 1;

/// The modulus in 52-bit limbs.
const P52: [u64; 5] = split(P);

/// `-p⁻¹ mod 2^52`: Newton's iteration doubles the correct low bits each step.
const K52: u64 = {
    let mut inverse = 1u64;
    let mut step = 0;
    while step < 6 {
        inverse = inverse.wrapping_mul(2u64.wrapping_sub(P[0].wrapping_mul(inverse)));
        step += 1;
    }
    inverse.wrapping_neg() & MASK
};

/// Four 64-bit limbs as five 52-bit ones.
const fn split(x: [u64; 4]) -> [u64; 5] {
    [
        x[0] & MASK,
        (x[0] >> 52 | x[1] << 12) & MASK,
        (x[1] >> 40 | x[2] << 24) & MASK,
        (x[2] >> 28 | x[3] << 36) & MASK,
        x[3] >> 16,
    ]
}

/// Proof that this CPU has AVX-512F and IFMA: the only way to reach the arithmetic from
/// code without those features enabled.
#[derive(Clone, Copy, Debug)]
pub(crate) struct Ifma(());

impl Ifma {
    /// `Some` when the CPU has both (std caches the answer) and the lanes are not turned
    /// off.
    #[inline]
    pub(crate) fn detect() -> Option<Ifma> {
        (super::enabled()
            && std::is_x86_feature_detected!("avx512f")
            && std::is_x86_feature_detected!("avx512ifma"))
        .then_some(Ifma(()))
    }
}

/// A vector's eight words.
#[inline]
#[target_feature(enable = "avx512f")]
fn words(v: __m512i) -> [u64; 8] {
    // SAFETY: `__m512i` and `[u64; 8]` are both 64 bytes and every bit pattern is valid for
    // either; transmute copies the bytes.
    unsafe { std::mem::transmute::<__m512i, [u64; 8]>(v) }
}

/// Eight scalars below `p`, their Montgomery forms in five 52-bit limbs per lane.
#[derive(Clone, Copy)]
pub(crate) struct Fr8([__m512i; 5]);

/// Eight second factors of a product: scalars carrying a factor 16, which the product's
/// division by `2^260` takes back. Either a variable shifted by four bits
/// ([`Fr8::times_16`], below `16p`) or the Montgomery forms of `16·c` ([`Fr8::sixteenfold`],
/// below `p`, how constants are stored: [`crate::lanes::times_16`]).
#[derive(Clone, Copy)]
pub(crate) struct Factor8 {
    limbs: [__m512i; 5],
    /// The factor's values are below `below · p`: 1 or 16.
    below: usize,
}

/// Eight sums of products not yet reduced: ten 52-bit positions per lane, each gathering
/// at most ten limb products per term (so 32 terms stay below `2^61`). `weight` bounds the
/// sum: it stays below `weight · p²` per lane (each term adds its factor's bound), so its
/// reduction is below `weight · p² / 2^260 + p < (weight / 32 + 1) · p`.
#[derive(Clone, Copy)]
pub(crate) struct Wide8 {
    t: [__m512i; 10],
    terms: usize,
    weight: usize,
}

/// Limbs of eight values (each four 64-bit limbs) as five vectors of 52-bit limbs.
#[inline]
#[target_feature(enable = "avx512f")]
fn split8(values: &[[u64; 4]; 8]) -> [__m512i; 5] {
    // Set from registers, not stored and loaded back: a vector load of eight words just
    // stored one by one waits for the stores.
    let limb = |k: usize| {
        let v = |lane: usize| values[lane][k] as i64;
        _mm512_set_epi64(v(7), v(6), v(5), v(4), v(3), v(2), v(1), v(0))
    };
    let (x0, x1, x2, x3) = (limb(0), limb(1), limb(2), limb(3));
    let mask = _mm512_set1_epi64(MASK as i64);
    let join = |low: __m512i, high: __m512i, shift: u32| {
        let low = match shift {
            52 => _mm512_srli_epi64::<52>(low),
            40 => _mm512_srli_epi64::<40>(low),
            _ => _mm512_srli_epi64::<28>(low),
        };
        let high = match shift {
            52 => _mm512_slli_epi64::<12>(high),
            40 => _mm512_slli_epi64::<24>(high),
            _ => _mm512_slli_epi64::<36>(high),
        };
        _mm512_and_si512(_mm512_or_si512(low, high), mask)
    };
    [
        _mm512_and_si512(x0, mask),
        join(x0, x1, 52),
        join(x1, x2, 40),
        join(x2, x3, 28),
        _mm512_srli_epi64::<16>(x3),
    ]
}

/// Five vectors of 52-bit limbs (a value below `2^256` per lane) as eight values of four
/// 64-bit limbs.
#[inline]
#[target_feature(enable = "avx512f")]
fn join8(l: &[__m512i; 5]) -> [[u64; 4]; 8] {
    let or = _mm512_or_si512;
    let w = [
        words(or(l[0], _mm512_slli_epi64::<52>(l[1]))),
        words(or(
            _mm512_srli_epi64::<12>(l[1]),
            _mm512_slli_epi64::<40>(l[2]),
        )),
        words(or(
            _mm512_srli_epi64::<24>(l[2]),
            _mm512_slli_epi64::<28>(l[3]),
        )),
        words(or(
            _mm512_srli_epi64::<36>(l[3]),
            _mm512_slli_epi64::<16>(l[4]),
        )),
    ];
    std::array::from_fn(|lane| [w[0][lane], w[1][lane], w[2][lane], w[3][lane]])
}

/// The same four limbs in every lane.
#[inline]
#[target_feature(enable = "avx512f")]
fn splat(x: [u64; 4]) -> [__m512i; 5] {
    split(x).map(|limb| _mm512_set1_epi64(limb as i64))
}

/// Limbs with carries: each limb brought below `2^52`, its excess added to the next
/// (the last keeps whatever is left).
#[inline]
#[target_feature(enable = "avx512f")]
fn normalize(t: [__m512i; 5]) -> [__m512i; 5] {
    let mask = _mm512_set1_epi64(MASK as i64);
    let mut out = t;
    for k in 0..4 {
        let carry = _mm512_srli_epi64::<52>(out[k]);
        out[k] = _mm512_and_si512(out[k], mask);
        out[k + 1] = _mm512_add_epi64(out[k + 1], carry);
    }
    out
}

/// `x - p` where that is not negative, else `x`, for limbs below `2^52` (a value below
/// `2p` comes back below `p`).
#[inline]
#[target_feature(enable = "avx512f")]
fn subtract_p(x: [__m512i; 5]) -> [__m512i; 5] {
    let mask = _mm512_set1_epi64(MASK as i64);
    let mut d = [_mm512_setzero_si512(); 5];
    let mut borrow = _mm512_setzero_si512();
    for k in 0..5 {
        let v = _mm512_sub_epi64(
            _mm512_sub_epi64(x[k], _mm512_set1_epi64(P52[k] as i64)),
            borrow,
        );
        // A negative difference has its top bit set: that is the borrow.
        borrow = _mm512_srli_epi64::<63>(v);
        d[k] = if k < 4 { _mm512_and_si512(v, mask) } else { v };
    }
    // Lanes whose last difference is negative were below p: keep them.
    let below = _mm512_cmplt_epi64_mask(d[4], _mm512_setzero_si512());
    std::array::from_fn(|k| _mm512_mask_blend_epi64(below, d[k], x[k]))
}

/// One Montgomery step at position `s` of `t`: adds the multiple of `p` that clears the
/// position's low 52 bits, and carries the rest into the next position.
#[inline]
#[target_feature(enable = "avx512f,avx512ifma")]
fn reduce_step<const N: usize>(t: &mut [__m512i; N], s: usize) {
    let zero = _mm512_setzero_si512();
    let m = _mm512_madd52lo_epu64(zero, t[s], _mm512_set1_epi64(K52 as i64));
    for (j, &p) in P52.iter().enumerate() {
        let p = _mm512_set1_epi64(p as i64);
        t[s + j] = _mm512_madd52lo_epu64(t[s + j], m, p);
        if s + j + 1 < N {
            t[s + j + 1] = _mm512_madd52hi_epu64(t[s + j + 1], m, p);
        }
    }
    if s + 1 < N {
        t[s + 1] = _mm512_add_epi64(t[s + 1], _mm512_srli_epi64::<52>(t[s]));
    }
}

impl Fr8 {
    /// Eight scalars from their Montgomery limbs (each below `p`).
    #[inline]
    #[target_feature(enable = "avx512f")]
    pub(crate) fn new(values: &[[u64; 4]; 8]) -> Fr8 {
        Fr8(split8(values))
    }

    /// One scalar in every lane.
    #[inline]
    #[target_feature(enable = "avx512f")]
    pub(crate) fn splat(x: [u64; 4]) -> Fr8 {
        Fr8(splat(x))
    }

    /// The eight scalars' Montgomery limbs, fully reduced.
    #[inline]
    #[target_feature(enable = "avx512f")]
    pub(crate) fn limbs(&self) -> [[u64; 4]; 8] {
        join8(&self.0)
    }

    /// The eight values times 16 as a second factor: the limbs shifted by four bits
    /// (below `16p < 2^259`, five limbs still hold them).
    #[inline]
    #[target_feature(enable = "avx512f")]
    pub(crate) fn times_16(&self) -> Factor8 {
        let mask = _mm512_set1_epi64(MASK as i64);
        let l = &self.0;
        let up = |k: usize| _mm512_and_si512(_mm512_slli_epi64::<4>(l[k]), mask);
        let over = |k: usize| _mm512_srli_epi64::<48>(l[k]);
        let limbs = [
            up(0),
            _mm512_or_si512(up(1), over(0)),
            _mm512_or_si512(up(2), over(1)),
            _mm512_or_si512(up(3), over(2)),
            _mm512_or_si512(_mm512_slli_epi64::<4>(l[4]), over(3)),
        ];
        Factor8 { limbs, below: 16 }
    }

    /// `16x mod p` in each lane, fully reduced: four doublings, each brought below `p`.
    #[inline]
    #[target_feature(enable = "avx512f")]
    pub(crate) fn times_16_reduced(&self) -> Fr8 {
        let mut x = *self;
        for _ in 0..4 {
            x = x.add(&x);
        }
        x
    }

    /// These values as a second factor, for values that are already the Montgomery forms
    /// of 16 times the scalars meant (constants stored by [`crate::lanes::times_16`]).
    #[inline]
    pub(crate) fn sixteenfold(&self) -> Factor8 {
        Factor8 {
            limbs: self.0,
            below: 1,
        }
    }

    /// The field product of these scalars and the ones `f` carries 16 times of, in each
    /// lane, fully reduced: the product and its reduction interleaved a limb at a time.
    #[inline]
    #[target_feature(enable = "avx512f,avx512ifma")]
    pub(crate) fn mul(&self, f: &Factor8) -> Fr8 {
        let (a, b) = (&self.0, &f.limbs);
        let zero = _mm512_setzero_si512();
        let mut t = [zero; 6];
        for &ai in a {
            for j in 0..5 {
                t[j] = _mm512_madd52lo_epu64(t[j], ai, b[j]);
                t[j + 1] = _mm512_madd52hi_epu64(t[j + 1], ai, b[j]);
            }
            reduce_step(&mut t, 0);
            t = [t[1], t[2], t[3], t[4], t[5], zero];
        }
        // Below 16p²/2^260 + p < 2p (16p < 2^259).
        Fr8(subtract_p(normalize([t[0], t[1], t[2], t[3], t[4]])))
    }

    /// Whether every lane holds the same scalar as `other`'s (both fully reduced, so equal
    /// limbs are equal scalars).
    #[inline]
    #[target_feature(enable = "avx512f")]
    pub(crate) fn equals(&self, other: &Fr8) -> bool {
        let mut all = 0xff;
        for k in 0..5 {
            all &= _mm512_cmpeq_epi64_mask(self.0[k], other.0[k]);
        }
        all == 0xff
    }

    /// `self + other` in each lane, fully reduced.
    #[inline]
    #[target_feature(enable = "avx512f")]
    pub(crate) fn add(&self, other: &Fr8) -> Fr8 {
        let sum = std::array::from_fn(|k| _mm512_add_epi64(self.0[k], other.0[k]));
        Fr8(subtract_p(normalize(sum)))
    }
}

impl Wide8 {
    /// No products yet.
    #[inline]
    #[target_feature(enable = "avx512f")]
    pub(crate) fn new() -> Wide8 {
        Wide8 {
            t: [_mm512_setzero_si512(); 10],
            terms: 0,
            weight: 0,
        }
    }

    /// Adds the product of `x` and the scalars `f` carries 16 times of, unreduced; at most
    /// 32 terms.
    #[inline]
    #[target_feature(enable = "avx512f,avx512ifma")]
    pub(crate) fn add(&mut self, x: &Fr8, f: &Factor8) {
        debug_assert!(self.terms < 32, "a wide sum holds at most 32 terms");
        self.terms += 1;
        self.weight += f.below;
        let (a, b) = (&x.0, &f.limbs);
        for (i, &ai) in a.iter().enumerate() {
            for (j, &bj) in b.iter().enumerate() {
                self.t[i + j] = _mm512_madd52lo_epu64(self.t[i + j], ai, bj);
                self.t[i + j + 1] = _mm512_madd52hi_epu64(self.t[i + j + 1], ai, bj);
            }
        }
    }

    /// The sums, reduced by Montgomery's rule (five steps of 52 bits), then `p` taken away
    /// once per 32 of weight (at least once): fully reduced.
    #[inline]
    #[target_feature(enable = "avx512f,avx512ifma")]
    pub(crate) fn reduce(&self) -> Fr8 {
        let mut t = self.t;
        for s in 0..5 {
            reduce_step(&mut t, s);
        }
        let mut x = normalize([t[5], t[6], t[7], t[8], t[9]]);
        for _ in 0..self.weight.div_ceil(32).max(1) {
            x = subtract_p(x);
        }
        Fr8(x)
    }

    /// The eight lanes' sums added together and reduced, as Montgomery limbs: the lanes'
    /// positions folded together (three shuffles and additions each), reduced in the
    /// vector, and the result taken out of lane 0. Their weight must be at most 32 (eight
    /// lanes of 32 terms: each position's total below `2^64`, the reduction below `9p`).
    #[inline]
    #[target_feature(enable = "avx512f,avx512ifma")]
    pub(crate) fn total(&self) -> [u64; 4] {
        debug_assert!(self.weight <= 32, "the lanes' total fits its words");
        let mut t = self.t.map(|v| {
            let v = _mm512_add_epi64(v, _mm512_shuffle_i64x2::<0b01_00_11_10>(v, v));
            let v = _mm512_add_epi64(v, _mm512_shuffle_i64x2::<0b10_11_00_01>(v, v));
            _mm512_add_epi64(v, _mm512_shuffle_epi32::<0b01_00_11_10>(v))
        });
        for s in 0..5 {
            reduce_step(&mut t, s);
        }
        let x = normalize([t[5], t[6], t[7], t[8], t[9]]);
        join(below_p(x.map(|v| words(v)[0])))
    }
}

/// `2^64 / (p's top limb + 1)`, rounded down: a quotient by `p` from a value's top limb.
const RECIPROCAL: u64 = ((u128::MAX / (P52[4] as u128 + 1)) >> 64) as u64;

/// A value below `32p` in five 52-bit limbs, reduced below `p`: `q·p` taken away for a `q`
/// from the top limb that is short of the quotient by at most two, then `p` twice where
/// it fits, without a branch (how many subtractions depends on the value, and a branch on
/// it would be mispredicted).
fn below_p(mut x: [u64; 5]) -> [u64; 5] {
    let q = ((u128::from(x[4]) * u128::from(RECIPROCAL)) >> 64) as u64;
    let mut borrow = 0u64;
    for (x, &p) in x.iter_mut().zip(&P52) {
        let v = u128::from(*x)
            .wrapping_sub(u128::from(q) * u128::from(p))
            .wrapping_sub(u128::from(borrow));
        *x = (v as u64) & MASK;
        // The difference is above -2^61: its borrow is what the limb owes above.
        borrow = ((v as i128) >> BITS).unsigned_abs() as u64;
    }
    for _ in 0..2 {
        let mut d = [0u64; 5];
        let mut borrow = 0u64;
        for ((d, &x), &p) in d.iter_mut().zip(&x).zip(&P52) {
            let v = x.wrapping_sub(p).wrapping_sub(borrow);
            borrow = v >> 63;
            *d = v & MASK;
        }
        // All ones where the subtraction borrowed (keep x).
        let keep = borrow.wrapping_neg();
        for (x, d) in x.iter_mut().zip(d) {
            *x = (*x & keep) | (d & !keep);
        }
    }
    x
}

/// Five 52-bit limbs of a value below `2^256` as four 64-bit ones.
fn join(x: [u64; 5]) -> [u64; 4] {
    [
        x[0] | x[1] << 52,
        x[1] >> 12 | x[2] << 40,
        x[2] >> 24 | x[3] << 28,
        x[3] >> 36 | x[4] << 16,
    ]
}

#[cfg(test)]
mod tests {
    use super::super::times_16;
    use super::*;
    use blst::blst_fr;
    use blstrs::Scalar as Fr;
    use ff::Field;
    use rand_core::SeedableRng;
    use rand_xorshift::XorShiftRng;

    fn limbs(x: Fr) -> [u64; 4] {
        blst_fr::from(x).l
    }

    /// Random scalars and the extremes: 0, 1, -1, -2.
    fn values(rng: &mut XorShiftRng) -> [Fr; 8] {
        std::array::from_fn(|lane| match lane {
            0 => Fr::ZERO,
            1 => Fr::ONE,
            2 => -Fr::ONE,
            3 => -Fr::from(2u64),
            _ => Fr::random(&mut *rng),
        })
    }

    /// Runs `check` where the CPU has the features; says so where it does not.
    fn on_ifma(check: unsafe fn()) {
        match Ifma::detect() {
            // SAFETY: the CPU has AVX-512F and IFMA, which every function `check` calls
            // needs.
            Some(_) => unsafe { check() },
            None => eprintln!("this CPU has no AVX-512 IFMA: nothing to test"),
        }
    }

    #[target_feature(enable = "avx512f,avx512ifma")]
    fn products_sums_and_totals() {
        let mut rng = XorShiftRng::seed_from_u64(52);
        for round in 0..200 {
            let (x, y) = (values(&mut rng), values(&mut rng));
            // Rotate the extremes so every pair of them meets.
            let y: [Fr; 8] = std::array::from_fn(|lane| y[(lane + round) % 8]);
            let (xs, ys) = (Fr8::new(&x.map(limbs)), Fr8::new(&y.map(limbs)));
            let product = xs.mul(&ys.times_16()).limbs();
            let by_constant = xs
                .mul(&Fr8::new(&y.map(|y| times_16(limbs(y)))).sixteenfold())
                .limbs();
            let sum = xs.add(&ys).limbs();
            assert!(xs.equals(&xs) && (xs.equals(&ys) == (x == y)));
            for lane in 0..8 {
                let expected = limbs(x[lane] * y[lane]);
                assert_eq!(product[lane], expected, "x·y, round {round}, lane {lane}");
                assert_eq!(
                    by_constant[lane], expected,
                    "x·c, round {round}, lane {lane}"
                );
                assert_eq!(sum[lane], limbs(x[lane] + y[lane]), "x+y, round {round}");
            }
            assert_eq!(Fr8::splat(limbs(x[5])).limbs(), [limbs(x[5]); 8]);
        }
        // Sums up to weight 32 per lane, of reduced (weight 1) and shifted (weight 16)
        // factors, the largest values included, reduced per lane and as one total over
        // every lane.
        for (terms, shifted) in [
            (1, 0),
            (2, 0),
            (9, 0),
            (32, 0),
            (1, 1),
            (2, 2),
            (16, 1),
            (8, 8),
            (32, 32),
        ] {
            for top in [false, true] {
                let mut wide = Wide8::new();
                let mut expected = [Fr::ZERO; 8];
                for term in 0..terms {
                    let (x, c) = if top {
                        ([-Fr::ONE; 8], [-Fr::ONE; 8])
                    } else {
                        (values(&mut rng), values(&mut rng))
                    };
                    let factor = if term < shifted {
                        Fr8::new(&c.map(limbs)).times_16()
                    } else {
                        Fr8::new(&c.map(|c| times_16(limbs(c)))).sixteenfold()
                    };
                    wide.add(&Fr8::new(&x.map(limbs)), &factor);
                    for lane in 0..8 {
                        expected[lane] += x[lane] * c[lane];
                    }
                }
                assert_eq!(wide.reduce().limbs(), expected.map(limbs), "{terms} terms");
                if terms + 15 * shifted <= 32 {
                    let total: Fr = expected.iter().sum();
                    assert_eq!(wide.total(), limbs(total), "{terms} terms, total");
                }
            }
        }
    }

    #[test]
    fn lanes_give_the_fields_products_sums_and_totals() {
        on_ifma(products_sums_and_totals);
    }

    #[test]
    fn the_montgomery_constant_inverts_the_lowest_limb() {
        assert_eq!(P[0].wrapping_mul(K52) & MASK, MASK);
        assert_eq!(split(P), P52);
    }
}
