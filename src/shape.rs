//! The size of a synthesized circuit: what every path checks a circuit, a recording, a set
//! of vectors and parameters against. A leaf: it names no other module.

/// The size of a synthesized circuit.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub struct Shape {
    /// Inputs, the constant one included.
    pub inputs: usize,
    /// Aux (private) variables.
    pub aux: usize,
    /// Constraints, the per-input constraints the prover appends included.
    pub constraints: usize,
}
