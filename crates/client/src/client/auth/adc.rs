//! Application-default credentials. When `GOOGLE_APPLICATION_CREDENTIALS` names a service-account
//! key (the first step of the chain) the key is read and its tokens asked for by spanprof itself,
//! bounded like `--credentials` ([`exchange`](super::exchange)). The rest of the chain (gcloud's
//! user credentials, the metadata server, `gcloud auth print-access-token`) stays with gcp_auth,
//! which reads a token endpoint's answer with no bound of its own and panics on an `expires_in`
//! past its clock's range: its fetch runs on a task of its own, which the caller's time limit
//! aborts, a panic comes back as an error, and the token it returns is checked like any other;
//! what it reads within the time limit is not bounded. Doing better there means the refresh-token
//! and metadata-server exchanges written here too.

use std::path::PathBuf;
use std::sync::Arc;
use std::time::{Duration, SystemTime};

use gcp_auth::TokenProvider;

use super::error::AuthError;
use super::exchange::{Issued, LONGEST_TOKEN_LIFE};
use super::key_file::{ServiceAccount, read_json_object, service_account};
use crate::client::error_chain;

/// The environment variable naming a key file, the chain's first step.
const KEY_FILE_VARIABLE: &str = "GOOGLE_APPLICATION_CREDENTIALS";

/// The service account `GOOGLE_APPLICATION_CREDENTIALS` names, when it names a service-account key
/// file; `None` for the rest of the chain (unset, or another kind of credentials, which gcp_auth
/// judges).
pub fn service_account_from_environment() -> Result<Option<ServiceAccount>, AuthError> {
    let Some(path) = std::env::var_os(KEY_FILE_VARIABLE).filter(|p| !p.is_empty()) else {
        return Ok(None);
    };
    let path = PathBuf::from(path);
    let object = read_json_object(&path)?;
    match object.get("type").and_then(|t| t.as_str()) {
        None | Some("service_account") => service_account(&path, &object).map(Some),
        Some(_) => Ok(None),
    }
}

/// Aborts gcp_auth's task when the fetch ends or is dropped at its time limit.
struct AbortOnDrop(tokio::task::AbortHandle);

impl Drop for AbortOnDrop {
    fn drop(&mut self) {
        self.0.abort();
    }
}

/// A token of `scope` from gcp_auth's chain, through a provider made now (so gcp_auth's own
/// cache cannot hand back the nearly expired token being replaced).
pub async fn from_chain(scope: &'static str) -> Result<Issued, AuthError> {
    let task = tokio::spawn(async move {
        let provider: Arc<dyn TokenProvider> = gcp_auth::provider()
            .await
            .map_err(|e| AuthError::Provider(describe(&e)))?;
        let token = provider
            .token(&[scope])
            .await
            .map_err(|e| token_error(&e))?;
        let expires_at: SystemTime = token.expires_at().into();
        let expires_in = expires_at
            .duration_since(SystemTime::now())
            .unwrap_or(Duration::ZERO)
            .min(LONGEST_TOKEN_LIFE);
        Ok(Issued {
            access_token: token.as_str().to_owned(),
            expires_in,
        })
    });
    let _abort = AbortOnDrop(task.abort_handle());
    match task.await {
        Ok(issued) => issued,
        Err(e) if e.is_panic() => Err(AuthError::Provider(
            "gcp_auth failed on what the token endpoint sent (it panicked)".to_owned(),
        )),
        Err(_) => Err(AuthError::Provider(
            "the token fetch was cancelled".to_owned(),
        )),
    }
}

/// Where the chain's tokens come from, in words.
pub const ENDPOINT: &str = "of the application-default credentials";

/// Maps an error from fetching a token. gcp_auth reports a refusal without its HTTP status (it
/// logs the status and body through `tracing`), so the chain is what the error can name.
fn token_error(e: &gcp_auth::Error) -> AuthError {
    let endpoint = ENDPOINT.to_owned();
    match e {
        gcp_auth::Error::Str("token request failed") => AuthError::Refused {
            endpoint,
            status: "an HTTP error status".to_owned(),
        },
        gcp_auth::Error::Json(..) => AuthError::BadTokenResponse { endpoint },
        gcp_auth::Error::Other("HTTP request failed", source) => AuthError::Unreachable {
            endpoint,
            message: error_chain(source.as_ref()),
        },
        gcp_auth::Error::Http(_, source) => AuthError::Unreachable {
            endpoint,
            message: error_chain(source),
        },
        other => AuthError::Provider(describe(other)),
    }
}

/// A gcp_auth error in words, leaving out JSON parser messages (they can quote secrets).
fn describe(e: &gcp_auth::Error) -> String {
    match e {
        gcp_auth::Error::NoAuthMethod(gcloud, metadata, user) => format!(
            "no credentials found (gcloud: {}; metadata server: {}; application-default \
             credentials file: {})",
            describe(gcloud),
            describe(metadata),
            describe(user)
        ),
        gcp_auth::Error::Http(what, source) => format!("{what}: {}", error_chain(source)),
        gcp_auth::Error::Io(what, source) => format!("{what}: {source}"),
        gcp_auth::Error::Json(what, _) => format!("{what}: not the expected JSON"),
        gcp_auth::Error::Other(what @ "HTTP request failed", source) => {
            format!("{what}: {}", error_chain(source.as_ref()))
        }
        // Other sources include the key parser's, which can quote lines of a key file.
        gcp_auth::Error::Other(what, _) => (*what).to_owned(),
        gcp_auth::Error::Str(what) => (*what).to_owned(),
    }
}
