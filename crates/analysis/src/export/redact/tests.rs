use super::*;

fn sql(text: &str) -> (String, Secrets) {
    let mut secrets = Secrets::default();
    (secrets.sql(text), secrets)
}

#[test]
fn literals_of_every_kind_go_and_the_shape_stays() {
    let (out, secrets) = sql(
        "SELECT s.Name, 'Zanzibar' AS x, r\"raw\\d\", b'\\x01bytes', '''tri'ple''' \
         FROM `Singers` s -- a comment with 'Quux'\n\
         WHERE s.Id = 987654321 AND s.Born > DATE '1999-12-31' AND s.Score >= 1.5e-3 \
         AND s.Seed23 = @id /* note 4242 */ LIMIT 10",
    );
    assert_eq!(
        out,
        "SELECT s.Name, '?' AS x, r'?', b'?', '?' \
         FROM `Singers` s \n\
         WHERE s.Id = ? AND s.Born > DATE '?' AND s.Score >= ? \
         AND s.Seed23 = @id   LIMIT ?"
    );
    for gone in [
        "Zanzibar",
        "raw\\d",
        "1999-12-31",
        "987654321",
        "tri'ple",
        "Quux",
        "4242",
    ] {
        assert!(!out.contains(gone), "{gone} in {out}");
    }
    assert!(secrets.substrings.iter().any(|s| s == "Zanzibar"));
    assert!(secrets.words.iter().any(|s| s == "10"));
}

#[test]
fn unterminated_literals_and_odd_input_never_panic() {
    for text in [
        "'open", "\"", "b'", "'''", "/* open", "`open", "1e", "..5", "@", "é'x'", "",
    ] {
        let (out, _) = sql(text);
        assert!(!out.contains('x') || text == "`open", "{text:?} -> {out:?}");
    }
}

#[test]
fn other_texts_lose_what_the_sql_lost_and_keep_the_rest() {
    let mut secrets = Secrets::default();
    secrets.add("Zanzibar");
    secrets.add("7");
    assert_eq!(
        secrets.scrub("Seed7 row 7 at 17: 'Zanzibar' is 7.5 7"),
        "Seed7 row ? at 17: '?' is 7.5 ?"
    );
}

#[test]
fn names_go_from_the_target_and_from_errors() {
    let mut report = RunReport::with_totals("r", &[1.0]);
    report.config.target = "cloud projects/acme-prod/instances/west1/databases/orders".into();
    report.config.database = "projects/acme-prod/instances/west1/databases/orders".into();
    report.iterations[0].outcome = crate::report::Outcome::failed(
        "Database not found: projects/acme-prod/instances/west1/databases/orders",
        None,
    );
    let reports = [report];
    let out = Redaction::parse("names").expect("names").apply(&reports);
    assert_eq!(
        out[0].config.target,
        "cloud projects/?/instances/?/databases/?"
    );
    assert_eq!(out[0].config.database, "projects/?/instances/?/databases/?");
    let error = out[0].iterations[0].error().unwrap_or("");
    for name in ["acme-prod", "west1", "orders"] {
        assert!(!error.contains(name), "{error}");
    }
}

#[test]
fn parameters_keep_their_names_and_types_and_lose_their_values() {
    let mut report = RunReport::with_totals("label with Zanzibar", &[1.0]);
    report.config.sql = "SELECT @name".into();
    report.config.params = vec![("name:STRING".into(), "Zanzibar".into())];
    let out = Redaction::parse("literals")
        .expect("literals")
        .apply(std::slice::from_ref(&report));
    assert_eq!(
        out[0].config.params,
        vec![("name:STRING".into(), "?".into())]
    );
    assert_eq!(out[0].config.label, "label with ?");
    assert!(Redaction::parse("everything").is_err());
}

/// A report of `sql` whose one iteration failed with `error`, redacted as `what` says: the
/// whole redacted report as JSON.
fn redacted_with_error(what: &str, sql: &str, error: &str) -> String {
    let mut report = RunReport::with_totals("r", &[1.0]);
    report.config.sql = sql.into();
    report.iterations[0].outcome = crate::report::Outcome::failed(error, None);
    let out = Redaction::parse(what)
        .expect("a redaction")
        .apply(std::slice::from_ref(&report));
    serde_json::to_string(&out[0]).expect("serializes")
}

#[test]
fn escaped_literals_are_taken_out_as_the_server_decodes_them() {
    let out = redacted_with_error(
        "literals",
        "SELECT ERROR('RTSEC\\x45RRX1'), CAST('AB\\x43DEFG' AS INT64), '''TRI\\x50LE''', \
         'OCT\\101L', \"UNI\\u00e9CODE\", 'NL\\nBELOW', r'RAW\\x41'",
        "Operation was attempted past the valid range: RTSECERRX1; Bad int64 value: ABCDEFG; \
         TRIPLE; OCTAL; UNIéCODE; NL\nBELOW; RAW\\x41",
    );
    for gone in [
        "RTSECERRX1",
        "ABCDEFG",
        "TRIPLE",
        "OCTAL",
        "UNIéCODE",
        "BELOW",
        "RAW\\\\x41",
        "RTSEC\\\\x45",
    ] {
        assert!(!out.contains(gone), "{gone} in {out}");
    }
    assert!(out.contains("Bad int64 value"), "{out}");
}

#[test]
fn comments_are_secrets_wherever_an_error_quotes_the_line() {
    let sql = "SELECT 1 /* secret plan */ + 'x' -- tail words\nFROM t # hash note";
    let out = redacted_with_error(
        "literals",
        sql,
        &format!("No matching signature for operator + [at 1:8]\n{sql}\n       ^"),
    );
    for gone in ["secret plan", "tail words", "hash note"] {
        assert!(!out.contains(gone), "{gone} in {out}");
    }
    assert!(out.contains("No matching signature"), "{out}");
}

#[test]
fn a_hex_literal_goes_in_decimal_too() {
    let out = redacted_with_error(
        "literals",
        "SELECT 0x7FFFFFFFFFFFFFF0 + 0x7FFFFFFFFFFFFFF1",
        "int64 overflow: 9223372036854775792 + 9223372036854775793",
    );
    for gone in [
        "9223372036854775792",
        "9223372036854775793",
        "7FFFFFFFFFFFFFF",
    ] {
        assert!(!out.contains(gone), "{gone} in {out}");
    }
}

#[test]
fn escapes_decode_as_googlesql_spells_them_and_odd_ones_stay() {
    assert_eq!(
        sql::decode_escapes("a\\x41\\101\\u00e9\\U0001F600\\n\\'"),
        "aAAé😀\n'"
    );
    assert_eq!(sql::decode_escapes("\\xZZ \\q \\"), "\\xZZ \\q \\");
}

#[test]
fn a_resume_s_status_loses_what_an_error_of_the_same_text_loses() {
    let mut report = RunReport::with_totals("r", &[1.0]);
    report.config.sql = "SELECT * FROM t WHERE name = 'Zanzibar'".into();
    report.iterations[0].timeline = Some(crate::report::Timeline {
        lanes: vec![crate::report::Lane {
            resumes: vec![crate::report::Resume {
                status: "UNAVAILABLE: stream broke reading 'Zanzibar'".into(),
                ..Default::default()
            }],
            ..Default::default()
        }],
        ..Default::default()
    });
    let out = Redaction::parse("literals")
        .expect("literals")
        .apply(std::slice::from_ref(&report));
    let timeline = out[0].iterations[0].timeline.as_ref().expect("kept");
    assert_eq!(
        timeline.lanes[0].resumes[0].status,
        "UNAVAILABLE: stream broke reading '?'"
    );
}

#[test]
fn a_literal_that_spells_one_of_spanprof_s_own_words_leaves_the_report_readable() {
    let mut report = RunReport::with_totals("r", &[1.0, 2.0]);
    let mode = serde_json::to_value(&report.config).expect("serializes");
    let words: Vec<String> = mode
        .as_object()
        .expect("an object")
        .values()
        .filter_map(|v| v.as_str())
        .filter(|s| s.len() >= 3 && s.chars().all(|c| c.is_ascii_alphanumeric()))
        .map(|s| format!("'{s}'"))
        .collect();
    assert!(
        !words.is_empty(),
        "the config holds some of spanprof's words"
    );
    report.config.sql = format!("SELECT {} FROM t WHERE x = 'Zanzibar'", words.join(", "));
    report.iterations[0].outcome = crate::report::Outcome::failed("no Zanzibar here", None);
    report.iterations[0].timeline = Some(crate::report::Timeline::default());
    let out = Redaction::parse("literals")
        .expect("literals")
        .apply(std::slice::from_ref(&report));
    assert_eq!(out[0].iterations.len(), 2);
    assert!(
        out[0].iterations[0].timeline.is_some(),
        "the report was scrubbed whole, not field by field"
    );
    assert_eq!(out[0].iterations[0].error(), Some("no ? here"));
}

#[test]
fn a_load_step_s_histograms_keep_their_encoding_whatever_the_literals() {
    use crate::load::{LoadSteps, Model, RunFacts, StepCpu, StepLevel, StepTally};
    use std::time::Duration;
    let mut tally = StepTally::new(StepLevel::Rate(10.0));
    tally.error("UNAVAILABLE", Duration::from_millis(5));
    let step = tally.finish(Duration::ZERO, Duration::from_secs(1), StepCpu::default());
    let histogram = step.histogram.clone();
    // An empty histogram's base64 is mostly A: a literal of As is found in it by chance.
    assert!(histogram.contains("AAAA"), "{histogram}");
    let plan = LoadSteps {
        model: Model::Open,
        levels: vec![StepLevel::Rate(10.0)],
        step_duration: Duration::from_secs(1),
        max_in_flight: 10,
        drain: Duration::from_secs(1),
    };
    let facts = RunFacts {
        label: "AAAA".into(),
        sql: "SELECT * FROM t WHERE k = 'AAAA'".into(),
        ..RunFacts::default()
    };
    let report = crate::load::LoadReport::new(facts, &plan, vec![step]);
    let out = Redaction::parse("literals")
        .expect("literals")
        .apply_load(&report);
    assert_eq!(out.label, "?", "the label lost the literal");
    assert_eq!(out.steps.len(), 1, "scrubbed whole, steps kept");
    assert_eq!(out.steps[0].histogram, histogram);
    assert!(crate::load::Latencies::decode(&out.steps[0].histogram).is_ok());
}

#[test]
fn a_load_run_s_constant_parameters_lose_their_values_and_its_key_spaces_stay() {
    use crate::load::{Dist, Draws, LoadSteps, Model, ParamDraw, RunFacts, StepLevel};
    use std::time::Duration;
    let mut report = crate::load::LoadReport::new(
        RunFacts::default(),
        &LoadSteps {
            model: Model::Open,
            levels: vec![StepLevel::Rate(10.0)],
            step_duration: Duration::from_secs(1),
            max_in_flight: 10,
            drain: Duration::from_secs(1),
        },
        Vec::new(),
    );
    let params = ["who=string:Zanzibar", "n=int:987654", "id=zipf:1..100"];
    report.draws = Some(Draws {
        seed: 3,
        params: params
            .iter()
            .map(|p| ParamDraw::parse(p).expect("valid"))
            .collect(),
        mix: Vec::new(),
    });
    let out = Redaction::parse("literals")
        .expect("literals")
        .apply_load(&report);
    let dists: Vec<Dist> = out
        .draws
        .expect("draws kept")
        .params
        .into_iter()
        .map(|p| p.dist)
        .collect();
    let hidden = Dist::String { value: "?".into() };
    assert_eq!(dists[..2], [hidden.clone(), hidden]);
    assert_eq!(
        dists[2],
        Dist::Zipf {
            lo: 1,
            hi: 100,
            s: 0.99
        }
    );
}
