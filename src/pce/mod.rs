//! Pre-compiled constraint evaluation: record a circuit's R1CS once into dictionary-coded
//! CSR matrices, then synthesize each proof by witness generation (value closures only) and
//! sparse evaluation, instead of rebuilding every linear combination.
//!
//! The result is a [`ProvingAssignment`] equal, field for field and bit for bit, to what
//! [`crate::synthesize`] produces for the same circuit: zero terms are dropped when recording
//! exactly where evaluation skips them, and densities follow the same rules.
//!
//! ```no_run
//! # fn demo<C: bellpepper_core::Circuit<blstrs::Scalar> + Clone>(circuit: C) -> Result<(), bellpepper_core::SynthesisError> {
//! use synthpool::pce::PreparedCircuit;
//! let prepared = PreparedCircuit::record(circuit.clone())?; // once per circuit shape
//! prepared.save(std::path::Path::new("porep.pce"))?;        // optional, versioned, checked
//! let witness = prepared.witness(circuit)?;                 // per proof: values only
//! let assignment = prepared.evaluate(witness)?;             // A·w, B·w, C·w (rayon)
//! # Ok(()) }
//! ```

mod file;
mod kernel;
mod matrix;
mod record;
mod witness;

use bellpepper_core::{Circuit, ConstraintSystem, SynthesisError};
use ec_gpu_gen::multiexp_cpu::DensityTracker;
use ff::PrimeField;
use rayon::prelude::*;

pub use self::matrix::Matrix;
pub use self::record::Recorder;
pub use self::witness::Witness;

use self::kernel::{classify, value_kinds, Coeff, RowContext};
use self::matrix::INPUT_FLAG;
use crate::assignment::{ProvingAssignment, Shape};

/// Rows evaluated per rayon task.
const ROWS_PER_TASK: usize = 4096;

/// A circuit's recorded constraint matrices, ready to evaluate witnesses against.
pub struct PreparedCircuit<Scalar: PrimeField> {
    inputs: usize,
    aux: usize,
    a: Matrix,
    b: Matrix,
    c: Matrix,
    dictionary: Vec<Scalar>,
    classes: Vec<Coeff<Scalar>>,
    a_aux_density: DensityTracker,
    b_input_density: DensityTracker,
    b_aux_density: DensityTracker,
}

/// Marks every variable with a term in `matrix`: inputs in `inputs` (when given), aux in `aux`.
fn mark_density(
    matrix: &Matrix,
    mut inputs: Option<&mut DensityTracker>,
    aux: &mut DensityTracker,
) {
    for &column in &matrix.columns {
        if column & INPUT_FLAG == 0 {
            aux.inc(column as usize);
        } else if let Some(inputs) = inputs.as_deref_mut() {
            inputs.inc((column & !INPUT_FLAG) as usize);
        }
    }
}

fn empty_density(len: usize) -> DensityTracker {
    let mut density = DensityTracker::new();
    density.bv.resize(len, false);
    density
}

impl<Scalar: PrimeField> PreparedCircuit<Scalar> {
    /// Builds the prepared circuit from checked parts, deriving the classes and densities.
    fn from_parts(
        inputs: usize,
        aux: usize,
        [a, b, c]: [Matrix; 3],
        dictionary: Vec<Scalar>,
    ) -> Self {
        let mut a_aux_density = empty_density(aux);
        let mut b_input_density = empty_density(inputs);
        let mut b_aux_density = empty_density(aux);
        mark_density(&a, None, &mut a_aux_density);
        mark_density(&b, Some(&mut b_input_density), &mut b_aux_density);
        PreparedCircuit {
            inputs,
            aux,
            classes: classify(&dictionary),
            a,
            b,
            c,
            dictionary,
            a_aux_density,
            b_input_density,
            b_aux_density,
        }
    }

    /// Records `circuit` (its witness values are not needed and not computed): the constant
    /// one input, the circuit, then `input * 0 = 0` per input, as the prover synthesizes.
    pub fn record<C: Circuit<Scalar>>(circuit: C) -> Result<Self, SynthesisError> {
        let mut recorder = Recorder::<Scalar>::new();
        recorder.alloc_input(|| "", || Ok(Scalar::ONE))?;
        circuit.synthesize(&mut recorder)?;
        recorder.add_input_constraints();
        if let Some(fault) = recorder.fault {
            return Err(SynthesisError::IncompatibleLengthVector(fault));
        }
        Ok(Self::from_parts(
            recorder.inputs,
            recorder.aux,
            [recorder.a, recorder.b, recorder.c],
            recorder.dictionary.values,
        ))
    }

    /// The recorded shape.
    pub fn shape(&self) -> Shape {
        Shape {
            inputs: self.inputs,
            aux: self.aux,
            constraints: self.a.rows(),
        }
    }

    /// Nonzero terms in A, B and C together.
    pub fn nonzeros(&self) -> usize {
        self.a.nonzeros() + self.b.nonzeros() + self.c.nonzeros()
    }

    /// Distinct coefficients.
    pub fn dictionary_len(&self) -> usize {
        self.dictionary.len()
    }

    /// Bytes of the three matrices and the dictionary per nonzero term, in memory (the file
    /// adds a fixed header and trailer only).
    pub fn bytes_per_nonzero(&self) -> f64 {
        let matrices = self.a.bytes() + self.b.bytes() + self.c.bytes();
        let dictionary = self.dictionary.len() * std::mem::size_of::<Scalar>();
        (matrices + dictionary) as f64 / self.nonzeros().max(1) as f64
    }

    /// Computes the witness of `circuit` (value closures only; no constraint is built) into
    /// vectors sized for the recorded shape.
    pub fn witness<C: Circuit<Scalar>>(
        &self,
        circuit: C,
    ) -> Result<Witness<Scalar>, SynthesisError> {
        self.witness_into(circuit, Witness::default())
    }

    /// [`Self::witness`] into recycled vectors (cleared; their capacity is kept), such as
    /// those [`Self::evaluate_into`] hands back, so a proving loop touches no fresh pages.
    pub fn witness_into<C: Circuit<Scalar>>(
        &self,
        circuit: C,
        mut buffers: Witness<Scalar>,
    ) -> Result<Witness<Scalar>, SynthesisError> {
        buffers.inputs.clear();
        buffers.aux.clear();
        buffers.inputs.reserve(self.inputs);
        buffers.aux.reserve(self.aux);
        buffers.alloc_input(|| "", || Ok(Scalar::ONE))?;
        circuit.synthesize(&mut buffers)?;
        Ok(buffers)
    }

    /// Evaluates `witness` into `target`, reusing its a, b, c storage; the witness vectors
    /// move into `target` and its previous ones come back (cleared) for the next
    /// [`Self::witness_into`]. The result equals [`Self::evaluate`]'s.
    pub fn evaluate_into(
        &self,
        witness: Witness<Scalar>,
        target: &mut ProvingAssignment<Scalar>,
    ) -> Result<Witness<Scalar>, SynthesisError> {
        self.evaluate_with_scratch(witness, target, &mut Scratch::default())
    }

    fn evaluate_with_scratch(
        &self,
        witness: Witness<Scalar>,
        target: &mut ProvingAssignment<Scalar>,
        scratch: &mut Scratch,
    ) -> Result<Witness<Scalar>, SynthesisError> {
        self.check_shape(&witness)?;
        value_kinds(&witness.inputs, &mut scratch.input_kinds);
        value_kinds(&witness.aux, &mut scratch.aux_kinds);
        let rows = self.a.rows();
        let mut vectors = target.take_evaluation();
        // Only a length change writes here (zeros for new rows, which are overwritten next).
        for vector in &mut vectors {
            vector.resize(rows, Scalar::ZERO);
        }
        let [mut a, mut b, mut c] = vectors;
        self.evaluate_rows(&witness, scratch, &mut a, &mut b, &mut c);
        let Witness { inputs, aux } = witness;
        let (mut old_inputs, mut old_aux) = target.replace_evaluation(
            [a, b, c],
            inputs,
            aux,
            [
                self.a_aux_density.clone(),
                self.b_input_density.clone(),
                self.b_aux_density.clone(),
            ],
        );
        old_inputs.clear();
        old_aux.clear();
        Ok(Witness {
            inputs: old_inputs,
            aux: old_aux,
        })
    }

    fn check_shape(&self, witness: &Witness<Scalar>) -> Result<(), SynthesisError> {
        if witness.inputs.len() != self.inputs || witness.aux.len() != self.aux {
            return Err(SynthesisError::IncompatibleLengthVector(format!(
                "the witness has {} inputs and {} aux values, the recorded circuit {} and {}",
                witness.inputs.len(),
                witness.aux.len(),
                self.inputs,
                self.aux
            )));
        }
        Ok(())
    }

    /// Fills `a`, `b`, `c` (each of the recorded row count) on the rayon pool.
    fn evaluate_rows(
        &self,
        witness: &Witness<Scalar>,
        scratch: &Scratch,
        a: &mut [Scalar],
        b: &mut [Scalar],
        c: &mut [Scalar],
    ) {
        let context = RowContext {
            inputs: &witness.inputs,
            aux: &witness.aux,
            input_kinds: &scratch.input_kinds,
            aux_kinds: &scratch.aux_kinds,
            dictionary: &self.dictionary,
            classes: &self.classes,
        };
        a.par_chunks_mut(ROWS_PER_TASK)
            .zip(b.par_chunks_mut(ROWS_PER_TASK))
            .zip(c.par_chunks_mut(ROWS_PER_TASK))
            .enumerate()
            .for_each(|(task, ((a, b), c))| {
                let first = task * ROWS_PER_TASK;
                for (offset, ((a, b), c)) in a.iter_mut().zip(b).zip(c).enumerate() {
                    *a = context.row(&self.a, first + offset);
                    *b = context.row(&self.b, first + offset);
                    *c = context.row(&self.c, first + offset);
                }
            });
    }

    /// Evaluates A·w, B·w, C·w on the rayon pool and returns the assignment the prover takes
    /// (the witness vectors move into it). A witness of another shape is an error.
    pub fn evaluate(
        &self,
        witness: Witness<Scalar>,
    ) -> Result<ProvingAssignment<Scalar>, SynthesisError> {
        let mut recycled = Recycled::default();
        self.evaluate_into(witness, &mut recycled.assignment)?;
        Ok(recycled.assignment)
    }

    /// [`Self::witness`] then [`Self::evaluate`].
    pub fn synthesize<C: Circuit<Scalar>>(
        &self,
        circuit: C,
    ) -> Result<ProvingAssignment<Scalar>, SynthesisError> {
        self.evaluate(self.witness(circuit)?)
    }
}

/// Buffers carried from one proof to the next of the same circuit: the assignment's a, b, c
/// and a spare pair of witness vectors. A proving loop that synthesizes through it touches no
/// fresh memory after the first proof (page faults on ~170 MB vectors per partition are
/// otherwise a large part of synthesis).
pub struct Recycled<Scalar: PrimeField> {
    assignment: ProvingAssignment<Scalar>,
    spare: Witness<Scalar>,
    scratch: Scratch,
}

/// Per-evaluation working memory: the kind (zero, one, other) of every witness value.
#[derive(Default)]
struct Scratch {
    input_kinds: Vec<u8>,
    aux_kinds: Vec<u8>,
}

impl<Scalar: PrimeField> Default for Recycled<Scalar> {
    fn default() -> Self {
        Recycled {
            assignment: ProvingAssignment::from_evaluation(
                [Vec::new(), Vec::new(), Vec::new()],
                Vec::new(),
                Vec::new(),
                [
                    DensityTracker::new(),
                    DensityTracker::new(),
                    DensityTracker::new(),
                ],
            ),
            spare: Witness::default(),
            scratch: Scratch::default(),
        }
    }
}

impl<Scalar: PrimeField> Recycled<Scalar> {
    /// The witness of `circuit`, in the spare vectors.
    pub fn witness<C: Circuit<Scalar>>(
        &mut self,
        prepared: &PreparedCircuit<Scalar>,
        circuit: C,
    ) -> Result<Witness<Scalar>, SynthesisError> {
        prepared.witness_into(circuit, std::mem::take(&mut self.spare))
    }

    /// Evaluates `witness` into the recycled assignment and returns it, valid until the next
    /// call; the assignment's previous witness vectors become the spare ones.
    pub fn evaluate(
        &mut self,
        prepared: &PreparedCircuit<Scalar>,
        witness: Witness<Scalar>,
    ) -> Result<&ProvingAssignment<Scalar>, SynthesisError> {
        self.spare =
            prepared.evaluate_with_scratch(witness, &mut self.assignment, &mut self.scratch)?;
        Ok(&self.assignment)
    }

    /// [`Self::witness`] then [`Self::evaluate`]: equal to [`PreparedCircuit::synthesize`].
    pub fn synthesize<C: Circuit<Scalar>>(
        &mut self,
        prepared: &PreparedCircuit<Scalar>,
        circuit: C,
    ) -> Result<&ProvingAssignment<Scalar>, SynthesisError> {
        let witness = self.witness(prepared, circuit)?;
        self.evaluate(prepared, witness)
    }
}
