//! Boolean variables and the logic gates between them.
//!
//! Every gate lays out exactly the constraints of bellpepper-core 0.2.1 (same order, same
//! variables, same merged terms, same names), but writes its terms straight into the
//! combination `enforce` hands it: no `Boolean::lc` temporaries, no clones.

use ff::{PrimeField, PrimeFieldBits};

use crate::{ConstraintSystem, LinearCombination, SynthesisError, Variable};

/// The field value of a bit, or `AssignmentMissing` when it is unknown.
fn bit_to_field<Scalar: PrimeField>(bit: Option<bool>) -> Result<Scalar, SynthesisError> {
    match bit {
        Some(true) => Ok(Scalar::ONE),
        Some(false) => Ok(Scalar::ZERO),
        None => Err(SynthesisError::AssignmentMissing),
    }
}

/// A variable constrained to be zero or one.
#[derive(Clone)]
pub struct AllocatedBit {
    variable: Variable,
    value: Option<bool>,
}

impl AllocatedBit {
    /// The witness value, if known.
    pub fn get_value(&self) -> Option<bool> {
        self.value
    }

    /// The underlying variable.
    pub fn get_variable(&self) -> Variable {
        self.variable
    }

    /// Allocates a bit that is forced to zero whenever `must_be_false` is one:
    /// `(1 - must_be_false - a) * a = 0`.
    pub fn alloc_conditionally<Scalar, CS>(
        mut cs: CS,
        value: Option<bool>,
        must_be_false: &AllocatedBit,
    ) -> Result<Self, SynthesisError>
    where
        Scalar: PrimeField,
        CS: ConstraintSystem<Scalar>,
    {
        let variable = cs.alloc(|| "boolean", || bit_to_field(value))?;
        cs.enforce(
            || "boolean constraint",
            |lc| lc + CS::one() - must_be_false.variable - variable,
            |lc| lc + variable,
            |lc| lc,
        );
        Ok(AllocatedBit { variable, value })
    }

    /// Allocates a bit: `(1 - a) * a = 0`.
    pub fn alloc<Scalar, CS>(mut cs: CS, value: Option<bool>) -> Result<Self, SynthesisError>
    where
        Scalar: PrimeField,
        CS: ConstraintSystem<Scalar>,
    {
        let variable = cs.alloc(|| "boolean", || bit_to_field(value))?;
        cs.enforce(
            || "boolean constraint",
            |lc| lc + CS::one() - variable,
            |lc| lc + variable,
            |lc| lc,
        );
        Ok(AllocatedBit { variable, value })
    }

    /// Allocates the result of a two-input gate. The result's value is recorded only when
    /// the constraint system runs the value closure, as upstream does.
    fn alloc_gate<Scalar, CS>(
        cs: &mut CS,
        name: &'static str,
        a: &Self,
        b: &Self,
        gate: fn(bool, bool) -> bool,
    ) -> Result<(Variable, Option<bool>), SynthesisError>
    where
        Scalar: PrimeField,
        CS: ConstraintSystem<Scalar>,
    {
        let mut value = None;
        let variable = cs.alloc(
            || name,
            || {
                let a = a.value.ok_or(SynthesisError::AssignmentMissing)?;
                let b = b.value.ok_or(SynthesisError::AssignmentMissing)?;
                let result = gate(a, b);
                value = Some(result);
                bit_to_field(Some(result))
            },
        )?;
        Ok((variable, value))
    }

    /// `a XOR b`, enforced as `(2a) * b = a + b - c`.
    pub fn xor<Scalar, CS>(mut cs: CS, a: &Self, b: &Self) -> Result<Self, SynthesisError>
    where
        Scalar: PrimeField,
        CS: ConstraintSystem<Scalar>,
    {
        let (variable, value) = Self::alloc_gate(&mut cs, "xor result", a, b, |x, y| x ^ y)?;
        cs.enforce(
            || "xor constraint",
            |lc| lc + a.variable + a.variable,
            |lc| lc + b.variable,
            |lc| lc + a.variable + b.variable - variable,
        );
        Ok(AllocatedBit { variable, value })
    }

    /// `a AND b`, enforced as `a * b = c`.
    pub fn and<Scalar, CS>(mut cs: CS, a: &Self, b: &Self) -> Result<Self, SynthesisError>
    where
        Scalar: PrimeField,
        CS: ConstraintSystem<Scalar>,
    {
        let (variable, value) = Self::alloc_gate(&mut cs, "and result", a, b, |x, y| x & y)?;
        cs.enforce(
            || "and constraint",
            |lc| lc + a.variable,
            |lc| lc + b.variable,
            |lc| lc + variable,
        );
        Ok(AllocatedBit { variable, value })
    }

    /// `a AND (NOT b)`, enforced as `a * (1 - b) = c`.
    pub fn and_not<Scalar, CS>(mut cs: CS, a: &Self, b: &Self) -> Result<Self, SynthesisError>
    where
        Scalar: PrimeField,
        CS: ConstraintSystem<Scalar>,
    {
        let (variable, value) = Self::alloc_gate(&mut cs, "and not result", a, b, |x, y| x & !y)?;
        cs.enforce(
            || "and not constraint",
            |lc| lc + a.variable,
            |lc| lc + CS::one() - b.variable,
            |lc| lc + variable,
        );
        Ok(AllocatedBit { variable, value })
    }

    /// `(NOT a) AND (NOT b)`, enforced as `(1 - a) * (1 - b) = c`.
    pub fn nor<Scalar, CS>(mut cs: CS, a: &Self, b: &Self) -> Result<Self, SynthesisError>
    where
        Scalar: PrimeField,
        CS: ConstraintSystem<Scalar>,
    {
        let (variable, value) = Self::alloc_gate(&mut cs, "nor result", a, b, |x, y| !x & !y)?;
        cs.enforce(
            || "nor constraint",
            |lc| lc + CS::one() - a.variable,
            |lc| lc + CS::one() - b.variable,
            |lc| lc + variable,
        );
        Ok(AllocatedBit { variable, value })
    }
}

/// Allocates the 64 bits of `value`, least significant first.
pub fn u64_into_boolean_vec_le<Scalar: PrimeField, CS: ConstraintSystem<Scalar>>(
    mut cs: CS,
    value: Option<u64>,
) -> Result<Vec<Boolean>, SynthesisError> {
    (0..64)
        .map(|i| {
            let bit = value.map(|v| (v >> i) & 1 == 1);
            AllocatedBit::alloc(cs.namespace(|| format!("bit {}", i)), bit).map(Boolean::from)
        })
        .collect()
}

/// Allocates the `NUM_BITS` bits of a field element, least significant first.
pub fn field_into_boolean_vec_le<Scalar, CS>(
    cs: CS,
    value: Option<Scalar>,
) -> Result<Vec<Boolean>, SynthesisError>
where
    Scalar: PrimeField,
    Scalar: PrimeFieldBits,
    CS: ConstraintSystem<Scalar>,
{
    let bits = field_into_allocated_bits_le::<Scalar, CS>(cs, value)?;
    Ok(bits.into_iter().map(Boolean::from).collect())
}

/// Allocates the `NUM_BITS` bits of a field element as `AllocatedBit`s, least significant
/// first. The bits are not tied to any variable holding the element.
pub fn field_into_allocated_bits_le<Scalar, CS>(
    mut cs: CS,
    value: Option<Scalar>,
) -> Result<Vec<AllocatedBit>, SynthesisError>
where
    Scalar: PrimeField,
    Scalar: PrimeFieldBits,
    CS: ConstraintSystem<Scalar>,
{
    let width = Scalar::NUM_BITS as usize;
    // NUM_BITS is the modulus' bit length, so the low NUM_BITS bits are the whole value.
    let bits: Vec<Option<bool>> = match value {
        Some(value) => value
            .to_le_bits()
            .into_iter()
            .take(width)
            .map(Some)
            .collect(),
        None => vec![None; width],
    };
    bits.into_iter()
        .enumerate()
        .map(|(i, bit)| AllocatedBit::alloc(cs.namespace(|| format!("bit {}", i)), bit))
        .collect()
}

/// A boolean: a constant, or an allocated bit taken as is or negated.
#[derive(Clone)]
pub enum Boolean {
    /// The allocated bit itself.
    Is(AllocatedBit),
    /// The negation of the allocated bit (`1 - bit`); costs no constraint.
    Not(AllocatedBit),
    /// A constant, not a variable.
    Constant(bool),
}

impl Boolean {
    /// True for `Boolean::Constant`.
    pub fn is_constant(&self) -> bool {
        matches!(self, Boolean::Constant(_))
    }

    /// Enforces `a == b`. Two differing constants are `Unsatisfiable`; two equal constants
    /// add no constraint.
    pub fn enforce_equal<Scalar, CS>(mut cs: CS, a: &Self, b: &Self) -> Result<(), SynthesisError>
    where
        Scalar: PrimeField,
        CS: ConstraintSystem<Scalar>,
    {
        let one = CS::one();
        match (a, b) {
            (Boolean::Constant(x), Boolean::Constant(y)) => {
                if x == y {
                    Ok(())
                } else {
                    Err(SynthesisError::Unsatisfiable)
                }
            }
            (Boolean::Constant(true), x) | (x, Boolean::Constant(true)) => {
                cs.enforce(
                    || "enforce equal to one",
                    |lc| lc,
                    |lc| lc,
                    |lc| x.sub_from_lc(lc + one, one, Scalar::ONE),
                );
                Ok(())
            }
            (Boolean::Constant(false), x) | (x, Boolean::Constant(false)) => {
                cs.enforce(
                    || "enforce equal to zero",
                    |lc| lc,
                    |lc| lc,
                    |lc| x.add_to_lc(lc, one, Scalar::ONE),
                );
                Ok(())
            }
            (x, y) => {
                cs.enforce(
                    || "enforce equal",
                    |lc| lc,
                    |lc| lc,
                    |lc| y.sub_from_lc(x.add_to_lc(lc, one, Scalar::ONE), one, Scalar::ONE),
                );
                Ok(())
            }
        }
    }

    /// The witness value, if known.
    pub fn get_value(&self) -> Option<bool> {
        match self {
            Boolean::Constant(c) => Some(*c),
            Boolean::Is(bit) => bit.get_value(),
            Boolean::Not(bit) => bit.get_value().map(|v| !v),
        }
    }

    /// A new combination equal to `coeff * self`, with `one` standing for the constant one.
    /// Prefer [`Boolean::add_to_lc`], which writes into an existing combination.
    pub fn lc<Scalar: PrimeField>(
        &self,
        one: Variable,
        coeff: Scalar,
    ) -> LinearCombination<Scalar> {
        self.add_to_lc(LinearCombination::zero(), one, coeff)
    }

    /// `lc + coeff * self`, in place: the same terms as `lc + &self.lc(one, coeff)` without
    /// building the temporary.
    #[inline]
    pub fn add_to_lc<Scalar: PrimeField>(
        &self,
        lc: LinearCombination<Scalar>,
        one: Variable,
        coeff: Scalar,
    ) -> LinearCombination<Scalar> {
        match self {
            Boolean::Constant(false) => lc,
            Boolean::Constant(true) => lc + (coeff, one),
            Boolean::Is(bit) => lc + (coeff, bit.variable),
            Boolean::Not(bit) => lc + (coeff, one) - (coeff, bit.variable),
        }
    }

    /// `lc - coeff * self`, in place: the same terms as `lc - &self.lc(one, coeff)` without
    /// building the temporary.
    #[inline]
    pub fn sub_from_lc<Scalar: PrimeField>(
        &self,
        lc: LinearCombination<Scalar>,
        one: Variable,
        coeff: Scalar,
    ) -> LinearCombination<Scalar> {
        match self {
            Boolean::Constant(false) => lc,
            Boolean::Constant(true) => lc - (coeff, one),
            Boolean::Is(bit) => lc - (coeff, bit.variable),
            Boolean::Not(bit) => lc - (coeff, one) + (coeff, bit.variable),
        }
    }

    /// A constant boolean.
    pub fn constant(b: bool) -> Self {
        Boolean::Constant(b)
    }

    /// The negation; costs no constraint.
    pub fn not(&self) -> Self {
        match self {
            Boolean::Constant(c) => Boolean::Constant(!c),
            Boolean::Is(bit) => Boolean::Not(bit.clone()),
            Boolean::Not(bit) => Boolean::Is(bit.clone()),
        }
    }

    /// `a XOR b`; constants and negations are folded without constraints where possible.
    pub fn xor<'a, Scalar, CS>(cs: CS, a: &'a Self, b: &'a Self) -> Result<Self, SynthesisError>
    where
        Scalar: PrimeField,
        CS: ConstraintSystem<Scalar>,
    {
        match (a, b) {
            (Boolean::Constant(false), x) | (x, Boolean::Constant(false)) => Ok(x.clone()),
            (Boolean::Constant(true), x) | (x, Boolean::Constant(true)) => Ok(x.not()),
            // x XOR NOT y == NOT (x XOR y)
            (Boolean::Is(x), Boolean::Not(y)) | (Boolean::Not(y), Boolean::Is(x)) => {
                Ok(Boolean::Not(AllocatedBit::xor(cs, x, y)?))
            }
            // NOT x XOR NOT y == x XOR y
            (Boolean::Is(x), Boolean::Is(y)) | (Boolean::Not(x), Boolean::Not(y)) => {
                Ok(Boolean::Is(AllocatedBit::xor(cs, x, y)?))
            }
        }
    }

    /// `a AND b`; constants are folded, negations map to `and_not` / `nor`.
    pub fn and<'a, Scalar, CS>(cs: CS, a: &'a Self, b: &'a Self) -> Result<Self, SynthesisError>
    where
        Scalar: PrimeField,
        CS: ConstraintSystem<Scalar>,
    {
        match (a, b) {
            (Boolean::Constant(false), _) | (_, Boolean::Constant(false)) => {
                Ok(Boolean::Constant(false))
            }
            (Boolean::Constant(true), x) | (x, Boolean::Constant(true)) => Ok(x.clone()),
            (Boolean::Is(x), Boolean::Not(y)) | (Boolean::Not(y), Boolean::Is(x)) => {
                Ok(Boolean::Is(AllocatedBit::and_not(cs, x, y)?))
            }
            (Boolean::Not(x), Boolean::Not(y)) => Ok(Boolean::Is(AllocatedBit::nor(cs, x, y)?)),
            (Boolean::Is(x), Boolean::Is(y)) => Ok(Boolean::Is(AllocatedBit::and(cs, x, y)?)),
        }
    }

    /// SHA-256 `Ch`: `(a AND b) XOR ((NOT a) AND c)`, one constraint
    /// `a * (b - c) = ch - c` when no input is constant.
    pub fn sha256_ch<'a, Scalar, CS>(
        mut cs: CS,
        a: &'a Self,
        b: &'a Self,
        c: &'a Self,
    ) -> Result<Self, SynthesisError>
    where
        Scalar: PrimeField,
        CS: ConstraintSystem<Scalar>,
    {
        let value = match (a.get_value(), b.get_value(), c.get_value()) {
            (Some(a), Some(b), Some(c)) => Some((a & b) ^ (!a & c)),
            _ => None,
        };
        // The constant cases, in upstream's order of precedence.
        match (a, b, c) {
            (Boolean::Constant(x), Boolean::Constant(y), Boolean::Constant(z)) => {
                return Ok(Boolean::Constant((x & y) ^ (!x & z)));
            }
            (Boolean::Constant(false), _, c) => return Ok(c.clone()),
            (a, Boolean::Constant(false), c) => return Boolean::and(cs, &a.not(), c),
            (a, b, Boolean::Constant(false)) => return Boolean::and(cs, a, b),
            (a, b, Boolean::Constant(true)) => {
                return Ok(Boolean::and(cs, a, &b.not())?.not());
            }
            (a, Boolean::Constant(true), c) => {
                return Ok(Boolean::and(cs, &a.not(), &c.not())?.not());
            }
            // A constant-true `a` leaves `b XOR ((NOT a) AND c)`: the general constraint.
            _ => {}
        }

        let ch = cs.alloc(|| "ch", || bit_to_field(value))?;
        let one = CS::one();
        cs.enforce(
            || "ch computation",
            |lc| c.sub_from_lc(b.add_to_lc(lc, one, Scalar::ONE), one, Scalar::ONE),
            |lc| a.add_to_lc(lc, one, Scalar::ONE),
            |lc| c.sub_from_lc(lc + ch, one, Scalar::ONE),
        );
        Ok(Boolean::Is(AllocatedBit {
            variable: ch,
            value,
        }))
    }

    /// SHA-256 `Maj`: `(a AND b) XOR (a AND c) XOR (b AND c)`, as `bc = b AND c` and
    /// `(2bc - b - c) * a = bc - maj` when no input is constant.
    pub fn sha256_maj<'a, Scalar, CS>(
        mut cs: CS,
        a: &'a Self,
        b: &'a Self,
        c: &'a Self,
    ) -> Result<Self, SynthesisError>
    where
        Scalar: PrimeField,
        CS: ConstraintSystem<Scalar>,
    {
        let value = match (a.get_value(), b.get_value(), c.get_value()) {
            (Some(a), Some(b), Some(c)) => Some((a & b) ^ (a & c) ^ (b & c)),
            _ => None,
        };
        match (a, b, c) {
            (Boolean::Constant(x), Boolean::Constant(y), Boolean::Constant(z)) => {
                return Ok(Boolean::Constant((x & y) ^ (x & z) ^ (y & z)));
            }
            (Boolean::Constant(false), b, c) => return Boolean::and(cs, b, c),
            (a, Boolean::Constant(false), c) => return Boolean::and(cs, a, c),
            (a, b, Boolean::Constant(false)) => return Boolean::and(cs, a, b),
            (a, b, Boolean::Constant(true)) => {
                return Ok(Boolean::and(cs, &a.not(), &b.not())?.not());
            }
            (a, Boolean::Constant(true), c) => {
                return Ok(Boolean::and(cs, &a.not(), &c.not())?.not());
            }
            (Boolean::Constant(true), b, c) => {
                return Ok(Boolean::and(cs, &b.not(), &c.not())?.not());
            }
            _ => {}
        }

        let maj = cs.alloc(|| "maj", || bit_to_field(value))?;
        let bc = Self::and(cs.namespace(|| "b and c"), b, c)?;
        let one = CS::one();
        let two = Scalar::ONE.double();
        cs.enforce(
            || "maj computation",
            |lc| {
                let lc = bc.add_to_lc(lc, one, two);
                c.sub_from_lc(b.sub_from_lc(lc, one, Scalar::ONE), one, Scalar::ONE)
            },
            |lc| a.add_to_lc(lc, one, Scalar::ONE),
            |lc| bc.add_to_lc(lc, one, Scalar::ONE) - maj,
        );
        Ok(Boolean::Is(AllocatedBit {
            variable: maj,
            value,
        }))
    }
}

impl From<AllocatedBit> for Boolean {
    fn from(bit: AllocatedBit) -> Boolean {
        Boolean::Is(bit)
    }
}

#[cfg(test)]
mod tests {
    use blstrs::Scalar as Fr;
    use ff::Field;

    use super::*;
    use crate::test_cs::TestConstraintSystem;

    /// The value a tampered bit gets: the other bit value.
    fn flipped(value: Fr) -> Fr {
        Fr::ONE - value
    }

    #[test]
    fn an_allocated_bit_is_boolean_constrained() {
        for value in [false, true] {
            let mut cs = TestConstraintSystem::<Fr>::new();
            let bit = AllocatedBit::alloc(cs.namespace(|| "bit"), Some(value)).unwrap();
            assert_eq!(bit.get_value(), Some(value));
            assert!(cs.is_satisfied());
            cs.set("bit/boolean", Fr::from(2u64));
            assert_eq!(cs.which_is_unsatisfied(), Some("bit/boolean constraint"));
        }
    }

    #[test]
    fn two_input_gates_compute_and_constrain_their_result() {
        type Gate = fn(
            &mut TestConstraintSystem<Fr>,
            &AllocatedBit,
            &AllocatedBit,
        ) -> Result<AllocatedBit, SynthesisError>;
        type Truth = fn(bool, bool) -> bool;
        let gates: [(&str, Gate, Truth); 4] = [
            ("xor", |cs, a, b| AllocatedBit::xor(cs, a, b), |a, b| a ^ b),
            ("and", |cs, a, b| AllocatedBit::and(cs, a, b), |a, b| a & b),
            (
                "and not",
                |cs, a, b| AllocatedBit::and_not(cs, a, b),
                |a, b| a & !b,
            ),
            (
                "nor",
                |cs, a, b| AllocatedBit::nor(cs, a, b),
                |a, b| !a & !b,
            ),
        ];
        for (name, gate, truth) in gates {
            for (a, b) in [(false, false), (false, true), (true, false), (true, true)] {
                let mut cs = TestConstraintSystem::<Fr>::new();
                let x = AllocatedBit::alloc(cs.namespace(|| "a"), Some(a)).unwrap();
                let y = AllocatedBit::alloc(cs.namespace(|| "b"), Some(b)).unwrap();
                let z = gate(&mut cs, &x, &y).unwrap();
                assert_eq!(z.get_value(), Some(truth(a, b)), "{name} {a} {b}");
                assert!(cs.is_satisfied(), "{name} {a} {b}");
                let path = format!("{name} result");
                let value = cs.get(&path);
                cs.set(&path, flipped(value));
                assert!(!cs.is_satisfied(), "{name} {a} {b}: a wrong result passes");
            }
        }
    }

    /// Every kind of operand, with its value.
    fn operands(cs: &mut TestConstraintSystem<Fr>, tag: &str) -> Vec<(Boolean, bool)> {
        let mut out = vec![
            (Boolean::constant(false), false),
            (Boolean::constant(true), true),
        ];
        for value in [false, true] {
            let bit = AllocatedBit::alloc(cs.namespace(|| format!("{tag} {value}")), Some(value))
                .unwrap();
            out.push((Boolean::from(bit.clone()), value));
            out.push((Boolean::from(bit).not(), !value));
        }
        out
    }

    #[test]
    fn boolean_operations_fold_constants_and_negations_correctly() {
        let mut cs = TestConstraintSystem::<Fr>::new();
        let xs = operands(&mut cs, "x");
        let ys = operands(&mut cs, "y");
        let zs = operands(&mut cs, "z");
        let mut n = 0;
        for (x, a) in &xs {
            for (y, b) in &ys {
                let mut cs = cs.namespace(|| format!("op {n}"));
                n += 1;
                let xor = Boolean::xor(cs.namespace(|| "xor"), x, y).unwrap();
                let and = Boolean::and(cs.namespace(|| "and"), x, y).unwrap();
                assert_eq!(xor.get_value(), Some(a ^ b));
                assert_eq!(and.get_value(), Some(a & b));
                for (i, (z, c)) in zs.iter().enumerate() {
                    let ch = Boolean::sha256_ch(cs.namespace(|| format!("ch {i}")), x, y, z);
                    let maj = Boolean::sha256_maj(cs.namespace(|| format!("maj {i}")), x, y, z);
                    assert_eq!(ch.unwrap().get_value(), Some((a & b) ^ (!a & c)));
                    assert_eq!(maj.unwrap().get_value(), Some((a & b) ^ (a & c) ^ (b & c)));
                }
            }
        }
        assert!(cs.is_satisfied());
    }

    #[test]
    fn ch_and_maj_constrain_their_result() {
        for bits in 0..8u8 {
            let (a, b, c) = (bits & 1 == 1, bits & 2 == 2, bits & 4 == 4);
            for name in ["ch", "maj"] {
                let mut cs = TestConstraintSystem::<Fr>::new();
                let [x, y, z] = [("a", a), ("b", b), ("c", c)].map(|(tag, value)| {
                    Boolean::from(AllocatedBit::alloc(cs.namespace(|| tag), Some(value)).unwrap())
                });
                if name == "ch" {
                    Boolean::sha256_ch(cs.namespace(|| "g"), &x, &y, &z).unwrap();
                } else {
                    Boolean::sha256_maj(cs.namespace(|| "g"), &x, &y, &z).unwrap();
                }
                assert!(cs.is_satisfied());
                let path = format!("g/{name}");
                let value = cs.get(&path);
                cs.set(&path, flipped(value));
                assert!(
                    !cs.is_satisfied(),
                    "{name} {bits:03b}: a wrong result passes"
                );
            }
        }
    }

    #[test]
    fn enforce_equal_holds_exactly_for_equal_booleans() {
        for (a, b) in [(false, false), (false, true), (true, false), (true, true)] {
            let mut cs = TestConstraintSystem::<Fr>::new();
            let x = Boolean::from(AllocatedBit::alloc(cs.namespace(|| "a"), Some(a)).unwrap());
            let y = Boolean::from(AllocatedBit::alloc(cs.namespace(|| "b"), Some(b)).unwrap());
            Boolean::enforce_equal(cs.namespace(|| "eq"), &x, &y).unwrap();
            Boolean::enforce_equal(cs.namespace(|| "eq not"), &x, &y.not().not()).unwrap();
            assert_eq!(cs.is_satisfied(), a == b);
        }
        let mut cs = TestConstraintSystem::<Fr>::new();
        let unequal =
            Boolean::enforce_equal(&mut cs, &Boolean::constant(true), &Boolean::constant(false));
        assert!(matches!(unequal, Err(SynthesisError::Unsatisfiable)));
    }

    #[test]
    fn field_bits_are_little_endian_and_complete() {
        let value = Fr::from(0b1011_0001u64);
        let mut cs = TestConstraintSystem::<Fr>::new();
        let bits = field_into_boolean_vec_le(cs.namespace(|| "field"), Some(value)).unwrap();
        assert_eq!(bits.len(), Fr::NUM_BITS as usize);
        let read: Vec<bool> = bits
            .iter()
            .take(8)
            .map(|b| b.get_value().unwrap())
            .collect();
        assert_eq!(read, [true, false, false, false, true, true, false, true]);
        assert!(bits[8..].iter().all(|b| b.get_value() == Some(false)));
        assert!(cs.is_satisfied());
        let bits = u64_into_boolean_vec_le(cs.namespace(|| "u64"), Some(u64::MAX - 1)).unwrap();
        assert_eq!(bits[0].get_value(), Some(false));
        assert!(bits[1..].iter().all(|b| b.get_value() == Some(true)));
    }
}
