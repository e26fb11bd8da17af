//! The native witness of a SHA-256 compression: when the constraint system only generates
//! witnesses and every input value is known, the compression is computed with 32-bit words
//! and every aux value the constraint-building path would allocate is written in one bulk
//! allocation, in the same order and with the same values; the constraints it would
//! enforce are counted, not built.
//!
//! The order is the gadgets' own: each word operation walks bits 0 to 31, and for each bit
//! follows the case analysis of `Boolean::xor`, `Boolean::and`, `Boolean::sha256_ch` and
//! `Boolean::sha256_maj` (constants fold without allocating, negations change which value
//! is allocated); `addmany` allocates the full-width sum's bits and packs its equality into
//! the `MultiEq` accounting. Whole words without constants take word-wide shortcuts that
//! allocate exactly what the bit-by-bit walk would.
//!
//! The final additions of a compression allocate through `AllocatedBit::alloc`, so the
//! words handed to the next block (or returned as the digest) hold real variables.

use bellpepper_core::boolean::{AllocatedBit, Boolean};
use bellpepper_core::{ConstraintSystem, SynthesisError};
use ff::PrimeField;

use super::uint32::UInt32;
use super::ROUND_CONSTANTS;

/// One bit as the gadgets see it, without its variable: a constant, or an allocated bit
/// (with the Boolean's value and whether it is the negation of the variable).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Bit {
    Constant(bool),
    Variable { value: bool, negated: bool },
}

impl Bit {
    fn value(self) -> bool {
        match self {
            Bit::Constant(value) | Bit::Variable { value, .. } => value,
        }
    }

    fn not(self) -> Bit {
        match self {
            Bit::Constant(value) => Bit::Constant(!value),
            Bit::Variable { value, negated } => Bit::Variable {
                value: !value,
                negated: !negated,
            },
        }
    }

    fn of(boolean: &Boolean) -> Option<Bit> {
        Some(match boolean {
            Boolean::Constant(value) => Bit::Constant(*value),
            Boolean::Is(bit) => Bit::Variable {
                value: bit.get_value()?,
                negated: false,
            },
            Boolean::Not(bit) => Bit::Variable {
                value: !bit.get_value()?,
                negated: true,
            },
        })
    }
}

/// A 32-bit word as masks: the Boolean values, which bits are constants, and which of the
/// others are negations of their variable (`negated` has no constant bit set).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
struct Word {
    value: u32,
    constant: u32,
    negated: u32,
}

impl Word {
    fn constant(value: u32) -> Word {
        Word {
            value,
            constant: u32::MAX,
            negated: 0,
        }
    }

    fn bit(self, i: usize) -> Bit {
        let value = (self.value >> i) & 1 == 1;
        if (self.constant >> i) & 1 == 1 {
            Bit::Constant(value)
        } else {
            Bit::Variable {
                value,
                negated: (self.negated >> i) & 1 == 1,
            }
        }
    }

    fn from_bits(bits: impl Fn(usize) -> Bit) -> Word {
        let mut word = Word {
            value: 0,
            constant: 0,
            negated: 0,
        };
        for i in 0..32 {
            match bits(i) {
                Bit::Constant(value) => {
                    word.constant |= 1 << i;
                    word.value |= u32::from(value) << i;
                }
                Bit::Variable { value, negated } => {
                    word.value |= u32::from(value) << i;
                    word.negated |= u32::from(negated) << i;
                }
            }
        }
        word
    }

    fn of(word: &UInt32) -> Option<Word> {
        let bits: Vec<Bit> = word.bits().iter().map(Bit::of).collect::<Option<_>>()?;
        Some(Word::from_bits(|i| bits[i]))
    }

    /// The raw values of the variables (a negated bit's variable holds the opposite).
    fn raw(self) -> u32 {
        self.value ^ self.negated
    }

    fn rotr(self, by: u32) -> Word {
        Word {
            value: self.value.rotate_right(by),
            constant: self.constant.rotate_right(by),
            negated: self.negated.rotate_right(by),
        }
    }

    /// Logical shift right: the vacated top bits are constant zeros.
    fn shr(self, by: u32) -> Word {
        Word {
            value: self.value >> by,
            constant: (self.constant >> by) | !(u32::MAX >> by),
            negated: self.negated >> by,
        }
    }
}

/// The aux values a compression allocates, in order, as bits; the constraints it enforces,
/// counted; and `MultiEq`'s packing state.
struct Tape {
    bits: Vec<u64>,
    len: usize,
    constraints: usize,
    packed_bits: usize,
    capacity: usize,
}

impl Tape {
    fn new(capacity: usize) -> Tape {
        Tape {
            bits: Vec::with_capacity(26_000 / 64),
            len: 0,
            constraints: 0,
            packed_bits: 0,
            capacity,
        }
    }

    /// An allocated bit with its boolean (or gate) constraint.
    fn alloc(&mut self, value: bool) {
        if self.len.is_multiple_of(64) {
            self.bits.push(0);
        }
        if value {
            self.bits[self.len / 64] |= 1 << (self.len % 64);
        }
        self.len += 1;
        self.constraints += 1;
    }

    /// Allocates the low `width` bits of `values` (at most 64), lowest first, each with its
    /// constraint.
    fn alloc_bits(&mut self, values: u64, width: usize) {
        debug_assert!(width <= 64 && (width == 64 || values >> width == 0));
        let (word, offset) = (self.len / 64, self.len % 64);
        if offset == 0 {
            self.bits.push(values);
        } else {
            self.bits[word] |= values << offset;
            if offset + width > 64 {
                self.bits.push(values >> (64 - offset));
            }
        }
        self.len += width;
        self.constraints += width;
    }

    /// Allocates `values`' bits at the positions set in `mask`, lowest first, each with its
    /// constraint.
    fn alloc_masked(&mut self, mask: u32, values: u32) {
        if mask == u32::MAX {
            self.alloc_bits(u64::from(values), 32);
            return;
        }
        let mut rest = mask;
        while rest != 0 {
            let i = rest.trailing_zeros();
            self.alloc((values >> i) & 1 == 1);
            rest &= rest - 1;
        }
    }

    /// 64 allocations: bit `i` of `first`, then bit `i` of `second`, for `i` from 0 to 31.
    fn alloc_interleaved(&mut self, first: u32, second: u32) {
        let (low, high) = (
            interleave(first as u16, second as u16),
            interleave((first >> 16) as u16, (second >> 16) as u16),
        );
        self.alloc_masked(u32::MAX, low);
        self.alloc_masked(u32::MAX, high);
    }

    /// `MultiEq` makes room for an equality of `width` bits: it enforces the packed
    /// constraint first when the field's capacity would overflow.
    fn pack(&mut self, width: usize) {
        if self.capacity <= self.packed_bits + width {
            self.constraints += 1;
            self.packed_bits = 0;
        }
        self.packed_bits += width;
    }

    /// `MultiEq` enforces what is left when it is dropped.
    fn flush(&mut self) {
        if self.packed_bits > 0 {
            self.constraints += 1;
            self.packed_bits = 0;
        }
    }

    /// `Boolean::xor` on every bit at once: two variables allocate the xor of their
    /// variables' values (which a negation flips); with a constant the other bit passes,
    /// negated by a constant one.
    fn xor(&mut self, a: Word, b: Word) -> Word {
        let constant = a.constant & b.constant;
        self.alloc_masked(!(a.constant | b.constant), a.raw() ^ b.raw());
        // A constant's bit in `negated` is clear; its value, when one, flips the other's.
        let flips = (a.constant & a.value) ^ (b.constant & b.value);
        Word {
            value: a.value ^ b.value,
            constant,
            negated: (a.negated ^ b.negated ^ flips) & !constant,
        }
    }

    /// [`Self::xor`] bit by bit, as `Boolean::xor` goes: the reference it is tested against.
    #[cfg(test)]
    fn xor_walk(&mut self, a: Word, b: Word) -> Word {
        let mut out = [Bit::Constant(false); 32];
        for (i, slot) in out.iter_mut().enumerate() {
            *slot = match (a.bit(i), b.bit(i)) {
                (Bit::Constant(false), x) | (x, Bit::Constant(false)) => x,
                (Bit::Constant(true), x) | (x, Bit::Constant(true)) => x.not(),
                (
                    Bit::Variable {
                        value: va,
                        negated: na,
                    },
                    Bit::Variable {
                        value: vb,
                        negated: nb,
                    },
                ) => {
                    self.alloc((va ^ na) ^ (vb ^ nb));
                    Bit::Variable {
                        value: va ^ vb,
                        negated: na ^ nb,
                    }
                }
            };
        }
        Word::from_bits(|i| out[i])
    }

    /// A new variable bit of `value`, as the gadgets allocate one.
    fn alloc_bit(&mut self, value: bool) -> Bit {
        self.alloc(value);
        Bit::Variable {
            value,
            negated: false,
        }
    }

    /// `Boolean::and`.
    fn and(&mut self, a: Bit, b: Bit) -> Bit {
        match (a, b) {
            (Bit::Constant(false), _) | (_, Bit::Constant(false)) => Bit::Constant(false),
            (Bit::Constant(true), x) | (x, Bit::Constant(true)) => x,
            (x, y) => self.alloc_bit(x.value() & y.value()),
        }
    }

    /// `Boolean::sha256_ch`, its constant cases in the gadget's order.
    fn ch_bit(&mut self, a: Bit, b: Bit, c: Bit) -> Bit {
        match (a, b, c) {
            (Bit::Constant(x), Bit::Constant(y), Bit::Constant(z)) => {
                Bit::Constant((x & y) ^ (!x & z))
            }
            (Bit::Constant(false), _, c) => c,
            (a, Bit::Constant(false), c) => self.and(a.not(), c),
            (a, b, Bit::Constant(false)) => self.and(a, b),
            (a, b, Bit::Constant(true)) => self.and(a, b.not()).not(),
            (a, Bit::Constant(true), c) => self.and(a.not(), c.not()).not(),
            (a, b, c) => {
                let (x, y, z) = (a.value(), b.value(), c.value());
                self.alloc_bit((x & y) ^ (!x & z))
            }
        }
    }

    /// `Boolean::sha256_maj`, its constant cases in the gadget's order.
    fn maj_bit(&mut self, a: Bit, b: Bit, c: Bit) -> Bit {
        match (a, b, c) {
            (Bit::Constant(x), Bit::Constant(y), Bit::Constant(z)) => {
                Bit::Constant((x & y) ^ (x & z) ^ (y & z))
            }
            (Bit::Constant(false), b, c) => self.and(b, c),
            (a, Bit::Constant(false), c) => self.and(a, c),
            (a, b, Bit::Constant(false)) => self.and(a, b),
            (a, b, Bit::Constant(true)) => self.and(a.not(), b.not()).not(),
            (a, Bit::Constant(true), c) => self.and(a.not(), c.not()).not(),
            (Bit::Constant(true), b, c) => self.and(b.not(), c.not()).not(),
            (a, b, c) => {
                let (x, y, z) = (a.value(), b.value(), c.value());
                // The majority first, then `b AND c`, as the gadget allocates them.
                let majority = self.alloc_bit((x & y) ^ (x & z) ^ (y & z));
                self.and(b, c);
                majority
            }
        }
    }

    fn ch(&mut self, a: Word, b: Word, c: Word) -> Word {
        if (a.constant | b.constant | c.constant) == 0 {
            let value = (a.value & b.value) ^ (!a.value & c.value);
            self.alloc_masked(u32::MAX, value);
            return Word {
                value,
                constant: 0,
                negated: 0,
            };
        }
        self.walk(a, b, c, Tape::ch_bit)
    }

    fn maj(&mut self, a: Word, b: Word, c: Word) -> Word {
        if (a.constant | b.constant | c.constant) == 0 {
            let value = (a.value & b.value) ^ (a.value & c.value) ^ (b.value & c.value);
            // Two allocations per bit, interleaved: the majority, then `b AND c`.
            self.alloc_interleaved(value, b.value & c.value);
            return Word {
                value,
                constant: 0,
                negated: 0,
            };
        }
        self.walk(a, b, c, Tape::maj_bit)
    }

    /// A three-input gate applied bit by bit, bits 0 to 31.
    fn walk(
        &mut self,
        a: Word,
        b: Word,
        c: Word,
        gate: fn(&mut Tape, Bit, Bit, Bit) -> Bit,
    ) -> Word {
        let mut out = [Bit::Constant(false); 32];
        for (i, slot) in out.iter_mut().enumerate() {
            *slot = gate(self, a.bit(i), b.bit(i), c.bit(i));
        }
        Word::from_bits(|i| out[i])
    }

    /// `UInt32::addmany` of words of this tape: all constants fold; else the full-width
    /// sum's bits are allocated and the equality packed.
    fn addmany(&mut self, operands: &[Word]) -> Word {
        let (sum, width) = sum_and_width(operands);
        if operands.iter().all(|op| op.constant == u32::MAX) {
            return Word::constant(sum as u32);
        }
        self.alloc_bits(sum, width);
        self.pack(width);
        Word {
            value: sum as u32,
            constant: 0,
            negated: 0,
        }
    }

    /// Two rotations (or a rotation and a shift) xored, as SHA-256's sigma functions.
    fn sigma(&mut self, x: Word, rotations: [u32; 2], third: Word) -> Word {
        let first = x.rotr(rotations[0]);
        let second = self.xor(first, x.rotr(rotations[1]));
        self.xor(second, third)
    }
}

/// `first`'s bits at the even positions, `second`'s at the odd ones.
fn interleave(first: u16, second: u16) -> u32 {
    /// Spreads 16 bits to the even positions of 32.
    fn spread(x: u16) -> u32 {
        let mut x = u32::from(x);
        x = (x | (x << 8)) & 0x00ff_00ff;
        x = (x | (x << 4)) & 0x0f0f_0f0f;
        x = (x | (x << 2)) & 0x3333_3333;
        (x | (x << 1)) & 0x5555_5555
    }
    spread(first) | (spread(second) << 1)
}

/// The full sum of `operands` and how many bits `addmany` gives it.
fn sum_and_width(operands: &[Word]) -> (u64, usize) {
    let sum = operands.iter().map(|op| u64::from(op.value)).sum();
    let max_sum = operands.len() as u64 * u64::from(u32::MAX);
    (sum, (u64::BITS - max_sum.leading_zeros()) as usize)
}

/// A round-state word the gadget computes lazily: known, or the operands of a deferred sum.
enum Deferred {
    Known(Word),
    Sum(Vec<Word>),
}

impl Deferred {
    /// The word: the known one, or the sum of the operands, added on `tape`.
    fn resolve(&self, tape: &mut Tape) -> Word {
        match self {
            Deferred::Known(word) => *word,
            Deferred::Sum(operands) => tape.addmany(operands),
        }
    }
}

/// Whether the native witness applies: a witness generator, a field wide enough for
/// `addmany`, and every input value known. Otherwise the constraint-building path runs
/// (and reports a missing value where it meets it).
pub(super) fn applies<Scalar: PrimeField, CS: ConstraintSystem<Scalar>>(cs: &CS) -> bool {
    cs.is_witness_generator() && Scalar::NUM_BITS >= 64
}

/// The compression's 8 output words, with the native witness written into `cs`; `None`
/// (nothing written) when some input value is unknown.
pub(super) fn compression<Scalar, CS>(
    cs: &mut CS,
    input: &[Boolean],
    current_hash_value: &[UInt32],
) -> Result<Option<Vec<UInt32>>, SynthesisError>
where
    Scalar: PrimeField,
    CS: ConstraintSystem<Scalar>,
{
    let mut w = Vec::with_capacity(64);
    for chunk in input.chunks(32) {
        // Big-endian bits, as `UInt32::from_bits_be`.
        let bits: Option<Vec<Bit>> = chunk.iter().rev().map(Bit::of).collect();
        let Some(bits) = bits else { return Ok(None) };
        w.push(Word::from_bits(|i| bits[i]));
    }
    let current: Option<Vec<Word>> = current_hash_value.iter().map(Word::of).collect();
    let Some(current) = current else {
        return Ok(None);
    };

    let mut tape = Tape::new(Scalar::CAPACITY as usize);
    for i in 16..64 {
        let s0 = tape.sigma(w[i - 15], [7, 18], w[i - 15].shr(3));
        let s1 = tape.sigma(w[i - 2], [17, 19], w[i - 2].shr(10));
        let word = tape.addmany(&[w[i - 16], s0, w[i - 7], s1]);
        w.push(word);
    }

    let mut a = Deferred::Known(current[0]);
    let [mut b, mut c, mut d] = [current[1], current[2], current[3]];
    let mut e = Deferred::Known(current[4]);
    let [mut f, mut g, mut h] = [current[5], current[6], current[7]];
    for (round_constant, w_i) in ROUND_CONSTANTS.iter().zip(&w) {
        let new_e = e.resolve(&mut tape);
        let s1 = tape.sigma(new_e, [6, 11], new_e.rotr(25));
        let ch = tape.ch(new_e, f, g);
        let temp1 = [h, s1, ch, Word::constant(*round_constant), *w_i];
        let new_a = a.resolve(&mut tape);
        let s0 = tape.sigma(new_a, [2, 13], new_a.rotr(22));
        let maj = tape.maj(new_a, b, c);
        a = Deferred::Sum(temp1.iter().copied().chain([s0, maj]).collect());
        e = Deferred::Sum(temp1.into_iter().chain([d]).collect());
        (h, g, f) = (g, f, new_e);
        (d, c, b) = (c, b, new_a);
    }

    // The final additions' operands; their result bits are allocated for real below. After
    // 64 rounds `a` and `e` are deferred sums, which take the current value as one more
    // operand.
    let (Deferred::Sum(mut a), Deferred::Sum(mut e)) = (a, e) else {
        unreachable!("every round defers `a` and `e`")
    };
    a.push(current[0]);
    e.push(current[4]);
    let finals: [Vec<Word>; 8] = [
        a,
        vec![current[1], b],
        vec![current[2], c],
        vec![current[3], d],
        e,
        vec![current[5], f],
        vec![current[6], g],
        vec![current[7], h],
    ];

    let bulk = tape.len;
    write_bits(cs, &tape.bits, bulk);
    let mut outputs = Vec::with_capacity(8);
    for operands in finals {
        outputs.push(final_sum(cs, &mut tape, &operands)?);
    }
    tape.flush();
    // The result bits' boolean constraints were enforced by `AllocatedBit::alloc`.
    let counted = tape.constraints - (tape.len - bulk);
    for _ in 0..counted {
        cs.enforce(|| "", |lc| lc, |lc| lc, |lc| lc);
    }
    Ok(Some(outputs))
}

/// Appends the first `len` bits of `bits` to `cs`'s aux values as field elements: room for
/// all of them as zeros, then a one at each set bit (the bits past `len` are clear).
/// Through `allocate_empty`, the allocation every witness generator implements (bellperson's
/// and bellpepper's `WitnessCS` have no other; the trait's defaults panic).
fn write_bits<Scalar, CS>(cs: &mut CS, bits: &[u64], len: usize)
where
    Scalar: PrimeField,
    CS: ConstraintSystem<Scalar>,
{
    let (slots, _) = cs.allocate_empty(len, 0);
    for (word, &bits) in bits.iter().enumerate() {
        let mut rest = bits;
        while rest != 0 {
            slots[64 * word + rest.trailing_zeros() as usize] = Scalar::ONE;
            rest &= rest - 1;
        }
    }
}

/// A final addition: constants fold; else its result bits are allocated as `addmany` does,
/// through `AllocatedBit::alloc`, so the output holds real variables.
fn final_sum<Scalar, CS>(
    cs: &mut CS,
    tape: &mut Tape,
    operands: &[Word],
) -> Result<UInt32, SynthesisError>
where
    Scalar: PrimeField,
    CS: ConstraintSystem<Scalar>,
{
    let (sum, width) = sum_and_width(operands);
    if operands.iter().all(|op| op.constant == u32::MAX) {
        return Ok(UInt32::constant(sum as u32));
    }
    let mut bits: [Boolean; 32] = std::array::from_fn(|_| Boolean::constant(false));
    for i in 0..width {
        let value = (sum >> i) & 1 == 1;
        let bit = AllocatedBit::alloc(&mut *cs, Some(value))?;
        tape.len += 1;
        tape.constraints += 1;
        if let Some(slot) = bits.get_mut(i) {
            *slot = Boolean::from(bit);
        }
    }
    tape.pack(width);
    Ok(UInt32::from_parts(bits, Some(sum as u32)))
}

#[cfg(test)]
mod tests;
