use super::*;

fn bits_of(tape: &Tape) -> (Vec<u64>, usize, usize) {
    (tape.bits.clone(), tape.len, tape.constraints)
}

/// Words without constants, with none, some and all bits negated.
const WORDS: [Word; 3] = [
    Word {
        value: 0x9e37_79b9,
        constant: 0,
        negated: 0,
    },
    Word {
        value: 0x7f4a_7c15,
        constant: 0,
        negated: 0x0f0f_00ff,
    },
    Word {
        value: 0x1234_5678,
        constant: 0,
        negated: u32::MAX,
    },
];

/// Words with constant bits: a shifted word's constant zeros, a constant, and constant
/// ones and zeros among negated and plain variables.
const WITH_CONSTANTS: [Word; 3] = [
    Word {
        value: 0x0fff_1234,
        constant: 0xe000_0000,
        negated: 0x0000_ff00,
    },
    Word {
        value: 0xdead_beef,
        constant: u32::MAX,
        negated: 0,
    },
    Word {
        value: 0x5555_aaaa,
        constant: 0x00ff_00ff,
        negated: 0x0f00_0f00,
    },
];

#[test]
fn word_shortcuts_allocate_what_the_bit_walk_allocates() {
    let all = || WORDS.into_iter().chain(WITH_CONSTANTS);
    for a in all() {
        for b in all() {
            let (mut fast, mut slow) = (Tape::new(253), Tape::new(253));
            assert_eq!(fast.xor(a, b), slow.xor_walk(a, b), "{a:?} {b:?}");
            assert_eq!(bits_of(&fast), bits_of(&slow));
        }
    }
    for a in WORDS {
        for b in WORDS {
            for c in WORDS {
                let (mut fast, mut slow) = (Tape::new(253), Tape::new(253));
                assert_eq!(fast.ch(a, b, c), slow.walk(a, b, c, Tape::ch_bit));
                assert_eq!(bits_of(&fast), bits_of(&slow));
                let (mut fast, mut slow) = (Tape::new(253), Tape::new(253));
                assert_eq!(fast.maj(a, b, c), slow.walk(a, b, c, Tape::maj_bit));
                assert_eq!(bits_of(&fast), bits_of(&slow));
            }
        }
    }
}

#[test]
fn masked_allocation_keeps_order_across_word_boundaries() {
    let mut tape = Tape::new(253);
    for _ in 0..3 {
        tape.alloc(true);
    }
    tape.alloc_masked(u32::MAX, 0x8000_0001);
    tape.alloc_masked(u32::MAX, 0xffff_ffff);
    tape.alloc_masked(0b1010, 0b1000);
    // An addition's 35 bits across the next word boundary, then 64 from an offset.
    let sum = (1u64 << 34) | 0b101;
    tape.alloc_bits(sum, 35);
    tape.alloc_bits(u64::MAX - 2, 64);
    let bit = |k: usize| (tape.bits[k / 64] >> (k % 64)) & 1 == 1;
    let expected: Vec<bool> = [true, true, true]
        .into_iter()
        .chain((0..32).map(|i| i == 0 || i == 31))
        .chain([true; 32])
        .chain([false, true])
        .chain((0..35).map(|i| (sum >> i) & 1 == 1))
        .chain((0..64).map(|i| i != 1))
        .collect();
    assert_eq!(tape.len, expected.len());
    assert!((0..tape.len).all(|k| bit(k) == expected[k]));
}
