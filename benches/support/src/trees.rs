//! The Merkle tree gadgets of the Filecoin circuits, as storage-proofs lays them out:
//! inclusion paths in tree_d (binary, SHA-256 nodes) and in the Poseidon trees (tree_c,
//! tree_r_last), with their selection of the node among its siblings and the root's
//! equality, and the selection of one of a row of nodes by index bits; the PoRep,
//! WindowPoSt and SnapDeals partitions prove with them.

use std::sync::OnceLock;

use bellpepper_core::boolean::{AllocatedBit, Boolean};
use bellpepper_core::num::AllocatedNum;
use bellpepper_core::{ConstraintSystem, SynthesisError};
use blstrs::Scalar as Fr;
use ff::{Field, PrimeField};
use generic_array::typenum::{U11, U2, U8};
use neptune::poseidon::PoseidonConstants;

use crate::circuits::GadgetSet;

/// An inclusion path: at each level, the node's position among its siblings and the
/// siblings in order.
#[derive(Clone, Debug)]
pub(crate) struct TreePath {
    pub(crate) levels: Vec<(usize, Vec<Fr>)>,
}

/// Filecoin's Poseidon constants for each arity a partition hashes with (Merkle-tree hash
/// type, standard strength), made once.
struct Constants {
    two: PoseidonConstants<Fr, U2>,
    eight: PoseidonConstants<Fr, U8>,
    eleven: PoseidonConstants<Fr, U11>,
}

fn constants() -> &'static Constants {
    static CONSTANTS: OnceLock<Constants> = OnceLock::new();
    CONSTANTS.get_or_init(|| Constants {
        two: PoseidonConstants::new(),
        eight: PoseidonConstants::new(),
        eleven: PoseidonConstants::new(),
    })
}

/// `condition ? a : b`, allocated, with `(b - a) · condition = b - result`.
fn pick<CS: ConstraintSystem<Fr>>(
    mut cs: CS,
    condition: &Boolean,
    a: &AllocatedNum<Fr>,
    b: &AllocatedNum<Fr>,
) -> Result<AllocatedNum<Fr>, SynthesisError> {
    let result = AllocatedNum::alloc(cs.namespace(|| "pick result"), || {
        let take_a = condition
            .get_value()
            .ok_or(SynthesisError::AssignmentMissing)?;
        let chosen = if take_a { a } else { b };
        chosen.get_value().ok_or(SynthesisError::AssignmentMissing)
    })?;
    cs.enforce(
        || "pick",
        |lc| lc + b.get_variable() - a.get_variable(),
        |_| condition.lc(CS::one(), Fr::ONE),
        |lc| lc + b.get_variable() - result.get_variable(),
    );
    Ok(result)
}

/// The node `cur` placed at the position `bits` name among `siblings`, as storage-proofs'
/// `insert` selects it (its selection network for 2 and 8 children).
fn insert<CS: ConstraintSystem<Fr>>(
    cs: &mut CS,
    cur: &AllocatedNum<Fr>,
    bits: &[Boolean],
    siblings: &[AllocatedNum<Fr>],
) -> Result<Vec<AllocatedNum<Fr>>, SynthesisError> {
    match bits {
        [b0] => Ok(vec![
            pick(cs.namespace(|| "binary insert 0"), b0, &siblings[0], cur)?,
            pick(cs.namespace(|| "binary insert 1"), b0, cur, &siblings[0])?,
        ]),
        [b0, b1, b2] => {
            let (Boolean::Is(x0), Boolean::Is(x1)) = (b0, b1) else {
                return Err(SynthesisError::Unsatisfiable);
            };
            let nor = Boolean::Is(AllocatedBit::nor(cs.namespace(|| "b0 nor b1"), x0, x1)?);
            let and = Boolean::Is(AllocatedBit::and(cs.namespace(|| "b0 and b1"), x0, x1)?);
            let a = cur;
            let [b, c, d, e, f, g, h] = [0, 1, 2, 3, 4, 5, 6].map(|i| &siblings[i]);
            let mut step = 0;
            let mut pick = |cond: &Boolean, x: &AllocatedNum<Fr>, y: &AllocatedNum<Fr>| {
                step += 1;
                pick(cs.namespace(|| format!("pick {step}")), cond, x, y)
            };
            // Position p holds `a` when the index is p, the sibling before it when the index
            // is below p, the one at it when above: picked bit by bit.
            let p0 = pick(&nor, a, b)?;
            let p0 = pick(b2, b, &p0)?;
            let p1 = pick(b0, a, b)?;
            let p1 = pick(b1, c, &p1)?;
            let p1 = pick(b2, c, &p1)?;
            let p2 = pick(b0, d, a)?;
            let p2 = pick(b1, &p2, c)?;
            let p2 = pick(b2, d, &p2)?;
            let p3 = pick(&and, a, d)?;
            let p3 = pick(b2, e, &p3)?;
            let p4 = pick(&nor, a, f)?;
            let p4 = pick(b2, &p4, e)?;
            let p5 = pick(b0, a, f)?;
            let p5 = pick(b1, g, &p5)?;
            let p5 = pick(b2, &p5, f)?;
            let p6 = pick(b0, h, a)?;
            let p6 = pick(b1, &p6, g)?;
            let p6 = pick(b2, &p6, g)?;
            let p7 = pick(&and, a, h)?;
            let p7 = pick(b2, &p7, h)?;
            Ok(vec![p0, p1, p2, p3, p4, p5, p6, p7])
        }
        _ => Err(SynthesisError::IncompatibleLengthVector(format!(
            "insertion among {} siblings",
            siblings.len()
        ))),
    }
}

/// Bits padded to whole bytes, each byte's bits reversed (storage-proofs'
/// `reverse_bit_numbering`, and filecoin-hashers' byte order for SHA-256 preimages).
pub(crate) fn reverse_bits_in_bytes(mut bits: Vec<Boolean>) -> Vec<Boolean> {
    while !bits.len().is_multiple_of(8) {
        bits.push(Boolean::constant(false));
    }
    bits.chunks(8)
        .flat_map(|byte| byte.iter().rev())
        .cloned()
        .collect()
}

/// A tree_d node: SHA-256 of its two children's bytes, truncated to 254 bits (filecoin's
/// `Sha256Function::hash_multi_leaf_circuit` for two leaves).
pub(crate) fn sha256_node<CS: ConstraintSystem<Fr>>(
    mut cs: CS,
    gadgets: GadgetSet,
    children: &[AllocatedNum<Fr>],
) -> Result<AllocatedNum<Fr>, SynthesisError> {
    let mut preimage = Vec::with_capacity(512);
    for (i, child) in children.iter().enumerate() {
        let bits = child.to_bits_le(cs.namespace(|| format!("{i}_num_into_bits")))?;
        preimage.extend(reverse_bits_in_bytes(bits));
    }
    let digest = gadgets.sha256(cs.namespace(|| "hash"), &preimage)?;
    let le_bits = reverse_bits_in_bytes(digest);
    gadgets.pack_bits(
        cs.namespace(|| "pack_le"),
        &le_bits[..Fr::CAPACITY as usize],
    )
}

/// A tree_c or tree_r_last node: Poseidon of its children.
pub(crate) fn poseidon_node<CS: ConstraintSystem<Fr>>(
    cs: CS,
    gadgets: GadgetSet,
    children: Vec<AllocatedNum<Fr>>,
) -> Result<AllocatedNum<Fr>, SynthesisError> {
    let constants = constants();
    match children.len() {
        2 => gadgets.poseidon(cs, children, &constants.two),
        8 => gadgets.poseidon(cs, children, &constants.eight),
        11 => gadgets.poseidon(cs, children, &constants.eleven),
        n => Err(SynthesisError::IncompatibleLengthVector(format!(
            "no Poseidon of {n} elements in a partition"
        ))),
    }
}

/// Which tree a path is in.
#[derive(Clone, Copy)]
pub(crate) enum Tree {
    /// tree_d: binary, SHA-256.
    Data,
    /// tree_c or tree_r_last: Poseidon.
    Poseidon,
}

/// The inclusion of `leaf` at `path` in the tree whose root is `root` (storage-proofs'
/// `PoRCircuit` with a private root): each level's index bits, siblings, the node inserted
/// among them and hashed; the path's bits packed into one public input; the computed root
/// equal to `root`.
pub(crate) fn inclusion<CS: ConstraintSystem<Fr>>(
    mut cs: CS,
    gadgets: GadgetSet,
    tree: Tree,
    leaf: &AllocatedNum<Fr>,
    path: &TreePath,
    root: &AllocatedNum<Fr>,
) -> Result<(), SynthesisError> {
    let mut cur = leaf.clone();
    let mut path_bits = Vec::new();
    for (level, (position, siblings)) in path.levels.iter().enumerate() {
        let mut cs = cs.namespace(|| format!("merkle tree hash {level}"));
        let width = (siblings.len() + 1).trailing_zeros() as usize;
        let bits = (0..width)
            .map(|i| {
                let bit = (position >> i) & 1 == 1;
                AllocatedBit::alloc(cs.namespace(|| format!("index bit {i}")), Some(bit))
                    .map(Boolean::from)
            })
            .collect::<Result<Vec<_>, _>>()?;
        path_bits.extend_from_slice(&bits);
        let siblings = siblings
            .iter()
            .enumerate()
            .map(|(i, value)| {
                AllocatedNum::alloc(cs.namespace(|| format!("path element {i}")), || Ok(*value))
            })
            .collect::<Result<Vec<_>, _>>()?;
        let children = insert(&mut cs, &cur, &bits, &siblings)?;
        let cs = cs.namespace(|| "computation of commitment hash");
        cur = match tree {
            Tree::Data => sha256_node(cs, gadgets, &children)?,
            Tree::Poseidon => poseidon_node(cs, gadgets, children)?,
        };
    }
    gadgets.pack_into_inputs(cs.namespace(|| "path"), &path_bits)?;
    equal(&mut cs, &cur, root);
    Ok(())
}

/// The inclusion of `leaf` along allocated `siblings` (a row per level, leaves first) in
/// the tree whose root is `root`, each level's position among its siblings read from
/// `bits`, least significant first (storage-proofs' `por_no_challenge_input`: the
/// challenge's own bits, nothing allocated for the index and no public input). Errors when
/// the bits do not give every level its position exactly.
pub(crate) fn inclusion_by_bits<CS: ConstraintSystem<Fr>>(
    mut cs: CS,
    gadgets: GadgetSet,
    tree: Tree,
    bits: &[Boolean],
    leaf: &AllocatedNum<Fr>,
    siblings: &[Vec<AllocatedNum<Fr>>],
    root: &AllocatedNum<Fr>,
) -> Result<(), SynthesisError> {
    let mut cur = leaf.clone();
    let mut bits = bits.iter();
    for (height, siblings) in siblings.iter().enumerate() {
        let width = (siblings.len() + 1).trailing_zeros() as usize;
        let index: Vec<Boolean> = bits.by_ref().take(width).cloned().collect();
        if index.len() != width {
            return Err(SynthesisError::IncompatibleLengthVector(format!(
                "too few index bits for level {height} of a path"
            )));
        }
        let children = insert(
            &mut cs.namespace(|| format!("merkle proof insert (height={height})")),
            &cur,
            &index,
            siblings,
        )?;
        let cs = cs.namespace(|| format!("merkle proof hash (height={height})"));
        cur = match tree {
            Tree::Data => sha256_node(cs, gadgets, &children)?,
            Tree::Poseidon => poseidon_node(cs, gadgets, children)?,
        };
    }
    if bits.next().is_some() {
        return Err(SynthesisError::IncompatibleLengthVector(
            "more index bits than a path has levels".into(),
        ));
    }
    equal(&mut cs, &cur, root);
    Ok(())
}

/// The node of `row` at the index `bits` give, least significant first, picked level by
/// level from the most significant bit (storage-proofs' `select`). `row` holds two to the
/// power of the bits' count nodes.
pub(crate) fn select<CS: ConstraintSystem<Fr>>(
    mut cs: CS,
    row: &[AllocatedNum<Fr>],
    bits: &[Boolean],
) -> Result<AllocatedNum<Fr>, SynthesisError> {
    if row.len() != 1 << bits.len() {
        return Err(SynthesisError::IncompatibleLengthVector(format!(
            "{} nodes selected by {} bits",
            row.len(),
            bits.len()
        )));
    }
    let mut row = row.to_vec();
    for (level, bit) in bits.iter().rev().enumerate() {
        let half = row.len() / 2;
        row = (0..half)
            .map(|j| {
                pick(
                    cs.namespace(|| format!("pick {level}, {j}")),
                    bit,
                    &row[half + j],
                    &row[j],
                )
            })
            .collect::<Result<_, _>>()?;
    }
    Ok(row.remove(0))
}

/// `a · 1 = b`.
pub(crate) fn equal<CS: ConstraintSystem<Fr>>(
    cs: &mut CS,
    a: &AllocatedNum<Fr>,
    b: &AllocatedNum<Fr>,
) {
    cs.enforce(
        || "enforce root is correct",
        |lc| lc + a.get_variable(),
        |lc| lc + CS::one(),
        |lc| lc + b.get_variable(),
    );
}
