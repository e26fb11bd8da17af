//! The synthesis thread: each member synthesized as its plan says (from a recording,
//! recorded, from a file's recording, as the replacement of a rejected one, or directly),
//! once a permit allows it, and sent in order.

use std::panic::{catch_unwind, AssertUnwindSafe};
use std::sync::{mpsc, Arc};

use bellpepper_core::Circuit;
use ff::PrimeField;

use super::batch::{lock, Batch, Beginning, NoMoreMembers, Replacement, Verdict};
use super::{Made, Member, Produced};
use crate::assignment::SynthesisOptions;
use crate::error::panic_message;
use crate::groth16::store::{Start, Store};
use crate::precompiled::{Recording, Witness};
use crate::shape::Shape;
use crate::synthesize::synthesize_with;
use crate::vectors::ProverVectors;
use crate::Error;

/// How the producer synthesizes the next member.
pub(super) enum Plan<Scalar: PrimeField> {
    Trusted(Arc<Recording<Scalar>>),
    Direct(Option<Shape>),
    /// The first member, recorded while synthesized directly.
    Record,
    /// A later member while `recording` awaits its verdict.
    Await(Arc<Recording<Scalar>>, Shape),
    /// Every member, from a recording opened from a cache file.
    FromFile(Arc<Recording<Scalar>>),
    /// The next member, recorded while synthesized directly, to replace a rejected file's
    /// recording.
    Replace,
    /// The members after the replacement's.
    FromReplacement(Arc<Recording<Scalar>>),
}

impl<Scalar: PrimeField> Plan<Scalar> {
    /// The plan for a batch's first member, and how the batch begins, as the store's
    /// `start` says; `first` members may take storage a previous batch kept.
    pub(super) fn begin(
        store: &Store<Scalar>,
        start: Start<Scalar>,
        first: usize,
    ) -> (Self, Beginning<Scalar>) {
        let (plan, probation, verdict, key, awaiting) = match start {
            Start::Trusted(key, recording) => (
                Plan::Trusted(recording),
                None,
                Verdict::Unjudged,
                Some(key),
                None,
            ),
            Start::Direct(shape) => (Plan::Direct(shape), None, Verdict::Unjudged, None, None),
            Start::Record(probation) => {
                (Plan::Record, Some(probation), Verdict::Pending, None, None)
            }
            Start::Check(recording, probation) => {
                let key = probation.key();
                let plan = Plan::FromFile(Arc::clone(&recording));
                (
                    plan,
                    Some(probation),
                    Verdict::Pending,
                    key,
                    Some(recording),
                )
            }
        };
        // Storage a previous batch of the structure kept, for the first members.
        let spare = match (&plan, key) {
            (Plan::Trusted(_), Some(key)) => store.take_kept(&key, first),
            _ => Vec::new(),
        };
        let beginning = Beginning {
            probation,
            verdict,
            key,
            awaiting,
            spare,
        };
        (plan, beginning)
    }
}

/// The synthesis thread: each member once a permit allows it, sent in order, until one
/// fails or the proving side stops.
pub(super) fn produce<Scalar, C>(
    circuits: Vec<C>,
    mut plan: Plan<Scalar>,
    batch: &Batch<'_, Scalar>,
    sender: mpsc::Sender<Produced<Scalar>>,
) where
    Scalar: PrimeField,
    C: Circuit<Scalar> + Send,
{
    let _no_more = NoMoreMembers(batch);
    for (index, circuit) in circuits.into_iter().enumerate() {
        if !batch.acquire() {
            return;
        }
        if let Plan::Await(recording, shape) = &plan {
            plan = match batch.verdict() {
                None => return,
                Some(Verdict::Trusted) => Plan::Trusted(Arc::clone(recording)),
                Some(_) => Plan::Direct(Some(*shape)),
            };
        }
        if matches!(plan, Plan::FromFile(_)) && batch.replacement_wanted() {
            plan = Plan::Replace;
        }
        let outcome = catch_unwind(AssertUnwindSafe(|| member(circuit, &mut plan, batch)));
        let produced = match outcome {
            Ok(produced) => produced,
            Err(panic) => Err(Error::Panicked(panic_message(panic.as_ref()))),
        };
        let failed = produced.is_err();
        if sender.send(produced.map_err(|e| e.member(index))).is_err() || failed {
            return;
        }
    }
}

/// One member's synthesis as `plan` says, updating the plan for the next.
fn member<Scalar, C>(
    circuit: C,
    plan: &mut Plan<Scalar>,
    batch: &Batch<'_, Scalar>,
) -> Produced<Scalar>
where
    Scalar: PrimeField,
    C: Circuit<Scalar>,
{
    // Storage an earlier proof handed back. Members evaluated from a recording write into
    // it; the others make fresh vectors, so they drop it first: either way each member
    // takes one, and the batch's storage, alive and spare, stays within k members.
    let spare = batch.spare();
    let synthesized = |vectors, made| Ok(Member::Synthesized(vectors, made));
    match plan {
        Plan::Trusted(recording) => {
            match recording.synthesize_into(circuit, spare.unwrap_or_default()) {
                Ok(vectors) => synthesized(vectors, Made::Trusted),
                Err(e @ (Error::StructureMismatch { .. } | Error::Unsatisfied { .. })) => {
                    // A circuit of its parameters the recording does not fit: the caller's
                    // circuit is wrong, or the recording is. Dropping it from memory costs a
                    // recording if the caller was; keeping it would fail every later batch
                    // if it was. Its file stays: the next batch checks it again.
                    if let Some(key) = *lock(&batch.key) {
                        batch.store.forget(&key);
                    }
                    *plan = Plan::Direct(Some(recording.shape()));
                    Err(e)
                }
                Err(e @ Error::File { .. }) => {
                    // Its file changed under the mapping, or breaks the format: not used
                    // again; the next batch opens the cache directory afresh.
                    if let Some(key) = *lock(&batch.key) {
                        batch.store.forget(&key);
                    }
                    *plan = Plan::Direct(Some(recording.shape()));
                    Err(e)
                }
                Err(e) => Err(e),
            }
        }
        Plan::Direct(shape) => {
            drop(spare);
            synthesized(direct(circuit, *shape)?, Made::Direct)
        }
        Plan::FromFile(recording) => {
            let recording = Arc::clone(recording);
            let produced = from_file(&recording, circuit, spare.unwrap_or_default());
            if let Ok(Member::Redo(..)) = &produced {
                batch.want_replacement();
            }
            produced
        }
        Plan::FromReplacement(recording) => {
            let vectors = recording.synthesize_into(circuit, spare.unwrap_or_default())?;
            synthesized(vectors, Made::Replacement)
        }
        Plan::Record => {
            drop(spare);
            record_first(circuit, plan, batch)
        }
        Plan::Replace => {
            drop(spare);
            replace(circuit, plan, batch)
        }
        Plan::Await(..) => unreachable!("the verdict is awaited before a member starts"),
    }
}

/// A member from a file's recording: its vectors, or, when the evaluation fails (a file
/// damaged, changed or of another circuit, or a circuit that is not the file's), its
/// witness to redo with a replacement. A circuit whose own synthesis fails is an error.
fn from_file<Scalar, C>(
    recording: &Arc<Recording<Scalar>>,
    circuit: C,
    mut target: ProverVectors<Scalar>,
) -> Produced<Scalar>
where
    Scalar: PrimeField,
    C: Circuit<Scalar>,
{
    let buffers = Witness::unclassified(
        std::mem::take(&mut target.input_assignment),
        std::mem::take(&mut target.aux_assignment),
        0,
    );
    let witness = recording.witness_into(circuit, buffers)?;
    let constraints = witness.constraints;
    match recording.evaluate_into(witness, &mut target) {
        Ok(_) => Ok(Member::Synthesized(
            target,
            Made::FromFile(Arc::clone(recording)),
        )),
        Err(e) => Ok(Member::Redo(target, constraints, e)),
    }
}

/// The first member of a structure not seen before: synthesized directly while recorded,
/// the recording put on probation under the parameters' key, or the structure marked
/// unrecordable. Later members follow the plan this leaves.
fn record_first<Scalar, C>(
    circuit: C,
    plan: &mut Plan<Scalar>,
    batch: &Batch<'_, Scalar>,
) -> Produced<Scalar>
where
    Scalar: PrimeField,
    C: Circuit<Scalar>,
{
    let (recording, vectors) = Recording::record_and_synthesize(circuit)?;
    let shape = vectors.shape();
    let direct = |vectors| Ok(Member::Synthesized(vectors, Made::Direct));
    let mut held = lock(&batch.probation);
    let Some(mut probation) = held.take() else {
        *plan = Plan::Direct(Some(shape));
        return direct(vectors);
    };
    let Some(found) = (batch.key_for)(shape.inputs) else {
        log::warn!("synthpool: the parameters give no verifying key; not recording");
        probation.abandon();
        batch.decide(Verdict::Unjudged);
        *plan = Plan::Direct(Some(shape));
        return direct(vectors);
    };
    let checked = recording.and_then(|recording| {
        recording.reproduces(&vectors)?;
        Ok(recording)
    });
    match checked {
        Ok(recording) => {
            log::info!(
                "synthpool: recorded {} constraints ({} nonzeros); it serves other \
                 batches once a proof made with it verifies",
                shape.constraints,
                recording.nonzeros()
            );
            probation.register(found, shape.inputs);
            *held = Some(probation);
            *lock(&batch.key) = Some(found);
            let recording = Arc::new(recording);
            *lock(&batch.awaiting) = Some(Arc::clone(&recording));
            *plan = Plan::Await(recording, shape);
            Ok(Member::Synthesized(vectors, Made::Recording))
        }
        Err(why) => {
            crate::warn_once::warn_once(format!("unrecordable {found:?}"), || {
                format!(
                    "synthpool: this circuit cannot be recorded ({}); synthesizing it \
                     directly",
                    why.chain()
                )
            });
            probation.unrecordable(found, shape.inputs, shape);
            batch.decide(Verdict::Unjudged);
            *plan = Plan::Direct(Some(shape));
            direct(vectors)
        }
    }
}

/// The member after a file's recording was rejected: synthesized directly while recorded;
/// the recording, once it reproduces the member, replaces the file's for this batch (the
/// members to redo and the rest).
fn replace<Scalar, C>(
    circuit: C,
    plan: &mut Plan<Scalar>,
    batch: &Batch<'_, Scalar>,
) -> Produced<Scalar>
where
    Scalar: PrimeField,
    C: Circuit<Scalar>,
{
    // A failure of the circuit itself leaves the replacement wanted, which the producer's
    // end turns into none.
    let (recording, vectors) = Recording::record_and_synthesize(circuit)?;
    let shape = vectors.shape();
    let checked = recording.and_then(|recording| {
        recording.reproduces(&vectors)?;
        Ok(recording)
    });
    match checked {
        Ok(recording) => {
            let recording = Arc::new(recording);
            batch.set_replacement(Replacement::Ready(Arc::clone(&recording)));
            *plan = Plan::FromReplacement(Arc::clone(&recording));
            *lock(&batch.replacing) = Some(recording);
            return Ok(Member::Synthesized(vectors, Made::Replacing));
        }
        Err(why) => {
            log::warn!(
                "synthpool: could not record a replacement of a rejected recording ({})",
                why.chain()
            );
            batch.set_replacement(Replacement::Impossible);
            *plan = Plan::Direct(Some(shape));
        }
    }
    Ok(Member::Synthesized(vectors, Made::Direct))
}

/// Direct synthesis with the fastest options, pre-sized when the shape is known.
fn direct<Scalar: PrimeField, C: Circuit<Scalar>>(
    circuit: C,
    shape: Option<Shape>,
) -> Result<ProverVectors<Scalar>, Error> {
    synthesize_with(circuit, &SynthesisOptions::default().with_shape(shape))
}
