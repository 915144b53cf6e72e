//! Token view over HuggingFace `tokenizers` (being written).
