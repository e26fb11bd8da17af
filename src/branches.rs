//! One partition on every core: independent parts of a circuit (a PoRep partition's
//! challenges) synthesized at once on the rayon pool's threads, the first in the constraint
//! system itself and each other in a branch of it, the branches then appended in order, so
//! the result is the one-thread result bit for bit.
//!
//! A branch ([`ConstraintSystem::branch`]) continues from its system as it stood when taken:
//! it reads the variables allocated before (the partition's commitments, replica_id's bits)
//! under their indices, and numbers its own after them. [`ConstraintSystem::extend`] then
//! appends what it added: a prover's assignment appends rows, values and densities (and marks
//! the densities of the earlier variables the branch used); a recorder renumbers the branch's
//! own variables to where they land. Every part is synthesized exactly as it would be in the
//! system itself, in the same order within the part, and the parts land in their order: the
//! same constraints in the same order, the same variables, for any number of threads.
//!
//! What a branch costs: a copy of the values so far (few, when taken after a partition's
//! shared variables), fresh memory for what it adds, and one copy of that into the system.
//! Against direct synthesis and recording (hundreds of nanoseconds per constraint) that is
//! small; against a native witness (a few) it is not. So a recording notes where each
//! appended branch's aux variables landed, and the witness generated from it hands each
//! part's branch that range of the system's own vector to write in place, with nothing to
//! copy (`precompiled/spread_witness.rs`; docs/performance.md has the measurements).

use std::sync::atomic::{AtomicBool, Ordering};

use bellpepper_core::{ConstraintSystem, SynthesisError};
use ff::PrimeField;
use rayon::prelude::*;

/// Whether a branch's copies into its system run at once ([`crate::tuning::set_parallel_appends`]).
static SERIAL_APPENDS: AtomicBool = AtomicBool::new(false);

/// Whether [`spread`] hands every part back ([`crate::tuning::set_branches`]).
static NO_BRANCHES: AtomicBool = AtomicBool::new(false);

pub(crate) fn set_branches(on: bool) {
    NO_BRANCHES.store(!on, Ordering::Relaxed);
}

pub(crate) fn set_parallel_appends(on: bool) {
    SERIAL_APPENDS.store(!on, Ordering::Relaxed);
}

/// Whether appending a branch copies its vectors at once, on the pool's threads.
pub(crate) fn parallel_appends() -> bool {
    !SERIAL_APPENDS.load(Ordering::Relaxed)
}

/// Where a branch was taken: how many inputs (the constant one included) and aux variables
/// its system had. The branch holds those under the same indices; what it allocates after
/// them is its own.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct BranchPoint {
    pub(crate) inputs: usize,
    pub(crate) aux: usize,
}

impl BranchPoint {
    /// Where a sub-circuit synthesized from `new()` continues from: its input 0 stands for
    /// the constant one, the system's; everything else is its own.
    pub(crate) const FROM_NEW: BranchPoint = BranchPoint { inputs: 1, aux: 0 };

    /// Whether a system with `inputs` inputs and `aux` aux variables can be where this branch
    /// was taken, or what it grew into (a system only ever grows).
    pub(crate) fn within(self, inputs: usize, aux: usize) -> bool {
        self.inputs <= inputs && self.aux <= aux
    }
}

/// What [`spread`] did with the parts.
#[derive(Debug)]
#[must_use = "parts handed back must still be synthesized"]
pub enum Spread<P> {
    /// Every part was synthesized, in a branch appended in order or in the system itself.
    Done,
    /// The parts, untouched, for the caller's own way: where branches are turned off
    /// ([`crate::tuning::set_branches`]), where the system cannot take a branch, and, with
    /// one part or one thread, where it cannot take the parts in place either.
    Here(Vec<P>),
}

/// Synthesizes `parts` into `cs` as `synthesize(cs, i, part)` for each in order would, on
/// every thread of the current rayon pool: the first part in `cs` itself (in the storage it
/// already has), each of the others in a branch of `cs` taken before any part starts, all at
/// once, then the branches appended in order. With one part or one thread, a system that
/// takes parts in place ([`ConstraintSystem::parts_in_place`]) runs them all itself, one
/// after another, so a caller whose own way is a system from `new()` per group of parts
/// (storage-proofs-post's) copies nothing there either.
///
/// `synthesize` may read any variable allocated in `cs` before this call, and nothing a part
/// allocates may be used by another part or after this call (the parts are independent, as a
/// PoRep partition's challenges are). A part's error is returned (the first in order), as the
/// loop would have returned it, with `cs` as the loop leaves it: the parts before it appended,
/// and what the failing part added before it failed. So what a branch's system noted about
/// the failure (memory it could not have) reaches `cs`, which names it as it would have named
/// its own.
///
/// Returns [`Spread::Here`] with the parts untouched where spreading cannot help, so the
/// caller runs its own loop and a system that cannot branch (a test system keeping names)
/// sees the circuit exactly as before.
pub fn spread<Scalar, CS, P, F>(
    cs: &mut CS,
    parts: Vec<P>,
    synthesize: F,
) -> Result<Spread<P>, SynthesisError>
where
    Scalar: PrimeField,
    CS: ConstraintSystem<Scalar>,
    P: Send,
    F: Fn(&mut CS::Root, usize, P) -> Result<(), SynthesisError> + Sync,
{
    if NO_BRANCHES.load(Ordering::Relaxed) {
        return Ok(Spread::Here(parts));
    }
    if parts.len() < 2 || rayon::current_num_threads() < 2 {
        if !cs.parts_in_place() {
            return Ok(Spread::Here(parts));
        }
        let root = cs.get_root();
        for (i, part) in parts.into_iter().enumerate() {
            synthesize(root, i, part)?;
        }
        return Ok(Spread::Done);
    }
    let mut branches = Vec::with_capacity(parts.len() - 1);
    for _ in 1..parts.len() {
        match cs.branch() {
            Some(branch) => branches.push(branch),
            None => return Ok(Spread::Here(parts)),
        }
    }
    let mut parts = parts.into_iter();
    let first = parts.next().expect("two parts or more");
    let root = cs.get_root();
    let (first, others) = rayon::join(
        || synthesize(root, 0, first),
        || {
            branches
                .into_par_iter()
                .zip(parts.collect::<Vec<_>>())
                .enumerate()
                .map(|(i, (mut branch, part))| {
                    let outcome = synthesize(&mut branch, i + 1, part);
                    (branch, outcome)
                })
                .collect::<Vec<(CS::Root, Result<(), SynthesisError>)>>()
        },
    );
    first?;
    for (branch, outcome) in others {
        root.extend(&branch);
        outcome?;
    }
    Ok(Spread::Done)
}
