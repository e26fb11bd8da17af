//! The dictionary's coefficients as each evaluation path needs them.
//!
//! The field path multiplies by a coefficient's [`FieldClass`] (one, minus one, a small
//! power of two, or a general element). The integer path reads every coefficient from one
//! table indexed by its `u16` id: the coefficient itself where it is a small integer (±1,
//! ±2^k, packing weights), else a code that says how to add it (a power of two, a sum of
//! two, or a general 256-bit magnitude kept beside the table). The field's integer view
//! (its order, 2^256, the elements of small sums) turns the integer sums back into field
//! elements.

use ff::PrimeField;

use crate::precompiled::rows::runs::Powers;
use crate::wide_sum::montgomery_inverse;

/// Integer sums in `-SMALL_SUMS..SMALL_SUMS` become field elements by table lookup.
pub(crate) const SMALL_SUMS: i64 = 64;

/// Coefficients with `|c| < 2^SMALL_BITS` are summed in an `i64`, so a row of up to 2^32
/// terms cannot overflow (a matrix holds fewer than 2^32 in all).
const SMALL_BITS: u32 = 31;

/// How a coefficient is multiplied into a non-bit value, on the field path.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum FieldClass<Scalar> {
    One,
    MinusOne,
    /// `2^k` for small `k`: `k` doublings are cheaper than a multiplication.
    PowerOfTwo(u8),
    General(Scalar),
}

/// Doublings beyond this cost more than one multiplication.
const MAX_DOUBLINGS: u8 = 6;

/// A coefficient as an integer of at most 256 bits and a sign (`value = ± magnitude`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct Large {
    negative: bool,
    pub(crate) magnitude: [u64; 4],
}

impl Large {
    /// The positions of the magnitude's set bits, when there are at most two: MultiEq's
    /// packing weights are powers of two, and a bit packed twice in one constraint has the
    /// sum of two.
    fn powers(&self) -> Option<Vec<u8>> {
        let set = |bit: &u8| self.magnitude[usize::from(bit / 64)] >> (bit % 64) & 1 == 1;
        let bits: Vec<u8> = (0..=u8::MAX).filter(set).take(3).collect();
        (bits.len() <= 2).then_some(bits)
    }

    /// This coefficient's entry in the small table, which is not a small integer: its sign
    /// and, for one or two powers of two, the powers, so that adding it needs no other
    /// table.
    fn code(&self) -> i64 {
        let sign = if self.negative { LARGE_NEGATIVE } else { 0 };
        let fields = match self.powers().as_deref() {
            Some(&[k]) => sign | i64::from(k),
            Some(&[k, j]) => {
                (sign | i64::from(k)) | (sign | i64::from(j)) << SECOND_POWER | LARGE_TWO
            }
            _ => sign | LARGE_GENERAL,
        };
        i64::MIN + fields
    }
}

/// What the integer path needs of the field: its order, and 2^256 as a field element.
pub(crate) struct IntegerField<Scalar> {
    pub(crate) modulus: [u64; 4],
    /// `-p^{-1} mod 2^64`, for the wide rows' Montgomery steps.
    pub(crate) inverse: u64,
    two_to_256: Scalar,
    /// The field elements of `-SMALL_SUMS..SMALL_SUMS`.
    pub(crate) small_sums: [Scalar; 2 * SMALL_SUMS as usize],
}

/// Entries of the small table at or below this are not small integers (every small one is
/// above it, being below 2^31 in magnitude); they are codes of large coefficients,
/// `i64::MIN` plus flags and the power, far below it.
pub(crate) const SMALL_MIN: i64 = -(1 << SMALL_BITS);

// A large coefficient's entry: `i64::MIN` plus a power `k` of two in bits 0-7 and its sign in
// bit 8 (what the kernel's `add_power` reads), for a sum of two powers the second the same way from
// bit [`SECOND_POWER`] on, and flags.

/// The entry of a large coefficient that is negative.
pub(crate) const LARGE_NEGATIVE: i64 = 1 << 8;

/// Where the second power of a sum of two powers starts in its entry.
pub(crate) const SECOND_POWER: u32 = 9;

/// The entry of a large coefficient that is a sum of two powers of two.
pub(crate) const LARGE_TWO: i64 = 1 << 18;

/// The entry of a large coefficient that is neither a power of two nor a sum of two: it is
/// added from its magnitude.
pub(crate) const LARGE_GENERAL: i64 = 1 << 19;

/// The entry of ids past the dictionary: a general large coefficient, whose magnitude is
/// looked up (and is not there, so a corrupt id cannot pass unnoticed).
const NOT_SMALL: i64 = i64::MIN + LARGE_GENERAL;

/// The dictionary, with what each path needs of every entry.
pub(crate) struct CoefficientTable<Scalar> {
    pub(crate) values: Vec<Scalar>,
    pub(crate) classes: Vec<FieldClass<Scalar>>,
    /// Every possible id's entry as a small signed integer, or the code of a large one
    /// (at most [`SMALL_MIN`]; [`NOT_SMALL`] for ids past the dictionary): a `u16` indexes it
    /// without a bounds check.
    pub(crate) small: Box<[i64; 1 << 16]>,
    /// The entry as a large integer, for entries that are not small.
    pub(crate) large: Vec<Large>,
    /// The field's integer view, when its representation allows one.
    pub(crate) integers: Option<IntegerField<Scalar>>,
    /// Each entry as [`Powers`], where it is one or two powers of two (empty without the
    /// integer view).
    powers: Vec<Option<Powers>>,
    /// Each entry times 2^320, as an integer below the order: what the wide rows multiply
    /// values by (empty without the integer view).
    pub(crate) wide: Vec<[u64; 4]>,
}

/// Little-endian 64-bit limbs of a 32-byte little-endian representation.
pub(crate) fn limbs(bytes: &[u8]) -> [u64; 4] {
    std::array::from_fn(|i| u64::from_le_bytes(bytes[8 * i..8 * i + 8].try_into().unwrap()))
}

/// Whether `a < b`, as 256-bit integers.
fn less(a: &[u64; 4], b: &[u64; 4]) -> bool {
    a.iter().rev().cmp(b.iter().rev()).is_lt()
}

/// `a - b` for `a >= b`, as 256-bit integers.
fn subtract(a: &[u64; 4], b: &[u64; 4]) -> [u64; 4] {
    let mut out = [0; 4];
    let mut borrow = false;
    for i in 0..4 {
        let (d, b1) = a[i].overflowing_sub(b[i]);
        let (d, b2) = d.overflowing_sub(u64::from(borrow));
        out[i] = d;
        borrow = b1 | b2;
    }
    out
}

impl<Scalar: PrimeField> IntegerField<Scalar> {
    /// The integer view of this field, when its representation is 32 little-endian bytes.
    fn new() -> Option<Self> {
        let one = Scalar::ONE.to_repr();
        let bytes = one.as_ref();
        if bytes.len() != 32 || bytes[0] != 1 || bytes[1..].iter().any(|&b| b != 0) {
            return None;
        }
        let minus_one = limbs((-Scalar::ONE).to_repr().as_ref());
        let modulus = {
            let mut m = minus_one;
            m[0] = m[0].checked_add(1)?; // p - 1 is even, so no carry
            m
        };
        let two_to_256 = Scalar::from(2u64).pow_vartime([256]);
        let small_sums = std::array::from_fn(|i| from_i128(i128::from(i as i64 - SMALL_SUMS)));
        Some(IntegerField {
            modulus,
            inverse: montgomery_inverse(modulus[0]),
            two_to_256,
            small_sums,
        })
    }

    /// The coefficient `value` as a signed integer of the smaller magnitude.
    fn integer(&self, value: &Scalar) -> Large {
        let positive = limbs(value.to_repr().as_ref());
        let negated = limbs((-*value).to_repr().as_ref());
        if less(&negated, &positive) {
            Large {
                negative: true,
                magnitude: negated,
            }
        } else {
            Large {
                negative: false,
                magnitude: positive,
            }
        }
    }

    /// The field element of a 320-bit sum.
    pub(crate) fn element(&self, sum: &[u64; 5]) -> Scalar {
        let mut low: [u64; 4] = sum[..4].try_into().expect("four limbs");
        while !less(&low, &self.modulus) {
            low = subtract(&low, &self.modulus);
        }
        let low = self.reduced(&low);
        if sum[4] == 0 {
            low
        } else {
            low + self.two_to_256 * Scalar::from(sum[4])
        }
    }

    /// The field element of an integer below the order.
    pub(crate) fn reduced(&self, limbs: &[u64; 4]) -> Scalar {
        let mut bytes = Scalar::Repr::default();
        for (chunk, limb) in bytes.as_mut().chunks_mut(8).zip(limbs) {
            chunk.copy_from_slice(&limb.to_le_bytes());
        }
        Option::<Scalar>::from(Scalar::from_repr(bytes)).expect("reduced below p")
    }

    /// The field element of a small sum.
    #[inline]
    pub(crate) fn small_element(&self, sum: i64) -> Scalar {
        match self.small_sums.get(sum.wrapping_add(SMALL_SUMS) as usize) {
            Some(element) => *element,
            None => from_i128(i128::from(sum)),
        }
    }
}

/// `value` as a field element.
pub(crate) fn from_i128<Scalar: PrimeField>(value: i128) -> Scalar {
    let magnitude = value.unsigned_abs();
    let low = Scalar::from(magnitude as u64);
    let element = match (magnitude >> 64) as u64 {
        0 => low,
        high => low + Scalar::from(high) * Scalar::from(1u64 << 32).square(),
    };
    if value < 0 {
        -element
    } else {
        element
    }
}

impl<Scalar: PrimeField> CoefficientTable<Scalar> {
    /// The table of `dictionary` (coefficient id `i` is `dictionary[i]`), which it keeps.
    pub(crate) fn new(dictionary: Vec<Scalar>) -> Self {
        let powers: Vec<Scalar> = (0..=MAX_DOUBLINGS)
            .scan(Scalar::ONE, |power, _| {
                let current = *power;
                *power = power.double();
                Some(current)
            })
            .collect();
        let classes = dictionary
            .iter()
            .map(|value| {
                if *value == Scalar::ONE {
                    FieldClass::One
                } else if *value == -Scalar::ONE {
                    FieldClass::MinusOne
                } else if let Some(k) = powers.iter().position(|p| p == value) {
                    FieldClass::PowerOfTwo(k as u8)
                } else {
                    FieldClass::General(*value)
                }
            })
            .collect();
        let integers = IntegerField::<Scalar>::new();
        let (small_entries, large): (Vec<i64>, Vec<Large>) = match &integers {
            Some(field) => dictionary
                .iter()
                .map(|value| {
                    let large = field.integer(value);
                    let [low, rest @ ..] = large.magnitude;
                    let small = if rest == [0; 3] && low < 1 << SMALL_BITS {
                        if large.negative {
                            -(low as i64)
                        } else {
                            low as i64
                        }
                    } else {
                        large.code()
                    };
                    (small, large)
                })
                .unzip(),
            None => (Vec::new(), Vec::new()),
        };
        let mut small: Box<[i64; 1 << 16]> = vec![NOT_SMALL; 1 << 16]
            .into_boxed_slice()
            .try_into()
            .expect("65536 entries");
        small[..small_entries.len()].copy_from_slice(&small_entries);
        let powers = small_entries
            .iter()
            .map(|&entry| powers_of(entry))
            .collect();
        let wide = match &integers {
            Some(_) => {
                let two_to_320 = Scalar::from(2u64).pow_vartime([320]);
                dictionary
                    .iter()
                    .map(|value| limbs((*value * two_to_320).to_repr().as_ref()))
                    .collect()
            }
            None => Vec::new(),
        };
        CoefficientTable {
            wide,
            values: dictionary,
            classes,
            small,
            large,
            integers,
            powers,
        }
    }
}

impl<Scalar> CoefficientTable<Scalar> {
    /// The dictionary, in id order.
    pub(crate) fn dictionary(&self) -> &[Scalar] {
        &self.values
    }

    /// Whether coefficient `id` is too large for the common integer loop.
    pub(crate) fn is_large(&self, id: u16) -> bool {
        self.small[usize::from(id)] <= SMALL_MIN
    }

    /// Whether coefficient `id` is neither a small integer nor one or two powers of two, as
    /// the integer path sees it (no id past the dictionary is).
    pub(crate) fn is_general(&self, id: u16) -> bool {
        let entry = self.small[usize::from(id)];
        usize::from(id) < self.values.len()
            && entry <= SMALL_MIN
            && entry.wrapping_sub(i64::MIN) & LARGE_GENERAL != 0
    }

    /// Coefficient `id` as [`Powers`] when it is `± 2^k` or `± (2^k + 2^j)` (seen as the
    /// integer of smaller magnitude); `None` for other coefficients.
    pub(crate) fn powers(&self, id: u16) -> Option<Powers> {
        self.powers.get(usize::from(id)).copied().flatten()
    }
}

/// A small-table entry as [`Powers`], where it is one or two powers of two.
fn powers_of(entry: i64) -> Option<Powers> {
    if entry > SMALL_MIN {
        let magnitude = entry.unsigned_abs();
        let low = magnitude.trailing_zeros() as u8;
        let rest = magnitude & (magnitude - 1);
        match rest.count_ones() {
            0 => Some((entry < 0, low, None)),
            1 => Some((entry < 0, low, Some(rest.trailing_zeros() as u8))),
            _ => None,
        }
    } else {
        let flags = entry.wrapping_sub(i64::MIN);
        let negative = flags & LARGE_NEGATIVE != 0;
        if flags & LARGE_GENERAL != 0 {
            None
        } else if flags & LARGE_TWO != 0 {
            Some((negative, flags as u8, Some((flags >> SECOND_POWER) as u8)))
        } else {
            Some((negative, flags as u8, None))
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use blstrs::Scalar as Fr;
    use ff::Field;

    #[test]
    fn coefficients_are_classified_for_both_paths() {
        let dictionary = [
            Fr::ONE,
            -Fr::ONE,
            Fr::from(8u64),
            Fr::from(1u64 << 40),
            -Fr::from(3u64),
            Fr::from(2u64).pow_vartime([200]),
            -Fr::from(2u64).pow_vartime([250]),
            Fr::from(2u64).pow_vartime([66]) + Fr::from(2u64).pow_vartime([101]),
            -(Fr::from(1u64 << 31) + Fr::from(2u64).pow_vartime([200])),
        ];
        let table = CoefficientTable::new(dictionary.to_vec());
        assert_eq!(table.classes[0], FieldClass::One);
        assert_eq!(table.classes[1], FieldClass::MinusOne);
        assert_eq!(table.classes[2], FieldClass::PowerOfTwo(3));
        assert_eq!(table.classes[3], FieldClass::General(Fr::from(1u64 << 40)));
        let power = |negative: bool, k: i64| k + if negative { LARGE_NEGATIVE } else { 0 };
        let two = |negative: bool, k: i64, j: i64| {
            power(negative, k) + (power(negative, j) << SECOND_POWER) + LARGE_TWO
        };
        assert_eq!(
            table.small[..10],
            [
                1,
                -1,
                8,
                i64::MIN + power(false, 40),
                -3,
                i64::MIN + power(false, 200),
                i64::MIN + power(true, 250),
                i64::MIN + two(false, 66, 101),
                i64::MIN + two(true, 31, 200),
                NOT_SMALL
            ]
        );
        assert!([3, 5, 6, 7, 8]
            .iter()
            .all(|&id| table.small[id] <= SMALL_MIN));
        assert_eq!(table.large[5].magnitude, [0, 0, 0, 1 << 8]);
        assert!(!table.large[5].negative);
        assert_eq!(table.large[6].magnitude, [0, 0, 0, 1 << 58]);
        assert!(table.large[6].negative);
        assert_eq!(table.large[4].powers(), Some(vec![0, 1]));
        let general = Large {
            negative: true,
            magnitude: [3, 0, 0, 1],
        };
        assert_eq!(general.powers(), None, "three bits set");
        assert_eq!(general.code(), i64::MIN + LARGE_NEGATIVE + LARGE_GENERAL);
    }
}
