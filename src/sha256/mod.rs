//! SHA-256 gadgets, constraint-identical to bellperson's `gadgets::{sha256, uint32, multieq,
//! multipack}`, that build no temporary linear combination, clone none, and produce every
//! power-of-two coefficient by doubling instead of multiplying. They work in any
//! `ConstraintSystem` of our core.
//!
//! A fork swaps `use bellperson::gadgets::{sha256::sha256, multipack};` for
//! `use synthpool::sha256::{sha256, multipack};` and nothing else changes: same signatures,
//! same constraints in the same order, same variables.

pub mod multieq;
pub mod multipack;
mod native;
pub mod uint32;

use arrayvec::ArrayVec;
use bellpepper_core::boolean::Boolean;
use bellpepper_core::{ConstraintSystem, SynthesisError};
use ff::PrimeField;

use self::multieq::MultiEq;
use self::uint32::{UInt32, MAX_ADDMANY_OPERANDS};

#[allow(clippy::unreadable_literal)]
const ROUND_CONSTANTS: [u32; 64] = [
    0x428a2f98, 0x71374491, 0xb5c0fbcf, 0xe9b5dba5, 0x3956c25b, 0x59f111f1, 0x923f82a4, 0xab1c5ed5,
    0xd807aa98, 0x12835b01, 0x243185be, 0x550c7dc3, 0x72be5d74, 0x80deb1fe, 0x9bdc06a7, 0xc19bf174,
    0xe49b69c1, 0xefbe4786, 0x0fc19dc6, 0x240ca1cc, 0x2de92c6f, 0x4a7484aa, 0x5cb0a9dc, 0x76f988da,
    0x983e5152, 0xa831c66d, 0xb00327c8, 0xbf597fc7, 0xc6e00bf3, 0xd5a79147, 0x06ca6351, 0x14292967,
    0x27b70a85, 0x2e1b2138, 0x4d2c6dfc, 0x53380d13, 0x650a7354, 0x766a0abb, 0x81c2c92e, 0x92722c85,
    0xa2bfe8a1, 0xa81a664b, 0xc24b8b70, 0xc76c51a3, 0xd192e819, 0xd6990624, 0xf40e3585, 0x106aa070,
    0x19a4c116, 0x1e376c08, 0x2748774c, 0x34b0bcb5, 0x391c0cb3, 0x4ed8aa4a, 0x5b9cca4f, 0x682e6ff3,
    0x748f82ee, 0x78a5636f, 0x84c87814, 0x8cc70208, 0x90befffa, 0xa4506ceb, 0xbef9a3f7, 0xc67178f2,
];

#[allow(clippy::unreadable_literal)]
const IV: [u32; 8] = [
    0x6a09e667, 0xbb67ae85, 0x3c6ef372, 0xa54ff53a, 0x510e527f, 0x9b05688c, 0x1f83d9ab, 0x5be0cd19,
];

fn length_error(what: &str, expected: &str, got: usize) -> SynthesisError {
    SynthesisError::IncompatibleLengthVector(format!("{what} takes {expected} bits, not {got}"))
}

fn initial_hash() -> Vec<UInt32> {
    IV.iter().map(|&word| UInt32::constant(word)).collect()
}

fn to_bits_be(words: Vec<UInt32>) -> Vec<Boolean> {
    words.into_iter().flat_map(UInt32::into_bits_be).collect()
}

/// SHA-256 of one 512-bit block with no padding, from the standard initial hash value.
pub fn sha256_block_no_padding<Scalar, CS>(
    mut cs: CS,
    input: &[Boolean],
) -> Result<Vec<Boolean>, SynthesisError>
where
    Scalar: PrimeField,
    CS: ConstraintSystem<Scalar>,
{
    if input.len() != 512 {
        return Err(length_error("sha256_block_no_padding", "512", input.len()));
    }
    let words = sha256_compression_function(&mut cs, input, &initial_hash())?;
    Ok(to_bits_be(words))
}

/// SHA-256 of a whole number of bytes, given as big-endian bits; padding is constant.
pub fn sha256<Scalar, CS>(mut cs: CS, input: &[Boolean]) -> Result<Vec<Boolean>, SynthesisError>
where
    Scalar: PrimeField,
    CS: ConstraintSystem<Scalar>,
{
    if !input.len().is_multiple_of(8) {
        return Err(length_error("sha256", "a multiple of 8", input.len()));
    }
    let bit_len = input.len() as u64;
    let padded_len = (input.len() + 1 + 64).div_ceil(512) * 512;
    let mut padded = Vec::with_capacity(padded_len);
    padded.extend_from_slice(input);
    padded.push(Boolean::constant(true));
    padded.resize(padded_len - 64, Boolean::constant(false));
    padded.extend(
        (0..64)
            .rev()
            .map(|i| Boolean::constant((bit_len >> i) & 1 == 1)),
    );

    let mut state = initial_hash();
    for (i, block) in padded.chunks(512).enumerate() {
        state =
            sha256_compression_function(cs.namespace(|| format!("block {}", i)), block, &state)?;
    }
    Ok(to_bits_be(state))
}

/// A word of the round state that bellperson computes lazily: known, or the operands of a
/// deferred addition (so `e` and `a` of one round each become a single `addmany`). The
/// operands stay in place from round to round; only the sum's bits are produced.
struct DeferredWord {
    known: Option<UInt32>,
    operands: ArrayVec<UInt32, MAX_ADDMANY_OPERANDS>,
}

impl DeferredWord {
    fn known(word: UInt32) -> Self {
        DeferredWord {
            known: Some(word),
            operands: ArrayVec::new(),
        }
    }

    /// The word: the known one, or the sum of the operands and `extra`.
    fn resolve<Scalar, CS, M>(
        &mut self,
        cs: M,
        extra: Option<&UInt32>,
    ) -> Result<UInt32, SynthesisError>
    where
        Scalar: PrimeField,
        CS: ConstraintSystem<Scalar>,
        M: ConstraintSystem<Scalar, Root = MultiEq<Scalar, CS>>,
    {
        if let Some(word) = self.known.take() {
            // As bellperson: a known word ignores `extra`.
            return Ok(word);
        }
        self.operands.extend(extra.cloned());
        UInt32::addmany(cs, &self.operands)
    }

    /// Defers `operands` as the next value.
    fn defer(&mut self, operands: impl IntoIterator<Item = UInt32>) {
        self.known = None;
        self.operands.clear();
        self.operands.extend(operands);
    }
}

/// XOR of three rotations (or a rotation and a shift) of `x`, as SHA-256's sigma functions.
fn sigma<Scalar, CS>(
    mut cs: CS,
    x: &UInt32,
    rotations: [usize; 2],
    third: UInt32,
    names: [&'static str; 2],
) -> Result<UInt32, SynthesisError>
where
    Scalar: PrimeField,
    CS: ConstraintSystem<Scalar>,
{
    let first = x.rotr(rotations[0]);
    let second = first.xor(cs.namespace(|| names[0]), &x.rotr(rotations[1]))?;
    second.xor(cs.namespace(|| names[1]), &third)
}

/// One SHA-256 compression of a 512-bit block into `current_hash_value` (8 words).
///
/// In a witness generator (`is_witness_generator()`) with every input value known, the
/// compression is computed natively and its aux values written in bulk: the same values in
/// the same order as the constraint-building path, which runs otherwise.
pub fn sha256_compression_function<Scalar, CS>(
    mut cs: CS,
    input: &[Boolean],
    current_hash_value: &[UInt32],
) -> Result<Vec<UInt32>, SynthesisError>
where
    Scalar: PrimeField,
    CS: ConstraintSystem<Scalar>,
{
    if input.len() != 512 {
        return Err(length_error(
            "sha256_compression_function",
            "512",
            input.len(),
        ));
    }
    if current_hash_value.len() != 8 {
        return Err(SynthesisError::IncompatibleLengthVector(format!(
            "sha256_compression_function takes 8 hash words, not {}",
            current_hash_value.len()
        )));
    }

    if native::applies(&cs) {
        if let Some(words) = native::compression(&mut cs, input, current_hash_value)? {
            return Ok(words);
        }
    }

    let mut w: Vec<UInt32> = Vec::with_capacity(64);
    w.extend(input.chunks(32).map(UInt32::from_bits_be));

    let mut cs = MultiEq::new(cs);

    for i in 16..64 {
        let cs = &mut cs.namespace(|| format!("w extension {}", i));
        let s0 = sigma(
            &mut *cs,
            &w[i - 15],
            [7, 18],
            w[i - 15].shr(3),
            ["first xor for s0", "second xor for s0"],
        )?;
        let s1 = sigma(
            &mut *cs,
            &w[i - 2],
            [17, 19],
            w[i - 2].shr(10),
            ["first xor for s1", "second xor for s1"],
        )?;
        let operands = [w[i - 16].clone(), s0, w[i - 7].clone(), s1];
        let word = UInt32::addmany(cs.namespace(|| "computation of w[i]"), &operands)?;
        w.push(word);
    }

    let mut a = DeferredWord::known(current_hash_value[0].clone());
    let mut b = current_hash_value[1].clone();
    let mut c = current_hash_value[2].clone();
    let mut d = current_hash_value[3].clone();
    let mut e = DeferredWord::known(current_hash_value[4].clone());
    let mut f = current_hash_value[5].clone();
    let mut g = current_hash_value[6].clone();
    let mut h = current_hash_value[7].clone();

    for (i, (round_constant, w_i)) in ROUND_CONSTANTS.iter().zip(&w).enumerate() {
        let cs = &mut cs.namespace(|| format!("compression round {}", i));

        let new_e = e.resolve(cs.namespace(|| "deferred e computation"), None)?;
        let s1 = sigma(
            &mut *cs,
            &new_e,
            [6, 11],
            new_e.rotr(25),
            ["first xor for s1", "second xor for s1"],
        )?;
        let ch = UInt32::sha256_ch(cs.namespace(|| "ch"), &new_e, &f, &g)?;
        let temp1 = [h, s1, ch, UInt32::constant(*round_constant), w_i.clone()];

        let new_a = a.resolve(cs.namespace(|| "deferred a computation"), None)?;
        let s0 = sigma(
            &mut *cs,
            &new_a,
            [2, 13],
            new_a.rotr(22),
            ["first xor for s0", "second xor for s0"],
        )?;
        let maj = UInt32::sha256_maj(cs.namespace(|| "maj"), &new_a, &b, &c)?;

        // h, g, f = g, f, e; e = temp1 + d; d, c, b = c, b, a; a = temp1 + s0 + maj.
        a.defer(temp1.iter().cloned().chain([s0, maj]));
        e.defer(temp1.into_iter().chain([d]));
        h = g;
        g = f;
        f = new_e;
        d = c;
        c = b;
        b = new_a;
    }

    let add = |cs: &mut MultiEq<Scalar, CS>, name: &'static str, x: &UInt32, y: UInt32| {
        UInt32::addmany(cs.namespace(|| name), &[x.clone(), y])
    };
    let h0 = a.resolve(
        cs.namespace(|| "deferred h0 computation"),
        Some(&current_hash_value[0]),
    )?;
    let h1 = add(&mut cs, "new h1", &current_hash_value[1], b)?;
    let h2 = add(&mut cs, "new h2", &current_hash_value[2], c)?;
    let h3 = add(&mut cs, "new h3", &current_hash_value[3], d)?;
    let h4 = e.resolve(
        cs.namespace(|| "deferred h4 computation"),
        Some(&current_hash_value[4]),
    )?;
    let h5 = add(&mut cs, "new h5", &current_hash_value[5], f)?;
    let h6 = add(&mut cs, "new h6", &current_hash_value[6], g)?;
    let h7 = add(&mut cs, "new h7", &current_hash_value[7], h)?;

    Ok(vec![h0, h1, h2, h3, h4, h5, h6, h7])
}
