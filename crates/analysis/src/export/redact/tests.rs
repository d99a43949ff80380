use super::*;

fn sql(text: &str) -> (String, Secrets) {
    let mut secrets = Secrets::default();
    (redact_sql(text, &mut secrets), secrets)
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
    report.iterations[0].error =
        Some("Database not found: projects/acme-prod/instances/west1/databases/orders".into());
    let reports = [report];
    let out = Redaction::parse("names").expect("names").apply(&reports);
    assert_eq!(
        out[0].config.target,
        "cloud projects/?/instances/?/databases/?"
    );
    assert_eq!(out[0].config.database, "projects/?/instances/?/databases/?");
    let error = out[0].iterations[0].error.as_deref().unwrap_or("");
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
