//! Field elements in a circuit: allocated numbers and linear combinations with known values.

use ff::{PrimeField, PrimeFieldBits};
use serde::{Deserialize, Serialize};

use crate::gadgets::boolean::{self, AllocatedBit, Boolean};
use crate::{ConstraintSystem, LinearCombination, SynthesisError, Variable};

/// A variable holding a field element, with its witness value when known.
#[derive(Serialize, Deserialize)]
pub struct AllocatedNum<Scalar: PrimeField> {
    value: Option<Scalar>,
    variable: Variable,
}

impl<Scalar: PrimeField> Clone for AllocatedNum<Scalar> {
    fn clone(&self) -> Self {
        AllocatedNum {
            value: self.value,
            variable: self.variable,
        }
    }
}

/// Adds `bits[i] * 2^i` for every bit, then `-target`: the packing identity that
/// `to_bits_le` and `to_bits_le_strict` enforce to be zero.
fn add_packing_terms<Scalar: PrimeField>(
    mut lc: LinearCombination<Scalar>,
    bits: &[AllocatedBit],
    target: Variable,
) -> LinearCombination<Scalar> {
    lc.reserve(0, bits.len() + 1);
    let mut coeff = Scalar::ONE;
    for bit in bits {
        lc.add_assign_term(coeff, bit.get_variable());
        coeff = coeff.double();
    }
    lc - target
}

/// ANDs all bits of `run` together, naming each gate `and {position}`.
fn and_all<Scalar, CS>(mut cs: CS, run: &[AllocatedBit]) -> Result<AllocatedBit, SynthesisError>
where
    Scalar: PrimeField,
    CS: ConstraintSystem<Scalar>,
{
    let (first, rest) = run
        .split_first()
        .expect("a run of set bits of the modulus is never empty");
    let mut acc = first.clone();
    for (offset, bit) in rest.iter().enumerate() {
        acc = AllocatedBit::and(cs.namespace(|| format!("and {}", offset + 1)), &acc, bit)?;
    }
    Ok(acc)
}

impl<Scalar: PrimeField> AllocatedNum<Scalar> {
    /// Allocates a private number whose value `value` computes.
    pub fn alloc<CS, F>(cs: CS, value: F) -> Result<Self, SynthesisError>
    where
        CS: ConstraintSystem<Scalar>,
        F: FnOnce() -> Result<Scalar, SynthesisError>,
    {
        Self::alloc_maybe_input(cs, false, value)
    }

    /// Allocates a public input number whose value `value` computes.
    pub fn alloc_input<CS, F>(cs: CS, value: F) -> Result<Self, SynthesisError>
    where
        CS: ConstraintSystem<Scalar>,
        F: FnOnce() -> Result<Scalar, SynthesisError>,
    {
        Self::alloc_maybe_input(cs, true, value)
    }

    /// [`Self::alloc_input`] when `is_input`, else [`Self::alloc`]. The value is recorded
    /// only when the constraint system runs the value closure, as upstream does.
    pub fn alloc_maybe_input<CS, F>(
        mut cs: CS,
        is_input: bool,
        value: F,
    ) -> Result<Self, SynthesisError>
    where
        CS: ConstraintSystem<Scalar>,
        F: FnOnce() -> Result<Scalar, SynthesisError>,
    {
        let mut known = None;
        let recording = || {
            let v = value()?;
            known = Some(v);
            Ok(v)
        };
        let variable = if is_input {
            cs.alloc_input(|| "input num", recording)?
        } else {
            cs.alloc(|| "num", recording)?
        };
        Ok(AllocatedNum {
            value: known,
            variable,
        })
    }

    /// Exposes this number as a new public input tied to it by `input * 1 = self`.
    pub fn inputize<CS>(&self, mut cs: CS) -> Result<(), SynthesisError>
    where
        CS: ConstraintSystem<Scalar>,
    {
        let input = cs.alloc_input(
            || "input variable",
            || self.value.ok_or(SynthesisError::AssignmentMissing),
        )?;
        cs.enforce(
            || "enforce input is correct",
            |lc| lc + input,
            |lc| lc + CS::one(),
            |lc| lc + self.variable,
        );
        Ok(())
    }

    /// The canonical little-endian bits of this number: also enforces that the bits, read as
    /// an integer, are below the field modulus.
    ///
    /// Walking the bits of `modulus - 1` from the top: where that bit is one, the number's
    /// bit is allocated freely; where it is zero, the number's bit is forced to zero if every
    /// higher one-bit of `modulus - 1` was matched (the AND of those bits so far).
    pub fn to_bits_le_strict<CS>(&self, mut cs: CS) -> Result<Vec<Boolean>, SynthesisError>
    where
        CS: ConstraintSystem<Scalar>,
        Scalar: PrimeFieldBits,
    {
        let width = Scalar::NUM_BITS as usize;
        let bound = (-Scalar::ONE).to_le_bits();
        let own_bits = self.value.map(|v| v.to_le_bits());
        let own_bit = |position: usize| own_bits.as_ref().map(|bits| bits[position]);

        // Most significant first, as the walk goes.
        let mut msb_first: Vec<AllocatedBit> = Vec::with_capacity(width);
        let mut prefix_matched: Option<AllocatedBit> = None;
        let mut run: Vec<AllocatedBit> = Vec::new();
        for (i, position) in (0..width).rev().enumerate() {
            let value = own_bit(position);
            if bound[position] {
                let bit = AllocatedBit::alloc(cs.namespace(|| format!("bit {}", i)), value)?;
                run.push(bit.clone());
                msb_first.push(bit);
            } else {
                if !run.is_empty() {
                    run.extend(prefix_matched.take());
                    prefix_matched = Some(and_all(
                        cs.namespace(|| format!("run ending at {}", i)),
                        &run,
                    )?);
                    run.clear();
                }
                let guard = prefix_matched
                    .as_ref()
                    .expect("modulus - 1 has its top bit set");
                let bit = AllocatedBit::alloc_conditionally(
                    cs.namespace(|| format!("bit {}", i)),
                    value,
                    guard,
                )?;
                msb_first.push(bit);
            }
        }
        debug_assert!(
            run.is_empty(),
            "modulus - 1 is even, so its lowest bit is zero"
        );

        msb_first.reverse();
        let lsb_first = msb_first;
        cs.enforce(
            || "unpacking constraint",
            |lc| lc,
            |lc| lc,
            |lc| add_packing_terms(lc, &lsb_first, self.variable),
        );
        Ok(lsb_first.into_iter().map(Boolean::from).collect())
    }

    /// The little-endian bits of this number (not checked to be canonical).
    pub fn to_bits_le<CS>(&self, mut cs: CS) -> Result<Vec<Boolean>, SynthesisError>
    where
        CS: ConstraintSystem<Scalar>,
        Scalar: PrimeFieldBits,
    {
        let bits = boolean::field_into_allocated_bits_le(&mut cs, self.value)?;
        cs.enforce(
            || "unpacking constraint",
            |lc| lc,
            |lc| lc,
            |lc| add_packing_terms(lc, &bits, self.variable),
        );
        Ok(bits.into_iter().map(Boolean::from).collect())
    }

    /// `self * other`, as a new number.
    pub fn mul<CS>(&self, mut cs: CS, other: &Self) -> Result<Self, SynthesisError>
    where
        CS: ConstraintSystem<Scalar>,
    {
        let mut value = None;
        let variable = cs.alloc(
            || "product num",
            || {
                let product = self.value.ok_or(SynthesisError::AssignmentMissing)?
                    * other.value.ok_or(SynthesisError::AssignmentMissing)?;
                value = Some(product);
                Ok(product)
            },
        )?;
        cs.enforce(
            || "multiplication constraint",
            |lc| lc + self.variable,
            |lc| lc + other.variable,
            |lc| lc + variable,
        );
        Ok(AllocatedNum { value, variable })
    }

    /// `self * self`, as a new number.
    pub fn square<CS>(&self, mut cs: CS) -> Result<Self, SynthesisError>
    where
        CS: ConstraintSystem<Scalar>,
    {
        let mut value = None;
        let variable = cs.alloc(
            || "squared num",
            || {
                let square = self
                    .value
                    .ok_or(SynthesisError::AssignmentMissing)?
                    .square();
                value = Some(square);
                Ok(square)
            },
        )?;
        cs.enforce(
            || "squaring constraint",
            |lc| lc + self.variable,
            |lc| lc + self.variable,
            |lc| lc + variable,
        );
        Ok(AllocatedNum { value, variable })
    }

    /// Enforces `self != 0` by exhibiting an inverse; a zero value is `DivisionByZero`.
    pub fn assert_nonzero<CS>(&self, mut cs: CS) -> Result<(), SynthesisError>
    where
        CS: ConstraintSystem<Scalar>,
    {
        let inverse = cs.alloc(
            || "ephemeral inverse",
            || {
                let value = self.value.ok_or(SynthesisError::AssignmentMissing)?;
                Option::from(value.invert()).ok_or(SynthesisError::DivisionByZero)
            },
        )?;
        cs.enforce(
            || "nonzero assertion constraint",
            |lc| lc + self.variable,
            |lc| lc + inverse,
            |lc| lc + CS::one(),
        );
        Ok(())
    }

    /// `(b, a)` when `condition` is true, else `(a, b)`, as two new numbers.
    pub fn conditionally_reverse<CS>(
        mut cs: CS,
        a: &Self,
        b: &Self,
        condition: &Boolean,
    ) -> Result<(Self, Self), SynthesisError>
    where
        CS: ConstraintSystem<Scalar>,
    {
        let pick = |if_true: &Self, if_false: &Self| {
            let chosen = if condition
                .get_value()
                .ok_or(SynthesisError::AssignmentMissing)?
            {
                if_true
            } else {
                if_false
            };
            chosen.value.ok_or(SynthesisError::AssignmentMissing)
        };
        let one = CS::one();

        let c = Self::alloc(cs.namespace(|| "conditional reversal result 1"), || {
            pick(b, a)
        })?;
        cs.enforce(
            || "first conditional reversal",
            |lc| lc + a.variable - b.variable,
            |lc| condition.add_to_lc(lc, one, Scalar::ONE),
            |lc| lc + a.variable - c.variable,
        );

        let d = Self::alloc(cs.namespace(|| "conditional reversal result 2"), || {
            pick(a, b)
        })?;
        cs.enforce(
            || "second conditional reversal",
            |lc| lc + b.variable - a.variable,
            |lc| condition.add_to_lc(lc, one, Scalar::ONE),
            |lc| lc + b.variable - d.variable,
        );

        Ok((c, d))
    }

    /// The witness value, if known.
    pub fn get_value(&self) -> Option<Scalar> {
        self.value
    }

    /// The underlying variable.
    pub fn get_variable(&self) -> Variable {
        self.variable
    }
}

/// A linear combination of variables together with its value, when known.
#[derive(Clone)]
pub struct Num<Scalar: PrimeField> {
    value: Option<Scalar>,
    lc: LinearCombination<Scalar>,
}

impl<Scalar: PrimeField> From<AllocatedNum<Scalar>> for Num<Scalar> {
    fn from(num: AllocatedNum<Scalar>) -> Num<Scalar> {
        Num {
            value: num.value,
            lc: LinearCombination::from_variable(num.variable),
        }
    }
}

impl<Scalar: PrimeField> Num<Scalar> {
    /// The number zero: an empty combination with known value 0.
    pub fn zero() -> Self {
        Num {
            value: Some(Scalar::ZERO),
            lc: LinearCombination::zero(),
        }
    }

    /// The value, if known.
    pub fn get_value(&self) -> Option<Scalar> {
        self.value
    }

    /// A new combination equal to `coeff * self`. Prefer [`Num::add_to_lc`], which writes
    /// into an existing combination without copying this one.
    pub fn lc(&self, coeff: Scalar) -> LinearCombination<Scalar> {
        self.add_to_lc(LinearCombination::zero(), coeff)
    }

    /// `lc + coeff * self`, merged in place: the same terms as `lc + &self.lc(coeff)`.
    pub fn add_to_lc(
        &self,
        mut lc: LinearCombination<Scalar>,
        coeff: Scalar,
    ) -> LinearCombination<Scalar> {
        lc.add_assign_scaled(coeff, &self.lc);
        lc
    }

    /// `lc - coeff * self`, merged in place: the same terms as `lc - &self.lc(coeff)`.
    pub fn sub_from_lc(
        &self,
        mut lc: LinearCombination<Scalar>,
        coeff: Scalar,
    ) -> LinearCombination<Scalar> {
        lc.sub_assign_scaled(coeff, &self.lc);
        lc
    }

    /// `self + coeff * bit`, with `one` standing for the constant one.
    pub fn add_bool_with_coeff(self, one: Variable, bit: &Boolean, coeff: Scalar) -> Self {
        let value = match (self.value, bit.get_value()) {
            (Some(current), Some(true)) => Some(current + coeff),
            (Some(current), Some(false)) => Some(current),
            _ => None,
        };
        Num {
            value,
            lc: bit.add_to_lc(self.lc, one, coeff),
        }
    }

    /// `self + other`. As upstream, a value known on one side only is kept as the sum's value.
    #[allow(clippy::should_implement_trait)]
    pub fn add(self, other: &Self) -> Self {
        let value = match (self.value, other.value) {
            (Some(x), Some(y)) => Some(x + y),
            (Some(v), None) | (None, Some(v)) => Some(v),
            (None, None) => None,
        };
        Num {
            value,
            lc: self.lc + &other.lc,
        }
    }

    /// `scalar * self`.
    pub fn scale(mut self, scalar: Scalar) -> Self {
        for (_, coeff) in self.lc.iter_mut() {
            *coeff *= scalar;
        }
        if let Some(value) = self.value.as_mut() {
            *value *= scalar;
        }
        self
    }
}
