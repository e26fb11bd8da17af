//! The integer path's arithmetic: 320-bit accumulators for large coefficients, lanes that
//! count powers of two without carries, and whether a constraint holds, in integers when its
//! three sums are integers.

use ff::PrimeField;

/// Marks a row whose sum is not an integer: no integer sum reaches it (a row holds fewer
/// than 2^32 terms, each below 2^31 in magnitude).
pub(crate) const NOT_INTEGER: i64 = i64::MIN;

/// `acc += value * 2^(64 * limb)`, with carries, in 320 bits. A row's large terms stay far
/// below 2^320: fewer than 2^32 of them, each below 2^256.
#[inline]
pub(crate) fn add_at(acc: &mut [u64; 5], limb: usize, value: u128) {
    let mut carry = value;
    for limb in &mut acc[limb..] {
        let sum = u128::from(*limb) + (carry & u128::from(u64::MAX));
        *limb = sum as u64;
        carry = (carry >> 64) + (sum >> 64);
        if carry == 0 {
            break;
        }
    }
}

/// `kind * 2^k` added to `powers`, for the power `k` and sign an entry gives in its low
/// 9 bits: `powers[8 * sign + q]` counts multiples of `2^(32 q)`, here `q = k / 32`, and
/// each term adds below 2^32 to it, so a row of fewer than 2^32 terms cannot overflow it.
/// No carry to follow, no branch: the row's sum is put together once, at its end.
#[inline(always)]
pub(crate) fn add_power(powers: &mut [u64; 16], entry: i64, kind: u8) {
    // Bits 5-7 of the entry are `q`, bit 8 the sign; `wrapping_shl` takes `k % 32`.
    let lane = (entry as usize >> 5) & 15;
    powers[lane] += u64::from(u32::from(kind).wrapping_shl(entry as u32));
}

/// Whether `a * b = c`: in integers when all three rows are integers (exact, since sums
/// that small cannot wrap around the field's order), else in the field.
#[inline(always)]
pub(crate) fn satisfied<Scalar: PrimeField>(
    sums: (i64, i64, i64),
    [a, b, c]: [&Scalar; 3],
) -> bool {
    match sums {
        (NOT_INTEGER, _, _) | (_, NOT_INTEGER, _) | (_, _, NOT_INTEGER) => field_satisfied(a, b, c),
        // Products of two i64 fit an i128, far below the field's order.
        (x, y, z) => i128::from(x) * i128::from(y) == i128::from(z),
    }
}

/// `a * b = c` in the field, skipping the multiplication for factors zero and one.
#[inline]
pub(crate) fn field_satisfied<Scalar: PrimeField>(a: &Scalar, b: &Scalar, c: &Scalar) -> bool {
    if *a == Scalar::ZERO || *b == Scalar::ZERO {
        *c == Scalar::ZERO
    } else if *a == Scalar::ONE {
        c == b
    } else if *b == Scalar::ONE {
        c == a
    } else {
        *a * b == *c
    }
}
