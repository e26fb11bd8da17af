//! The proving side of a batch: each member proven in order, its proof verified when a
//! recording made it, the verdicts on recordings given, and members a rejected file's
//! recording made redone from their witnesses.

use std::sync::{mpsc, Arc};

use ff::PrimeField;

use super::batch::{lock, Batch, Verdict};
use super::{Made, Member, MemberProver, Produced};
use crate::groth16::store::Saving;
use crate::precompiled::{Recording, Witness};
use crate::prover::Proven;
use crate::vectors::ProverVectors;
use crate::Error;

/// The proving side of a batch.
pub(super) struct Consumer<'b, 'a, Scalar: PrimeField, P, F> {
    pub(super) batch: &'b Batch<'a, Scalar>,
    /// Makes the prover for the first vectors proven.
    pub(super) make_prover: F,
    pub(super) prover: Option<P>,
    pub(super) saving: &'b mut Option<Saving<Scalar>>,
}

impl<Scalar, P, F> Consumer<'_, '_, Scalar, P, F>
where
    Scalar: PrimeField,
    P: MemberProver<Scalar>,
    F: Fn(&ProverVectors<Scalar>) -> Result<P, Error>,
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
        let keep = self.batch.hand_back || matches!(made, Made::FromFile(_));
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
                self.batch.release(spent.filter(|_| self.batch.hand_back));
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
        let witness = Witness::unclassified(
            std::mem::take(&mut vectors.input_assignment),
            std::mem::take(&mut vectors.aux_assignment),
            constraints,
        );
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
