//! A batch proven in bounded memory: one thread synthesizes the members in order while the
//! caller's thread proves them in order, with at most `k` members holding synthesized
//! vectors at any moment (a member holds them from the start of its synthesis to the end of
//! its proof). The parameters' queries are read once, for the first member. A proof hands
//! its member's storage back for the next members when the prover keeps it for free
//! (supraseal reads the vectors in place) or retention is on: a member evaluated from a
//! recording then writes over pages already faulted in.
//!
//! How each member is synthesized follows the structure's state in the store:
//! - from a trusted recording: verified;
//! - the first member of a structure the process has not seen, and no file holds, is
//!   recorded while synthesized directly; later members wait for the verdict on its proof,
//!   then evaluate the recording (trusted) or are synthesized directly (rejected);
//! - a recording opened from a cache file serves every member at once, without waiting
//!   for a verdict: each member's proof is verified, and the first one's verdict decides
//!   the file's trust;
//! - otherwise directly.
//!
//! A member a recording fails (its evaluation, the parameters' check of its vectors, or
//! its proof's verification) is made again from its circuit when the caller can make it
//! ([`Remake`]): synthesized directly, proven and verified. When that proof verifies, the
//! recording was wrong: it is dropped, its file removed, and the rest of the batch is
//! synthesized directly. When it does not, the circuit or its witness is wrong, and the
//! member fails with [`Error::ProofRejected`] (bellperson would return that proof). A
//! caller that cannot make a circuit again is never given a recording that can fail where
//! bellperson would prove: no cache file, no recording read in place from one.
//!
//! A member whose synthesis fails (or panics) fails the batch with its index; no later
//! member is proven, and the synthesis thread stops.

mod batch;
mod consume;
mod produce;
#[cfg(test)]
mod tests;

use std::sync::{mpsc, Arc};

use bellpepper_core::Circuit;
use ff::PrimeField;

use self::batch::{Batch, Settings, StopOnDrop};
use self::consume::Consumer;
use self::produce::{produce, Plan};
use super::key::KeyFor;
use super::store::store;
use crate::error::Error;
use crate::precompiled::Recording;
use crate::prover::MemberProver;
use crate::vectors::ProverVectors;

/// How a member's vectors were made, which says what its proof's verification decides.
#[derive(Clone)]
enum Made<Scalar: PrimeField> {
    /// Directly, as bellperson makes them: no verification.
    Direct,
    /// Directly while recording: the proof's verdict is the new recording's.
    Recording,
    /// From a trusted recording: verified, and a failure drops it.
    Trusted(Arc<Recording<Scalar>>),
    /// From a recording opened from a cache file, on probation in this batch: verified; the
    /// first verdict is the file's; a failure rejects it.
    FromFile(Arc<Recording<Scalar>>),
}

impl<Scalar: PrimeField> Made<Scalar> {
    fn verified(&self) -> bool {
        !matches!(self, Made::Direct)
    }

    /// The recording the member was evaluated from, if it was.
    fn evaluated(&self) -> Option<&Arc<Recording<Scalar>>> {
        match self {
            Made::Trusted(recording) | Made::FromFile(recording) => Some(recording),
            Made::Direct | Made::Recording => None,
        }
    }
}

/// A member as the synthesis thread hands it over.
enum Member<Scalar: PrimeField> {
    /// Its vectors, and how they were made.
    Synthesized(ProverVectors<Scalar>, Made<Scalar>),
    /// Evaluating the recording it was to be made from failed with this error: it is made
    /// again from its circuit.
    Failed(Made<Scalar>, Error),
}

/// A member synthesized, or why not.
type Produced<Scalar> = Result<Member<Scalar>, Error>;

/// Makes member `index` of the batch's circuits again.
pub(crate) type Remake<'a, C> = dyn Fn(usize) -> Result<C, Error> + Sync + 'a;

/// What a batch is proven with: the randomness of each member's proof.
pub(crate) struct Randomness<'a, Scalar> {
    pub(crate) r: &'a [Scalar],
    pub(crate) s: &'a [Scalar],
}

/// How a batch may hold memory: members in flight, and whether retention is on.
#[derive(Clone, Copy)]
pub(crate) struct Holding {
    pub(crate) in_flight: usize,
    pub(crate) retain: bool,
}

/// Proves `circuits` with `randomness`, at most `holding.in_flight` members holding vectors
/// at once; `prover` is made for the first member's vectors. `key_for` is `None` when the
/// parameters can give no key at all: the batch is synthesized directly. `remake`, when the
/// caller has it, makes a member's circuit again after a recording failed it. With
/// `holding.retain`, each proof hands its storage back for the next members, and the
/// batch's for the next batch; a prover that keeps storage for free hands it back within
/// the batch either way.
pub(crate) fn prove_batch<Scalar, C, P>(
    circuits: Vec<C>,
    remake: Option<&Remake<'_, C>>,
    randomness: Randomness<'_, Scalar>,
    key_for: Option<&KeyFor<'_>>,
    make_prover: impl Fn(&ProverVectors<Scalar>) -> Result<P, Error>,
    holding: Holding,
) -> Result<Vec<P::Proof>, Error>
where
    Scalar: PrimeField,
    C: Circuit<Scalar> + Send,
    P: MemberProver<Scalar>,
{
    let count = circuits.len();
    let Randomness { r, s } = randomness;
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
    let store = store::<Scalar>();
    let remakes = remake.is_some();
    let start = match key_for {
        Some(key_for) => store.begin(key_for, remakes),
        None => store.begin_unkeyed(),
    };
    let (plan, beginning) = Plan::begin(&store, start, holding.in_flight.min(count));
    let settings = Settings {
        in_flight: holding.in_flight,
        hand_back: holding.retain || P::KEEPS_FOR_FREE,
        retain: holding.retain,
        remakes,
    };
    let batch = Batch::new(store, key_for, settings, beginning);
    let (sender, receiver) = mpsc::channel::<Produced<Scalar>>();
    let mut saving = None;
    let result = std::thread::scope(|scope| {
        let producer = scope.spawn(|| produce(circuits, plan, &batch, sender));
        let stop = StopOnDrop(&batch);
        let result = Consumer {
            batch: &batch,
            remake,
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
