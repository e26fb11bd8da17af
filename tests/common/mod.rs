//! Circuits and the bellperson-algorithm reference shared by the assignment tests.
// Each test binary includes this module and uses a different part of it.
#![allow(dead_code)]

use bellpepper_core::boolean::{AllocatedBit, Boolean};
use bellpepper_core::num::{AllocatedNum, Num};
use bellpepper_core::{
    Circuit, ConstraintSystem, Index, LinearCombination, SynthesisError, Variable,
};
use std::collections::HashMap;

use bellperson::gadgets::{multipack, sha256::sha256};
use blstrs::Scalar as Fr;
use ec_gpu_gen::multiexp_cpu::DensityTracker;
use ff::Field;
use rand_core::{RngCore, SeedableRng};
use rand_xorshift::XorShiftRng;
use synthpool::branches::{spread, Spread};
use synthpool::ProverVectors;

/// bellperson's prover assignment, step by step: fresh LCs per enforce, its
/// eval-with-trackers rules (zero coefficients skipped for density, inputs not tracked in A).
#[derive(Default)]
pub struct Reference(pub ProverVectors<Fr>);

fn eval(
    lc: &LinearCombination<Fr>,
    mut input_density: Option<&mut DensityTracker>,
    mut aux_density: Option<&mut DensityTracker>,
    inputs: &[Fr],
    aux: &[Fr],
) -> Fr {
    let mut acc = Fr::ZERO;
    for (var, coeff) in lc.iter() {
        if coeff.is_zero_vartime() {
            continue;
        }
        match var.get_unchecked() {
            Index::Input(i) => {
                acc += inputs[i] * coeff;
                if let Some(d) = input_density.as_deref_mut() {
                    d.inc(i);
                }
            }
            Index::Aux(i) => {
                acc += aux[i] * coeff;
                if let Some(d) = aux_density.as_deref_mut() {
                    d.inc(i);
                }
            }
        }
    }
    acc
}

impl ConstraintSystem<Fr> for Reference {
    type Root = Self;

    fn alloc<F, A, AR>(&mut self, _: A, f: F) -> Result<Variable, SynthesisError>
    where
        F: FnOnce() -> Result<Fr, SynthesisError>,
        A: FnOnce() -> AR,
        AR: Into<String>,
    {
        let v = &mut self.0;
        v.aux_assignment.push(f()?);
        v.a_aux_density.add_element();
        v.b_aux_density.add_element();
        Ok(Variable::new_unchecked(Index::Aux(
            v.aux_assignment.len() - 1,
        )))
    }

    fn alloc_input<F, A, AR>(&mut self, _: A, f: F) -> Result<Variable, SynthesisError>
    where
        F: FnOnce() -> Result<Fr, SynthesisError>,
        A: FnOnce() -> AR,
        AR: Into<String>,
    {
        let v = &mut self.0;
        v.input_assignment.push(f()?);
        v.b_input_density.add_element();
        Ok(Variable::new_unchecked(Index::Input(
            v.input_assignment.len() - 1,
        )))
    }

    fn enforce<A, AR, LA, LB, LC>(&mut self, _: A, a: LA, b: LB, c: LC)
    where
        A: FnOnce() -> AR,
        AR: Into<String>,
        LA: FnOnce(LinearCombination<Fr>) -> LinearCombination<Fr>,
        LB: FnOnce(LinearCombination<Fr>) -> LinearCombination<Fr>,
        LC: FnOnce(LinearCombination<Fr>) -> LinearCombination<Fr>,
    {
        let a = a(LinearCombination::zero());
        let b = b(LinearCombination::zero());
        let c = c(LinearCombination::zero());
        let v = &mut self.0;
        let (inputs, aux) = (&v.input_assignment, &v.aux_assignment);
        let a = eval(&a, None, Some(&mut v.a_aux_density), inputs, aux);
        let b = eval(
            &b,
            Some(&mut v.b_input_density),
            Some(&mut v.b_aux_density),
            inputs,
            aux,
        );
        let c = eval(&c, None, None, inputs, aux);
        v.a.push(a);
        v.b.push(b);
        v.c.push(c);
    }

    fn push_namespace<NR: Into<String>, N: FnOnce() -> NR>(&mut self, _: N) {}
    fn pop_namespace(&mut self) {}
    fn get_root(&mut self) -> &mut Self {
        self
    }
}

/// Asserts every output equal, naming the first that differs.
pub fn assert_same(ours: &ProverVectors<Fr>, expected: &ProverVectors<Fr>, what: &str) {
    assert_eq!(
        ours.input_assignment, expected.input_assignment,
        "{what}: inputs"
    );
    assert_eq!(ours.aux_assignment, expected.aux_assignment, "{what}: aux");
    assert_eq!(ours.a, expected.a, "{what}: a");
    assert_eq!(ours.b, expected.b, "{what}: b");
    assert_eq!(ours.c, expected.c, "{what}: c");
    assert_eq!(
        ours.a_aux_density, expected.a_aux_density,
        "{what}: a aux density"
    );
    assert_eq!(
        ours.b_input_density, expected.b_input_density,
        "{what}: b input density"
    );
    assert_eq!(
        ours.b_aux_density, expected.b_aux_density,
        "{what}: b aux density"
    );
}

/// Synthesizes as bellperson's prover does: one, the circuit, `input * 0 = 0` per input.
pub fn reference<C: Circuit<Fr>>(circuit: C) -> ProverVectors<Fr> {
    let mut cs = Reference::default();
    cs.alloc_input(|| "", || Ok(Fr::ONE)).unwrap();
    circuit.synthesize(&mut cs).unwrap();
    for i in 0..cs.0.input_assignment.len() {
        cs.enforce(
            || "",
            |lc| lc + Variable::new_unchecked(Index::Input(i)),
            |lc| lc,
            |lc| lc,
        );
    }
    cs.0
}

fn coeff(rng: &mut XorShiftRng) -> Fr {
    match rng.next_u32() % 6 {
        0 | 1 => Fr::ONE,
        2 => -Fr::ONE,
        3 => Fr::from(1u64 << (rng.next_u32() % 63)),
        4 => Fr::ZERO,
        _ => Fr::random(&mut *rng),
    }
}

/// Random satisfiable R1CS: allocations, inputs interleaved with constraints, and
/// constraints over random earlier variables with repeated, cancelling and zero terms (a
/// slack variable in C makes each hold).
#[derive(Clone)]
pub struct RandomCircuit {
    pub seed: u64,
    pub steps: usize,
}

impl RandomCircuit {
    fn lay_out<CS: ConstraintSystem<Fr>>(&self, cs: &mut CS) -> Result<(), SynthesisError> {
        self.lay_out_over(cs, &[(CS::one(), Fr::ONE)]).map(drop)
    }

    /// Lays the circuit out over `shared` variables (with their values), which its
    /// constraints use as they use its own; returns its own variables with their values.
    pub fn lay_out_over<CS: ConstraintSystem<Fr>>(
        &self,
        cs: &mut CS,
        shared: &[(Variable, Fr)],
    ) -> Result<Vec<(Variable, Fr)>, SynthesisError> {
        let mut rng = XorShiftRng::seed_from_u64(self.seed);
        let mut vars: Vec<Variable> = shared.iter().map(|(var, _)| *var).collect();
        let mut values: HashMap<Variable, Fr> = shared.iter().copied().collect();
        let value_of = |lc: &LinearCombination<Fr>, values: &HashMap<Variable, Fr>| {
            lc.iter()
                .fold(Fr::ZERO, |acc, (var, coeff)| acc + values[&var] * coeff)
        };
        for step in 0..self.steps {
            match rng.next_u32() % 8 {
                0 | 1 => {
                    let v = Fr::random(&mut rng);
                    let var = cs.alloc(|| format!("aux {step}"), || Ok(v))?;
                    vars.push(var);
                    values.insert(var, v);
                }
                2 => {
                    let v = Fr::random(&mut rng);
                    let var = cs.alloc_input(|| format!("input {step}"), || Ok(v))?;
                    vars.push(var);
                    values.insert(var, v);
                }
                _ => {
                    let mut lcs = Vec::new();
                    for _ in 0..3 {
                        let mut lc = LinearCombination::zero();
                        for _ in 0..(rng.next_u32() % 6) {
                            let var = vars[(rng.next_u32() as usize) % vars.len()];
                            let c = coeff(&mut rng);
                            lc = if rng.next_u32() % 4 == 0 {
                                lc - (c, var)
                            } else {
                                lc + (c, var)
                            };
                            if rng.next_u32() % 5 == 0 {
                                lc = lc - (c, var);
                            }
                        }
                        lcs.push(lc);
                    }
                    let (c, b, a) = (lcs.pop().unwrap(), lcs.pop().unwrap(), lcs.pop().unwrap());
                    // A slack variable in C makes the row hold, so the circuit is satisfiable.
                    let mut k = coeff(&mut rng);
                    if k == Fr::ZERO {
                        k = Fr::ONE;
                    }
                    let gap = value_of(&a, &values) * value_of(&b, &values) - value_of(&c, &values);
                    let slack_value = gap * k.invert().unwrap();
                    let slack = cs.alloc(|| format!("slack {step}"), || Ok(slack_value))?;
                    values.insert(slack, slack_value);
                    cs.enforce(
                        || format!("constraint {step}"),
                        |lc| lc + &a,
                        |lc| lc + &b,
                        |lc| lc + &c + (k, slack),
                    );
                }
            }
        }
        Ok(vars[shared.len()..]
            .iter()
            .map(|var| (*var, values[var]))
            .collect())
    }
}

impl Circuit<Fr> for RandomCircuit {
    fn synthesize<CS: ConstraintSystem<Fr>>(self, cs: &mut CS) -> Result<(), SynthesisError> {
        self.lay_out(cs)
    }
}

/// Independent random sub-circuits: synthesized through `CS::new()` + `extend` when the
/// system is extensible and `parallel` is set, inline otherwise. Both must agree.
#[derive(Clone)]
pub struct ExtendCircuit {
    pub parts: Vec<RandomCircuit>,
    pub parallel: bool,
}

impl Circuit<Fr> for ExtendCircuit {
    fn synthesize<CS: ConstraintSystem<Fr>>(self, cs: &mut CS) -> Result<(), SynthesisError> {
        if self.parallel && CS::is_extensible() {
            for part in &self.parts {
                let mut sub = CS::new();
                sub.alloc_input(|| "one", || Ok(Fr::ONE))?;
                part.lay_out(&mut sub)?;
                cs.extend(&sub);
            }
            Ok(())
        } else {
            self.parts.iter().try_for_each(|part| part.lay_out(cs))
        }
    }
}

/// Which SHA-256 gadgets a circuit is built with.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Gadgets {
    Bellperson,
    Synthpool,
}

/// SHA-256 of `bytes`, the digest packed into inputs: the shape of the Filecoin circuits.
#[derive(Clone)]
pub struct Sha256Circuit {
    pub bytes: Option<Vec<u8>>,
    pub len: usize,
    pub gadgets: Gadgets,
}

impl Sha256Circuit {
    /// SHA-256 of `len` pattern bytes, with known values.
    pub fn sample(len: usize, gadgets: Gadgets) -> Self {
        Sha256Circuit {
            bytes: Some((0..len).map(|i| (i * 37 + 11) as u8).collect()),
            len,
            gadgets,
        }
    }
}

impl Circuit<Fr> for Sha256Circuit {
    fn synthesize<CS: ConstraintSystem<Fr>>(self, cs: &mut CS) -> Result<(), SynthesisError> {
        let mut bits = Vec::with_capacity(self.len * 8);
        for i in 0..self.len * 8 {
            let value = self
                .bytes
                .as_ref()
                .map(|b| (b[i / 8] >> (7 - i % 8)) & 1 == 1);
            bits.push(Boolean::from(AllocatedBit::alloc(
                cs.namespace(|| format!("bit {i}")),
                value,
            )?));
        }
        match self.gadgets {
            Gadgets::Bellperson => {
                let digest = sha256(cs.namespace(|| "sha256"), &bits)?;
                multipack::pack_into_inputs(cs.namespace(|| "pack"), &digest)
            }
            Gadgets::Synthpool => {
                let digest = synthpool::sha256::sha256(cs.namespace(|| "sha256"), &bits)?;
                synthpool::sha256::multipack::pack_into_inputs(cs.namespace(|| "pack"), &digest)
            }
        }
    }
}

/// Number gadgets: squares, products, bit decompositions, conditional swaps and a Num sum.
#[derive(Clone)]
pub struct NumCircuit {
    pub x: Option<Fr>,
    pub rounds: usize,
}

/// One [`NumCircuit`] of `rounds` per value of `xs`: a batch of one structure.
pub fn num_circuits(xs: &[u64], rounds: usize) -> Vec<NumCircuit> {
    xs.iter()
        .map(|&x| NumCircuit {
            x: Some(Fr::from(x)),
            rounds,
        })
        .collect()
}

impl Circuit<Fr> for NumCircuit {
    fn synthesize<CS: ConstraintSystem<Fr>>(self, cs: &mut CS) -> Result<(), SynthesisError> {
        let mut x = AllocatedNum::alloc(cs.namespace(|| "x"), || {
            self.x.ok_or(SynthesisError::AssignmentMissing)
        })?;
        let mut sum = Num::zero();
        for round in 0..self.rounds {
            let mut cs = cs.namespace(|| format!("round {round}"));
            let sq = x.square(cs.namespace(|| "square"))?;
            let product = sq.mul(cs.namespace(|| "mul"), &x)?;
            let bits = product.to_bits_le_strict(cs.namespace(|| "bits"))?;
            let (left, right) = AllocatedNum::conditionally_reverse(
                cs.namespace(|| "swap"),
                &x,
                &product,
                &bits[0],
            )?;
            for (i, bit) in bits.iter().take(16).enumerate() {
                sum = sum.add_bool_with_coeff(CS::one(), bit, Fr::from(1u64 << i));
            }
            sum = sum.add(&Num::from(left.clone()));
            x = right;
        }
        x.inputize(cs.namespace(|| "out"))?;
        let total = AllocatedNum::alloc(cs.namespace(|| "total"), || {
            sum.get_value().ok_or(SynthesisError::AssignmentMissing)
        })?;
        cs.enforce(
            || "total",
            |lc| lc + &sum.lc(Fr::ONE),
            |lc| lc + CS::one(),
            |lc| lc + total.get_variable(),
        );
        Ok(())
    }
}

/// `y = factor · x`, `y` public: circuits of one structure whose coefficient differs.
#[derive(Clone)]
pub struct Linear {
    pub x: Option<u64>,
    pub factor: u64,
}

impl Circuit<Fr> for Linear {
    fn synthesize<CS: ConstraintSystem<Fr>>(self, cs: &mut CS) -> Result<(), SynthesisError> {
        let factor = Fr::from(self.factor);
        let x = AllocatedNum::alloc(cs.namespace(|| "x"), || {
            self.x
                .map(Fr::from)
                .ok_or(SynthesisError::AssignmentMissing)
        })?;
        let y = AllocatedNum::alloc(cs.namespace(|| "y"), || {
            x.get_value()
                .map(|x| x * factor)
                .ok_or(SynthesisError::AssignmentMissing)
        })?;
        cs.enforce(
            || "y = factor x",
            |lc| lc + (factor, x.get_variable()),
            |lc| lc + CS::one(),
            |lc| lc + y.get_variable(),
        );
        y.inputize(cs.namespace(|| "y"))
    }
}

pub fn linear(xs: &[u64], factor: u64) -> Vec<Linear> {
    xs.iter().map(|&x| Linear { x: Some(x), factor }).collect()
}

/// Every term of a linear combination, as iterated.
pub type Terms = Vec<(Variable, Fr)>;

/// A constraint's path with its A, B and C terms.
pub type RecordedConstraint = (String, Terms, Terms, Terms);

/// Records names, constraints (every term) and values of a synthesis; with `values` false
/// it never runs a value closure, as parameter generation does.
#[derive(Default, PartialEq, Debug)]
pub struct ShapeRecorder {
    pub values: bool,
    pub namespace: Vec<String>,
    pub inputs: Vec<(String, Option<Fr>)>,
    pub aux: Vec<(String, Option<Fr>)>,
    pub constraints: Vec<RecordedConstraint>,
}

impl ShapeRecorder {
    pub fn new(values: bool) -> Self {
        ShapeRecorder {
            values,
            inputs: vec![("ONE".into(), Some(Fr::ONE))],
            ..Default::default()
        }
    }

    fn path(&self, name: String) -> String {
        let mut parts = self.namespace.clone();
        parts.push(name);
        parts.join("/")
    }

    fn value<F: FnOnce() -> Result<Fr, SynthesisError>>(
        &self,
        f: F,
    ) -> Result<Option<Fr>, SynthesisError> {
        if self.values {
            f().map(Some)
        } else {
            Ok(None)
        }
    }
}

fn all_terms(lc: &LinearCombination<Fr>) -> Terms {
    lc.iter().map(|(v, c)| (v, *c)).collect()
}

impl ConstraintSystem<Fr> for ShapeRecorder {
    type Root = Self;

    fn alloc<F, A, AR>(&mut self, annotation: A, f: F) -> Result<Variable, SynthesisError>
    where
        F: FnOnce() -> Result<Fr, SynthesisError>,
        A: FnOnce() -> AR,
        AR: Into<String>,
    {
        let path = self.path(annotation().into());
        let value = self.value(f)?;
        self.aux.push((path, value));
        Ok(Variable::new_unchecked(Index::Aux(self.aux.len() - 1)))
    }

    fn alloc_input<F, A, AR>(&mut self, annotation: A, f: F) -> Result<Variable, SynthesisError>
    where
        F: FnOnce() -> Result<Fr, SynthesisError>,
        A: FnOnce() -> AR,
        AR: Into<String>,
    {
        let path = self.path(annotation().into());
        let value = self.value(f)?;
        self.inputs.push((path, value));
        Ok(Variable::new_unchecked(Index::Input(self.inputs.len() - 1)))
    }

    fn enforce<A, AR, LA, LB, LC>(&mut self, annotation: A, a: LA, b: LB, c: LC)
    where
        A: FnOnce() -> AR,
        AR: Into<String>,
        LA: FnOnce(LinearCombination<Fr>) -> LinearCombination<Fr>,
        LB: FnOnce(LinearCombination<Fr>) -> LinearCombination<Fr>,
        LC: FnOnce(LinearCombination<Fr>) -> LinearCombination<Fr>,
    {
        let path = self.path(annotation().into());
        let a = all_terms(&a(LinearCombination::zero()));
        let b = all_terms(&b(LinearCombination::zero()));
        let c = all_terms(&c(LinearCombination::zero()));
        self.constraints.push((path, a, b, c));
    }

    fn push_namespace<NR: Into<String>, N: FnOnce() -> NR>(&mut self, name: N) {
        self.namespace.push(name().into());
    }
    fn pop_namespace(&mut self) {
        self.namespace.pop();
    }
    fn get_root(&mut self) -> &mut Self {
        self
    }
}

/// How the message bits enter the circuit.
#[derive(Clone, Copy, Debug)]
pub enum Bits {
    Constant,
    Allocated,
    /// Every third bit constant, the others allocated (some negated).
    Mixed,
}

pub fn message_bits<CS: ConstraintSystem<Fr>>(
    cs: &mut CS,
    bytes: &[u8],
    how: Bits,
    known: bool,
) -> Result<Vec<Boolean>, SynthesisError> {
    let mut out = Vec::with_capacity(bytes.len() * 8);
    for i in 0..bytes.len() * 8 {
        let bit = (bytes[i / 8] >> (7 - i % 8)) & 1 == 1;
        let constant = match how {
            Bits::Constant => true,
            Bits::Allocated => false,
            Bits::Mixed => i % 3 == 0,
        };
        out.push(if constant {
            Boolean::constant(bit)
        } else if matches!(how, Bits::Mixed) && i % 3 == 1 {
            let b = AllocatedBit::alloc(cs.namespace(|| format!("in {i}")), known.then_some(!bit))?;
            Boolean::from(b).not()
        } else {
            Boolean::from(AllocatedBit::alloc(
                cs.namespace(|| format!("in {i}")),
                known.then_some(bit),
            )?)
        });
    }
    Ok(out)
}

pub fn show(bits: &[Boolean]) -> Vec<String> {
    bits.iter()
        .map(|b| match b {
            Boolean::Constant(c) => format!("const {c}"),
            Boolean::Is(x) => format!("is {:?} {:?}", x.get_variable(), x.get_value()),
            Boolean::Not(x) => format!("not {:?} {:?}", x.get_variable(), x.get_value()),
        })
        .collect()
}

/// Rewrites the recording file at `path` under `key` with a valid digest, as anyone who
/// can write the cache directory could (the drop-ins alone write keyed files): the header's
/// key after the magic, version and field description, and the BLAKE2sp-256 digest of all
/// before it at the end. Replaced by renaming, as a save by another process would be.
pub fn reseal(path: &std::path::Path, key: [u8; 32]) {
    let mut bytes = std::fs::read(path).unwrap();
    let modulus_len = u32::from_le_bytes(bytes[12..16].try_into().unwrap()) as usize;
    let at = 16 + modulus_len + 4;
    bytes[at..at + 32].copy_from_slice(&key);
    let body = bytes.len() - 32;
    let digest = blake2s_simd::blake2sp::blake2sp(&bytes[..body]);
    bytes[body..].copy_from_slice(digest.as_bytes());
    let temporary = path.with_extension("resealing");
    std::fs::write(&temporary, &bytes).unwrap();
    std::fs::rename(&temporary, path).unwrap();
}

/// Where a recording file's sections lie: each one's offset and length in bytes (the table
/// after the header's counts).
pub fn sections(bytes: &[u8]) -> Vec<(usize, usize)> {
    let u32_at = |at: usize| u32::from_le_bytes(bytes[at..at + 4].try_into().unwrap()) as usize;
    let u64_at = |at: usize| u64::from_le_bytes(bytes[at..at + 8].try_into().unwrap()) as usize;
    let table = 16 + u32_at(12) + 4 + 32 + 7 * 8;
    (0..u32_at(table))
        .map(|i| (u64_at(table + 4 + 16 * i), u64_at(table + 12 + 16 * i)))
        .collect()
}

/// Changes section `index` of the recording file at `path` with `edit` and writes a valid
/// digest, as anyone who can write the cache directory could; replaced by renaming.
pub fn edit_section(path: &std::path::Path, index: usize, edit: impl FnOnce(&mut [u8])) {
    let mut bytes = std::fs::read(path).unwrap();
    let (offset, len) = sections(&bytes)[index];
    edit(&mut bytes[offset..offset + len]);
    let body = bytes.len() - 32;
    let digest = blake2s_simd::blake2sp::blake2sp(&bytes[..body]);
    bytes[body..].copy_from_slice(digest.as_bytes());
    let temporary = path.with_extension("editing");
    std::fs::write(&temporary, &bytes).unwrap();
    std::fs::rename(&temporary, path).unwrap();
}

/// Sections of a recording file: matrix A's columns, where the spread parts landed, and
/// the words of the density of aux variables in A.
pub const A_COLUMNS: usize = 2;
pub const PARTS: usize = 10;
pub const A_AUX_DENSITY: usize = 12;

/// `part` for each of `parts` through `spread`, or one after another in `cs` where `spread`
/// hands them back, as the fork's circuits do.
pub fn spread_or_in_order<CS: ConstraintSystem<Fr>>(
    cs: &mut CS,
    parts: Vec<usize>,
    part: impl Fn(&mut CS::Root, usize) -> Result<(), SynthesisError> + Sync,
) -> Result<(), SynthesisError> {
    match spread(cs, parts, |cs, _, i| part(cs, i))? {
        Spread::Done => Ok(()),
        Spread::Here(parts) => parts.into_iter().try_for_each(|i| part(cs.get_root(), i)),
    }
}
