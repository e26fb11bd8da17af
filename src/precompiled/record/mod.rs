//! Recording a circuit: the constraint system that keeps its R1CS as dictionary-coded
//! matrices in one pass, with a companion beside it (nothing, the witness generator, or the
//! prover's assignment), so the same pass can synthesize.

pub(crate) mod companion;
pub(crate) mod dictionary;
pub(crate) mod recorder;
