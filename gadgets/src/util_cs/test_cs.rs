//! A constraint system for tests: keeps every variable and constraint by its path, checks
//! satisfaction, and digests the constraint shape.

use std::collections::HashMap;
use std::fmt::Write;

use blake2s_simd::State as Blake2s;
use ff::PrimeField;

use super::{Comparable, Constraint};
use crate::{ConstraintSystem, Index, LinearCombination, SynthesisError, Variable};

/// What a path names.
#[derive(Debug)]
enum NamedObject {
    Constraint,
    Var(Variable),
    Namespace,
}

/// A constraint system that records names, values and constraints, for tests.
///
/// Paths are namespace names joined by `/`; reusing a path or putting `/` in a name panics,
/// since both are mistakes in the circuit under test.
pub struct TestConstraintSystem<Scalar: PrimeField> {
    named_objects: HashMap<String, NamedObject>,
    current_namespace: Vec<String>,
    constraints: Vec<Constraint<Scalar>>,
    inputs: Vec<(Scalar, String)>,
    aux: Vec<(Scalar, String)>,
}

/// Feeds one combination to the digest: the number of nonzero terms, then per term a tag
/// (`I`nput or `A`ux), the index as a big-endian u64 and the coefficient's bytes big-endian.
/// Terms are already merged and ordered inputs-then-aux by index.
fn hash_lc<Scalar: PrimeField>(lc: &LinearCombination<Scalar>, hasher: &mut Blake2s) {
    let nonzero = || lc.iter().filter(|(_, coeff)| !bool::from(coeff.is_zero()));
    hasher.update(&(nonzero().count() as u64).to_be_bytes());
    for (var, coeff) in nonzero() {
        let (tag, index) = match var.get_unchecked() {
            Index::Input(i) => (b'I', i),
            Index::Aux(i) => (b'A', i),
        };
        hasher.update(&[tag]);
        hasher.update(&(index as u64).to_be_bytes());
        let mut repr = coeff.to_repr();
        repr.as_mut().reverse();
        hasher.update(repr.as_ref());
    }
}

fn eval_lc<Scalar: PrimeField>(
    lc: &LinearCombination<Scalar>,
    inputs: &[(Scalar, String)],
    aux: &[(Scalar, String)],
) -> Scalar {
    lc.iter().fold(Scalar::ZERO, |acc, (var, coeff)| {
        let value = match var.get_unchecked() {
            Index::Input(i) => inputs[i].0,
            Index::Aux(i) => aux[i].0,
        };
        acc + value * coeff
    })
}

fn compute_path(namespace: &[String], name: &str) -> String {
    assert!(!name.contains('/'), "'/' is not allowed in names");
    if namespace.is_empty() {
        name.to_string()
    } else {
        format!("{}/{}", namespace.join("/"), name)
    }
}

impl<Scalar: PrimeField> Default for TestConstraintSystem<Scalar> {
    fn default() -> Self {
        let mut named_objects = HashMap::new();
        named_objects.insert("ONE".to_string(), NamedObject::Var(Self::one()));
        TestConstraintSystem {
            named_objects,
            current_namespace: Vec::new(),
            constraints: Vec::new(),
            inputs: vec![(Scalar::ONE, "ONE".to_string())],
            aux: Vec::new(),
        }
    }
}

impl<Scalar: PrimeField> TestConstraintSystem<Scalar> {
    /// An empty system holding only the constant-one input `ONE`.
    pub fn new() -> Self {
        Self::default()
    }

    /// The input values, `ONE` first.
    pub fn scalar_inputs(&self) -> Vec<Scalar> {
        self.inputs.iter().map(|(value, _)| *value).collect()
    }

    /// The aux values.
    pub fn scalar_aux(&self) -> Vec<Scalar> {
        self.aux.iter().map(|(value, _)| *value).collect()
    }

    /// `INPUT path` per input, `AUX path` per aux variable, then each constraint's path.
    pub fn pretty_print_list(&self) -> Vec<String> {
        let inputs = self
            .inputs
            .iter()
            .map(|(_, path)| format!("INPUT {}", path));
        let aux = self.aux.iter().map(|(_, path)| format!("AUX {}", path));
        let constraints = self.constraints.iter().map(|c| c.3.clone());
        inputs.chain(aux).chain(constraints).collect()
    }

    /// [`Self::pretty_print_list`], one entry a line.
    pub fn pretty_print(&self) -> String {
        self.pretty_print_list().join("\n")
    }

    /// A BLAKE2s digest (hex) of the counts and of every constraint's nonzero merged terms;
    /// names and values do not enter it. Equal to upstream's digest for the same constraints.
    pub fn hash(&self) -> String {
        let mut hasher = Blake2s::new();
        for count in [self.inputs.len(), self.aux.len(), self.constraints.len()] {
            hasher.update(&(count as u64).to_be_bytes());
        }
        for (a, b, c, _) in &self.constraints {
            hash_lc(a, &mut hasher);
            hash_lc(b, &mut hasher);
            hash_lc(c, &mut hasher);
        }
        let mut hex = String::with_capacity(64);
        for byte in hasher.finalize().as_bytes() {
            write!(hex, "{:02x}", byte).expect("writing to a String cannot fail");
        }
        hex
    }

    /// The path of the first constraint the current values violate.
    pub fn which_is_unsatisfied(&self) -> Option<&str> {
        self.constraints
            .iter()
            .find(|(a, b, c, _)| {
                let a = eval_lc(a, &self.inputs, &self.aux);
                let b = eval_lc(b, &self.inputs, &self.aux);
                let c = eval_lc(c, &self.inputs, &self.aux);
                a * b != c
            })
            .map(|(_, _, _, path)| path.as_str())
    }

    /// Whether every constraint holds; prints the first failing one otherwise.
    pub fn is_satisfied(&self) -> bool {
        match self.which_is_unsatisfied() {
            Some(path) => {
                println!("fail: {:?}", path);
                false
            }
            None => true,
        }
    }

    /// Number of constraints.
    pub fn num_constraints(&self) -> usize {
        self.constraints.len()
    }

    /// Overwrites the value of the variable at `path`. Panics if `path` is not a variable.
    pub fn set(&mut self, path: &str, to: Scalar) {
        let index = self.variable_at(path);
        match index {
            Index::Input(i) => self.inputs[i].0 = to,
            Index::Aux(i) => self.aux[i].0 = to,
        }
    }

    /// Whether the inputs after `ONE` equal `expected`. Panics if the counts differ.
    pub fn verify(&self, expected: &[Scalar]) -> bool {
        assert_eq!(expected.len() + 1, self.inputs.len());
        self.inputs[1..]
            .iter()
            .zip(expected)
            .all(|((value, _), expected)| value == expected)
    }

    /// Number of inputs, `ONE` included.
    pub fn num_inputs(&self) -> usize {
        self.inputs.len()
    }

    /// The value of input `index`, asserting that its path is `path`.
    pub fn get_input(&mut self, index: usize, path: &str) -> Scalar {
        let (value, name) = &self.inputs[index];
        assert_eq!(path, name);
        *value
    }

    /// All inputs with their paths.
    pub fn get_inputs(&self) -> &[(Scalar, String)] {
        &self.inputs
    }

    /// The value of the variable at `path`. Panics if `path` is not a variable.
    pub fn get(&mut self, path: &str) -> Scalar {
        match self.variable_at(path) {
            Index::Input(i) => self.inputs[i].0,
            Index::Aux(i) => self.aux[i].0,
        }
    }

    fn variable_at(&self, path: &str) -> Index {
        match self.named_objects.get(path) {
            Some(NamedObject::Var(var)) => var.get_unchecked(),
            Some(other) => panic!("`{}` names {:?}, not a variable", path, other),
            None => panic!("no variable exists at path: {}", path),
        }
    }

    fn set_named_obj(&mut self, path: String, to: NamedObject) {
        if self.named_objects.contains_key(&path) {
            panic!("tried to create object at existing path: {}", path);
        }
        self.named_objects.insert(path, to);
    }
}

impl<Scalar: PrimeField> Comparable<Scalar> for TestConstraintSystem<Scalar> {
    fn num_inputs(&self) -> usize {
        self.inputs.len()
    }

    fn num_constraints(&self) -> usize {
        self.constraints.len()
    }

    fn inputs(&self) -> Vec<String> {
        self.inputs.iter().map(|(_, path)| path.clone()).collect()
    }

    fn aux(&self) -> Vec<String> {
        self.aux.iter().map(|(_, path)| path.clone()).collect()
    }

    fn constraints(&self) -> &[Constraint<Scalar>] {
        &self.constraints
    }
}

impl<Scalar: PrimeField> ConstraintSystem<Scalar> for TestConstraintSystem<Scalar> {
    type Root = Self;

    fn alloc<F, A, AR>(&mut self, annotation: A, f: F) -> Result<Variable, SynthesisError>
    where
        F: FnOnce() -> Result<Scalar, SynthesisError>,
        A: FnOnce() -> AR,
        AR: Into<String>,
    {
        let path = compute_path(&self.current_namespace, &annotation().into());
        let var = Variable::new_unchecked(Index::Aux(self.aux.len()));
        self.aux.push((f()?, path.clone()));
        self.set_named_obj(path, NamedObject::Var(var));
        Ok(var)
    }

    fn alloc_input<F, A, AR>(&mut self, annotation: A, f: F) -> Result<Variable, SynthesisError>
    where
        F: FnOnce() -> Result<Scalar, SynthesisError>,
        A: FnOnce() -> AR,
        AR: Into<String>,
    {
        let path = compute_path(&self.current_namespace, &annotation().into());
        let var = Variable::new_unchecked(Index::Input(self.inputs.len()));
        self.inputs.push((f()?, path.clone()));
        self.set_named_obj(path, NamedObject::Var(var));
        Ok(var)
    }

    fn enforce<A, AR, LA, LB, LC>(&mut self, annotation: A, a: LA, b: LB, c: LC)
    where
        A: FnOnce() -> AR,
        AR: Into<String>,
        LA: FnOnce(LinearCombination<Scalar>) -> LinearCombination<Scalar>,
        LB: FnOnce(LinearCombination<Scalar>) -> LinearCombination<Scalar>,
        LC: FnOnce(LinearCombination<Scalar>) -> LinearCombination<Scalar>,
    {
        let path = compute_path(&self.current_namespace, &annotation().into());
        self.set_named_obj(path.clone(), NamedObject::Constraint);
        let a = a(LinearCombination::zero());
        let b = b(LinearCombination::zero());
        let c = c(LinearCombination::zero());
        self.constraints.push((a, b, c, path));
    }

    fn push_namespace<NR, N>(&mut self, name_fn: N)
    where
        NR: Into<String>,
        N: FnOnce() -> NR,
    {
        let name = name_fn().into();
        let path = compute_path(&self.current_namespace, &name);
        self.set_named_obj(path, NamedObject::Namespace);
        self.current_namespace.push(name);
    }

    fn pop_namespace(&mut self) {
        assert!(
            self.current_namespace.pop().is_some(),
            "pop_namespace without a matching push_namespace"
        );
    }

    fn get_root(&mut self) -> &mut Self::Root {
        self
    }
}

#[cfg(test)]
mod tests {
    use blstrs::Scalar as Fr;
    use ff::Field;

    use super::*;

    /// `x * x = y`, with the given values.
    fn square(x: u64, y: u64) -> TestConstraintSystem<Fr> {
        let mut cs = TestConstraintSystem::new();
        let a = cs.alloc(|| "x", || Ok(Fr::from(x))).unwrap();
        let b = cs.alloc(|| "y", || Ok(Fr::from(y))).unwrap();
        cs.namespace(|| "ns")
            .enforce(|| "square", |lc| lc + a, |lc| lc + a, |lc| lc + b);
        cs
    }

    #[test]
    fn satisfaction_names_the_failing_constraint() {
        assert!(square(3, 9).is_satisfied());
        let mut cs = square(3, 10);
        assert_eq!(cs.which_is_unsatisfied(), Some("ns/square"));
        cs.set("y", Fr::from(9u64));
        assert!(cs.is_satisfied());
        assert_eq!(cs.get("x"), Fr::from(3u64));
    }

    #[test]
    fn the_digest_covers_the_shape_not_the_values_or_names() {
        assert_eq!(square(3, 9).hash(), square(4, 16).hash());
        let mut other = TestConstraintSystem::<Fr>::new();
        let a = other.alloc(|| "x", || Ok(Fr::ONE)).unwrap();
        let b = other.alloc(|| "y", || Ok(Fr::ONE)).unwrap();
        other.enforce(|| "c", |lc| lc + a, |lc| lc + b, |lc| lc + b);
        assert_ne!(other.hash(), square(1, 1).hash());
        assert_eq!(
            square(1, 1).pretty_print_list(),
            ["INPUT ONE", "AUX x", "AUX y", "ns/square"]
        );
    }

    #[test]
    fn a_given_a_value_lays_out_the_same_constraint_and_is_not_trusted() {
        let mut given = TestConstraintSystem::<Fr>::new();
        let a = given.alloc(|| "x", || Ok(Fr::from(3u64))).unwrap();
        let b = given.alloc(|| "y", || Ok(Fr::from(9u64))).unwrap();
        // A wrong value: this system ignores it, as every system that does not evaluate.
        given.namespace(|| "ns").enforce_with_a_value(
            || "square",
            |lc| lc + a,
            Some(Fr::from(4u64)),
            |lc| lc + a,
            |lc| lc + b,
        );
        assert_eq!(given.hash(), square(3, 9).hash());
        assert_eq!(given.pretty_print_list(), square(3, 9).pretty_print_list());
        assert!(given.is_satisfied());
    }

    #[test]
    #[should_panic(expected = "existing path")]
    fn a_reused_path_is_a_circuit_bug() {
        let mut cs = TestConstraintSystem::<Fr>::new();
        cs.alloc(|| "x", || Ok(Fr::ONE)).unwrap();
        cs.alloc(|| "x", || Ok(Fr::ONE)).unwrap();
    }
}
