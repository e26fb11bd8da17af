//! synthpool::sha256 against bellperson's SHA-256 gadgets, both run in this binary on our
//! core: the same constraints in order with every term, the same variables in order with
//! their names and values, the same outputs, the same TestConstraintSystem digest. Outputs
//! are checked against published SHA-256 vectors and the sha2 crate.

mod common;

use bellpepper_core::boolean::{AllocatedBit, Boolean};
use bellpepper_core::test_cs::TestConstraintSystem;
use bellpepper_core::{ConstraintSystem, SynthesisError};
use bellperson::gadgets as upstream;
use blstrs::Scalar as Fr;
use common::{message_bits, show, Bits, ShapeRecorder};
use rand_core::{RngCore, SeedableRng};
use rand_xorshift::XorShiftRng;
use sha2::Digest;
use synthpool::sha256 as ours;

fn bits_to_bytes(bits: &[Boolean]) -> Vec<u8> {
    bits.chunks(8)
        .map(|byte| {
            byte.iter()
                .fold(0u8, |acc, b| (acc << 1) | u8::from(b.get_value().unwrap()))
        })
        .collect()
}

type Gadget<CS> = fn(&mut CS, &[Boolean]) -> Result<Vec<Boolean>, SynthesisError>;

/// Runs the same message through both gadgets in a recorder and in TestConstraintSystem and
/// asserts identity; returns our digest bits' bytes (when known) and constraint count.
fn compare(
    bytes: &[u8],
    how: Bits,
    ours_fn: Gadget<ShapeRecorder>,
    theirs_fn: Gadget<ShapeRecorder>,
    ours_test: Gadget<TestConstraintSystem<Fr>>,
    theirs_test: Gadget<TestConstraintSystem<Fr>>,
) -> (Option<Vec<u8>>, usize, String) {
    for known in [true, false] {
        let mut mine = ShapeRecorder::new(known);
        let mut theirs = ShapeRecorder::new(known);
        let in_mine = message_bits(&mut mine, bytes, how, known).unwrap();
        let in_theirs = message_bits(&mut theirs, bytes, how, known).unwrap();
        let out_mine = ours_fn(&mut mine, &in_mine).unwrap();
        let out_theirs = theirs_fn(&mut theirs, &in_theirs).unwrap();
        assert_eq!(
            show(&out_mine),
            show(&out_theirs),
            "{} bytes, {how:?}, known {known}",
            bytes.len()
        );
        assert!(
            mine == theirs,
            "{} bytes, {how:?}, known {known}: records differ",
            bytes.len()
        );
    }
    let mut mine = TestConstraintSystem::<Fr>::new();
    let mut theirs = TestConstraintSystem::<Fr>::new();
    let in_mine = message_bits(&mut mine, bytes, how, true).unwrap();
    let in_theirs = message_bits(&mut theirs, bytes, how, true).unwrap();
    let out = ours_test(&mut mine, &in_mine).unwrap();
    theirs_test(&mut theirs, &in_theirs).unwrap();
    assert!(mine.is_satisfied());
    assert_eq!(mine.hash(), theirs.hash());
    assert_eq!(mine.pretty_print(), theirs.pretty_print());
    let known = out.iter().all(|b| b.get_value().is_some());
    (
        known.then(|| bits_to_bytes(&out)),
        mine.num_constraints(),
        mine.hash(),
    )
}

fn sha256_both(bytes: &[u8], how: Bits) -> (Option<Vec<u8>>, usize, String) {
    compare(
        bytes,
        how,
        |cs, bits| ours::sha256(cs.namespace(|| "sha"), bits),
        |cs, bits| upstream::sha256::sha256(cs.namespace(|| "sha"), bits),
        |cs, bits| ours::sha256(cs.namespace(|| "sha"), bits),
        |cs, bits| upstream::sha256::sha256(cs.namespace(|| "sha"), bits),
    )
}

#[test]
fn sha256_matches_bellperson_and_the_standard() {
    let mut rng = XorShiftRng::seed_from_u64(256);
    // 0 bytes is one block; 247 bytes five; 1248 is the labeling preimage (20 blocks).
    for len in [0usize, 1, 32, 55, 56, 64, 119, 120, 183, 184, 247, 1248] {
        let mut bytes = vec![0u8; len];
        rng.fill_bytes(&mut bytes);
        let expected = sha2::Sha256::digest(&bytes).to_vec();
        for how in [Bits::Allocated, Bits::Mixed, Bits::Constant] {
            if len == 1248 && !matches!(how, Bits::Allocated) {
                continue;
            }
            let (digest, _, _) = sha256_both(&bytes, how);
            assert_eq!(digest.unwrap(), expected, "{len} bytes, {how:?}");
        }
    }
}

#[test]
fn published_vectors() {
    let cases: [(&[u8], &str); 3] = [
        (
            b"",
            "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855",
        ),
        (
            b"abc",
            "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad",
        ),
        (
            b"abcdbcdecdefdefgefghfghighijhijkijkljklmklmnlmnomnopnopq",
            "248d6a61d20638b8e5c026930c3e6039a33ce45964ff2167f6ecedd419db06c1",
        ),
    ];
    for (message, hex) in cases {
        let (digest, _, _) = sha256_both(message, Bits::Allocated);
        let got: String = digest.unwrap().iter().map(|b| format!("{b:02x}")).collect();
        assert_eq!(got, hex);
    }
}

#[test]
fn pinned_shapes() {
    // Counts and digests of the PoRep-relevant shapes, as bellperson lays them out.
    let node = [7u8; 64];
    let (_, count, digest) = sha256_both(&node, Bits::Allocated);
    assert_eq!(count, 45_386, "sha256 of a 64-byte node, allocated");
    assert_eq!(digest, PINNED_NODE_DIGEST);
    let block = [9u8; 64];
    let (_, count, _) = compare(
        &block,
        Bits::Allocated,
        |cs, bits| ours::sha256_block_no_padding(cs.namespace(|| "b"), bits),
        |cs, bits| upstream::sha256::sha256_block_no_padding(cs.namespace(|| "b"), bits),
        |cs, bits| ours::sha256_block_no_padding(cs.namespace(|| "b"), bits),
        |cs, bits| upstream::sha256::sha256_block_no_padding(cs.namespace(|| "b"), bits),
    );
    assert_eq!(
        count,
        512 + 25_840,
        "one compression with 512 allocated input bits"
    );
}

/// TestConstraintSystem::hash() of SHA-256 over a 64-byte allocated node (equal for
/// bellperson's gadgets and ours, which the comparison above asserts first).
const PINNED_NODE_DIGEST: &str = "39b920088193af138e8d3494179b1d9a20442bb23e28e65028b068c6a9e48771";

/// A word for the UInt32 tests: constant, allocated, or allocated with some bits negated.
fn word<CS: ConstraintSystem<Fr>>(
    cs: &mut CS,
    rng: &mut XorShiftRng,
    known: bool,
    k: usize,
) -> Vec<Boolean> {
    let value = rng.next_u32();
    let kind = rng.next_u32() % 4;
    (0..32)
        .map(|i| {
            let bit = (value >> i) & 1 == 1;
            match kind {
                0 => Boolean::constant(bit),
                1 if i % 2 == 0 => Boolean::from(
                    AllocatedBit::alloc(
                        cs.namespace(|| format!("w{k} b{i}")),
                        known.then_some(!bit),
                    )
                    .unwrap(),
                )
                .not(),
                _ => Boolean::from(
                    AllocatedBit::alloc(
                        cs.namespace(|| format!("w{k} b{i}")),
                        known.then_some(bit),
                    )
                    .unwrap(),
                ),
            }
        })
        .collect()
}

macro_rules! uint32_script {
    ($cs:expr, $seed:expr, $known:expr, $uint32:path, $multieq:path) => {{
        use $multieq as MultiEq;
        use $uint32 as UInt32;
        let mut rng = XorShiftRng::seed_from_u64($seed);
        let cs = $cs;
        let words: Vec<UInt32> = (0..12)
            .map(|k| UInt32::from_bits(&word(&mut *cs, &mut rng, $known, k)))
            .collect();
        let mut out = Vec::new();
        {
            let mut meq = MultiEq::new(&mut *cs);
            for step in 0..40 {
                let pick = |r: &mut XorShiftRng| words[(r.next_u32() % 12) as usize].clone();
                let x = pick(&mut rng);
                let y = pick(&mut rng);
                let z = pick(&mut rng);
                let result = match rng.next_u32() % 7 {
                    0 => x
                        .xor(meq.namespace(|| format!("xor {step}")), &y.rotr(step))
                        .unwrap(),
                    1 => UInt32::sha256_ch(
                        meq.namespace(|| format!("ch {step}")),
                        &x,
                        &y,
                        &z.shr(step % 9),
                    )
                    .unwrap(),
                    2 => UInt32::sha256_maj(meq.namespace(|| format!("maj {step}")), &x, &y, &z)
                        .unwrap(),
                    3 => UInt32::constant(rng.next_u32()),
                    4 => UInt32::alloc(
                        meq.namespace(|| format!("alloc {step}")),
                        $known.then(|| rng.next_u32()),
                    )
                    .unwrap(),
                    _ => {
                        let n = 2 + (rng.next_u32() % 9) as usize;
                        let operands: Vec<UInt32> = (0..n).map(|_| pick(&mut rng)).collect();
                        UInt32::addmany(meq.namespace(|| format!("add {step}")), &operands).unwrap()
                    }
                };
                out.push(show(&result.clone().into_bits()));
                out.push(show(&result.into_bits_be()));
            }
        }
        out
    }};
}

#[test]
fn uint32_and_multieq_match_bellperson() {
    for seed in 0..40 {
        for known in [true, false] {
            let mut mine = ShapeRecorder::new(known);
            let mut theirs = ShapeRecorder::new(known);
            let a = uint32_script!(
                &mut mine,
                seed,
                known,
                ours::uint32::UInt32,
                ours::multieq::MultiEq
            );
            let b = uint32_script!(
                &mut theirs,
                seed,
                known,
                upstream::uint32::UInt32,
                upstream::multieq::MultiEq
            );
            assert_eq!(a, b, "seed {seed}");
            assert!(mine == theirs, "seed {seed}, known {known}: records differ");
        }
    }
}

#[test]
fn multipack_matches_bellperson() {
    let mut rng = XorShiftRng::seed_from_u64(77);
    for len in [0usize, 1, 7, 254, 255, 256, 509, 600] {
        let bytes: Vec<u8> = (0..len.div_ceil(8)).map(|_| rng.next_u32() as u8).collect();
        let bools = ours::multipack::bytes_to_bits(&bytes);
        assert_eq!(bools, upstream::multipack::bytes_to_bits(&bytes));
        assert_eq!(
            ours::multipack::bytes_to_bits_le(&bytes),
            upstream::multipack::bytes_to_bits_le(&bytes)
        );
        let bools = &bools[..len];
        assert_eq!(
            ours::multipack::compute_multipacking::<Fr>(bools),
            upstream::multipack::compute_multipacking::<Fr>(bools)
        );
        for known in [true, false] {
            let mut mine = ShapeRecorder::new(known);
            let mut theirs = ShapeRecorder::new(known);
            for (cs, ours_side) in [(&mut mine, true), (&mut theirs, false)] {
                let bits: Vec<Boolean> = bools
                    .iter()
                    .enumerate()
                    .map(|(i, &b)| match i % 3 {
                        0 => Boolean::constant(b),
                        1 => Boolean::from(
                            AllocatedBit::alloc(
                                cs.namespace(|| format!("b{i}")),
                                known.then_some(!b),
                            )
                            .unwrap(),
                        )
                        .not(),
                        _ => Boolean::from(
                            AllocatedBit::alloc(
                                cs.namespace(|| format!("b{i}")),
                                known.then_some(b),
                            )
                            .unwrap(),
                        ),
                    })
                    .collect();
                if ours_side {
                    ours::multipack::pack_into_inputs(cs.namespace(|| "pack"), &bits).unwrap();
                    let n = ours::multipack::pack_bits(cs.namespace(|| "bits"), &bits);
                    cs.namespace(|| "n")
                        .alloc(|| "v", || Ok(Fr::from(u64::from(n.is_ok()))))
                        .unwrap();
                } else {
                    upstream::multipack::pack_into_inputs(cs.namespace(|| "pack"), &bits).unwrap();
                    let n = upstream::multipack::pack_bits(cs.namespace(|| "bits"), &bits);
                    cs.namespace(|| "n")
                        .alloc(|| "v", || Ok(Fr::from(u64::from(n.is_ok()))))
                        .unwrap();
                }
            }
            assert!(mine == theirs, "{len} bits, known {known}");
        }
    }
}
