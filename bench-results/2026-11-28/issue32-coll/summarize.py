import re,sys,statistics as st
from collections import defaultdict
rows=defaultdict(lambda: defaultdict(list))  # (kind,n,op,size) -> variant -> [per launch]
for l in open(sys.argv[1]):
    if l.startswith('#'): continue
    p=l.split()
    var,i,n=p[0],int(p[1]),p[2]
    if p[3]=='PP':
        size=re.search(r'size=(\d+)',l).group(1); v=float(re.search(r't_half_us_med=([\d.]+)',l).group(1))
        key=('pingpong',n,'t_half',size)
    else:
        op=re.search(r'op=(\w+)',l).group(1); size=re.search(r'bytes=(\d+)',l).group(1); v=float(re.search(r't_max_us_med=([\d.]+)',l).group(1))
        key=('coll',n,op,size)
    rows[key][var].append((i,v))
print("| what | ranks | bytes | ABI us (median of launches) | Rust API us | Open MPI 5.0.11 us | ABI/Open MPI (median of per-launch ratios, min-max) | ABI/Rust |")
print("|---|---|---|---|---|---|---|---|")
for key in sorted(rows, key=lambda k:(k[0]!='pingpong',int(k[1][2:]),k[2],int(k[3]))):
    d=rows[key]
    if key[3] not in ('0','8'): continue
    def med(v): return st.median([x for _,x in d.get(v,[])]) if d.get(v) else float('nan')
    def ratios(a,b):
        A=dict(d.get(a,[])); B=dict(d.get(b,[]))
        r=[A[i]/B[i] for i in A if i in B]
        return (st.median(r),min(r),max(r)) if r else (float('nan'),)*3
    ro=ratios('abi','ompi'); rr=ratios('abi','rust')
    name=key[2] if key[0]=='coll' else 'pingpong'
    print(f"| {name} | {key[1][2:]} | {key[3]} | {med('abi'):.3f} | {med('rust'):.3f} | {med('ompi'):.3f} | {ro[0]:.2f} ({ro[1]:.2f}-{ro[2]:.2f}) | {rr[0]:.2f} ({rr[1]:.2f}-{rr[2]:.2f}) |")
