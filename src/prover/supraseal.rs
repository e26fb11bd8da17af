//! Proving with supraseal, as bellperson 0.27's `cuda-supraseal` build does (curio's
//! default): each member's vectors are handed to `supraseal_c2::generate_groth16_proofs`
//! in place (a, b and c exactly the constraint count long, the densities as their `Lsb0`
//! words), one member per call.
//!
//! One member per call keeps at most the pipeline's `k` members alive (supraseal reads
//! every assignment of a call until its proofs are done), and it is also the fastest shape
//! for supraseal's CPU side (curio's figures are in docs/journal.md).
//!
//! supraseal's C++ side checks each circuit against the SRS with `assert`, which aborts the
//! process. bellperson's `SuprasealParameters` cannot say what the SRS holds, so the sizes
//! are checked here, before the call, against the head of the `.params` file the SRS was
//! loaded from when it is known ([`SuprasealParametersWithFile`]); the same head gives the
//! verifying key that recordings earn trust against. The errors supraseal reports (no CUDA
//! device, a failure on the device) come back as [`Error::Prover`].

use std::fmt;
use std::mem::size_of;
use std::panic::{catch_unwind, AssertUnwindSafe};
use std::path::Path;

use group::prime::PrimeCurveAffine;
use pairing::MultiMillerLoop;
use supraseal_c2::{Assignment, SRS};

use super::parameters_file::ParametersFile;
use super::release::{check_verifying_key, verifies};
use super::upstream::groth16::{ParameterSource, PreparedVerifyingKey, Proof, SuprasealParameters};
use crate::error::panic_message;
use crate::error::Error;
use crate::prover::{check_batch, check_query, Layout, MemberProver, Proven};
use crate::vectors::ProverVectors;
use crate::warn_once::warn_once;

/// What the supraseal provers take: bellperson's `&SuprasealParameters`, which is what
/// filecoin-proofs passes under `cuda-supraseal`, or `&`[`SuprasealParametersWithFile`],
/// which also knows the parameters' verifying key and query sizes.
pub trait SuprasealParams<E: MultiMillerLoop>: Sync {
    /// The SRS supraseal proves with.
    fn srs(&self) -> Option<&SRS>;
    /// The head of the `.params` file the SRS was loaded from, when it is known.
    fn file(&self) -> Option<&ParametersFile<E>>;
}

impl<E: MultiMillerLoop> SuprasealParams<E> for &SuprasealParameters<E> {
    fn srs(&self) -> Option<&SRS> {
        ParameterSource::<E>::get_supraseal_srs(self)
    }

    fn file(&self) -> Option<&ParametersFile<E>> {
        None
    }
}

/// bellperson's `SuprasealParameters` with the `.params` file they were loaded from: its
/// head gives the verifying key, so the drop-ins' recordings can earn trust (without it
/// every member is synthesized directly), and the query sizes, so a circuit that does not
/// fit is an error instead of supraseal's abort.
///
/// A fork patched by `scripts/patch-fork.sh` makes one in `CompoundProof::circuit_proofs`
/// from the path filecoin-proofs loaded the parameters from.
pub struct SuprasealParametersWithFile<'a, E: MultiMillerLoop> {
    params: &'a SuprasealParameters<E>,
    file: Option<ParametersFile<E>>,
}

impl<'a, E: MultiMillerLoop> SuprasealParametersWithFile<'a, E> {
    /// `params`, loaded from the `.params` file at `path`. A file whose head cannot be read
    /// is said once in the log and leaves the parameters as bellperson's alone: proofs are
    /// still made, without recordings.
    pub fn new(params: &'a SuprasealParameters<E>, path: impl AsRef<Path>) -> Self {
        let file = match ParametersFile::read(path.as_ref()) {
            Ok(file) => Some(file),
            Err(e) => {
                warn_once(
                    format!("parameters file {}", path.as_ref().display()),
                    || {
                        format!(
                            "synthpool: cannot read the head of the parameters file ({}); \
                         synthesizing directly, sizes unchecked before supraseal",
                            e.chain()
                        )
                    },
                );
                None
            }
        };
        SuprasealParametersWithFile { params, file }
    }

    /// The file's head, if it could be read.
    pub fn file(&self) -> Option<&ParametersFile<E>> {
        self.file.as_ref()
    }
}

impl<E: MultiMillerLoop> fmt::Debug for SuprasealParametersWithFile<'_, E> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("SuprasealParametersWithFile")
            .field("file", &self.file.as_ref().map(ParametersFile::path))
            .finish_non_exhaustive()
    }
}

impl<E: MultiMillerLoop> SuprasealParams<E> for &SuprasealParametersWithFile<'_, E> {
    fn srs(&self) -> Option<&SRS> {
        ParameterSource::<E>::get_supraseal_srs(&self.params)
    }

    fn file(&self) -> Option<&ParametersFile<E>> {
        self.file.as_ref()
    }
}

/// That the engine's types are laid out as supraseal reads and writes them: BLS12-381
/// scalars of 32 bytes (blstrs' Montgomery form), affine points of 96 and 192 bytes, and
/// 64-bit density words. Anything else would have supraseal read and write past them.
fn check_memory_layout<E: MultiMillerLoop>() -> Result<(), Error> {
    let fits = size_of::<E::Fr>() == 32
        && size_of::<E::G1Affine>() == 96
        && size_of::<E::G2Affine>() == 192
        && size_of::<Proof<E>>() == 384
        && usize::BITS == 64;
    if fits {
        Ok(())
    } else {
        Err(Error::Prover(
            "supraseal proves on BLS12-381 (blstrs) with 64-bit words only".into(),
        ))
    }
}

/// What supraseal asserts of a circuit against the SRS, asked of the file's head instead,
/// with bellperson's CPU prover's rule for H (one base per coefficient of the quotient).
fn check_against_file<E: MultiMillerLoop>(
    file: &ParametersFile<E>,
    layout: &Layout,
) -> Result<(), Error> {
    let shape = layout.shape;
    check_verifying_key(file.verifying_key(), shape.inputs)?;
    let [h, l, a, b_g1, b_g2] = file.query_sizes();
    let b = layout.b_input + layout.b_aux;
    check_query("H", (h, 0), layout.domain() - 1, true)?;
    check_query("L", (l, 0), shape.aux, true)?;
    check_query("A", (a, 0), shape.inputs + layout.a_aux, true)?;
    check_query("B in G1", (b_g1, 0), b, true)?;
    check_query("B in G2", (b_g2, 0), b, true)
}

/// The raw parts of `vectors` supraseal reads, borrowed: nothing is copied.
fn assignment_of<Scalar>(vectors: &ProverVectors<Scalar>) -> Assignment<Scalar> {
    Assignment {
        a_aux_density: vectors.a_aux_density.bv.as_raw_slice().as_ptr(),
        a_aux_bit_len: vectors.a_aux_density.bv.len(),
        a_aux_popcount: vectors.a_aux_density.get_total_density(),
        b_inp_density: vectors.b_input_density.bv.as_raw_slice().as_ptr(),
        b_inp_bit_len: vectors.b_input_density.bv.len(),
        b_inp_popcount: vectors.b_input_density.get_total_density(),
        b_aux_density: vectors.b_aux_density.bv.as_raw_slice().as_ptr(),
        b_aux_bit_len: vectors.b_aux_density.bv.len(),
        b_aux_popcount: vectors.b_aux_density.get_total_density(),
        a: vectors.a.as_ptr(),
        b: vectors.b.as_ptr(),
        c: vectors.c.as_ptr(),
        abc_size: vectors.a.len(),
        inp_assignment_data: vectors.input_assignment.as_ptr(),
        inp_assignment_size: vectors.input_assignment.len(),
        aux_assignment_data: vectors.aux_assignment.as_ptr(),
        aux_assignment_size: vectors.aux_assignment.len(),
    }
}

/// One batch's proving on supraseal: the layout every member shares, checked once.
pub(crate) struct SrsProver<'s, E: MultiMillerLoop> {
    srs: &'s SRS,
    layout: Layout,
    file: Option<&'s ParametersFile<E>>,
    prepared: Option<PreparedVerifyingKey<E>>,
}

impl<'s, E: MultiMillerLoop> SrsProver<'s, E> {
    /// The prover of members laid out as `first`, checked against the parameters' file
    /// when it is known.
    pub(crate) fn new(
        params: &'s impl SuprasealParams<E>,
        first: &ProverVectors<E::Fr>,
    ) -> Result<Self, Error> {
        check_memory_layout::<E>()?;
        let srs = params
            .srs()
            .ok_or_else(|| Error::Prover("the parameters hold no supraseal SRS".into()))?;
        let layout = Layout::of(first)?;
        let file = params.file();
        if let Some(file) = file {
            check_against_file(file, &layout)?;
        }
        Ok(SrsProver {
            srs,
            layout,
            file,
            prepared: None,
        })
    }
}

impl<E: MultiMillerLoop> MemberProver<E::Fr> for SrsProver<'_, E> {
    type Proof = Proof<E>;
    /// supraseal reads the vectors in place, so they are alive until the proof ends anyway.
    const KEEPS_FOR_FREE: bool = true;

    fn fits(&self, vectors: &ProverVectors<E::Fr>) -> Result<(), Error> {
        self.layout.check(vectors)
    }

    /// Proves on supraseal, one member per call; kept storage is the vectors themselves,
    /// untouched (supraseal only reads them).
    fn prove(
        &mut self,
        vectors: ProverVectors<E::Fr>,
        r: E::Fr,
        s: E::Fr,
        keep: bool,
    ) -> Result<Proven<Proof<E>, E::Fr>, Error> {
        self.layout.check(&vectors)?;
        let assignments = [assignment_of(&vectors)];
        let mut proofs = [Proof::<E> {
            a: E::G1Affine::identity(),
            b: E::G2Affine::identity(),
            c: E::G1Affine::identity(),
        }];
        let srs = self.srs;
        catch_unwind(AssertUnwindSafe(|| {
            supraseal_c2::generate_groth16_proofs(&assignments, &[r], &[s], &mut proofs, srs)
        }))
        .map_err(|panic| Error::Prover(format!("supraseal: {}", panic_message(&*panic))))?;
        let [proof] = proofs;
        Ok((proof, keep.then_some(vectors)))
    }

    /// Verifies against the key in the parameters' file; false without the file.
    fn verifies(&mut self, proof: &Proof<E>, public: &[E::Fr]) -> bool {
        match self.file {
            Some(file) => verifies(file.verifying_key(), &mut self.prepared, proof, public),
            None => false,
        }
    }
}

/// Groth16 proofs for `assignments` on supraseal, with randomness `r[i]`, `s[i]` for the
/// i-th: the proofs bellperson's `cuda-supraseal` prover makes for the same circuits and
/// randomness. One member per call to supraseal; all must be of one circuit, the one the
/// parameters were made for.
pub fn prove_on_supraseal<E, S>(
    params: S,
    assignments: Vec<ProverVectors<E::Fr>>,
    r: &[E::Fr],
    s: &[E::Fr],
) -> Result<Vec<Proof<E>>, Error>
where
    E: MultiMillerLoop,
    S: SuprasealParams<E>,
{
    let Some(first) = check_batch(&assignments, r, s)? else {
        return Ok(Vec::new());
    };
    let mut prover = SrsProver::new(&params, first)?;
    assignments
        .into_iter()
        .zip(r.iter().zip(s))
        .enumerate()
        .map(|(index, (vectors, (&r, &s)))| {
            prover
                .prove(vectors, r, s, false)
                .map(|(proof, _)| proof)
                .map_err(|e| e.member(index))
        })
        .collect()
}
