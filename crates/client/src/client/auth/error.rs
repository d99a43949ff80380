//! `AuthError`: why no token could be had, in words that never quote a key file or a token
//! endpoint's answer (either can hold a secret).

use std::path::PathBuf;
use std::time::Duration;

use super::in_clear::LOOPBACK_HOSTS;
use crate::client::timeouts::Readable;

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
    /// The credentials path is not a regular file (a FIFO, a device such as /dev/zero, a
    /// directory): reading it could block forever or never end.
    #[error(
        "the credentials file {} is {kind}, not a regular file: give the path of a \
         service-account JSON key",
        path.display()
    )]
    NotAFile {
        /// The file asked for.
        path: PathBuf,
        /// What it is instead ("a FIFO", "a character device", ...).
        kind: &'static str,
    },
    /// The key file is larger than any key file.
    #[error("the credentials file {} is larger than {limit} bytes: it is not a key file", path.display())]
    TooLarge {
        /// The file asked for.
        path: PathBuf,
        /// The most read.
        limit: u64,
    },
    /// The file is not a service-account JSON key.
    #[error("{} is not a service-account JSON key file: {reason}", path.display())]
    Malformed {
        /// The file asked for.
        path: PathBuf,
        /// What is wrong, in words that never quote the file.
        reason: String,
    },
    /// The key file's `token_uri` is `http://` to a host that is not loopback: the signed
    /// assertion (good for an hour's tokens) would cross the network in clear.
    #[error(
        "the credentials file {} has an http:// \"token_uri\" ({token_uri}) to a host that is \
         not loopback: the signed assertion would cross the network in clear. Its token_uri must \
         be https://, except to a loopback host ({LOOPBACK_HOSTS})",
        path.display()
    )]
    TokenUriInClear {
        /// The file asked for.
        path: PathBuf,
        /// Its `token_uri`.
        token_uri: String,
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
        "the token endpoint {endpoint} refused to issue a token ({status}; check the key is \
         current and the account exists)"
    )]
    Refused {
        /// The endpoint (`token_uri`), or a description of it.
        endpoint: String,
        /// The HTTP status, when known ("HTTP 401"), else "an HTTP error status".
        status: String,
    },
    /// The token endpoint answered, but not with an access token.
    #[error("the token endpoint {endpoint} answered with something that is not an access token")]
    BadTokenResponse {
        /// The endpoint (`token_uri`), or a description of it.
        endpoint: String,
    },
    /// The token endpoint's answer is larger than any token response.
    #[error(
        "the token endpoint {endpoint} answered with more than {limit} bytes: not a token \
         response (nothing past the limit was read)"
    )]
    ResponseTooLarge {
        /// The endpoint (`token_uri`).
        endpoint: String,
        /// The most read.
        limit: usize,
    },
    /// The access token is longer than any access token.
    #[error(
        "the token endpoint {endpoint} issued an access token of {length} bytes, more than \
         {limit}: it is not sent"
    )]
    TokenTooLong {
        /// The endpoint (`token_uri`).
        endpoint: String,
        /// Its length.
        length: usize,
        /// The longest taken.
        limit: usize,
    },
    /// The token has characters a header cannot carry.
    #[error("the access token cannot be sent as a header")]
    InvalidToken,
    /// The token (first or renewed) did not come within the call limit.
    #[error(
        "{endpoint}: fetching an access token (token) did not finish within {}",
        Readable(*after)
    )]
    TimedOut {
        /// The endpoint (`token_uri`), or a description of it.
        endpoint: String,
        /// The limit.
        after: Duration,
    },
}
