//! `MultiEq`: packs many small equalities `lhs_k == rhs_k` (each fitting in `num_bits_k`
//! bits) into one constraint `sum 2^offset_k lhs_k * 1 = sum 2^offset_k rhs_k`, exactly as
//! bellperson's `MultiEq` does, without cloning the combinations it packs.
//!
//! Terms are collected unsorted and merged once when the packed constraint is enforced
//! (one sort of packed integer keys, then appends), instead of one sorted insert per term.
//! [`MultiEq::enforce_sum_of_bits`], what `addmany` uses, takes its power-of-two
//! coefficients from a table of powers of two the packing fills once (every packed
//! constraint needs the same ones); [`MultiEq::enforce_equal`], the general entry, multiplies
//! each term by the offset as bellperson does. The merged combination is the same: one term per
//! variable, its coefficient the sum of all contributions, present once anything touched it.

use bellpepper_core::boolean::Boolean;
use bellpepper_core::{ConstraintSystem, Index, LinearCombination, SynthesisError, Variable};
use ff::PrimeField;

/// A constraint system wrapper that batches equalities into packed constraints.
pub struct MultiEq<Scalar: PrimeField, CS: ConstraintSystem<Scalar>> {
    cs: CS,
    ops: usize,
    bits_used: usize,
    /// `2^j` for every `j` asked for so far; `powers[bits_used]` is the next equality's
    /// offset. Doubling per bit instead (a chain of field additions per operand) cost 5.7%
    /// of the instructions of the real PoRep partition's direct synthesis.
    powers: Vec<Scalar>,
    lhs: Queue<Scalar>,
    rhs: Queue<Scalar>,
}

/// The packing's progress (the wrapped system need not be `Debug`).
impl<Scalar: PrimeField, CS: ConstraintSystem<Scalar>> std::fmt::Debug for MultiEq<Scalar, CS> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("MultiEq")
            .field("ops", &self.ops)
            .field("bits_used", &self.bits_used)
            .finish_non_exhaustive()
    }
}

/// Terms waiting to be merged into one side of the packed constraint, with the scratch
/// space that orders them.
struct Queue<Scalar> {
    terms: Vec<(Variable, Scalar)>,
    /// Sort keys: `(is aux, index, position in terms)` packed into a `u64`, so the sort
    /// moves 8-byte integers instead of 48-byte terms.
    order: Vec<u64>,
}

/// Bits of a packed key: 1 for the kind, 47 for the index, 16 for the position.
const POSITION_BITS: u32 = 16;
const INDEX_BITS: u32 = 47;

fn order_key(var: &Variable) -> (bool, usize) {
    match var.get_unchecked() {
        Index::Input(i) => (false, i),
        Index::Aux(i) => (true, i),
    }
}

impl<Scalar: PrimeField> Queue<Scalar> {
    fn new() -> Self {
        Queue {
            terms: Vec::new(),
            order: Vec::new(),
        }
    }

    fn clear(&mut self) {
        self.terms.clear();
    }

    /// Sums the queued terms per variable and appends them to `lc` in its order, emptying
    /// the queue (capacity kept for the next batch).
    fn merge_into(&mut self, lc: LinearCombination<Scalar>) -> LinearCombination<Scalar> {
        let packable = self.terms.len() <= 1 << POSITION_BITS
            && self
                .terms
                .iter()
                .all(|(var, _)| order_key(var).1 < 1 << INDEX_BITS);
        let lc = if packable {
            self.merge_packed(lc)
        } else {
            self.merge_sorted(lc)
        };
        self.terms.clear();
        lc
    }

    fn merge_packed(&mut self, mut lc: LinearCombination<Scalar>) -> LinearCombination<Scalar> {
        self.order.clear();
        self.order
            .extend(self.terms.iter().enumerate().map(|(position, (var, _))| {
                let (aux, index) = order_key(var);
                (u64::from(aux) << (INDEX_BITS + POSITION_BITS))
                    | ((index as u64) << POSITION_BITS)
                    | position as u64
            }));
        self.order.sort_unstable();
        let position = |key: u64| (key & ((1 << POSITION_BITS) - 1)) as usize;
        let mut keys = self.order.iter();
        if let Some(&first) = keys.next() {
            let (mut var, mut coeff) = self.terms[position(first)];
            let mut current = first >> POSITION_BITS;
            for &key in keys {
                let (next_var, next_coeff) = self.terms[position(key)];
                if key >> POSITION_BITS == current {
                    coeff += next_coeff;
                } else {
                    lc.add_assign_term(coeff, var);
                    (var, coeff, current) = (next_var, next_coeff, key >> POSITION_BITS);
                }
            }
            lc.add_assign_term(coeff, var);
        }
        lc
    }

    /// The general case (huge indices or batches): sort the terms themselves.
    fn merge_sorted(&mut self, mut lc: LinearCombination<Scalar>) -> LinearCombination<Scalar> {
        self.terms.sort_unstable_by_key(|(var, _)| order_key(var));
        let mut terms = self.terms.iter();
        if let Some(&(mut var, mut coeff)) = terms.next() {
            for &(next_var, next_coeff) in terms {
                if next_var == var {
                    coeff += next_coeff;
                } else {
                    lc.add_assign_term(coeff, var);
                    (var, coeff) = (next_var, next_coeff);
                }
            }
            lc.add_assign_term(coeff, var);
        }
        lc
    }
}

impl<Scalar: PrimeField, CS: ConstraintSystem<Scalar>> MultiEq<Scalar, CS> {
    /// Wraps `cs`; packed constraints are enforced in it as `multieq {n}`.
    pub fn new(cs: CS) -> Self {
        MultiEq {
            cs,
            ops: 0,
            bits_used: 0,
            powers: Vec::new(),
            lhs: Queue::new(),
            rhs: Queue::new(),
        }
    }

    fn accumulate(&mut self) {
        let ops = self.ops;
        let (lhs, rhs) = (&mut self.lhs, &mut self.rhs);
        self.cs.enforce(
            || format!("multieq {}", ops),
            |lc| lhs.merge_into(lc),
            |lc| lc + CS::one(),
            |lc| rhs.merge_into(lc),
        );
        // A system that never runs the closures (a witness generator) leaves them queued.
        self.lhs.clear();
        self.rhs.clear();
        self.bits_used = 0;
        self.ops += 1;
    }

    /// Makes room for an equality of `num_bits` bits, enforcing the current packed
    /// constraint first when it would overflow the field's capacity.
    fn reserve_bits(&mut self, num_bits: usize) -> Result<(), SynthesisError> {
        let capacity = Scalar::CAPACITY as usize;
        if capacity <= self.bits_used + num_bits {
            self.accumulate();
        }
        if capacity <= num_bits {
            return Err(SynthesisError::IncompatibleLengthVector(format!(
                "an equality of {num_bits} bits does not fit in a field of capacity {capacity}"
            )));
        }
        Ok(())
    }

    fn advance(&mut self, num_bits: usize) {
        self.bits_used += num_bits;
    }

    /// Adds `lhs == rhs`, both fitting in `num_bits` bits, to the packed constraint.
    ///
    /// Panics if `num_bits` alone exceeds the field's capacity, as bellperson's does.
    pub fn enforce_equal(
        &mut self,
        num_bits: usize,
        lhs: &LinearCombination<Scalar>,
        rhs: &LinearCombination<Scalar>,
    ) {
        if let Err(e) = self.reserve_bits(num_bits) {
            panic!("{e}");
        }
        let offset = powers_from(&mut self.powers, self.bits_used, 1)[0];
        self.lhs
            .terms
            .extend(lhs.iter().map(|(var, coeff)| (var, *coeff * offset)));
        self.rhs
            .terms
            .extend(rhs.iter().map(|(var, coeff)| (var, *coeff * offset)));
        self.advance(num_bits);
    }

    /// Adds `sum_k sum_i 2^i operands[k][i] == sum_i 2^i result[i]` for `num_bits`-bit
    /// sums: what `UInt32::addmany` needs, with the coefficients produced by doubling and
    /// no intermediate combination.
    pub fn enforce_sum_of_bits<'a>(
        &mut self,
        num_bits: usize,
        operands: impl Iterator<Item = &'a [Boolean]>,
        result: &[Boolean],
    ) -> Result<(), SynthesisError> {
        self.reserve_bits(num_bits)?;
        // A witness generator never looks at constraints: only the packing has to advance,
        // so the multieq constraints keep their positions.
        if !self.cs.is_witness_generator() {
            let one = CS::one();
            let from = self.bits_used;
            for bits in operands {
                let powers = powers_from(&mut self.powers, from, bits.len());
                push_bits(&mut self.lhs.terms, bits, powers, one);
            }
            let powers = powers_from(&mut self.powers, from, result.len());
            push_bits(&mut self.rhs.terms, result, powers, one);
        }
        self.advance(num_bits);
        Ok(())
    }
}

/// `2^from, ..., 2^(from + len - 1)`, the table grown by doubling where it falls short.
fn powers_from<Scalar: PrimeField>(powers: &mut Vec<Scalar>, from: usize, len: usize) -> &[Scalar] {
    while powers.len() < from + len {
        let next = powers.last().map_or(Scalar::ONE, Scalar::double);
        powers.push(next);
    }
    &powers[from..from + len]
}

/// Queues `powers[i] * bits[i]` for every bit, with `one` for constants and negations.
fn push_bits<Scalar: PrimeField>(
    pending: &mut Vec<(Variable, Scalar)>,
    bits: &[Boolean],
    powers: &[Scalar],
    one: Variable,
) {
    for (bit, &coeff) in bits.iter().zip(powers) {
        match bit {
            Boolean::Constant(false) => {}
            Boolean::Constant(true) => pending.push((one, coeff)),
            Boolean::Is(b) => pending.push((b.get_variable(), coeff)),
            Boolean::Not(b) => {
                pending.push((one, coeff));
                pending.push((b.get_variable(), -coeff));
            }
        }
    }
}

impl<Scalar: PrimeField, CS: ConstraintSystem<Scalar>> Drop for MultiEq<Scalar, CS> {
    fn drop(&mut self) {
        if self.bits_used > 0 {
            self.accumulate();
        }
    }
}

impl<Scalar: PrimeField, CS: ConstraintSystem<Scalar>> ConstraintSystem<Scalar>
    for MultiEq<Scalar, CS>
{
    type Root = Self;

    fn one() -> Variable {
        CS::one()
    }

    fn alloc<F, A, AR>(&mut self, annotation: A, f: F) -> Result<Variable, SynthesisError>
    where
        F: FnOnce() -> Result<Scalar, SynthesisError>,
        A: FnOnce() -> AR,
        AR: Into<String>,
    {
        self.cs.alloc(annotation, f)
    }

    fn alloc_input<F, A, AR>(&mut self, annotation: A, f: F) -> Result<Variable, SynthesisError>
    where
        F: FnOnce() -> Result<Scalar, SynthesisError>,
        A: FnOnce() -> AR,
        AR: Into<String>,
    {
        self.cs.alloc_input(annotation, f)
    }

    fn enforce<A, AR, LA, LB, LC>(&mut self, annotation: A, a: LA, b: LB, c: LC)
    where
        A: FnOnce() -> AR,
        AR: Into<String>,
        LA: FnOnce(LinearCombination<Scalar>) -> LinearCombination<Scalar>,
        LB: FnOnce(LinearCombination<Scalar>) -> LinearCombination<Scalar>,
        LC: FnOnce(LinearCombination<Scalar>) -> LinearCombination<Scalar>,
    {
        self.cs.enforce(annotation, a, b, c)
    }

    fn push_namespace<NR, N>(&mut self, name_fn: N)
    where
        NR: Into<String>,
        N: FnOnce() -> NR,
    {
        self.cs.get_root().push_namespace(name_fn)
    }

    fn pop_namespace(&mut self) {
        self.cs.get_root().pop_namespace()
    }

    fn get_root(&mut self) -> &mut Self::Root {
        self
    }
}
