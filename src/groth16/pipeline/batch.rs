//! One batch's state, shared by its two threads: the permits that bound the members holding
//! vectors, the verdict on the recording on probation, the replacement of a rejected
//! file's recording, and the storage proofs hand back.

use std::sync::{Arc, Condvar, Mutex, MutexGuard, PoisonError};

use ff::PrimeField;

use crate::groth16::key::{Key, KeyFor};
use crate::groth16::store::{Probation, Saving, Store};
use crate::precompiled::Recording;
use crate::vectors::ProverVectors;

/// The verdict on the batch's recording on probation.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) enum Verdict {
    /// No recording is on probation.
    Unjudged,
    Pending,
    Trusted,
    Rejected,
}

/// The replacement of a rejected file's recording.
pub(super) enum Replacement<Scalar: PrimeField> {
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
pub(super) struct Flow<Scalar: PrimeField> {
    /// Members that may still start synthesizing.
    pub(super) permits: usize,
    /// The consumer has stopped: the producer must too.
    pub(super) stopped: bool,
    pub(super) verdict: Verdict,
    pub(super) replacement: Replacement<Scalar>,
    /// The producer has ended: no member will start any more.
    pub(super) producer_done: bool,
    /// Storage handed back by proofs, for the next members.
    pub(super) spare: Vec<ProverVectors<Scalar>>,
}

/// One batch: what it was started with, and what its two threads share.
pub(super) struct Batch<'a, Scalar: PrimeField> {
    pub(super) store: Arc<Store<Scalar>>,
    /// The parameters' key for an input count (`None` for every count when they have none).
    pub(super) key_for: &'a KeyFor<'a>,
    /// Proofs hand their storage back for the batch's next members: retention is on, or
    /// the prover keeps it for free.
    pub(super) hand_back: bool,
    /// Retention is on: the batch's spare storage is kept for the next batch.
    pub(super) retain: bool,
    /// Members that may hold vectors at once: also how many sets of storage it keeps.
    pub(super) in_flight: usize,
    pub(super) flow: Mutex<Flow<Scalar>>,
    pub(super) changed: Condvar,
    /// The batch's hold on its structure's probation, until the verdict.
    pub(super) probation: Mutex<Option<Probation<Scalar>>>,
    /// The recording on probation, once made or loaded.
    pub(super) awaiting: Mutex<Option<Arc<Recording<Scalar>>>>,
    /// The structure's key, once known: where kept storage is filed, what a rejected
    /// trusted recording is evicted under.
    pub(super) key: Mutex<Option<Key>>,
    /// The replacement of a rejected file's recording, until its own member's proof says
    /// whether it serves later batches.
    pub(super) replacing: Mutex<Option<Arc<Recording<Scalar>>>>,
}

/// How a batch starts, as the store said: the hold on its structure's probation (and the
/// verdict pending on it), the structure's key when known, the recording on probation, and
/// storage a previous batch kept.
pub(super) struct Beginning<Scalar: PrimeField> {
    pub(super) probation: Option<Probation<Scalar>>,
    pub(super) verdict: Verdict,
    pub(super) key: Option<Key>,
    pub(super) awaiting: Option<Arc<Recording<Scalar>>>,
    pub(super) spare: Vec<ProverVectors<Scalar>>,
}

pub(super) fn lock<T>(mutex: &Mutex<T>) -> MutexGuard<'_, T> {
    mutex.lock().unwrap_or_else(PoisonError::into_inner)
}

impl<'a, Scalar: PrimeField> Batch<'a, Scalar> {
    /// A batch begun as `beginning` says, for the structure `key_for` names (`None`: the
    /// parameters give no key).
    pub(super) fn new(
        store: Arc<Store<Scalar>>,
        key_for: Option<&'a KeyFor<'a>>,
        (in_flight, hand_back, retain): (usize, bool, bool),
        beginning: Beginning<Scalar>,
    ) -> Self {
        Batch {
            store,
            key_for: key_for.unwrap_or(&|_| None),
            hand_back,
            retain,
            in_flight,
            flow: Mutex::new(Flow {
                permits: in_flight,
                stopped: false,
                verdict: beginning.verdict,
                replacement: Replacement::NotWanted,
                producer_done: false,
                spare: beginning.spare,
            }),
            changed: Condvar::new(),
            probation: Mutex::new(beginning.probation),
            awaiting: Mutex::new(beginning.awaiting),
            key: Mutex::new(beginning.key),
            replacing: Mutex::new(None),
        }
    }

    /// After the two threads: a probation still held (an error before the verdict) is
    /// dropped, which drops the recording unjudged; a successful batch keeps its spare
    /// storage (retention) and saves a recording it made trusted.
    pub(super) fn end(self, succeeded: bool, saving: Option<Saving<Scalar>>) {
        drop(lock(&self.probation).take());
        drop(lock(&self.replacing).take());
        let spare = std::mem::take(&mut lock(&self.flow).spare);
        let key = *lock(&self.key);
        match key {
            Some(key) if succeeded && self.retain => self.store.keep(&key, spare, self.in_flight),
            _ => drop(spare),
        }
        if let (true, Some(saving)) = (succeeded, saving) {
            saving.save();
        }
    }

    /// Waits for a permit; false when the consumer stopped.
    pub(super) fn acquire(&self) -> bool {
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

    pub(super) fn release(&self, spent: Option<ProverVectors<Scalar>>) {
        if spent.is_some() {
            self.store.count_handed_back();
        }
        let mut flow = lock(&self.flow);
        flow.permits += 1;
        flow.spare.extend(spent);
        drop(flow);
        self.changed.notify_all();
    }

    /// Waits for the probation's verdict; `None` when the consumer stopped.
    pub(super) fn verdict(&self) -> Option<Verdict> {
        let mut flow = lock(&self.flow);
        while flow.verdict == Verdict::Pending && !flow.stopped {
            flow = self
                .changed
                .wait(flow)
                .unwrap_or_else(PoisonError::into_inner);
        }
        (!flow.stopped).then_some(flow.verdict)
    }

    pub(super) fn decide(&self, verdict: Verdict) {
        lock(&self.flow).verdict = verdict;
        self.changed.notify_all();
    }

    pub(super) fn spare(&self) -> Option<ProverVectors<Scalar>> {
        lock(&self.flow).spare.pop()
    }

    /// Asks for a replacement of the file's recording (once); there is none to make when
    /// the producer has ended.
    pub(super) fn want_replacement(&self) {
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
    pub(super) fn replacement_wanted(&self) -> bool {
        matches!(lock(&self.flow).replacement, Replacement::Wanted)
    }

    pub(super) fn set_replacement(&self, replacement: Replacement<Scalar>) {
        lock(&self.flow).replacement = replacement;
        self.changed.notify_all();
    }

    /// Waits for the replacement; `None` when there will be none (or the producer ended).
    pub(super) fn replacement(&self) -> Option<Arc<Recording<Scalar>>> {
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
pub(super) struct StopOnDrop<'a, 'b, Scalar: PrimeField>(pub(super) &'a Batch<'b, Scalar>);

impl<Scalar: PrimeField> Drop for StopOnDrop<'_, '_, Scalar> {
    fn drop(&mut self) {
        lock(&self.0.flow).stopped = true;
        self.0.changed.notify_all();
    }
}

/// Tells a consumer waiting for a replacement that none will come, however the producer
/// ends.
pub(super) struct NoMoreMembers<'a, 'b, Scalar: PrimeField>(pub(super) &'a Batch<'b, Scalar>);

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
