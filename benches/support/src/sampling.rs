//! Deterministic witnesses for the bench's partitions: the draws they are made of, sparse
//! trees over the partition's leaves (every other leaf zero), and gadget values computed as
//! the circuit's own hashing computes them.

use std::collections::BTreeMap;

use bellpepper_core::num::AllocatedNum;
use bellpepper_core::SynthesisError;
use blstrs::Scalar as Fr;
use ff::{Field, PrimeField};
use synthpool::precompiled::Witness;

use crate::circuits::{pattern, GadgetSet};
use crate::trees::{poseidon_node, sha256_node, TreePath};

/// The value of `gadget` run on allocated `inputs`, computed in a witness generator (the
/// native paths), so a sampled witness follows the circuit's own hashing exactly.
pub(crate) fn value_of(
    inputs: &[Fr],
    gadget: impl FnOnce(
        &mut Witness<Fr>,
        Vec<AllocatedNum<Fr>>,
    ) -> Result<AllocatedNum<Fr>, SynthesisError>,
) -> Fr {
    let mut cs = Witness::<Fr>::default();
    let allocated = inputs
        .iter()
        .map(|value| AllocatedNum::alloc(&mut cs, || Ok(*value)))
        .collect::<Result<Vec<_>, _>>()
        .expect("values are known");
    gadget(&mut cs, allocated)
        .expect("the sampled witness satisfies the gadget")
        .get_value()
        .expect("a witness generator computes values")
}

/// A Poseidon tree node over `children`, as the circuit's own hashing computes it.
pub(crate) fn poseidon_value(children: &[Fr]) -> Fr {
    value_of(children, |cs, inputs| {
        poseidon_node(cs, GadgetSet::Synthpool, inputs)
    })
}

/// A SHA-256 tree node over `children`, as the circuit's own hashing computes it.
pub(crate) fn sha256_value(children: &[Fr]) -> Fr {
    value_of(children, |cs, inputs| {
        sha256_node(cs, GadgetSet::Synthpool, &inputs)
    })
}

/// A sparse tree over `leaves` (position, value; every other leaf zero) with these level
/// arities: its root and each leaf's path, in the order given.
pub(crate) fn sparse_tree(
    arities: &[usize],
    leaves: &[(u64, Fr)],
    hash: &dyn Fn(&[Fr]) -> Fr,
) -> (Fr, Vec<TreePath>) {
    let mut nodes: BTreeMap<u64, Fr> = leaves.iter().copied().collect();
    assert_eq!(nodes.len(), leaves.len(), "leaf positions are distinct");
    let mut positions: Vec<u64> = leaves.iter().map(|(position, _)| *position).collect();
    let mut paths = vec![TreePath { levels: Vec::new() }; leaves.len()];
    let mut empty = Fr::ZERO;
    for &arity in arities {
        let arity64 = arity as u64;
        for (path, position) in paths.iter_mut().zip(&mut positions) {
            let group = *position / arity64;
            let siblings = (0..arity64)
                .filter(|&k| group * arity64 + k != *position)
                .map(|k| nodes.get(&(group * arity64 + k)).copied().unwrap_or(empty))
                .collect();
            path.levels.push(((*position % arity64) as usize, siblings));
            *position = group;
        }
        let groups: Vec<u64> = nodes.keys().map(|position| position / arity64).collect();
        let mut parents = BTreeMap::new();
        for group in groups {
            parents.entry(group).or_insert_with(|| {
                let children: Vec<Fr> = (0..arity64)
                    .map(|k| nodes.get(&(group * arity64 + k)).copied().unwrap_or(empty))
                    .collect();
                hash(&children)
            });
        }
        nodes = parents;
        empty = hash(&vec![empty; arity]);
    }
    let root = nodes.into_values().next().unwrap_or(empty);
    (root, paths)
}

/// Deterministic draws for a sampled witness.
pub(crate) struct Draws {
    next: u64,
    /// Node positions handed out, so leaves of a tree never share one.
    taken: std::collections::HashSet<u64>,
}

impl Draws {
    /// Draws derived from `seed`.
    pub(crate) fn new(seed: u64) -> Self {
        Draws {
            next: seed.wrapping_mul(1_000_003),
            taken: Default::default(),
        }
    }

    fn bytes(&mut self, len: usize) -> Vec<u8> {
        self.next += 1;
        pattern(self.next, len)
    }

    /// A field element below 2^254.
    pub(crate) fn element(&mut self) -> Fr {
        let mut bytes: [u8; 32] = self.bytes(32).try_into().expect("32 bytes");
        bytes[31] &= 0x3f;
        Option::from(Fr::from_repr(bytes)).expect("below the modulus")
    }

    /// Lets positions be handed out again (the next leaves are of another tree).
    pub(crate) fn forget_positions(&mut self) {
        self.taken.clear();
    }

    /// A node position below `nodes` not handed out before.
    pub(crate) fn position(&mut self, nodes: u64) -> u64 {
        loop {
            let bytes: [u8; 8] = self.bytes(8).try_into().expect("8 bytes");
            let candidate = u64::from_le_bytes(bytes) % nodes;
            if self.taken.insert(candidate) {
                return candidate;
            }
        }
    }
}
