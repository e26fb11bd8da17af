//! A batch proven in bounded memory: one thread synthesizes the members in order while the
//! caller's thread proves them in order, with at most `k` members holding synthesized
//! vectors at any moment (a member holds them from the start of its synthesis to the end of
//! its proof). The parameters' queries are read once, for the first member.
//!
//! How each member is synthesized follows the structure's state in the store:
//! - from a trusted recording: verified, and a proof that fails drops the recording and
//!   fails the batch;
//! - the first member of a structure the process has not seen, and no file holds, is
//!   recorded while synthesized directly; later members wait for the verdict on its proof,
//!   then evaluate the recording (trusted) or are synthesized directly (rejected);
//! - a recording opened from a cache file serves every member at once, without waiting
//!   for a verdict: each member's proof is verified, the first one's verdict decides the
//!   file's trust, and each member keeps its witness until its proof is verified. A member
//!   whose evaluation fails, or whose proof does not verify, rejects the file's recording:
//!   the next member not yet synthesized is recorded afresh while synthesized directly (a
//!   replacement, checked to reproduce that member), and every member made from the
//!   rejected recording is evaluated again from its witness with the replacement and
//!   verified. So the batch still returns bellperson's proofs; only a batch whose members
//!   were all synthesized before the rejection (at most `k`; a batch of one) is left
//!   without a member to record from, and fails with [`Error::RecordingRejected`]. While
//!   it redoes a member, the batch holds one member's storage more than `k`;
//! - otherwise directly.
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
use crate::precompiled::{Recording, Witness};
use crate::prover::Proven;
use crate::shape::Shape;
use crate::synthesize::synthesize_with;
use crate::vectors::ProverVectors;

/// What the pipeline needs of one bellperson release's prover, made for the first member.
pub(crate) trait MemberProver<Scalar> {
    /// The release's proof.
    type Proof;
    /// One member's proof, and its storage when `keep` (its input and aux values intact).
    fn prove(
        &mut self,
        vectors: ProverVectors<Scalar>,
        r: Scalar,
        s: Scalar,
        keep: bool,
    ) -> Result<Proven<Self::Proof, Scalar>, Error>;
    /// Whether `proof` verifies for these public inputs.
    fn verifies(&mut self, proof: &Self::Proof, public: &[Scalar]) -> bool;
    /// Whether `vectors` are laid out as the member the prover was made for.
    fn fits(&self, vectors: &ProverVectors<Scalar>) -> Result<(), Error>;
}

/// How a member's vectors were made, which says what its proof's verification decides.
#[derive(Clone)]
enum Made<Scalar: PrimeField> {
    /// Directly, as bellperson makes them: no verification.
    Direct,
    /// Directly while recording: the proof's verdict is the new recording's.
    Recording,
    /// From a trusted recording: verified, and a failure drops it.
    Trusted,
    /// From a recording opened from a cache file, on probation in this batch: verified; the
    /// first verdict is the file's; a failure rejects it and the member is redone.
    FromFile(Arc<Recording<Scalar>>),
    /// From the replacement of a rejected file's recording: verified, and a failure fails
    /// the batch.
    Replacement,
    /// Directly while recording the replacement: the proof's verdict is the
    /// replacement's, for later batches.
    Replacing,
}

impl<Scalar: PrimeField> Made<Scalar> {
    fn verified(&self) -> bool {
        !matches!(self, Made::Direct)
    }
}

/// A member as the synthesis thread hands it over.
enum Member<Scalar: PrimeField> {
    /// Its vectors, and how they were made.
    Synthesized(ProverVectors<Scalar>, Made<Scalar>),
    /// Its witness (the vectors' input and aux values, no rows, with the number of
    /// constraints the circuit enforced): evaluating it with the file's recording failed
    /// with this error, so it is redone with the replacement.
    Redo(ProverVectors<Scalar>, usize, Error),
}

/// The verdict on the batch's recording on probation.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Verdict {
    /// No recording is on probation.
    Unjudged,
    Pending,
    Trusted,
    Rejected,
}

/// The replacement of a rejected file's recording.
enum Replacement<Scalar: PrimeField> {
    /// None is needed.
    NotWanted,
    /// The next member to start records one.
    Wanted,
    /// Recorded from a member and checked to reproduce it.
    Ready(Arc<Recording<Scalar>>),
    /// No member was left to record from, or it could not be recorded.
    Impossible,
}

/// What the two threads share, under one lock.
struct Flow<Scalar: PrimeField> {
    /// Members that may still start synthesizing.
    permits: usize,
    /// The consumer has stopped: the producer must too.
    stopped: bool,
    verdict: Verdict,
    replacement: Replacement<Scalar>,
    /// The producer has ended: no member will start any more.
    producer_done: bool,
    /// Storage handed back by proofs, for the next members.
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
    /// The replacement of a rejected file's recording, until its own member's proof says
    /// whether it serves later batches.
    replacing: Mutex<Option<Arc<Recording<Scalar>>>>,
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
                replacement: Replacement::NotWanted,
                producer_done: false,
                spare,
            }),
            changed: Condvar::new(),
            probation: Mutex::new(probation),
            awaiting: Mutex::new(awaiting),
            key: Mutex::new(key),
            replacing: Mutex::new(None),
        };
        (plan, batch)
    }

    /// After the two threads: a probation still held (an error before the verdict) is
    /// dropped, which drops the recording unjudged; a successful batch keeps its spare
    /// storage (retention) and saves a recording it made trusted.
    fn end(self, succeeded: bool, saving: Option<Saving<Scalar>>) {
        drop(lock(&self.probation).take());
        drop(lock(&self.replacing).take());
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

    /// Asks for a replacement of the file's recording (once); there is none to make when
    /// the producer has ended.
    fn want_replacement(&self) {
        let mut flow = lock(&self.flow);
        if let Replacement::NotWanted = flow.replacement {
            flow.replacement = if flow.producer_done {
                Replacement::Impossible
            } else {
                Replacement::Wanted
            };
        }
        drop(flow);
        self.changed.notify_all();
    }

    /// Whether a replacement is wanted and not yet begun.
    fn replacement_wanted(&self) -> bool {
        matches!(lock(&self.flow).replacement, Replacement::Wanted)
    }

    fn set_replacement(&self, replacement: Replacement<Scalar>) {
        lock(&self.flow).replacement = replacement;
        self.changed.notify_all();
    }

    /// Waits for the replacement; `None` when there will be none (or the producer ended).
    fn replacement(&self) -> Option<Arc<Recording<Scalar>>> {
        let mut flow = lock(&self.flow);
        loop {
            match &flow.replacement {
                Replacement::Ready(recording) => return Some(Arc::clone(recording)),
                Replacement::Impossible | Replacement::NotWanted => return None,
                Replacement::Wanted if flow.stopped || flow.producer_done => return None,
                Replacement::Wanted => {}
            }
            flow = self
                .changed
                .wait(flow)
                .unwrap_or_else(PoisonError::into_inner);
        }
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

/// Tells a consumer waiting for a replacement that none will come, however the producer
/// ends.
struct NoMoreMembers<'a, 'b, Scalar: PrimeField>(&'a Batch<'b, Scalar>);

impl<Scalar: PrimeField> Drop for NoMoreMembers<'_, '_, Scalar> {
    fn drop(&mut self) {
        let mut flow = lock(&self.0.flow);
        flow.producer_done = true;
        if let Replacement::Wanted = flow.replacement {
            flow.replacement = Replacement::Impossible;
        }
        drop(flow);
        self.0.changed.notify_all();
    }
}

/// How the producer synthesizes the next member.
enum Plan<Scalar: PrimeField> {
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

/// A member synthesized, or why not.
type Produced<Scalar> = Result<Member<Scalar>, Error>;

/// Proves `circuits` with randomness `r[i]`, `s[i]`, at most `in_flight` members holding
/// vectors at once; `prover` is made for the first member's vectors. `key_for` is `None`
/// when the parameters can give no key at all: the batch is synthesized directly. `keep`:
/// retention is on (each proof hands its storage back for the next members, and the
/// batch's for the next batch).
pub(crate) fn prove_batch<Scalar, C, P>(
    circuits: Vec<C>,
    (r, s): (&[Scalar], &[Scalar]),
    key_for: Option<&KeyFor<'_>>,
    make_prover: impl Fn(&ProverVectors<Scalar>) -> Result<P, Error>,
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
        let result = Consumer {
            batch: &batch,
            make_prover,
            prover: None,
            saving: &mut saving,
        }
        .consume((r, s), &receiver);
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
    let buffers = Witness {
        inputs: std::mem::take(&mut target.input_assignment),
        aux: std::mem::take(&mut target.aux_assignment),
        constraints: 0,
    };
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

/// The proving side of a batch.
struct Consumer<'b, 'a, Scalar: PrimeField, P, F> {
    batch: &'b Batch<'a, Scalar>,
    /// Makes the prover for the first vectors proven.
    make_prover: F,
    prover: Option<P>,
    saving: &'b mut Option<Saving<Scalar>>,
}

impl<Scalar, P, F> Consumer<'_, '_, Scalar, P, F>
where
    Scalar: PrimeField,
    P: MemberProver<Scalar>,
    F: Fn(&ProverVectors<Scalar>) -> Result<P, Error>,
{
    /// Each member in order, its proof verified when its vectors came from a recording;
    /// the probation's verdict given on the first.
    fn consume(
        mut self,
        (r, s): (&[Scalar], &[Scalar]),
        receiver: &mpsc::Receiver<Produced<Scalar>>,
    ) -> Result<Vec<P::Proof>, Error> {
        // As many as there are circuits: `prove_batch` checked.
        let count = r.len();
        let mut proofs = Vec::with_capacity(count);
        for index in 0..count {
            let member = match receiver.recv() {
                Ok(produced) => produced?,
                // The producer stopped without a result: it panicked outside a member.
                Err(_) => {
                    return Err(Error::Panicked("the synthesis thread ended".into()).member(index))
                }
            };
            let proof = self
                .member(member, (r[index], s[index]))
                .map_err(|e| e.member(index))?;
            proofs.push(proof);
        }
        Ok(proofs)
    }

    /// Whether `vectors` can be proven with the parameters: the prover is made for the
    /// first vectors that can, and later ones must be laid out as those.
    fn ready(&mut self, vectors: &ProverVectors<Scalar>) -> Result<(), Error> {
        match &self.prover {
            Some(prover) => prover.fits(vectors),
            None => {
                self.prover = Some((self.make_prover)(vectors)?);
                Ok(())
            }
        }
    }

    /// One member's proof ([`Self::ready`] said yes).
    fn prove(
        &mut self,
        vectors: ProverVectors<Scalar>,
        (r, s): (Scalar, Scalar),
        keep: bool,
    ) -> Result<Proven<P::Proof, Scalar>, Error> {
        let prover = self.prover.as_mut().expect("made for the member");
        prover.prove(vectors, r, s, keep)
    }

    fn verifies(&mut self, proof: &P::Proof, public: &[Scalar]) -> bool {
        let prover = self.prover.as_mut().expect("made for the proof");
        prover.verifies(proof, public)
    }

    /// One member's proof.
    fn member(
        &mut self,
        member: Member<Scalar>,
        (r, s): (Scalar, Scalar),
    ) -> Result<P::Proof, Error> {
        let (vectors, made) = match member {
            Member::Redo(vectors, constraints, why) => {
                return self.redo(vectors, constraints, Some(why), (r, s));
            }
            Member::Synthesized(vectors, made) => (vectors, made),
        };
        let constraints = vectors.a.len();
        if let Made::FromFile(recording) = &made {
            if self.rejected(recording) {
                self.batch.release(None);
                return self.redo(vectors, constraints, None, (r, s));
            }
            // A file can make vectors the parameters do not fit (a damaged density): that
            // is the file's failure, as an evaluation's would be.
            if let Err(why) = self.ready(&vectors) {
                return self.redo(vectors, constraints, Some(why), (r, s));
            }
        }
        self.ready(&vectors)?;
        let public = match made {
            Made::Direct => Vec::new(),
            _ => vectors.input_assignment[1..].to_vec(),
        };
        // A member of a file's recording keeps its witness until its proof is checked.
        let keep = self.batch.keep || matches!(made, Made::FromFile(_));
        let (proof, spent) = self.prove(vectors, (r, s), keep)?;
        if !made.verified() {
            self.batch.release(spent);
            return Ok(proof);
        }
        let verified = self.verifies(&proof, &public);
        match (made, verified) {
            (Made::FromFile(recording), false) => {
                self.judge_file(
                    &recording,
                    Err("a proof made with it does not verify against its parameters"),
                );
                self.batch.release(None);
                let spent = spent.expect("a file's member keeps its storage");
                self.redo(spent, constraints, None, (r, s))
            }
            (Made::FromFile(recording), true) => {
                self.judge_file(&recording, Ok(()));
                self.batch.release(spent.filter(|_| self.batch.keep));
                Ok(proof)
            }
            (made, verified) => {
                self.batch.release(spent);
                self.judge(made, verified)?;
                Ok(proof)
            }
        }
    }

    /// Whether the file's recording `recording` was rejected in this batch.
    fn rejected(&self, recording: &Arc<Recording<Scalar>>) -> bool {
        let awaiting = lock(&self.batch.awaiting);
        let judged = lock(&self.batch.flow).verdict;
        judged == Verdict::Rejected
            && awaiting
                .as_ref()
                .is_none_or(|awaiting| Arc::ptr_eq(awaiting, recording))
    }

    /// A verdict on the file's recording from one of its members: the first decides its
    /// trust; a failure after trust evicts it. A rejection asks for a replacement.
    fn judge_file(&mut self, recording: &Arc<Recording<Scalar>>, outcome: Result<(), &str>) {
        let probation = lock(&self.batch.probation).take();
        match (probation, outcome) {
            (Some(probation), Ok(())) => {
                *self.saving = probation.trust(recording);
                self.batch.decide(Verdict::Trusted);
            }
            (Some(probation), Err(why)) => {
                probation.reject(why);
                self.batch.decide(Verdict::Rejected);
                self.batch.want_replacement();
            }
            (None, Ok(())) => {}
            (None, Err(_)) => {
                if lock(&self.batch.flow).verdict != Verdict::Rejected {
                    if let Some(key) = *lock(&self.batch.key) {
                        self.batch.store.evict(&key);
                    }
                    self.batch.decide(Verdict::Rejected);
                }
                self.batch.want_replacement();
            }
        }
    }

    /// A member made from a file's recording that failed (`why`: its own evaluation, or
    /// the parameters' check of its vectors, failed; `None`: its proof, or another
    /// member's, did not verify, which rejected the file already), redone from its witness
    /// with the replacement, then proven and verified. When the redone member's proof
    /// verifies, the file is what failed it; when it does not, or no replacement can be
    /// made, whose fault it was cannot be told and the file is dropped unjudged.
    fn redo(
        &mut self,
        mut vectors: ProverVectors<Scalar>,
        constraints: usize,
        why: Option<Error>,
        (r, s): (Scalar, Scalar),
    ) -> Result<P::Proof, Error> {
        if why.is_some() {
            // The member's permit, given back while it is redone.
            self.batch.want_replacement();
            self.batch.release(None);
        }
        let file_failed_first = why.is_some();
        let fail = |this: &mut Self, error: Error| {
            if file_failed_first {
                this.abandon_file();
            }
            Err(error)
        };
        let Some(replacement) = self.batch.replacement() else {
            return fail(self, why.unwrap_or(Error::RecordingRejected));
        };
        let witness = Witness {
            inputs: std::mem::take(&mut vectors.input_assignment),
            aux: std::mem::take(&mut vectors.aux_assignment),
            constraints,
        };
        let evaluated = replacement
            .evaluate_into(witness, &mut vectors)
            .and_then(|_| self.ready(&vectors));
        if let Err(again) = evaluated {
            return fail(self, again);
        }
        let public = vectors.input_assignment[1..].to_vec();
        let (proof, spent) = self.prove(vectors, (r, s), false)?;
        drop(spent);
        if !self.verifies(&proof, &public) {
            return fail(self, Error::RecordingRejected);
        }
        if let Some(why) = &why {
            let why = format!(
                "a member a fresh recording proves fails it ({})",
                why.chain()
            );
            let recording = lock(&self.batch.awaiting).clone();
            if let Some(recording) = recording {
                self.judge_file(&recording, Err(&why));
            }
        }
        self.batch.store.redone();
        Ok(proof)
    }

    /// The file's recording failed a member that a replacement fails too, or that has no
    /// replacement: whose fault that is cannot be told, so it is dropped unjudged (the file
    /// stays for other processes; this one does not read it again).
    fn abandon_file(&mut self) {
        drop(lock(&self.batch.probation).take());
        self.batch.decide(Verdict::Rejected);
    }

    /// What a verified or failed proof made from a recording in memory decides: the
    /// probation's verdict (trust, saved at the batch's end, or rejection) for the first
    /// member; for a trusted recording, its eviction when the proof fails. An error when
    /// the proof cannot be returned.
    fn judge(&mut self, made: Made<Scalar>, verified: bool) -> Result<(), Error> {
        match made {
            Made::Recording => {
                let probation = lock(&self.batch.probation).take();
                if let Some(probation) = probation {
                    let recording = lock(&self.batch.awaiting).take();
                    if let (true, Some(recording)) = (verified, recording) {
                        *self.saving = probation.trust(&recording);
                        self.batch.decide(Verdict::Trusted);
                    } else {
                        probation
                            .reject("a proof made with it does not verify against its parameters");
                        self.batch.decide(Verdict::Rejected);
                    }
                }
                Ok(())
            }
            Made::Replacing => {
                // Its members were verified one by one; its own member's proof verifying
                // earns it the trust of a new recording (unless another batch holds the
                // structure by now), and the file's place.
                let recording = lock(&self.batch.replacing).take();
                let key = *lock(&self.batch.key);
                if let (true, Some(recording), Some(key)) = (verified, recording, key) {
                    let inputs = recording.shape().inputs;
                    if let Some(probation) = self.batch.store.claim(key, inputs) {
                        *self.saving = probation.trust(&recording);
                    }
                }
                Ok(())
            }
            Made::Trusted | Made::Replacement if verified => Ok(()),
            Made::Trusted => {
                if let Some(key) = *lock(&self.batch.key) {
                    self.batch.store.evict(&key);
                }
                Err(Error::RecordingRejected)
            }
            Made::Replacement => Err(Error::RecordingRejected),
            Made::Direct | Made::FromFile(_) => Ok(()),
        }
    }
}
