# The factor ratios of results/link-study/capacity/README.md and their 95 % CIs,
# from capacity bundles' capacity.json: mean log estimates, Welch-Satterthwaite
# degrees of freedom (at least the smaller side's n - 1), widened by half of each
# row's 2 % resolution, as pslab report's capacity claims (docs/report.md).
# python3 results/link-study/capacity/ratios.py results/link-study/capacity/loss
import json, math, sys
def tpdf(x, v): return math.exp(math.lgamma((v+1)/2)-math.lgamma(v/2))/math.sqrt(v*math.pi)*(1+x*x/v)**(-(v+1)/2)
def tcdf(x, v, n=20000):
    # integrate from 0 to x with Simpson
    h = x/n; s = tpdf(0,v)+tpdf(x,v)
    for i in range(1,n): s += (4 if i%2 else 2)*tpdf(i*h,v)
    return 0.5 + s*h/3
def tq(p, v):
    lo, hi = 0, 200
    for _ in range(60):
        m=(lo+hi)/2
        if tcdf(m,v,4000) < p: lo=m
        else: hi=m
    return (lo+hi)/2
rows = {}
for d in sys.argv[1:]:
    for r in json.load(open(d+'/capacity.json')):
        rows[(r['network'], r['broker'], r['case'])] = r
res = math.log(1.02)/2
def ratio(a, b):
    la=[math.log(x) for x in a['estimates']]; lb=[math.log(x) for x in b['estimates']]
    na, nb = len(la), len(lb)
    if na<2 or nb<2: return None
    ma, mb = sum(la)/na, sum(lb)/nb
    va = sum((x-ma)**2 for x in la)/(na-1); vb = sum((x-mb)**2 for x in lb)/(nb-1)
    se2 = va/na + vb/nb
    if se2 == 0: df = min(na,nb)-1
    else:
        df = se2**2/((va/na)**2/(na-1) + (vb/nb)**2/(nb-1)) if (va>0 or vb>0) else min(na,nb)-1
        df = max(df, min(na,nb)-1)
    h = tq(0.975, df)*math.sqrt(se2) + 2*res
    r = math.exp(ma-mb)
    return r, math.exp(ma-mb-h), math.exp(ma-mb+h)
def fmt(x): return f"{x:.3g}" if x < 100 else f"{x:.0f}"
pairs = [('03','01','non-durable/durable 100 B'),('04','02','non-durable/durable 5120 B'),('01','02','100 B/5120 B durable'),('03','04','100 B/5120 B non-durable')]
nets = sorted({k[0] for k in rows})
for n in nets:
    for b in ['nats','artemis']:
        for x,y,label in pairs:
            if (n,b,x) in rows and (n,b,y) in rows:
                q = ratio(rows[(n,b,x)], rows[(n,b,y)])
                if q: print(f"| {b} | {n} | {label} | ×{fmt(q[0])} | {fmt(q[1])}-{fmt(q[2])} |")
for b in ['nats','artemis']:
    for c in ['01','02','03','04']:
        for base in ['wifi-paper-relay']:
            for other in nets:
                if other==base: continue
                if (other,b,c) in rows and (base,b,c) in rows:
                    q = ratio(rows[(other,b,c)], rows[(base,b,c)])
                    if q: print(f"| {b} | {c} | {other}/{base} | ×{q[0]:.3f} | {q[1]:.3f}-{q[2]:.3f} |")
