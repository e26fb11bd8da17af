//! `UInt32`: a 32-bit word as little-endian booleans, with the operations SHA-256 needs.
//! Constraint-identical to bellperson's, but the bits live inline (no `Vec` per word) and
//! `addmany` writes its packed equality straight into [`MultiEq`] without temporaries.

use bellpepper_core::boolean::{AllocatedBit, Boolean};
use bellpepper_core::{ConstraintSystem, SynthesisError};
use ff::PrimeField;

use super::multieq::MultiEq;

/// Most operands `addmany` accepts; bellperson's limit too.
pub const MAX_ADDMANY_OPERANDS: usize = 10;

/// A 32-bit unsigned integer in a circuit, least significant bit first.
#[derive(Clone)]
pub struct UInt32 {
    bits: [Boolean; 32],
    value: Option<u32>,
}

/// Its value, when known (the bits are gadgets without `Debug`, as upstream's).
impl std::fmt::Debug for UInt32 {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("UInt32")
            .field("value", &self.value)
            .finish_non_exhaustive()
    }
}

/// The value of little-endian `bits`, when every bit is known.
fn value_of(bits: &[Boolean; 32]) -> Option<u32> {
    bits.iter().rev().try_fold(0u32, |acc, bit| {
        bit.get_value().map(|b| (acc << 1) | u32::from(b))
    })
}

impl UInt32 {
    /// A constant word: no variables, no constraints.
    pub fn constant(value: u32) -> Self {
        UInt32 {
            bits: std::array::from_fn(|i| Boolean::constant((value >> i) & 1 == 1)),
            value: Some(value),
        }
    }

    /// A word of these bits (least significant first) and value.
    pub(crate) fn from_parts(bits: [Boolean; 32], value: Option<u32>) -> Self {
        UInt32 { bits, value }
    }

    /// The bits, least significant first.
    pub(crate) fn bits(&self) -> &[Boolean; 32] {
        &self.bits
    }

    /// Allocates 32 boolean-constrained bits holding `value`.
    pub fn alloc<Scalar, CS>(mut cs: CS, value: Option<u32>) -> Result<Self, SynthesisError>
    where
        Scalar: PrimeField,
        CS: ConstraintSystem<Scalar>,
    {
        let mut bits: [Boolean; 32] = std::array::from_fn(|_| Boolean::constant(false));
        for (i, slot) in bits.iter_mut().enumerate() {
            let bit = value.map(|v| (v >> i) & 1 == 1);
            *slot =
                AllocatedBit::alloc(cs.namespace(|| format!("allocated bit {}", i)), bit)?.into();
        }
        Ok(UInt32 { bits, value })
    }

    /// The bits, most significant first.
    pub fn into_bits_be(self) -> Vec<Boolean> {
        self.bits.into_iter().rev().collect()
    }

    /// A word from 32 bits given most significant first. Panics unless `bits.len() == 32`.
    pub fn from_bits_be(bits: &[Boolean]) -> Self {
        assert_eq!(bits.len(), 32, "a UInt32 takes exactly 32 bits");
        let bits: [Boolean; 32] = std::array::from_fn(|i| bits[31 - i].clone());
        let value = value_of(&bits);
        UInt32 { bits, value }
    }

    /// The bits, least significant first.
    pub fn into_bits(self) -> Vec<Boolean> {
        self.bits.into()
    }

    /// A word from 32 bits given least significant first. Panics unless `bits.len() == 32`.
    pub fn from_bits(bits: &[Boolean]) -> Self {
        assert_eq!(bits.len(), 32, "a UInt32 takes exactly 32 bits");
        let bits: [Boolean; 32] = std::array::from_fn(|i| bits[i].clone());
        let value = value_of(&bits);
        UInt32 { bits, value }
    }

    /// Rotation right by `by` (mod 32); costs no constraint.
    pub fn rotr(&self, by: usize) -> Self {
        let by = by % 32;
        UInt32 {
            bits: std::array::from_fn(|i| self.bits[(i + by) % 32].clone()),
            value: self.value.map(|v| v.rotate_right(by as u32)),
        }
    }

    /// Logical shift right by `by` (mod 32); costs no constraint.
    pub fn shr(&self, by: usize) -> Self {
        let by = by % 32;
        UInt32 {
            bits: std::array::from_fn(|i| {
                self.bits
                    .get(i + by)
                    .cloned()
                    .unwrap_or(Boolean::constant(false))
            }),
            value: self.value.map(|v| v >> by),
        }
    }

    /// Applies a bitwise three-input gate, bit by bit, in namespaces `{name} {i}`.
    fn bitwise3<Scalar, CS>(
        mut cs: CS,
        name: &'static str,
        words: [&Self; 3],
        value: fn(u32, u32, u32) -> u32,
        gate: fn(&mut CS, usize, &'static str, [&Boolean; 3]) -> Result<Boolean, SynthesisError>,
    ) -> Result<Self, SynthesisError>
    where
        Scalar: PrimeField,
        CS: ConstraintSystem<Scalar>,
    {
        let [a, b, c] = words;
        let value = match (a.value, b.value, c.value) {
            (Some(x), Some(y), Some(z)) => Some(value(x, y, z)),
            _ => None,
        };
        let mut bits: [Boolean; 32] = std::array::from_fn(|_| Boolean::constant(false));
        for (i, slot) in bits.iter_mut().enumerate() {
            *slot = gate(&mut cs, i, name, [&a.bits[i], &b.bits[i], &c.bits[i]])?;
        }
        Ok(UInt32 { bits, value })
    }

    /// SHA-256 `Maj`, bit by bit.
    pub fn sha256_maj<Scalar, CS>(
        cs: CS,
        a: &Self,
        b: &Self,
        c: &Self,
    ) -> Result<Self, SynthesisError>
    where
        Scalar: PrimeField,
        CS: ConstraintSystem<Scalar>,
    {
        Self::bitwise3(
            cs,
            "maj",
            [a, b, c],
            |a, b, c| (a & b) ^ (a & c) ^ (b & c),
            |cs, i, name, [a, b, c]| {
                Boolean::sha256_maj(cs.namespace(|| format!("{} {}", name, i)), a, b, c)
            },
        )
    }

    /// SHA-256 `Ch`, bit by bit.
    pub fn sha256_ch<Scalar, CS>(
        cs: CS,
        a: &Self,
        b: &Self,
        c: &Self,
    ) -> Result<Self, SynthesisError>
    where
        Scalar: PrimeField,
        CS: ConstraintSystem<Scalar>,
    {
        Self::bitwise3(
            cs,
            "ch",
            [a, b, c],
            |a, b, c| (a & b) ^ (!a & c),
            |cs, i, name, [a, b, c]| {
                Boolean::sha256_ch(cs.namespace(|| format!("{} {}", name, i)), a, b, c)
            },
        )
    }

    /// Bitwise XOR.
    pub fn xor<Scalar, CS>(&self, mut cs: CS, other: &Self) -> Result<Self, SynthesisError>
    where
        Scalar: PrimeField,
        CS: ConstraintSystem<Scalar>,
    {
        let mut bits: [Boolean; 32] = std::array::from_fn(|_| Boolean::constant(false));
        for (i, slot) in bits.iter_mut().enumerate() {
            *slot = Boolean::xor(
                cs.namespace(|| format!("xor of bit {}", i)),
                &self.bits[i],
                &other.bits[i],
            )?;
        }
        Ok(UInt32 {
            bits,
            value: self.value.zip(other.value).map(|(a, b)| a ^ b),
        })
    }

    /// The sum of 2 to 10 words mod 2^32: allocates the full-width sum's bits and adds
    /// "operands == sum" to the [`MultiEq`] at the root of `cs`. Constants fold to a constant.
    pub fn addmany<Scalar, CS, M>(mut cs: M, operands: &[Self]) -> Result<Self, SynthesisError>
    where
        Scalar: PrimeField,
        CS: ConstraintSystem<Scalar>,
        M: ConstraintSystem<Scalar, Root = MultiEq<Scalar, CS>>,
    {
        if Scalar::NUM_BITS < 64 {
            return Err(SynthesisError::IncompatibleLengthVector(format!(
                "addmany needs a field of at least 64 bits, not {}",
                Scalar::NUM_BITS
            )));
        }
        if !(2..=MAX_ADDMANY_OPERANDS).contains(&operands.len()) {
            return Err(SynthesisError::IncompatibleLengthVector(format!(
                "addmany takes 2 to {MAX_ADDMANY_OPERANDS} operands, not {}",
                operands.len()
            )));
        }

        let sum = operands
            .iter()
            .try_fold(0u64, |acc, op| op.value.map(|v| acc + u64::from(v)));
        let modular = sum.map(|v| v as u32);
        let all_constant = operands
            .iter()
            .all(|op| op.bits.iter().all(Boolean::is_constant));
        if let (true, Some(value)) = (all_constant, modular) {
            return Ok(UInt32::constant(value));
        }

        // The sum fits in as many bits as the largest possible sum needs.
        let max_sum = operands.len() as u64 * u64::from(u32::MAX);
        let width = (u64::BITS - max_sum.leading_zeros()) as usize;
        let mut result: [Boolean; 36] = std::array::from_fn(|_| Boolean::constant(false));
        for (i, slot) in result.iter_mut().take(width).enumerate() {
            let bit = sum.map(|v| (v >> i) & 1 == 1);
            *slot = AllocatedBit::alloc(cs.namespace(|| format!("result bit {}", i)), bit)?.into();
        }

        cs.get_root().enforce_sum_of_bits(
            width,
            operands.iter().map(|op| &op.bits[..]),
            &result[..width],
        )?;

        Ok(UInt32 {
            bits: std::array::from_fn(|i| result[i].clone()),
            value: modular,
        })
    }
}
