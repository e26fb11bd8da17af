//! A SnapDeals partition as storage-proofs-update 19.1's `EmptySectorUpdateCircuit` lays it
//! out, for the benchmark: the same gadgets in the same order with the same constraints, so
//! the bench measures the real partition's mix, with the challenges and the apex tree's
//! rows spread as `scripts/patch-fork.sh` spreads them in the fork.
//!
//! Once per partition: `k_and_h_select` as an input and its bits (the partition index `k`,
//! the one-hot choice of `h`); `comm_r_old`, `comm_d_new` and `comm_r_new` as inputs;
//! `phi = H(comm_d_new, comm_r_old)`; `comm_r = H(comm_c, root_r)` for the old and the new
//! replica; the apex tree (the partition's apex leaves hashed with SHA-256, row by row: 7
//! hashes up to 8 KiB sectors, 127 above) and its root's path to `comm_d_new`; the
//! challenges' bits, nine per Poseidon digest of `comm_r_new` at 32 GiB. Per challenge:
//! `rho = H(phi, c_high)`, the new replica's node `leaf_r_old + leaf_d_new · rho`, both
//! replicas' nodes in their Poseidon trees (8-8-0 at 32 GiB), the challenge's apex leaf
//! selected by its bits and its data leaf's SHA-256 path to it. `phi`, `rho` and the
//! challenges' digests hash with storage-proofs-update's own Poseidon constants.
//!
//! The witness is consistent, and as plain as the protocol's chain of hashes allows: the
//! challenges are drawn from `comm_r_new`, and `rho` from `comm_d_new` and `comm_r_old`, so
//! trees holding leaves at the challenges' positions would depend on their own roots. Both
//! replicas' trees hold one value at every leaf (their roots are those of any position),
//! and each challenged data leaf is zero, so `leaf_r_new = leaf_r_old` whatever `rho` is;
//! the apex leaves that no challenge opens are drawn at random. Every constraint holds.

use std::sync::OnceLock;

use bellpepper_core::boolean::{field_into_allocated_bits_le, AllocatedBit, Boolean};
use bellpepper_core::num::AllocatedNum;
use bellpepper_core::{Circuit, ConstraintSystem, LinearCombination, SynthesisError};
use blstrs::Scalar as Fr;
use ff::{Field, PrimeField, PrimeFieldBits};
use generic_array::typenum::U2;
use neptune::hash_type::{CType, HashType};
use neptune::poseidon::PoseidonConstants;
use neptune::Strength;
use synthpool::branches::{spread, spread_small_returning, Returned, Spread};

use crate::circuits::GadgetSet;
use crate::porep::SectorShape;
use crate::sampling::{poseidon_value, sha256_value, value_of, Draws};
use crate::trees::{equal, inclusion_by_bits, poseidon_node, select, sha256_node, Tree};

/// The choices of `h` (high bits of a challenge that `rho` hashes) a sector size allows,
/// one selected per proof by a one-hot input.
const H_CHOICES: usize = 6;

/// Which of the allowed `h` filecoin-proofs selects (`h_default`).
const H_DEFAULT_INDEX: usize = 3;

/// storage-proofs-update's Poseidon constants for `phi`, `rho` and the challenges' digests
/// (arity 2, its own domain tag), made once.
fn randomness_constants() -> &'static PoseidonConstants<Fr, U2> {
    static CONSTANTS: OnceLock<PoseidonConstants<Fr, U2>> = OnceLock::new();
    CONSTANTS.get_or_init(|| {
        PoseidonConstants::new_with_strength_and_type(
            Strength::Standard,
            HashType::Custom(CType::Arbitrary(1)),
        )
    })
}

/// What the sector size fixes (storage-proofs-update's `PublicParams` and constants).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
struct Sizes {
    /// Bits of a node index (the challenge's bits).
    node_bits: usize,
    /// Bits of the partition index.
    partition_bits: usize,
    /// Bits of an apex leaf's index in its partition.
    apex_bits: usize,
    /// The allowed `h`.
    hs: [usize; H_CHOICES],
}

impl Sizes {
    fn of(shape: SectorShape) -> Self {
        let nodes = shape.nodes();
        let (partitions, apex_leaves, hs) = match nodes {
            n if n <= 1 << 8 => (1u64, 8u64, [1; H_CHOICES]),
            n if n <= 1 << 10 => (2, 128, [1; H_CHOICES]),
            n if n <= 1 << 19 => (4, 128, [7, 8, 9, 10, 11, 12]),
            _ => (16, 128, [7, 8, 9, 10, 11, 12]),
        };
        Sizes {
            node_bits: shape.tree_d_depth,
            partition_bits: partitions.trailing_zeros() as usize,
            apex_bits: apex_leaves.trailing_zeros() as usize,
            hs,
        }
    }

    /// The challenge's own bits (below the partition's).
    fn challenge_bits(&self) -> usize {
        self.node_bits - self.partition_bits
    }

    /// Levels of a data leaf's path up to its apex leaf.
    fn below_apex(&self) -> usize {
        self.challenge_bits() - self.apex_bits
    }

    /// Challenges one digest gives bits for.
    fn challenges_per_digest(&self) -> usize {
        Fr::CAPACITY as usize / self.challenge_bits()
    }

    /// Digests the partition hashes for `challenges` challenges.
    fn digests(&self, challenges: usize) -> usize {
        challenges.div_ceil(self.challenges_per_digest())
    }
}

/// The number of challenges in a real partition of `shape` (storage-proofs-update's
/// `challenge_count`: 10 up to 16 MiB sectors, 86 above).
pub fn real_challenges(shape: SectorShape) -> usize {
    if shape.nodes() <= 1 << 19 {
        10
    } else {
        86
    }
}

/// A SnapDeals partition with a consistent witness.
#[derive(Clone, Debug)]
pub struct SnapPartition {
    sizes: Sizes,
    challenges: usize,
    /// The partition index and the one-hot choice of `h`, packed.
    k_and_h_select: u64,
    comm_c: Fr,
    /// The root of either replica's tree.
    root_r: Fr,
    /// `comm_r_old` and `comm_r_new`: `H(comm_c, root_r)`.
    comm_r: Fr,
    comm_d_new: Fr,
    apex_leaves: Vec<Fr>,
    /// The apex root's siblings up to `comm_d_new`.
    partition_path: Vec<Fr>,
    /// The value of every leaf of either replica's tree.
    leaf_r: Fr,
    /// The sibling at each level of any path in either replica's tree (each level's nodes
    /// are all equal), with the level's arity.
    tree_r: Vec<(usize, Fr)>,
    /// The sibling at each level of a zero data leaf's path up to its apex leaf.
    tree_d: Vec<Fr>,
    /// The gadgets it is built with.
    pub gadgets: GadgetSet,
}

impl SnapPartition {
    /// A partition of `challenges` challenges of a sector of `shape` (2 KiB or 32 GiB; see
    /// [`real_challenges`]), its witness derived from `seed`.
    pub fn sample(shape: SectorShape, challenges: usize, seed: u64, gadgets: GadgetSet) -> Self {
        let sizes = Sizes::of(shape);
        let mut draws = Draws::new(seed);
        let k = draws.position(1 << sizes.partition_bits);
        let k_and_h_select = k | (1 << (sizes.partition_bits + H_DEFAULT_INDEX));
        let comm_c = draws.element();
        let leaf_r = draws.element();
        let mut tree_r = Vec::with_capacity(shape.tree_arities.len());
        let mut node = leaf_r;
        for &arity in shape.tree_arities {
            tree_r.push((arity, node));
            node = poseidon_value(&vec![node; arity]);
        }
        let root_r = node;
        let comm_r = poseidon_value(&[comm_c, root_r]);

        // The apex leaves the challenges open: the top bits of each challenge's own bits,
        // drawn from `comm_r_new` as the circuit draws them.
        let per_digest = sizes.challenges_per_digest();
        let digests = sizes.digests(challenges);
        let mut opened = vec![false; 1 << sizes.apex_bits];
        for j in 0..digests {
            let index = Fr::from(k * digests as u64 + j as u64);
            let digest = value_of(&[comm_r, index], |cs, inputs| {
                GadgetSet::Synthpool.poseidon(cs, inputs, randomness_constants())
            });
            let bits = digest.to_le_bits();
            for c in 0..per_digest.min(challenges - j * per_digest) {
                let first = c * sizes.challenge_bits() + sizes.below_apex();
                let apex_leaf =
                    (0..sizes.apex_bits).fold(0, |n, i| n | usize::from(bits[first + i]) << i);
                opened[apex_leaf] = true;
            }
        }
        let mut tree_d = Vec::with_capacity(sizes.below_apex());
        let mut node = Fr::ZERO;
        for _ in 0..sizes.below_apex() {
            tree_d.push(node);
            node = sha256_value(&[node, node]);
        }
        let apex_leaves: Vec<Fr> = opened
            .iter()
            .map(|&opened| if opened { node } else { draws.element() })
            .collect();
        let mut row = apex_leaves.clone();
        while row.len() > 1 {
            row = row.chunks(2).map(sha256_value).collect();
        }
        let partition_path: Vec<Fr> = (0..sizes.partition_bits).map(|_| draws.element()).collect();
        let mut comm_d_new = row[0];
        for (i, sibling) in partition_path.iter().enumerate() {
            comm_d_new = if (k >> i) & 1 == 1 {
                sha256_value(&[*sibling, comm_d_new])
            } else {
                sha256_value(&[comm_d_new, *sibling])
            };
        }
        SnapPartition {
            sizes,
            challenges,
            k_and_h_select,
            comm_c,
            root_r,
            comm_r,
            comm_d_new,
            apex_leaves,
            partition_path,
            leaf_r,
            tree_r,
            tree_d,
            gadgets,
        }
    }

    /// The same partition built with other gadgets.
    pub fn with_gadgets(mut self, gadgets: GadgetSet) -> Self {
        self.gadgets = gadgets;
        self
    }
}

/// Allocates `value` under `name`.
fn alloc<CS: ConstraintSystem<Fr>>(
    cs: &mut CS,
    name: &str,
    value: Fr,
) -> Result<AllocatedNum<Fr>, SynthesisError> {
    AllocatedNum::alloc(cs.namespace(|| name), || Ok(value))
}

/// `Σ 2^i · bits[i] · 1 = num`.
fn enforce_bits_of<CS: ConstraintSystem<Fr>>(
    cs: &mut CS,
    name: &str,
    bits: &[AllocatedBit],
    num: &AllocatedNum<Fr>,
) {
    let mut lc = LinearCombination::zero();
    let mut power = Fr::ONE;
    for bit in bits {
        lc = lc + (power, bit.get_variable());
        power = power.double();
    }
    cs.enforce(
        || name,
        |_| lc,
        |lc| lc + CS::one(),
        |lc| lc + num.get_variable(),
    );
}

fn booleans(bits: &[AllocatedBit]) -> Vec<Boolean> {
    bits.iter().cloned().map(Boolean::from).collect()
}

/// The apex tree over `leaves`, each row's hashes spread over branches where the system
/// can branch (the fork's tenth edit), and its root's path to `comm_d` along the
/// partition's bits.
fn apex<CS: ConstraintSystem<Fr>>(
    mut cs: CS,
    gadgets: GadgetSet,
    leaves: Vec<AllocatedNum<Fr>>,
    partition_bits: &[AllocatedBit],
    partition_path: &[Vec<AllocatedNum<Fr>>],
    comm_d: &AllocatedNum<Fr>,
) -> Result<(), SynthesisError> {
    let mut row = leaves;
    let mut row_index = 0;
    while row.len() > 1 {
        let hash = |cs: &mut CS::Root, i: usize, pair: &[AllocatedNum<Fr>]| {
            sha256_node(
                cs.namespace(|| {
                    format!("apex_tree generation hash (tree_row={row_index}, siblings={i})")
                }),
                gadgets,
                pair,
            )
        };
        let pairs: Vec<&[AllocatedNum<Fr>]> = row.chunks(2).collect();
        let next = match spread_small_returning(&mut cs, pairs, hash)? {
            Returned::Done(next) => next,
            Returned::Here(pairs) => pairs
                .into_iter()
                .enumerate()
                .map(|(i, pair)| hash(cs.get_root(), i, pair))
                .collect::<Result<_, _>>()?,
        };
        row = next;
        row_index += 1;
    }
    inclusion_by_bits(
        cs.namespace(|| "partition-tree por"),
        gadgets,
        Tree::Data,
        &booleans(partition_bits),
        &row[0],
        partition_path,
        comm_d,
    )
}

/// Each challenge's own bits: `challenge_bits` of each digest `H(comm_r_new, index)`, the
/// digests' indices `k · digests + j`.
fn challenge_bits<CS: ConstraintSystem<Fr>>(
    mut cs: CS,
    gadgets: GadgetSet,
    sizes: Sizes,
    challenges: usize,
    comm_r_new: &AllocatedNum<Fr>,
    partition: &AllocatedNum<Fr>,
) -> Result<Vec<Vec<AllocatedBit>>, SynthesisError> {
    let digests = sizes.digests(challenges);
    let mut out = Vec::with_capacity(challenges);
    for j in 0..digests {
        let index = AllocatedNum::alloc(cs.namespace(|| format!("digest_index_{j}")), || {
            let k = partition
                .get_value()
                .ok_or(SynthesisError::AssignmentMissing)?;
            Ok(k * Fr::from(digests as u64) + Fr::from(j as u64))
        })?;
        cs.enforce(
            || format!("digest_index_{j}"),
            |lc| {
                lc + (Fr::from(digests as u64), partition.get_variable())
                    + (Fr::from(j as u64), CS::one())
            },
            |lc| lc + CS::one(),
            |lc| lc + index.get_variable(),
        );
        let digest = gadgets.poseidon(
            cs.namespace(|| format!("digest_{j}")),
            vec![comm_r_new.clone(), index],
            randomness_constants(),
        )?;
        let mut bits_cs = cs.namespace(|| format!("digest_{j}_bits"));
        let bits = field_into_allocated_bits_le(&mut bits_cs, digest.get_value())?;
        enforce_bits_of(&mut bits_cs, "binary decomp", &bits, &digest);
        let take = (challenges - out.len()).min(sizes.challenges_per_digest());
        out.extend(
            bits.chunks(sizes.challenge_bits())
                .take(take)
                .map(<[AllocatedBit]>::to_vec),
        );
    }
    Ok(out)
}

/// The challenge's `h` high bits, `h` chosen by the one-hot `h_select`: each choice's high
/// bits packed and scaled by its select bit, then summed.
fn high_bits<CS: ConstraintSystem<Fr>>(
    mut cs: CS,
    gadgets: GadgetSet,
    c_bits: &[Boolean],
    h_select: &[AllocatedBit],
    hs: &[usize; H_CHOICES],
) -> Result<AllocatedNum<Fr>, SynthesisError> {
    let mut scaled = Vec::with_capacity(H_CHOICES);
    for (k, (&h, select)) in hs.iter().zip(h_select).enumerate() {
        let high = gadgets.pack_bits(
            cs.namespace(|| format!("c_high (h={h}, k={k})")),
            &c_bits[c_bits.len() - h..],
        )?;
        let high_or_zero = AllocatedNum::alloc(
            cs.namespace(|| format!("c_high_or_zero (h={h}, k={k})")),
            || {
                let chosen = select
                    .get_value()
                    .ok_or(SynthesisError::AssignmentMissing)?;
                let high = high.get_value().ok_or(SynthesisError::AssignmentMissing)?;
                Ok(if chosen { high } else { Fr::ZERO })
            },
        )?;
        cs.enforce(
            || format!("c_high_or_zero (h={h}, k={k})"),
            |lc| lc + high.get_variable(),
            |lc| lc + select.get_variable(),
            |lc| lc + high_or_zero.get_variable(),
        );
        scaled.push(high_or_zero);
    }
    let selected = AllocatedNum::alloc(cs.namespace(|| "c_high_selected"), || {
        scaled.iter().try_fold(Fr::ZERO, |sum, value| {
            Ok(sum + value.get_value().ok_or(SynthesisError::AssignmentMissing)?)
        })
    })?;
    cs.enforce(
        || "c_high_selected",
        |lc| {
            scaled
                .iter()
                .fold(lc, |lc, value| lc + value.get_variable())
        },
        |lc| lc + CS::one(),
        |lc| lc + selected.get_variable(),
    );
    Ok(selected)
}

/// What every challenge reads of the partition's variables.
struct Shared<'a> {
    partition_bits: &'a [AllocatedBit],
    h_select: &'a [AllocatedBit],
    phi: &'a AllocatedNum<Fr>,
    root_r_old: &'a AllocatedNum<Fr>,
    root_r_new: &'a AllocatedNum<Fr>,
    apex_leaves: &'a [AllocatedNum<Fr>],
}

impl SnapPartition {
    /// Allocates a path's siblings: at each level of `levels` (arity, sibling value),
    /// arity less one.
    fn path<CS: ConstraintSystem<Fr>>(
        cs: &mut CS,
        name: &str,
        levels: impl Iterator<Item = (usize, Fr)>,
    ) -> Result<Vec<Vec<AllocatedNum<Fr>>>, SynthesisError> {
        levels
            .enumerate()
            .map(|(row, (arity, value))| {
                (0..arity - 1)
                    .map(|i| {
                        alloc(
                            cs,
                            &format!("{name} sibling (tree_row={row}, sibling_index={i})"),
                            value,
                        )
                    })
                    .collect()
            })
            .collect()
    }

    /// One challenge, in storage-proofs-update's order: `rho`, the new replica's node, its
    /// old and new node in their trees, its apex leaf and its data leaf's path to it.
    fn challenge<CS: ConstraintSystem<Fr>>(
        &self,
        cs: &mut CS,
        c_index: usize,
        own_bits: Vec<AllocatedBit>,
        shared: &Shared<'_>,
    ) -> Result<(), SynthesisError> {
        let gadgets = self.gadgets;
        let c_bits: Vec<AllocatedBit> = own_bits
            .into_iter()
            .chain(shared.partition_bits.iter().cloned())
            .collect();
        let c_booleans = booleans(&c_bits);
        let c_high = high_bits(
            cs.namespace(|| format!("get_challenge_high_bits (c_index={c_index})")),
            gadgets,
            &c_booleans,
            shared.h_select,
            &self.sizes.hs,
        )?;
        let rho = gadgets.poseidon(
            cs.namespace(|| format!("rho (c_index={c_index})")),
            vec![shared.phi.clone(), c_high],
            randomness_constants(),
        )?;
        let leaf_r_old = alloc(cs, &format!("leaf_r_old (c_index={c_index})"), self.leaf_r)?;
        let leaf_d_new = alloc(cs, &format!("leaf_d_new (c_index={c_index})"), Fr::ZERO)?;
        let leaf_r_new = {
            let mut cs = cs.namespace(|| format!("leaf_r_new (c_index={c_index})"));
            let product = leaf_d_new.mul(cs.namespace(|| "label_d_new * rho"), &rho)?;
            let sum = AllocatedNum::alloc(cs.namespace(|| "label_r_new"), || {
                let old = leaf_r_old
                    .get_value()
                    .ok_or(SynthesisError::AssignmentMissing)?;
                let product = product
                    .get_value()
                    .ok_or(SynthesisError::AssignmentMissing)?;
                Ok(old + product)
            })?;
            cs.enforce(
                || "label_r_new == label_r_old + label_d_new * rho",
                |lc| lc + leaf_r_old.get_variable() + product.get_variable(),
                |lc| lc + CS::one(),
                |lc| lc + sum.get_variable(),
            );
            sum
        };
        for (name, leaf, root) in [
            ("path_r_old", &leaf_r_old, shared.root_r_old),
            ("path_r_new", &leaf_r_new, shared.root_r_new),
        ] {
            let path = Self::path(
                cs,
                &format!("{name} (c_index={c_index})"),
                self.tree_r.iter().copied(),
            )?;
            inclusion_by_bits(
                cs.namespace(|| format!("por {name} (c_index={c_index})")),
                gadgets,
                Tree::Poseidon,
                &c_booleans,
                leaf,
                &path,
                root,
            )?;
        }
        let below_apex = self.sizes.below_apex();
        let apex_leaf = select(
            cs.namespace(|| format!("select_apex_leaf (c_index={c_index})")),
            shared.apex_leaves,
            &c_booleans[below_apex..below_apex + self.sizes.apex_bits],
        )?;
        let path = Self::path(
            cs,
            &format!("path_to_apex_leaf (c_index={c_index})"),
            self.tree_d.iter().map(|&value| (2, value)),
        )?;
        inclusion_by_bits(
            cs.namespace(|| format!("por to_apex_leaf (c_index={c_index})")),
            gadgets,
            Tree::Data,
            &c_booleans[..below_apex],
            &leaf_d_new,
            &path,
            &apex_leaf,
        )
    }
}

impl Circuit<Fr> for SnapPartition {
    fn synthesize<CS: ConstraintSystem<Fr>>(self, cs: &mut CS) -> Result<(), SynthesisError> {
        let gadgets = self.gadgets;
        let sizes = self.sizes;
        let k_and_h = alloc(cs, "k_and_h_select", Fr::from(self.k_and_h_select))?;
        k_and_h.inputize(cs.namespace(|| "k_and_h_select (public input)"))?;
        let bits = (0..sizes.partition_bits + H_CHOICES)
            .map(|i| {
                AllocatedBit::alloc(
                    cs.namespace(|| format!("k_and_h_select_bit_{i}")),
                    Some((self.k_and_h_select >> i) & 1 == 1),
                )
            })
            .collect::<Result<Vec<_>, _>>()?;
        enforce_bits_of(cs, "k_and_h_select binary decomp", &bits, &k_and_h);
        let (partition_bits, h_select) = bits.split_at(sizes.partition_bits);
        let partition = gadgets.pack_bits(
            cs.namespace(|| "pack partition bits"),
            &booleans(partition_bits),
        )?;
        let mut input = |name: &str, value: Fr| -> Result<AllocatedNum<Fr>, SynthesisError> {
            let num = alloc(cs, name, value)?;
            num.inputize(cs.namespace(|| format!("{name}_input")))?;
            Ok(num)
        };
        let comm_r_old = input("comm_r_old", self.comm_r)?;
        let comm_d_new = input("comm_d_new", self.comm_d_new)?;
        let comm_r_new = input("comm_r_new", self.comm_r)?;
        let phi = gadgets.poseidon(
            cs.namespace(|| "phi"),
            vec![comm_d_new.clone(), comm_r_old.clone()],
            randomness_constants(),
        )?;
        let comm_c = alloc(cs, "comm_c", self.comm_c)?;
        let root_r_old = alloc(cs, "root_r_old", self.root_r)?;
        let root_r_new = alloc(cs, "root_r_new", self.root_r)?;
        let apex_leaves = self
            .apex_leaves
            .iter()
            .enumerate()
            .map(|(i, &value)| alloc(cs, &format!("apex_leaf_{i}"), value))
            .collect::<Result<Vec<_>, _>>()?;
        let partition_path = Self::path(
            cs,
            "partition_path",
            self.partition_path.iter().map(|&value| (2, value)),
        )?;
        for (name, root, comm_r) in [
            ("comm_r_old_calc", &root_r_old, &comm_r_old),
            ("comm_r_new_calc", &root_r_new, &comm_r_new),
        ] {
            let calc = poseidon_node(
                cs.namespace(|| name),
                gadgets,
                vec![comm_c.clone(), root.clone()],
            )?;
            equal(cs, &calc, comm_r);
        }
        apex(
            cs.namespace(|| "apex_gadget"),
            gadgets,
            apex_leaves.clone(),
            partition_bits,
            &partition_path,
            &comm_d_new,
        )?;
        let generated = challenge_bits(
            cs.namespace(|| "gen_challenge_bits"),
            gadgets,
            sizes,
            self.challenges,
            &comm_r_new,
            &partition,
        )?;
        // The challenges on every thread of the rayon pool where the system can branch, as
        // the fork's ninth edit spreads them.
        let shared = Shared {
            partition_bits,
            h_select,
            phi: &phi,
            root_r_old: &root_r_old,
            root_r_new: &root_r_new,
            apex_leaves: &apex_leaves,
        };
        let challenge = |cs: &mut CS::Root, c_index: usize, own_bits: Vec<AllocatedBit>| {
            self.challenge(cs, c_index, own_bits, &shared)
        };
        match spread(cs, generated, challenge)? {
            Spread::Done => Ok(()),
            Spread::Here(generated) => generated
                .into_iter()
                .enumerate()
                .try_for_each(|(i, own_bits)| challenge(cs.get_root(), i, own_bits)),
        }
    }
}
