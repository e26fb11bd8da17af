//! Soundness of the SHA-256 family, in bellman's style: with honest values every constraint
//! holds; change one value the gadgets allocated and the system is no longer satisfied.

mod common;

use bellpepper_core::boolean::{AllocatedBit, Boolean};
use bellpepper_core::test_cs::TestConstraintSystem;
use bellpepper_core::ConstraintSystem;
use blstrs::Scalar as Fr;
use common::{message_bits, Bits};
use ff::Field;
use synthpool::sha256::multieq::MultiEq;
use synthpool::sha256::uint32::UInt32;
use synthpool::sha256::{multipack, sha256};

/// The paths of the aux variables allocated under `prefix`.
fn aux_under(cs: &TestConstraintSystem<Fr>, prefix: &str) -> Vec<String> {
    cs.pretty_print_list()
        .into_iter()
        .filter_map(|line| line.strip_prefix("AUX ").map(str::to_string))
        .filter(|path| path.starts_with(prefix))
        .collect()
}

/// Flips each of `paths` in turn (0 <-> 1, or adds one to another value) and asserts the
/// system is then unsatisfied; restores it after each.
fn assert_each_change_is_caught(cs: &mut TestConstraintSystem<Fr>, paths: &[String]) {
    assert!(!paths.is_empty());
    for path in paths {
        let value = cs.get(path);
        let changed = if value == Fr::ZERO || value == Fr::ONE {
            Fr::ONE - value
        } else {
            value + Fr::ONE
        };
        cs.set(path, changed);
        assert!(!cs.is_satisfied(), "changing {path} goes unnoticed");
        cs.set(path, value);
    }
    assert!(cs.is_satisfied());
}

fn word(cs: &mut TestConstraintSystem<Fr>, name: &str, value: u32) -> UInt32 {
    UInt32::alloc(cs.namespace(|| name), Some(value)).unwrap()
}

#[test]
fn sha256_catches_a_change_to_any_value_it_allocated() {
    let mut cs = TestConstraintSystem::<Fr>::new();
    let message: Vec<u8> = (0..64u8).map(|i| i.wrapping_mul(73)).collect();
    let bits = message_bits(&mut cs, &message, Bits::Mixed, true).unwrap();
    sha256(cs.namespace(|| "sha"), &bits).unwrap();
    assert!(cs.is_satisfied());
    // A sample spread over both blocks: xor, ch, maj and addition results alike.
    let sample: Vec<String> = aux_under(&cs, "sha/").into_iter().step_by(1499).collect();
    assert!(sample.len() >= 25, "{}", sample.len());
    assert_each_change_is_caught(&mut cs, &sample);
}

#[test]
fn uint32_operations_catch_a_wrong_result() {
    let mut cs = TestConstraintSystem::<Fr>::new();
    let a = word(&mut cs, "a", 0xdead_beef);
    let b = word(&mut cs, "b", 0x0123_4567);
    let c = word(&mut cs, "c", 0xffff_0000);
    a.xor(cs.namespace(|| "xor"), &b.rotr(7)).unwrap();
    UInt32::sha256_ch(cs.namespace(|| "ch"), &a, &b, &c).unwrap();
    UInt32::sha256_maj(cs.namespace(|| "maj"), &a, &b, &c).unwrap();
    assert!(cs.is_satisfied());
    let results: Vec<String> = ["xor", "ch", "maj"]
        .iter()
        .flat_map(|prefix| aux_under(&cs, &format!("{prefix}/")).into_iter().step_by(7))
        .collect();
    assert_each_change_is_caught(&mut cs, &results);
}

#[test]
fn additions_packed_by_multieq_catch_a_wrong_sum_bit() {
    let mut cs = TestConstraintSystem::<Fr>::new();
    let words: Vec<UInt32> = (0..5u32)
        .map(|i| {
            word(
                &mut cs,
                &format!("w{i}"),
                0x9e37_79b9u32.wrapping_mul(i + 1),
            )
        })
        .collect();
    let expected = (1..=5u32).fold(0u32, |sum, i| {
        sum.wrapping_add(0x9e37_79b9u32.wrapping_mul(i))
    });
    {
        // Two additions, so the packed constraint holds two equalities.
        let mut meq = MultiEq::new(cs.namespace(|| "meq"));
        let sum = UInt32::addmany(meq.namespace(|| "sum"), &words).unwrap();
        UInt32::addmany(meq.namespace(|| "pair"), &words[..2]).unwrap();
        let value = sum.into_bits().iter().rev().fold(0u32, |acc, bit| {
            (acc << 1) | u32::from(bit.get_value().unwrap())
        });
        assert_eq!(value, expected);
    }
    assert!(cs.is_satisfied());
    // Flipping a result bit keeps it boolean: only the packed equality catches it.
    let results: Vec<String> = aux_under(&cs, "meq/").into_iter().step_by(5).collect();
    assert_each_change_is_caught(&mut cs, &results);
}

#[test]
fn multipack_catches_a_wrong_input() {
    let mut cs = TestConstraintSystem::<Fr>::new();
    let bits: Vec<Boolean> = (0..300)
        .map(|i| {
            Boolean::from(
                AllocatedBit::alloc(cs.namespace(|| format!("bit {i}")), Some(i % 3 == 1)).unwrap(),
            )
        })
        .collect();
    multipack::pack_into_inputs(cs.namespace(|| "pack"), &bits).unwrap();
    let packed = multipack::pack_bits(cs.namespace(|| "num"), &bits).unwrap();
    let values: Vec<bool> = (0..300).map(|i| i % 3 == 1).collect();
    assert!(cs.verify(&multipack::compute_multipacking::<Fr>(&values)));
    assert!(cs.is_satisfied());
    for path in ["pack/input 0", "pack/input 1"] {
        let value = cs.get(path);
        cs.set(path, value + Fr::ONE);
        assert!(!cs.is_satisfied(), "changing {path} goes unnoticed");
        cs.set(path, value);
    }
    assert_each_change_is_caught(&mut cs, &["num/input/num".to_string()]);
    assert_eq!(packed.get_value(), Some(cs.get("num/input/num")));
}
