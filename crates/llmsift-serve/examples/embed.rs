//! The README's "embedding the gateway" snippet, verbatim below this header
//! (`scripts/readme-test.py` checks they are equal and runs this example):
//! the demo models on 127.0.0.1:8000, until the process is stopped.
//! `cargo run -p llmsift-serve --example embed` (after `scripts/fetch-assets.sh`).

use llmsift_serve::{app, AppState, Config, Models};

#[tokio::main]
async fn main() -> Result<(), Box<dyn std::error::Error>> {
    let config = Config { models: llmsift_serve::models::demo_models(), ..Config::default() };
    let state = AppState::new(Models::build(&config)?, config.limits.clone(), None, Vec::new());
    let listener = tokio::net::TcpListener::bind("127.0.0.1:8000").await?;
    axum::serve(listener, app(state)).await?;
    Ok(())
}
