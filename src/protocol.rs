//! What every synthesis for proving does, written once: the prover's protocol, and the
//! namespace plumbing of the root constraint systems here (which ignore names).

use bellpepper_core::{Circuit, ConstraintSystem, Index, SynthesisError, Variable};
use ff::PrimeField;

/// A root constraint system that knows how many inputs it has allocated.
pub(crate) trait CountsInputs {
    /// Inputs allocated so far, the constant one included.
    fn input_count(&self) -> usize;
}

/// Lays out `circuit` as bellperson's prover synthesizes it: the constant-one input, the
/// circuit, then `input * 0 = 0` for every input (so every input is in the A query's
/// support). Direct synthesis, recording and witness generation all go through here, which
/// keeps their rows and variables in the same order.
pub(crate) fn lay_out_for_proving<Scalar, CS, C>(
    cs: &mut CS,
    circuit: C,
) -> Result<(), SynthesisError>
where
    Scalar: PrimeField,
    CS: ConstraintSystem<Scalar> + CountsInputs,
    C: Circuit<Scalar>,
{
    cs.alloc_input(|| "", || Ok(Scalar::ONE))?;
    circuit.synthesize(cs)?;
    for i in 0..cs.input_count() {
        cs.enforce(
            || "",
            |lc| lc + Variable::new_unchecked(Index::Input(i)),
            |lc| lc,
            |lc| lc,
        );
    }
    Ok(())
}

/// The three namespace methods of a root constraint system that ignores names.
macro_rules! root_without_names {
    () => {
        fn push_namespace<NR, N>(&mut self, _: N)
        where
            NR: Into<String>,
            N: FnOnce() -> NR,
        {
        }

        fn pop_namespace(&mut self) {}

        fn get_root(&mut self) -> &mut Self::Root {
            self
        }
    };
}

pub(crate) use root_without_names;
