//! Resume tokens under attack: the token carried the message size in clear, so a
//! client could set it to 0..64 and make the query thread allocate without bound, or to 0xFFFFFFFF
//! and get OK with no messages. Tokens are authenticated now: thousands of tampered ones are all
//! refused, and the server's memory does not move.

use std::time::{Duration, Instant};

use tonic::Code;

use crate::client::TestClient;
use crate::serve_process::ServeProcess;

const SQL: &str = "SELECT * FROM Seed23 LIMIT 200";

/// A small deterministic generator (xorshift64*), so a failure names a tampering that can be replayed.
struct Xorshift(u64);

impl Xorshift {
    fn next(&mut self) -> u64 {
        self.0 ^= self.0 >> 12;
        self.0 ^= self.0 << 25;
        self.0 ^= self.0 >> 27;
        self.0.wrapping_mul(0x2545_f491_4f6c_dd1d)
    }

    fn below(&mut self, n: usize) -> usize {
        (self.next() % n as u64) as usize
    }
}

/// Ways to spoil `token`: every single bit flipped, every byte zeroed and saturated, every
/// truncation short of empty, extensions, the clear-text size field set to the sizes that did harm
/// (0..=64 and 0xFFFFFFFF), and `random` tokens with one to four random bytes changed.
fn tamperings(token: &[u8], random: usize) -> Vec<Vec<u8>> {
    let mut out = Vec::new();
    for bit in 0..token.len() * 8 {
        let mut t = token.to_vec();
        t[bit / 8] ^= 1 << (bit % 8);
        out.push(t);
    }
    for at in 0..token.len() {
        for byte in [0x00, 0xff] {
            let mut t = token.to_vec();
            if t[at] != byte {
                t[at] = byte;
                out.push(t);
            }
        }
    }
    // (An empty token is no token: a fresh start, not a tampering.)
    out.extend((1..token.len()).map(|len| token[..len].to_vec()));
    out.extend((1..=16).map(|extra| [token, &vec![0u8; extra]].concat()));
    // The size field (after the 4-byte magic and the 8-byte message number), in clear.
    for size in (0u32..=64).chain([0xffff_ffff, 100, 255]) {
        let mut t = token.to_vec();
        t[12..16].copy_from_slice(&size.to_be_bytes());
        out.push(t);
    }
    // The old unsigned format: 32 bytes, any size.
    out.push([&b"SPT1"[..], &[0; 8], &64u32.to_be_bytes(), &[0; 16]].concat());
    let mut rng = Xorshift(0x9e37_79b9_7f4a_7c15);
    for _ in 0..random {
        let mut t = token.to_vec();
        for _ in 0..=rng.below(4) {
            let at = rng.below(t.len());
            t[at] ^= (rng.below(255) + 1) as u8;
        }
        out.push(t);
    }
    out
}

/// Sends `token` as a resume of [`SQL`]: the status if refused, the message count if accepted.
async fn resume(client: &mut TestClient, token: &[u8]) -> Result<usize, tonic::Status> {
    let mut request = client.request(SQL);
    request.resume_token = token.to_vec();
    let mut stream = client
        .client
        .execute_streaming_sql(request)
        .await?
        .into_inner();
    let mut messages = 0;
    while stream.message().await?.is_some() {
        messages += 1;
    }
    Ok(messages)
}

#[tokio::test(flavor = "multi_thread")]
async fn thousands_of_tampered_tokens_are_refused_and_server_memory_stays_flat() {
    let server = ServeProcess::start(&["--rows", "1000", "--max-message-bytes", "1024"]);
    let mut client = TestClient::connect(&server.host).await;
    let whole = client.query(SQL).await.expect("runs");
    let token = whole.messages[5].resume_token.clone();
    // The genuine token resumes right after its message: the refusals below are the tampering's.
    assert_eq!(
        resume(&mut client, &token).await.expect("a genuine token"),
        whole.messages.len() - 6
    );
    let tampered = tamperings(&token, 2500);
    assert!(tampered.len() >= 3000, "{} tokens", tampered.len());
    let (warm, rest) = tampered.split_at(200);
    for t in warm {
        assert!(resume(&mut client, t).await.is_err());
    }
    let before = server.rss();
    let started = Instant::now();
    for (i, t) in rest.iter().enumerate() {
        match resume(&mut client, t).await {
            Err(status) => assert_eq!(status.code(), Code::InvalidArgument, "tampering {i}"),
            Ok(messages) => panic!("tampering {i} ({t:02x?}) was accepted: {messages} messages"),
        }
    }
    let took = started.elapsed();
    let after = server.rss();
    let mib = |b: u64| b as f64 / f64::from(1 << 20);
    eprintln!(
        "{} tampered tokens refused in {took:?}; server RSS {:.1} MiB before, {:.1} MiB after",
        rest.len(),
        mib(before),
        mib(after)
    );
    assert!(took < Duration::from_secs(60), "{took:?}");
    // One unbounded allocation, as before the fix, costs hundreds of megabytes.
    assert!(
        after <= before + (16 << 20),
        "server memory grew from {:.1} MiB to {:.1} MiB",
        mib(before),
        mib(after)
    );
    // And it still serves.
    assert_eq!(client.query(SQL).await.expect("runs").rows.len(), 200);
}
