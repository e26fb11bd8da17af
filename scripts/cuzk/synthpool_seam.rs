//! synthpool's synthesis inside cuzk: laid into `cuzk-core/src/` by synthpool's
//! `scripts/patch-cuzk.sh`, which makes `synthesize_auto` call [`synthesize`] first and fall
//! back to cuzk's own synthesis for a batch this returns an error for.
//!
//! The first batch of a circuit structure (a circuit type under one cuzk circuit id) is
//! synthesized directly by synthpool while it records the structure, and the recording
//! serves later batches only once it has reproduced that synthesis exactly (a, b, c and the
//! densities). From then on each proof is its witness and a sparse evaluation of the
//! recording, with a, b and c written in place into cuzk's pinned buffers where it passes a
//! pool. Evaluation checks every recorded row against the witness, so a circuit that is not
//! the recorded one (other counts, or a witness a row rejects) is an error, never vectors.
//!
//! Recordings live in this process only: cuzk returns SnapDeals and WinningPoSt proofs
//! unverified, so a recording file, which earns trust in synthpool only once a proof made
//! with it verifies, is not read here.

use std::any::TypeId;
use std::collections::HashMap;
use std::sync::{Arc, Mutex, MutexGuard, OnceLock};
use std::time::Instant;

use bellperson::groth16::{PinnedReturnFn, ProvingAssignment};
use bellperson::Circuit;
use blstrs::Scalar as Fr;
use rayon::prelude::*;
use synthpool::precompiled::Recording;
use synthpool::{Error, ProverVectors};
use tracing::{info, warn};

use crate::pinned_pool::{PinnedAbcBuffers, PinnedBuffer, PinnedPool};
use crate::srs_manager::CircuitId;

/// What `synthesize_auto` returns: when synthesis started, one prover per circuit, and their
/// input and aux assignments.
pub type Synthesized = (
    Instant,
    Vec<ProvingAssignment<Fr>>,
    Vec<Arc<Vec<Fr>>>,
    Vec<Arc<Vec<Fr>>>,
);

/// A structure as cuzk names it: the circuit's type and the circuit id it is proven under.
/// Two structures under one key (cuzk's tests prove every PoRep size as `Porep32G`) differ
/// in their counts, which evaluation checks: the later one is recorded in its place.
type Key = (TypeId, CircuitId);

/// What this process knows of each structure: its checked recording, or why it has none
/// (then cuzk's synthesis serves it, and the reason was logged once).
enum Known {
    Recorded(Arc<Recording<Fr>>),
    Refused,
}

/// The structures this process knows. A thread that panicked while holding them left the
/// map whole (every change is one insert or one removal), so it is used on.
fn known() -> MutexGuard<'static, HashMap<Key, Known>> {
    static KNOWN: OnceLock<Mutex<HashMap<Key, Known>>> = OnceLock::new();
    let known = KNOWN.get_or_init(Default::default);
    known
        .lock()
        .unwrap_or_else(|poisoned| poisoned.into_inner())
}

fn lookup(key: &Key) -> Option<Result<Arc<Recording<Fr>>, ()>> {
    known().get(key).map(|entry| match entry {
        Known::Recorded(recording) => Ok(Arc::clone(recording)),
        Known::Refused => Err(()),
    })
}

/// Why this batch goes to cuzk's own synthesis.
#[derive(Debug)]
pub enum Declined {
    /// synthpool failed on it; cuzk's synthesis is tried on every circuit of the batch.
    Failed(Error),
    /// synthpool cannot record this structure (said once, when it was found).
    Refused,
}

impl std::fmt::Display for Declined {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Declined::Failed(error) => {
                write!(f, "{error}")?;
                let mut source = std::error::Error::source(error);
                while let Some(cause) = source {
                    write!(f, ": {cause}")?;
                    source = cause.source();
                }
                Ok(())
            }
            Declined::Refused => f.write_str("its structure cannot be recorded"),
        }
    }
}

/// Synthesizes `circuits` (clones of them: the caller keeps its own for a fallback) through
/// synthpool, a, b and c into `pinned_pool`'s buffers where one is given and has room.
pub fn synthesize<C>(
    circuits: &[C],
    circuit_id: &CircuitId,
    pinned_pool: Option<&Arc<PinnedPool>>,
) -> Result<Synthesized, Declined>
where
    C: Circuit<Fr> + Clone + Send + Sync + 'static,
{
    let start = Instant::now();
    let key = (TypeId::of::<C>(), circuit_id.clone());
    let mut made = Vec::with_capacity(circuits.len());
    let mut rest = circuits;
    let recording = match lookup(&key) {
        Some(Ok(recording)) => recording,
        Some(Err(())) => return Err(Declined::Refused),
        None => {
            let Some((first, others)) = circuits.split_first() else {
                return Ok((start, Vec::new(), Vec::new(), Vec::new()));
            };
            let (vectors, recording) =
                Recording::synthesize_and_record(first.clone()).map_err(Declined::Failed)?;
            made.push(from_vectors(vectors));
            rest = others;
            match recording {
                Ok(recording) => {
                    let recording = Arc::new(recording);
                    info!(
                        circuit_id = %circuit_id,
                        constraints = recording.shape().constraints,
                        nonzeros = recording.nonzeros(),
                        "synthpool: recorded this structure beside its synthesis; later proofs evaluate the recording"
                    );
                    known().insert(key.clone(), Known::Recorded(Arc::clone(&recording)));
                    recording
                }
                Err(why) => {
                    warn!(circuit_id = %circuit_id, "synthpool: not recording this structure ({why}); cuzk's synthesis serves it");
                    known().insert(key, Known::Refused);
                    return Err(Declined::Refused);
                }
            }
        }
    };
    let witness_started = Instant::now();
    let evaluated: Result<Vec<_>, Error> = rest
        .par_iter()
        .map(|circuit| evaluate(&recording, circuit.clone(), pinned_pool))
        .collect();
    let evaluated = match evaluated {
        Ok(evaluated) => evaluated,
        Err(error @ Error::StructureMismatch { .. }) => {
            // Another structure under this key: record it on its next batch.
            let mut known = known();
            if matches!(known.get(&key), Some(Known::Recorded(held)) if Arc::ptr_eq(held, &recording))
            {
                known.remove(&key);
            }
            return Err(Declined::Failed(error));
        }
        Err(error) => return Err(Declined::Failed(error)),
    };
    made.extend(evaluated);
    info!(
        circuit_id = %circuit_id,
        circuits = circuits.len(),
        from_recording = rest.len(),
        total_ms = start.elapsed().as_millis(),
        evaluated_ms = witness_started.elapsed().as_millis(),
        "synthpool synthesis complete"
    );
    let mut provers = Vec::with_capacity(made.len());
    let mut inputs = Vec::with_capacity(made.len());
    let mut auxes = Vec::with_capacity(made.len());
    for (prover, input, aux) in made {
        provers.push(prover);
        inputs.push(input);
        auxes.push(aux);
    }
    Ok((start, provers, inputs, auxes))
}

type Made = (ProvingAssignment<Fr>, Arc<Vec<Fr>>, Arc<Vec<Fr>>);

fn from_vectors(vectors: ProverVectors<Fr>) -> Made {
    let prover = ProvingAssignment::from_pce(
        vectors.a,
        vectors.b,
        vectors.c,
        vectors.a_aux_density,
        vectors.b_input_density,
        vectors.b_aux_density,
    );
    (
        prover,
        Arc::new(vectors.input_assignment),
        Arc::new(vectors.aux_assignment),
    )
}

/// One circuit from the recording: a, b and c written into pinned buffers when the pool
/// has them, else into vectors of their own.
fn evaluate<C: Circuit<Fr>>(
    recording: &Recording<Fr>,
    circuit: C,
    pinned_pool: Option<&Arc<PinnedPool>>,
) -> Result<Made, Error> {
    let witness = recording.witness(circuit)?;
    let Some(mut prover) = pinned_pool.and_then(|pool| pinned_prover(recording, pool)) else {
        return recording.evaluate(witness).map(from_vectors);
    };
    let rows = recording.shape().constraints;
    let evaluated = recording.evaluate_to(
        witness,
        [
            &mut prover.a.spare_capacity_mut()[..rows],
            &mut prover.b.spare_capacity_mut()[..rows],
            &mut prover.c.spare_capacity_mut()[..rows],
        ],
    )?;
    // SAFETY: `pinned_prover` gave a, b and c a capacity of exactly `rows` elements, and
    // evaluate_to returned Ok, so it wrote every one of those slots.
    unsafe {
        prover.a.set_len(rows);
        prover.b.set_len(rows);
        prover.c.set_len(rows);
    }
    prover.a_aux_density = evaluated.a_aux_density;
    prover.b_input_density = evaluated.b_input_density;
    prover.b_aux_density = evaluated.b_aux_density;
    Ok((
        prover,
        Arc::new(evaluated.input_assignment),
        Arc::new(evaluated.aux_assignment),
    ))
}

/// A prover whose a, b and c are empty over pinned buffers of exactly the recording's rows,
/// returned to `pool` when the prover releases them; `None` when the pool has no room (as
/// cuzk's own synthesis then does, the vectors go to the heap).
fn pinned_prover(
    recording: &Recording<Fr>,
    pool: &Arc<PinnedPool>,
) -> Option<ProvingAssignment<Fr>> {
    let shape = recording.shape();
    let buffers = PinnedAbcBuffers::checkout(pool, shape.constraints, std::mem::size_of::<Fr>())?;
    let sizes = [buffers.a.size(), buffers.b.size(), buffers.c.size()];
    let [a, b, c] = [&buffers.a, &buffers.b, &buffers.c].map(|buffer| buffer.as_ptr());
    // The prover owns the memory from here; the pool's buffers must not free it.
    std::mem::forget(buffers);
    let pool = Arc::clone(pool);
    // Each buffer goes back with its own size: the pool may hand out larger ones.
    let give_back: PinnedReturnFn = Box::new(move |a, b, c, _| {
        for (pointer, size) in [a, b, c].into_iter().zip(sizes) {
            pool.checkin(PinnedBuffer::from_raw(pointer, size));
        }
    });
    // SAFETY: a, b and c are three distinct pinned buffers of at least `constraints` scalars
    // each (checked out for that many, suitably aligned by cudaHostAlloc), owned by nothing
    // else from here until the prover's release hands them back through `give_back`.
    let prover = unsafe {
        ProvingAssignment::new_with_pinned(
            shape.constraints,
            shape.aux,
            shape.inputs,
            a.cast::<Fr>(),
            b.cast::<Fr>(),
            c.cast::<Fr>(),
            sizes[0],
            give_back,
        )
    };
    Some(prover)
}
