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

struct Shared<Scalar: PrimeField> {
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

impl<Scalar: PrimeField> Shared<Scalar> {
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
struct StopOnDrop<'a, Scalar: PrimeField>(&'a Shared<Scalar>);

impl<Scalar: PrimeField> Drop for StopOnDrop<'_, Scalar> {
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
    if count == 0 {
        return Ok(Vec::new());
    }
    let store = store::<Scalar>();
    let start = match key_for {
        Some(key_for) => store.begin(key_for),
        None => store.begin_unkeyed(),
    };
    let key_for = key_for.unwrap_or(&|_| None);
    let (plan, probation, verdict, key) = match start {
        Start::Trusted(key, recording) => {
            (Plan::Trusted(recording), None, Verdict::None, Some(key))
        }
        Start::Direct(shape) => (Plan::Direct(shape), None, Verdict::None, None),
        Start::Record(probation) => (Plan::Record, Some(probation), Verdict::Pending, None),
        Start::Check(recording, probation) => {
            let key = probation.key();
            (
                Plan::Check(recording),
                Some(probation),
                Verdict::Pending,
                key,
            )
        }
    };
    // Storage a previous batch of the structure kept, for the first members.
    let spare = match (&plan, key) {
        (Plan::Trusted(_), Some(key)) => store.take_kept(&key, in_flight.min(count)),
        _ => Vec::new(),
    };
    let beginning = Beginning {
        store,
        plan,
        probation,
        verdict,
        key,
        spare,
    };
    run(
        circuits,
        (r, s),
        key_for,
        make_prover,
        (in_flight, keep),
        beginning,
    )
}

/// A batch's starting state.
struct Beginning<Scalar: PrimeField> {
    store: Arc<Store<Scalar>>,
    plan: Plan<Scalar>,
    probation: Option<Probation<Scalar>>,
    verdict: Verdict,
    key: Option<Key>,
    spare: Vec<ProverVectors<Scalar>>,
}

fn run<Scalar, C, P>(
    circuits: Vec<C>,
    (r, s): (&[Scalar], &[Scalar]),
    key_for: &KeyFor<'_>,
    make_prover: impl FnOnce(&ProverVectors<Scalar>) -> Result<P, Error>,
    (in_flight, keep): (usize, bool),
    beginning: Beginning<Scalar>,
) -> Result<Vec<P::Proof>, Error>
where
    Scalar: PrimeField,
    C: Circuit<Scalar> + Send,
    P: MemberProver<Scalar>,
{
    let count = circuits.len();
    let Beginning {
        store,
        plan,
        probation,
        verdict,
        key,
        spare,
    } = beginning;
    let shared = Shared {
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
    let (sender, receiver) = mpsc::channel::<Produced<Scalar>>();
    let mut saving = None;
    let result = std::thread::scope(|scope| {
        let producer = scope.spawn(|| produce(circuits, plan, &shared, &store, key_for, sender));
        let stop = StopOnDrop(&shared);
        let result = consume(
            count,
            (r, s),
            &receiver,
            &shared,
            &store,
            make_prover,
            keep,
            &mut saving,
        );
        drop(stop);
        // A panic outside a member's synthesis (there is none to catch) is reported by
        // the consumer as the producer's end.
        let _ = producer.join();
        result
    });
    // A probation still held here (an error before the verdict) rejects on drop.
    drop(lock(&shared.probation).take());
    let spare = std::mem::take(&mut lock(&shared.flow).spare);
    let key = *lock(&shared.key);
    match (&result, key) {
        (Ok(_), Some(key)) if keep => store.keep(&key, spare, in_flight),
        _ => drop(spare),
    }
    if let (Ok(_), Some(saving)) = (&result, saving) {
        saving.save();
    }
    result
}

/// The synthesis thread: each member once a permit allows it, sent in order, until one
/// fails or the proving side stops.
fn produce<Scalar, C>(
    circuits: Vec<C>,
    mut plan: Plan<Scalar>,
    shared: &Shared<Scalar>,
    store: &Store<Scalar>,
    key_for: &KeyFor<'_>,
    sender: mpsc::Sender<Produced<Scalar>>,
) where
    Scalar: PrimeField,
    C: Circuit<Scalar> + Send,
{
    for (index, circuit) in circuits.into_iter().enumerate() {
        if !shared.acquire() {
            return;
        }
        if let Plan::Await(recording, shape) = &plan {
            plan = match shared.verdict() {
                None => return,
                Some(Verdict::Trusted) => Plan::Trusted(Arc::clone(recording)),
                Some(_) => Plan::Direct(Some(*shape)),
            };
        }
        let outcome = catch_unwind(AssertUnwindSafe(|| {
            member(circuit, &mut plan, shared, store, key_for)
        }));
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
    shared: &Shared<Scalar>,
    store: &Store<Scalar>,
    key_for: &KeyFor<'_>,
) -> Produced<Scalar>
where
    Scalar: PrimeField,
    C: Circuit<Scalar>,
{
    // Storage an earlier proof handed back (retention). Members evaluated from a recording
    // write into it; the others make fresh vectors, so they drop it first: either way each
    // member takes one, and the batch's storage, alive and spare, stays within k members.
    let spare = shared.spare();
    match plan {
        Plan::Trusted(recording) => {
            match recording.synthesize_into(circuit, spare.unwrap_or_default()) {
                Ok(vectors) => Ok((vectors, Made::Trusted)),
                Err(e @ (Error::StructureMismatch { .. } | Error::Unsatisfied { .. })) => {
                    // A circuit of its parameters the recording does not fit: the caller's
                    // circuit is wrong, or the recording is. Dropping it from memory costs a
                    // recording if the caller was; keeping it would fail every later batch
                    // if it was. Its file stays: the next batch checks it again.
                    if let Some(key) = *lock(&shared.key) {
                        store.forget(&key);
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
            *lock(&shared.awaiting) = Some(Arc::clone(&recording));
            *plan = Plan::Await(Arc::clone(&recording), recording.shape());
            let vectors = recording.synthesize_into(circuit, spare.unwrap_or_default())?;
            Ok((vectors, Made::Checking))
        }
        Plan::Record => {
            drop(spare);
            let (recording, vectors) = Recording::record_and_synthesize(circuit)?;
            let shape = vectors.shape();
            let mut held = lock(&shared.probation);
            let Some(mut probation) = held.take() else {
                *plan = Plan::Direct(Some(shape));
                return Ok((vectors, Made::Direct));
            };
            let Some(found) = key_for(shape.inputs) else {
                log::warn!("synthpool: the parameters give no verifying key; not recording");
                probation.abandon();
                shared.decide(Verdict::None);
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
                    *lock(&shared.key) = Some(found);
                    let recording = Arc::new(recording);
                    *lock(&shared.awaiting) = Some(Arc::clone(&recording));
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
                    shared.decide(Verdict::None);
                    *plan = Plan::Direct(Some(shape));
                    Ok((vectors, Made::Direct))
                }
            }
        }
        Plan::Await(..) => unreachable!("the verdict is awaited before a member starts"),
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
#[allow(clippy::too_many_arguments)]
fn consume<Scalar, P>(
    count: usize,
    (r, s): (&[Scalar], &[Scalar]),
    receiver: &mpsc::Receiver<Produced<Scalar>>,
    shared: &Shared<Scalar>,
    store: &Arc<Store<Scalar>>,
    make_prover: impl FnOnce(&ProverVectors<Scalar>) -> Result<P, Error>,
    keep: bool,
    saving: &mut Option<Saving<Scalar>>,
) -> Result<Vec<P::Proof>, Error>
where
    Scalar: PrimeField,
    P: MemberProver<Scalar>,
{
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
            .prove(vectors, r[index], s[index], keep)
            .map_err(|e| e.member(index))?;
        shared.release(spent);
        match made {
            Made::Direct => {}
            Made::Recording | Made::Checking => {
                let verified = prover.verifies(&proof, &public);
                let probation = lock(&shared.probation).take();
                if let Some(probation) = probation {
                    let recording = lock(&shared.awaiting).take();
                    if let (true, Some(recording)) = (verified, recording) {
                        *saving = probation.trust(&recording);
                        shared.decide(Verdict::Trusted);
                    } else {
                        probation
                            .reject("a proof made with it does not verify against its parameters");
                        shared.decide(Verdict::Rejected);
                    }
                }
                if made == Made::Checking && !verified {
                    return Err(Error::RecordingRejected.member(index));
                }
            }
            Made::Trusted => {
                if !prover.verifies(&proof, &public) {
                    if let Some(key) = *lock(&shared.key) {
                        store.evict(&key);
                    }
                    return Err(Error::RecordingRejected.member(index));
                }
            }
        }
        proofs.push(proof);
    }
    Ok(proofs)
}
