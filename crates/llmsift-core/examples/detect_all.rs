//! Prints what auto-detection names for every template in a directory.
fn main() {
    let dir = std::env::args().nth(1).expect("templates dir");
    let mut files: Vec<_> = std::fs::read_dir(dir).unwrap().flatten().map(|e| e.path()).collect();
    files.sort();
    for f in files.iter().filter(|p| p.extension().is_some_and(|x| x == "jinja")) {
        let t = std::fs::read_to_string(f).unwrap();
        let d = llmsift_core::Registry::builtin().detect(&t);
        println!(
            "{:50} {:18} {:18} {:?}",
            f.file_name().unwrap().to_string_lossy(),
            d.reasoning.unwrap_or("-".into()),
            d.tools.unwrap_or("-".into()),
            d.also
        );
    }
}
