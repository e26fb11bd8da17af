//! The synthesis thread: each member synthesized as its plan says (from a recording,
//! recorded, from a file's recording, or directly), once a permit allows it, and sent in
//! order.

use std::panic::{catch_unwind, AssertUnwindSafe};
use std::sync::{mpsc, Arc};

use bellpepper_core::Circuit;
use ff::PrimeField;

use super::batch::{Batch, Beginning, Trial, Verdict};
use super::{Made, Member, Produced};
use crate::assignment::SynthesisOptions;
use crate::error::{panic_message, Error};
use crate::groth16::store::{Start, Store};
use crate::precompiled::Recording;
use crate::shape::Shape;
use crate::synthesize::synthesize_with;
use crate::vectors::ProverVectors;

/// How the producer synthesizes the next member.
pub(super) enum Plan<Scalar: PrimeField> {
    Trusted(Arc<Recording<Scalar>>),
    Direct(Option<Shape>),
    /// The first member, recorded while synthesized directly.
    Record,
    /// A later member while `recording` awaits its verdict.
    Await(Arc<Recording<Scalar>>, Shape),
    /// Every member, from a recording opened from a cache file, until it is rejected.
    FromFile(Arc<Recording<Scalar>>),
}

impl<Scalar: PrimeField> Plan<Scalar> {
    /// The plan for a batch's first member, and how the batch begins, as the store's
    /// `start` says; `first` members may take storage a previous batch kept.
    pub(super) fn begin(
        store: &Store<Scalar>,
        start: Start<Scalar>,
        first: usize,
    ) -> (Self, Beginning<Scalar>) {
        let (plan, trial) = match start {
            Start::Trusted(key, recording) => (Plan::Trusted(recording), Trial::none(Some(key))),
            Start::Direct(shape) => (Plan::Direct(shape), Trial::none(None)),
            Start::Record(probation) => (
                Plan::Record,
                Trial {
                    probation: Some(probation),
                    verdict: Verdict::Pending,
                    recording: None,
                    key: None,
                },
            ),
            Start::Check(recording, probation) => (
                Plan::FromFile(Arc::clone(&recording)),
                Trial {
                    key: probation.key(),
                    probation: Some(probation),
                    verdict: Verdict::Pending,
                    recording: Some(recording),
                },
            ),
        };
        // Storage a previous batch of the structure kept, for the first members.
        let spare = match (&plan, trial.key) {
            (Plan::Trusted(_), Some(key)) => store.take_kept(&key, first),
            _ => Vec::new(),
        };
        (plan, Beginning { trial, spare })
    }

    /// The plan for the next member: a verdict awaited, a recording that failed a member
    /// left; `None` when the consumer stopped.
    fn next(self, batch: &Batch<'_, Scalar>) -> Option<Self> {
        let rejected = || batch.trial(|trial| trial.verdict) == Verdict::Rejected;
        Some(match self {
            Plan::Await(recording, shape) => match batch.verdict()? {
                Verdict::Trusted => Plan::Trusted(recording),
                _ => Plan::Direct(Some(shape)),
            },
            Plan::FromFile(recording) | Plan::Trusted(recording) if rejected() => {
                Plan::Direct(Some(recording.shape()))
            }
            plan => plan,
        })
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
    for (index, circuit) in circuits.into_iter().enumerate() {
        if !batch.acquire() {
            return;
        }
        plan = match plan.next(batch) {
            Some(plan) => plan,
            None => return,
        };
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
    let (recording, made) = match plan {
        Plan::Trusted(recording) => (Arc::clone(recording), Made::Trusted(Arc::clone(recording))),
        Plan::FromFile(recording) => (Arc::clone(recording), Made::FromFile(Arc::clone(recording))),
        Plan::Direct(shape) => {
            drop(spare);
            return synthesized(direct(circuit, *shape)?, Made::Direct);
        }
        Plan::Record => {
            drop(spare);
            return record_first(circuit, plan, batch);
        }
        Plan::Await(..) => unreachable!("the verdict is awaited before a member starts"),
    };
    match recording.synthesize_into(circuit, spare.unwrap_or_default()) {
        Ok(vectors) => synthesized(vectors, made),
        // The member is made again from its circuit, directly, and the rest of the batch
        // too: whether the recording or the circuit failed, the member's own synthesis says.
        Err(why) if batch.settings.remakes => {
            *plan = Plan::Direct(Some(recording.shape()));
            Ok(Member::Failed(made, why))
        }
        Err(
            e @ (Error::StructureMismatch { .. } | Error::Unsatisfied { .. } | Error::File { .. }),
        ) => {
            // A circuit of its parameters the recording does not fit, or a file changed
            // under it: the caller's circuit is wrong, or the recording is. Dropping it from
            // memory costs a recording if the caller was; keeping it would fail every later
            // batch if it was. A file stays: the next batch checks it again.
            if let Some(key) = batch.trial(|trial| trial.key) {
                batch.store.forget(&key);
            }
            *plan = Plan::Direct(Some(recording.shape()));
            Err(e)
        }
        Err(e) => Err(e),
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
    let Some(mut probation) = batch.trial(|trial| trial.probation.take()) else {
        *plan = Plan::Direct(Some(shape));
        return direct(vectors);
    };
    let Some(found) = (batch.key_for)(shape.inputs) else {
        log::warn!("synthpool: the parameters give no verifying key; not recording");
        probation.abandon();
        batch.trial(|trial| trial.verdict = Verdict::Unjudged);
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
            let recording = Arc::new(recording);
            batch.trial(|trial| {
                trial.probation = Some(probation);
                trial.key = Some(found);
                trial.recording = Some(Arc::clone(&recording));
            });
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
            batch.trial(|trial| trial.verdict = Verdict::Unjudged);
            *plan = Plan::Direct(Some(shape));
            direct(vectors)
        }
    }
}

/// Direct synthesis with the fastest options, pre-sized when the shape is known.
pub(super) fn direct<Scalar: PrimeField, C: Circuit<Scalar>>(
    circuit: C,
    shape: Option<Shape>,
) -> Result<ProverVectors<Scalar>, Error> {
    synthesize_with(circuit, &SynthesisOptions::default().with_shape(shape))
}
