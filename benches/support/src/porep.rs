//! A PoRep C2 partition as storage-proofs-porep 19.1's `StackedCircuit` lays it out, for the
//! benchmark: the same gadgets in the same order with the same variables and constraints
//! per challenge, so the bench measures the real partition's mix.
//!
//! Per challenge: the data leaf's tree_d inclusion path (binary SHA-256 Merkle tree); six
//! DRG and eight expansion parent columns, each hashed with Poseidon (arity = layers: 11)
//! and proven in tree_c; the challenge's 64 bits as an input; one label per layer (SHA-256
//! over the replica id, layer, node and 37 parents' bits, 20 compressions); the last label
//! plus the data leaf proven in tree_r_last; the challenge's column of labels hashed and
//! proven in tree_c. tree_c and tree_r_last are Poseidon trees of the sector's shape (8-8-0
//! at 32 GiB: nine levels of arity 8 and one of arity 8 over the sub-trees; 8-8-2 at
//! 64 GiB). Once per partition: the replica id's bits, the public commitments and
//! `comm_r = H(comm_c, comm_r_last)` (Poseidon, arity 2).
//!
//! The witness is a consistent one: the paths are those of sparse trees holding the
//! partition's leaves (every other leaf zero), so each path reaches the partition's shared
//! roots and every constraint holds. [`PartitionParts`] can leave out the SHA-256 parts
//! (labeling and tree_d), which leaves one challenge's Poseidon work apart.

use bellpepper_core::boolean::{AllocatedBit, Boolean};
use bellpepper_core::num::AllocatedNum;
use bellpepper_core::{Circuit, ConstraintSystem, SynthesisError};
use blstrs::Scalar as Fr;
use ff::{Field, PrimeField};
use synthpool::branches::{spread, Spread};
use synthpool::precompiled::Witness;

use crate::circuits::GadgetSet;
use crate::sampling::{poseidon_value, sha256_value, sparse_tree, Draws};
use crate::trees::{equal, inclusion, poseidon_node, reverse_bits_in_bytes, Tree, TreePath};

/// DRG parents per node (storage-proofs-porep's `BASE_DEGREE`).
pub const DRG_PARENTS: usize = 6;

/// Expansion parents per node (`EXP_DEGREE`).
pub const EXP_PARENTS: usize = 8;

/// Parents a label hashes (`TOTAL_PARENTS`): the parents repeated to 37.
const LABEL_PARENTS: usize = 37;

/// The sector-size-dependent shape of a partition.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct SectorShape {
    /// Layers of labels (11 for the published sector sizes).
    pub layers: usize,
    /// Levels of the binary tree_d.
    pub tree_d_depth: usize,
    /// Arity of each level of tree_c and tree_r_last, leaves first.
    pub tree_arities: &'static [usize],
}

impl SectorShape {
    /// A 2 KiB sector (a test size): 64 nodes, two layers, tree_c and tree_r_last 8-0-0.
    pub const KIB_2: SectorShape = SectorShape {
        layers: 2,
        tree_d_depth: 6,
        tree_arities: &[8, 8],
    };

    /// An 8 MiB sector (a test size): 2^18 nodes, two layers, tree_c and tree_r_last 8-0-0.
    pub const MIB_8: SectorShape = SectorShape {
        layers: 2,
        tree_d_depth: 18,
        tree_arities: &[8; 6],
    };

    /// A 32 GiB sector: 2^30 nodes, tree_c and tree_r_last 8-8-0.
    pub const GIB_32: SectorShape = SectorShape {
        layers: 11,
        tree_d_depth: 30,
        tree_arities: &[8; 10],
    };

    /// A 64 GiB sector: 2^31 nodes, tree_c and tree_r_last 8-8-2.
    pub const GIB_64: SectorShape = SectorShape {
        layers: 11,
        tree_d_depth: 31,
        tree_arities: &[8, 8, 8, 8, 8, 8, 8, 8, 8, 8, 2],
    };

    /// Nodes of the sector (leaves of each tree).
    pub(crate) fn nodes(&self) -> u64 {
        1 << self.tree_d_depth
    }
}

/// Which parts of each challenge a [`Partition`] lays out.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct PartitionParts {
    /// The labels (SHA-256) and the parents' bits they hash; without them the challenge's
    /// column of labels is allocated instead of computed.
    pub labeling: bool,
    /// The tree_d inclusion path (SHA-256).
    pub tree_d: bool,
}

impl PartitionParts {
    /// The whole partition.
    pub const ALL: PartitionParts = PartitionParts {
        labeling: true,
        tree_d: true,
    };

    /// The Poseidon work alone: column hashes, tree_c and tree_r_last paths, comm_r.
    pub const POSEIDON: PartitionParts = PartitionParts {
        labeling: false,
        tree_d: false,
    };
}

/// A parent's column (its label in every layer) and its tree_c path.
#[derive(Clone, Debug)]
struct Column {
    rows: Vec<Fr>,
    path: TreePath,
}

/// One challenge's witness.
#[derive(Clone, Debug)]
struct Challenge {
    node: u64,
    data_leaf: Fr,
    tree_d: TreePath,
    drg: Vec<Column>,
    exp: Vec<Column>,
    /// The challenge's own column: its labels (computed in the circuit when labeling is
    /// laid out) and its tree_c path.
    labels: Column,
    tree_r_last: TreePath,
}

/// A partition of a PoRep proof with a consistent witness.
#[derive(Clone, Debug)]
pub struct Partition {
    shape: SectorShape,
    parts: PartitionParts,
    replica_id: Fr,
    comm_d: Fr,
    comm_c: Fr,
    comm_r_last: Fr,
    comm_r: Fr,
    challenges: Vec<Challenge>,
    /// The gadgets it is built with.
    pub gadgets: GadgetSet,
}

/// A label: SHA-256 of the replica id, the layer, the node and the parents' bits, its
/// first 254 bits (in storage-proofs' bit numbering) packed into a number.
fn label<CS: ConstraintSystem<Fr>>(
    mut cs: CS,
    gadgets: GadgetSet,
    replica_id: &[Boolean],
    layer: u32,
    node: &[Boolean],
    parents: &[Vec<Boolean>],
) -> Result<AllocatedNum<Fr>, SynthesisError> {
    let mut preimage = replica_id.to_vec();
    preimage.resize(256, Boolean::constant(false));
    preimage.extend(
        (0..32)
            .rev()
            .map(|i| Boolean::constant((layer >> i) & 1 == 1)),
    );
    preimage.extend(node.iter().rev().cloned());
    preimage.resize(512, Boolean::constant(false));
    for parent in parents {
        preimage.extend_from_slice(parent);
        let padded = preimage.len().next_multiple_of(256);
        preimage.resize(padded, Boolean::constant(false));
    }
    let digest = gadgets.sha256(cs.namespace(|| "hash"), &preimage)?;
    let bits = reverse_bits_in_bytes(digest);
    gadgets.pack_bits(
        cs.namespace(|| "result_num"),
        &bits[..Fr::CAPACITY as usize],
    )
}

/// The 37 parents a label of `layer` hashes: the DRG parents' labels of this layer, then
/// (above layer 1) the expansion parents' of the previous one, repeated.
fn expand_parents(parents: Vec<Vec<Boolean>>, layer: usize) -> Vec<Vec<Boolean>> {
    if layer == 1 {
        let mut out: Vec<Vec<Boolean>> = parents.iter().cycle().take(36).cloned().collect();
        out.push(parents[0].clone());
        out
    } else {
        parents
            .iter()
            .cycle()
            .take(LABEL_PARENTS)
            .cloned()
            .collect()
    }
}

/// Allocates the values of a column.
fn allocate_column<CS: ConstraintSystem<Fr>>(
    mut cs: CS,
    rows: &[Fr],
) -> Result<Vec<AllocatedNum<Fr>>, SynthesisError> {
    rows.iter()
        .enumerate()
        .map(|(i, value)| {
            AllocatedNum::alloc(cs.namespace(|| format!("column_num_row_{i}")), || {
                Ok(*value)
            })
        })
        .collect()
}

/// The public values a challenge proves against.
struct Commitments<'a> {
    comm_d: &'a AllocatedNum<Fr>,
    comm_c: &'a AllocatedNum<Fr>,
    comm_r_last: &'a AllocatedNum<Fr>,
    replica_id: &'a [Boolean],
}

impl Challenge {
    /// The challenge's constraints, in storage-proofs-porep's order: the data leaf in
    /// tree_d, the parents' columns in tree_c, the challenge as an input, the labels, and
    /// the encoded node in tree_r_last with the challenge's own column in tree_c.
    fn synthesize<CS: ConstraintSystem<Fr>>(
        &self,
        mut cs: CS,
        gadgets: GadgetSet,
        parts: PartitionParts,
        commitments: &Commitments<'_>,
    ) -> Result<(), SynthesisError> {
        let data_leaf = AllocatedNum::alloc(cs.namespace(|| "data_leaf"), || Ok(self.data_leaf))?;
        if parts.tree_d {
            inclusion(
                cs.namespace(|| "comm_d_inclusion"),
                gadgets,
                Tree::Data,
                &data_leaf,
                &self.tree_d,
                commitments.comm_d,
            )?;
        }
        let parents = self.parent_columns(&mut cs, gadgets, commitments)?;
        let node_bits = (0..64)
            .map(|i| {
                let bit = (self.node >> i) & 1 == 1;
                AllocatedBit::alloc(cs.namespace(|| format!("challenge bit {i}")), Some(bit))
                    .map(Boolean::from)
            })
            .collect::<Result<Vec<_>, _>>()?;
        gadgets.pack_into_inputs(cs.namespace(|| "challenge input"), &node_bits)?;
        let labels = if parts.labeling {
            self.labels(&mut cs, gadgets, commitments, &parents, &node_bits)?
        } else {
            allocate_column(cs.namespace(|| "labels"), &self.labels.rows)?
        };
        self.encoding(&mut cs, gadgets, commitments, &data_leaf, labels)
    }

    /// Each DRG and expansion parent's column allocated, hashed and proven in tree_c: the
    /// columns.
    fn parent_columns<CS: ConstraintSystem<Fr>>(
        &self,
        cs: &mut CS,
        gadgets: GadgetSet,
        commitments: &Commitments<'_>,
    ) -> Result<Vec<Vec<AllocatedNum<Fr>>>, SynthesisError> {
        let mut parents = Vec::with_capacity(DRG_PARENTS + EXP_PARENTS);
        for (kind, columns) in [("drg", &self.drg), ("exp", &self.exp)] {
            for (i, column) in columns.iter().enumerate() {
                let rows = allocate_column(
                    cs.namespace(|| format!("{kind}_parent_{i}_num/column")),
                    &column.rows,
                )?;
                let hash = poseidon_node(
                    cs.namespace(|| format!("{kind}_parent_{i}_constraint")),
                    gadgets,
                    rows.clone(),
                )?;
                inclusion(
                    cs.namespace(|| format!("{kind}_parent_{i}_inclusion")),
                    gadgets,
                    Tree::Poseidon,
                    &hash,
                    &column.path,
                    commitments.comm_c,
                )?;
                parents.push(rows);
            }
        }
        Ok(parents)
    }

    /// One label per layer, from the replica id, the layer, the node and the parents'
    /// labels of the layer below (the expansion parents' from the second layer on).
    fn labels<CS: ConstraintSystem<Fr>>(
        &self,
        cs: &mut CS,
        gadgets: GadgetSet,
        commitments: &Commitments<'_>,
        parents: &[Vec<AllocatedNum<Fr>>],
        node_bits: &[Boolean],
    ) -> Result<Vec<AllocatedNum<Fr>>, SynthesisError> {
        let mut labels = Vec::with_capacity(self.labels.rows.len());
        for layer in 1..=self.labels.rows.len() {
            let mut cs = cs.namespace(|| format!("labeling_{layer}"));
            let mut bits = Vec::with_capacity(DRG_PARENTS + EXP_PARENTS);
            let sources = parents
                .iter()
                .take(DRG_PARENTS)
                .map(|rows| &rows[layer - 1]);
            let expanded = parents[DRG_PARENTS..].iter().filter(|_| layer > 1);
            for parent in sources.chain(expanded.map(|rows| &rows[layer - 2])) {
                let n = bits.len();
                let le = parent.to_bits_le(cs.namespace(|| format!("parent_{n}_bits")))?;
                bits.push(reverse_bits_in_bytes(le));
            }
            labels.push(label(
                cs.namespace(|| "create_label"),
                gadgets,
                commitments.replica_id,
                layer as u32,
                node_bits,
                &expand_parents(bits, layer),
            )?);
        }
        Ok(labels)
    }

    /// The node encoded (its last label plus the data leaf) and proven in tree_r_last, and
    /// the challenge's column of labels hashed and proven in tree_c.
    fn encoding<CS: ConstraintSystem<Fr>>(
        &self,
        cs: &mut CS,
        gadgets: GadgetSet,
        commitments: &Commitments<'_>,
        data_leaf: &AllocatedNum<Fr>,
        labels: Vec<AllocatedNum<Fr>>,
    ) -> Result<(), SynthesisError> {
        let key = labels.last().ok_or(SynthesisError::Unsatisfiable)?;
        let encoded = AllocatedNum::alloc(cs.namespace(|| "encode_node"), || {
            Ok(self.labels.rows[self.labels.rows.len() - 1] + self.data_leaf)
        })?;
        cs.enforce(
            || "encode sum",
            |lc| lc + key.get_variable() + data_leaf.get_variable(),
            |lc| lc + CS::one(),
            |lc| lc + encoded.get_variable(),
        );
        inclusion(
            cs.namespace(|| "comm_r_last_data_inclusion"),
            gadgets,
            Tree::Poseidon,
            &encoded,
            &self.tree_r_last,
            commitments.comm_r_last,
        )?;
        let column_hash = poseidon_node(cs.namespace(|| "c_x_column_hash"), gadgets, labels)?;
        inclusion(
            cs.namespace(|| "c_x_inclusion"),
            gadgets,
            Tree::Poseidon,
            &column_hash,
            &self.labels.path,
            commitments.comm_c,
        )
    }
}

impl Circuit<Fr> for Partition {
    fn synthesize<CS: ConstraintSystem<Fr>>(self, cs: &mut CS) -> Result<(), SynthesisError> {
        let gadgets = self.gadgets;
        let replica_id =
            AllocatedNum::alloc(cs.namespace(|| "replica_id"), || Ok(self.replica_id))?;
        replica_id.inputize(cs.namespace(|| "replica_id_input"))?;
        let replica_id_bits =
            reverse_bits_in_bytes(replica_id.to_bits_le(cs.namespace(|| "replica_id_bits"))?);
        let comm_d = AllocatedNum::alloc(cs.namespace(|| "comm_d"), || Ok(self.comm_d))?;
        comm_d.inputize(cs.namespace(|| "comm_d_input"))?;
        let comm_r = AllocatedNum::alloc(cs.namespace(|| "comm_r"), || Ok(self.comm_r))?;
        comm_r.inputize(cs.namespace(|| "comm_r_input"))?;
        let comm_r_last =
            AllocatedNum::alloc(cs.namespace(|| "comm_r_last"), || Ok(self.comm_r_last))?;
        let comm_c = AllocatedNum::alloc(cs.namespace(|| "comm_c"), || Ok(self.comm_c))?;
        let hashed = poseidon_node(
            cs.namespace(|| "H_comm_c_comm_r_last"),
            gadgets,
            vec![comm_c.clone(), comm_r_last.clone()],
        )?;
        equal(cs, &comm_r, &hashed);
        let commitments = Commitments {
            comm_d: &comm_d,
            comm_c: &comm_c,
            comm_r_last: &comm_r_last,
            replica_id: &replica_id_bits,
        };
        // The challenges on every thread of the rayon pool where the system can branch, as
        // the patched fork's StackedCircuit synthesizes them.
        let challenges = self.challenges.iter().collect();
        let synthesize = |cs: &mut CS::Root, i: usize, challenge: &Challenge| {
            challenge.synthesize(
                cs.namespace(|| format!("challenge_{i}")),
                gadgets,
                self.parts,
                &commitments,
            )
        };
        match spread(cs, challenges, synthesize)? {
            Spread::Done => Ok(()),
            Spread::Here(challenges) => challenges
                .into_iter()
                .enumerate()
                .try_for_each(|(i, challenge)| synthesize(cs.get_root(), i, challenge)),
        }
    }
}

/// A column of random labels, its path to be filled in.
fn column(draws: &mut Draws, layers: usize) -> Column {
    Column {
        rows: (0..layers).map(|_| draws.element()).collect(),
        path: TreePath { levels: Vec::new() },
    }
}

impl Partition {
    /// A partition of `challenges` challenges of a sector of `shape`, its witness derived
    /// from `seed`. Panics when the sector's trees disagree on its size or cannot hold the
    /// partition's distinct leaves (fifteen per challenge).
    pub fn sample(
        shape: SectorShape,
        parts: PartitionParts,
        challenges: usize,
        seed: u64,
        gadgets: GadgetSet,
    ) -> Self {
        let leaves: u64 = shape.tree_arities.iter().map(|&a| a as u64).product();
        assert_eq!(
            leaves,
            shape.nodes(),
            "tree_c's leaves are the sector's nodes"
        );
        assert!(
            (challenges * (1 + DRG_PARENTS + EXP_PARENTS)) as u64 <= shape.nodes(),
            "{challenges} challenges need more distinct nodes than a sector of {} has",
            shape.nodes()
        );
        let mut draws = Draws::new(seed);
        let replica_id = draws.element();
        let mut drawn = Vec::with_capacity(challenges);
        for _ in 0..challenges {
            let node = draws.position(shape.nodes());
            let drg: Vec<Column> = (0..DRG_PARENTS)
                .map(|_| column(&mut draws, shape.layers))
                .collect();
            let exp: Vec<Column> = (0..EXP_PARENTS)
                .map(|_| column(&mut draws, shape.layers))
                .collect();
            let parent_nodes: Vec<u64> = (0..DRG_PARENTS + EXP_PARENTS)
                .map(|_| draws.position(shape.nodes()))
                .collect();
            let challenge = Challenge {
                node,
                data_leaf: draws.element(),
                tree_d: TreePath { levels: Vec::new() },
                drg,
                exp,
                labels: Column {
                    rows: Vec::new(),
                    path: TreePath { levels: Vec::new() },
                },
                tree_r_last: TreePath { levels: Vec::new() },
            };
            drawn.push((challenge, parent_nodes));
        }
        let mut partition = Partition {
            shape,
            parts,
            replica_id,
            comm_d: Fr::ZERO,
            comm_c: Fr::ZERO,
            comm_r_last: Fr::ZERO,
            comm_r: Fr::ZERO,
            challenges: Vec::new(),
            gadgets,
        };
        for (challenge, _) in &mut drawn {
            challenge.labels.rows = partition.labels_of(challenge);
        }
        partition.prove_inclusions(drawn);
        partition
    }

    /// The challenge's labels, computed by the circuit's own labeling gadgets.
    fn labels_of(&self, challenge: &Challenge) -> Vec<Fr> {
        let mut cs = Witness::<Fr>::default();
        let gadgets = GadgetSet::Synthpool;
        let replica_id = AllocatedNum::alloc(&mut cs, || Ok(self.replica_id)).expect("known");
        let replica_id = reverse_bits_in_bytes(replica_id.to_bits_le(&mut cs).expect("known"));
        let node: Vec<Boolean> = (0..64)
            .map(|i| Boolean::constant((challenge.node >> i) & 1 == 1))
            .collect();
        let mut labels: Vec<Fr> = Vec::with_capacity(self.shape.layers);
        for layer in 1..=self.shape.layers {
            let drg = challenge.drg.iter().map(|c| c.rows[layer - 1]);
            let exp = challenge
                .exp
                .iter()
                .filter(|_| layer > 1)
                .map(|c| c.rows[layer - 2]);
            let mut bits = Vec::new();
            for value in drg.chain(exp) {
                let num = AllocatedNum::alloc(&mut cs, || Ok(value)).expect("known");
                bits.push(reverse_bits_in_bytes(
                    num.to_bits_le(&mut cs).expect("known"),
                ));
            }
            let parents = expand_parents(bits, layer);
            let label = label(&mut cs, gadgets, &replica_id, layer as u32, &node, &parents)
                .expect("known values");
            labels.push(label.get_value().expect("computed"));
        }
        labels
    }

    /// Builds the three sparse trees over the drawn challenges' leaves, sets every path
    /// and the commitments.
    fn prove_inclusions(&mut self, drawn: Vec<(Challenge, Vec<u64>)>) {
        let column_hash = poseidon_value;
        let arities = self.shape.tree_arities;
        let binary = vec![2; self.shape.tree_d_depth];
        // tree_c: every parent column and the challenge's own.
        let mut c_leaves = Vec::new();
        for (challenge, parent_nodes) in &drawn {
            let columns = challenge.drg.iter().chain(&challenge.exp);
            for (column, &node) in columns.zip(parent_nodes) {
                c_leaves.push((node, column_hash(&column.rows)));
            }
            c_leaves.push((challenge.node, column_hash(&challenge.labels.rows)));
        }
        let (comm_c, mut c_paths) = sparse_tree(arities, &c_leaves, &poseidon_value);
        let r_leaves: Vec<(u64, Fr)> = drawn
            .iter()
            .map(|(c, _)| (c.node, c.labels.rows[c.labels.rows.len() - 1] + c.data_leaf))
            .collect();
        let (comm_r_last, r_paths) = sparse_tree(arities, &r_leaves, &poseidon_value);
        let d_leaves: Vec<(u64, Fr)> = drawn.iter().map(|(c, _)| (c.node, c.data_leaf)).collect();
        let (comm_d, d_paths) = if self.parts.tree_d {
            sparse_tree(&binary, &d_leaves, &sha256_value)
        } else {
            (
                Fr::ZERO,
                vec![TreePath { levels: Vec::new() }; d_leaves.len()],
            )
        };
        let mut c_paths = c_paths.drain(..);
        for (((mut challenge, _), r_path), d_path) in drawn.into_iter().zip(r_paths).zip(d_paths) {
            for column in challenge.drg.iter_mut().chain(challenge.exp.iter_mut()) {
                column.path = c_paths.next().expect("one path per column");
            }
            challenge.labels.path = c_paths.next().expect("one path per column");
            challenge.tree_r_last = r_path;
            challenge.tree_d = d_path;
            self.challenges.push(challenge);
        }
        self.comm_c = comm_c;
        self.comm_r_last = comm_r_last;
        self.comm_d = comm_d;
        self.comm_r = poseidon_value(&[comm_c, comm_r_last]);
    }

    /// The same partition built with other gadgets.
    pub fn with_gadgets(mut self, gadgets: GadgetSet) -> Self {
        self.gadgets = gadgets;
        self
    }
}
