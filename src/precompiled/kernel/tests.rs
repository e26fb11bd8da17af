//! The kernel's paths against the field's arithmetic, term by term.

use super::*;
use crate::precompiled::kernel::sums::satisfied;
use crate::precompiled::rows::coefficients::from_i128;
use blstrs::Scalar as Fr;
use ff::Field;
use rand_core::{RngCore, SeedableRng};
use rand_xorshift::XorShiftRng;

/// Rows of random coefficients (small, large, negative) over random 0/1 and other
/// values, summed by the kernel and term by term in the field; long rows hold runs of
/// powers of two too (rising, falling, negative, of sums of two powers, of every length
/// around the shortest packed one, over bits only and over other values).
#[test]
fn integer_sums_equal_field_sums() {
    let mut rng = XorShiftRng::seed_from_u64(31);
    let mut dictionary = vec![Fr::ONE, -Fr::ONE];
    // Every power up to 2^130 and some far above, so runs cross every 32-bit lane and
    // 64-bit limb boundary; sums of two of them (MultiEq's words added twice), and
    // coefficients that are neither.
    let power = |k: u64| Fr::from(2u64).pow_vartime([k]);
    let mut power_ids = std::collections::HashMap::new();
    for k in (1..=130).chain([200, 223, 224, 253, 254]) {
        power_ids.insert((false, k, None), dictionary.len() as u16);
        dictionary.push(power(k));
        power_ids.insert((true, k, None), dictionary.len() as u16);
        dictionary.push(-power(k));
    }
    for (k, j) in (0..=80)
        .map(|k| (k, k + 35))
        .chain([(31, 32), (0, 224), (63, 254)])
    {
        power_ids.insert((false, k, Some(j)), dictionary.len() as u16);
        dictionary.push(power(k) + power(j));
        power_ids.insert((true, k, Some(j)), dictionary.len() as u16);
        dictionary.push(-(power(k) + power(j)));
    }
    dictionary.push(Fr::random(&mut rng));
    dictionary.push(Fr::from(u64::MAX));
    let table = CoefficientTable::new(dictionary.to_vec());
    assert!(table.integers.is_some());
    // Values 0 to 199 are 0, 1 and others; 200 to 399 bits only.
    let aux: Vec<Fr> = (0..400)
        .map(|i| match (i % 7, i < 200) {
            (0, true) => Fr::random(&mut rng),
            (1..=3, _) => Fr::ONE,
            _ => Fr::ZERO,
        })
        .collect();
    let inputs = vec![Fr::ONE, Fr::from(5u64)];
    let value = |column: u32| match aux.get(column as usize) {
        Some(value) => *value,
        None => inputs[column as usize - aux.len()],
    };
    let mut matrix = crate::precompiled::rows::matrix::MatrixBuilder::default();
    let mut expected = Vec::new();
    for row in 0..4 * BLOCK {
        let mut sum = Fr::ZERO;
        let mut push = |column: u32, id: u16| {
            sum += value(column) * dictionary[id as usize];
            matrix.columns.push(column);
            matrix.coeff_ids.push(id);
        };
        // Long rows of every coefficient, short rows of small ones over bits (the
        // common rows, summed in integers), some with a term off that path; a block of
        // short rows only, and a last block of single terms of coefficient 1.
        let (terms, ids) = match row % 3 {
            _ if row >= 3 * BLOCK => (1, 1),
            _ if row / BLOCK == 1 => (rng.next_u32() % 5, 2 * 3),
            0 => (rng.next_u32() % 1200, dictionary.len()),
            _ => (rng.next_u32() % 5, 2 * 3),
        };
        for _ in 0..terms {
            let id = (rng.next_u32() as usize % ids) as u16;
            let column = match rng.next_u32() % 10 {
                0 => 400 + rng.next_u32() % 2,
                _ => rng.next_u32() % 400,
            };
            push(column, id);
            if terms > 100 && rng.next_u32() % 100 == 0 {
                let len = 6 + rng.next_u32() % 70;
                // Runs of every other long row over bits only, so they are packed.
                let start = match row % 2 {
                    0 => 200 + rng.next_u32() % (200 - len),
                    _ => rng.next_u32() % (400 - len),
                };
                let (negative, falling) = (rng.next_u32() % 2 == 0, rng.next_u32() % 2 == 0);
                let two = rng.next_u32() % 3 == 0;
                let low = 1 + rng.next_u32() % (if two { 81 } else { 131 } - len);
                for i in 0..len {
                    let k = if falling { low + len - 1 - i } else { low + i };
                    let key = (negative, u64::from(k), two.then_some(u64::from(k) + 35));
                    push(start + i, power_ids[&key]);
                }
            }
        }
        matrix.row_starts.push(matrix.columns.len() as u32);
        expected.push(sum);
    }
    let matrix = Matrix::from(matrix);
    let layout = MatrixLayout::new(&matrix, &table, 400, &|_| false);
    use BlockClass::{Mixed, Small, Unit};
    let classes: Vec<BlockClass> = (0..4).map(|block| layout.class(block)).collect();
    assert_eq!(classes, [Mixed, Small, Mixed, Unit]);
    let layouts = [
        MatrixLayout::new(&Matrix::default(), &table, 400, &|_| false),
        layout,
        MatrixLayout::new(&Matrix::default(), &table, 400, &|_| false),
    ];
    assert!(layouts[1].wide.positions().len() > 100, "rows summed wide");
    let mut kinds = ValueKinds::default();
    kinds.classify(&inputs, &aux).unwrap();
    kinds
        .convert_wide(&layouts, [&inputs[..], &aux[..]])
        .unwrap();
    let rows = Rows {
        recorded: RecordedRows {
            matrices: &Default::default(),
            layouts: &layouts,
            field_rows: &FieldRows::default(),
            table: &table,
        },
        inputs: &inputs,
        aux: &aux,
        kinds: &kinds,
        claims: None,
    };
    let sum = IntegerSum {
        rows: &rows,
        field: table.integers.as_ref().unwrap(),
    };
    let run_rows: Vec<_> = (0..expected.len())
        .filter_map(|row| Some((layouts[1].runs.row(row)?, matrix.row(row))))
        .collect();
    let packed = run_rows
        .into_iter()
        .filter_map(|(runs, terms)| rows.run_row(sum.field, runs, terms));
    assert!(packed.count() > 20, "rows summed by their runs");
    let mut out = vec![Fr::ZERO; BLOCK];
    let mut ones = vec![Fr::ONE; BLOCK];
    let mut integer_rows = 0;
    for first in (0..expected.len()).step_by(BLOCK) {
        let rows = BLOCK.min(expected.len() - first);
        let out = &mut out[..rows];
        let mut sums = [[0; BLOCK], [1; BLOCK], [0; BLOCK]];
        let layout = &layouts[1];
        let class = BlockLayout {
            class: layout.class(first / BLOCK),
            runs: &layout.runs,
            general: &layout.general,
            wide: &layout.wide,
            wide_values: &kinds.wide[1],
            claims: None,
        };
        sum.pass(&matrix, first, out, &mut sums[0][..rows], class);
        // `finish` writes the integer rows' elements; here `row * 1 = row` holds.
        sums[2] = sums[0];
        let mut c = out.to_vec();
        assert_eq!(sum.finish([out, &mut ones[..rows], &mut c], &sums), None);
        let integers = &sums[0][..rows];
        integer_rows += integers.iter().filter(|&&x| x != NOT_INTEGER).count();
        for row in 0..rows {
            let expected = expected[first + row];
            assert_eq!(out[row], expected, "row {}", first + row);
            if integers[row] != NOT_INTEGER {
                let integer = from_i128::<Fr>(i128::from(integers[row]));
                assert_eq!(integer, expected, "row {}", first + row);
            }
        }
    }
    assert!(
        integer_rows > 200,
        "{integer_rows} rows took the integer path"
    );
}

/// `finish` turns each integer sum into its element (in the table or not), leaves the
/// rows already in the field as they are, and reports the first unsatisfied row.
#[test]
fn finishing_a_block_writes_every_sum_and_finds_the_first_unsatisfied_row() {
    let table = CoefficientTable::<Fr>::new(vec![Fr::ONE]);
    let kinds = ValueKinds::default();
    let layouts = [(); 3].map(|_| MatrixLayout::new(&Matrix::default(), &table, 0, &|_| false));
    let rows = Rows {
        recorded: RecordedRows {
            matrices: &Default::default(),
            layouts: &layouts,
            field_rows: &FieldRows::default(),
            table: &table,
        },
        inputs: &[],
        aux: &[],
        kinds: &kinds,
        claims: None,
    };
    let sum = IntegerSum {
        rows: &rows,
        field: table.integers.as_ref().unwrap(),
    };
    let element = |x: i64| from_i128::<Fr>(i128::from(x));
    let seven = Fr::from(7u64);
    // (x, y, z) per row; NOT_INTEGER rows carry their field element already.
    let cases: [(i64, i64, i64, bool); 7] = [
        (1, 1, 1, true),
        (3, -5, -15, true),
        (1000, 3, 3000, true),
        (NOT_INTEGER, 1, NOT_INTEGER, true),
        (2, 2, 5, false),
        (1 << 40, 1 << 20, 1 << 60, true),
        (0, 9, 1, false),
    ];
    let mut integers = [[0; BLOCK]; 3];
    let mut out: [Vec<Fr>; 3] = Default::default();
    for (row, &(x, y, z, _)) in cases.iter().enumerate() {
        for (side, value) in [x, y, z].into_iter().enumerate() {
            integers[side][row] = value;
            out[side].push(if value == NOT_INTEGER {
                seven
            } else {
                Fr::ZERO
            });
        }
    }
    let [a, b, c] = &mut out;
    assert_eq!(sum.finish([a, b, c], &integers), Some(4));
    for (row, &(x, y, z, holds)) in cases.iter().enumerate() {
        let expected = [x, y, z].map(|v| if v == NOT_INTEGER { seven } else { element(v) });
        for side in 0..3 {
            assert_eq!(out[side][row], expected[side], "row {row} side {side}");
        }
        assert_eq!(expected[0] * expected[1] == expected[2], holds, "row {row}");
    }
}

/// A stretch of Poseidon-shaped constraints (a row stating a value, then an s-box with
/// round keys) takes the field path: the same a, b, c as summing every term, and a wrong
/// x² or x⁴, which no stated row reads, is named by its row while the claims still hold.
#[test]
fn field_stretches_give_the_summed_rows_and_find_a_wrong_power() {
    use crate::precompiled::rows::claims::Claims;
    use crate::precompiled::rows::field_rows::FieldRows;
    let mut rng = XorShiftRng::seed_from_u64(41);
    let (g, h, pre, post) = [(); 4].map(|_| Fr::random(&mut rng)).into();
    // Dictionary: 1, -1, then general coefficients (id 5 is -post).
    let dictionary = vec![Fr::ONE, -Fr::ONE, g, h, pre, -post];
    let table = CoefficientTable::new(dictionary.clone());
    let general = |id: u16| table.is_general(id);
    // Aux: x0, x1 (inputs to the MDS row), v, v², v⁴, (v⁴·(v + pre)) + post; the one
    // after them.
    let (x0, x1) = (Fr::random(&mut rng), Fr::random(&mut rng));
    let v = g * x0 + h * x1 + pre;
    let (v2, v4) = (v.square(), v.square().square());
    let v5 = v4 * (v + pre) + post;
    let aux = vec![x0, x1, v, v2, v4, v5];
    let one = aux.len() as u32;
    let inputs = vec![Fr::ONE];
    // Row 0: x0·1 = x0, outside any stretch (no general coefficient); 1: g·x0 + h·x1 + pre states v; 2: v·v =
    // v²; 3: v²·v² = v⁴; 4: (v + pre)·v⁴ = v5 - post; 5: one more plain product.
    let a = Matrix::from_rows([
        &[(0, 0)][..],
        &[(0, 2), (1, 3), (one, 4)],
        &[(2, 0)],
        &[(3, 0)],
        &[(2, 0), (one, 4)],
        &[(5, 0)],
    ]);
    let b = Matrix::from_rows([
        &[(one, 0)][..],
        &[(one, 0)],
        &[(2, 0)],
        &[(3, 0)],
        &[(4, 0)],
        &[(one, 0)],
    ]);
    let c = Matrix::from_rows([
        &[(0, 0)][..],
        &[(2, 0)],
        &[(3, 0)],
        &[(4, 0)],
        &[(5, 0), (one, 5)],
        &[(5, 0)],
    ]);
    let matrices = [a, b, c];
    let claims = Claims::new(&matrices, one, &dictionary, general);
    assert_eq!(claims.len(), 1);
    let field_rows = FieldRows::new(&matrices, one, general, |row| claims.stated(row).is_some());
    let mut seen = Vec::new();
    field_rows.pieces(0, 6, |start, count, field| seen.push((start, count, field)));
    assert_eq!(seen, [(0, 1, false), (1, 4, true), (5, 1, false)]);
    let layouts = [0, 1, 2].map(|m| {
        let claimed = |row: usize| m == 0 && claims.stated(row).is_some();
        MatrixLayout::new(&matrices[m], &table, one, &claimed)
    });
    let kinds_of = |aux: &[Fr]| {
        let mut kinds = ValueKinds::default();
        kinds.classify(&inputs, aux).unwrap();
        kinds.convert_wide(&layouts, [&inputs[..], aux]).unwrap();
        kinds
    };
    let evaluate = |aux: &[Fr], stretches: &FieldRows| {
        let kinds = kinds_of(aux);
        let values = [&inputs[..], aux];
        let held = claims.hold(values).then_some(&claims);
        let mut out: [Vec<Fr>; 3] = Default::default();
        for vector in &mut out {
            vector.reserve(6);
        }
        let [va, vb, vc] = &mut out;
        let recorded = RecordedRows {
            matrices: &matrices,
            layouts: &layouts,
            field_rows: stretches,
            table: &table,
        };
        let failed = evaluate_rows(recorded, values, (&kinds, held), [va, vb, vc]);
        (failed, held.is_some(), out)
    };
    let (failed, held, by_stretch) = evaluate(&aux, &field_rows);
    assert_eq!((failed, held), (None, true));
    let (_, _, summed) = evaluate(&aux, &FieldRows::default());
    assert_eq!(by_stretch, summed, "the same rows on either path");
    // Over a previous proof's vectors, a piece at a time (the stretch's pieces start at
    // rows 0, 1 and 5), with streaming stores or through the caches: the same rows.
    for streamed in [true, false] {
        super::streamed::set_enabled(streamed);
        let mut out = [(); 3].map(|_| vec![Fr::from(0xdead_u64); 6]);
        let [va, vb, vc] = &mut out;
        let recorded = RecordedRows {
            matrices: &matrices,
            layouts: &layouts,
            field_rows: &field_rows,
            table: &table,
        };
        let values = [&inputs[..], &aux[..]];
        let failed = evaluate_rows(
            recorded,
            values,
            (&kinds_of(&aux), Some(&claims)),
            [va, vb, vc],
        );
        super::streamed::set_enabled(true);
        assert_eq!((failed, &out), (None, &by_stretch), "streamed: {streamed}");
    }
    assert_eq!(by_stretch[0][1..5], [v, v, v2, v + pre]);
    assert_eq!(by_stretch[2][4], v5 - post);
    for (wrong, row) in [(3, 2), (4, 3), (5, 4)] {
        let mut tampered = aux.clone();
        tampered[wrong] += Fr::ONE;
        let (failed, held, _) = evaluate(&tampered, &field_rows);
        assert_eq!((failed, held), (Some(row), true), "aux {wrong} changed");
    }
    // A wrong value a stated row reads fails the claims; the rows are summed and the
    // stated row named.
    let mut tampered = aux.clone();
    tampered[1] += Fr::ONE;
    assert_eq!(evaluate(&tampered, &field_rows).0, Some(1));
}

#[test]
fn satisfaction_in_integers_and_in_the_field_agree_with_the_product() {
    let values = [0i64, 1, 2, -1, 7, 1 << 40, i64::MAX, i64::MIN];
    for a in values {
        for b in values {
            for c in values {
                let field = |x: i64| from_i128::<Fr>(i128::from(x));
                let expected = field(a) * field(b) == field(c);
                let elements = [&field(a), &field(b), &field(c)];
                if [a, b, c].contains(&NOT_INTEGER) {
                    continue;
                }
                assert_eq!(satisfied((a, b, c), elements), expected, "{a} {b} {c}");
                let mixed = (NOT_INTEGER, b, c);
                assert_eq!(satisfied(mixed, elements), expected, "{a} {b} {c}");
            }
        }
    }
}
