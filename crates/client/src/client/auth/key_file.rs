//! A service-account key file: read with a bound (a key file is a few KiB; `/dev/zero` was read
//! to 3.18 GB before failing), refused when it is not a regular file (a FIFO blocked forever), and
//! checked (JSON, the fields, a PKCS#8 RSA key, a `token_uri` that is `https://` or goes to a
//! loopback host, see [`in_clear`](super::in_clear)) without ever quoting it.

use std::fmt;
use std::fs::File;
use std::io::Read;
use std::os::unix::fs::OpenOptionsExt;
use std::path::{Path, PathBuf};

use ring::signature::RsaKeyPair;
use tokio_rustls::rustls::pki_types::PrivatePkcs8KeyDer;
use tokio_rustls::rustls::pki_types::pem::PemObject;

use super::error::AuthError;
use super::in_clear::{Carriage, carriage};

/// The most of a credentials file read: a service-account key is about 2.4 KiB.
pub const MAX_KEY_FILE_BYTES: u64 = 1 << 20;

/// A service account's key, read from its JSON key file: secret, so its `Debug` shows nothing of
/// the key.
pub struct ServiceAccount {
    /// The file it came from.
    pub path: PathBuf,
    /// `client_email`: the account (the JWT's issuer).
    pub client_email: String,
    /// `token_uri`: where tokens are asked for (the JWT's audience).
    pub token_uri: String,
    /// `private_key_id`, named in the JWT's header when present.
    pub key_id: Option<String>,
    /// `private_key`, parsed.
    pub key: RsaKeyPair,
}

impl fmt::Debug for ServiceAccount {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("ServiceAccount")
            .field("path", &self.path)
            .field("client_email", &self.client_email)
            .field("token_uri", &self.token_uri)
            .finish_non_exhaustive()
    }
}

/// The JSON object of the credentials file at `path`, read with a bound; a file that is not a
/// regular file, too large, not UTF-8 or not a JSON object is refused in words that never quote it.
pub fn read_json_object(
    path: &Path,
) -> Result<serde_json::Map<String, serde_json::Value>, AuthError> {
    let text = read_bounded(path)?;
    let malformed = |reason: String| AuthError::Malformed {
        path: path.to_owned(),
        reason,
    };
    let value: serde_json::Value = serde_json::from_str(&text).map_err(|e| {
        malformed(format!(
            "it is not JSON (error at line {}, column {})",
            e.line(),
            e.column()
        ))
    })?;
    match value {
        serde_json::Value::Object(object) => Ok(object),
        _ => Err(malformed("it is not a JSON object".to_owned())),
    }
}

/// Reads and checks the service-account key file at `path`.
pub fn read_service_account(path: &Path) -> Result<ServiceAccount, AuthError> {
    let object = read_json_object(path)?;
    service_account(path, &object)
}

/// The service account a key file's JSON object describes.
pub fn service_account(
    path: &Path,
    object: &serde_json::Map<String, serde_json::Value>,
) -> Result<ServiceAccount, AuthError> {
    let malformed = |reason: &str| AuthError::Malformed {
        path: path.to_owned(),
        reason: reason.to_owned(),
    };
    match object.get("type").and_then(|t| t.as_str()) {
        None | Some("service_account") => {}
        Some("authorized_user") => {
            return Err(malformed(
                "it holds gcloud user credentials (type \"authorized_user\"); use \
                 application-default credentials for those",
            ));
        }
        Some(_) => return Err(malformed("its \"type\" is not \"service_account\"")),
    }
    let field = |name: &str| {
        object
            .get(name)
            .and_then(|v| v.as_str())
            .map(str::to_owned)
            .ok_or_else(|| AuthError::Malformed {
                path: path.to_owned(),
                reason: format!("its \"{name}\" field is missing or not a string"),
            })
    };
    let private_key = field("private_key")?;
    let client_email = field("client_email")?;
    let token_uri = field("token_uri")?;
    let key = parse_key(&private_key)
        .ok_or_else(|| malformed("its \"private_key\" is not a PEM PKCS#8 RSA private key"))?;
    match carriage(&token_uri) {
        Carriage::Tls | Carriage::Loopback => {}
        Carriage::Clear => {
            return Err(AuthError::TokenUriInClear {
                path: path.to_owned(),
                token_uri,
            });
        }
        Carriage::NotHttp => {
            return Err(malformed(
                "its \"token_uri\" is not an http:// or https:// URI with a host",
            ));
        }
    }
    Ok(ServiceAccount {
        path: path.to_owned(),
        client_email,
        token_uri,
        key_id: object
            .get("private_key_id")
            .and_then(|v| v.as_str())
            .map(str::to_owned),
        key,
    })
}

/// A PEM `PRIVATE KEY` (PKCS#8) holding an RSA key that `ring` can sign with.
fn parse_key(pem: &str) -> Option<RsaKeyPair> {
    let der = PrivatePkcs8KeyDer::from_pem_slice(pem.as_bytes()).ok()?;
    RsaKeyPair::from_pkcs8(der.secret_pkcs8_der()).ok()
}

/// The file at `path` as text: opened without blocking (a FIFO with no writer would block the
/// open itself), refused unless it is a regular file, and read up to [`MAX_KEY_FILE_BYTES`].
fn read_bounded(path: &Path) -> Result<String, AuthError> {
    let read_error = |source: std::io::Error| match source.kind() {
        std::io::ErrorKind::NotFound => AuthError::MissingFile {
            path: path.to_owned(),
        },
        _ => AuthError::ReadFile {
            path: path.to_owned(),
            source,
        },
    };
    let file = File::options()
        .read(true)
        .custom_flags(libc::O_NONBLOCK)
        .open(path)
        .map_err(read_error)?;
    let kind = file.metadata().map_err(read_error)?.file_type();
    if !kind.is_file() {
        return Err(AuthError::NotAFile {
            path: path.to_owned(),
            kind: crate::files::describe(kind),
        });
    }
    let mut bytes = Vec::new();
    file.take(MAX_KEY_FILE_BYTES + 1)
        .read_to_end(&mut bytes)
        .map_err(read_error)?;
    if bytes.len() as u64 > MAX_KEY_FILE_BYTES {
        return Err(AuthError::TooLarge {
            path: path.to_owned(),
            limit: MAX_KEY_FILE_BYTES,
        });
    }
    String::from_utf8(bytes).map_err(|_| AuthError::Malformed {
        path: path.to_owned(),
        reason: "it is not UTF-8 text".to_owned(),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn special_files_are_refused_without_blocking_or_reading() {
        let dir = std::env::temp_dir().join(format!("spanprof-key-file-{}", std::process::id()));
        std::fs::create_dir_all(&dir).expect("a directory");
        let fifo = dir.join("fifo");
        let _ = std::fs::remove_file(&fifo);
        let status = std::process::Command::new("mkfifo")
            .arg(&fifo)
            .status()
            .expect("mkfifo runs");
        assert!(status.success());
        for (path, kind) in [
            (Path::new("/dev/zero"), "a character device"),
            (fifo.as_path(), "a FIFO"),
            (dir.as_path(), "a directory"),
        ] {
            match read_bounded(path) {
                Err(AuthError::NotAFile { kind: found, .. }) => assert_eq!(found, kind),
                other => panic!("{}: {other:?}", path.display()),
            }
        }
        let big = dir.join("big.json");
        std::fs::write(&big, vec![b' '; MAX_KEY_FILE_BYTES as usize + 1]).expect("written");
        assert!(matches!(
            read_bounded(&big),
            Err(AuthError::TooLarge { .. })
        ));
        let _ = std::fs::remove_dir_all(&dir);
    }
}
