//! Ours against crates.io bellpepper-core 0.2.1, in one binary: every public gadget call and
//! linear-combination operation must leave the same record (constraints in order with every
//! term, variables in order with names and values), the same outputs and the same errors.

use blstrs::Scalar as Fr;
use ff::{Field, PrimeField};
use rand_core::SeedableRng;
use rand_xorshift::XorShiftRng;
use synthpool_compat::{our_side, repr, upstream_side, BoolSpec, Cases, NumStep, Op, Var};

fn cases(seed: u64) -> Cases<XorShiftRng> {
    Cases(XorShiftRng::seed_from_u64(seed))
}

fn all_bool_specs() -> Vec<BoolSpec> {
    let mut specs = vec![BoolSpec::Constant(false), BoolSpec::Constant(true)];
    for value in [Some(false), Some(true), None] {
        specs.push(BoolSpec::Is(value));
        specs.push(BoolSpec::Not(value));
    }
    specs
}

fn assert_same(op: &Op) {
    for call_values in [true, false] {
        let ours = our_side::record(op, call_values);
        let theirs = upstream_side::record(op, call_values);
        assert_eq!(ours, theirs, "{op:?} (value closures run: {call_values})");
    }
    assert_eq!(
        our_side::test_cs(op),
        upstream_side::test_cs(op),
        "{op:?} in TestConstraintSystem"
    );
}

#[test]
fn random_gadget_calls_match_upstream() {
    let mut cases = cases(0x5eed);
    let mut failures_seen = 0;
    for _ in 0..3000 {
        let op = cases.op();
        assert_same(&op);
        failures_seen += usize::from(upstream_side::record(&op, true).0.is_err());
    }
    // The random mix must exercise the error paths too, or it proves less than it claims.
    assert!(failures_seen > 300, "only {failures_seen} calls failed");
}

#[test]
fn every_operand_kind_of_the_boolean_gates_matches_upstream() {
    let specs = all_bool_specs();
    for x in &specs {
        for y in &specs {
            assert_same(&Op::BoolXor(x.clone(), y.clone()));
            assert_same(&Op::BoolAnd(x.clone(), y.clone()));
            assert_same(&Op::BoolEnforceEqual(x.clone(), y.clone()));
            for z in &specs {
                assert_same(&Op::Sha256Ch(x.clone(), y.clone(), z.clone()));
                assert_same(&Op::Sha256Maj(x.clone(), y.clone(), z.clone()));
            }
        }
    }
}

#[test]
fn field_edge_values_match_upstream() {
    let edges = [
        None,
        Some(Fr::ZERO),
        Some(Fr::ONE),
        Some(-Fr::ONE),
        Some(Fr::from(u64::MAX)),
        Some(Fr::ROOT_OF_UNITY),
        Some(Fr::MULTIPLICATIVE_GENERATOR.invert().unwrap()),
    ];
    for value in edges {
        for op in [
            Op::ToBitsLeStrict(value),
            Op::ToBitsLe(value),
            Op::FieldIntoBooleans(value),
            Op::FieldIntoAllocatedBits(value),
            Op::AssertNonzero(value),
            Op::Square(value),
            Op::Inputize(value),
        ] {
            assert_same(&op);
        }
    }
    assert_eq!(
        our_side::record(&Op::AssertNonzero(Some(Fr::ZERO)), true).0,
        Err("DivisionByZero")
    );
}

#[test]
fn linear_combination_scripts_match_upstream() {
    let mut cases = cases(0x1c);
    let inputs: Vec<Fr> = (0..4).map(|_| Fr::random(&mut cases.0)).collect();
    let aux: Vec<Fr> = (0..12)
        .map(|i| {
            if i % 3 == 0 {
                Fr::ONE
            } else {
                Fr::random(&mut cases.0)
            }
        })
        .collect();
    for _ in 0..800 {
        let script = cases.lc_script(48);
        assert_eq!(
            our_side::lc_script(&script, &inputs, &aux),
            upstream_side::lc_script(&script, &inputs, &aux),
            "{script:?}"
        );
    }
}

#[test]
fn boolean_add_and_sub_to_lc_equal_merging_a_fresh_lc() {
    let mut cases = cases(0xb001);
    let one = ours::Variable::new_unchecked(ours::Index::Input(0));
    let one_up = upstream::Variable::new_unchecked(upstream::Index::Input(0));
    for _ in 0..600 {
        let script = cases.lc_script(12);
        let coeff = cases.coeff();
        for spec in all_bool_specs() {
            let bit = our_side::lone_boolean(&spec);
            let bit_up = upstream_side::lone_boolean(&spec);
            let base = our_side::build_lc(&script);
            let base_up = upstream_side::build_lc(&script);

            let added = bit.add_to_lc(base.clone(), one, coeff);
            let added_up = base_up.clone() + &bit_up.lc(one_up, coeff);
            assert_eq!(
                our_side::terms(&added),
                upstream_side::terms(&added_up),
                "{spec:?} + to {script:?}"
            );

            let subbed = bit.sub_from_lc(base, one, coeff);
            let subbed_up = base_up - &bit_up.lc(one_up, coeff);
            assert_eq!(
                our_side::terms(&subbed),
                upstream_side::terms(&subbed_up),
                "{spec:?} - from {script:?}"
            );
        }
    }
}

#[test]
fn num_add_and_sub_to_lc_equal_merging_a_fresh_lc() {
    let mut cases = cases(0x4e);
    for _ in 0..600 {
        let script = cases.lc_script(12);
        let steps: Vec<NumStep> = (0..cases.below(6))
            .map(|_| match cases.below(3) {
                0 => NumStep::AddBool(cases.bool_spec(), cases.coeff()),
                1 => NumStep::AddNum(None),
                _ => NumStep::Scale(cases.coeff()),
            })
            .collect();
        let coeff = cases.coeff();
        let num = our_side::lone_num(&steps);
        let num_up = upstream_side::lone_num(&steps);
        let base = our_side::build_lc(&script);
        let base_up = upstream_side::build_lc(&script);

        let added = num.add_to_lc(base.clone(), coeff);
        let added_up = base_up.clone() + &num_up.lc(coeff);
        assert_eq!(our_side::terms(&added), upstream_side::terms(&added_up));

        let subbed = num.sub_from_lc(base, coeff);
        let subbed_up = base_up - &num_up.lc(coeff);
        assert_eq!(our_side::terms(&subbed), upstream_side::terms(&subbed_up));
    }
}

#[test]
fn recycled_buffers_build_the_same_lc() {
    let mut cases = cases(0xbf);
    let (mut inputs, mut aux) = (Vec::new(), Vec::new());
    for _ in 0..200 {
        let script = cases.lc_script(20);
        let fresh = our_side::build_lc(&script);
        let mut recycled = ours::LinearCombination::<Fr>::from_buffers(inputs, aux);
        for (var, coeff) in fresh.iter() {
            recycled = recycled + (*coeff, var);
        }
        assert_eq!(our_side::terms(&recycled), our_side::terms(&fresh));
        assert_eq!(recycled.input_terms(), fresh.input_terms());
        assert_eq!(recycled.aux_terms(), fresh.aux_terms());
        (inputs, aux) = recycled.into_buffers();
    }
}

#[test]
fn test_constraint_system_digest_matches_upstream_on_a_known_circuit() {
    // A circuit mixing every gadget, built the same way in both crates.
    let mut cases = cases(0xd16e57);
    let ops: Vec<Op> = (0..400).map(|_| cases.op()).collect();
    let digest = |ours: bool| {
        ops.iter()
            .map(|op| {
                if ours {
                    our_side::test_cs(op).1
                } else {
                    upstream_side::test_cs(op).1
                }
            })
            .collect::<Vec<_>>()
    };
    assert_eq!(digest(true), digest(false));
}

#[test]
fn the_harness_sees_differences() {
    // A harness that cannot fail proves nothing: a changed coefficient must show.
    let op = Op::BoolLc(BoolSpec::Not(Some(true)), Fr::ONE);
    let other = Op::BoolLc(BoolSpec::Not(Some(true)), Fr::ONE.double());
    assert_ne!(
        our_side::record(&op, true),
        upstream_side::record(&other, true)
    );
    let terms = our_side::terms(&our_side::build_lc(&[synthpool_compat::LcStep::AddVar(
        Var::Aux(1),
    )]));
    assert_eq!(terms, vec![(Var::Aux(1), repr(&Fr::ONE))]);
}
