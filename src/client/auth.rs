//! Access tokens for Cloud Spanner, through `gcp_auth`: application-default credentials or a
//! service-account key file, cached and refreshed before they expire.
//!
//! Secrets never reach `Display` or `Debug`: not the token, not the key file's contents. Errors
//! about a key file name the file and say what is wrong with it in our own words, because the
//! JSON parser's messages can quote the file (and a token endpoint's answer can hold a token).

use std::fmt;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::{Duration, SystemTime};

use gcp_auth::{CustomServiceAccount, TokenProvider};
use tokio::sync::Mutex;
use tonic::metadata::{Ascii, MetadataValue};

use super::error_chain;

/// The OAuth scope for reading and writing Spanner data.
pub const SPANNER_DATA_SCOPE: &str = "https://www.googleapis.com/auth/spanner.data";

/// A token with less than this left is refreshed before it is used.
pub const REFRESH_MARGIN: Duration = Duration::from_secs(5 * 60);

/// Where the credentials come from.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub enum Credentials {
    /// gcp_auth's chain: `GOOGLE_APPLICATION_CREDENTIALS`, gcloud's application-default
    /// credentials, the metadata server, then `gcloud auth print-access-token`.
    #[default]
    ApplicationDefault,
    /// A service-account JSON key file.
    ServiceAccountFile(PathBuf),
}

/// Why no token could be had.
#[derive(Debug, thiserror::Error)]
pub enum AuthError {
    /// The key file does not exist.
    #[error("the credentials file {} does not exist", path.display())]
    MissingFile {
        /// The file asked for.
        path: PathBuf,
    },
    /// The key file exists but could not be read.
    #[error("cannot read the credentials file {}: {source}", path.display())]
    ReadFile {
        /// The file asked for.
        path: PathBuf,
        /// What the OS said.
        source: std::io::Error,
    },
    /// The file is not a service-account JSON key.
    #[error("{} is not a service-account JSON key file: {reason}", path.display())]
    Malformed {
        /// The file asked for.
        path: PathBuf,
        /// What is wrong, in words that never quote the file.
        reason: String,
    },
    /// No credentials were found, or the provider could not be set up.
    #[error("no usable Google credentials: {0}")]
    Provider(String),
    /// The token endpoint could not be reached.
    #[error("cannot reach the token endpoint {endpoint}: {message}")]
    Unreachable {
        /// The endpoint (`token_uri`), or a description of it.
        endpoint: String,
        /// The transport's error.
        message: String,
    },
    /// The token endpoint answered with an error status.
    #[error(
        "the token endpoint {endpoint} refused to issue a token (an HTTP error status; \
         check the key is current and the account exists)"
    )]
    Refused {
        /// The endpoint (`token_uri`), or a description of it.
        endpoint: String,
    },
    /// The token endpoint answered, but not with an access token.
    #[error("the token endpoint {endpoint} answered with something that is not an access token")]
    BadTokenResponse {
        /// The endpoint (`token_uri`), or a description of it.
        endpoint: String,
    },
    /// The token has characters a header cannot carry.
    #[error("the access token cannot be sent as a header")]
    InvalidToken,
}

/// A service-account key file's contents: secret, so its `Debug` shows nothing of it.
struct KeyFile {
    path: PathBuf,
    token_uri: String,
    json: String,
}

impl fmt::Debug for KeyFile {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("KeyFile")
            .field("path", &self.path)
            .field("token_uri", &self.token_uri)
            .finish_non_exhaustive()
    }
}

/// The `Bearer` header and when its token expires.
struct Cached {
    authorization: MetadataValue<Ascii>,
    expires_at: SystemTime,
}

impl Cached {
    fn remaining(&self) -> Duration {
        self.expires_at
            .duration_since(SystemTime::now())
            .unwrap_or(Duration::ZERO)
    }
}

#[derive(Default)]
struct State {
    /// A provider made up front (to check a key file early), used for the first token only; later
    /// refreshes make a fresh one so gcp_auth's own cache cannot hand back a nearly expired token.
    provider: Option<Arc<dyn TokenProvider>>,
    cached: Option<Cached>,
    fetches: u64,
}

/// Hands out `authorization` headers for Cloud Spanner, refreshing the token when less than
/// [`REFRESH_MARGIN`] remains, or when asked.
pub struct TokenSource {
    credentials: Credentials,
    key: Option<KeyFile>,
    state: Mutex<State>,
}

impl fmt::Debug for TokenSource {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let mut s = f.debug_struct("TokenSource");
        s.field("credentials", &self.credentials);
        if let Some(key) = &self.key {
            s.field("token_uri", &key.token_uri);
        }
        match self.state.try_lock() {
            Ok(state) => s
                .field("token", &state.cached.as_ref().map(|_| "<redacted>"))
                .field(
                    "expires_in_s",
                    &state.cached.as_ref().map(|c| c.remaining().as_secs()),
                ),
            Err(_) => s.field("token", &"<busy>"),
        };
        s.finish()
    }
}

impl TokenSource {
    /// Prepares a token source. A service-account file is read and checked now (missing file,
    /// not JSON, missing fields, a key that is not PKCS#8 RSA); no token is fetched yet.
    pub fn new(credentials: Credentials) -> Result<Self, AuthError> {
        let (key, provider) = match &credentials {
            Credentials::ApplicationDefault => (None, None),
            Credentials::ServiceAccountFile(path) => {
                let key = read_key_file(path)?;
                let provider = service_account(&key)?;
                (Some(key), Some(provider))
            }
        };
        Ok(TokenSource {
            credentials,
            key,
            state: Mutex::new(State {
                provider,
                ..State::default()
            }),
        })
    }

    /// The credentials this source uses.
    pub fn credentials(&self) -> &Credentials {
        &self.credentials
    }

    /// `Bearer <token>`, marked sensitive, from the cache while more than [`REFRESH_MARGIN`] of
    /// the token's life remains; otherwise a fresh token is fetched first.
    pub async fn authorization(&self) -> Result<MetadataValue<Ascii>, AuthError> {
        let mut state = self.state.lock().await;
        if let Some(cached) = &state.cached
            && cached.remaining() > REFRESH_MARGIN
        {
            return Ok(cached.authorization.clone());
        }
        self.fetch(&mut state).await
    }

    /// Fetches a fresh token now, whatever the cache holds (for example after the server
    /// answered `UNAUTHENTICATED`), and returns its header.
    pub async fn refresh(&self) -> Result<MetadataValue<Ascii>, AuthError> {
        let mut state = self.state.lock().await;
        self.fetch(&mut state).await
    }

    /// How many tokens this source has fetched so far.
    pub async fn fetches(&self) -> u64 {
        self.state.lock().await.fetches
    }

    /// How long the cached token has left, if there is one.
    pub async fn expires_in(&self) -> Option<Duration> {
        self.state
            .lock()
            .await
            .cached
            .as_ref()
            .map(Cached::remaining)
    }

    async fn fetch(&self, state: &mut State) -> Result<MetadataValue<Ascii>, AuthError> {
        let provider = match state.provider.take() {
            Some(provider) => provider,
            None => self.new_provider().await?,
        };
        let endpoint = self.endpoint();
        let token = provider
            .token(&[SPANNER_DATA_SCOPE])
            .await
            .map_err(|e| token_error(&e, endpoint))?;
        let mut authorization = MetadataValue::try_from(format!("Bearer {}", token.as_str()))
            .map_err(|_| AuthError::InvalidToken)?;
        authorization.set_sensitive(true);
        state.cached = Some(Cached {
            authorization: authorization.clone(),
            expires_at: token.expires_at().into(),
        });
        state.fetches += 1;
        Ok(authorization)
    }

    async fn new_provider(&self) -> Result<Arc<dyn TokenProvider>, AuthError> {
        match &self.key {
            Some(key) => service_account(key),
            None => gcp_auth::provider()
                .await
                .map_err(|e| AuthError::Provider(describe(&e))),
        }
    }

    /// Where tokens come from: the key file's `token_uri`, or a description of the
    /// application-default credentials.
    pub fn endpoint(&self) -> &str {
        match &self.key {
            Some(key) => &key.token_uri,
            None => "of the application-default credentials",
        }
    }
}

/// Reads and checks a service-account key file, never quoting it in an error.
fn read_key_file(path: &Path) -> Result<KeyFile, AuthError> {
    let json = std::fs::read_to_string(path).map_err(|source| match source.kind() {
        std::io::ErrorKind::NotFound => AuthError::MissingFile {
            path: path.to_owned(),
        },
        std::io::ErrorKind::InvalidData => AuthError::Malformed {
            path: path.to_owned(),
            reason: "it is not UTF-8 text".to_owned(),
        },
        _ => AuthError::ReadFile {
            path: path.to_owned(),
            source,
        },
    })?;
    let malformed = |reason: String| AuthError::Malformed {
        path: path.to_owned(),
        reason,
    };
    let value: serde_json::Value = serde_json::from_str(&json).map_err(|e| {
        malformed(format!(
            "it is not JSON (error at line {}, column {})",
            e.line(),
            e.column()
        ))
    })?;
    let Some(object) = value.as_object() else {
        return Err(malformed("it is not a JSON object".to_owned()));
    };
    match object.get("type").and_then(|t| t.as_str()) {
        None | Some("service_account") => {}
        Some("authorized_user") => {
            return Err(malformed(
                "it holds gcloud user credentials (type \"authorized_user\"); use \
                 application-default credentials for those"
                    .to_owned(),
            ));
        }
        Some(_) => {
            return Err(malformed(
                "its \"type\" is not \"service_account\"".to_owned(),
            ));
        }
    }
    for field in ["private_key", "client_email", "token_uri"] {
        if !object.get(field).is_some_and(|v| v.is_string()) {
            return Err(malformed(format!(
                "its \"{field}\" field is missing or not a string"
            )));
        }
    }
    let token_uri = object
        .get("token_uri")
        .and_then(|v| v.as_str())
        .unwrap_or_default()
        .to_owned();
    Ok(KeyFile {
        path: path.to_owned(),
        token_uri,
        json,
    })
}

fn service_account(key: &KeyFile) -> Result<Arc<dyn TokenProvider>, AuthError> {
    match CustomServiceAccount::from_json(&key.json) {
        Ok(account) => Ok(Arc::new(account)),
        // The key's parser can quote lines of the file: say what is wrong in our own words.
        Err(
            gcp_auth::Error::Other("failed to parse PKCS#8 RSA key pair", _)
            | gcp_auth::Error::Str("invalid private key in credentials"),
        ) => Err(AuthError::Malformed {
            path: key.path.clone(),
            reason: "its \"private_key\" is not a PEM PKCS#8 RSA private key".to_owned(),
        }),
        Err(gcp_auth::Error::Json(..)) => Err(AuthError::Malformed {
            path: key.path.clone(),
            reason: "its fields do not have the expected types".to_owned(),
        }),
        Err(e) => Err(AuthError::Provider(describe(&e))),
    }
}

/// Maps an error from fetching a token. gcp_auth reports a refusal without its HTTP status (it
/// logs the status and body through `tracing`), so the endpoint is what the error can name.
fn token_error(e: &gcp_auth::Error, endpoint: &str) -> AuthError {
    let endpoint = endpoint.to_owned();
    match e {
        gcp_auth::Error::Str("token request failed") => AuthError::Refused { endpoint },
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
