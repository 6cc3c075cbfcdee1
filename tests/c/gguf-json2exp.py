#!/usr/bin/env python3
"""Converts the parity gguf/*.json files into line-based expectation files
that tests/c/test-gguf.c reads (C has no JSON parser here).

usage: gguf-json2exp.py PARITY_DIR OUT_DIR

Every value is written as the little-endian bytes the file stores, in hex,
so the C side compares bytes and never parses numbers. '-' is an empty hex.
  V version / A alignment / D data_offset / S file_size
  K key_hex type value_hex          scalar or string
  R key_hex arr_type n payload_hex  array of fixed-size values
  Q key_hex n s1_hex s2_hex ...     array of strings
  T name type_id n_dims ne0 ne1 ne2 ne3 offset nbytes sha256|-
"""
import json
import os
import struct
import sys

FMT = {"u8": "<B", "i8": "<b", "u16": "<H", "i16": "<h", "u32": "<I", "i32": "<i",
       "f32": "<f", "u64": "<Q", "i64": "<q", "f64": "<d", "bool": "<?"}


def hx(b):
    return b.hex() if b else "-"


def enc(t, v):
    if t == "str":
        return v.encode("utf-8")
    if t in ("u64", "i64"):
        v = int(v)
    return struct.pack(FMT[t], v)


def convert(src, dst):
    d = json.load(open(src))
    out = [f"V {d['version']}", f"A {d['alignment']}", f"D {d['data_offset']}", f"S {d['file_size']}"]
    for kv in d["kv"]:
        k = hx(kv["key"].encode("utf-8"))
        if kv["type"] != "arr":
            out.append(f"K {k} {kv['type']} {hx(enc(kv['type'], kv['value']))}")
        elif kv["array_type"] == "str":
            out.append(" ".join([f"Q {k} {len(kv['value'])}"] + [hx(enc('str', s)) for s in kv["value"]]))
        else:
            payload = b"".join(enc(kv["array_type"], v) for v in kv["value"])
            out.append(f"R {k} {kv['array_type']} {len(kv['value'])} {hx(payload)}")
    for t in d["tensors"]:
        ne = " ".join(str(x) for x in t["ne"])
        out.append(f"T {t['name']} {t['type_id']} {t['n_dims']} {ne} {t['offset']} {t['nbytes']} {t['sha256'] or '-'}")
    with open(dst, "w") as f:
        f.write("\n".join(out) + "\n")


def main():
    src_dir = os.path.join(sys.argv[1], "gguf")
    os.makedirs(sys.argv[2], exist_ok=True)
    for name in sorted(os.listdir(src_dir)):
        if name.endswith(".json"):
            convert(os.path.join(src_dir, name), os.path.join(sys.argv[2], name[:-5] + ".exp"))


if __name__ == "__main__":
    main()
