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

/// What is wrong with a recording file.
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
}

impl fmt::Display for FileProblem {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            FileProblem::Io(e) => write!(f, "{e}"),
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
    pub(crate) fn shifted(self, shape: crate::vectors::Shape) -> Unallocated {
        // A sub-circuit's input 0 is the constant one, which is the extended system's.
        let offset = match self.kind {
            VariableKind::Input => shape.inputs.saturating_sub(1),
            VariableKind::Aux => shape.aux,
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
#[derive(Debug)]
#[non_exhaustive]
pub enum Error {
    /// The circuit or bellperson returned an error.
    Synthesis(SynthesisError),
    /// A constraint names a variable that was not allocated.
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
    Limit(Limit),
    /// A recording breaks an invariant of the format (a bug if it was just recorded).
    InvalidRecording(String),
    /// A sub-recording with inputs was extended into a recording without the constant-one
    /// input its input 0 stands for.
    ExtendWithoutOne,
    /// A witness (or assignment) of another structure than the recording it meets.
    StructureMismatch {
        /// What differs: "inputs", "aux variables", "constraints".
        what: &'static str,
        /// The recording's count.
        recorded: usize,
        /// The witness's count.
        found: usize,
    },
    /// Evaluating the recording against the witness breaks `A·w * B·w = C·w` in this row: the
    /// witness belongs to another circuit, or does not satisfy its own.
    Unsatisfied {
        /// The first row that fails.
        row: usize,
    },
    /// A recording file could not be written or is not usable.
    File {
        /// The file.
        path: PathBuf,
        /// What is wrong.
        problem: FileProblem,
    },
    /// Memory for a vector could not be reserved.
    OutOfMemory {
        /// What the memory was for.
        what: &'static str,
        /// How many elements were asked for.
        elements: u64,
    },
    /// A member of a batch failed (the lowest index, when several did).
    Member {
        /// The member's position in the batch.
        index: usize,
        /// Its error.
        source: Box<Error>,
    },
    /// An assignment with no inputs or no constraints cannot be proven.
    EmptyAssignment,
    /// The assignments of one batch have different shapes.
    ShapeMismatch {
        /// The first member's (inputs, aux, constraints).
        first: (usize, usize, usize),
        /// This member's.
        this: (usize, usize, usize),
    },
    /// The parameters were generated for another number of inputs.
    InputCount {
        /// Inputs the parameters' verifying key takes (the constant one included).
        parameters: usize,
        /// Inputs of the assignment.
        assignment: usize,
    },
    /// `r` and `s` must have one value per assignment.
    Randomness {
        /// Assignments.
        assignments: usize,
        /// `r` values.
        r: usize,
        /// `s` values.
        s: usize,
    },
    /// Vectors of one assignment disagree in length (a hand-built assignment).
    InconsistentAssignment(&'static str),
}

impl fmt::Display for Error {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Error::Synthesis(e) => write!(f, "{e}"),
            Error::UnallocatedVariable {
                constraint,
                side,
                kind,
                index,
                allocated,
            } => write!(
                f,
                "constraint {constraint} references {kind} variable {index} in {side} but only \
                 {allocated} exist"
            ),
            Error::Limit(limit) => write!(f, "{limit}"),
            Error::InvalidRecording(what) => write!(f, "invalid recording: {what}"),
            Error::ExtendWithoutOne => f.write_str(
                "a sub-circuit with inputs extends a system without the constant-one input",
            ),
            Error::StructureMismatch {
                what,
                recorded,
                found,
            } => write!(
                f,
                "the witness has {found} {what}, the recorded circuit {recorded}: it is not the \
                 recorded circuit"
            ),
            Error::Unsatisfied { row } => write!(
                f,
                "row {row} of the recording is not satisfied by the witness (A·w * B·w != C·w): \
                 the witness is of another circuit, or wrong"
            ),
            Error::File { path, problem } => write!(f, "{}: {problem}", path.display()),
            Error::OutOfMemory { what, elements } => {
                write!(f, "cannot reserve memory for {elements} {what}")
            }
            Error::Member { index, source } => write!(f, "batch member {index}: {source}"),
            Error::EmptyAssignment => {
                f.write_str("an assignment without inputs or constraints cannot be proven")
            }
            Error::ShapeMismatch { first, this } => write!(
                f,
                "(inputs, aux, constraints) {this:?} differ from the first member's {first:?}: \
                 one batch proves one circuit"
            ),
            Error::InputCount {
                parameters,
                assignment,
            } => write!(
                f,
                "the parameters take {parameters} inputs, the assignment has {assignment}: \
                 parameters of another circuit"
            ),
            Error::Randomness { assignments, r, s } => {
                write!(f, "{assignments} assignments but {r} r and {s} s values")
            }
            Error::InconsistentAssignment(what) => write!(f, "inconsistent assignment: {what}"),
        }
    }
}

impl std::error::Error for Error {
    fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
        match self {
            Error::Synthesis(e) => Some(e),
            Error::File {
                problem: FileProblem::Io(e),
                ..
            } => Some(e),
            Error::Member { source, .. } => Some(source.as_ref()),
            _ => None,
        }
    }
}

impl From<SynthesisError> for Error {
    fn from(e: SynthesisError) -> Self {
        Error::Synthesis(e)
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

    /// The `SynthesisError` to return where one is required.
    ///
    /// The circuit's own errors come back unchanged (a batch member's too, so callers that
    /// match on the variant see what bellperson would have returned); file and memory errors
    /// become `IoError` (the original error stays readable through `io::Error::get_ref`);
    /// an unsatisfied row is `Unsatisfiable`; the rest, which are all shape mismatches,
    /// `IncompatibleLengthVector` with this error's message.
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
            Error::Unsatisfied { .. } => return SynthesisError::Unsatisfiable,
            _ => None,
        };
        match kind {
            Some(kind) => SynthesisError::IoError(io::Error::new(kind, self)),
            None => SynthesisError::IncompatibleLengthVector(self.to_string()),
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
mod tests {
    use super::*;

    #[test]
    fn circuit_errors_keep_their_variant_through_a_batch_member() {
        let e = Error::Synthesis(SynthesisError::AssignmentMissing).member(3);
        assert_eq!(
            e.to_string(),
            "batch member 3: an assignment for a variable could not be computed"
        );
        assert!(matches!(
            e.into_synthesis_error(),
            SynthesisError::AssignmentMissing
        ));
    }

    #[test]
    fn own_errors_convert_by_meaning_without_repeating_a_prefix() {
        let file = Error::file("x.rec", FileProblem::Checksum).member(1);
        match file.into_synthesis_error() {
            SynthesisError::IoError(e) => {
                assert_eq!(e.kind(), io::ErrorKind::InvalidData);
                assert_eq!(
                    e.to_string(),
                    "batch member 1: x.rec: checksum mismatch: the file is damaged"
                );
                assert!(e.get_ref().unwrap().downcast_ref::<Error>().is_some());
            }
            other => panic!("{other:?}"),
        }
        let mismatch = Error::StructureMismatch {
            what: "constraints",
            recorded: 11,
            found: 21,
        };
        let message = mismatch.into_synthesis_error().to_string();
        assert_eq!(message.matches("incompatible vector length").count(), 1);
        assert!(message.contains("21 constraints"), "{message}");
        assert!(matches!(
            Error::Unsatisfied { row: 4 }.into_synthesis_error(),
            SynthesisError::Unsatisfiable
        ));
    }
}
