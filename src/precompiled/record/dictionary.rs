//! The coefficient dictionary a recording is coded with: every distinct coefficient of a
//! circuit with a `u16` id, looked up without hashing where gadgets repeat themselves.

use std::collections::HashMap;
use std::hash::{BuildHasherDefault, Hasher};

use ff::PrimeField;

use crate::error::Limit;

/// A hasher for coefficient bytes: they are field elements, not attacker-chosen keys, so a
/// multiply-rotate hash is enough and several times cheaper than SipHash.
#[derive(Default)]
struct CoefficientHasher(u64);

impl Hasher for CoefficientHasher {
    fn write(&mut self, bytes: &[u8]) {
        for chunk in bytes.chunks(8) {
            let mut word = [0u8; 8];
            word[..chunk.len()].copy_from_slice(chunk);
            self.0 = (self.0.rotate_left(5) ^ u64::from_le_bytes(word))
                .wrapping_mul(0x51_7c_c1_b7_27_22_0a_95);
        }
    }

    fn finish(&self) -> u64 {
        self.0
    }
}

/// Distinct coefficients of a circuit, each with a `u16` id. Ids 0 and 1 are always one and
/// minus one, which dominate these circuits and are recognized without hashing.
pub(crate) struct Dictionary<Scalar> {
    pub(crate) values: Vec<Scalar>,
    ids: HashMap<Box<[u8]>, u16, BuildHasherDefault<CoefficientHasher>>,
    /// The id last looked up: gadgets write runs of coefficients (a word's bits times
    /// 2^k, 2^(k+1), ...) that get consecutive ids when first seen and come back in one
    /// order or the other, so the same id or a neighbour usually answers the following
    /// lookup without hashing.
    last: usize,
    /// Per id, the ids looked up after it the last two times, the latest first: a gadget
    /// called again writes the same coefficients in the same order (Poseidon's MDS and
    /// partial-round rows, whose ids were handed out in another order, and whose values
    /// two kinds of row share), so these answer most of what the neighbours do not.
    next: Vec<[u16; 2]>,
    /// Lookups that were hashed.
    #[cfg(test)]
    hashed: usize,
}

impl<Scalar: PrimeField> Dictionary<Scalar> {
    pub(crate) fn new() -> Self {
        Dictionary {
            values: vec![Scalar::ONE, -Scalar::ONE],
            ids: HashMap::default(),
            last: 0,
            next: vec![[0; 2]; 2],
            #[cfg(test)]
            hashed: 0,
        }
    }

    /// The id of `coeff`, adding it when new: one and minus one, the id that followed the
    /// last one before, and the neighbours of the last id, are checked here, the rest
    /// hashed in [`Self::hashed_id`].
    #[inline(always)]
    pub(crate) fn id(&mut self, coeff: &Scalar) -> Result<u16, Limit> {
        if *coeff == self.values[0] {
            return Ok(0);
        }
        if *coeff == self.values[1] {
            return Ok(1);
        }
        let last = self.last;
        let [latest, before] = self.next[last].map(usize::from);
        for id in [latest, before, last + 1, last, last.wrapping_sub(1)] {
            if self.values.get(id) == Some(coeff) {
                return Ok(self.seen(last, id));
            }
        }
        let id = self.hashed_id(coeff)?;
        Ok(self.seen(last, usize::from(id)))
    }

    /// Notes that `id` followed `last`, and makes it the last.
    #[inline(always)]
    fn seen(&mut self, last: usize, id: usize) -> u16 {
        let next = &mut self.next[last];
        if usize::from(next[0]) != id {
            *next = [id as u16, next[0]];
        }
        self.last = id;
        id as u16
    }

    #[inline(never)]
    fn hashed_id(&mut self, coeff: &Scalar) -> Result<u16, Limit> {
        #[cfg(test)]
        {
            self.hashed += 1;
        }
        let key = CoefficientBytes::of(coeff);
        let key = key.as_ref();
        let id = match self.ids.get(key) {
            Some(&id) => id,
            None => {
                let id = u16::try_from(self.values.len()).map_err(|_| Limit::Coefficients)?;
                self.values.push(*coeff);
                self.next.push([0; 2]);
                self.ids.insert(key.into(), id);
                id
            }
        };
        Ok(id)
    }
}

/// The bytes a coefficient is hashed by: a blstrs scalar's Montgomery limbs, one-to-one
/// with the values as the canonical bytes are but without the conversion to them (a
/// multiplication per lookup); any other field's canonical bytes.
enum CoefficientBytes<Repr> {
    #[cfg(feature = "neptune-11")]
    Limbs([u8; 32]),
    Canonical(Repr),
}

impl<Repr: AsRef<[u8]>> CoefficientBytes<Repr> {
    fn of<Scalar: PrimeField<Repr = Repr>>(coeff: &Scalar) -> Self {
        #[cfg(feature = "neptune-11")]
        if crate::lanes::is_blstrs::<Scalar>() {
            let words = crate::lanes::limbs(coeff);
            return CoefficientBytes::Limbs(std::array::from_fn(|k| {
                words[k / 8].to_le_bytes()[k % 8]
            }));
        }
        CoefficientBytes::Canonical(coeff.to_repr())
    }
}

impl<Repr: AsRef<[u8]>> AsRef<[u8]> for CoefficientBytes<Repr> {
    fn as_ref(&self) -> &[u8] {
        match self {
            #[cfg(feature = "neptune-11")]
            CoefficientBytes::Limbs(bytes) => bytes,
            CoefficientBytes::Canonical(repr) => repr.as_ref(),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use blstrs::Scalar as Fr;
    use ff::Field;
    use rand_core::SeedableRng;
    use rand_xorshift::XorShiftRng;

    /// Two kinds of row sharing coefficients in different orders, written again and again
    /// (as Poseidon's MDS and partial-round rows are): every value keeps one id, and once
    /// both orders have been seen twice, nothing is hashed.
    #[test]
    fn repeated_sequences_keep_their_ids_without_hashing() {
        let mut rng = XorShiftRng::seed_from_u64(5);
        let shared: Vec<Fr> = (0..40).map(|_| Fr::random(&mut rng)).collect();
        let forward: Vec<Fr> = shared.clone();
        let strided: Vec<Fr> = (0..40).map(|i| shared[(i * 7) % 40]).collect();
        let mut dictionary = Dictionary::<Fr>::new();
        let mut ids = std::collections::HashMap::new();
        let mut hashed_per_pass = Vec::new();
        for _ in 0..4 {
            let before = dictionary.hashed;
            for row in [&forward, &strided] {
                for value in row.iter().chain([&Fr::ONE, &-Fr::ONE]) {
                    let id = dictionary.id(value).unwrap();
                    assert_eq!(dictionary.values[usize::from(id)], *value);
                    let known = *ids.entry(id).or_insert(*value);
                    assert_eq!(known, *value, "one id, one value");
                }
            }
            hashed_per_pass.push(dictionary.hashed - before);
        }
        assert_eq!(
            dictionary.values.len(),
            42,
            "one and minus one, and the 40 values"
        );
        assert_eq!(hashed_per_pass[2..], [0, 0], "{hashed_per_pass:?}");
    }
}
