// The reference itself, as a test oracle: `tests/test_properties.py` compiles
// this beside a copy of `shared/spec/decode_ring.rs` and asks it, one line at a
// time, what the reference answers. Strings travel hex-encoded (UTF-8).
//
//   parse HEX                       -> ok none | ok N | err HEX
//   watchdogs none|HEX              -> true | false
//   with N SPEC PUBLISHED OVERRIDE WD
//        (PUBLISHED: none|N, OVERRIDE: none|HEX, SPEC/WD: 0|1)
//                                   -> N none | N HEX
//   fit START RESERVE BYTES FREE    -> N
#![allow(dead_code)]

mod decode_ring;

use std::io::{self, BufRead, Write};

fn unhex(text: &str) -> String {
    let bytes: Vec<u8> = (0..text.len())
        .step_by(2)
        .map(|i| u8::from_str_radix(&text[i..i + 2], 16).expect("hex"))
        .collect();
    String::from_utf8(bytes).expect("utf-8")
}

fn hex(text: &str) -> String {
    text.bytes().map(|b| format!("{b:02x}")).collect()
}

fn optional_string(field: &str) -> Option<String> {
    if field == "none" {
        None
    } else {
        Some(unhex(field))
    }
}

fn main() {
    let stdin = io::stdin();
    let mut out = io::stdout().lock();
    for line in stdin.lock().lines() {
        let line = line.expect("line");
        let fields: Vec<&str> = line.split(' ').collect();
        let answer = match fields[0] {
            "parse" => match decode_ring::parse_decode_ring_slots(&unhex(fields.get(1).copied().unwrap_or(""))) {
                Ok(None) => "ok none".to_string(),
                Ok(Some(n)) => format!("ok {n}"),
                Err(message) => format!("err {}", hex(&message)),
            },
            "watchdogs" => {
                let value = optional_string(fields[1]);
                decode_ring::watchdogs_disabled_from_value(value.as_deref()).to_string()
            }
            "with" => {
                let published = if fields[3] == "none" { None } else { Some(fields[3].parse().expect("usize")) };
                let ring_override = optional_string(fields[4]);
                let decision = decode_ring::decode_rollback_ring_slots_with(
                    fields[1].parse().expect("usize"),
                    fields[2] == "1",
                    published,
                    ring_override.as_deref(),
                    fields[5] == "1",
                );
                match decision.skip_reason {
                    None => format!("{} none", decision.slots),
                    Some(reason) => format!("{} {}", decision.slots, hex(reason)),
                }
            }
            "fit" => {
                let n: Vec<usize> = fields[1..5].iter().map(|f| f.parse().expect("usize")).collect();
                decode_ring::fit_decode_ring_slots(n[0], n[1], n[2], n[3]).to_string()
            }
            other => panic!("unknown command {other}"),
        };
        writeln!(out, "{answer}").expect("write");
        out.flush().expect("flush");
    }
}
