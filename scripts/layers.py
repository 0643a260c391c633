#!/usr/bin/env python3
"""Checks that no module of src/ imports from a layer above it.

Layers, bottom up (README's code layout): core, rng, score, params -> eval, nnue, tt, time ->
search -> engine -> bench, protocol -> tools. A module may use its own layer and those below.
params (the one table of tunable search and time constants) is a leaf, so that time management
reads its constants without reaching into the search. tools (datagen, train, tune, the data
reader, progress) is the top room: it drives the engine, and no engine module may import it.
Run by .ci/run; prints each violation and exits 1 if there is one.
"""
import pathlib
import re
import sys

LAYER = {
    "core": 0, "rng": 0, "score": 0, "params": 0,
    "eval": 1, "nnue": 1, "tt": 1, "time": 1,
    "search": 2,
    "engine": 3,
    "bench": 4, "protocol": 4,
    "tools": 5,
}
# Rooms that may use only some of the layers below them.
ALLOWED_BELOW: dict[str, set[str]] = {}

def module_of(path: pathlib.Path, src: pathlib.Path) -> str:
    rel = path.relative_to(src)
    return rel.parts[0].removesuffix(".rs")

def main() -> int:
    src = pathlib.Path(__file__).resolve().parent.parent / "src"
    bad = []
    for path in sorted(src.rglob("*.rs")):
        module = module_of(path, src)
        if module not in LAYER:
            continue  # lib.rs, main.rs
        text = path.read_text()
        for used in sorted(set(re.findall(r"crate::([a-z_]+)", text))):
            if used not in LAYER or used == module:
                continue
            allowed = ALLOWED_BELOW.get(module)
            if LAYER[used] > LAYER[module] or (allowed is not None and used not in allowed):
                bad.append(f"{path.relative_to(src.parent)}: {module} uses {used}")
    for b in bad:
        print(b)
    print(f"layers: {len(bad)} violation(s)")
    return 1 if bad else 0

if __name__ == "__main__":
    sys.exit(main())
