//! The size of a synthesized circuit: what every path checks a circuit, a recording, a set
//! of vectors and parameters against; and the size a system had where a branch was taken
//! from it. A leaf: it names no other module.

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

/// Where a branch was taken: how many inputs (the constant one included) and aux variables
/// its system had. The branch holds those under the same indices; what it allocates after
/// them is its own.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct BranchPoint {
    pub(crate) inputs: usize,
    pub(crate) aux: usize,
}

impl BranchPoint {
    /// Where a sub-circuit synthesized from `new()` continues from: its input 0 stands for
    /// the constant one, the system's; everything else is its own.
    pub(crate) const FROM_NEW: BranchPoint = BranchPoint { inputs: 1, aux: 0 };

    /// Whether a system with `inputs` inputs and `aux` aux variables can be where this branch
    /// was taken, or what it grew into (a system only ever grows).
    pub(crate) fn within(self, inputs: usize, aux: usize) -> bool {
        self.inputs <= inputs && self.aux <= aux
    }
}
