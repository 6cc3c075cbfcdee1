# Converts parity op cases (GGUF) into a simple binary for the C harness:
# line 1: expr; line 2: n tensors; then per tensor a line
# "name type ne0 ne1 ne2 ne3 nbytes" followed by the raw bytes.
import struct, sys, os
def rd(f, fmt): return struct.unpack('<'+fmt, f.read(struct.calcsize('<'+fmt)))
def rstr(f):
    (n,) = rd(f,'Q'); return f.read(n).decode('utf-8')
SC = {0:'B',1:'b',2:'H',3:'h',4:'I',5:'i',6:'f',7:'?',10:'Q',11:'q',12:'d'}
def rval(f,t):
    if t in SC: return rd(f,SC[t])[0]
    if t == 8: return rstr(f)
    if t == 9:
        (at,) = rd(f,'I'); (n,) = rd(f,'Q'); return [rval(f,at) for _ in range(n)]
    raise Exception('bad type %d'%t)
TS = {0:(1,4),1:(1,2),2:(32,18),3:(32,20),6:(32,22),7:(32,24),8:(32,34),10:(256,84),11:(256,110),12:(256,144),13:(256,176),14:(256,210),20:(32,18),26:(1,4),30:(1,2),24:(1,1),25:(1,2),27:(1,8),28:(1,8)}
def conv(path, out):
    f = open(path,'rb')
    assert f.read(4) == b'GGUF'
    (ver,) = rd(f,'I'); (nt,) = rd(f,'Q'); (nkv,) = rd(f,'Q')
    kv = {}
    for _ in range(nkv):
        k = rstr(f); (t,) = rd(f,'I'); kv[k] = rval(f,t)
    tinfo = []
    for _ in range(nt):
        name = rstr(f); (nd,) = rd(f,'I'); ne = list(rd(f,'Q'*nd)); (t,) = rd(f,'I'); (off,) = rd(f,'Q')
        tinfo.append((name, ne + [1]*(4-nd), t, off))
    align = kv.get('general.alignment', 32)
    pos = f.tell(); data = (pos + align - 1)//align*align
    o = open(out,'wb')
    o.write((kv['case.expr']+'\n').encode()); o.write(('%d\n'%nt).encode())
    for name, ne, t, off in tinfo:
        bs, tsz = TS[t]
        nb = ne[0]//bs*tsz*ne[1]*ne[2]*ne[3]
        f.seek(data+off); b = f.read(nb)
        o.write(('%s %d %d %d %d %d %d\n'%(name,t,ne[0],ne[1],ne[2],ne[3],nb)).encode()); o.write(b)
    return kv
d = sys.argv[1] if len(sys.argv) > 1 else '../shared/parity/ops'
odir = sys.argv[2] if len(sys.argv) > 2 else '/tmp/parity'
os.makedirs(odir, exist_ok=True)
for line in open(os.path.join(d,'INDEX.tsv')).read().splitlines()[1:]:
    name = line.split('\t')[0]
    try:
        conv(os.path.join(d,name+'.gguf'), os.path.join(odir, name+'.bin'))
    except Exception as e:
        print('skip', name, e)
