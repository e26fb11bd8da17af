//! The library's own errors: what went wrong in synthesis, in a recording, in a file or in a
//! batch, each with a message that names the culprit.
//!
//! Circuits and bellperson speak `SynthesisError`; this library returns [`Error`], which
//! wraps a `SynthesisError` when the circuit or bellperson produced it. Where a
//! `SynthesisError` is required (the `ConstraintSystem` trait, the drop-in batch prover with
//! bellperson's signatures), [`Error::into_synthesis_error`] converts.

use std::fmt;
use std::io;
use std::path::PathBuf;

use bellpepper_core::SynthesisError;

use crate::shape::{BranchPoint, Shape};

/// One side of a constraint `A * B = C`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Side {
    /// The `A` combination.
    A,
    /// The `B` combination.
    B,
    /// The `C` combination.
    C,
}

impl fmt::Display for Side {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            Side::A => "A",
            Side::B => "B",
            Side::C => "C",
        })
    }
}

/// Whether a variable is a public input or a private (aux) variable.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum VariableKind {
    /// A public input (input 0 is the constant one).
    Input,
    /// A private variable.
    Aux,
}

impl fmt::Display for VariableKind {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            VariableKind::Input => "input",
            VariableKind::Aux => "aux",
        })
    }
}

/// What is wrong with a file: a recording, or the head of a parameters file.
#[derive(Debug)]
#[non_exhaustive]
pub enum FileProblem {
    /// The operating system refused a read, write, sync or rename.
    Io(io::Error),
    /// The file ends before the header says it should.
    Truncated,
    /// The file does not start with the recording magic.
    NotARecording,
    /// A format version this build does not read.
    Version {
        /// The version in the file.
        found: u32,
        /// The version this build reads.
        supported: u32,
    },
    /// Recorded for another field.
    Field {
        /// The modulus the file names.
        found: String,
        /// This field's modulus.
        expected: &'static str,
    },
    /// The header's sizes disagree with the file's length.
    Length {
        /// Bytes the header implies, if that number fits in 64 bits.
        implied: Option<u64>,
        /// Bytes the file has.
        actual: u64,
    },
    /// The checksum does not match: the file is damaged.
    Checksum,
    /// The checksum matches but the contents break an invariant of the format.
    Corrupt(String),
    /// A valid file, but recorded under another cache key than the one asked for.
    Key,
    /// Not a regular file (a FIFO, a device, a directory), which an open could block on.
    NotRegular,
    /// A mapped file changed while it was in use (truncated, or written in place): what
    /// was evaluated from it is discarded.
    Changed(String),
    /// The contents broke an invariant while being evaluated in place (a mapped file is
    /// not checked in full when opened): the evaluation is discarded.
    Inconsistent(String),
    /// A recording cache directory that is not this process's own: another user could
    /// write the files in it (see `groth16::set_cache_dir`).
    NotOwn(String),
}

impl std::error::Error for FileProblem {
    fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
        match self {
            FileProblem::Io(e) => Some(e),
            _ => None,
        }
    }
}

impl fmt::Display for FileProblem {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            FileProblem::Io(_) => f.write_str("the operating system refused"),
            FileProblem::Truncated => f.write_str("truncated"),
            FileProblem::NotARecording => f.write_str("not a synthpool recording (bad magic)"),
            FileProblem::Version { found, supported } => write!(
                f,
                "format version {found}; this build reads version {supported}"
            ),
            FileProblem::Field { found, expected } => write!(
                f,
                "recorded for the field with modulus {found}, not {expected}"
            ),
            FileProblem::Length { implied, actual } => match implied {
                Some(n) => write!(
                    f,
                    "the header implies {n} bytes but the file has {actual} (truncated or corrupt)"
                ),
                None => write!(
                    f,
                    "the header implies an impossible size; the file has {actual} bytes (corrupt)"
                ),
            },
            FileProblem::Checksum => f.write_str("checksum mismatch: the file is damaged"),
            FileProblem::Corrupt(what) => write!(f, "corrupt: {what}"),
            FileProblem::Key => {
                f.write_str("recorded for other parameters than the ones asked for")
            }
            FileProblem::NotRegular => f.write_str("not a regular file"),
            FileProblem::Changed(why) => write!(f, "changed while in use: {why}"),
            FileProblem::Inconsistent(what) => {
                write!(f, "inconsistent contents found while evaluating it: {what}")
            }
            FileProblem::NotOwn(why) => write!(f, "not a directory to trust: {why}"),
        }
    }
}

/// A limit of the recording format that a circuit exceeds.
#[derive(Clone, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub enum Limit {
    /// More distinct coefficients than a `u16` id can number.
    Coefficients,
    /// A variable index at or beyond 2^31, the column limit.
    Column {
        /// Input or aux.
        kind: VariableKind,
        /// The index.
        index: u64,
    },
    /// More than 2^32 nonzero terms in one matrix.
    Nonzeros {
        /// Which matrix.
        side: Side,
    },
}

impl fmt::Display for Limit {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Limit::Coefficients => f.write_str(
                "more than 65536 distinct coefficients: the circuit does not fit a u16 dictionary",
            ),
            Limit::Column { kind, index } => {
                write!(f, "{kind} variable {index} reaches 2^31, the column limit")
            }
            Limit::Nonzeros { side } => {
                write!(f, "more than 2^32 nonzero terms in matrix {side}")
            }
        }
    }
}

/// A term naming a variable that was not allocated, as the constraint systems note it (their
/// `enforce` cannot return errors; synthesis reports the first one at the end).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct Unallocated {
    pub(crate) constraint: usize,
    pub(crate) side: Side,
    pub(crate) kind: VariableKind,
    pub(crate) index: usize,
    pub(crate) allocated: usize,
}

impl Unallocated {
    /// This fault of a sub-circuit, renumbered to its place in a system of `shape` that it
    /// extends.
    pub(crate) fn shifted(self, shape: Shape, from: BranchPoint) -> Unallocated {
        // The sub-system's variables from `from` on are its own, and land at the end.
        let offset = match self.kind {
            VariableKind::Input => shape.inputs.saturating_sub(from.inputs),
            VariableKind::Aux => shape.aux.saturating_sub(from.aux),
        };
        Unallocated {
            constraint: shape.constraints + self.constraint,
            index: self.index + offset,
            allocated: self.allocated + offset,
            ..self
        }
    }
}

impl From<Unallocated> for Error {
    fn from(fault: Unallocated) -> Error {
        Error::UnallocatedVariable {
            constraint: fault.constraint,
            side: fault.side,
            kind: fault.kind,
            index: fault.index,
            allocated: fault.allocated,
        }
    }
}

/// An error of synthesis, pre-compiled evaluation, recording files or proving.
///
/// Each message says its own part; a cause (the circuit's error, a batch member's error, what
/// is wrong with a file, an operating-system error) is the error's `source()`, so chain
/// printers show each once. [`Error::chain`] prints the whole chain in one line.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum Error {
    /// The circuit or bellperson returned an error (the source).
    #[error("synthesis failed")]
    Synthesis(#[source] SynthesisError),
    /// A constraint names a variable that was not allocated.
    #[error(
        "constraint {constraint} references {kind} variable {index} in {side} but only \
         {allocated} exist"
    )]
    UnallocatedVariable {
        /// The constraint's position.
        constraint: usize,
        /// The side naming it.
        side: Side,
        /// Input or aux.
        kind: VariableKind,
        /// The index it names.
        index: usize,
        /// How many variables of that kind existed.
        allocated: usize,
    },
    /// The circuit exceeds a limit of the recording format.
    #[error("{0}")]
    Limit(Limit),
    /// A recording breaks an invariant of the format (a bug if it was just recorded).
    #[error("invalid recording: {0}")]
    InvalidRecording(String),
    /// A sub-recording with inputs was extended into a recording without the constant-one
    /// input its input 0 stands for.
    #[error("a sub-circuit with inputs extends a system without the constant-one input")]
    ExtendWithoutOne,

    /// A constraint system was extended with a branch (or sub-circuit) that continues from
    /// more variables than the system has: it was taken from another system.
    #[error(
        "extended with a sub-system that continues from {inputs} inputs and {aux} aux \
         variables, more than this system has"
    )]
    MisplacedBranch {
        /// Inputs (the constant one included) the sub-system started from.
        inputs: usize,
        /// Aux variables the sub-system started from.
        aux: usize,
    },
    /// A witness (or assignment) of another structure than the recording it meets.
    #[error(
        "the witness has {found} {what}, the recorded circuit {recorded}: it is not the \
         recorded circuit"
    )]
    StructureMismatch {
        /// What differs: "inputs", "aux variables", "constraints".
        what: &'static str,
        /// The recording's count.
        recorded: usize,
        /// The witness's count.
        found: usize,
    },
    /// A circuit asked a witness generated from a recording for its aux values in one
    /// slice (`aux_slice`) where the witness does not hold them in one: in a branch of a
    /// part spread over threads ([`crate::branches::spread`]), or after a part did not fit
    /// where the recording placed it.
    #[error(
        "the circuit asked for its aux values in one slice {0}, where a witness spread over \
         threads does not hold them in one"
    )]
    ScatteredAux(&'static str),
    /// Evaluating the recording against the witness breaks `A·w * B·w = C·w` in this row: the
    /// witness belongs to another circuit, or does not satisfy its own.
    #[error(
        "row {row} of the recording is not satisfied by the witness (A·w * B·w != C·w): the \
         witness is of another circuit, or wrong"
    )]
    Unsatisfied {
        /// The first row that fails.
        row: usize,
    },
    /// A recording file could not be written or is not usable: what is wrong is the source
    /// (and an operating-system error, the source's).
    #[error("{}", path.display())]
    File {
        /// The file.
        path: PathBuf,
        /// What is wrong.
        #[source]
        problem: FileProblem,
    },
    /// Memory for a vector could not be reserved.
    #[error("cannot reserve memory for {elements} {what}")]
    OutOfMemory {
        /// What the memory was for.
        what: &'static str,
        /// How many elements were asked for.
        elements: u64,
    },
    /// A member of a batch failed (the lowest index, when several did): its error is the
    /// source.
    #[error("batch member {index}")]
    Member {
        /// The member's position in the batch.
        index: usize,
        /// Its error.
        #[source]
        source: Box<Error>,
    },
    /// Synthesizing a batch member panicked; the panic's message, when it had one.
    #[error("the circuit panicked: {0}")]
    Panicked(String),
    /// An assignment with no inputs or no constraints cannot be proven.
    #[error("an assignment without inputs or constraints cannot be proven")]
    EmptyAssignment,
    /// The assignments of one batch have different shapes.
    #[error(
        "its shape {this} differs from the first member's {first}: one batch proves one circuit"
    )]
    ShapeMismatch {
        /// The first member's shape.
        first: Shape,
        /// This member's.
        this: Shape,
    },
    /// The parameters were generated for another number of inputs.
    #[error(
        "the parameters take {parameters} inputs, the assignment has {assignment}: parameters \
         of another circuit"
    )]
    InputCount {
        /// Inputs the parameters' verifying key takes (the constant one included).
        parameters: usize,
        /// Inputs of the assignment.
        assignment: usize,
    },
    /// A query of the parameters does not fit the circuit: parameters of another circuit.
    #[error(
        "the parameters' {query} query has {bases} bases, the circuit needs {needed}: \
         parameters of another circuit"
    )]
    ParameterMismatch {
        /// Which query: "H", "L", "A (aux)", ...
        query: &'static str,
        /// Bases the parameters hold for it.
        bases: usize,
        /// Bases the circuit needs.
        needed: usize,
    },
    /// `r` and `s` must have one value per assignment.
    #[error("{assignments} assignments but {r} r and {s} s values")]
    Randomness {
        /// Assignments.
        assignments: usize,
        /// `r` values.
        r: usize,
        /// `s` values.
        s: usize,
    },
    /// Vectors of one assignment disagree in length (a hand-built assignment).
    #[error("inconsistent assignment: {0}")]
    InconsistentAssignment(&'static str),
    /// A setting has a value it cannot take.
    #[error("{name} = {value}: {expected}")]
    Setting {
        /// The setting (its environment variable).
        name: &'static str,
        /// The value given.
        value: String,
        /// What it takes.
        expected: &'static str,
    },
    /// A proof made from a recording's vectors did not verify against the parameters' key:
    /// the recording is not the parameters' circuit (it is dropped; the batch can be proven
    /// again).
    #[error(
        "a proof made from the recording does not verify against the parameters; the \
         recording is dropped"
    )]
    RecordingRejected,
    /// A member a recording failed was synthesized again directly, and the proof of its
    /// own vectors does not verify against the parameters either: its witness does not
    /// satisfy the circuit, or the circuit is not the one the parameters were made for.
    /// bellperson would return that proof; it would fail on chain.
    #[error(
        "its own synthesis gives a proof that does not verify against the parameters (a \
         witness the circuit rejects, or a circuit of other parameters; bellperson would \
         return that proof); the recording had failed it: {0}"
    )]
    ProofRejected(String),
    /// A circuit the batch had to make again (its recording failed it) could not be made.
    #[error("the circuit could not be made again: {0}")]
    Remake(String),
    /// The prover's arithmetic failed: a GPU kernel, or supraseal (no CUDA device, a
    /// failure on the device), with its message.
    #[error("the prover failed: {0}")]
    Prover(String),
}

impl From<SynthesisError> for Error {
    fn from(e: SynthesisError) -> Self {
        Error::Synthesis(e)
    }
}

impl From<BranchPoint> for Error {
    /// A branch taken at `at`, extended into a system that never stood there.
    fn from(at: BranchPoint) -> Error {
        Error::MisplacedBranch {
            inputs: at.inputs,
            aux: at.aux,
        }
    }
}

/// A failure met where a constraint system cannot return an error (`enforce`, `extend`, the
/// slices a witness generator hands out): the first is kept, and returned as the [`Error`]
/// it converts to when the system's result is asked for.
#[derive(Clone, Debug)]
pub(crate) enum Fault {
    /// A constraint named a variable that does not exist.
    Unallocated(Unallocated),
    /// A count passed what a recording holds.
    Limit(Limit),
    /// A sub-circuit from `new()` extended a system without its constant one.
    ExtendWithoutOne,
    /// A branch extended a system it was not taken from.
    MisplacedBranch(BranchPoint),
    /// A vector could not grow.
    OutOfMemory {
        /// What the vector holds.
        what: &'static str,
        /// Elements it could not grow by.
        elements: u64,
    },
    /// Aux values were not written where the recording placed them.
    ScatteredAux(&'static str),
    /// The vectors were found inconsistent while growing them.
    Inconsistent(&'static str),
}

impl Fault {
    /// The fault as the system `from` was branched from (or, from `new()`, extended with) sees
    /// it once it was appended at the end of a system of `shape`.
    pub(crate) fn shifted(self, shape: Shape, from: BranchPoint) -> Fault {
        match self {
            Fault::Unallocated(fault) => Fault::Unallocated(fault.shifted(shape, from)),
            other => other,
        }
    }
}

impl From<Fault> for Error {
    fn from(fault: Fault) -> Error {
        match fault {
            Fault::Unallocated(fault) => fault.into(),
            Fault::Limit(limit) => Error::Limit(limit),
            Fault::ExtendWithoutOne => Error::ExtendWithoutOne,
            Fault::MisplacedBranch(at) => at.into(),
            Fault::OutOfMemory { what, elements } => Error::OutOfMemory { what, elements },
            Fault::ScatteredAux(where_) => Error::ScatteredAux(where_),
            Fault::Inconsistent(what) => Error::InconsistentAssignment(what),
        }
    }
}

/// The text of a panic's payload.
#[cfg(any(
    feature = "bellperson-0.26",
    feature = "bellperson-0.27",
    all(unix, target_pointer_width = "64", target_endian = "little")
))]
pub(crate) fn panic_message(panic: &(dyn std::any::Any + Send)) -> String {
    panic
        .downcast_ref::<&str>()
        .map(|s| s.to_string())
        .or_else(|| panic.downcast_ref::<String>().cloned())
        .unwrap_or_else(|| "a panic without a message".into())
}

/// An error's whole chain in one message: each cause after a colon.
struct Chain<'a>(&'a (dyn std::error::Error + 'static));

impl fmt::Display for Chain<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}", self.0)?;
        let mut cause = self.0.source();
        while let Some(error) = cause {
            write!(f, ": {error}")?;
            cause = error.source();
        }
        Ok(())
    }
}

/// What a `SynthesisError` carries of one of ours: the whole chain as its message, ours as
/// its source (reachable through `io::Error::source`).
#[derive(Debug)]
struct Flattened {
    message: String,
    error: Error,
}

impl fmt::Display for Flattened {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.message)
    }
}

impl std::error::Error for Flattened {
    fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
        Some(&self.error)
    }
}

impl Error {
    /// This error as a file error about `path`.
    pub(crate) fn file(path: impl Into<PathBuf>, problem: FileProblem) -> Self {
        Error::File {
            path: path.into(),
            problem,
        }
    }

    /// Tags this error with the batch member it belongs to.
    pub(crate) fn member(self, index: usize) -> Self {
        Error::Member {
            index,
            source: Box::new(self),
        }
    }

    /// The whole chain in one line, each cause after a colon.
    pub fn chain(&self) -> String {
        Chain(self).to_string()
    }

    /// The `SynthesisError` to return where one is required.
    ///
    /// The circuit's own errors come back unchanged (a batch member's too, so callers that
    /// match on the variant see what bellperson would have returned); file, memory and
    /// prover errors become `IoError` (whose message is the whole chain and whose source is
    /// this error); an unsatisfied row is `Unsatisfiable`; every other error (a mismatch of
    /// shapes or sizes, a rejected recording, a panic, a setting, a limit of the format) is
    /// `IncompatibleLengthVector` with the whole chain as its message, the one variant
    /// bellpepper-core's `SynthesisError` has for a message of our own.
    pub fn into_synthesis_error(self) -> SynthesisError {
        match self {
            Error::Synthesis(e) => e,
            Error::Member { index, source } => match *source {
                Error::Synthesis(e) => e,
                other => other.member(index).convert_own(),
            },
            own => own.convert_own(),
        }
    }

    fn convert_own(self) -> SynthesisError {
        let kind = match self.innermost() {
            Error::File {
                problem: FileProblem::Io(e),
                ..
            } => Some(e.kind()),
            Error::File { .. } => Some(io::ErrorKind::InvalidData),
            Error::OutOfMemory { .. } => Some(io::ErrorKind::OutOfMemory),
            Error::Prover(_) => Some(io::ErrorKind::Other),
            Error::Unsatisfied { .. } => return SynthesisError::Unsatisfiable,
            _ => None,
        };
        let message = self.chain();
        match kind {
            Some(kind) => SynthesisError::IoError(io::Error::new(
                kind,
                Flattened {
                    message,
                    error: self,
                },
            )),
            None => SynthesisError::IncompatibleLengthVector(message),
        }
    }

    fn innermost(&self) -> &Error {
        match self {
            Error::Member { source, .. } => source.innermost(),
            other => other,
        }
    }
}

impl From<Error> for SynthesisError {
    fn from(e: Error) -> Self {
        e.into_synthesis_error()
    }
}

#[cfg(test)]
mod tests;
