//! The seam between the drop-ins' pipeline and a prover: what proving one member of a
//! batch takes, whichever prover (bellperson's algorithm through its GPU kernels, or
//! supraseal) a build proves on.

use crate::error::Error;
use crate::prover::Proven;
use crate::vectors::ProverVectors;

/// A prover made for a batch's first member, proving its members one at a time.
pub(crate) trait MemberProver<Scalar> {
    /// The release's proof.
    type Proof;
    /// Whether keeping a member's storage costs this prover nothing: the vectors stay alive
    /// through its proof either way. A batch then hands each member's storage to its next
    /// members, retention on or not.
    const KEEPS_FOR_FREE: bool;
    /// One member's proof, and its storage when `keep` (its input and aux values intact).
    /// A member laid out otherwise than the first is an error.
    fn prove(
        &mut self,
        vectors: ProverVectors<Scalar>,
        r: Scalar,
        s: Scalar,
        keep: bool,
    ) -> Result<Proven<Self::Proof, Scalar>, Error>;
    /// Whether `proof` verifies against the parameters' verifying key for these public
    /// inputs (the constant one excluded); false when the key is not known.
    fn verifies(&mut self, proof: &Self::Proof, public: &[Scalar]) -> bool;
    /// Whether `vectors` are laid out as the first member's, which the parameters fit.
    fn fits(&self, vectors: &ProverVectors<Scalar>) -> Result<(), Error>;
}
