//! bellperson 0.27's synthesis algorithm, for timing upstream where its prover keeps it
//! private: every allocation's value kept, every constraint's a, b and c evaluated on the
//! spot (a term with a zero coefficient skipped, a coefficient of one not multiplied), the
//! variables a and b read marked dense, and after the circuit one constraint per input.
//! In the build without synthpool (`--no-default-features`) it runs over upstream's
//! gadgets: the upstream side of a side-by-side timing.

use bellperson::{Circuit, ConstraintSystem, Index, LinearCombination, SynthesisError, Variable};
use blstrs::Scalar as Fr;
use ff::Field;

/// What bellperson's prover holds after synthesis.
#[derive(Default)]
pub struct Synthesis {
    a: Vec<Fr>,
    b: Vec<Fr>,
    c: Vec<Fr>,
    inputs: Vec<Fr>,
    aux: Vec<Fr>,
    a_aux_dense: Vec<bool>,
    b_input_dense: Vec<bool>,
    b_aux_dense: Vec<bool>,
}

impl Synthesis {
    /// Synthesizes `circuit` as bellperson's prover does; returns the number of constraints.
    pub fn run<C: Circuit<Fr>>(circuit: C) -> Result<usize, SynthesisError> {
        let mut cs = Synthesis::default();
        cs.alloc_input(|| "", || Ok(Fr::ONE))?;
        circuit.synthesize(&mut cs)?;
        for i in 0..cs.inputs.len() {
            cs.enforce(
                || "",
                |lc| lc + Variable::new_unchecked(Index::Input(i)),
                |lc| lc,
                |lc| lc,
            );
        }
        // Kept alive to here so that nothing of the work is optimized away.
        let dense = cs.a_aux_dense.iter().filter(|d| **d).count()
            + cs.b_input_dense.iter().filter(|d| **d).count()
            + cs.b_aux_dense.iter().filter(|d| **d).count();
        std::hint::black_box((dense, &cs.b, &cs.c));
        Ok(cs.a.len())
    }

    fn value(&self, variable: Variable) -> Fr {
        match variable.get_unchecked() {
            Index::Input(i) => self.inputs[i],
            Index::Aux(i) => self.aux[i],
        }
    }

    /// `lc` at the assignment, marking in `inputs` and `aux` the variables read.
    fn evaluate(
        &self,
        lc: &LinearCombination<Fr>,
        mut inputs: Option<&mut Vec<bool>>,
        mut aux: Option<&mut Vec<bool>>,
    ) -> Fr {
        let mut sum = Fr::ZERO;
        for (variable, coefficient) in lc.iter() {
            if coefficient.is_zero_vartime() {
                continue;
            }
            let value = self.value(variable);
            sum += if *coefficient == Fr::ONE {
                value
            } else {
                value * coefficient
            };
            let dense = match variable.get_unchecked() {
                Index::Input(i) => inputs.as_deref_mut().map(|d| (d, i)),
                Index::Aux(i) => aux.as_deref_mut().map(|d| (d, i)),
            };
            if let Some((dense, i)) = dense {
                dense[i] = true;
            }
        }
        sum
    }
}

impl ConstraintSystem<Fr> for Synthesis {
    type Root = Self;

    fn alloc<F, A, AR>(&mut self, _: A, value: F) -> Result<Variable, SynthesisError>
    where
        F: FnOnce() -> Result<Fr, SynthesisError>,
        A: FnOnce() -> AR,
        AR: Into<String>,
    {
        self.aux.push(value()?);
        self.a_aux_dense.push(false);
        self.b_aux_dense.push(false);
        Ok(Variable::new_unchecked(Index::Aux(self.aux.len() - 1)))
    }

    fn alloc_input<F, A, AR>(&mut self, _: A, value: F) -> Result<Variable, SynthesisError>
    where
        F: FnOnce() -> Result<Fr, SynthesisError>,
        A: FnOnce() -> AR,
        AR: Into<String>,
    {
        self.inputs.push(value()?);
        self.b_input_dense.push(false);
        Ok(Variable::new_unchecked(Index::Input(self.inputs.len() - 1)))
    }

    fn enforce<A, AR, LA, LB, LC>(&mut self, _: A, a: LA, b: LB, c: LC)
    where
        A: FnOnce() -> AR,
        AR: Into<String>,
        LA: FnOnce(LinearCombination<Fr>) -> LinearCombination<Fr>,
        LB: FnOnce(LinearCombination<Fr>) -> LinearCombination<Fr>,
        LC: FnOnce(LinearCombination<Fr>) -> LinearCombination<Fr>,
    {
        let (a, b, c) = (
            a(LinearCombination::zero()),
            b(LinearCombination::zero()),
            c(LinearCombination::zero()),
        );
        let mut dense = std::mem::take(&mut self.a_aux_dense);
        let va = self.evaluate(&a, None, Some(&mut dense));
        self.a_aux_dense = dense;
        let (mut inputs, mut aux) = (
            std::mem::take(&mut self.b_input_dense),
            std::mem::take(&mut self.b_aux_dense),
        );
        let vb = self.evaluate(&b, Some(&mut inputs), Some(&mut aux));
        (self.b_input_dense, self.b_aux_dense) = (inputs, aux);
        let vc = self.evaluate(&c, None, None);
        self.a.push(va);
        self.b.push(vb);
        self.c.push(vc);
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
