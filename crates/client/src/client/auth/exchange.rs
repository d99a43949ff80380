//! A service account's token, asked for here rather than through gcp_auth, whose reader has no
//! bound: an endless answer took 3.4-4.25 GB within the call limit, a `Content-Length` of 4 GiB
//! aborted spanprof, and a 64 MiB access token was taken and sent as a header on every call. Here
//! the signed assertion ([`jwt`](super::jwt)) is POSTed to the key's `token_uri`, the answer read
//! up to [`MAX_TOKEN_RESPONSE_BYTES`], the token taken up to [`MAX_TOKEN_BYTES`], and its lifetime
//! up to [`LONGEST_TOKEN_LIFE`].

use std::time::{Duration, SystemTime};

use super::error::AuthError;
use super::http::{PostError, post_form};
use super::jwt::assertion;
use super::key_file::ServiceAccount;

/// The most of a token endpoint's answer read: Google's are about 1 KiB.
pub const MAX_TOKEN_RESPONSE_BYTES: usize = 64 << 10;

/// The longest access token taken: Google's are a few hundred bytes, well under the 8 KiB that
/// HTTP servers commonly take as a whole header.
pub const MAX_TOKEN_BYTES: usize = 8 << 10;

/// The longest lifetime believed: a day (Google's tokens live an hour, at most twelve).
pub const LONGEST_TOKEN_LIFE: Duration = Duration::from_secs(86_400);

/// The JWT-bearer grant type, form-encoded.
const JWT_BEARER: &str = "urn%3Aietf%3Aparams%3Aoauth%3Agrant-type%3Ajwt-bearer";

/// A token as a token endpoint issued it.
pub struct Issued {
    /// The access token (at most [`MAX_TOKEN_BYTES`]).
    pub access_token: String,
    /// How long it lives from when it was asked for (at most [`LONGEST_TOKEN_LIFE`]).
    pub expires_in: Duration,
}

/// Asks `account`'s `token_uri` for a token of `scope`. The caller holds it to a time limit.
pub async fn exchange(account: &ServiceAccount, scope: &str) -> Result<Issued, AuthError> {
    let endpoint = account.token_uri.as_str();
    let now = SystemTime::now()
        .duration_since(SystemTime::UNIX_EPOCH)
        .unwrap_or_default()
        .as_secs();
    // base64url and dots only: nothing in it needs form-encoding.
    let form = format!(
        "grant_type={JWT_BEARER}&assertion={}",
        assertion(account, scope, now)?
    );
    let answer = post_form(endpoint, form, MAX_TOKEN_RESPONSE_BYTES)
        .await
        .map_err(|e| match e {
            PostError::TooLarge(limit) => AuthError::ResponseTooLarge {
                endpoint: endpoint.to_owned(),
                limit,
            },
            other => AuthError::Unreachable {
                endpoint: endpoint.to_owned(),
                message: other.to_string(),
            },
        })?;
    if !(200..300).contains(&answer.status) {
        // The body can quote the assertion or say why in words that hold secrets: not shown.
        return Err(AuthError::Refused {
            endpoint: endpoint.to_owned(),
            status: format!("HTTP {}", answer.status),
        });
    }
    token_response(endpoint, &answer.body)
}

/// The token in a token endpoint's JSON answer (`access_token`, `expires_in` in seconds), checked.
pub fn token_response(endpoint: &str, body: &[u8]) -> Result<Issued, AuthError> {
    let bad = || AuthError::BadTokenResponse {
        endpoint: endpoint.to_owned(),
    };
    let value: serde_json::Value = serde_json::from_slice(body).map_err(|_| bad())?;
    let access_token = value
        .get("access_token")
        .and_then(|t| t.as_str())
        .filter(|t| !t.is_empty())
        .ok_or_else(bad)?;
    if access_token.len() > MAX_TOKEN_BYTES {
        return Err(AuthError::TokenTooLong {
            endpoint: endpoint.to_owned(),
            length: access_token.len(),
            limit: MAX_TOKEN_BYTES,
        });
    }
    let seconds = value
        .get("expires_in")
        .and_then(serde_json::Value::as_f64)
        .filter(|s| s.is_finite() && *s >= 0.0)
        .ok_or_else(bad)?;
    Ok(Issued {
        access_token: access_token.to_owned(),
        expires_in: Duration::from_secs_f64(seconds.min(LONGEST_TOKEN_LIFE.as_secs_f64())),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_token_response_is_checked_and_its_lifetime_bounded() {
        let ok = token_response("e", br#"{"access_token":"ya29.x","expires_in":3599}"#)
            .expect("a token");
        assert_eq!(
            (ok.access_token.as_str(), ok.expires_in),
            ("ya29.x", Duration::from_secs(3599))
        );
        let long = token_response("e", br#"{"access_token":"t","expires_in":1e300}"#).expect("t");
        assert_eq!(long.expires_in, LONGEST_TOKEN_LIFE);
        let huge = format!(
            r#"{{"access_token":"{}","expires_in":1}}"#,
            "a".repeat(MAX_TOKEN_BYTES + 1)
        );
        assert!(matches!(
            token_response("e", huge.as_bytes()),
            Err(AuthError::TokenTooLong { length, .. }) if length == MAX_TOKEN_BYTES + 1
        ));
        for bad in [
            &br#"{"access_token":"t"}"#[..],
            br#"{"access_token":"t","expires_in":-1}"#,
            br#"{"access_token":"","expires_in":1}"#,
            br#"{"expires_in":1}"#,
            b"not json",
        ] {
            assert!(
                matches!(
                    token_response("e", bad),
                    Err(AuthError::BadTokenResponse { .. })
                ),
                "{}",
                String::from_utf8_lossy(bad)
            );
        }
    }
}
