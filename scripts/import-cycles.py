#!/usr/bin/env python3
"""Import cycles between the files of a crate's `src/`.

    python3 scripts/import-cycles.py crates/llmsift-core/src

The graph has one node per file (module) and an edge for every
`crate::a::b`, `super::x` and (in a `mod.rs`/`lib.rs`) `child::x` path in
its code (comments, string literals and `#[cfg(test)] mod` blocks left
out). A name a module re-exports (`pub use`) counts as the file that
defines it, and a `pub use` line itself is no edge, so a facade does not
make a cycle. Prints every strongly connected component with its edges;
exits 1 when there is one.
"""
import os,re,sys
root=sys.argv[1]
files={}
for d,_,fs in os.walk(root):
    for f in fs:
        if f.endswith('.rs'):
            p=os.path.join(d,f); rel=os.path.relpath(p,root)[:-3].split(os.sep)
            if rel[-1] in ('mod','lib','main'): rel=rel[:-1]
            files[tuple(rel)]=p
def strip(src):
    src=re.sub(r'//[^\n]*','',src)
    src=re.sub(r'"(\\.|[^"\\])*"','""',src)
    # drop #[cfg(test)] mod tests { ... } roughly: cut from '#[cfg(test)]' to end if followed by mod
    m=re.search(r'#\[cfg\(test\)\]\s*mod\s+\w+\s*\{',src)
    if m: src=src[:m.start()]
    return src
reexp={}
def load_reexports():
    for m,p in files.items():
        src=strip(open(p).read())
        for mm in re.finditer(r'pub(?:\([a-z]+\))? use ((?:\w+::)*)(\{[^}]*\}|\w+)\s*;',src):
            pre=[s for s in mm.group(1).split('::') if s]
            if pre and pre[0]=='crate': pre=pre[1:]; base=[]
            elif pre and pre[0]=='super': pre=pre[1:]; base=list(m[:-1])
            else: base=list(m)
            names=mm.group(2).strip('{}').split(',')
            for n in names:
                n=n.strip().split(' as ')[0].strip()
                if not n: continue
                parts=n.split('::')
                reexp[(m,parts[-1])]=base+pre+parts
def resolve(path,depth=0):
    # longest prefix that is a module file
    for k in range(len(path),-1,-1):
        if tuple(path[:k]) in files:
            m=tuple(path[:k])
            if k<len(path) and (m,path[k]) in reexp and depth<10:
                return resolve(reexp[(m,path[k])]+path[k+1:],depth+1)
            return m
load_reexports()
edges={m:set() for m in files}
for m,p in files.items():
    src=strip(open(p).read())
    src=re.sub(r'pub(?:\([a-z]+\))? use [^;]*;','',src)
    ismod=p.endswith(('mod.rs','lib.rs'))
    base=m if ismod else m[:-1]  # module whose children are siblings
    # expand use groups crudely: take leading path segments only
    for mm in re.finditer(r'\b(crate|super)((?:::\w+)+)',src):
        segs=mm.group(2).split('::')[1:]
        if mm.group(1)=='crate': tgt=list(segs)
        else:
            parent=list(m[:-1])
            tgt=parent+segs
        r=resolve(tgt)
        if r is not None and r!=m: edges[m].add(r)
    # use super::{a, b} groups
    for mm in re.finditer(r'\b(crate|super)((?:::\w+)*)::\{([^}]*)\}',src):
        pre=mm.group(2).split('::')[1:] if mm.group(2) else []
        tgtbase=(pre if mm.group(1)=='crate' else list(m[:-1])+pre)
        for item in mm.group(3).split(','):
            item=item.strip().split('::')[0].split(' ')[0]
            if not item or item=='self': continue
            r=resolve(tgtbase+[item])
            if r is not None and r!=m: edges[m].add(r)
    # child paths in a module file: `child::` where child is a submodule
    for child in [k for k in files if len(k)==len(m)+1 and k[:len(m)]==m]:
        if re.search(r'(?<![:\w])'+child[-1]+r'::',src): edges[m].add(child)
# Tarjan
idx={};low={};st=[];on=set();out=[];c=[0]
sys.setrecursionlimit(10000)
def sc(v):
    idx[v]=low[v]=c[0];c[0]+=1;st.append(v);on.add(v)
    for w in edges[v]:
        if w not in idx: sc(w);low[v]=min(low[v],low[w])
        elif w in on: low[v]=min(low[v],idx[w])
    if low[v]==idx[v]:
        comp=[]
        while True:
            w=st.pop();on.discard(w);comp.append(w)
            if w==v: break
        if len(comp)>1: out.append(comp)
for v in files:
    if v not in idx: sc(v)
for comp in out:
    names=sorted('/'.join(x) or 'lib' for x in comp)
    print('cycle:',names)
    for a in comp:
        for b in edges[a]:
            if b in comp: print('   ','/'.join(a) or 'lib','->','/'.join(b) or 'lib')
print(len(out),'cycles')
sys.exit(1 if out else 0)
