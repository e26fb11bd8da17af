//! Pre-compiled constraint evaluation: record a circuit's R1CS once into dictionary-coded
//! CSR matrices, then synthesize each proof by witness generation (value closures only) and
//! sparse evaluation, instead of rebuilding every linear combination.
//!
//! The result is [`ProverVectors`] equal, field for field and bit for bit, to what
//! [`crate::synthesize`] produces for the same circuit: zero terms are dropped when recording
//! exactly where evaluation skips them, and densities follow the same rules.
//!
//! What a recording promises about a witness it is given (through [`Recording::evaluate`],
//! [`Recording::evaluate_to`], [`Recording::synthesize`] or [`ProvingBuffers`]):
//! - The witness must have the recorded numbers of inputs, aux variables and constraints
//!   (the witness generator counts `enforce` calls), and every recorded row must hold for
//!   it, `A·w * B·w = C·w`; otherwise the result is an error naming what differs or the
//!   first row that fails. (Rows that state a value, `(Σ c_i x_i) · 1 = v`, are checked
//!   together by a random linear combination drawn per recording: a wrong one passes with
//!   probability at most rows / 2^128, below 2^-96 for any recording the format holds;
//!   when the combination fails, every such row is summed and checked exactly.)
//! - What comes back is the recorded rows evaluated at the witness. For the recorded
//!   circuit that is exactly its direct synthesis. For another circuit with the same counts
//!   whose witness happens to satisfy every recorded row (one that differs only in a
//!   coefficient, or in which side of a row a factor sits), it is the *recorded* circuit's
//!   vectors at that witness, not that circuit's own: they satisfy the recorded circuit, so
//!   a proof against the recorded circuit's parameters from them verifies, but they are not
//!   what direct synthesis of the other circuit gives. Telling such circuits apart would
//!   take building every linear combination, which is what a recording exists to avoid.
//!
//! The drop-in batch provers build on this and add what a prover needs: every proof they
//! make from a recording's vectors is verified against the parameters' key before it is
//! returned.
//!
//! ```no_run
//! # fn demo<C: bellpepper_core::Circuit<blstrs::Scalar> + Clone>(circuit: C) -> Result<(), synthpool::Error> {
//! use synthpool::precompiled::Recording;
//! let recording = Recording::record(circuit.clone())?;        // once per circuit shape
//! recording.save(std::path::Path::new("porep.rec"))?;         // optional, versioned, checked
//! let witness = recording.witness(circuit)?;                  // per proof: values only
//! let vectors = recording.evaluate(witness)?;                 // A·w, B·w, C·w (rayon)
//! # Ok(()) }
//! ```

// The way from a circuit to its vectors: `record` makes the rows, `file` keeps them on disk
// (in `storage`: memory, or a mapped file), `witness` generates a circuit's values, `rows`
// is what evaluation reads of the recording, and `kernel` evaluates the rows at the witness.
mod buffers;
mod evaluated;
mod file;
pub(crate) mod kernel;
pub(crate) mod record;
pub(crate) mod rows;
pub(crate) mod storage;
pub(crate) mod witness;

use bellpepper_core::{Circuit, ConstraintSystem};
use ec_gpu_gen::multiexp_cpu::DensityTracker;
use ff::PrimeField;

pub use self::buffers::ProvingBuffers;
pub use self::evaluated::Evaluated;
pub use self::file::FORMAT_VERSION;
#[cfg(any(feature = "bellperson-0.26", feature = "bellperson-0.27"))]
pub(crate) use self::file::{Key, KEY_LEN, TEMPORARY_SUFFIX};
pub use self::witness::generator::Witness;

use self::record::companion::{Companion, Keeping, StructureOnly};
use self::record::recorder::Recorder;
use self::rows::density::Densities;
use self::rows::matrix::Matrix;

use self::rows::claims::Claims;
use self::rows::coefficients::CoefficientTable;
use self::rows::field_rows::FieldRows;
use self::rows::layout::MatrixLayout;
use self::rows::matrix::validate;
use self::witness::kinds::ValueKinds;
use self::witness::parts::Parts;
use self::witness::spread::SpreadWitness;
use crate::assignment::ProvingAssignment;
use crate::error::{Error, FileProblem};
use crate::protocol::lay_out_for_proving;
use crate::shape::Shape;
use crate::vectors::{reserve, ProverVectors};

/// A circuit's recorded constraint matrices, ready to evaluate witnesses against.
pub struct Recording<Scalar: PrimeField> {
    inputs: usize,
    aux: usize,
    matrices: [Matrix; 3],
    /// The dictionary and what evaluation needs of each entry.
    coefficients: CoefficientTable<Scalar>,
    /// Per matrix, what evaluation derives from it: what each block of rows is made of
    /// (which of the kernel's loops sums it; B is nearly all single terms of coefficient
    /// 1), and the runs of powers of two in MultiEq's rows.
    layouts: [MatrixLayout; 3],
    /// `a_aux`, `b_input`, `b_aux`, as the recording implies them.
    densities: Densities,
    /// The rows that state a value, checked together instead of summed.
    claims: Claims<Scalar>,
    /// The stretches of constraints evaluated in the field a constraint at a time.
    field_rows: FieldRows,
    /// Where the parts the circuit spread over threads put their aux values, for a witness
    /// generated on threads as well.
    parts: Parts,
    /// The file the arrays are read from in place, when opened by [`Recording::map_unverified`]:
    /// checked after every evaluation.
    #[cfg(all(unix, target_pointer_width = "64", target_endian = "little"))]
    mapping: Option<std::sync::Arc<storage::mapping::Mapping>>,
}

/// A summary: the matrices are gigabytes on a real circuit.
impl<Scalar: PrimeField> std::fmt::Debug for Recording<Scalar> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Recording")
            .field("shape", &self.shape())
            .field("nonzeros", &self.nonzeros())
            .field("dictionary", &self.dictionary_len())
            .finish_non_exhaustive()
    }
}

impl<Scalar: PrimeField> Recording<Scalar> {
    /// Builds a recording from parts that passed [`validate`], deriving the coefficient
    /// table and the densities.
    fn from_validated(
        inputs: usize,
        aux: usize,
        matrices: [Matrix; 3],
        dictionary: Vec<Scalar>,
        parts: Parts,
    ) -> Result<Self, Error> {
        // The derivations run on the pool's threads, each beside those it does not read: a
        // first member's recording waits on them, and one after another they were a fifth
        // of its time on two threads.
        let coefficients = CoefficientTable::new(dictionary);
        // Invariant 4 of the matrices: at most 2^31 aux variables.
        let one = aux as u32;
        let (densities, claims) = rayon::join(
            || Densities::of(&matrices, inputs, aux),
            || match coefficients.integers {
                Some(_) => Claims::new(&matrices, one, coefficients.dictionary(), |id| {
                    coefficients.is_general(id)
                }),
                None => Claims::default(),
            },
        );
        let densities = densities?;
        // Claims are of A's rows.
        let layout = |m: usize| {
            let claimed = |row: usize| m == 0 && claims.stated(row).is_some();
            MatrixLayout::new(&matrices[m], &coefficients, one, &claimed)
        };
        let field_rows = || {
            FieldRows::new(
                &matrices,
                one,
                |id| coefficients.is_general(id),
                |row| claims.stated(row).is_some(),
            )
        };
        let ((a, b), (c, field_rows)) = rayon::join(
            || rayon::join(|| layout(0), || layout(1)),
            || rayon::join(|| layout(2), field_rows),
        );
        let layouts = [a, b, c];
        Ok(Recording {
            claims,
            field_rows,
            inputs,
            aux,
            coefficients,
            layouts,
            matrices,
            densities,
            parts,
            #[cfg(all(unix, target_pointer_width = "64", target_endian = "little"))]
            mapping: None,
        })
    }

    /// What evaluation reads of the recording.
    fn rows(&self) -> kernel::RecordedRows<'_, Scalar> {
        kernel::RecordedRows {
            matrices: &self.matrices,
            layouts: &self.layouts,
            field_rows: &self.field_rows,
            table: &self.coefficients,
        }
    }

    /// Runs `evaluate`, which reads the recording's arrays: for a recording read in place
    /// from a file, a panic (an index the file put out of bounds) is an error naming the
    /// file, and so is a file that changed under the mapping meanwhile, whatever
    /// `evaluate` returned.
    fn in_place<R>(&self, evaluate: impl FnOnce() -> R) -> Result<R, Error> {
        #[cfg(all(unix, target_pointer_width = "64", target_endian = "little"))]
        if let Some(mapping) = &self.mapping {
            let reading = storage::contained::Reading::begin();
            let outcome = std::panic::catch_unwind(std::panic::AssertUnwindSafe(evaluate));
            drop(reading);
            self.still_as_mapped()?;
            #[cfg(test)]
            tests::after_last_check();
            return outcome.map_err(|panic| {
                Error::file(
                    mapping.path(),
                    FileProblem::Inconsistent(crate::error::panic_message(panic.as_ref())),
                )
            });
        }
        Ok(evaluate())
    }

    /// Whether the file a recording is read from in place (if it is) is still what was
    /// mapped: an error naming it otherwise.
    fn still_as_mapped(&self) -> Result<(), Error> {
        #[cfg(all(unix, target_pointer_width = "64", target_endian = "little"))]
        if let Some(mapping) = &self.mapping {
            return mapping.unchanged();
        }
        Ok(())
    }

    /// Checks the invariants of [`Matrix`]'s module and of the parts, and builds the
    /// recording; what breaks one is reported as `broken(message)`.
    fn checked(
        inputs: usize,
        aux: usize,
        matrices: [Matrix; 3],
        dictionary: Vec<Scalar>,
        parts: Parts,
        broken: impl FnOnce(String) -> Error,
    ) -> Result<Self, Error> {
        validate(inputs, aux, &matrices, &dictionary)
            .and_then(|()| parts.validate(aux))
            .map_err(broken)?;
        Self::from_validated(inputs, aux, matrices, dictionary, parts)
    }

    /// Records `circuit` (its witness values are not needed and not computed) as the prover
    /// lays it out: the constant one input, the circuit, then `input * 0 = 0` per input.
    pub fn record<C: Circuit<Scalar>>(circuit: C) -> Result<Self, Error> {
        Self::record_with::<StructureOnly, C>(circuit)?.0
    }

    /// Records `circuit` and computes its witness in the same pass: the first proof of a
    /// new structure pays one synthesis, not two.
    pub fn record_with_witness<C: Circuit<Scalar>>(
        circuit: C,
    ) -> Result<(Self, Witness<Scalar>), Error> {
        let (recording, Keeping(witness)) =
            Self::record_with::<Keeping<Witness<Scalar>>, C>(circuit)?;
        Ok((recording?, witness))
    }

    /// Records `circuit` while synthesizing it directly: the vectors are what
    /// [`crate::synthesize`] returns, whether or not the circuit could be recorded (a
    /// circuit the format cannot hold is still synthesized).
    pub(crate) fn record_and_synthesize<C: Circuit<Scalar>>(
        circuit: C,
    ) -> Result<(Result<Self, Error>, ProverVectors<Scalar>), Error> {
        let (recording, Keeping(assignment)) =
            Self::record_with::<Keeping<ProvingAssignment<Scalar>>, C>(circuit)?;
        Ok((recording, assignment.into_vectors()?))
    }

    /// Synthesizes `circuit` directly and records it in the same pass, for a caller that
    /// must prove now and would use a recording from the next proof on: the vectors are what
    /// [`crate::synthesize`] returns; the recording comes with them only once it has been
    /// checked to reproduce them exactly, else the reason it cannot serve (a circuit the
    /// format cannot hold, or one it does not reproduce). An error only when the circuit
    /// itself fails, as direct synthesis would.
    pub fn synthesize_and_record<C: Circuit<Scalar>>(
        circuit: C,
    ) -> Result<(ProverVectors<Scalar>, Result<Self, Error>), Error> {
        let (recording, vectors) = Self::record_and_synthesize(circuit)?;
        let checked = recording.and_then(|recording| {
            recording.reproduces(&vectors)?;
            Ok(recording)
        });
        Ok((vectors, checked))
    }

    /// One pass of `circuit` through a recorder with `V` as its companion: an error when the
    /// circuit itself fails; else the recording (or why it was refused) and the companion.
    fn record_with<V: Companion<Scalar>, C: Circuit<Scalar>>(
        circuit: C,
    ) -> Result<(Result<Self, Error>, V), Error> {
        let mut recorder = <Recorder<Scalar, V> as ConstraintSystem<Scalar>>::new();
        if let Err(error) = lay_out_for_proving(&mut recorder, circuit) {
            // Running out of memory reaches the circuit as an I/O error; it is ours.
            return Err(recorder.memory_error().unwrap_or(error.into()));
        }
        let (recorded, companion) = recorder.finish();
        let recording = recorded.and_then(|recorded| {
            Self::checked(
                recorded.inputs,
                recorded.aux,
                recorded.matrices,
                recorded.dictionary,
                recorded.parts,
                Error::InvalidRecording,
            )
        });
        Ok((recording, companion))
    }

    /// The recorded shape.
    pub fn shape(&self) -> Shape {
        Shape {
            inputs: self.inputs,
            aux: self.aux,
            constraints: self.matrices[0].rows(),
        }
    }

    /// Whether the recording is read in place from a file ([`Self::map_unverified`]), which can
    /// change under it: an evaluation that sees a change is an error.
    #[cfg(any(feature = "bellperson-0.26", feature = "bellperson-0.27"))]
    pub(crate) fn is_mapped(&self) -> bool {
        #[cfg(all(unix, target_pointer_width = "64", target_endian = "little"))]
        return self.mapping.is_some();
        #[cfg(not(all(unix, target_pointer_width = "64", target_endian = "little")))]
        false
    }

    /// Nonzero terms in A, B and C together.
    pub fn nonzeros(&self) -> usize {
        self.matrices.iter().map(Matrix::nonzeros).sum()
    }

    /// Distinct coefficients.
    pub fn dictionary_len(&self) -> usize {
        self.coefficients.dictionary().len()
    }

    /// Bytes of the three matrices, what evaluation derives from them, and the dictionary
    /// per nonzero term, in memory (the file holds the matrices and the dictionary, and adds
    /// a fixed header and trailer only).
    pub fn bytes_per_nonzero(&self) -> f64 {
        let matrices: usize = self.matrices.iter().map(Matrix::bytes).sum();
        let layouts: usize = self.layouts.iter().map(MatrixLayout::bytes).sum();
        let dictionary = self.dictionary_len() * std::mem::size_of::<Scalar>();
        let derived = layouts + self.claims.bytes() + self.field_rows.bytes();
        (matrices + derived + dictionary) as f64 / self.nonzeros().max(1) as f64
    }

    /// Computes the witness of `circuit` (value closures only; no constraint is built). On a
    /// rayon pool of two threads or more, the parts the circuit spreads
    /// ([`crate::branches::spread`]) are generated at once, each writing where this recording
    /// (made on threads) placed it; the result is the one-thread witness either way.
    pub fn witness<C: Circuit<Scalar>>(&self, circuit: C) -> Result<Witness<Scalar>, Error> {
        self.witness_into(circuit, Witness::default())
    }

    /// [`Self::witness`] into recycled vectors (emptied; their capacity is kept), such as
    /// those [`Self::evaluate_into`] hands back, so a proving loop touches no fresh pages.
    pub fn witness_into<C: Circuit<Scalar>>(
        &self,
        circuit: C,
        mut buffers: Witness<Scalar>,
    ) -> Result<Witness<Scalar>, Error> {
        buffers.clear();
        reserve(&mut buffers.inputs, self.inputs, "input values")?;
        reserve(&mut buffers.aux, self.aux, "aux values")?;
        // As many as evaluation's map holds, inputs and padding included: it takes over this
        // storage and grows it no further.
        buffers
            .kinds
            .reserve((self.aux + self.inputs).next_power_of_two())?;
        let spread = witness::spread::enabled() && rayon::current_num_threads() > 1;
        if self.parts.0.is_empty() || !spread {
            lay_out_for_proving(&mut buffers, circuit)?;
            return Ok(buffers);
        }
        SpreadWitness::generate(buffers, &self.parts.0, circuit)
    }

    /// Evaluates `witness` and returns the vectors the prover takes (the witness vectors
    /// move into them). A witness of another structure is an error.
    pub fn evaluate(&self, witness: Witness<Scalar>) -> Result<ProverVectors<Scalar>, Error> {
        let mut vectors = ProverVectors::default();
        self.evaluate_into(witness, &mut vectors)?;
        Ok(vectors)
    }

    /// [`Self::witness`] then [`Self::evaluate`].
    pub fn synthesize<C: Circuit<Scalar>>(
        &self,
        circuit: C,
    ) -> Result<ProverVectors<Scalar>, Error> {
        self.synthesize_into(circuit, ProverVectors::default())
    }

    /// [`Self::synthesize`] into the storage of `target` (vectors a prover handed back:
    /// whatever they hold is replaced), so the pages they own are written again instead of
    /// fresh ones faulted in.
    pub fn synthesize_into<C: Circuit<Scalar>>(
        &self,
        circuit: C,
        mut target: ProverVectors<Scalar>,
    ) -> Result<ProverVectors<Scalar>, Error> {
        let buffers = Witness::unclassified(
            std::mem::take(&mut target.input_assignment),
            std::mem::take(&mut target.aux_assignment),
            0,
        );
        let witness = self.witness_into(circuit, buffers)?;
        self.evaluate_into(witness, &mut target)?;
        Ok(target)
    }

    fn check_structure(&self, witness: &Witness<Scalar>) -> Result<(), Error> {
        let counts = [
            ("inputs", self.inputs, witness.inputs.len()),
            ("aux variables", self.aux, witness.aux.len()),
            ("constraints", self.matrices[0].rows(), witness.constraints),
        ];
        for (what, recorded, found) in counts {
            if recorded != found {
                return Err(Error::StructureMismatch {
                    what,
                    recorded,
                    found,
                });
            }
        }
        Ok(())
    }

    /// Checks that this recording, evaluated against the values of `vectors`, reproduces
    /// them exactly (rows and densities; the rows that state a value checked together, as
    /// evaluation checks them): the self-check of a recording made alongside a direct
    /// synthesis, before it is trusted with other witnesses. Stores nothing.
    pub(crate) fn reproduces(&self, vectors: &ProverVectors<Scalar>) -> Result<(), Error> {
        if vectors.shape() != self.shape() {
            return Err(Error::InvalidRecording(format!(
                "its shape {:?} is not the synthesized {:?}",
                self.shape(),
                vectors.shape()
            )));
        }
        let densities = [
            &vectors.a_aux_density,
            &vectors.b_input_density,
            &vectors.b_aux_density,
        ];
        let mut kinds = ValueKinds::default();
        kinds.classify(&vectors.input_assignment, &vectors.aux_assignment)?;
        let values = [&vectors.input_assignment[..], &vectors.aux_assignment[..]];
        let rows = [&vectors.a[..], &vectors.b[..], &vectors.c[..]];
        let difference = self.in_place(|| {
            if !self.densities.equal(densities) {
                return Err(Error::InvalidRecording(
                    "its densities differ from the synthesized ones".into(),
                ));
            }
            kinds.convert_wide(&self.layouts, values)?;
            // Rows stating a value are that value when the claims hold together, as in
            // evaluation; when they do not, each is summed.
            let claims =
                (self.claims.len() > 0 && self.claims.hold(values)).then_some(&self.claims);
            let seen = (&kinds, claims);
            Ok::<_, Error>(kernel::first_difference(self.rows(), values, seen, rows))
        })??;
        match difference {
            None => Ok(()),
            Some(row) => Err(Error::InvalidRecording(format!(
                "row {row} differs from the synthesized one"
            ))),
        }
    }

    /// Evaluates `witness` into `target`, reusing its storage: a, b, c are overwritten (a
    /// recycled vector of the right length needs no zero-filling first), the witness
    /// vectors move in, and `target`'s previous witness vectors come back, emptied, for the
    /// next [`Self::witness_into`]. On an error `target` holds no rows, and the witness's
    /// values as on success (so a caller can evaluate them again with another recording).
    pub fn evaluate_into(
        &self,
        witness: Witness<Scalar>,
        target: &mut ProverVectors<Scalar>,
    ) -> Result<Witness<Scalar>, Error> {
        self.evaluate_with(witness, target, &mut ValueKinds::default())
    }

    pub(crate) fn evaluate_with(
        &self,
        mut witness: Witness<Scalar>,
        target: &mut ProverVectors<Scalar>,
        kinds: &mut ValueKinds,
    ) -> Result<Witness<Scalar>, Error> {
        let evaluated = self.evaluate_witness(&mut witness, target, kinds);
        let mut spare = Witness {
            inputs: std::mem::replace(&mut target.input_assignment, witness.inputs),
            aux: std::mem::replace(&mut target.aux_assignment, witness.aux),
            constraints: 0,
            // The scratch's previous storage, after `classify_rest` took the witness's.
            kinds: witness.kinds,
        };
        spare.clear();
        match evaluated {
            Ok(()) => Ok(spare),
            Err(error) => {
                for vector in [&mut target.a, &mut target.b, &mut target.c] {
                    vector.clear();
                }
                Err(error)
            }
        }
    }

    /// Sets `target`'s rows and densities for `witness`.
    fn evaluate_witness(
        &self,
        witness: &mut Witness<Scalar>,
        target: &mut ProverVectors<Scalar>,
        kinds: &mut ValueKinds,
    ) -> Result<(), Error> {
        self.check_structure(witness)?;
        kinds.classify_rest(&witness.inputs, &witness.aux, &mut witness.kinds)?;
        let rows = self.matrices[0].rows();
        // Ask for the memory here, where running out is an error, not an abort. Vectors at
        // least as long (recycled, or a prover's padded domains handed back) are cut to
        // length and overwritten in place: every row is written again. Fresh ones get the
        // FFT domain's capacity, which the prover grows them to without reallocating.
        for vector in [&mut target.a, &mut target.b, &mut target.c] {
            if vector.len() >= rows {
                vector.truncate(rows);
            } else {
                vector.clear();
                reserve(vector, rows.next_power_of_two(), "constraint values")?;
            }
        }
        let rows = RowsOut::Vectors([&mut target.a, &mut target.b, &mut target.c]);
        let densities = [
            &mut target.a_aux_density,
            &mut target.b_input_density,
            &mut target.b_aux_density,
        ];
        self.evaluate_classified(witness, kinds, rows, densities)
    }

    /// Writes the rows and densities of `witness`, whose structure was checked and whose
    /// values were classified into `kinds`.
    fn evaluate_classified(
        &self,
        witness: &Witness<Scalar>,
        kinds: &mut ValueKinds,
        rows: RowsOut<'_, Scalar>,
        densities: [&mut DensityTracker; 3],
    ) -> Result<(), Error> {
        let values = [&witness.inputs[..], &witness.aux[..]];
        let failed = self.in_place(|| {
            kinds.convert_wide(&self.layouts, values)?;
            let claims =
                (self.claims.len() > 0 && self.claims.hold(values)).then_some(&self.claims);
            let seen = (&*kinds, claims);
            let failed = match rows {
                RowsOut::Vectors(vectors) => {
                    kernel::evaluate_rows(self.rows(), values, seen, vectors)
                }
                RowsOut::Slots(slots) => {
                    kernel::evaluate_rows_into(self.rows(), values, seen, slots).ok_or(
                        Error::InconsistentAssignment(
                            "rows written to slots not of the rows' length",
                        ),
                    )?
                }
            };
            // The densities too are read before the mapping's last check: a file cut while
            // they are copied fails this evaluation instead of handing out wrong bits.
            if failed.is_none() {
                self.densities.copy_into(densities);
            }
            Ok::<_, Error>(failed)
        })??;
        match failed {
            Some(row) => Err(Error::Unsatisfied { row }),
            None => Ok(()),
        }
    }
}

/// Where an evaluation writes a, b and c.
enum RowsOut<'a, Scalar> {
    /// Vectors it sizes (holding the rows' capacity already, or their length).
    Vectors([&'a mut Vec<Scalar>; 3]),
    /// Storage a caller owns, exactly the rows long: written, never resized.
    Slots([&'a mut [std::mem::MaybeUninit<Scalar>]; 3]),
}

#[cfg(test)]
pub(crate) mod tests {
    use std::cell::RefCell;

    use bellpepper_core::{Circuit, ConstraintSystem, SynthesisError};

    /// `x * x = y`, `y` public: the smallest circuit with an input, an aux value and a row.
    pub(crate) struct Square;

    impl Circuit<blstrs::Scalar> for Square {
        fn synthesize<CS: ConstraintSystem<blstrs::Scalar>>(
            self,
            cs: &mut CS,
        ) -> Result<(), SynthesisError> {
            let x = cs.alloc(|| "x", || Ok(3u64.into()))?;
            let y = cs.alloc_input(|| "y", || Ok(9u64.into()))?;
            cs.enforce(|| "square", |lc| lc + x, |lc| lc + x, |lc| lc + y);
            Ok(())
        }
    }

    thread_local! {
        /// What a test does right after an evaluation's last check of its mapping.
        static AFTER_LAST_CHECK: RefCell<Option<Box<dyn FnOnce()>>> = RefCell::new(None);
    }

    /// Runs `then` once, on this thread, right after the next last check of a mapping: a
    /// file changed there must not reach what the evaluation returns.
    pub(crate) fn after_the_next_last_check(then: impl FnOnce() + 'static) {
        AFTER_LAST_CHECK.with(|hook| *hook.borrow_mut() = Some(Box::new(then)));
    }

    pub(super) fn after_last_check() {
        if let Some(then) = AFTER_LAST_CHECK.with(|hook| hook.borrow_mut().take()) {
            then();
        }
    }
}
