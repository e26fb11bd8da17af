//! A hash of everything a circuit gives its constraint system, so that a patched build can be
//! compared with an unpatched one without both in one binary: the unpatched build
//! (`--no-default-features`, bellpepper-core 0.2.1 from crates.io) prints it, and the figures
//! it printed are pinned in [`UPSTREAM`].

use bellperson::{Circuit, ConstraintSystem, Index, LinearCombination, SynthesisError, Variable};
use blstrs::Scalar as Fr;
use ff::{Field, PrimeField};
use sha2::{Digest as _, Sha256};

/// What the unpatched build printed for each circuit of this tool (same seeds, same sources,
/// filecoin-proofs 19.1's crates with bellpepper-core 0.2.1 and bellperson 0.27 from crates.io).
pub const UPSTREAM: &[(&str, &str)] = &[
    (
        "2KiB",
        "01e5d52aa68abc7abb2b46c5f1b5d3dae5b581d7dfe7f98eab3d0c8b9fac1b0c",
    ),
    (
        "8MiB",
        "d7e0af6ed5343d6d94fc6bac9b46f1fc511a4936c201be68e617022b859b9922",
    ),
    (
        "window-post",
        "3882f885fb49d118e92a91cc728090055180a246d37047fe9578e9a19bbe5b8f",
    ),
    (
        "winning-post",
        "4c800ea187434c8d5d8c097f9f084d9293cb9e3e53eab4779f4e12076b01e133",
    ),
    (
        "snap",
        "bc8cb7f82352a1163e6fb17050ce5b0a2919aacbbd9b45e4285e7c8ff802b4da",
    ),
];

/// The upstream digest of `circuit`'s constraints, if one is pinned.
pub fn upstream(circuit: &str) -> Option<&'static str> {
    UPSTREAM
        .iter()
        .find(|(name, _)| *name == circuit)
        .map(|(_, digest)| *digest)
}

/// A constraint system that keeps a SHA-256 of each allocation's kind and value and of each
/// constraint's a, b and c term by term, in the order the linear combinations hold them:
/// two builds give the same digest only if they produce the same constraints over the same
/// assignment. The constant one is input 0, as in bellperson's prover.
pub struct Digest {
    hash: Sha256,
    inputs: usize,
    aux: usize,
    constraints: usize,
}

impl Digest {
    /// The digest of `circuit`'s synthesis and its number of constraints.
    pub fn of<C: Circuit<Fr>>(circuit: C) -> Result<(String, usize), SynthesisError> {
        let mut cs = Digest {
            hash: Sha256::new(),
            inputs: 0,
            aux: 0,
            constraints: 0,
        };
        cs.alloc_input(|| "one", || Ok(Fr::ONE))?;
        circuit.synthesize(&mut cs)?;
        cs.hash.update((cs.inputs as u64).to_le_bytes());
        cs.hash.update((cs.aux as u64).to_le_bytes());
        let hex = cs
            .hash
            .finalize()
            .iter()
            .map(|b| format!("{b:02x}"))
            .collect();
        Ok((hex, cs.constraints))
    }

    fn term(&mut self, variable: Variable, coefficient: &Fr) {
        let (kind, index) = match variable.get_unchecked() {
            Index::Input(i) => (b'i', i),
            Index::Aux(i) => (b'a', i),
        };
        self.hash.update([kind]);
        self.hash.update((index as u64).to_le_bytes());
        self.hash.update(coefficient.to_repr());
    }
}

impl ConstraintSystem<Fr> for Digest {
    type Root = Self;

    fn alloc<F, A, AR>(&mut self, _: A, value: F) -> Result<Variable, SynthesisError>
    where
        F: FnOnce() -> Result<Fr, SynthesisError>,
        A: FnOnce() -> AR,
        AR: Into<String>,
    {
        self.hash.update(b"A");
        self.hash.update(value()?.to_repr());
        self.aux += 1;
        Ok(Variable::new_unchecked(Index::Aux(self.aux - 1)))
    }

    fn alloc_input<F, A, AR>(&mut self, _: A, value: F) -> Result<Variable, SynthesisError>
    where
        F: FnOnce() -> Result<Fr, SynthesisError>,
        A: FnOnce() -> AR,
        AR: Into<String>,
    {
        self.hash.update(b"I");
        self.hash.update(value()?.to_repr());
        self.inputs += 1;
        Ok(Variable::new_unchecked(Index::Input(self.inputs - 1)))
    }

    fn enforce<A, AR, LA, LB, LC>(&mut self, _: A, a: LA, b: LB, c: LC)
    where
        A: FnOnce() -> AR,
        AR: Into<String>,
        LA: FnOnce(LinearCombination<Fr>) -> LinearCombination<Fr>,
        LB: FnOnce(LinearCombination<Fr>) -> LinearCombination<Fr>,
        LC: FnOnce(LinearCombination<Fr>) -> LinearCombination<Fr>,
    {
        for (side, lc) in [b'a', b'b', b'c'].into_iter().zip([
            a(LinearCombination::zero()),
            b(LinearCombination::zero()),
            c(LinearCombination::zero()),
        ]) {
            self.hash.update([side]);
            for (variable, coefficient) in lc.iter() {
                self.term(variable, coefficient);
            }
        }
        self.constraints += 1;
    }

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
}
