use super::*;

#[test]
fn every_part_has_its_own_row_keys_and_columns() {
    for (i, part) in Part::ALL.into_iter().enumerate() {
        assert_eq!(part.index(), i, "{part:?} out of order");
        assert_eq!(part.column(), format!("{}_ms", part.key()));
        assert_eq!(Part::from_key(part.key()), Some(part));
        assert!(!part.description().is_empty());
    }
    let mut keys: Vec<&str> = Part::ALL.iter().map(|p| p.key()).collect();
    keys.sort_unstable();
    keys.dedup();
    assert_eq!(keys.len(), Part::ALL.len(), "keys are unique");
    assert_eq!(Part::from_key("wire-decode"), Some(Part::WireDecode));
    assert_eq!(Part::from_key("other"), None);
}

#[test]
fn the_sets_cover_every_part_once_but_untimed() {
    let mut seen: Vec<Part> = Part::COLD_START
        .iter()
        .chain(&Part::QUERY)
        .chain(&Part::SUBJECT)
        .chain(
            Part::TRANSACTION
                .iter()
                .filter(|p| !Part::QUERY.contains(p)),
        )
        .copied()
        .collect();
    seen.sort_unstable();
    let untimed = seen.iter().filter(|p| **p == Part::Untimed).count();
    assert_eq!(
        untimed, 2,
        "untimed ends both a query's and a program's parts"
    );
    for part in Part::QUERY {
        assert!(
            part == Part::PartitionQuery || Part::TRANSACTION.contains(&part),
            "a transaction's statements have every part of a query's: {part:?}"
        );
    }
    seen.dedup();
    assert_eq!(seen, Part::ALL.to_vec());
}

#[test]
fn a_query_s_parts_have_colours_of_their_own() {
    let shown: Vec<Part> = Part::COLD_START
        .iter()
        .chain(&Part::QUERY)
        .copied()
        .collect();
    for (i, a) in shown.iter().enumerate() {
        for b in &shown[i + 1..] {
            assert_ne!(a.colour(), b.colour(), "{a:?} and {b:?}");
        }
    }
}

#[test]
fn a_measure_is_total_or_a_part_and_old_names_say_where_they_went() {
    assert_eq!(Measure::parse("total"), Ok(Measure::Total));
    assert_eq!(
        Measure::parse("row-decode"),
        Ok(Measure::Part(Part::RowDecode))
    );
    let other = Measure::parse("other").expect_err("not a part any more");
    assert!(
        other.contains("client_work, descheduled and untimed"),
        "{other}"
    );
    assert!(
        Measure::parse("nope")
            .expect_err("unknown")
            .contains("wire_decode")
    );
}

#[test]
fn serde_names_are_the_keys() -> Result<(), serde_json::Error> {
    for part in Part::ALL {
        assert_eq!(serde_json::to_string(&part)?, format!("\"{}\"", part.key()));
    }
    Ok(())
}

/// Machado, Oliveira and Fernandes's simulation of each dichromacy at full severity ("A
/// Physiologically-based Model for Simulation of Color Vision Deficiency", IEEE TVCG 15(6), 2009),
/// the matrices they publish for linear RGB; and normal vision.
const VISIONS: [(&str, [[f64; 3]; 3]); 4] = [
    (
        "normal",
        [[1.0, 0.0, 0.0], [0.0, 1.0, 0.0], [0.0, 0.0, 1.0]],
    ),
    (
        "deuteranopia",
        [
            [0.367322, 0.860646, -0.227968],
            [0.280085, 0.672501, 0.047413],
            [-0.011820, 0.042940, 0.968881],
        ],
    ),
    (
        "protanopia",
        [
            [0.152286, 1.052583, -0.204868],
            [0.114503, 0.786281, 0.099216],
            [-0.003882, -0.048116, 1.051998],
        ],
    ),
    (
        "tritanopia",
        [
            [1.255528, -0.076749, -0.178779],
            [-0.078411, 0.930809, 0.147602],
            [0.004733, 0.691367, 0.303900],
        ],
    ),
];

/// An sRGB byte as linear light.
fn linear(byte: u8) -> f64 {
    let c = f64::from(byte) / 255.0;
    if c <= 0.04045 {
        c / 12.92
    } else {
        ((c + 0.055) / 1.055).powf(2.4)
    }
}

/// Linear light back through sRGB's curve, clipped to the gamut, and into linear light again:
/// what a screen can show of a simulated colour.
fn shown(c: f64) -> f64 {
    let c = c.clamp(0.0, 1.0);
    let encoded = if c <= 0.003_130_8 {
        c * 12.92
    } else {
        1.055 * c.powf(1.0 / 2.4) - 0.055
    };
    linear((encoded * 255.0).round() as u8)
}

/// CIELAB (D65) of linear RGB.
fn lab([r, g, b]: [f64; 3]) -> [f64; 3] {
    let x = 0.4124 * r + 0.3576 * g + 0.1805 * b;
    let y = 0.2126 * r + 0.7152 * g + 0.0722 * b;
    let z = 0.0193 * r + 0.1192 * g + 0.9505 * b;
    let f = |t: f64| {
        if t > 0.008856 {
            t.cbrt()
        } else {
            7.787 * t + 16.0 / 116.0
        }
    };
    let (fx, fy, fz) = (f(x / 0.95047), f(y), f(z / 1.08883));
    [116.0 * fy - 16.0, 500.0 * (fx - fy), 200.0 * (fy - fz)]
}

/// A part's colour as a reader with `vision` sees it, in CIELAB.
fn seen(part: Part, vision: &[[f64; 3]; 3]) -> [f64; 3] {
    seen_rgb(part.colour(), vision)
}

/// An sRGB colour as a reader with `vision` sees it, in CIELAB.
fn seen_rgb(colour: [u8; 3], vision: &[[f64; 3]; 3]) -> [f64; 3] {
    let rgb = colour.map(linear);
    let simulated = vision.map(|row| shown(row[0] * rgb[0] + row[1] * rgb[1] + row[2] * rgb[2]));
    lab(simulated)
}

fn delta_e(a: [f64; 3], b: [f64; 3]) -> f64 {
    ((a[0] - b[0]).powi(2) + (a[1] - b[1]).powi(2) + (a[2] - b[2]).powi(2)).sqrt()
}

#[test]
fn parts_drawn_together_stay_apart_for_colour_blind_readers() {
    let subject: Vec<Part> = Part::SUBJECT.to_vec();
    let sets: [(&str, &[Part]); 4] = [
        ("a query's parts", &Part::QUERY),
        ("a read-write transaction's parts", &Part::TRANSACTION),
        ("a cold start's steps", &Part::COLD_START),
        ("a client program's parts", &subject),
    ];
    let mut closest = f64::INFINITY;
    for (set, parts) in sets {
        for (vision, matrix) in &VISIONS {
            for (i, a) in parts.iter().enumerate() {
                for b in &parts[i + 1..] {
                    let d = delta_e(seen(*a, matrix), seen(*b, matrix));
                    closest = closest.min(d);
                    assert!(
                        d >= 20.0,
                        "{set}: {a:?} and {b:?} are {d:.1} apart in CIE76 ΔE under {vision}"
                    );
                }
            }
        }
    }
    assert!(closest < 60.0, "the check measures something: {closest}");
}

#[test]
fn runs_side_by_side_have_colours_of_their_own_that_stay_apart() {
    let mut closest_run = f64::INFINITY;
    for (vision, matrix) in &VISIONS {
        for (i, a) in RUN_COLOURS.iter().enumerate() {
            for part in Part::QUERY {
                let d = delta_e(seen_rgb(*a, matrix), seen(part, matrix));
                assert!(d >= 10.0, "run {i} is {d:.1} from {part:?} under {vision}");
            }
            for (j, b) in RUN_COLOURS.iter().enumerate().skip(i + 1) {
                let d = delta_e(seen_rgb(*a, matrix), seen_rgb(*b, matrix));
                closest_run = closest_run.min(d);
                assert!(
                    d >= 25.0,
                    "runs {i} and {j} are {d:.1} apart under {vision}"
                );
            }
        }
    }
    assert!(
        closest_run < 80.0,
        "the check measures something: {closest_run}"
    );
}

#[test]
fn the_simulation_matches_known_values() {
    // Pure red under protanopia is a dark olive (Machado's matrix: 0.152, 0.115, -0.004).
    let red = [linear(255), 0.0, 0.0];
    let m = VISIONS[2].1;
    let sim = m.map(|row| row[0] * red[0] + row[1] * red[1] + row[2] * red[2]);
    assert!((sim[0] - 0.152286).abs() < 1e-6 && (sim[1] - 0.114503).abs() < 1e-6);
    // White stays white under every vision (each row of each matrix sums to 1).
    for (vision, matrix) in &VISIONS {
        let sum: Vec<f64> = matrix.iter().map(|row| row.iter().sum()).collect();
        assert!(
            sum.iter().all(|s| (s - 1.0).abs() < 1e-3),
            "{vision}: {sum:?}"
        );
    }
    // CIELAB: white is L 100, mid-grey about L 53.6.
    assert!((lab([1.0, 1.0, 1.0])[0] - 100.0).abs() < 0.01);
    assert!((lab([linear(128); 3])[0] - 53.6).abs() < 0.2);
}

#[test]
fn a_step_s_colour_runs_from_the_lightest_load_s_to_the_heaviest_s() {
    use crate::part::{LEVEL_RAMP, level_colour};
    assert_eq!(level_colour(0.0), LEVEL_RAMP[0]);
    assert_eq!(level_colour(0.5), LEVEL_RAMP[1]);
    assert_eq!(level_colour(1.0), LEVEL_RAMP[2]);
    assert_eq!(level_colour(-3.0), LEVEL_RAMP[0], "clamped");
    assert_eq!(level_colour(7.0), LEVEL_RAMP[2], "clamped");
    assert_eq!(level_colour(f64::NAN), LEVEL_RAMP[0]);
    // A quarter of the way: halfway between the first two stops.
    let [r, g, b] = level_colour(0.25);
    assert_eq!([r, g, b], [132, 121, 101]);
}
