//! A batch proven in bounded memory: one thread synthesizes the members in order while the
//! caller's thread proves them in order, with at most `k` members holding synthesized
//! vectors at any moment (a member holds them from the start of its synthesis to the end of
//! its proof). The parameters' queries are read once, for the first member. A proof hands
//! its member's storage back for the next members when the prover keeps it for free
//! (supraseal reads the vectors in place) or retention is on: a member evaluated from a
//! recording then writes over pages already faulted in.
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

mod batch;
mod consume;
mod produce;

use std::sync::{mpsc, Arc};

use bellpepper_core::Circuit;
use ff::PrimeField;

use self::batch::{Batch, StopOnDrop};
use self::consume::Consumer;
use self::produce::{produce, Plan};
use super::key::KeyFor;
use super::store::store;
use crate::precompiled::Recording;
use crate::prover::MemberProver;
use crate::vectors::ProverVectors;
use crate::Error;

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

/// A member synthesized, or why not.
type Produced<Scalar> = Result<Member<Scalar>, Error>;

/// Proves `circuits` with randomness `r[i]`, `s[i]`, at most `in_flight` members holding
/// vectors at once; `prover` is made for the first member's vectors. `key_for` is `None`
/// when the parameters can give no key at all: the batch is synthesized directly.
/// `retain`: retention is on (each proof hands its storage back for the next members, and
/// the batch's for the next batch); a prover that keeps storage for free hands it back
/// within the batch either way.
pub(crate) fn prove_batch<Scalar, C, P>(
    circuits: Vec<C>,
    (r, s): (&[Scalar], &[Scalar]),
    key_for: Option<&KeyFor<'_>>,
    make_prover: impl Fn(&ProverVectors<Scalar>) -> Result<P, Error>,
    (in_flight, retain): (usize, bool),
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
    let store = store::<Scalar>();
    let start = match key_for {
        Some(key_for) => store.begin(key_for),
        None => store.begin_unkeyed(),
    };
    let (plan, beginning) = Plan::begin(&store, start, in_flight.min(count));
    let hand_back = retain || P::KEEPS_FOR_FREE;
    let batch = Batch::new(store, key_for, (in_flight, hand_back, retain), beginning);
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
