#!/usr/bin/env python3
# Converts the backward parity cases (../shared/parity/ops, kind=backward) into
# a flat binary file per case for test-backward.c:
#   u32 n; then per tensor: char name[64], u32 type, i64 ne[4], u64 nbytes, bytes
# Usage: bw-parity2bin.py PARITY_OPS_DIR OUT_DIR
import os, struct, sys

def read_gguf(path):
    b = open(path, 'rb').read()
    assert b[:4] == b'GGUF', path
    pos = 4
    def u(fmt):
        nonlocal pos
        v = struct.unpack_from('<' + fmt, b, pos); pos += struct.calcsize(fmt); return v[0]
    def s():
        nonlocal pos
        n = u('Q'); v = b[pos:pos+n].decode('utf-8'); pos += n; return v
    scal = {0:'B',1:'b',2:'H',3:'h',4:'I',5:'i',6:'f',7:'?',10:'Q',11:'q',12:'d'}
    def val(t):
        if t in scal: return u(scal[t])
        if t == 8: return s()
        if t == 9:
            at = u('I'); n = u('Q'); return [val(at) for _ in range(n)]
        raise ValueError(t)
    _ver = u('I'); nt = u('Q'); nkv = u('Q')
    kv = {}
    for _ in range(nkv):
        k = s(); t = u('I'); kv[k] = val(t)
    infos = []
    for _ in range(nt):
        name = s(); nd = u('I'); ne = [u('Q') for _ in range(nd)]; ty = u('I'); off = u('Q')
        infos.append((name, ne, ty, off))
    align = kv.get('general.alignment', 32)
    data0 = (pos + align - 1) // align * align
    tsize = {0: 4, 1: 2, 24: 1, 25: 2, 26: 4, 27: 8, 28: 8, 30: 2}
    tensors = []
    for name, ne, ty, off in infos:
        n = 1
        for x in ne: n *= x
        nbytes = n * tsize[ty]
        tensors.append((name, ty, ne + [1] * (4 - len(ne)), b[data0 + off: data0 + off + nbytes]))
    return kv, tensors

def main():
    src, dst = sys.argv[1], sys.argv[2]
    os.makedirs(dst, exist_ok=True)
    n = 0
    for line in open(os.path.join(src, 'INDEX.tsv')):
        f = line.rstrip('\n').split('\t')
        if len(f) < 2 or f[1] != 'backward':
            continue
        kv, tensors = read_gguf(os.path.join(src, f[0] + '.gguf'))
        with open(os.path.join(dst, f[0] + '.bin'), 'wb') as o:
            o.write(struct.pack('<I', len(tensors)))
            for name, ty, ne, data in tensors:
                o.write(name.encode()[:63].ljust(64, b'\0'))
                o.write(struct.pack('<I4qQ', ty, *ne, len(data)))
                o.write(data)
        with open(os.path.join(dst, f[0] + '.txt'), 'w') as o:
            o.write(kv.get('case.expr', '') + '\n' + kv.get('case.params', '') + '\n')
        n += 1
    print(f'{n} backward cases written to {dst}')

main()
