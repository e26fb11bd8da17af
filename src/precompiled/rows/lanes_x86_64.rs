//! Pre-compiled evaluation's field products on eight lanes (`crate::lanes`, AVX-512 IFMA),
//! for blstrs scalars where the CPU has IFMA: the checks `a·b = c` of a stretch of field
//! rows, eight rows per lane product; the claims' folded sum, eight terms per lane product
//! summed unreduced; and the products of a row's weight and coefficients when the claims
//! are folded. The scalar paths stay for everything else; both give the same results,
//! since every lane result is fully reduced.

use ff::PrimeField;

use crate::lanes::{is_blstrs, limbs, set_limbs, Fr8, Ifma, Wide8};

/// The lanes, for a field and CPU that have them.
#[derive(Clone, Copy)]
pub(crate) struct Lanes(Ifma);

impl Lanes {
    /// `Some` for blstrs scalars on a CPU with AVX-512 IFMA.
    pub(crate) fn for_field<Scalar: PrimeField>() -> Option<Lanes> {
        if is_blstrs::<Scalar>() {
            Ifma::detect().map(Lanes)
        } else {
            None
        }
    }

    /// Whether `a[r] · b[r] = c[r]` for every `r` in `rows`.
    pub(crate) fn products_hold<Scalar: PrimeField>(
        self,
        [a, b, c]: [&[Scalar]; 3],
        rows: &[u16],
    ) -> bool {
        // SAFETY: a `Lanes` holds an `Ifma`, which exists only where the CPU has AVX-512F
        // and IFMA, the features `products_hold` is compiled for; `for_field` made it for
        // blstrs scalars only, whose limbs it reads.
        unsafe { products_hold(a, b, c, rows) }
    }

    /// `weight · coefficient(k)` for `k` in `0..n` (at most eight), into `out[..n]`.
    pub(crate) fn scale<'c, Scalar: PrimeField>(
        self,
        weight: &Scalar,
        n: usize,
        coefficient: impl Fn(usize) -> &'c Scalar,
        out: &mut [Scalar; 8],
    ) {
        // SAFETY: as in `products_hold`.
        unsafe { scale(weight, n, coefficient, out) }
    }

    /// `Σ_k coefficients[k] · value(positions[k])` for coefficients stored as 16 times the
    /// ones meant (see `claims.rs`), as the field's sum of the ones meant.
    pub(crate) fn dot<'v, Scalar: PrimeField>(
        self,
        positions: &[u32],
        coefficients: &[Scalar],
        value: impl Fn(u32) -> &'v Scalar,
    ) -> Scalar {
        // SAFETY: as in `products_hold`.
        unsafe { dot(positions, coefficients, value) }
    }
}

/// The limbs of `values` at `at[0..8]`, the indices past `at`'s end repeating its last one.
#[inline]
fn gather<'v, Scalar: PrimeField>(
    at: &[u16],
    value: impl Fn(usize) -> &'v Scalar,
) -> [[u64; 4]; 8] {
    let last = at.len() - 1;
    std::array::from_fn(|lane| limbs(value(usize::from(at[lane.min(last)]))))
}

#[target_feature(enable = "avx512f,avx512ifma")]
fn products_hold<Scalar: PrimeField>(
    a: &[Scalar],
    b: &[Scalar],
    c: &[Scalar],
    rows: &[u16],
) -> bool {
    let mut all = true;
    for chunk in rows.chunks(8) {
        let x = Fr8::new(&gather(chunk, |r| &a[r]));
        let y = Fr8::new(&gather(chunk, |r| &b[r]));
        let z = Fr8::new(&gather(chunk, |r| &c[r]));
        all &= x.mul(&y.times_16()).equals(&z);
    }
    all
}

#[target_feature(enable = "avx512f,avx512ifma")]
fn scale<'c, Scalar: PrimeField>(
    weight: &Scalar,
    n: usize,
    coefficient: impl Fn(usize) -> &'c Scalar,
    out: &mut [Scalar; 8],
) {
    let mut c = [[0u64; 4]; 8];
    for (k, c) in c.iter_mut().enumerate().take(n) {
        *c = limbs(coefficient(k));
    }
    let products = Fr8::new(&c)
        .mul(&Fr8::splat(limbs(weight)).times_16())
        .limbs();
    for (out, product) in out.iter_mut().zip(products).take(n) {
        set_limbs(out, product);
    }
}

#[target_feature(enable = "avx512f,avx512ifma")]
fn dot<'v, Scalar: PrimeField>(
    positions: &[u32],
    coefficients: &[Scalar],
    value: impl Fn(u32) -> &'v Scalar,
) -> Scalar {
    let zero = Fr8::splat([0; 4]);
    let (mut total, mut sum) = (zero, Wide8::new());
    let mut terms = 0;
    for (positions, coefficients) in positions.chunks(8).zip(coefficients.chunks(8)) {
        // Lanes past the end multiply by a zero coefficient.
        let mut x = [[0u64; 4]; 8];
        let mut c = [[0u64; 4]; 8];
        for lane in 0..positions.len() {
            x[lane] = limbs(value(positions[lane]));
            c[lane] = limbs(&coefficients[lane]);
        }
        sum.add(&Fr8::new(&x), &Fr8::new(&c).sixteenfold());
        terms += 1;
        // Each term weighs 1 (coefficients below p): 32 of them reduce below 2p.
        if terms == 32 {
            total = total.add(&sum.reduce());
            (sum, terms) = (Wide8::new(), 0);
        }
    }
    total = total.add(&sum.reduce());
    total.limbs().iter().fold(Scalar::ZERO, |acc, l| {
        let mut lane = Scalar::ZERO;
        set_limbs(&mut lane, *l);
        acc + lane
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use blstrs::Scalar as Fr;
    use ff::Field;
    use rand_core::{RngCore, SeedableRng};
    use rand_xorshift::XorShiftRng;

    fn lanes() -> Option<Lanes> {
        let lanes = Lanes::for_field::<Fr>();
        if lanes.is_none() {
            eprintln!("this CPU has no AVX-512 IFMA: nothing to compare");
        }
        lanes
    }

    #[test]
    fn only_blstrs_scalars_take_the_lanes() {
        assert!(Lanes::for_field::<pasta_curves::Fp>().is_none());
    }

    #[test]
    fn products_hold_exactly_when_each_does() {
        let Some(lanes) = lanes() else { return };
        let mut rng = XorShiftRng::seed_from_u64(7);
        let n = 40;
        let a: Vec<Fr> = (0..n).map(|_| Fr::random(&mut rng)).collect();
        let mut b: Vec<Fr> = (0..n).map(|_| Fr::random(&mut rng)).collect();
        b[3] = Fr::ZERO;
        b[4] = -Fr::ONE;
        let c: Vec<Fr> = a.iter().zip(&b).map(|(a, b)| *a * b).collect();
        for len in [1usize, 7, 8, 9, 17, 40] {
            let rows: Vec<u16> = (0..len as u16).map(|r| (r * 7) % n as u16).collect();
            assert!(lanes.products_hold([&a, &b, &c], &rows), "{len} rows");
            for wrong in [0, len - 1, len / 2] {
                let mut bad = c.clone();
                bad[usize::from(rows[wrong])] += Fr::ONE;
                assert!(
                    !lanes.products_hold([&a, &b, &bad], &rows),
                    "{len}, {wrong}"
                );
            }
        }
    }

    #[test]
    fn scaled_coefficients_are_the_fields_products() {
        let Some(lanes) = lanes() else { return };
        let mut rng = XorShiftRng::seed_from_u64(9);
        let coefficients: Vec<Fr> = (0..8).map(|_| Fr::random(&mut rng)).collect();
        for n in 0..=8 {
            let weight = Fr::random(&mut rng);
            let mut out = [Fr::ONE; 8];
            lanes.scale(&weight, n, |k| &coefficients[k], &mut out);
            for k in 0..8 {
                let expected = if k < n {
                    weight * coefficients[k]
                } else {
                    Fr::ONE
                };
                assert_eq!(out[k], expected, "{n} coefficients, {k}");
            }
        }
    }

    #[test]
    fn dots_equal_the_fields_sums() {
        let Some(lanes) = lanes() else { return };
        let mut rng = XorShiftRng::seed_from_u64(8);
        let values: Vec<Fr> = (0..600)
            .map(|i| {
                if i % 5 == 0 {
                    -Fr::ONE
                } else {
                    Fr::random(&mut rng)
                }
            })
            .collect();
        let sixteen = Fr::from(16u64);
        for terms in [1usize, 8, 9, 255, 256, 257, 300, 599] {
            let positions: Vec<u32> = (0..terms).map(|_| rng.next_u32() % 600).collect();
            let gamma: Vec<Fr> = (0..terms).map(|_| Fr::random(&mut rng)).collect();
            let stored: Vec<Fr> = gamma.iter().map(|g| *g * sixteen).collect();
            let expected: Fr = positions
                .iter()
                .zip(&gamma)
                .map(|(&p, g)| values[p as usize] * g)
                .sum();
            let got = lanes.dot(&positions, &stored, |p| &values[p as usize]);
            assert_eq!(got, expected, "{terms} terms");
        }
    }
}
