use super::*;
use crate::export::fixture::reports;
use crate::export::read_reports;

fn html(reports: &[RunReport], redaction: Redaction) -> String {
    let bytes = Html {
        redaction,
        pairs: None,
    }
    .export(reports)
    .expect("an HTML report");
    String::from_utf8(bytes).expect("UTF-8")
}

#[test]
fn the_page_reads_back_as_the_runs_it_shows() {
    let runs = reports();
    let page = html(&runs, Redaction::NONE);
    assert!(is_html(page.as_bytes()));
    let back = read_reports(page.as_bytes()).expect("the embedded report");
    let via_json = crate::export::read_json(&Json.export(&runs).expect("json")).expect("json");
    assert_eq!(back, via_json);
    // Both runs, their headlines, and the comparison of the second with the first.
    assert!(page.contains("id=\"run-0\"") && page.contains("id=\"run-1\""));
    assert!(
        page.contains("class=\"headline\">Time (mean ± σ)"),
        "no headline"
    );
    assert!(page.contains("<h2>Comparison</h2>"));
}

#[test]
fn only_our_script_runs_and_the_policy_names_its_hash() {
    let page = html(&reports(), Redaction::NONE);
    assert_eq!(page.matches("<script").count(), 2, "the data and ours");
    let hash = base64::engine::general_purpose::STANDARD.encode(ring::digest::digest(
        &ring::digest::SHA256,
        SCRIPT.as_bytes(),
    ));
    assert!(page.contains(&format!("script-src 'sha256-{hash}'")));
    assert!(page.contains("default-src 'none'"));
    for remote in [
        "http://", "https://", "//fonts", "src=\"", "@import", "url(",
    ] {
        assert!(!page.contains(remote), "{remote} in the page");
    }
}

#[test]
fn hostile_text_stays_text_and_a_long_one_is_cut_on_the_page() {
    let evil =
        "</script><script>document.title='PWNED'</script><img src=x onerror=\"alert(1)\">'\"&";
    let mut runs = vec![RunReport::with_totals(evil, &[10.0, 12.0, 14.0])];
    runs[0].iterations[0].query.ttfb_ms = Some(f64::NAN);
    runs[0].iterations[0].query.server_elapsed_ms = Some(f64::INFINITY);
    runs[0].iterations[2].query.stream_wait_ms = Some(f64::NAN);
    runs[0].config.sql = format!("SELECT '{}' {}", evil, "y".repeat(10_000_000));
    runs[0].iterations[1].outcome = crate::report::Outcome::failed(evil, None);
    runs[0].iterations[1].ids.request_id = Some(evil.into());
    let page = html(&runs, Redaction::NONE);
    assert_eq!(
        page.matches("<script").count(),
        2,
        "only the data's and ours"
    );
    assert!(!page.contains("<img"), "an element from the data");
    assert!(
        !page.contains("NaN") && !page.contains("inf\""),
        "a number that is none"
    );
    // The page shows 4,000 characters of the SQL; the embedded report keeps all of it.
    let shown = page
        .split("<script type=\"application/json\"")
        .next()
        .unwrap_or("");
    assert!(
        shown.len() < 200_000,
        "the visible page is {} bytes",
        shown.len()
    );
    let back = read_reports(page.as_bytes()).expect("read back");
    assert_eq!(back[0].config.sql, runs[0].config.sql);
    assert_eq!(
        back[0].iterations[0].query.ttfb_ms, None,
        "NaN is written as null"
    );
    assert_eq!(back[0].config.label, evil);
}

#[test]
fn a_redacted_page_holds_none_of_the_literals_anywhere() {
    let mut runs = reports();
    runs[0].config.sql =
        "SELECT * FROM Singers WHERE Name = 'Zanzibar' AND Born < DATE '1987-06-05' \
         AND Id > 987654321 AND Tag = @tag"
            .into();
    runs[0].config.params = vec![("tag:STRING".into(), "quokka-77".into())];
    runs[0].iterations[1].outcome =
        crate::report::Outcome::failed("no such name: 'Zanzibar' (987654321)", None);
    runs[0].config.target = "cloud projects/acme-prod/instances/west9/databases/ledger".into();
    let names = Redaction::parse("names").expect("names");
    let page = html(&runs, names);
    for secret in [
        "Zanzibar",
        "1987-06-05",
        "987654321",
        "quokka-77",
        "acme-prod",
        "west9",
        "ledger",
    ] {
        assert!(!page.contains(secret), "{secret} is in the redacted page");
    }
    assert!(
        page.contains("Redacted:"),
        "the page says what was redacted"
    );
    assert!(
        page.contains("tag:STRING"),
        "parameter names and types stay"
    );
    let literals = html(&runs, Redaction::parse("literals").expect("literals"));
    assert!(literals.contains("acme-prod") && !literals.contains("Zanzibar"));
}

#[test]
fn other_html_and_load_reports_are_refused_by_name() {
    let plain = b"<!DOCTYPE html><html><body>hello</body></html>";
    let error = read_reports(plain).expect_err("no report in it");
    assert!(
        error.to_string().contains("without a spanprof report"),
        "{error}"
    );
    assert!(!is_html(b"{\"spanprof_report\": 1}"));
    assert!(is_html(b"\xef\xbb\xbf  <!doctype HTML>"));
}

#[test]
fn a_load_run_s_page_redacted_with_names_holds_no_name_and_no_literal_anywhere() {
    let plan = crate::load::LoadSteps {
        model: crate::load::Model::Open,
        levels: vec![crate::load::StepLevel::Rate(50.0)],
        step_duration: std::time::Duration::from_secs(1),
        max_in_flight: 10,
        drain: std::time::Duration::from_secs(1),
    };
    let facts = crate::load::RunFacts {
        label: "orders of 'Zanzibar'".into(),
        sql: "SELECT * FROM Orders WHERE Place = 'Zanzibar'".into(),
        target: "cloud projects/acme-prod/instances/west1/databases/orderbook".into(),
        database: "projects/acme-prod/instances/west1/databases/orderbook".into(),
        ..Default::default()
    };
    let report = LoadReport::new(facts, &plan, Vec::new());
    let page = load_html(&report, Redaction::parse("names").expect("names")).expect("a page");
    let page = String::from_utf8(page).expect("UTF-8");
    for secret in ["Zanzibar", "acme-prod", "west1", "orderbook"] {
        assert!(!page.contains(secret), "{secret} is in the page");
    }
    let back = crate::export::read_load_report(page.as_bytes()).expect("reads back");
    assert_eq!(back.database, "projects/?/instances/?/databases/?");
}

#[test]
fn a_report_embedded_anywhere_but_where_spanprof_writes_it_is_refused() {
    let runs = reports();
    let page = html(&runs, Redaction::NONE);
    let open = "<script type=\"application/json\" id=\"spanprof-report\">";
    let at = page.find(open).expect("the embedded report");
    let end = at + page[at..].find("</script>").expect("its end") + "</script>".len();
    let element = &page[at..end];
    let mut other = runs.clone();
    other[0].config.label = "the hidden report".into();
    let hidden = html(&other, Redaction::NONE);
    let hidden_at = hidden.find(open).expect("embedded");
    let hidden_end =
        hidden_at + hidden[hidden_at..].find("</script>").expect("ends") + "</script>".len();
    let hidden_element = &hidden[hidden_at..hidden_end];
    let body = page.find("<main>").expect("the body") + "<main>".len();
    let footer = page.find("</footer>").expect("the footer") + "</footer>".len();
    let without = format!("{}{}", &page[..at], &page[end..]);
    let forged = [
        // Inside a comment, the page's own report taken out.
        format!(
            "{}<!-- </footer>{hidden_element}<script></script></body></html>\n",
            &without[..footer]
        ),
        // Inside a comment before the page's own.
        format!(
            "{}<!-- {hidden_element} -->{}",
            &page[..body],
            &page[body..]
        ),
        // In an attribute's value.
        format!(
            "{}<p title=\"</footer>{hidden_element}<script></script></body></html>\n",
            &without[..footer]
        ),
        // In a textarea's text.
        format!(
            "{}<textarea></footer>{hidden_element}<script></script></body></html>\n",
            &without[..footer]
        ),
        // In the page's body, not after its footer.
        format!("{}{hidden_element}{}", &without[..body], &without[body..]),
    ];
    for (i, forged) in forged.iter().enumerate() {
        let read = read_reports(forged.as_bytes());
        assert!(
            read.as_ref()
                .map_or(true, |r| r[0].config.label != "the hidden report"),
            "forgery {i} was read as the hidden report"
        );
        assert!(read.is_err(), "forgery {i} was read");
    }
    // The page as written still reads back, and its element is where the check looks for it.
    assert!(read_reports(page.as_bytes()).is_ok());
    assert!(page[..at].ends_with("</footer>"), "{element}");
}

#[test]
fn a_load_page_shows_the_server_s_queue_under_its_part_where_it_was_reported() {
    use crate::load::{StepCpu, StepLevel, StepTally};
    let plan = crate::load::LoadSteps {
        model: crate::load::Model::Open,
        levels: vec![StepLevel::Rate(300.0)],
        step_duration: std::time::Duration::from_secs(1),
        max_in_flight: 10,
        drain: std::time::Duration::from_secs(1),
    };
    let mut tally = StepTally::new(StepLevel::Rate(300.0));
    tally.queued(1250.0);
    let mut step = tally.finish(
        std::time::Duration::ZERO,
        std::time::Duration::from_secs(1),
        StepCpu::default(),
    );
    step.parts.insert("server".into(), 1260.0);
    let report = LoadReport::new(Default::default(), &plan, vec![step.clone()]);
    let page =
        String::from_utf8(load_html(&report, Redaction::NONE).expect("a page")).expect("UTF-8");
    assert!(page.contains("of server: queue"), "the column is named");
    assert!(
        page.contains(&crate::text::ms(1250.0)),
        "the figure is shown"
    );
    step.server_queue_ms = None;
    let report = LoadReport::new(Default::default(), &plan, vec![step]);
    let page =
        String::from_utf8(load_html(&report, Redaction::NONE).expect("a page")).expect("UTF-8");
    assert!(
        !page.contains("of server: queue"),
        "no column where no queue was reported"
    );
}

#[test]
fn a_read_write_run_s_page_shows_its_transactions_their_attempts_and_new_parts() {
    use crate::report::{
        Action, ActionKind, Attempt, AttemptOutcome, IterationRecord, ReportHead, RunConfig,
        TransactionRecord,
    };
    let transfer = |iteration: u32, aborts: usize| {
        let mut r = IterationRecord::new("rw", iteration, false, "2026-12-05T00:00:00Z");
        let mut attempts = Vec::new();
        for _ in 0..aborts {
            let mut a = Attempt::new(AttemptOutcome::Aborted);
            a.total_ms = 4.0;
            a.ended_at = Some(ActionKind::Commit);
            a.message = Some("aborted <by the knob>".into());
            a.retry_delay_ms = Some(20.0);
            a.backoff_ms = Some(20.5);
            attempts.push(a);
        }
        let mut committed = Attempt::new(AttemptOutcome::Committed);
        committed.total_ms = 5.0;
        committed.actions = vec![Action {
            kind: Some(ActionKind::Commit),
            ms: 1.5,
            ..Action::default()
        }];
        attempts.push(committed);
        r.total_ms = 5.0 + aborts as f64 * 24.5;
        r.transaction = Some(TransactionRecord {
            attempts,
            ..TransactionRecord::default()
        });
        r
    };
    let report = ReportHead::new(
        RunConfig {
            label: "rw".into(),
            read_write: Some("isolation default".into()),
            ..RunConfig::default()
        },
        "2026-12-05T00:00:00Z".into(),
    )
    .with_records(vec![transfer(0, 0), transfer(1, 1), transfer(2, 0)]);
    let page = html(&[report], Redaction::NONE);
    assert!(
        page.contains("3 transactions, 3 committed; 1.33 attempts per transaction"),
        "the findings say how many attempts"
    );
    assert!(page.contains(
        "<h3>Transactions that took more than one attempt, or did not simply commit</h3>"
    ));
    assert!(page.contains("aborted &lt;by the knob&gt;"), "escaped");
    assert!(
        page.contains(">aborted attempts<"),
        "the new part in the legend or table"
    );
    assert!(page.contains(">commit<"));
    assert!(page.contains("<dt>read-write transaction</dt><dd>isolation default</dd>"));
    // The slowest transaction against the median one, by its parts: the abort and its back-off.
    assert!(
        page.contains("The slowest iteration, #1"),
        "the slowest transaction is named"
    );
    assert!(
        page.contains("1 aborted attempt (at commit)"),
        "its causes are listed"
    );
}

/// A read-write load run of two steps: two clients whose transfers abort one another at commit.
fn read_write_load() -> LoadReport {
    use crate::load::{StepCpu, StepLevel, StepTally};
    use std::collections::BTreeMap;
    let levels = [StepLevel::Concurrency(1), StepLevel::Concurrency(2)];
    let plan = crate::load::LoadSteps {
        model: crate::load::Model::Closed,
        levels: levels.to_vec(),
        step_duration: std::time::Duration::from_secs(1),
        max_in_flight: 2,
        drain: std::time::Duration::from_secs(1),
    };
    let steps = levels
        .iter()
        .zip([(180.0, 180.0, 0.0), (240.6, 303.0, 0.26)])
        .map(|(&level, (goodput, attempts, aborts))| {
            let mut s = StepTally::read_write(level).finish(
                std::time::Duration::ZERO,
                std::time::Duration::from_secs(1),
                StepCpu::default(),
            );
            s.committed = Some(goodput as u64);
            s.committed_per_s = Some(goodput);
            s.attempts_per_s = Some(attempts);
            s.aborts_per_transaction = Some(aborts);
            s.attempts = if aborts > 0.0 {
                BTreeMap::from([(1, 217), (2, 12), (3, 7)])
            } else {
                BTreeMap::from([(1, 180)])
            };
            if aborts > 0.0 {
                s.aborts_at = BTreeMap::from([("commit".into(), 42), ("dml".into(), 21)]);
            }
            s.parts = BTreeMap::from([
                ("aborted".into(), 1.51 * aborts),
                ("backoff".into(), 2.81 * aborts),
                ("server".into(), 0.85),
                ("network".into(), 1.8),
                ("commit".into(), 1.25),
            ]);
            s
        })
        .collect();
    LoadReport::new(Default::default(), &plan, steps)
}

#[test]
fn a_read_write_load_page_sets_goodput_against_attempts_and_shows_the_transaction_s_parts() {
    let page = String::from_utf8(load_html(&read_write_load(), Redaction::NONE).expect("a page"))
        .expect("UTF-8");
    assert!(page.contains("<h3>Goodput against attempts</h3>"));
    // A line each on the chart, and a legend that names them.
    let chart = page
        .split("<svg class=\"goodput\"")
        .nth(1)
        .and_then(|rest| rest.split("</svg>").next())
        .expect("the goodput chart");
    assert_eq!(chart.matches("<polyline").count(), 2, "{chart}");
    assert!(page.contains("committed a second (goodput)"));
    assert!(page.contains("attempts a second (the aborted ones included)"));
    // The table: goodput, attempts, aborts per transaction, where they aborted.
    for cell in ["240.6/s", "303.0/s", ">0.26<", "commit 42, dml 21"] {
        assert!(page.contains(cell), "{cell}");
    }
    // The attempts' histogram, a row per step.
    assert!(page.contains("<h3>How many attempts each transaction took</h3>"));
    assert!(page.contains("<th>1 attempt</th><th>2</th><th>3</th>"));
    assert!(page.contains("217 (91.9%)"), "217 of 236 took one");
    // The parts the steps have, the transaction's among them, per committed transaction.
    for part in [crate::part::Part::Aborted, crate::part::Part::Commit] {
        assert!(
            page.contains(&format!("<th>{}</th>", part.label())),
            "{part:?}"
        );
    }
    assert!(page.contains("means per committed transaction"));
}

#[test]
fn a_query_load_page_has_no_goodput() {
    let mut report = read_write_load();
    for s in &mut report.steps {
        s.committed = None;
    }
    let page =
        String::from_utf8(load_html(&report, Redaction::NONE).expect("a page")).expect("UTF-8");
    assert!(!page.contains("Goodput against attempts"));
    assert!(page.contains("means per request that ended ok"));
}

#[test]
fn a_read_write_run_s_page_says_who_blocked_whom_its_hottest_keys_then_each_pair() {
    let page = html(
        &[crate::export::fixture::conflicted_report()],
        Redaction::NONE,
    );
    let section = page
        .split("<h3 id=\"who-blocked-whom\">Who blocked whom</h3>")
        .nth(1)
        .and_then(|rest| rest.split("<h3>").next())
        .expect("the section");
    assert!(
        section.contains("2 waits (6.5 ms) and 1 wounds"),
        "{section}"
    );
    assert!(
        section.contains("the local instance&#39;s lock table, a model of Spanner&#39;s locking"),
        "where the figures come from"
    );
    // The hottest keys first: accounts(1) waited on longest, its column and its wound.
    let keys = section
        .split("conflicts-keys")
        .nth(1)
        .and_then(|t| t.split("</table>").next())
        .expect("the keys' table");
    let rows: Vec<&str> = keys.split("<tr>").skip(2).collect();
    assert_eq!(rows.len(), 2, "{keys}");
    assert!(
        rows[0].starts_with("<td>accounts(1)</td><td>balance</td>"),
        "{}",
        rows[0]
    );
    assert!(rows[1].starts_with("<td>accounts(2)</td>"), "{}", rows[1]);
    // Then each pair, in order: the wait behind iteration 0, the wound by iteration 2, the wait
    // behind another client's transaction.
    let pairs = section
        .split("conflicts-pairs")
        .nth(1)
        .and_then(|t| t.split("</table>").next())
        .expect("the pairs' table");
    let rows: Vec<&str> = pairs.split("<tr").skip(2).collect();
    assert_eq!(rows.len(), 3, "{pairs}");
    assert!(
        rows[0].contains(
            "<td>iteration 1, attempt 1</td><td>waited</td><td>dml</td><td>accounts(1).balance</td>"
        ),
        "{}",
        rows[0]
    );
    assert!(
        rows[0].contains("<td>iteration 0, attempt 1</td>"),
        "{}",
        rows[0]
    );
    assert!(
        rows[1].contains("<td>wounded</td>") && rows[1].contains("<td>iteration 2, attempt 1</td>"),
        "{}",
        rows[1]
    );
    assert!(
        rows[2].contains("another client&#39;s transaction ffeeddccbbaa…"),
        "{}",
        rows[2]
    );
    // The transaction that waited longest, a lane per attempt, its wait marked and named.
    assert!(section.contains("The transaction that waited longest for locks"));
    let lanes = section
        .split("<svg class=\"attempt-lanes\"")
        .nth(1)
        .and_then(|s| s.split("</svg>").next())
        .expect("the attempts' lanes");
    assert_eq!(lanes.matches("class=\"lane\"").count(), 2, "two attempts");
    assert_eq!(
        lanes.matches("class=\"lock-wait\"").count(),
        2,
        "a wait in each"
    );
    assert!(
        lanes.contains(
            "waited 4.5 ms for accounts(1).balance (WriterShared) behind iteration 0, attempt 1"
        ),
        "{lanes}"
    );
    assert!(
        lanes.contains("aborted at dml: wounded by iteration 2, attempt 1, an older transaction"),
        "{lanes}"
    );
}

#[test]
fn a_run_of_queries_has_no_conflict_section() {
    let page = html(&reports(), Redaction::NONE);
    assert!(!page.contains("Who blocked whom"));
    assert!(!page.contains("attempt-lanes"));
}

#[test]
fn a_read_write_load_page_shows_each_step_s_hottest_keys_and_invents_none() {
    use crate::report::{Conflicts, KeyConflicts};
    let mut report = read_write_load();
    report.steps[1].conflicts = Some(Conflicts {
        waits: 40,
        wait_ms: 512.5,
        wounds: 7,
        keys: vec![KeyConflicts {
            key: "accounts(1)".into(),
            columns: vec!["balance".into()],
            waits: 38,
            wait_ms: 500.0,
            wounds: 7,
        }],
    });
    let page =
        String::from_utf8(load_html(&report, Redaction::NONE).expect("a page")).expect("UTF-8");
    let section = page
        .split("<h3>The hottest keys</h3>")
        .nth(1)
        .and_then(|rest| rest.split("<h3>").next())
        .expect("the hottest keys under the goodput");
    let rows: Vec<&str> = section.split("<tr>").skip(2).collect();
    assert_eq!(rows.len(), 2, "{section}");
    assert!(
        rows[0].contains("<td>the target named no lock waits</td>"),
        "the first step named none: {}",
        rows[0]
    );
    assert!(
        !rows[0].contains("data-v=\"0\">0"),
        "no figure invented: {}",
        rows[0]
    );
    assert!(
        rows[1].contains("<td>accounts(1)</td><td>balance</td>"),
        "{}",
        rows[1]
    );
    assert!(
        rows[1].contains(">38<") && rows[1].contains(">7<"),
        "{}",
        rows[1]
    );
    assert!(section.contains("a model of Spanner&#39;s locking"));
    // No step named any: a sentence, no table.
    report.steps[1].conflicts = None;
    let page =
        String::from_utf8(load_html(&report, Redaction::NONE).expect("a page")).expect("UTF-8");
    assert!(page.contains("The target named no lock waits for these read-write steps"));
    assert!(!page.contains("conflicts-keys"));
}
