//! The assertion a service account signs to ask for a token (the JWT-bearer grant, RFC 7523, as
//! Google's OAuth 2.0 server takes it): a JSON Web Token signed with RS256 (RSASSA-PKCS1-v1_5 over
//! SHA-256, RFC 7518 section 3.3), its parts in base64url without padding (RFC 7515).

use base64::Engine as _;
use base64::engine::general_purpose::URL_SAFE_NO_PAD;
use ring::rand::SystemRandom;
use ring::signature::RSA_PKCS1_SHA256;

use super::error::AuthError;
use super::key_file::ServiceAccount;

/// How long an assertion is valid: Google's limit, one hour.
pub const ASSERTION_LIFE_SECS: u64 = 3600;

/// The signed assertion asking `account`'s `token_uri` for a token of `scope`, issued at
/// `now_unix` (seconds since the epoch).
pub fn assertion(
    account: &ServiceAccount,
    scope: &str,
    now_unix: u64,
) -> Result<String, AuthError> {
    let mut header = serde_json::json!({"alg": "RS256", "typ": "JWT"});
    if let Some(kid) = &account.key_id {
        header["kid"] = serde_json::Value::String(kid.clone());
    }
    let claims = serde_json::json!({
        "iss": account.client_email,
        "scope": scope,
        "aud": account.token_uri,
        "iat": now_unix,
        "exp": now_unix + ASSERTION_LIFE_SECS,
    });
    let mut signed = format!(
        "{}.{}",
        URL_SAFE_NO_PAD.encode(header.to_string()),
        URL_SAFE_NO_PAD.encode(claims.to_string())
    );
    let mut signature = vec![0; account.key.public().modulus_len()];
    account
        .key
        .sign(
            &RSA_PKCS1_SHA256,
            &SystemRandom::new(),
            signed.as_bytes(),
            &mut signature,
        )
        .map_err(|_| AuthError::Provider("the service account's key could not sign".to_owned()))?;
    signed.push('.');
    signed.push_str(&URL_SAFE_NO_PAD.encode(signature));
    Ok(signed)
}

#[cfg(test)]
mod tests {
    use super::*;
    use ring::signature::{RSA_PKCS1_2048_8192_SHA256, UnparsedPublicKey};
    use rsa::pkcs8::EncodePrivateKey;

    fn account() -> ServiceAccount {
        let key = rsa::RsaPrivateKey::new(&mut rsa::rand_core::OsRng, 2048).expect("a key");
        let der = key.to_pkcs8_der().expect("PKCS#8");
        ServiceAccount {
            path: "key.json".into(),
            client_email: "a@b.iam.gserviceaccount.com".into(),
            token_uri: "https://oauth2.googleapis.com/token".into(),
            key_id: Some("k1".into()),
            key: ring::signature::RsaKeyPair::from_pkcs8(der.as_bytes()).expect("ring reads it"),
        }
    }

    #[test]
    fn the_assertion_carries_the_claims_and_verifies_with_the_public_key() {
        let account = account();
        let jwt = assertion(
            &account,
            "https://www.googleapis.com/auth/spanner.data",
            1_000,
        )
        .expect("signed");
        let parts: Vec<&str> = jwt.split('.').collect();
        assert_eq!(parts.len(), 3, "{jwt}");
        let json = |part: &str| -> serde_json::Value {
            serde_json::from_slice(&URL_SAFE_NO_PAD.decode(part).expect("base64url")).expect("JSON")
        };
        assert_eq!(
            json(parts[0]),
            serde_json::json!({"alg": "RS256", "typ": "JWT", "kid": "k1"})
        );
        let claims = json(parts[1]);
        assert_eq!(claims["iss"], "a@b.iam.gserviceaccount.com");
        assert_eq!(claims["aud"], "https://oauth2.googleapis.com/token");
        assert_eq!(
            claims["scope"],
            "https://www.googleapis.com/auth/spanner.data"
        );
        assert_eq!(
            (claims["iat"].as_u64(), claims["exp"].as_u64()),
            (Some(1_000), Some(4_600))
        );
        let signature = URL_SAFE_NO_PAD.decode(parts[2]).expect("base64url");
        let public = UnparsedPublicKey::new(&RSA_PKCS1_2048_8192_SHA256, account.key.public());
        let signed = format!("{}.{}", parts[0], parts[1]);
        public
            .verify(signed.as_bytes(), &signature)
            .expect("the signature verifies");
    }
}
