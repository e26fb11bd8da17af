//! Packing bits into field elements: as bellperson's `multipack`, with each packing
//! constraint's combination written straight into the buffer `enforce` provides.

use bellpepper_core::boolean::Boolean;
use bellpepper_core::num::AllocatedNum;
use bellpepper_core::{ConstraintSystem, LinearCombination, SynthesisError, Variable};
use ff::PrimeField;

/// `sum 2^i bits[i]`, when every bit is known.
fn packed_value<Scalar: PrimeField>(bits: &[Boolean]) -> Option<Scalar> {
    let mut coeff = Scalar::ONE;
    let mut value = Scalar::ZERO;
    for bit in bits {
        if bit.get_value()? {
            value += coeff;
        }
        coeff = coeff.double();
    }
    Some(value)
}

/// Adds `sum 2^i bits[i]` to `lc`, with `one` standing for constants and negations.
fn add_packed<Scalar: PrimeField>(
    mut lc: LinearCombination<Scalar>,
    bits: &[Boolean],
    one: Variable,
) -> LinearCombination<Scalar> {
    let mut coeff = Scalar::ONE;
    for bit in bits {
        lc = bit.add_to_lc(lc, one, coeff);
        coeff = coeff.double();
    }
    lc
}

/// Packs `bits` (least significant first) into public inputs of `CAPACITY` bits each, with
/// a constraint `packed * 1 = input` per input.
pub fn pack_into_inputs<Scalar, CS>(mut cs: CS, bits: &[Boolean]) -> Result<(), SynthesisError>
where
    Scalar: PrimeField,
    CS: ConstraintSystem<Scalar>,
{
    for (i, chunk) in bits.chunks(Scalar::CAPACITY as usize).enumerate() {
        let value = packed_value::<Scalar>(chunk);
        let input = cs.alloc_input(
            || format!("input {}", i),
            || value.ok_or(SynthesisError::AssignmentMissing),
        )?;
        cs.enforce(
            || format!("packing constraint {}", i),
            |lc| add_packed(lc, chunk, CS::one()),
            |lc| lc + CS::one(),
            |lc| lc + input,
        );
    }
    Ok(())
}

/// Big-endian bits of each byte, bytes in order.
pub fn bytes_to_bits(bytes: &[u8]) -> Vec<bool> {
    bytes
        .iter()
        .flat_map(|&byte| (0..8).rev().map(move |i| (byte >> i) & 1 == 1))
        .collect()
}

/// Little-endian bits of each byte, bytes in order.
pub fn bytes_to_bits_le(bytes: &[u8]) -> Vec<bool> {
    bytes
        .iter()
        .flat_map(|&byte| (0..8).map(move |i| (byte >> i) & 1 == 1))
        .collect()
}

/// The public inputs [`pack_into_inputs`] allocates for `bits`, computed outside a circuit.
pub fn compute_multipacking<Scalar: PrimeField>(bits: &[bool]) -> Vec<Scalar> {
    bits.chunks(Scalar::CAPACITY as usize)
        .map(|chunk| {
            let mut coeff = Scalar::ONE;
            let mut value = Scalar::ZERO;
            for &bit in chunk {
                if bit {
                    value += coeff;
                }
                coeff = coeff.double();
            }
            value
        })
        .collect()
}

/// Packs the first `CAPACITY` bits into one allocated number, constrained to equal them.
pub fn pack_bits<Scalar, CS>(
    mut cs: CS,
    bits: &[Boolean],
) -> Result<AllocatedNum<Scalar>, SynthesisError>
where
    Scalar: PrimeField,
    CS: ConstraintSystem<Scalar>,
{
    let bits = &bits[..bits.len().min(Scalar::CAPACITY as usize)];
    let value = packed_value::<Scalar>(bits);
    let num = AllocatedNum::alloc(cs.namespace(|| "input"), || {
        value.ok_or(SynthesisError::AssignmentMissing)
    })?;
    cs.enforce(
        || "packing constraint",
        |lc| add_packed(lc, bits, CS::one()),
        |lc| lc + CS::one(),
        |lc| lc + num.get_variable(),
    );
    Ok(num)
}
