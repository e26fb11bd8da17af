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

#[cfg(test)]
mod tests {
    use blstrs::Scalar as Fr;
    use ff::{Field, PrimeFieldBits};

    use super::*;
    use crate::test_cs::TestConstraintSystem;

    fn number(cs: &mut TestConstraintSystem<Fr>, name: &str, value: u64) -> AllocatedNum<Fr> {
        AllocatedNum::alloc(cs.namespace(|| name), || Ok(Fr::from(value))).unwrap()
    }

    #[test]
    fn products_and_squares_are_computed_and_constrained() {
        let mut cs = TestConstraintSystem::<Fr>::new();
        let x = number(&mut cs, "x", 7);
        let y = number(&mut cs, "y", 9);
        let product = x.mul(cs.namespace(|| "mul"), &y).unwrap();
        let square = x.square(cs.namespace(|| "square")).unwrap();
        assert_eq!(product.get_value(), Some(Fr::from(63u64)));
        assert_eq!(square.get_value(), Some(Fr::from(49u64)));
        assert!(cs.is_satisfied());
        for path in ["mul/product num", "square/squared num"] {
            let value = cs.get(path);
            cs.set(path, value + Fr::ONE);
            assert!(!cs.is_satisfied(), "{path}: a wrong value passes");
            cs.set(path, value);
        }
    }

    #[test]
    fn strict_bits_are_the_number_and_canonical() {
        for value in [Fr::from(0u64), Fr::from(0x1234_5678u64), -Fr::ONE] {
            let mut cs = TestConstraintSystem::<Fr>::new();
            let n = AllocatedNum::alloc(cs.namespace(|| "n"), || Ok(value)).unwrap();
            let bits = n.to_bits_le_strict(cs.namespace(|| "bits")).unwrap();
            let expected: Vec<bool> = value.to_le_bits().into_iter().take(bits.len()).collect();
            let got: Vec<bool> = bits.iter().map(|b| b.get_value().unwrap()).collect();
            assert_eq!(got, expected);
            assert!(cs.is_satisfied());
            // The packing constraint ties the bits to the number.
            cs.set("n/num", value + Fr::ONE);
            assert!(!cs.is_satisfied(), "a number unlike its bits passes");
        }
        let mut cs = TestConstraintSystem::<Fr>::new();
        let n = number(&mut cs, "n", 5);
        let bits = n.to_bits_le(cs.namespace(|| "bits")).unwrap();
        assert_eq!(bits.len(), Fr::NUM_BITS as usize);
        assert!(cs.is_satisfied());
        cs.set("bits/bit 1/boolean", Fr::ONE);
        assert!(!cs.is_satisfied(), "a bit unlike the number passes");
    }

    #[test]
    fn zero_has_no_inverse() {
        let mut cs = TestConstraintSystem::<Fr>::new();
        let three = number(&mut cs, "three", 3);
        three.assert_nonzero(cs.namespace(|| "nonzero")).unwrap();
        assert!(cs.is_satisfied());
        cs.set("nonzero/ephemeral inverse", Fr::from(2u64));
        assert!(!cs.is_satisfied(), "a wrong inverse passes");
        let zero = number(&mut cs, "zero", 0);
        let err = zero.assert_nonzero(cs.namespace(|| "zero nonzero"));
        assert!(matches!(err, Err(SynthesisError::DivisionByZero)));
    }

    #[test]
    fn conditional_reversal_swaps_exactly_when_asked() {
        for swap in [false, true] {
            let mut cs = TestConstraintSystem::<Fr>::new();
            let a = number(&mut cs, "a", 11);
            let b = number(&mut cs, "b", 22);
            let condition =
                Boolean::from(AllocatedBit::alloc(cs.namespace(|| "swap"), Some(swap)).unwrap());
            let (c, d) =
                AllocatedNum::conditionally_reverse(cs.namespace(|| "rev"), &a, &b, &condition)
                    .unwrap();
            let (first, second) = if swap { (22u64, 11u64) } else { (11, 22) };
            assert_eq!(c.get_value(), Some(Fr::from(first)));
            assert_eq!(d.get_value(), Some(Fr::from(second)));
            assert!(cs.is_satisfied());
            cs.set("rev/conditional reversal result 1/num", Fr::from(second));
            assert!(!cs.is_satisfied(), "swap {swap}: the other value passes");
        }
    }

    #[test]
    fn an_inputized_number_is_tied_to_its_input() {
        let mut cs = TestConstraintSystem::<Fr>::new();
        let x = number(&mut cs, "x", 42);
        x.inputize(cs.namespace(|| "public")).unwrap();
        assert!(cs.verify(&[Fr::from(42u64)]));
        assert!(cs.is_satisfied());
        cs.set("public/input variable", Fr::from(43u64));
        assert!(!cs.is_satisfied(), "an input unlike the number passes");
    }

    #[test]
    fn a_num_sums_bits_with_coefficients_and_scales() {
        let mut cs = TestConstraintSystem::<Fr>::new();
        let bits: Vec<Boolean> = [true, false, true]
            .iter()
            .enumerate()
            .map(|(i, &v)| {
                Boolean::from(
                    AllocatedBit::alloc(cs.namespace(|| format!("b{i}")), Some(v)).unwrap(),
                )
            })
            .collect();
        let mut sum = Num::zero();
        for (i, bit) in bits.iter().enumerate() {
            sum = sum.add_bool_with_coeff(
                TestConstraintSystem::<Fr>::one(),
                bit,
                Fr::from(1u64 << i),
            );
        }
        sum = sum.add_bool_with_coeff(
            TestConstraintSystem::<Fr>::one(),
            &bits[1].not(),
            Fr::from(8u64),
        );
        let sum = sum.scale(Fr::from(3u64));
        let expected = Fr::from(3 * (1 + 4 + 8u64));
        assert_eq!(sum.get_value(), Some(expected));
        let total = number(&mut cs, "total", 39);
        cs.enforce(
            || "sum",
            |lc| sum.add_to_lc(lc, Fr::ONE),
            |lc| lc + TestConstraintSystem::<Fr>::one(),
            |lc| lc + total.get_variable(),
        );
        assert!(cs.is_satisfied());
        cs.set("total/num", expected + Fr::ONE);
        assert!(!cs.is_satisfied(), "a wrong total passes");
    }
}
