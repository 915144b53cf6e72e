//! Finds the built-in format files so adding a model is adding one file:
//! writes `$OUT_DIR/builtin_formats.rs`, a list of `include_str!`s of every
//! `formats/**/*.toml`, sorted for a stable registry.

use std::path::{Path, PathBuf};

fn collect(dir: &Path, out: &mut Vec<PathBuf>) {
    let Ok(entries) = std::fs::read_dir(dir) else { return };
    for e in entries.flatten() {
        let p = e.path();
        if p.is_dir() {
            collect(&p, out);
        } else if p.extension().is_some_and(|x| x == "toml") {
            out.push(p);
        }
    }
}

fn main() {
    let root = PathBuf::from(std::env::var("CARGO_MANIFEST_DIR").expect("manifest dir")).join("formats");
    println!("cargo:rerun-if-changed={}", root.display());
    let mut files = vec![];
    collect(&root, &mut files);
    files.sort();
    let mut code =
        String::from("/// Every built-in format file, compiled in: its path under `formats/`, its text.\nconst BUILTIN: &[(&str, &str)] = &[\n");
    for f in &files {
        println!("cargo:rerun-if-changed={}", f.display());
        let rel = f.strip_prefix(&root).unwrap_or(f).display().to_string().replace('\\', "/");
        code.push_str(&format!("    ({rel:?}, include_str!({:?})),\n", f.display().to_string()));
    }
    code.push_str("];\n");
    let out = PathBuf::from(std::env::var("OUT_DIR").expect("out dir")).join("builtin_formats.rs");
    std::fs::write(out, code).expect("write builtin list");
}
