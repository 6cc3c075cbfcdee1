#!/usr/bin/env python3
# Converts the parity quant/<type>.json files into flat binaries that the C
# harness test-quants.c reads: for each field, a u32 byte count (0xffffffff if
# the field is absent) followed by the raw bytes.
import json, os, struct, sys

src = sys.argv[1] if len(sys.argv) > 1 else "../shared/parity/quant"
dst = sys.argv[2] if len(sys.argv) > 2 else "/tmp/lm-quant-parity"
os.makedirs(dst, exist_ok=True)
fields = ["input_f32", "ref_quant", "ref_dequant_f32", "imatrix_f32", "imatrix_quant", "imatrix_dequant_f32"]
for name in sorted(os.listdir(src)):
    if not name.endswith(".json"):
        continue
    d = json.load(open(os.path.join(src, name)))
    with open(os.path.join(dst, name[:-5] + ".bin"), "wb") as f:
        f.write(struct.pack("<iii", d["type_id"], d["rows"], d["n_per_row"]))
        for k in fields:
            if k in d and d[k] is not None:
                b = bytes.fromhex(d[k])
                f.write(struct.pack("<I", len(b)))
                f.write(b)
            else:
                f.write(struct.pack("<I", 0xffffffff))
