//! synthpool::sha256 against bellperson's SHA-256 gadgets, both run in this binary on our
//! core: the same constraints in order with every term, the same variables in order with
//! their names and values, the same outputs, the same TestConstraintSystem digest. Outputs
//! are checked against published SHA-256 vectors and the sha2 crate.

mod common;

use bellpepper_core::boolean::{AllocatedBit, Boolean};
use bellpepper_core::test_cs::TestConstraintSystem;
use bellpepper_core::ConstraintSystem;
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

/// A message and how its bits enter the circuit.
type Case = (Vec<u8>, Bits);

/// Published SHA-256 test vectors.
const PUBLISHED: [(&[u8], &str); 3] = [
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

/// Every case hashed, each once, in one system: lengths of 1 to 20 blocks around every
/// padding boundary (0, 32, 64 and 1248 bytes included) in every bit mode, and the
/// published vectors.
fn cases() -> Vec<Case> {
    let mut rng = XorShiftRng::seed_from_u64(256);
    let mut cases = Vec::new();
    for len in [0usize, 1, 32, 55, 56, 64, 119, 120, 183, 184, 247, 1248] {
        let mut bytes = vec![0u8; len];
        rng.fill_bytes(&mut bytes);
        let modes: &[Bits] = if len == 1248 {
            &[Bits::Allocated]
        } else {
            &[Bits::Allocated, Bits::Mixed, Bits::Constant]
        };
        cases.extend(modes.iter().map(|&how| (bytes.clone(), how)));
    }
    cases.extend(
        PUBLISHED
            .iter()
            .map(|(message, _)| (message.to_vec(), Bits::Allocated)),
    );
    cases
}

/// Hashes every case in `cs`, each in its own namespace, with our gadget or bellperson's;
/// returns each case's output bits.
fn hash_cases(
    cs: &mut ShapeRecorder,
    cases: &[Case],
    known: bool,
    ours: bool,
) -> Vec<Vec<Boolean>> {
    cases
        .iter()
        .enumerate()
        .map(|(i, (bytes, how))| {
            let mut cs = cs.namespace(|| format!("case {i}"));
            let bits = message_bits(&mut cs, bytes, *how, known).unwrap();
            if ours {
                ours::sha256(cs.namespace(|| "sha"), &bits).unwrap()
            } else {
                upstream::sha256::sha256(cs.namespace(|| "sha"), &bits).unwrap()
            }
        })
        .collect()
}

#[test]
fn sha256_matches_bellperson_the_standard_and_the_published_vectors() {
    let cases = cases();
    let mut mine = ShapeRecorder::new(true);
    let mut theirs = ShapeRecorder::new(true);
    let ours = hash_cases(&mut mine, &cases, true, true);
    let upstream = hash_cases(&mut theirs, &cases, true, false);
    for (i, ((bytes, how), (ours, upstream))) in
        cases.iter().zip(ours.iter().zip(&upstream)).enumerate()
    {
        let what = format!("case {i}: {} bytes, {how:?}", bytes.len());
        assert_eq!(show(ours), show(upstream), "{what}");
        let digest = bits_to_bytes(ours);
        assert_eq!(digest, sha2::Sha256::digest(bytes).to_vec(), "{what}");
    }
    assert!(mine == theirs, "the records differ");
    for (message, hex) in PUBLISHED {
        let at = cases
            .iter()
            .rposition(|(bytes, _)| bytes == message)
            .unwrap();
        let got: String = bits_to_bytes(&ours[at])
            .iter()
            .map(|b| format!("{b:02x}"))
            .collect();
        assert_eq!(got, hex);
    }
}

#[test]
fn without_values_the_constraints_are_the_same() {
    let cases: Vec<Case> = [0usize, 64, 120]
        .into_iter()
        .flat_map(|len| {
            [
                (vec![0x5a; len], Bits::Allocated),
                (vec![0xa5; len], Bits::Mixed),
            ]
        })
        .collect();
    let mut mine = ShapeRecorder::new(false);
    let mut theirs = ShapeRecorder::new(false);
    let ours = hash_cases(&mut mine, &cases, false, true);
    let upstream = hash_cases(&mut theirs, &cases, false, false);
    for (ours, upstream) in ours.iter().zip(&upstream) {
        assert_eq!(show(ours), show(upstream));
    }
    assert!(mine == theirs, "the records differ");
}

#[test]
fn pinned_shapes() {
    // Counts and digests of the PoRep-relevant shapes, as bellperson lays them out.
    let mut cs = TestConstraintSystem::<Fr>::new();
    let bits = message_bits(&mut cs, &[7u8; 64], Bits::Allocated, true).unwrap();
    ours::sha256(cs.namespace(|| "sha"), &bits).unwrap();
    assert!(cs.is_satisfied());
    assert_eq!(
        cs.num_constraints(),
        45_386,
        "sha256 of a 64-byte node, allocated"
    );
    assert_eq!(cs.hash(), PINNED_NODE_DIGEST);
    let mut cs = TestConstraintSystem::<Fr>::new();
    let bits = message_bits(&mut cs, &[9u8; 64], Bits::Allocated, true).unwrap();
    ours::sha256_block_no_padding(cs.namespace(|| "b"), &bits).unwrap();
    assert_eq!(
        cs.num_constraints(),
        512 + 25_840,
        "one compression with 512 allocated input bits"
    );
}

/// TestConstraintSystem::hash() of SHA-256 over a 64-byte allocated node, as bellperson's
/// gadgets lay it out.
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
