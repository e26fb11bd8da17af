use super::*;
use crate::precompiled::rows::row_sets::pieces_of;
use blstrs::Scalar as Fr;
use ff::Field;
use rand_core::{RngCore, SeedableRng};
use rand_xorshift::XorShiftRng;

/// A matrix of the given rows of (column, coefficient id) terms.
fn matrix(rows: &[&[(u32, u16)]]) -> Matrix {
    Matrix::from_rows(rows.iter().copied())
}

/// Sums by position whatever order the positions come in: mostly forward, jumps past
/// the window, positions left behind it, inputs, sums that cancel (left out).
#[test]
fn the_fold_sums_per_position_across_the_window() {
    let mut rng = XorShiftRng::seed_from_u64(4);
    let mut fold = Fold::<Fr>::new(1 << 30);
    let mut expected = std::collections::BTreeMap::new();
    let mut add = |fold: &mut Fold<Fr>, position: u32, value: Fr| {
        fold.add(position, value);
        *expected.entry(position).or_insert(Fr::ZERO) += value;
    };
    let mut position = 0u32;
    for step in 0..20_000u32 {
        position += rng.next_u32() % 7;
        if step % 997 == 0 {
            position += 3 * WINDOW;
        }
        let back = rng.next_u32() % 40;
        add(
            &mut fold,
            position.saturating_sub(back),
            Fr::random(&mut rng),
        );
        if step % 501 == 0 {
            // Far behind the window by now.
            add(&mut fold, step / 50, Fr::random(&mut rng));
        }
    }
    let cancelled = Fr::random(&mut rng);
    add(&mut fold, position + 1, cancelled);
    add(&mut fold, position + 1, -cancelled);
    // Inputs, after every aux position, are summed apart.
    add(&mut fold, 1 << 30, Fr::random(&mut rng));
    add(&mut fold, (1 << 30) + 2, Fr::random(&mut rng));
    let expected: Vec<(u32, Fr)> = expected
        .into_iter()
        .filter(|(_, sum)| *sum != Fr::ZERO)
        .collect();
    assert!(fold.apart.len() > 2, "some positions fell behind");
    assert_eq!(fold.finish(), expected);
}

/// However the rows are cut, the folded coefficients are the definition's: the
/// partition's `j`-th claimed row weighs `16·ρ^j`, on its terms and minus on the value
/// it states, summed per position.
#[test]
fn the_fold_by_pieces_weighs_every_claimed_row_by_its_place_in_the_partition() {
    let mut rng = XorShiftRng::seed_from_u64(6);
    let (rows, one) = (1000usize, 400u32);
    // Dictionary: 1, then general coefficients.
    let dictionary: Vec<Fr> = std::iter::once(Fr::ONE)
        .chain((0..5).map(|_| Fr::random(&mut rng)))
        .collect();
    let general = |id: u16| id >= 1;
    let column = |rng: &mut XorShiftRng| rng.next_u32() % (one + 1);
    let (mut a, mut b, mut c) = (Vec::new(), Vec::new(), Vec::new());
    for row in 0..rows {
        // Most rows state a value; the rest have B or C of another form.
        let shape = rng.next_u32() % 8;
        let terms = 1 + rng.next_u32() % 5;
        a.push(
            (0..terms)
                .map(|_| (column(&mut rng), (rng.next_u32() % 6) as u16))
                .collect::<Vec<_>>(),
        );
        b.push(vec![(if shape == 0 { 3 } else { one }, 0)]);
        c.push(match shape {
            1 => vec![(7, 1)],
            2 => vec![(5, 0), (6, 0)],
            _ => vec![(row as u32 % one, 0)],
        });
    }
    let matrices = [&a, &b, &c].map(|rows| Matrix::from_rows(rows.iter()));
    let rho = Fr::random(&mut rng);
    let mut expected = std::collections::BTreeMap::new();
    let mut stated = Vec::new();
    let mut weight = Fr::from(16);
    for row in 0..rows {
        let v = c[row][0].0;
        let states = b[row] == [(one, 0)]
            && c[row].len() == 1
            && c[row][0].1 == 0
            && v != one
            && a[row]
                .iter()
                .any(|&(column, id)| column != one && general(id));
        stated.push(states.then_some(v));
        if !states {
            continue;
        }
        weight *= rho;
        for &(column, id) in &a[row] {
            *expected.entry(column).or_insert(Fr::ZERO) += weight * dictionary[id as usize];
        }
        *expected.entry(v).or_insert(Fr::ZERO) -= weight;
    }
    let expected: Vec<(u32, Fr)> = expected
        .into_iter()
        .filter(|(_, sum)| *sum != Fr::ZERO)
        .collect();
    assert!(
        stated.iter().flatten().count() > rows / 2,
        "a test of few claims"
    );
    for cut in [
        pieces_of(rows, rows.next_multiple_of(64)),
        pieces_of(rows, 64),
        pieces_of(rows, 128),
        pieces_of(rows, 640),
    ] {
        let pieces = cut.len();
        let claims = Claims::by_pieces(&matrices, cut, one, &dictionary, general, rho);
        assert!(
            (0..rows).all(|row| claims.stated(row) == stated[row]),
            "{pieces} pieces"
        );
        let folded: Vec<(u32, Fr)> = claims
            .positions
            .iter()
            .copied()
            .zip(claims.folded().expect("folded").iter().copied())
            .collect();
        assert_eq!(folded, expected, "{pieces} pieces");
    }
}

#[test]
fn rows_stating_a_value_hold_together_and_a_wrong_one_is_seen() {
    let mut rng = XorShiftRng::seed_from_u64(3);
    // Dictionary: 1, -1, then two general coefficients.
    let (g, h) = (Fr::random(&mut rng), Fr::random(&mut rng));
    let dictionary = [Fr::ONE, -Fr::ONE, g, h];
    let general = |id: u16| id >= 2;
    // Aux x0..x4, then the constant one at position 5.
    let one = 5;
    let a = matrix(&[
        &[(0, 2), (1, 3), (one, 2)], // g·x0 + h·x1 + g: claimed (states x2)
        &[(0, 2)],                   // g·x0, but B is not the one: not claimed
        &[(one, 3), (1, 0)],         // a general coefficient on the one only: not claimed
        &[(3, 3), (0, 1)],           // h·x3 - x0: claimed (states x4)
    ]);
    let b = matrix(&[&[(one, 0)], &[(0, 0)], &[(one, 0)], &[(one, 0)]]);
    let c = matrix(&[&[(2, 0)], &[(2, 0)], &[(2, 0)], &[(4, 0)]]);
    let claims = Claims::new(&[a, b, c], one, &dictionary, general);
    assert_eq!(claims.len(), 2);
    assert_eq!(
        (0..4).map(|row| claims.stated(row)).collect::<Vec<_>>(),
        [Some(2), None, None, Some(4)]
    );
    let (x0, x1, x3) = (
        Fr::random(&mut rng),
        Fr::random(&mut rng),
        Fr::random(&mut rng),
    );
    let mut aux = vec![x0, x1, g * x0 + h * x1 + g, x3, h * x3 - x0];
    let inputs = [Fr::ONE];
    assert!(claims.hold([&inputs, &aux]));
    for wrong in [2, 4, 0] {
        let saved = aux[wrong];
        aux[wrong] += Fr::ONE;
        assert!(!claims.hold([&inputs, &aux]), "x{wrong} changed");
        aux[wrong] = saved;
    }
    // The constant one's value is read, not assumed.
    assert!(!claims.hold([&[Fr::from(2u64)], &aux]));
    // Without claimed rows, nothing is held.
    let none = Claims::new(
        &[
            matrix(&[&[(0, 2)]]),
            matrix(&[&[(0, 0)]]),
            matrix(&[&[(1, 0)]]),
        ],
        5,
        &dictionary,
        general,
    );
    assert_eq!((none.len(), none.bytes()), (0, 0));
}
