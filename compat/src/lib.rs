//! Differential harness: the same gadget calls run against crates.io bellpepper-core 0.2.1
//! (`upstream`) and against ours, recorded in a canonical, crate-independent form.
//!
//! The harness code is written once, in the `harness!` macro, and instantiated for each
//! crate, so both sides execute literally the same calls.

use blstrs::Scalar as Fr;
use ff::{Field, PrimeField};
use rand_core::RngCore;

pub mod probe;

/// A field element as its canonical little-endian bytes.
pub type Repr = [u8; 32];

/// Bytes of a field element.
pub fn repr(x: &Fr) -> Repr {
    x.to_repr()
}

/// A variable, independent of which crate made it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Var {
    /// Public input.
    Input(usize),
    /// Private variable.
    Aux(usize),
}

/// Every term of a linear combination, as iterated: zero-coefficient terms included.
pub type Terms = Vec<(Var, Repr)>;

/// Everything a constraint system was told, in order.
#[derive(Debug, Default, PartialEq)]
pub struct Record {
    /// Input paths and values (`None` where the value closure was not run).
    pub inputs: Vec<(String, Option<Repr>)>,
    /// Aux paths and values.
    pub aux: Vec<(String, Option<Repr>)>,
    /// Constraint paths with A, B and C.
    pub constraints: Vec<(String, Terms, Terms, Terms)>,
}

/// A gadget call's result: its outputs rendered canonically, or the error variant's name.
pub type Outcome = Result<Vec<String>, &'static str>;

/// How to make one boolean operand.
#[derive(Clone, Debug)]
pub enum BoolSpec {
    /// `Boolean::Constant`.
    Constant(bool),
    /// An allocated bit, used as is.
    Is(Option<bool>),
    /// An allocated bit, negated.
    Not(Option<bool>),
}

/// The four two-input `AllocatedBit` gates.
#[derive(Clone, Copy, Debug)]
pub enum Gate {
    Xor,
    And,
    AndNot,
    Nor,
}

/// One step applied to a `Num`.
#[derive(Clone, Debug)]
pub enum NumStep {
    /// `add_bool_with_coeff`.
    AddBool(BoolSpec, Fr),
    /// `add` of a freshly allocated number.
    AddNum(Option<Fr>),
    /// `scale`.
    Scale(Fr),
}

/// One public gadget call with its operands.
#[derive(Clone, Debug)]
pub enum Op {
    BitAlloc(Option<bool>),
    BitAllocConditionally(Option<bool>, Option<bool>),
    BitGate(Gate, Option<bool>, Option<bool>),
    U64IntoBits(Option<u64>),
    FieldIntoBooleans(Option<Fr>),
    FieldIntoAllocatedBits(Option<Fr>),
    BoolXor(BoolSpec, BoolSpec),
    BoolAnd(BoolSpec, BoolSpec),
    BoolEnforceEqual(BoolSpec, BoolSpec),
    Sha256Ch(BoolSpec, BoolSpec, BoolSpec),
    Sha256Maj(BoolSpec, BoolSpec, BoolSpec),
    BoolLc(BoolSpec, Fr),
    NumAlloc(Option<Fr>),
    NumAllocInput(Option<Fr>),
    NumAllocMaybeInput(bool, Option<Fr>),
    Inputize(Option<Fr>),
    ToBitsLeStrict(Option<Fr>),
    ToBitsLe(Option<Fr>),
    Mul(Option<Fr>, Option<Fr>),
    Square(Option<Fr>),
    AssertNonzero(Option<Fr>),
    ConditionallyReverse(Option<Fr>, Option<Fr>, BoolSpec),
    NumChain(Option<Fr>, Vec<NumStep>),
}

/// One step of a linear-combination script; `Snapshot(k)` operands refer to the k-th
/// combination saved so far (or the empty one when there is none).
#[derive(Clone, Debug)]
pub enum LcStep {
    AddVar(Var),
    SubVar(Var),
    AddTerm(Fr, Var),
    SubTerm(Fr, Var),
    AddLc(usize),
    SubLc(usize),
    AddScaledLc(Fr, usize),
    SubScaledLc(Fr, usize),
    ScaleInPlace(Fr),
    Save,
    Restart(Var, Option<Fr>),
}

/// A small deterministic source of test cases.
pub struct Cases<R: RngCore>(pub R);

impl<R: RngCore> Cases<R> {
    /// Uniform in `0..n`.
    pub fn below(&mut self, n: usize) -> usize {
        (self.0.next_u64() % n as u64) as usize
    }

    /// A fair coin.
    pub fn coin(&mut self) -> bool {
        self.0.next_u32() & 1 == 1
    }

    /// A bit that is missing one time in six.
    pub fn maybe_bit(&mut self) -> Option<bool> {
        (self.below(6) != 0).then(|| self.coin())
    }

    /// Coefficients as circuits use them: mostly 1, -1, powers of two, sometimes zero or
    /// arbitrary.
    pub fn coeff(&mut self) -> Fr {
        match self.below(6) {
            0 => Fr::ONE,
            1 => -Fr::ONE,
            2 => Fr::from(1u64 << self.below(63)),
            3 => Fr::ZERO,
            4 => Fr::from(self.0.next_u64()),
            _ => Fr::random(&mut self.0),
        }
    }

    /// A field element that is missing one time in six, zero or small sometimes.
    pub fn maybe_field(&mut self) -> Option<Fr> {
        match self.below(6) {
            0 => None,
            1 => Some(Fr::ZERO),
            2 => Some(Fr::from(self.0.next_u64())),
            3 => Some(-Fr::ONE),
            _ => Some(Fr::random(&mut self.0)),
        }
    }

    /// A boolean operand: constant, plain or negated.
    pub fn bool_spec(&mut self) -> BoolSpec {
        match self.below(5) {
            0 => BoolSpec::Constant(self.coin()),
            1 | 2 => BoolSpec::Is(self.maybe_bit()),
            _ => BoolSpec::Not(self.maybe_bit()),
        }
    }

    /// Any gadget call with random operands.
    pub fn op(&mut self) -> Op {
        let gates = [Gate::Xor, Gate::And, Gate::AndNot, Gate::Nor];
        match self.below(23) {
            0 => Op::BitAlloc(self.maybe_bit()),
            1 => Op::BitAllocConditionally(self.maybe_bit(), self.maybe_bit()),
            2 => Op::BitGate(gates[self.below(4)], self.maybe_bit(), self.maybe_bit()),
            3 => Op::U64IntoBits((self.below(6) != 0).then(|| self.0.next_u64())),
            4 => Op::FieldIntoBooleans(self.maybe_field()),
            5 => Op::FieldIntoAllocatedBits(self.maybe_field()),
            6 => Op::BoolXor(self.bool_spec(), self.bool_spec()),
            7 => Op::BoolAnd(self.bool_spec(), self.bool_spec()),
            8 => Op::BoolEnforceEqual(self.bool_spec(), self.bool_spec()),
            9 => Op::Sha256Ch(self.bool_spec(), self.bool_spec(), self.bool_spec()),
            10 => Op::Sha256Maj(self.bool_spec(), self.bool_spec(), self.bool_spec()),
            11 => Op::BoolLc(self.bool_spec(), self.coeff()),
            12 => Op::NumAlloc(self.maybe_field()),
            13 => Op::NumAllocInput(self.maybe_field()),
            14 => Op::NumAllocMaybeInput(self.coin(), self.maybe_field()),
            15 => Op::Inputize(self.maybe_field()),
            16 => Op::ToBitsLeStrict(self.maybe_field()),
            17 => Op::ToBitsLe(self.maybe_field()),
            18 => Op::Mul(self.maybe_field(), self.maybe_field()),
            19 => Op::Square(self.maybe_field()),
            20 => Op::AssertNonzero(self.maybe_field()),
            21 => {
                Op::ConditionallyReverse(self.maybe_field(), self.maybe_field(), self.bool_spec())
            }
            _ => {
                let steps = (0..self.below(8))
                    .map(|_| match self.below(3) {
                        0 => NumStep::AddBool(self.bool_spec(), self.coeff()),
                        1 => NumStep::AddNum(self.maybe_field()),
                        _ => NumStep::Scale(self.coeff()),
                    })
                    .collect();
                Op::NumChain(self.maybe_field(), steps)
            }
        }
    }

    /// A variable among few, so terms collide and cancel often.
    pub fn var(&mut self) -> Var {
        if self.below(3) == 0 {
            Var::Input(self.below(4))
        } else {
            Var::Aux(self.below(12))
        }
    }

    /// A linear-combination script of `len` steps.
    pub fn lc_script(&mut self, len: usize) -> Vec<LcStep> {
        (0..len)
            .map(|_| match self.below(12) {
                0 => LcStep::AddVar(self.var()),
                1 => LcStep::SubVar(self.var()),
                2 | 3 => LcStep::AddTerm(self.coeff(), self.var()),
                4 => LcStep::SubTerm(self.coeff(), self.var()),
                5 => LcStep::AddLc(self.below(8)),
                6 => LcStep::SubLc(self.below(8)),
                7 => LcStep::AddScaledLc(self.coeff(), self.below(8)),
                8 => LcStep::SubScaledLc(self.coeff(), self.below(8)),
                9 => LcStep::ScaleInPlace(self.coeff()),
                10 => LcStep::Save,
                _ => LcStep::Restart(self.var(), (self.coin()).then(|| self.coeff())),
            })
            .collect()
    }
}

/// Instantiates the harness for one bellpepper-core crate.
#[macro_export]
macro_rules! harness {
    ($core:ident) => {
        use blstrs::Scalar as Fr;
        use ff::Field;
        use $core::boolean::{self, AllocatedBit, Boolean};
        use $core::num::{AllocatedNum, Num};
        use $core::{ConstraintSystem, Index, LinearCombination, SynthesisError, Variable};
        use $crate::{
            probe, repr, BoolSpec, Gate, LcStep, NumStep, Op, Outcome, Record, Terms, Var,
        };

        /// The crate-independent name of a variable.
        pub fn var(v: Variable) -> Var {
            match v.get_unchecked() {
                Index::Input(i) => Var::Input(i),
                Index::Aux(i) => Var::Aux(i),
            }
        }

        /// This crate's variable for a crate-independent one.
        pub fn variable(v: Var) -> Variable {
            match v {
                Var::Input(i) => Variable::new_unchecked(Index::Input(i)),
                Var::Aux(i) => Variable::new_unchecked(Index::Aux(i)),
            }
        }

        /// Every term of `lc`, as iterated.
        pub fn terms(lc: &LinearCombination<Fr>) -> Terms {
            lc.iter().map(|(v, c)| (var(v), repr(c))).collect()
        }

        /// The name of an error variant.
        pub fn error_name(e: &SynthesisError) -> &'static str {
            match e {
                SynthesisError::AssignmentMissing => "AssignmentMissing",
                SynthesisError::DivisionByZero => "DivisionByZero",
                SynthesisError::Unsatisfiable => "Unsatisfiable",
                SynthesisError::PolynomialDegreeTooLarge => "PolynomialDegreeTooLarge",
                SynthesisError::UnexpectedIdentity => "UnexpectedIdentity",
                SynthesisError::IoError(_) => "IoError",
                SynthesisError::MalformedVerifyingKey => "MalformedVerifyingKey",
                SynthesisError::UnconstrainedVariable => "UnconstrainedVariable",
                SynthesisError::MalformedProofs(_) => "MalformedProofs",
                SynthesisError::MalformedSrs => "MalformedSrs",
                SynthesisError::NonPowerOfTwo => "NonPowerOfTwo",
                SynthesisError::IncompatibleLengthVector(_) => "IncompatibleLengthVector",
                SynthesisError::InvalidPairing => "InvalidPairing",
            }
        }

        /// A root constraint system that records everything it is told. With
        /// `call_values` false it never runs value closures, as parameter generation does.
        pub struct Recorder {
            call_values: bool,
            namespace: Vec<String>,
            /// What was recorded.
            pub record: Record,
        }

        impl Recorder {
            /// An empty recorder holding the constant-one input.
            pub fn new(call_values: bool) -> Self {
                let mut record = Record::default();
                record.inputs.push(("ONE".into(), Some(repr(&Fr::ONE))));
                Recorder {
                    call_values,
                    namespace: Vec::new(),
                    record,
                }
            }

            fn path(&self, name: String) -> String {
                let mut parts = self.namespace.clone();
                parts.push(name);
                parts.join("/")
            }

            fn value<F>(&self, f: F) -> Result<Option<[u8; 32]>, SynthesisError>
            where
                F: FnOnce() -> Result<Fr, SynthesisError>,
            {
                if self.call_values {
                    Ok(Some(repr(&f()?)))
                } else {
                    Ok(None)
                }
            }
        }

        impl ConstraintSystem<Fr> for Recorder {
            type Root = Self;

            fn alloc<F, A, AR>(&mut self, annotation: A, f: F) -> Result<Variable, SynthesisError>
            where
                F: FnOnce() -> Result<Fr, SynthesisError>,
                A: FnOnce() -> AR,
                AR: Into<String>,
            {
                let path = self.path(annotation().into());
                let value = self.value(f)?;
                self.record.aux.push((path, value));
                Ok(Variable::new_unchecked(Index::Aux(
                    self.record.aux.len() - 1,
                )))
            }

            fn alloc_input<F, A, AR>(
                &mut self,
                annotation: A,
                f: F,
            ) -> Result<Variable, SynthesisError>
            where
                F: FnOnce() -> Result<Fr, SynthesisError>,
                A: FnOnce() -> AR,
                AR: Into<String>,
            {
                let path = self.path(annotation().into());
                let value = self.value(f)?;
                self.record.inputs.push((path, value));
                Ok(Variable::new_unchecked(Index::Input(
                    self.record.inputs.len() - 1,
                )))
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
                let a = terms(&a(LinearCombination::zero()));
                let b = terms(&b(LinearCombination::zero()));
                let c = terms(&c(LinearCombination::zero()));
                self.record.constraints.push((path, a, b, c));
            }

            fn push_namespace<NR, N>(&mut self, name_fn: N)
            where
                NR: Into<String>,
                N: FnOnce() -> NR,
            {
                self.namespace.push(name_fn().into());
            }

            fn pop_namespace(&mut self) {
                self.namespace.pop();
            }

            fn get_root(&mut self) -> &mut Self::Root {
                self
            }
        }

        /// A constraint system that keeps nothing but variable counters: it runs every
        /// closure on a fresh empty combination and drops the result, so the only
        /// allocations left are the gadget's.
        #[derive(Default)]
        pub struct Discard {
            inputs: usize,
            aux: usize,
        }

        impl ConstraintSystem<Fr> for Discard {
            type Root = Self;

            fn alloc<F, A, AR>(&mut self, _: A, f: F) -> Result<Variable, SynthesisError>
            where
                F: FnOnce() -> Result<Fr, SynthesisError>,
                A: FnOnce() -> AR,
                AR: Into<String>,
            {
                f()?;
                self.aux += 1;
                Ok(Variable::new_unchecked(Index::Aux(self.aux - 1)))
            }

            fn alloc_input<F, A, AR>(&mut self, _: A, f: F) -> Result<Variable, SynthesisError>
            where
                F: FnOnce() -> Result<Fr, SynthesisError>,
                A: FnOnce() -> AR,
                AR: Into<String>,
            {
                f()?;
                self.inputs += 1;
                Ok(Variable::new_unchecked(Index::Input(self.inputs)))
            }

            fn enforce<A, AR, LA, LB, LC>(&mut self, _: A, a: LA, b: LB, c: LC)
            where
                A: FnOnce() -> AR,
                AR: Into<String>,
                LA: FnOnce(LinearCombination<Fr>) -> LinearCombination<Fr>,
                LB: FnOnce(LinearCombination<Fr>) -> LinearCombination<Fr>,
                LC: FnOnce(LinearCombination<Fr>) -> LinearCombination<Fr>,
            {
                drop(a(LinearCombination::zero()));
                drop(b(LinearCombination::zero()));
                drop(c(LinearCombination::zero()));
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

        fn show_bit(bit: &AllocatedBit) -> String {
            format!("{:?}={:?}", var(bit.get_variable()), bit.get_value())
        }

        fn show_bool(b: &Boolean) -> String {
            match b {
                Boolean::Constant(c) => format!("Constant({})", c),
                Boolean::Is(bit) => format!("Is({})", show_bit(bit)),
                Boolean::Not(bit) => format!("Not({})", show_bit(bit)),
            }
        }

        fn show_num(n: &AllocatedNum<Fr>) -> String {
            format!(
                "{:?}={:?}",
                var(n.get_variable()),
                n.get_value().map(|v| repr(&v))
            )
        }

        fn show_lc(lc: &LinearCombination<Fr>) -> String {
            format!("{:?} len={} empty={}", terms(lc), lc.len(), lc.is_empty())
        }

        fn bit<CS: ConstraintSystem<Fr>>(
            cs: &mut CS,
            name: &str,
            value: Option<bool>,
        ) -> Result<AllocatedBit, SynthesisError> {
            AllocatedBit::alloc(cs.namespace(|| name.to_string()), value)
        }

        fn boolean<CS: ConstraintSystem<Fr>>(
            cs: &mut CS,
            name: &str,
            spec: &BoolSpec,
        ) -> Result<Boolean, SynthesisError> {
            Ok(match spec {
                BoolSpec::Constant(c) => Boolean::Constant(*c),
                BoolSpec::Is(v) => Boolean::Is(bit(cs, name, *v)?),
                BoolSpec::Not(v) => Boolean::Not(bit(cs, name, *v)?),
            })
        }

        fn number<CS: ConstraintSystem<Fr>>(
            cs: &mut CS,
            name: &str,
            value: Option<Fr>,
        ) -> Result<AllocatedNum<Fr>, SynthesisError> {
            AllocatedNum::alloc(cs.namespace(|| name.to_string()), || {
                value.ok_or(SynthesisError::AssignmentMissing)
            })
        }

        /// Runs `gadget` with the allocation probe on, so only the call itself is counted.
        fn measured<T>(
            gadget: impl FnOnce() -> Result<T, SynthesisError>,
        ) -> Result<T, SynthesisError> {
            probe::start();
            let result = gadget();
            probe::stop();
            result
        }

        fn bools(out: Vec<Boolean>) -> Vec<String> {
            out.iter().map(show_bool).collect()
        }

        fn run_inner<CS: ConstraintSystem<Fr>>(
            cs: &mut CS,
            op: &Op,
        ) -> Result<Vec<String>, SynthesisError> {
            let one = CS::one();
            let mut cs = cs.namespace(|| "case");
            let cs = &mut cs;
            Ok(match op {
                Op::BitAlloc(v) => {
                    vec![show_bit(&measured(|| {
                        AllocatedBit::alloc(cs.namespace(|| "op"), *v)
                    })?)]
                }
                Op::BitAllocConditionally(v, guard) => {
                    let guard = bit(cs, "guard", *guard)?;
                    let out = measured(|| {
                        AllocatedBit::alloc_conditionally(cs.namespace(|| "op"), *v, &guard)
                    })?;
                    vec![show_bit(&out)]
                }
                Op::BitGate(gate, x, y) => {
                    let (x, y) = (bit(cs, "x", *x)?, bit(cs, "y", *y)?);
                    let ns = cs.namespace(|| "op");
                    let out = measured(|| match gate {
                        Gate::Xor => AllocatedBit::xor(ns, &x, &y),
                        Gate::And => AllocatedBit::and(ns, &x, &y),
                        Gate::AndNot => AllocatedBit::and_not(ns, &x, &y),
                        Gate::Nor => AllocatedBit::nor(ns, &x, &y),
                    })?;
                    vec![show_bit(&out)]
                }
                Op::U64IntoBits(v) => bools(measured(|| {
                    boolean::u64_into_boolean_vec_le(cs.namespace(|| "op"), *v)
                })?),
                Op::FieldIntoBooleans(v) => bools(measured(|| {
                    boolean::field_into_boolean_vec_le(cs.namespace(|| "op"), *v)
                })?),
                Op::FieldIntoAllocatedBits(v) => {
                    measured(|| boolean::field_into_allocated_bits_le(cs.namespace(|| "op"), *v))?
                        .iter()
                        .map(show_bit)
                        .collect()
                }
                Op::BoolXor(x, y) | Op::BoolAnd(x, y) | Op::BoolEnforceEqual(x, y) => {
                    let (x, y) = (boolean(cs, "x", x)?, boolean(cs, "y", y)?);
                    let ns = cs.namespace(|| "op");
                    match op {
                        Op::BoolXor(..) => vec![show_bool(&measured(|| Boolean::xor(ns, &x, &y))?)],
                        Op::BoolAnd(..) => vec![show_bool(&measured(|| Boolean::and(ns, &x, &y))?)],
                        _ => {
                            measured(|| Boolean::enforce_equal(ns, &x, &y))?;
                            vec![]
                        }
                    }
                }
                Op::Sha256Ch(x, y, z) | Op::Sha256Maj(x, y, z) => {
                    let x = boolean(cs, "x", x)?;
                    let y = boolean(cs, "y", y)?;
                    let z = boolean(cs, "z", z)?;
                    let ns = cs.namespace(|| "op");
                    let out = match op {
                        Op::Sha256Ch(..) => measured(|| Boolean::sha256_ch(ns, &x, &y, &z))?,
                        _ => measured(|| Boolean::sha256_maj(ns, &x, &y, &z))?,
                    };
                    vec![show_bool(&out), format!("{:?}", out.get_value())]
                }
                Op::BoolLc(x, coeff) => {
                    let x = boolean(cs, "x", x)?;
                    let lc = x.lc(one, *coeff);
                    let negated = x.not();
                    vec![
                        show_lc(&lc),
                        show_bool(&negated),
                        format!("{}", x.is_constant()),
                    ]
                }
                Op::NumAlloc(v) => vec![show_num(&number(cs, "op", *v)?)],
                Op::NumAllocInput(v) | Op::NumAllocMaybeInput(_, v) => {
                    let is_input = !matches!(op, Op::NumAllocMaybeInput(false, _));
                    let value = || v.ok_or(SynthesisError::AssignmentMissing);
                    let ns = cs.namespace(|| "op");
                    let out = match op {
                        Op::NumAllocInput(_) => AllocatedNum::alloc_input(ns, value)?,
                        _ => AllocatedNum::alloc_maybe_input(ns, is_input, value)?,
                    };
                    vec![show_num(&out)]
                }
                Op::Inputize(v) => {
                    let n = number(cs, "n", *v)?;
                    measured(|| n.inputize(cs.namespace(|| "op")))?;
                    vec![]
                }
                Op::ToBitsLeStrict(v) => {
                    let n = number(cs, "n", *v)?;
                    bools(measured(|| n.to_bits_le_strict(cs.namespace(|| "op")))?)
                }
                Op::ToBitsLe(v) => {
                    let n = number(cs, "n", *v)?;
                    bools(measured(|| n.to_bits_le(cs.namespace(|| "op")))?)
                }
                Op::Mul(x, y) => {
                    let (x, y) = (number(cs, "x", *x)?, number(cs, "y", *y)?);
                    vec![show_num(&measured(|| x.mul(cs.namespace(|| "op"), &y))?)]
                }
                Op::Square(x) => {
                    let x = number(cs, "x", *x)?;
                    vec![show_num(&measured(|| x.square(cs.namespace(|| "op")))?)]
                }
                Op::AssertNonzero(x) => {
                    let x = number(cs, "x", *x)?;
                    measured(|| x.assert_nonzero(cs.namespace(|| "op")))?;
                    vec![]
                }
                Op::ConditionallyReverse(x, y, condition) => {
                    let (x, y) = (number(cs, "x", *x)?, number(cs, "y", *y)?);
                    let condition = boolean(cs, "condition", condition)?;
                    let (c, d) = measured(|| {
                        AllocatedNum::conditionally_reverse(
                            cs.namespace(|| "op"),
                            &x,
                            &y,
                            &condition,
                        )
                    })?;
                    vec![show_num(&c), show_num(&d)]
                }
                Op::NumChain(start, steps) => {
                    let mut num = match start {
                        Some(_) => Num::from(number(cs, "start", *start)?),
                        None => Num::zero(),
                    };
                    for (i, step) in steps.iter().enumerate() {
                        num = match step {
                            NumStep::AddBool(b, coeff) => {
                                let b = boolean(cs, &format!("bool {}", i), b)?;
                                measured(|| Ok(num.add_bool_with_coeff(one, &b, *coeff)))?
                            }
                            NumStep::AddNum(v) => {
                                let other = Num::from(number(cs, &format!("num {}", i), *v)?);
                                num.add(&other)
                            }
                            NumStep::Scale(s) => num.scale(*s),
                        };
                    }
                    let lc = num.lc(Fr::ONE);
                    cs.enforce(|| "use", |lc| lc, |lc| lc, |_| num.lc(Fr::ONE));
                    vec![
                        show_lc(&lc),
                        format!("{:?}", num.get_value().map(|v| repr(&v))),
                    ]
                }
            })
        }

        /// Runs one gadget call in `cs`, rendering its outputs or error canonically.
        pub fn run<CS: ConstraintSystem<Fr>>(cs: &mut CS, op: &Op) -> Outcome {
            run_inner(cs, op).map_err(|e| error_name(&e))
        }

        /// Runs `op` in a recorder and returns the outcome with everything recorded.
        pub fn record(op: &Op, call_values: bool) -> (Outcome, Record) {
            let mut cs = Recorder::new(call_values);
            let outcome = run(&mut cs, op);
            (outcome, cs.record)
        }

        /// Runs `op` in this crate's `TestConstraintSystem`: outcome, digest, names,
        /// satisfaction.
        pub fn test_cs(op: &Op) -> (Outcome, String, String, bool, usize) {
            let mut cs = $core::test_cs::TestConstraintSystem::<Fr>::new();
            let outcome = run(&mut cs, op);
            (
                outcome,
                cs.hash(),
                cs.pretty_print(),
                cs.is_satisfied(),
                cs.num_constraints(),
            )
        }

        /// Allocations made by the gadget call itself (the probe brackets only the call).
        pub fn allocations(op: &Op) -> u64 {
            probe::reset();
            let _ = run(&mut Discard::default(), op);
            probe::count()
        }

        fn snapshot(saved: &[LinearCombination<Fr>], k: usize) -> LinearCombination<Fr> {
            saved
                .get(k % saved.len().max(1))
                .cloned()
                .unwrap_or_else(LinearCombination::zero)
        }

        fn apply(
            lc: LinearCombination<Fr>,
            saved: &mut Vec<LinearCombination<Fr>>,
            step: &LcStep,
        ) -> LinearCombination<Fr> {
            match step {
                LcStep::AddVar(v) => lc + variable(*v),
                LcStep::SubVar(v) => lc - variable(*v),
                LcStep::AddTerm(c, v) => lc + (*c, variable(*v)),
                LcStep::SubTerm(c, v) => lc - (*c, variable(*v)),
                LcStep::AddLc(k) => lc + &snapshot(saved, *k),
                LcStep::SubLc(k) => lc - &snapshot(saved, *k),
                LcStep::AddScaledLc(c, k) => lc + (*c, &snapshot(saved, *k)),
                LcStep::SubScaledLc(c, k) => lc - (*c, &snapshot(saved, *k)),
                LcStep::ScaleInPlace(c) => {
                    let mut lc = lc;
                    for (_, coeff) in lc.iter_mut() {
                        *coeff *= c;
                    }
                    lc
                }
                LcStep::Save => {
                    saved.push(lc.clone());
                    lc
                }
                LcStep::Restart(v, Some(c)) => LinearCombination::from_coeff(variable(*v), *c),
                LcStep::Restart(v, None) => LinearCombination::from_variable(variable(*v)),
            }
        }

        /// The combination a script ends with.
        pub fn build_lc(steps: &[LcStep]) -> LinearCombination<Fr> {
            let mut saved = Vec::new();
            steps.iter().fold(LinearCombination::zero(), |lc, step| {
                apply(lc, &mut saved, step)
            })
        }

        /// Runs a linear-combination script and renders the combination after every step,
        /// with its evaluation on `inputs` / `aux`.
        pub fn lc_script(steps: &[LcStep], inputs: &[Fr], aux: &[Fr]) -> Vec<String> {
            let mut lc = LinearCombination::<Fr>::zero();
            let mut saved = Vec::new();
            let mut out = Vec::new();
            for step in steps {
                lc = apply(lc, &mut saved, step);
                let inputs_seen: Vec<_> = lc.iter_inputs().map(|(i, c)| (*i, repr(c))).collect();
                let aux_seen: Vec<_> = lc.iter_aux().map(|(i, c)| (*i, repr(c))).collect();
                out.push(format!(
                    "{} inputs={:?} aux={:?} eval={:?}",
                    show_lc(&lc),
                    inputs_seen,
                    aux_seen,
                    repr(&lc.eval(inputs, aux))
                ));
            }
            out
        }

        /// `spec` as a boolean over the variable `Aux(0)` (value unknown).
        pub fn lone_boolean(spec: &BoolSpec) -> Boolean {
            let mut cs = Recorder::new(false);
            boolean(&mut cs, "lone", spec).expect("a recorder without values cannot fail")
        }

        /// The allocated number `Aux(0)` as a `Num`, after `steps` (values unknown).
        pub fn lone_num(steps: &[NumStep]) -> Num<Fr> {
            let mut cs = Recorder::new(false);
            let one = Recorder::one();
            let infallible = "a recorder without values cannot fail";
            let mut num = Num::from(number(&mut cs, "lone", None).expect(infallible));
            for (i, step) in steps.iter().enumerate() {
                num = match step {
                    NumStep::AddBool(b, coeff) => {
                        let b = boolean(&mut cs, &format!("b{}", i), b).expect(infallible);
                        num.add_bool_with_coeff(one, &b, *coeff)
                    }
                    NumStep::AddNum(v) => {
                        let other = number(&mut cs, &format!("n{}", i), *v).expect(infallible);
                        num.add(&Num::from(other))
                    }
                    NumStep::Scale(s) => num.scale(*s),
                };
            }
            num
        }
    };
}

/// The harness instantiated for crates.io bellpepper-core 0.2.1.
pub mod upstream_side {
    harness!(upstream);
}

/// The harness instantiated for our bellpepper-core.
pub mod our_side {
    harness!(ours);
}
