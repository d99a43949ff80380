//! A spanprof client driver for Google's official Rust Spanner client (google-cloud-spanner
//! 0.34.8-preview).
//!
//! Reads SPANPROF_SQL through the client from the instance named by SPANNER_EMULATOR_HOST,
//! SPANPROF_PROJECT, SPANPROF_INSTANCE and SPANPROF_DATABASE (what `spanprof client` sets), and
//! prints each row as a canonical JSON line (the encoding of tests/vectors/README.md), so that
//! spanprof checks every value. With --count it prints only `rows N`. Errors go to stderr as one
//! line, with exit status 1.
//!
//!     spanprof client -- /var/tmp/spanprof-rust-client-target/release/spanprof-rust-client
//!
//! `spanprof-rust-client transfer N` runs read-write transactions instead (see `transfer`).

mod transfer;

use std::io::Write;
use std::time::Duration;

use base64::Engine as _;
use google_cloud_gax::exponential_backoff::ExponentialBackoffBuilder;
use google_cloud_gax::retry_policy::RetryPolicyExt;
use google_cloud_spanner::client::Spanner;
use google_cloud_spanner::retry_policy::SpannerRetryPolicy;
use google_cloud_spanner::statement::Statement;
use google_cloud_spanner::value::{FromValue, Type, TypeCode, Value};
use serde_json::Value as Json;

/// How often the client may resume one stream. The crate's default is 10 attempts for the
/// whole stream (its count never resets after a resume that made progress), which a server
/// failing every few messages exhausts.
const RESUME_ATTEMPTS: u32 = 100_000;

type Failure = Box<dyn std::error::Error + Send + Sync>;

fn env(name: &str) -> Result<String, Failure> {
    std::env::var(name).map_err(|_| format!("{name} is not set").into())
}

#[tokio::main]
async fn main() {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let result = match args.split_first() {
        Some((mode, rest)) if mode == "transfer" => transfer::run(rest).await,
        _ => run(args.iter().any(|a| a == "--count")).await,
    };
    if let Err(e) = result {
        eprintln!("rust_client: {e}");
        std::process::exit(1);
    }
}

async fn run(count_only: bool) -> Result<(), Failure> {
    let database = format!(
        "projects/{}/instances/{}/databases/{}",
        env("SPANPROF_PROJECT")?,
        env("SPANPROF_INSTANCE")?,
        env("SPANPROF_DATABASE")?
    );
    let sql = env("SPANPROF_SQL")?;
    // The builder finds SPANNER_EMULATOR_HOST itself: plaintext, anonymous credentials.
    let spanner = Spanner::builder().build().await?;
    let client = spanner.database_client(database).build().await?;
    // The crate's back-off starts at 1 s and doubles; a few milliseconds keep fault runs short.
    let backoff = ExponentialBackoffBuilder::new()
        .with_initial_delay(Duration::from_millis(1))
        .with_maximum_delay(Duration::from_millis(5))
        .build()?;
    let statement = Statement::builder(sql)
        .with_retry_policy(SpannerRetryPolicy::new().with_attempt_limit(RESUME_ATTEMPTS))
        .with_backoff_policy(backoff)
        .build();
    let mut results = client.single_use().build().execute_query(statement).await?;
    let types: Vec<Type> = results.metadata().column_types().to_vec();
    let stdout = std::io::stdout();
    let mut out = std::io::BufWriter::with_capacity(1 << 16, stdout.lock());
    let mut rows: u64 = 0;
    while let Some(row) = results.next().await.transpose()? {
        rows += 1;
        if count_only {
            continue;
        }
        let values = row.raw_values();
        if values.len() != types.len() {
            return Err(format!(
                "row {rows}: {} values for {} columns",
                values.len(),
                types.len()
            )
            .into());
        }
        let encoded = values
            .iter()
            .zip(&types)
            .map(|(v, t)| encode(v, t))
            .collect::<Result<Vec<_>, _>>()
            .map_err(|e| format!("row {rows}: {e}"))?;
        serde_json::to_writer(&mut out, &Json::Array(encoded))?;
        out.write_all(b"\n")?;
    }
    if count_only {
        writeln!(out, "rows {rows}")?;
    }
    out.flush()?;
    Ok(())
}

/// One value in the canonical encoding, by its column type, read through the crate's own
/// conversions.
fn encode(value: &Value, type_: &Type) -> Result<Json, Failure> {
    if value.is_null() {
        return Ok(Json::Null);
    }
    Ok(match type_.code() {
        TypeCode::Array => {
            let element = type_
                .array_element_type()
                .ok_or("an ARRAY without its element type")?;
            let list = value.as_list().ok_or("an ARRAY value that is not a list")?;
            Json::Array(
                list.iter()
                    .map(|v| encode(v, element))
                    .collect::<Result<_, _>>()?,
            )
        }
        TypeCode::Struct => {
            let fields = &type_
                .struct_type()
                .ok_or("a STRUCT without its fields")?
                .fields;
            let list = value.as_list().ok_or("a STRUCT value that is not a list")?;
            if list.len() != fields.len() {
                return Err(format!(
                    "a STRUCT of {} fields with {} values",
                    fields.len(),
                    list.len()
                )
                .into());
            }
            let mut out = Vec::with_capacity(fields.len());
            for (v, field) in list.iter().zip(fields) {
                let t = field
                    .r#type
                    .as_deref()
                    .ok_or("a STRUCT field without its type")?;
                out.push(encode(v, &Type::from(t.clone()))?);
            }
            Json::Array(out)
        }
        TypeCode::Bool => Json::Bool(bool::from_value(value, type_)?),
        TypeCode::Int64 | TypeCode::Enum => {
            Json::String(i64::from_value(value, type_)?.to_string())
        }
        TypeCode::Float64 => float(f64::from_value(value, type_)?),
        TypeCode::Float32 => float(f64::from(f32::from_value(value, type_)?)),
        TypeCode::Bytes | TypeCode::Proto => Json::String(
            base64::engine::general_purpose::STANDARD.encode(Vec::<u8>::from_value(value, type_)?),
        ),
        TypeCode::Timestamp => {
            Json::String(rfc3339(time::OffsetDateTime::from_value(value, type_)?))
        }
        TypeCode::Date => {
            let d = time::Date::from_value(value, type_)?;
            Json::String(format!(
                "{:04}-{:02}-{:02}",
                d.year(),
                u8::from(d.month()),
                d.day()
            ))
        }
        TypeCode::Json => {
            let text = String::from_value(value, type_)?;
            let parsed: Json = serde_json::from_str(&text)?;
            Json::String(serde_json::to_string(&sorted(parsed))?)
        }
        // NUMERIC as sent (a String: the crate's Decimal holds 28 digits, NUMERIC 38), STRING,
        // UUID, INTERVAL.
        _ => Json::String(String::from_value(value, type_)?),
    })
}

fn float(v: f64) -> Json {
    if v.is_nan() {
        Json::String("NaN".into())
    } else if v.is_infinite() {
        Json::String(if v > 0.0 { "Infinity" } else { "-Infinity" }.into())
    } else {
        serde_json::Number::from_f64(v).map_or(Json::Null, Json::Number)
    }
}

/// RFC 3339 in UTC, fractional seconds without trailing zeros, none when zero.
fn rfc3339(t: time::OffsetDateTime) -> String {
    let t = t.to_offset(time::UtcOffset::UTC);
    let mut text = format!(
        "{:04}-{:02}-{:02}T{:02}:{:02}:{:02}",
        t.year(),
        u8::from(t.month()),
        t.day(),
        t.hour(),
        t.minute(),
        t.second()
    );
    let nanos = t.nanosecond();
    if nanos > 0 {
        let digits = format!("{nanos:09}");
        text.push('.');
        text.push_str(digits.trim_end_matches('0'));
    }
    text.push('Z');
    text
}

/// A JSON value with its object keys sorted at every depth, for a canonical text whatever map
/// order serde_json was built with.
fn sorted(value: Json) -> Json {
    match value {
        Json::Array(items) => Json::Array(items.into_iter().map(sorted).collect()),
        Json::Object(map) => {
            let mut entries: Vec<(String, Json)> = map.into_iter().collect();
            entries.sort_by(|a, b| a.0.cmp(&b.0));
            Json::Object(entries.into_iter().map(|(k, v)| (k, sorted(v))).collect())
        }
        other => other,
    }
}
