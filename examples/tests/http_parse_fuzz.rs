//! `parse_request` on hostile input: hundreds of thousands of requests mutated at random
//! (bytes flipped, inserted, deleted, lines duplicated, cut anywhere), and random bytes.
//! It must never panic, every complete head it reports lies inside the input, and it must
//! answer the same whether the bytes arrive at once or only their first part has (a prefix
//! of a complete head is "not yet", never a different request or an error the whole input
//! does not give): the property the connection loop relies on when it parses after every
//! read. Deterministic (a fixed seed per case), so a failure repeats.

use ringsteal_examples::http::{parse_request, ParseError, MAX_HEAD};

/// A small deterministic generator (xorshift64*), so that no dependency is needed.
struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        self.0 ^= self.0 >> 12;
        self.0 ^= self.0 << 25;
        self.0 ^= self.0 >> 27;
        self.0.wrapping_mul(0x2545_F491_4F6C_DD1D)
    }

    fn below(&mut self, n: usize) -> usize {
        (self.next() % n as u64) as usize
    }
}

const SEEDS: &[&[u8]] = &[
    b"GET / HTTP/1.1\r\nHost: x\r\n\r\n",
    b"POST /submit?a=1 HTTP/1.1\r\nHost: x\r\nContent-Length: 5\r\n\r\nhello",
    b"GET http://host/a/b?x=1 HTTP/1.0\r\nConnection: keep-alive\r\n\r\n",
    b"HEAD /x HTTP/1.1\r\nHost: x\r\nConnection: close\r\nX-Long: aaaaaaaaaaaaaaaa\r\n\r\n",
    b"PUT /t HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\n\r\n0\r\n\r\n",
    b"\r\n\nGET /after-blank-lines HTTP/1.1\nHost: x\n\n",
    b"OPTIONS * HTTP/1.1\r\nHost: x\r\nContent-Length: 00\r\n\r\n",
];

/// Bytes that matter to the grammar, chosen more often than the rest.
const SPECIAL: &[u8] = b"\r\n: \t/?HTTP/1.01-,0123456789\x00\x7f\xff";

fn mutate(rng: &mut Rng, input: &mut Vec<u8>) {
    for _ in 0..1 + rng.below(4) {
        let byte = if rng.below(2) == 0 {
            SPECIAL[rng.below(SPECIAL.len())]
        } else {
            rng.next() as u8
        };
        let at = rng.below(input.len() + 1);
        match rng.below(5) {
            0 if at < input.len() => input[at] = byte,
            1 => input.insert(at, byte),
            2 if at < input.len() => {
                input.remove(at);
            }
            3 => {
                // Duplicate a run (a repeated header line, a doubled request line).
                let len = rng.below(input.len().min(64) + 1);
                let from = rng.below(input.len() - len + 1);
                let run: Vec<u8> = input[from..from + len].to_vec();
                input.splice(at..at, run);
            }
            _ => input.truncate(at),
        }
    }
}

/// What [`check`] saw of the whole input: complete, not yet, refused.
#[derive(Default, Debug)]
struct Outcomes([usize; 3]);

/// Checks one input against the properties in the module docs, counting its outcome.
fn check(input: &[u8], seen: &mut Outcomes) {
    let whole = parse_request(input);
    seen.0[match &whole {
        Ok(Some(_)) => 0,
        Ok(None) => 1,
        Err(_) => 2,
    }] += 1;
    if let Ok(Some((_, len))) = &whole {
        assert!(
            *len <= input.len(),
            "a head of {len} bytes in {} bytes",
            input.len()
        );
        assert!(*len > 0, "a complete head of no bytes");
    }
    // The same bytes in two reads: every shorter prefix parsed on its own.
    let cut = input.len() / 2;
    match (parse_request(&input[..cut]), &whole) {
        // Not complete yet: anything may follow.
        (Ok(None), _) => {}
        // A prefix that already holds a complete head holds the same one.
        (Ok(Some((req, len))), Ok(Some((whole_req, whole_len)))) => {
            assert_eq!((&req, len), (whole_req, *whole_len), "{input:?}");
        }
        // A refusal of the prefix is the refusal of the whole: the loop answers it at once.
        (Err(e), Err(whole_e)) => assert_eq!(
            std::mem::discriminant(&e),
            std::mem::discriminant(whole_e),
            "{input:?}"
        ),
        (prefix, whole) => panic!("prefix {prefix:?} but whole {whole:?} for {input:?}"),
    }
}

#[test]
fn mutated_requests_never_panic_and_parse_the_same_in_pieces() {
    let mut rng = Rng(0x9E37_79B9_7F4A_7C15);
    let mut seen = Outcomes::default();
    let mut cases = 0;
    for seed in SEEDS {
        for _ in 0..40_000 {
            let mut input = seed.to_vec();
            for _ in 0..1 + rng.below(3) {
                mutate(&mut rng, &mut input);
            }
            check(&input, &mut seen);
            cases += 1;
        }
    }
    assert_eq!(cases, SEEDS.len() * 40_000);
    // The mutations reach every answer often, so each property above was exercised.
    assert!(seen.0.iter().all(|&n| n > 10_000), "{seen:?}");
}

#[test]
fn random_bytes_never_panic() {
    let mut rng = Rng(0xD1B5_4A32_D192_ED03);
    let mut seen = Outcomes::default();
    for _ in 0..50_000 {
        let len = rng.below(256);
        let input: Vec<u8> = (0..len)
            .map(|_| match rng.below(3) {
                0 => SPECIAL[rng.below(SPECIAL.len())],
                _ => rng.next() as u8,
            })
            .collect();
        check(&input, &mut seen);
    }
    assert!(
        seen.0[2] > 1_000,
        "random bytes are mostly refused: {seen:?}"
    );
}

#[test]
fn a_head_that_never_ends_is_refused_at_the_limit() {
    let mut input = b"GET / HTTP/1.1\r\n".to_vec();
    while input.len() <= MAX_HEAD + 64 {
        input.extend_from_slice(b"X-Pad: 0123456789abcdef\r\n");
    }
    assert_eq!(parse_request(&input).unwrap_err(), ParseError::HeadTooLarge);
}

#[test]
fn mutated_response_heads_never_panic() {
    use ringsteal_examples::http::parse_response_head;
    const RESPONSES: &[&[u8]] = &[
        b"HTTP/1.1 200 OK\r\nContent-Length: 14\r\n\r\nHello, world!\n",
        b"HTTP/1.1 404 Not Found\r\nContent-Length: 3\r\nConnection: close\r\n\r\nno\n",
        b"HTTP/1.0 204 No Content\r\n\r\n",
    ];
    let mut rng = Rng(0x6A09_E667_F3BC_C908);
    let mut complete = 0;
    for seed in RESPONSES {
        for _ in 0..30_000 {
            let mut input = seed.to_vec();
            mutate(&mut rng, &mut input);
            if let Ok(Some(head)) = parse_response_head(&input) {
                assert!(head.len <= input.len(), "{input:?}");
                complete += 1;
            }
        }
    }
    assert!(
        complete > 10_000,
        "mutations left many heads whole: {complete}"
    );
}
