//! What the partition tests share: counting a circuit, a witness with one wrong value, and
//! the check that every one of a spread of wrong values leaves a row unsatisfied.
// Each test binary includes this module and uses a part of it.
#![allow(dead_code)]

use bellpepper_core::{Circuit, ConstraintSystem};
use blstrs::Scalar as Fr;
use ff::Field;
use synthpool::precompiled::{Recording, Witness};

/// (constraints, inputs with the constant one, aux) of a circuit.
pub fn count<C: Circuit<Fr>>(circuit: C) -> [usize; 3] {
    let mut cs = Witness::<Fr>::default();
    cs.alloc_input(|| "one", || Ok(Fr::ONE)).unwrap();
    circuit.synthesize(&mut cs).unwrap();
    [cs.constraints(), cs.inputs().len(), cs.aux().len()]
}

/// `witness` with one more added to aux value `target`, as a prover handed one wrong value
/// would hold it.
pub fn tampered(witness: &Witness<Fr>, target: usize) -> Witness<Fr> {
    let mut aux = witness.aux().to_vec();
    aux[target] += Fr::ONE;
    let mut out = Witness::default();
    out.extend_inputs(witness.inputs());
    out.extend_aux(&aux);
    for _ in 0..witness.constraints() {
        out.enforce(|| "", |lc| lc, |lc| lc, |lc| lc);
    }
    out
}

/// Each of `targets(aux count)` (aux positions) made wrong in the witness of `circuit`
/// leaves a recorded row unsatisfied, which evaluation names; the honest witness holds.
pub fn every_wrong_value_is_unsatisfied<C: Circuit<Fr> + Clone>(
    circuit: C,
    targets: impl FnOnce(usize) -> Vec<usize>,
) {
    let recording = Recording::record(circuit.clone()).unwrap();
    let witness = recording.witness(circuit).unwrap();
    let aux = witness.aux().len();
    for target in targets(aux) {
        let result = recording.evaluate(tampered(&witness, target));
        assert!(
            matches!(result, Err(synthpool::Error::Unsatisfied { .. })),
            "aux {target} of {aux} changed: {:?}",
            result.map(|_| ())
        );
    }
    recording
        .evaluate(witness)
        .expect("the honest witness holds");
}
