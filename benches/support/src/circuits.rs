//! PoRep-shaped circuits, for the benchmark and the tests, in one place.
//!
//! - [`Labeling`]: SHA-256 over 39 × 32-byte words (replica id, layer/node word, 37 parent
//!   labels), 20 compressions, the digest truncated to 254 bits and packed into inputs: the
//!   shape of the labeling check in the stacked-DRG commit circuit.
//! - [`MerklePath`]: a binary Merkle path of SHA-256 over 64-byte `left || right` nodes,
//!   with the path bits as public inputs.
//! - [`Mixed`]: labels and paths together, sized by one parameter.
//!
//! - [`crate::porep::Partition`]: a PoRep partition's whole mix (labeling, tree_d, column hashes
//!   and Poseidon inclusion paths), in its own module.
//!
//! Each exists in every [`GadgetSet`]: built with the upstream gadgets (bellperson's SHA-256,
//! neptune's Poseidon) or with synthpool's. All lay out identical constraints.

use bellpepper_core::boolean::{AllocatedBit, Boolean};
use bellpepper_core::num::AllocatedNum;
use bellpepper_core::{Circuit, ConstraintSystem, SynthesisError};
use ff::{PrimeField, PrimeFieldBits};
use neptune::poseidon::{Arity, PoseidonConstants};

/// Which gadgets a circuit is built with.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub enum GadgetSet {
    /// The upstream ones: bellperson's `gadgets::{sha256, multipack}` and neptune's
    /// `circuit::poseidon_hash`.
    #[default]
    Upstream,
    /// `synthpool::sha256::{sha256, multipack}` and `synthpool::poseidon::poseidon_hash`.
    Synthpool,
    /// synthpool's SHA-256 family with neptune's Poseidon: what a witness costs with
    /// neptune's gadget, the rest as [`GadgetSet::Synthpool`].
    NeptunePoseidon,
}

impl GadgetSet {
    /// Whether the SHA-256 family is synthpool's.
    fn ours_sha256(self) -> bool {
        self != GadgetSet::Upstream
    }

    pub(crate) fn sha256<Scalar, CS>(
        self,
        cs: CS,
        bits: &[Boolean],
    ) -> Result<Vec<Boolean>, SynthesisError>
    where
        Scalar: PrimeField,
        CS: ConstraintSystem<Scalar>,
    {
        if self.ours_sha256() {
            synthpool::sha256::sha256(cs, bits)
        } else {
            bellperson::gadgets::sha256::sha256(cs, bits)
        }
    }

    pub(crate) fn pack_into_inputs<Scalar, CS>(
        self,
        cs: CS,
        bits: &[Boolean],
    ) -> Result<(), SynthesisError>
    where
        Scalar: PrimeField,
        CS: ConstraintSystem<Scalar>,
    {
        if self.ours_sha256() {
            synthpool::sha256::multipack::pack_into_inputs(cs, bits)
        } else {
            bellperson::gadgets::multipack::pack_into_inputs(cs, bits)
        }
    }

    pub(crate) fn pack_bits<Scalar, CS>(
        self,
        cs: CS,
        bits: &[Boolean],
    ) -> Result<AllocatedNum<Scalar>, SynthesisError>
    where
        Scalar: PrimeField,
        CS: ConstraintSystem<Scalar>,
    {
        if self.ours_sha256() {
            synthpool::sha256::multipack::pack_bits(cs, bits)
        } else {
            bellperson::gadgets::multipack::pack_bits(cs, bits)
        }
    }

    pub(crate) fn poseidon<Scalar, CS, A>(
        self,
        cs: CS,
        preimage: Vec<AllocatedNum<Scalar>>,
        constants: &PoseidonConstants<Scalar, A>,
    ) -> Result<AllocatedNum<Scalar>, SynthesisError>
    where
        Scalar: PrimeField,
        CS: ConstraintSystem<Scalar>,
        A: Arity<Scalar>,
    {
        match self {
            GadgetSet::Synthpool => synthpool::poseidon::poseidon_hash(cs, preimage, constants),
            GadgetSet::Upstream | GadgetSet::NeptunePoseidon => {
                neptune::circuit::poseidon_hash(cs, preimage, constants)
            }
        }
    }
}

/// Bytes hashed for one label: 39 words of 32 bytes.
pub const LABEL_INPUT_BYTES: usize = 39 * 32;

/// Bits of a digest kept as a field element (Fr holds 254 bits safely).
pub const TRUNCATED_BITS: usize = 254;

/// A deterministic byte pattern, so benches and tests need no random number generator.
pub fn pattern(seed: u64, len: usize) -> Vec<u8> {
    let mut state = seed.wrapping_mul(0x9e37_79b9_7f4a_7c15) | 1;
    (0..len)
        .map(|_| {
            state ^= state << 13;
            state ^= state >> 7;
            state ^= state << 17;
            state as u8
        })
        .collect()
}

/// Allocates `len` bytes (or unknown values) as big-endian bits.
fn alloc_bytes<Scalar, CS>(
    mut cs: CS,
    bytes: Option<&[u8]>,
    len: usize,
) -> Result<Vec<Boolean>, SynthesisError>
where
    Scalar: PrimeField,
    CS: ConstraintSystem<Scalar>,
{
    (0..len * 8)
        .map(|i| {
            let bit = bytes.map(|b| (b[i / 8] >> (7 - i % 8)) & 1 == 1);
            AllocatedBit::alloc(cs.namespace(|| format!("bit {}", i)), bit).map(Boolean::from)
        })
        .collect()
}

/// One label: SHA-256 of [`LABEL_INPUT_BYTES`] bytes, truncated and packed into inputs.
#[derive(Clone, Debug)]
pub struct Labeling {
    /// The hashed bytes, or `None` for parameter generation.
    pub data: Option<Vec<u8>>,
    /// The gadgets it is built with.
    pub gadgets: GadgetSet,
}

impl Labeling {
    /// A label over [`pattern`] bytes.
    pub fn sample(seed: u64, gadgets: GadgetSet) -> Self {
        Labeling {
            data: Some(pattern(seed, LABEL_INPUT_BYTES)),
            gadgets,
        }
    }
}

impl<Scalar: PrimeField + PrimeFieldBits> Circuit<Scalar> for Labeling {
    fn synthesize<CS: ConstraintSystem<Scalar>>(self, cs: &mut CS) -> Result<(), SynthesisError> {
        let data = self.data.as_deref();
        if data.is_some_and(|d| d.len() != LABEL_INPUT_BYTES) {
            return Err(SynthesisError::IncompatibleLengthVector(format!(
                "a label hashes {} bytes",
                LABEL_INPUT_BYTES
            )));
        }
        let bits = alloc_bytes(cs.namespace(|| "label input"), data, LABEL_INPUT_BYTES)?;
        let digest = self.gadgets.sha256(cs.namespace(|| "label hash"), &bits)?;
        self.gadgets
            .pack_into_inputs(cs.namespace(|| "label"), &digest[..TRUNCATED_BITS])
    }
}

/// A Merkle path of SHA-256 nodes from a leaf to the root.
#[derive(Clone, Debug)]
pub struct MerklePath {
    /// The leaf, 32 bytes.
    pub leaf: Option<Vec<u8>>,
    /// One 32-byte sibling per level.
    pub siblings: Vec<Option<Vec<u8>>>,
    /// One bit per level: is the current node the right child.
    pub path: Vec<Option<bool>>,
    /// The gadgets it is built with.
    pub gadgets: GadgetSet,
}

impl MerklePath {
    /// A path of `depth` levels over [`pattern`] bytes.
    pub fn sample(seed: u64, depth: usize, gadgets: GadgetSet) -> Self {
        MerklePath {
            gadgets,
            leaf: Some(pattern(seed, 32)),
            siblings: (0..depth)
                .map(|level| Some(pattern(seed + 1 + level as u64, 32)))
                .collect(),
            path: (0..depth)
                .map(|level| Some((seed >> level) & 1 == 1))
                .collect(),
        }
    }
}

impl<Scalar: PrimeField + PrimeFieldBits> Circuit<Scalar> for MerklePath {
    fn synthesize<CS: ConstraintSystem<Scalar>>(self, cs: &mut CS) -> Result<(), SynthesisError> {
        if self.siblings.len() != self.path.len() {
            return Err(SynthesisError::IncompatibleLengthVector(format!(
                "{} siblings but {} path bits",
                self.siblings.len(),
                self.path.len()
            )));
        }
        let mut node = alloc_bytes(cs.namespace(|| "leaf"), self.leaf.as_deref(), 32)?;
        let mut path_bits = Vec::with_capacity(self.path.len());
        for (level, (sibling, is_right)) in self.siblings.iter().zip(&self.path).enumerate() {
            let mut cs = cs.namespace(|| format!("level {}", level));
            let sibling = alloc_bytes(cs.namespace(|| "sibling"), sibling.as_deref(), 32)?;
            let is_right = Boolean::from(AllocatedBit::alloc(cs.namespace(|| "path"), *is_right)?);
            let mut preimage = Vec::with_capacity(512);
            // left = is_right ? sibling : node; right = is_right ? node : sibling.
            for (i, (own, other)) in node.iter().zip(&sibling).enumerate() {
                let left = Boolean::sha256_ch(
                    cs.namespace(|| format!("left {}", i)),
                    &is_right,
                    other,
                    own,
                )?;
                preimage.push(left);
            }
            for (i, (own, other)) in node.iter().zip(&sibling).enumerate() {
                let right = Boolean::sha256_ch(
                    cs.namespace(|| format!("right {}", i)),
                    &is_right,
                    own,
                    other,
                )?;
                preimage.push(right);
            }
            node = self.gadgets.sha256(cs.namespace(|| "hash"), &preimage)?;
            path_bits.push(is_right);
        }
        self.gadgets
            .pack_into_inputs(cs.namespace(|| "path bits"), &path_bits)?;
        self.gadgets
            .pack_into_inputs(cs.namespace(|| "root"), &node[..TRUNCATED_BITS])
    }
}

/// `size` labels and `size` Merkle paths of depth `size`.
#[derive(Clone, Debug)]
pub struct Mixed {
    /// The labels.
    pub labels: Vec<Labeling>,
    /// The paths.
    pub paths: Vec<MerklePath>,
}

impl Mixed {
    /// `size` labels and `size` paths of depth `size`, over [`pattern`] bytes.
    pub fn sample(size: usize, gadgets: GadgetSet) -> Self {
        Mixed {
            labels: (0..size)
                .map(|i| Labeling::sample(i as u64, gadgets))
                .collect(),
            paths: (0..size)
                .map(|i| MerklePath::sample(1000 + i as u64, size, gadgets))
                .collect(),
        }
    }
}

impl<Scalar: PrimeField + PrimeFieldBits> Circuit<Scalar> for Mixed {
    fn synthesize<CS: ConstraintSystem<Scalar>>(self, cs: &mut CS) -> Result<(), SynthesisError> {
        for (i, label) in self.labels.into_iter().enumerate() {
            label.synthesize(&mut cs.namespace(|| format!("label {}", i)))?;
        }
        for (i, path) in self.paths.into_iter().enumerate() {
            path.synthesize(&mut cs.namespace(|| format!("path {}", i)))?;
        }
        Ok(())
    }
}
