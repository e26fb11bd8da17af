//! One batch's state, shared by its two threads under one lock: the permits that bound the
//! members holding vectors, the storage proofs hand back, and the recording on trial.

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

/// The recording the batch judges or evaluates, and what it knows of its structure.
pub(super) struct Trial<Scalar: PrimeField> {
    /// The batch's hold on its structure's probation, until the verdict.
    pub(super) probation: Option<Probation<Scalar>>,
    pub(super) verdict: Verdict,
    /// The recording on probation, once made or opened.
    pub(super) recording: Option<Arc<Recording<Scalar>>>,
    /// The structure's key, once known: where kept storage is filed, what a recording that
    /// fails a member is evicted under.
    pub(super) key: Option<Key>,
}

impl<Scalar: PrimeField> Trial<Scalar> {
    /// Nothing on trial, the structure's key `key` if known.
    pub(super) fn none(key: Option<Key>) -> Self {
        Trial {
            probation: None,
            verdict: Verdict::Unjudged,
            recording: None,
            key,
        }
    }
}

/// How a batch runs, as its caller set it.
#[derive(Clone, Copy)]
pub(super) struct Settings {
    /// Members that may hold vectors at once: also how many sets of storage it keeps.
    pub(super) in_flight: usize,
    /// Proofs hand their storage back for the batch's next members: retention is on, or
    /// the prover keeps it for free.
    pub(super) hand_back: bool,
    /// Retention is on: the batch's spare storage is kept for the next batch.
    pub(super) retain: bool,
    /// The caller can make a member's circuit again: a member a recording fails is then
    /// synthesized directly instead of failing the batch.
    pub(super) remakes: bool,
}

/// What the two threads share, under one lock.
struct Flow<Scalar: PrimeField> {
    /// Members that may still start synthesizing.
    permits: usize,
    /// The consumer has stopped: the producer must too.
    stopped: bool,
    /// Storage handed back by proofs, for the next members.
    spare: Vec<ProverVectors<Scalar>>,
    trial: Trial<Scalar>,
}

/// One batch: what it was started with, and what its two threads share.
pub(super) struct Batch<'a, Scalar: PrimeField> {
    pub(super) store: Arc<Store<Scalar>>,
    /// The parameters' key for an input count (`None` for every count when they have none).
    pub(super) key_for: &'a KeyFor<'a>,
    pub(super) settings: Settings,
    flow: Mutex<Flow<Scalar>>,
    changed: Condvar,
}

/// How a batch starts, as the store said: the recording on trial, and storage a previous
/// batch kept.
pub(super) struct Beginning<Scalar: PrimeField> {
    pub(super) trial: Trial<Scalar>,
    pub(super) spare: Vec<ProverVectors<Scalar>>,
}

fn lock<T>(mutex: &Mutex<T>) -> MutexGuard<'_, T> {
    mutex.lock().unwrap_or_else(PoisonError::into_inner)
}

impl<'a, Scalar: PrimeField> Batch<'a, Scalar> {
    /// A batch begun as `beginning` says, for the structure `key_for` names (`None`: the
    /// parameters give no key).
    pub(super) fn new(
        store: Arc<Store<Scalar>>,
        key_for: Option<&'a KeyFor<'a>>,
        settings: Settings,
        beginning: Beginning<Scalar>,
    ) -> Self {
        Batch {
            store,
            key_for: key_for.unwrap_or(&|_| None),
            settings,
            flow: Mutex::new(Flow {
                permits: settings.in_flight,
                stopped: false,
                spare: beginning.spare,
                trial: beginning.trial,
            }),
            changed: Condvar::new(),
        }
    }

    /// After the two threads: a probation still held (an error before the verdict) is
    /// dropped, which drops the recording unjudged; a successful batch keeps its spare
    /// storage (retention) and saves a recording it made trusted.
    pub(super) fn end(self, succeeded: bool, saving: Option<Saving<Scalar>>) {
        let flow = self
            .flow
            .into_inner()
            .unwrap_or_else(PoisonError::into_inner);
        drop(flow.trial.probation);
        match flow.trial.key {
            Some(key) if succeeded && self.settings.retain => {
                self.store.keep(&key, flow.spare, self.settings.in_flight)
            }
            _ => drop(flow.spare),
        }
        if let (true, Some(saving)) = (succeeded, saving) {
            saving.save();
        }
    }

    /// Runs `f` on the trial, under the lock; waiters look again afterwards.
    pub(super) fn trial<R>(&self, f: impl FnOnce(&mut Trial<Scalar>) -> R) -> R {
        let result = f(&mut lock(&self.flow).trial);
        self.changed.notify_all();
        result
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

    /// A member's permit given back, with its storage when a proof hands it back.
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
        while flow.trial.verdict == Verdict::Pending && !flow.stopped {
            flow = self
                .changed
                .wait(flow)
                .unwrap_or_else(PoisonError::into_inner);
        }
        (!flow.stopped).then_some(flow.trial.verdict)
    }

    pub(super) fn spare(&self) -> Option<ProverVectors<Scalar>> {
        lock(&self.flow).spare.pop()
    }

    /// The consumer has stopped, however it ended: the producer stops too.
    pub(super) fn stop(&self) {
        lock(&self.flow).stopped = true;
        self.changed.notify_all();
    }
}

/// Stops the producer when the consumer ends, however it ends.
pub(super) struct StopOnDrop<'a, 'b, Scalar: PrimeField>(pub(super) &'a Batch<'b, Scalar>);

impl<Scalar: PrimeField> Drop for StopOnDrop<'_, '_, Scalar> {
    fn drop(&mut self) {
        self.0.stop();
    }
}
