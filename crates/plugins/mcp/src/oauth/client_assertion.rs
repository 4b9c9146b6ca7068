//! The signed JWT tack authenticates with at a token endpoint when its
//! client has a private key instead of a secret (`private_key_jwt`, RFC
//! 7523 section 2.2): ES256 with a P-256 key in a PKCS#8 PEM file.

use base64::Engine;
use base64::engine::general_purpose::{STANDARD, URL_SAFE_NO_PAD};
use ring::rand::{SecureRandom, SystemRandom};
use ring::signature::{ECDSA_P256_SHA256_FIXED_SIGNING, EcdsaKeyPair};

/// How long an assertion is good for, in seconds.
const LIFETIME: u64 = 300;

/// A client assertion of `client_id` for `audience` (the authorization
/// server's issuer), signed with the key of `pem`, made at `now` (seconds
/// since the Unix epoch).
pub(crate) fn es256_assertion(
    pem: &str,
    client_id: &str,
    audience: &str,
    now: u64,
) -> Result<String, String> {
    let der = pem_body(pem)?;
    let random = SystemRandom::new();
    let key = EcdsaKeyPair::from_pkcs8(&ECDSA_P256_SHA256_FIXED_SIGNING, &der, &random).map_err(
        |_| "the private key is not a P-256 (ES256) key in PKCS#8 PEM (`-----BEGIN PRIVATE KEY-----`); convert one with `openssl pkcs8 -topk8 -nocrypt`".to_owned(),
    )?;
    let mut nonce = [0u8; 16];
    random
        .fill(&mut nonce)
        .map_err(|_| "no random bytes for the assertion's id".to_owned())?;
    let header = serde_json::json!({"alg": "ES256", "typ": "JWT"});
    let claims = serde_json::json!({
        "iss": client_id,
        "sub": client_id,
        "aud": audience,
        "iat": now,
        "exp": now + LIFETIME,
        "jti": URL_SAFE_NO_PAD.encode(nonce),
    });
    let input = format!(
        "{}.{}",
        URL_SAFE_NO_PAD.encode(header.to_string()),
        URL_SAFE_NO_PAD.encode(claims.to_string())
    );
    let signature = key
        .sign(&random, input.as_bytes())
        .map_err(|_| "signing the client assertion failed".to_owned())?;
    Ok(format!(
        "{input}.{}",
        URL_SAFE_NO_PAD.encode(signature.as_ref())
    ))
}

/// The DER bytes of a PEM `PRIVATE KEY` block.
fn pem_body(pem: &str) -> Result<Vec<u8>, String> {
    let mut inside = false;
    let mut body = String::new();
    for line in pem.lines().map(str::trim) {
        if line == "-----BEGIN PRIVATE KEY-----" {
            inside = true;
        } else if line == "-----END PRIVATE KEY-----" {
            return STANDARD
                .decode(&body)
                .map_err(|_| "the private key's PEM block is not valid base64".to_owned());
        } else if inside {
            body.push_str(line);
        }
    }
    Err("no `-----BEGIN PRIVATE KEY-----` block (PKCS#8 PEM) in the private key".to_owned())
}

#[cfg(test)]
mod tests {
    use super::*;
    use ring::signature::{ECDSA_P256_SHA256_FIXED, KeyPair, UnparsedPublicKey};

    fn pem_of(der: &[u8]) -> String {
        format!(
            "-----BEGIN PRIVATE KEY-----\n{}\n-----END PRIVATE KEY-----\n",
            STANDARD.encode(der)
        )
    }

    #[test]
    fn an_assertion_is_signed_with_the_key_and_names_the_client() {
        let random = SystemRandom::new();
        let der = EcdsaKeyPair::generate_pkcs8(&ECDSA_P256_SHA256_FIXED_SIGNING, &random).unwrap();
        let key = EcdsaKeyPair::from_pkcs8(&ECDSA_P256_SHA256_FIXED_SIGNING, der.as_ref(), &random)
            .unwrap();
        let jwt =
            es256_assertion(&pem_of(der.as_ref()), "tack", "https://as.example", 1000).unwrap();
        let parts: Vec<&str> = jwt.split('.').collect();
        assert_eq!(parts.len(), 3);
        let claims: serde_json::Value =
            serde_json::from_slice(&URL_SAFE_NO_PAD.decode(parts[1]).unwrap()).unwrap();
        assert_eq!(claims["iss"], "tack");
        assert_eq!(claims["sub"], "tack");
        assert_eq!(claims["aud"], "https://as.example");
        assert_eq!(claims["exp"], 1300);
        let signature = URL_SAFE_NO_PAD.decode(parts[2]).unwrap();
        UnparsedPublicKey::new(&ECDSA_P256_SHA256_FIXED, key.public_key().as_ref())
            .verify(format!("{}.{}", parts[0], parts[1]).as_bytes(), &signature)
            .unwrap();
    }

    #[test]
    fn a_bad_key_says_what_is_expected() {
        let err = es256_assertion("not a key", "tack", "a", 0).unwrap_err();
        assert!(err.contains("BEGIN PRIVATE KEY"), "{err}");
        let err = es256_assertion(&pem_of(b"junk"), "tack", "a", 0).unwrap_err();
        assert!(err.contains("P-256"), "{err}");
    }
}
