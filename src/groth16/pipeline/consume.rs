//! The proving side of a batch: each member proven in order, its proof verified when a
//! recording made it, the verdicts on recordings given, and members a recording failed
//! made again from their circuits.

use std::sync::{mpsc, Arc};

use ff::PrimeField;

use super::batch::{Batch, Verdict};
use super::produce::direct;
use super::{Made, Member, MemberProver, Produced, Remake};
use crate::error::Error;
use crate::groth16::store::Saving;
use crate::precompiled::Recording;
use crate::prover::Proven;
use crate::vectors::ProverVectors;

/// The proving side of a batch.
pub(super) struct Consumer<'b, 'a, Scalar: PrimeField, P, F, C> {
    pub(super) batch: &'b Batch<'a, Scalar>,
    /// Makes a member's circuit again, when the caller can.
    pub(super) remake: Option<&'b Remake<'b, C>>,
    /// Makes the prover for the first vectors proven.
    pub(super) make_prover: F,
    pub(super) prover: Option<P>,
    pub(super) saving: &'b mut Option<Saving<Scalar>>,
}

impl<Scalar, P, F, C> Consumer<'_, '_, Scalar, P, F, C>
where
    Scalar: PrimeField,
    P: MemberProver<Scalar>,
    F: Fn(&ProverVectors<Scalar>) -> Result<P, Error>,
    C: bellpepper_core::Circuit<Scalar>,
{
    /// Each member in order, its proof verified when its vectors came from a recording;
    /// the probation's verdict given on the first.
    pub(super) fn consume(
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
                .member(index, member, (r[index], s[index]))
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

    /// Member `index`'s proof. It holds its permit until its proof is returned, redone or
    /// not, so a redo never holds more than `k` members' vectors.
    fn member(
        &mut self,
        index: usize,
        member: Member<Scalar>,
        randomness: (Scalar, Scalar),
    ) -> Result<P::Proof, Error> {
        let (vectors, made) = match member {
            Member::Failed(made, why) => return self.redo(index, made, why, randomness),
            Member::Synthesized(vectors, made) => (vectors, made),
        };
        if made.evaluated().is_some() {
            let rejected = self.batch.trial(|trial| trial.verdict) == Verdict::Rejected;
            // Made from a recording that failed another member since, or giving vectors the
            // parameters do not fit (a damaged density): the recording's failure, as an
            // evaluation's would be.
            let fits = if rejected {
                Err(Error::RecordingRejected)
            } else {
                self.ready(&vectors)
            };
            if let Err(why) = fits {
                drop(vectors);
                return self.redo(index, made, why, randomness);
            }
        }
        self.ready(&vectors)?;
        let public = match made {
            Made::Direct => Vec::new(),
            _ => vectors.input_assignment[1..].to_vec(),
        };
        let (proof, spent) = self.prove(vectors, randomness, self.batch.settings.hand_back)?;
        if !made.verified() {
            self.batch.release(spent);
            return Ok(proof);
        }
        let verified = self.verifies(&proof, &public);
        match made {
            Made::Recording => self.judge_new(verified),
            Made::FromFile(recording) if verified => self.trust_file(&recording),
            Made::Trusted(_) if verified => {}
            made => {
                drop(spent);
                return self.redo(index, made, Error::RecordingRejected, randomness);
            }
        }
        self.batch.release(spent);
        Ok(proof)
    }

    /// Member `index`, which the recording it was made from failed (`why`), made again
    /// from its circuit: synthesized directly, proven and verified. When its proof
    /// verifies, the recording was wrong and is dropped with its file; when it does not,
    /// the member's own circuit or witness is, and the member fails. Without a way to make
    /// the circuit again (only recordings in memory serve then), the member fails.
    fn redo(
        &mut self,
        index: usize,
        made: Made<Scalar>,
        why: Error,
        randomness: (Scalar, Scalar),
    ) -> Result<P::Proof, Error> {
        let (Some(remake), Some(recording)) = (self.remake, made.evaluated()) else {
            if let Made::Trusted(_) = made {
                self.drop_recording(&made, "a proof made with it does not verify");
            }
            return Err(why);
        };
        let shape = recording.shape();
        let vectors = direct(remake(index)?, Some(shape))?;
        self.ready(&vectors)?;
        let public = vectors.input_assignment[1..].to_vec();
        let (proof, spent) = self.prove(vectors, randomness, false)?;
        drop(spent);
        if !self.verifies(&proof, &public) {
            // Not the recording's fault: a file on probation is given back unjudged, to
            // serve the next batch.
            if let Made::FromFile(_) = made {
                if let Some(probation) = self.batch.trial(|trial| trial.probation.take()) {
                    probation.abandon();
                }
            }
            return Err(Error::ProofRejected(why.chain()));
        }
        let reason = format!(
            "member {index}, made again directly, proves where it failed it ({})",
            why.chain()
        );
        self.drop_recording(&made, &reason);
        self.batch.store.redone();
        self.batch.release(None);
        Ok(proof)
    }

    /// Drops the recording `made` came from, which failed a member for `why`, once per
    /// batch: a file on probation is rejected (and removed), a trusted recording evicted
    /// (with the file it came from). Later members of the batch are synthesized directly.
    fn drop_recording(&mut self, made: &Made<Scalar>, why: &str) {
        let (first, probation, key) = self.batch.trial(|trial| {
            let first = trial.verdict != Verdict::Rejected;
            trial.verdict = Verdict::Rejected;
            (first, trial.probation.take(), trial.key)
        });
        match (first, probation, made) {
            (_, Some(probation), Made::FromFile(_)) => probation.reject(why),
            (true, _, _) => {
                if let Some(key) = key {
                    self.batch.store.evict(&key, why);
                }
            }
            _ => {}
        }
    }

    /// A proof made from the file's recording `recording` verified: the first decides its
    /// trust.
    fn trust_file(&mut self, recording: &Arc<Recording<Scalar>>) {
        if let Some(probation) = self.batch.trial(|trial| trial.probation.take()) {
            *self.saving = probation.trust(recording);
            self.batch.trial(|trial| trial.verdict = Verdict::Trusted);
        }
    }

    /// The verdict on a recording this batch made, from its first member's proof: trust
    /// (saved at the batch's end) or rejection. The member's vectors are direct synthesis's,
    /// so its proof is returned either way, as bellperson would.
    fn judge_new(&mut self, verified: bool) {
        let (probation, recording) = self
            .batch
            .trial(|trial| (trial.probation.take(), trial.recording.take()));
        let Some(probation) = probation else {
            return;
        };
        let verdict = match (verified, recording) {
            (true, Some(recording)) => {
                *self.saving = probation.trust(&recording);
                Verdict::Trusted
            }
            _ => {
                probation.reject("a proof made with it does not verify against its parameters");
                Verdict::Rejected
            }
        };
        self.batch.trial(|trial| trial.verdict = verdict);
    }
}
