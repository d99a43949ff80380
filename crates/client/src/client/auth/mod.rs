//! Access tokens for Cloud Spanner: from a service-account key file (`--credentials`, or one that
//! `GOOGLE_APPLICATION_CREDENTIALS` names), asked for by spanprof itself with every byte bounded
//! ([`exchange`]), or from the rest of the application-default chain through gcp_auth ([`adc`]);
//! cached, and renewed shortly before they expire.
//!
//! Every fetch, the first and each renewal, is held to the call limit and its error names the
//! step (a renewal that was never answered hung `profile --cloud` forever). A token is reused
//! until shortly before it expires: the margin is five minutes or a quarter of its life, whichever
//! is shorter, so a token that lives 300 s or less is not fetched again for every call. A token
//! said to live less than [`SHORTEST_TOKEN_LIFE`] (`expires_in: 0`, or a thousandth of a second)
//! is taken to live that long, and reused for three quarters of it: such an answer is a mistake
//! or an attack, and believing it fetched a token for every call. Refusing it would not have
//! helped (each call would then ask again and fail); if the token really had expired, Spanner
//! answers `UNAUTHENTICATED`, which stops a run as any query that cannot succeed does.
//!
//! Secrets never reach `Display` or `Debug`: not the token, not the key file's contents. Errors
//! about a key file name the file and say what is wrong with it in our own words, because the
//! JSON parser's messages can quote the file (and a token endpoint's answer can hold a token).

pub mod adc;
pub mod error;
pub mod exchange;
pub mod http;
pub mod in_clear;
pub mod jwt;
pub mod key_file;

use std::fmt;
use std::path::PathBuf;
use std::time::{Duration, Instant};

use tokio::sync::Mutex;
use tonic::metadata::{Ascii, MetadataValue};

pub use error::AuthError;
pub use exchange::{MAX_TOKEN_BYTES, MAX_TOKEN_RESPONSE_BYTES};
pub use key_file::MAX_KEY_FILE_BYTES;

use exchange::Issued;
use key_file::ServiceAccount;

/// The OAuth scope for reading and writing Spanner data.
pub const SPANNER_DATA_SCOPE: &str = "https://www.googleapis.com/auth/spanner.data";

/// The most a token is renewed ahead of its expiry (less for a short-lived token: a quarter of
/// its life).
pub const REFRESH_MARGIN: Duration = Duration::from_secs(5 * 60);

/// The shortest lifetime believed: a token said to live less (`expires_in: 0`) is taken to live
/// this long, so it is fetched at most every 0.75 s rather than for every call.
pub const SHORTEST_TOKEN_LIFE: Duration = Duration::from_secs(1);

/// How long a fetch may take when no limit is given: the default call limit.
pub const DEFAULT_FETCH_LIMIT: Duration = Duration::from_secs(10);

/// Where the credentials come from.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub enum Credentials {
    /// The application-default chain: `GOOGLE_APPLICATION_CREDENTIALS`, gcloud's
    /// application-default credentials, the metadata server, then `gcloud auth print-access-token`.
    #[default]
    ApplicationDefault,
    /// A service-account JSON key file.
    ServiceAccountFile(PathBuf),
}

/// Where tokens are fetched from.
enum Source {
    /// A service account's key: tokens asked for here, bounded.
    Account(Box<ServiceAccount>),
    /// The rest of the application-default chain, through gcp_auth.
    Chain,
}

/// The `Bearer` header and when its token was asked for and expires.
struct Cached {
    authorization: MetadataValue<Ascii>,
    asked: Instant,
    expires: Instant,
}

impl Cached {
    /// A token asked for at `asked` whose issuer says it lives `life`, taken to live at least
    /// [`SHORTEST_TOKEN_LIFE`].
    fn new(authorization: MetadataValue<Ascii>, asked: Instant, life: Duration) -> Cached {
        Cached {
            authorization,
            asked,
            expires: asked + life.max(SHORTEST_TOKEN_LIFE),
        }
    }

    fn remaining(&self) -> Duration {
        self.expires.saturating_duration_since(Instant::now())
    }

    /// Renewed this long before it expires: [`REFRESH_MARGIN`], or a quarter of its life when
    /// that is shorter.
    fn margin(&self) -> Duration {
        REFRESH_MARGIN.min(self.expires.saturating_duration_since(self.asked) / 4)
    }

    /// Whether it is still used as it is at `now`.
    fn fresh_at(&self, now: Instant) -> bool {
        self.expires.saturating_duration_since(now) > self.margin()
    }
}

#[derive(Default)]
struct State {
    cached: Option<Cached>,
    fetches: u64,
}

/// Hands out `authorization` headers for Cloud Spanner, renewing the token shortly before it
/// expires (see [`REFRESH_MARGIN`]) or when asked, each fetch within its time limit.
pub struct TokenSource {
    credentials: Credentials,
    source: Source,
    limit: Duration,
    state: Mutex<State>,
}

impl fmt::Debug for TokenSource {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let mut s = f.debug_struct("TokenSource");
        s.field("credentials", &self.credentials);
        s.field("token_uri", &self.endpoint());
        s.field("limit", &self.limit);
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
    /// Prepares a token source whose fetches take at most [`DEFAULT_FETCH_LIMIT`]. A service-account
    /// file (given, or named by `GOOGLE_APPLICATION_CREDENTIALS`) is read and checked now (not a
    /// regular file, too large, not JSON, missing fields, a key that is not PKCS#8 RSA); no token
    /// is fetched yet.
    pub fn new(credentials: Credentials) -> Result<Self, AuthError> {
        let source = match &credentials {
            Credentials::ApplicationDefault => match adc::service_account_from_environment()? {
                Some(account) => Source::Account(Box::new(account)),
                None => Source::Chain,
            },
            Credentials::ServiceAccountFile(path) => {
                Source::Account(Box::new(key_file::read_service_account(path)?))
            }
        };
        Ok(TokenSource {
            credentials,
            source,
            limit: DEFAULT_FETCH_LIMIT,
            state: Mutex::new(State::default()),
        })
    }

    /// This source with every fetch held to `limit` (the call limit).
    pub fn within(mut self, limit: Duration) -> Self {
        self.limit = limit;
        self
    }

    /// The credentials this source uses.
    pub fn credentials(&self) -> &Credentials {
        &self.credentials
    }

    /// `Bearer <token>`, marked sensitive, from the cache while the token is fresh (more than its
    /// margin left); otherwise a new token is fetched first, within the limit.
    pub async fn authorization(&self) -> Result<MetadataValue<Ascii>, AuthError> {
        let mut state = self.state.lock().await;
        if let Some(cached) = &state.cached
            && cached.fresh_at(Instant::now())
        {
            return Ok(cached.authorization.clone());
        }
        self.fetch(&mut state).await
    }

    /// Fetches a new token now, whatever the cache holds (for example after the server
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

    /// A new token within the limit, checked and cached.
    async fn fetch(&self, state: &mut State) -> Result<MetadataValue<Ascii>, AuthError> {
        let asked = Instant::now();
        let issued = tokio::time::timeout(self.limit, self.issue())
            .await
            .map_err(|_| AuthError::TimedOut {
                endpoint: self.endpoint().to_owned(),
                after: self.limit,
            })??;
        if issued.access_token.len() > MAX_TOKEN_BYTES {
            return Err(AuthError::TokenTooLong {
                endpoint: self.endpoint().to_owned(),
                length: issued.access_token.len(),
                limit: MAX_TOKEN_BYTES,
            });
        }
        let mut authorization = MetadataValue::try_from(format!("Bearer {}", issued.access_token))
            .map_err(|_| AuthError::InvalidToken)?;
        authorization.set_sensitive(true);
        state.cached = Some(Cached::new(authorization.clone(), asked, issued.expires_in));
        state.fetches += 1;
        Ok(authorization)
    }

    async fn issue(&self) -> Result<Issued, AuthError> {
        match &self.source {
            Source::Account(account) => exchange::exchange(account, SPANNER_DATA_SCOPE).await,
            Source::Chain => adc::from_chain(SPANNER_DATA_SCOPE).await,
        }
    }

    /// Where tokens come from: the key file's `token_uri`, or a description of the
    /// application-default credentials.
    pub fn endpoint(&self) -> &str {
        match &self.source {
            Source::Account(account) => &account.token_uri,
            Source::Chain => adc::ENDPOINT,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Whether a token said to live `life` is still used `after` it was asked for.
    fn fresh_after(life: Duration, after: Duration) -> bool {
        let asked = Instant::now();
        let cached = Cached::new(MetadataValue::from_static("Bearer t"), asked, life);
        cached.fresh_at(asked + after)
    }

    /// Whether a token that lives `life` is still used with `left` of it to go.
    fn fresh(life: Duration, left: Duration) -> bool {
        fresh_after(life, life.saturating_sub(left))
    }

    /// A token of 300 s or less was once renewed before every call (the margin was five
    /// minutes whatever the token's life).
    #[test]
    fn a_token_is_renewed_within_a_quarter_of_its_life_or_five_minutes() {
        let (s, ms) = (Duration::from_secs, Duration::from_millis);
        assert!(fresh(s(300), s(200)));
        assert!(!fresh(s(300), s(70)), "a quarter of 300 s is 75 s");
        assert!(fresh(s(3600), s(301)));
        assert!(!fresh(s(3600), s(299)), "five minutes at most");
        assert!(fresh(s(1), ms(900)));
        assert!(!fresh(s(1), ms(200)));
    }

    /// A token said to live 0 s (or a thousandth of one) was fetched again for every call: it
    /// is taken to live a second, so it is reused for 0.75 s.
    #[test]
    fn a_token_said_to_be_expired_is_reused_for_three_quarters_of_a_second() {
        let ms = Duration::from_millis;
        for life in [ms(0), ms(1), ms(999)] {
            assert!(fresh_after(life, ms(0)), "{life:?}: fresh when issued");
            assert!(fresh_after(life, ms(700)), "{life:?}: fresh at 0.7 s");
            assert!(!fresh_after(life, ms(800)), "{life:?}: renewed by 0.8 s");
        }
    }
}
