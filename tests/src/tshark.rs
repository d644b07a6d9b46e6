//! Running tshark as the oracle for what we write.

use std::path::Path;
use std::process::Command;

/// Whether tshark is installed; tests that need it print a note and skip otherwise.
pub fn available() -> bool {
    let ok = Command::new("tshark").arg("--version").output().is_ok_and(|o| o.status.success());
    if !ok {
        eprintln!("note: tshark not found; run scripts/setup. Skipping the tshark checks.");
    }
    ok
}

/// `tshark -r FILE -T fields -e F...`: one row per packet, one column per field
/// (multiple occurrences joined by ',').
pub fn fields(file: &Path, fields: &[&str]) -> Vec<Vec<String>> {
    let mut cmd = Command::new("tshark");
    cmd.arg("-r").arg(file).args(["-T", "fields", "-E", "separator=\t", "-E", "occurrence=a"]);
    for f in fields {
        cmd.args(["-e", f]);
    }
    let out = cmd.output().expect("running tshark");
    assert!(out.status.success(), "tshark failed on {}: {}", file.display(), String::from_utf8_lossy(&out.stderr));
    String::from_utf8(out.stdout)
        .expect("tshark prints UTF-8")
        .lines()
        .map(|l| l.split('\t').map(str::to_string).collect())
        .collect()
}
