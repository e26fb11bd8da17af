//! A WindowPoSt partition as storage-proofs-post 19.1's `FallbackPoStCircuit` lays it out,
//! for the benchmark: the circuit filecoin-proofs proves each deadline, nearly all Poseidon.
//!
//! Per sector: `comm_r_last`, `comm_c` and `comm_r` allocated, `comm_r` an input, and
//! `comm_r = H(comm_c, comm_r_last)` (Poseidon, arity 2); then per challenge the leaf's
//! inclusion in tree_r_last (storage-proofs' `PoRCircuit` with a private root: each level's
//! index bits, siblings, insertion and arity-8 Poseidon hash; the path's bits packed into
//! one input; the root equal to `comm_r_last`). A 32 GiB sector's tree_r_last is 8-8-0,
//! ten levels of arity 8; filecoin-proofs 19.1 puts 2,349 such sectors of ten challenges in
//! a partition, 125,279,217 constraints by its own count.
//!
//! The witness is consistent: each sector's paths are those of a sparse tree holding its
//! challenged leaves (every other leaf zero).

use bellpepper_core::num::AllocatedNum;
use bellpepper_core::{Circuit, ConstraintSystem, SynthesisError};
use blstrs::Scalar as Fr;
use ff::Field;
use rayon::prelude::*;
use synthpool::branches::{spread, Spread};

use crate::circuits::GadgetSet;
use crate::porep::SectorShape;
use crate::sampling::{poseidon_value, sparse_tree, Draws};
use crate::trees::{equal, inclusion, poseidon_node, Tree, TreePath};

/// Challenges per sector of a WindowPoSt (filecoin-proofs' `WINDOW_POST_CHALLENGE_COUNT`).
pub const WINDOW_POST_CHALLENGES: usize = 10;

/// One sector's part of a partition.
#[derive(Clone, Debug)]
struct Sector {
    comm_c: Fr,
    comm_r_last: Fr,
    comm_r: Fr,
    /// Each challenged leaf and its tree_r_last path.
    challenges: Vec<(Fr, TreePath)>,
}

/// A WindowPoSt partition with a consistent witness.
#[derive(Clone, Debug)]
pub struct PostPartition {
    sectors: Vec<Sector>,
    /// The gadgets it is built with.
    pub gadgets: GadgetSet,
}

impl PostPartition {
    /// A partition of `sectors` sectors of `shape` (only its tree_r_last is used),
    /// `challenges` challenges each, its witness derived from `seed`.
    pub fn sample(
        shape: SectorShape,
        sectors: usize,
        challenges: usize,
        seed: u64,
        gadgets: GadgetSet,
    ) -> Self {
        let mut draws = Draws::new(seed);
        let sectors = (0..sectors)
            .map(|_| {
                let comm_c = draws.element();
                // Distinct positions within this sector's tree.
                draws.forget_positions();
                let leaves: Vec<(u64, Fr)> = (0..challenges)
                    .map(|_| (draws.position(shape.nodes()), draws.element()))
                    .collect();
                let (comm_r_last, paths) =
                    sparse_tree(shape.tree_arities, &leaves, &poseidon_value);
                Sector {
                    comm_c,
                    comm_r_last,
                    comm_r: poseidon_value(&[comm_c, comm_r_last]),
                    challenges: leaves
                        .into_iter()
                        .map(|(_, leaf)| leaf)
                        .zip(paths)
                        .collect(),
                }
            })
            .collect();
        PostPartition { sectors, gadgets }
    }

    /// The same partition built with other gadgets.
    pub fn with_gadgets(mut self, gadgets: GadgetSet) -> Self {
        self.gadgets = gadgets;
        self
    }
}

impl Sector {
    fn synthesize<CS: ConstraintSystem<Fr>>(
        &self,
        cs: &mut CS,
        gadgets: GadgetSet,
    ) -> Result<(), SynthesisError> {
        let comm_r_last =
            AllocatedNum::alloc(cs.namespace(|| "comm_r_last"), || Ok(self.comm_r_last))?;
        let comm_c = AllocatedNum::alloc(cs.namespace(|| "comm_c"), || Ok(self.comm_c))?;
        let comm_r = AllocatedNum::alloc(cs.namespace(|| "comm_r"), || Ok(self.comm_r))?;
        comm_r.inputize(cs.namespace(|| "comm_r_input"))?;
        let hashed = poseidon_node(
            cs.namespace(|| "H_comm_c_comm_r_last"),
            gadgets,
            vec![comm_c, comm_r_last.clone()],
        )?;
        equal(cs, &comm_r, &hashed);
        for (i, (leaf, path)) in self.challenges.iter().enumerate() {
            let mut cs = cs.namespace(|| format!("challenge_inclusion_{i}"));
            let value = AllocatedNum::alloc(cs.namespace(|| "value"), || Ok(*leaf))?;
            inclusion(cs, gadgets, Tree::Poseidon, &value, path, &comm_r_last)?;
        }
        Ok(())
    }
}

impl Circuit<Fr> for PostPartition {
    /// As storage-proofs-post's `FallbackPoStCircuit` under `patch-fork.sh`: where the system
    /// is extensible (every synthpool system is), the sectors in chunks, one per rayon
    /// thread, spread over branches (the first chunk in the system itself), or where it
    /// cannot branch each into a system of its own, appended in order (upstream's way);
    /// else one after another.
    fn synthesize<CS: ConstraintSystem<Fr>>(self, cs: &mut CS) -> Result<(), SynthesisError> {
        if !CS::is_extensible() {
            let mut cs = cs.namespace(|| "outer namespace");
            for (i, sector) in self.sectors.iter().enumerate() {
                sector.synthesize(&mut cs.namespace(|| format!("sector_{i}")), self.gadgets)?;
            }
            return Ok(());
        }
        let chunk = (self.sectors.len() / rayon::current_num_threads()).max(1);
        let gadgets = self.gadgets;
        let groups: Vec<&[Sector]> = self.sectors.chunks(chunk).collect();
        let groups = match spread(cs, groups, |cs, _, sectors| {
            for (i, sector) in sectors.iter().enumerate() {
                sector.synthesize(&mut cs.namespace(|| format!("sector_{i}")), gadgets)?;
            }
            Ok(())
        })? {
            Spread::Done => return Ok(()),
            Spread::Here(groups) => groups,
        };
        let chunks = groups
            .into_par_iter()
            .map(|sectors| {
                let mut cs = CS::new();
                cs.alloc_input(|| "temp ONE", || Ok(Fr::ONE))?;
                for (i, sector) in sectors.iter().enumerate() {
                    sector.synthesize(&mut cs.namespace(|| format!("sector_{i}")), gadgets)?;
                }
                Ok(cs)
            })
            .collect::<Result<Vec<CS>, SynthesisError>>()?;
        for chunk in &chunks {
            cs.extend(chunk);
        }
        Ok(())
    }
}
