//! A batch proven in bounded memory: one thread synthesizes the members in order while the
//! caller's thread proves them in order, with at most `k` members holding synthesized
//! vectors at any moment (a member holds them from the start of its synthesis to the end of
//! its proof). The parameters' queries are read once, for the first member.
//!
//! How each member is synthesized follows the structure's state in the store: evaluated
//! from a trusted recording; recorded from the first member while it is synthesized
//! directly, then (once a proof verifies) evaluated; checked with the first member when the
//! recording came from a file; or synthesized directly. Members started while a recording
//! is on probation wait for its verdict. Every proof made from a recording's vectors is
//! verified against the parameters' key before it is returned; one that does not verify
//! drops the recording and fails the batch (its member's circuit is spent).
//!
//! A member whose synthesis fails (or panics) fails the batch with its index; no later
//! member is proven, and the synthesis thread stops.

use std::panic::{catch_unwind, AssertUnwindSafe};
use std::sync::mpsc;
use std::sync::{Arc, Condvar, Mutex, MutexGuard, PoisonError};

use bellpepper_core::Circuit;
use ff::PrimeField;

use super::key::{Key, KeyFor};
use super::store::{store, Probation, Saving, Start, Store};
use crate::assignment::SynthesisOptions;
use crate::error::{panic_message, Error};
use crate::precompiled::Recording;
use crate::prover::Proven;
use crate::shape::Shape;
use crate::synthesize::synthesize_with;
use crate::vectors::ProverVectors;

/// What the pipeline needs of one bellperson release's prover, made for the first member.
pub(crate) trait MemberProver<Scalar> {
    /// The release's proof.
    type Proof;
    /// One member's proof, and its storage when `keep`.
    fn prove(
        &mut self,
        vectors: ProverVectors<Scalar>,
        r: Scalar,
        s: Scalar,
        keep: bool,
    ) -> Result<Proven<Self::Proof, Scalar>, Error>;
    /// Whether `proof` verifies for these public inputs.
    fn verifies(&mut self, proof: &Self::Proof, public: &[Scalar]) -> bool;
}

/// How a member's vectors were made, which says what its proof's verification decides.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Made {
    /// Directly, as bellperson makes them: no verification.
    Direct,
    /// Directly while recording: the proof's verdict is the new recording's.
    Recording,
    /// From a recording on probation loaded from a file: the verdict is the file's.
    Checking,
    /// From a trusted recording: verified, and a failure drops it.
    Trusted,
}

/// The verdict on the batch's recording on probation.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Verdict {
    /// No recording is on probation.
    None,
    Pending,
    Trusted,
    Rejected,
}

/// What the two threads share, under one lock.
struct Flow<Scalar> {
    /// Members that may still start synthesizing.
    permits: usize,
    /// The consumer has stopped: the producer must too.
    stopped: bool,
    verdict: Verdict,
    /// Storage handed back by proofs, for the next members (retention).
    spare: Vec<ProverVectors<Scalar>>,
}

/// One batch: what it was started with, and what its two threads share.
struct Batch<'a, Scalar: PrimeField> {
    store: Arc<Store<Scalar>>,
    /// The parameters' key for an input count (`None` for every count when they have none).
    key_for: &'a KeyFor<'a>,
    /// Retention is on: proofs hand their storage back, the batch keeps it for the next.
    keep: bool,
    /// Members that may hold vectors at once: also how many sets of storage it keeps.
    in_flight: usize,
    flow: Mutex<Flow<Scalar>>,
    changed: Condvar,
    /// The batch's hold on its structure's probation, until the verdict.
    probation: Mutex<Option<Probation<Scalar>>>,
    /// The recording on probation, once made or loaded.
    awaiting: Mutex<Option<Arc<Recording<Scalar>>>>,
    /// The structure's key, once known: where kept storage is filed, what a rejected
    /// trusted recording is evicted under.
    key: Mutex<Option<Key>>,
}

fn lock<T>(mutex: &Mutex<T>) -> MutexGuard<'_, T> {
    mutex.lock().unwrap_or_else(PoisonError::into_inner)
}

impl<'a, Scalar: PrimeField> Batch<'a, Scalar> {
    /// A batch of `count` members begun as the store says for the structure `key_for`
    /// names (`None`: the parameters give no key, the batch is synthesized directly), with
    /// the plan for its first member.
    fn begin(
        key_for: Option<&'a KeyFor<'a>>,
        count: usize,
        in_flight: usize,
        keep: bool,
    ) -> (Plan<Scalar>, Self) {
        let store = store::<Scalar>();
        let start = match key_for {
            Some(key_for) => store.begin(key_for),
            None => store.begin_unkeyed(),
        };
        let (plan, probation, verdict, key) = match start {
            Start::Trusted(key, recording) => {
                (Plan::Trusted(recording), None, Verdict::None, Some(key))
            }
            Start::Direct(shape) => (Plan::Direct(shape), None, Verdict::None, None),
            Start::Record(probation) => (Plan::Record, Some(probation), Verdict::Pending, None),
            Start::Check(recording, probation) => {
                let key = probation.key();
                let plan = Plan::Check(recording);
                (plan, Some(probation), Verdict::Pending, key)
            }
        };
        // Storage a previous batch of the structure kept, for the first members.
        let spare = match (&plan, key) {
            (Plan::Trusted(_), Some(key)) => store.take_kept(&key, in_flight.min(count)),
            _ => Vec::new(),
        };
        let batch = Batch {
            store,
            key_for: key_for.unwrap_or(&|_| None),
            keep,
            in_flight,
            flow: Mutex::new(Flow {
                permits: in_flight,
                stopped: false,
                verdict,
                spare,
            }),
            changed: Condvar::new(),
            probation: Mutex::new(probation),
            awaiting: Mutex::new(None),
            key: Mutex::new(key),
        };
        (plan, batch)
    }

    /// After the two threads: a probation still held (an error before the verdict) is
    /// dropped, which drops the recording unjudged; a successful batch keeps its spare
    /// storage (retention) and saves a recording it made trusted.
    fn end(self, succeeded: bool, saving: Option<Saving<Scalar>>) {
        drop(lock(&self.probation).take());
        let spare = std::mem::take(&mut lock(&self.flow).spare);
        let key = *lock(&self.key);
        match key {
            Some(key) if succeeded && self.keep => self.store.keep(&key, spare, self.in_flight),
            _ => drop(spare),
        }
        if let (true, Some(saving)) = (succeeded, saving) {
            saving.save();
        }
    }

    /// Waits for a permit; false when the consumer stopped.
    fn acquire(&self) -> bool {
        let mut flow = lock(&self.flow);
        while flow.permits == 0 && !flow.stopped {
            flow = self
                .changed
                .wait(flow)
                .unwrap_or_else(PoisonError::into_inner);
        }
        if flow.stopped {
            return false;
        }
        flow.permits -= 1;
        true
    }

    fn release(&self, spent: Option<ProverVectors<Scalar>>) {
        let mut flow = lock(&self.flow);
        flow.permits += 1;
        flow.spare.extend(spent);
        drop(flow);
        self.changed.notify_all();
    }

    /// Waits for the probation's verdict; `None` when the consumer stopped.
    fn verdict(&self) -> Option<Verdict> {
        let mut flow = lock(&self.flow);
        while flow.verdict == Verdict::Pending && !flow.stopped {
            flow = self
                .changed
                .wait(flow)
                .unwrap_or_else(PoisonError::into_inner);
        }
        (!flow.stopped).then_some(flow.verdict)
    }

    fn decide(&self, verdict: Verdict) {
        lock(&self.flow).verdict = verdict;
        self.changed.notify_all();
    }

    fn spare(&self) -> Option<ProverVectors<Scalar>> {
        lock(&self.flow).spare.pop()
    }
}

/// Stops the producer when the consumer ends, however it ends.
struct StopOnDrop<'a, 'b, Scalar: PrimeField>(&'a Batch<'b, Scalar>);

impl<Scalar: PrimeField> Drop for StopOnDrop<'_, '_, Scalar> {
    fn drop(&mut self) {
        lock(&self.0.flow).stopped = true;
        self.0.changed.notify_all();
    }
}

/// How the producer synthesizes the next member.
enum Plan<Scalar: PrimeField> {
    Trusted(Arc<Recording<Scalar>>),
    Direct(Option<Shape>),
    /// The first member, recorded while synthesized directly.
    Record,
    /// The first member, evaluated from a recording loaded on probation.
    Check(Arc<Recording<Scalar>>),
    /// A later member while `recording` awaits its verdict.
    Await(Arc<Recording<Scalar>>, Shape),
}

/// A member synthesized, or why not.
type Produced<Scalar> = Result<(ProverVectors<Scalar>, Made), Error>;

/// Proves `circuits` with randomness `r[i]`, `s[i]`, at most `in_flight` members holding
/// vectors at once; `prover` is made for the first member's vectors. `key_for` is `None`
/// when the parameters can give no key at all: the batch is synthesized directly. `keep`: retention is
/// on (each proof hands its storage back for the next members, and the batch's for the
/// next batch).
pub(crate) fn prove_batch<Scalar, C, P>(
    circuits: Vec<C>,
    (r, s): (&[Scalar], &[Scalar]),
    key_for: Option<&KeyFor<'_>>,
    make_prover: impl FnOnce(&ProverVectors<Scalar>) -> Result<P, Error>,
    (in_flight, keep): (usize, bool),
) -> Result<Vec<P::Proof>, Error>
where
    Scalar: PrimeField,
    C: Circuit<Scalar> + Send,
    P: MemberProver<Scalar>,
{
    let count = circuits.len();
    if r.len() != count || s.len() != count {
        return Err(Error::Randomness {
            assignments: count,
            r: r.len(),
            s: s.len(),
        });
    }
    if count == 0 {
        return Ok(Vec::new());
    }
    let (plan, batch) = Batch::begin(key_for, count, in_flight, keep);
    let (sender, receiver) = mpsc::channel::<Produced<Scalar>>();
    let mut saving = None;
    let result = std::thread::scope(|scope| {
        let producer = scope.spawn(|| produce(circuits, plan, &batch, sender));
        let stop = StopOnDrop(&batch);
        let result = consume(&batch, (r, s), &receiver, make_prover, &mut saving);
        drop(stop);
        // A panic outside a member's synthesis (there is none to catch) is reported by
        // the consumer as the producer's end.
        let _ = producer.join();
        result
    });
    batch.end(result.is_ok(), saving);
    result
}

/// The synthesis thread: each member once a permit allows it, sent in order, until one
/// fails or the proving side stops.
fn produce<Scalar, C>(
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
        if let Plan::Await(recording, shape) = &plan {
            plan = match batch.verdict() {
                None => return,
                Some(Verdict::Trusted) => Plan::Trusted(Arc::clone(recording)),
                Some(_) => Plan::Direct(Some(*shape)),
            };
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
    // Storage an earlier proof handed back (retention). Members evaluated from a recording
    // write into it; the others make fresh vectors, so they drop it first: either way each
    // member takes one, and the batch's storage, alive and spare, stays within k members.
    let spare = batch.spare();
    match plan {
        Plan::Trusted(recording) => {
            match recording.synthesize_into(circuit, spare.unwrap_or_default()) {
                Ok(vectors) => Ok((vectors, Made::Trusted)),
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
                Err(e) => Err(e),
            }
        }
        Plan::Direct(shape) => {
            drop(spare);
            Ok((direct(circuit, *shape)?, Made::Direct))
        }
        Plan::Check(recording) => {
            let recording = Arc::clone(recording);
            *lock(&batch.awaiting) = Some(Arc::clone(&recording));
            *plan = Plan::Await(Arc::clone(&recording), recording.shape());
            let vectors = recording.synthesize_into(circuit, spare.unwrap_or_default())?;
            Ok((vectors, Made::Checking))
        }
        Plan::Record => {
            drop(spare);
            record_first(circuit, plan, batch)
        }
        Plan::Await(..) => unreachable!("the verdict is awaited before a member starts"),
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
    let mut held = lock(&batch.probation);
    let Some(mut probation) = held.take() else {
        *plan = Plan::Direct(Some(shape));
        return Ok((vectors, Made::Direct));
    };
    let Some(found) = (batch.key_for)(shape.inputs) else {
        log::warn!("synthpool: the parameters give no verifying key; not recording");
        probation.abandon();
        batch.decide(Verdict::None);
        *plan = Plan::Direct(Some(shape));
        return Ok((vectors, Made::Direct));
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
            Ok((vectors, Made::Recording))
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
            batch.decide(Verdict::None);
            *plan = Plan::Direct(Some(shape));
            Ok((vectors, Made::Direct))
        }
    }
}

/// Direct synthesis with the fastest options, pre-sized when the shape is known.
fn direct<Scalar: PrimeField, C: Circuit<Scalar>>(
    circuit: C,
    shape: Option<Shape>,
) -> Result<ProverVectors<Scalar>, Error> {
    synthesize_with(circuit, &SynthesisOptions::default().with_shape(shape))
}

/// The proving side: each member in order, its proof verified when its vectors came from
/// a recording; the probation's verdict given on the first.
fn consume<Scalar, P>(
    batch: &Batch<'_, Scalar>,
    (r, s): (&[Scalar], &[Scalar]),
    receiver: &mpsc::Receiver<Produced<Scalar>>,
    make_prover: impl FnOnce(&ProverVectors<Scalar>) -> Result<P, Error>,
    saving: &mut Option<Saving<Scalar>>,
) -> Result<Vec<P::Proof>, Error>
where
    Scalar: PrimeField,
    P: MemberProver<Scalar>,
{
    // As many as there are circuits: `prove_batch` checked.
    let count = r.len();
    let mut make_prover = Some(make_prover);
    let mut prover: Option<P> = None;
    let mut proofs = Vec::with_capacity(count);
    for index in 0..count {
        let (vectors, made) = match receiver.recv() {
            Ok(produced) => produced?,
            // The producer stopped without a result: it panicked outside a member.
            Err(_) => {
                return Err(Error::Panicked("the synthesis thread ended".into()).member(index))
            }
        };
        let prover = match &mut prover {
            Some(prover) => prover,
            None => {
                let make = make_prover.take().expect("made once");
                prover.insert(make(&vectors)?)
            }
        };
        let public = match made {
            Made::Direct => Vec::new(),
            _ => vectors.input_assignment[1..].to_vec(),
        };
        let (proof, spent) = prover
            .prove(vectors, r[index], s[index], batch.keep)
            .map_err(|e| e.member(index))?;
        batch.release(spent);
        if made != Made::Direct {
            let verified = prover.verifies(&proof, &public);
            judge(batch, made, verified, saving).map_err(|e| e.member(index))?;
        }
        proofs.push(proof);
    }
    Ok(proofs)
}

/// What a verified or failed proof made from a recording decides: the probation's verdict
/// (trust, saved at the batch's end, or rejection) for the first member; for a trusted
/// recording, its eviction when the proof fails. An error when the proof cannot be returned.
fn judge<Scalar: PrimeField>(
    batch: &Batch<'_, Scalar>,
    made: Made,
    verified: bool,
    saving: &mut Option<Saving<Scalar>>,
) -> Result<(), Error> {
    match made {
        Made::Direct => Ok(()),
        Made::Recording | Made::Checking => {
            let probation = lock(&batch.probation).take();
            if let Some(probation) = probation {
                let recording = lock(&batch.awaiting).take();
                if let (true, Some(recording)) = (verified, recording) {
                    *saving = probation.trust(&recording);
                    batch.decide(Verdict::Trusted);
                } else {
                    probation.reject("a proof made with it does not verify against its parameters");
                    batch.decide(Verdict::Rejected);
                }
            }
            if made == Made::Checking && !verified {
                return Err(Error::RecordingRejected);
            }
            Ok(())
        }
        Made::Trusted if verified => Ok(()),
        Made::Trusted => {
            if let Some(key) = *lock(&batch.key) {
                batch.store.evict(&key);
            }
            Err(Error::RecordingRejected)
        }
    }
}
