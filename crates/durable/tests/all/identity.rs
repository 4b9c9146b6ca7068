//! An endpoint given the server's request-identity key serves only the
//! requests that server signed.

use std::path::Path;
use std::process::Command;

use crate::fixture::EndpointProcess;
use crate::restate::Restate;

/// Base58 (Bitcoin's alphabet), as Restate writes its public keys.
fn base58(bytes: &[u8]) -> String {
    const ALPHABET: &[u8] = b"123456789ABCDEFGHJKLMNPQRSTUVWXYZabcdefghijkmnopqrstuvwxyz";
    let mut digits: Vec<u8> = Vec::new();
    for &byte in bytes {
        let mut carry = u32::from(byte);
        for digit in &mut digits {
            carry += u32::from(*digit) << 8;
            *digit = (carry % 58) as u8;
            carry /= 58;
        }
        while carry > 0 {
            digits.push((carry % 58) as u8);
            carry /= 58;
        }
    }
    let zeros = bytes.iter().take_while(|b| **b == 0).count();
    std::iter::repeat_n(b'1', zeros)
        .chain(digits.iter().rev().map(|d| ALPHABET[*d as usize]))
        .map(char::from)
        .collect()
}

/// A new Ed25519 key in `dir/NAME.pem` (openssl); its `publickeyv1_…` form.
fn signing_key(dir: &Path, name: &str) -> String {
    let pem = dir.join(format!("{name}.pem"));
    let der = dir.join(format!("{name}.pub.der"));
    let ok = Command::new("openssl")
        .args(["genpkey", "-algorithm", "ed25519", "-out"])
        .arg(&pem)
        .status()
        .expect("openssl")
        .success()
        && Command::new("openssl")
            .args(["pkey", "-pubout", "-outform", "DER", "-in"])
            .arg(&pem)
            .arg("-out")
            .arg(&der)
            .status()
            .expect("openssl")
            .success();
    assert!(ok, "openssl could not make an Ed25519 key");
    let spki = std::fs::read(&der).expect("public key");
    // An Ed25519 SubjectPublicKeyInfo ends with the 32 bytes of the key.
    format!("publickeyv1_{}", base58(&spki[spki.len() - 32..]))
}

#[test]
fn only_requests_the_server_signed_are_served() {
    let keys = tempfile::tempdir().expect("scratch");
    let server_key = signing_key(keys.path(), "server");
    let other_key = signing_key(keys.path(), "other");
    let pem = keys.path().join("server.pem");
    let extra = format!(
        "\n[worker.invoker]\nrequest-identity-private-key-pem-file = \"{}\"\n",
        pem.display()
    );
    let Some(scene) = crate::scene::Scene::with_server(|dir| Restate::start_with(dir, &extra))
    else {
        return;
    };
    let admin = scene.restate.admin.clone();

    // The endpoint that knows the server's key serves its turns.
    let trusting = EndpointProcess::spawn_with_key("A", scene.path(), Some(&server_key));
    scene.register(&trusting);
    scene.script("signed", &[&[("c1", "append", "signed-c1")]], "done");
    let report = scene
        .runtime
        .block_on(scene.client.turn("signed", "go"))
        .expect("turn");
    assert_eq!(report.text.as_deref(), Some("done"));
    assert_eq!(scene.lines("signed-c1"), ["A"]);

    // One that expects another key refuses the server's requests, so the
    // server cannot even discover its services.
    let strict = EndpointProcess::spawn_with_key("B", scene.path(), Some(&other_key));
    let refused = scene
        .runtime
        .block_on(tack_restate::register_deployment(&admin, &strict.uri()));
    let error = refused.expect_err("an endpoint expecting another key is not registered");
    assert!(error.to_string().contains("401 Unauthorized"), "{error}");
}
