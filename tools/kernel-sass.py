#!/usr/bin/env python3
"""Registers, spills and SASS of the project's kernels, on a machine without a GPU.

    python3 tools/kernel-sass.py bfs/bfs.cu                  # every kernel of kernels/bfs/bfs.cu
    python3 tools/kernel-sass.py sssp/sssp_fused.cu --only _cluster  # names containing it
    python3 tools/kernel-sass.py bfs/bfs_fused.cu -D GROUTE_TRACE_LEVEL=900
    python3 tools/kernel-sass.py bfs/bfs_fused.cu --sass bfs_fused_peer_cluster > peer.sass
    python3 tools/kernel-sass.py bfs/bfs_fused.cu --loops bfs_fused_peer_cluster  # its loops

Compiles as the runtime does (NVRTC 13.0, the pinned version of .ci/nvrtc.sh, to PTX for
compute_90 with --std=c++17), then assembles for sm_90 with ptxas -v, which reports each
kernel's registers, stack frame and spill bytes; --sass disassembles one kernel (cuobjdump,
nvdisasm). The driver's JIT on the GPU machine may allocate slightly differently, but spills
and register pressure found here can be removed without device time.
--loops lists a kernel's natural loops (from its SASS's branches and their dominators), each
with its nesting, instructions and the spills (LDL, STL), memory operations and barriers in
it: a persistent kernel's level loop is the innermost loop holding its level's barrier (BAR,
or CGABAR for a cluster's), so builds compare per level, not per kernel. Code that ptxas shares
between two loops counts in both.
The CUDA tools come from PyPI wheels, installed on first use into .kernel-tools/ (ignored).
"""
import argparse, ctypes, os, re, subprocess, sys, tempfile

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
TOOLS = os.path.join(ROOT, '.kernel-tools')
WHEELS = ['nvidia-cuda-nvrtc==13.0.88', 'nvidia-cuda-nvcc==13.0.88',
          'nvidia-cuda-cuobjdump==13.5.37', 'nvidia-cuda-nvdisasm==13.5.37']
BIN = os.path.join(TOOLS, 'nvidia', 'cu13', 'bin')
LIB = os.path.join(TOOLS, 'nvidia', 'cu13', 'lib')


def install():
    if os.path.exists(os.path.join(BIN, 'ptxas')) and os.path.exists(os.path.join(BIN, 'nvdisasm')):
        return
    subprocess.run([sys.executable, '-m', 'pip', 'install', '--quiet', '--no-deps',
                    '--disable-pip-version-check', '--target', TOOLS] + WHEELS, check=True)


def ptx(cu, defines):
    # libnvrtc loads libnvrtc-builtins from its directory only through the loader's path.
    ctypes.CDLL(os.path.join(LIB, 'libnvrtc-builtins.so.13.0'), mode=ctypes.RTLD_GLOBAL)
    nvrtc = ctypes.CDLL(os.path.join(LIB, 'libnvrtc.so.13'))
    src = open(os.path.join(ROOT, 'kernels', cu), 'rb').read()
    prog = ctypes.c_void_p()
    if nvrtc.nvrtcCreateProgram(ctypes.byref(prog), src, cu.encode(), 0, None, None) != 0:
        sys.exit('nvrtcCreateProgram failed')
    opts = [b'--gpu-architecture=compute_90', b'--std=c++17',
            ('--include-path=' + os.path.join(ROOT, 'kernels', 'include')).encode()]
    opts += [('-D' + d).encode() for d in defines]
    rc = nvrtc.nvrtcCompileProgram(prog, len(opts), (ctypes.c_char_p * len(opts))(*opts))
    n = ctypes.c_size_t()
    nvrtc.nvrtcGetProgramLogSize(prog, ctypes.byref(n))
    log = ctypes.create_string_buffer(n.value)
    nvrtc.nvrtcGetProgramLog(prog, log)
    if rc != 0:
        sys.exit(f'NVRTC could not compile {cu}:\n{log.value.decode()}')
    nvrtc.nvrtcGetPTXSize(prog, ctypes.byref(n))
    text = ctypes.create_string_buffer(n.value)
    nvrtc.nvrtcGetPTX(prog, text)
    return text.value


# Instructions that end a basic block: branches (their target starts one), returns and exits.
BRANCHES = ('BRA', 'JMP', 'BRX', 'JMX', 'EXIT', 'RET', 'KILL', 'BPT')
# Instructions of a loop worth counting (local memory is spills and stack; the rest, the
# memory traffic and synchronisation a level of a persistent kernel pays).
COUNTED = {'LDL': 'LDL', 'STL': 'STL', 'LDG': 'LDG', 'STG': 'STG', 'LD': 'LD', 'ST': 'ST',
           'ATOM': 'ATOM', 'ATOMG': 'ATOM', 'RED': 'RED', 'BAR': 'BAR', 'UCGABAR_ARV': 'CGABAR',
           'UCGABAR_WAIT': 'CGABAR'}


def loops(sass):
    """The natural loops of one kernel's SASS (cuobjdump -sass text): per loop its address
    range, nesting depth and instruction counts, outermost first."""
    ins = []
    for line in sass.splitlines():
        m = re.match(r'\s*/\*([0-9a-f]{4,})\*/\s+(.*?)\s*;', line)
        if m:
            ins.append((int(m.group(1), 16), m.group(2)))
    if not ins:
        return []
    index = {a: i for i, (a, _) in enumerate(ins)}

    def op(text):
        words = text.split()
        if words and words[0].startswith('@'):
            words = words[1:]
        return words[0] if words else ''

    def conditional(text):
        # A guard, a divergence check (BRA.DIV) or a predicate operand (BRA P4, target).
        words = text.split()
        guarded = words[0].startswith('@') and words[0] != '@PT'
        body = words[1:] if words[0].startswith('@') else words
        return (guarded or body[0].startswith('BRA.DIV')
                or (len(body) > 2 and re.fullmatch(r'!?U?P[0-6],', body[1]) is not None))

    def target(text):
        m = re.search(r'\b(?:BRA|JMP)\S*\s+(.*)', text)
        found = re.findall(r'0x[0-9a-f]+', m.group(1)) if m else []
        return int(found[-1], 16) if found else None

    # Basic blocks: a leader at 0, at every branch target and after every block-ending op.
    leaders = {0}
    for i, (a, t) in enumerate(ins):
        o = op(t).split('.')[0]
        if o in BRANCHES:
            tgt = target(t)
            if tgt is not None and tgt in index:
                leaders.add(index[tgt])
            if i + 1 < len(ins):
                leaders.add(i + 1)
    starts = sorted(leaders)
    block_of = {}
    blocks = []
    for b, s0 in enumerate(starts):
        e = starts[b + 1] if b + 1 < len(starts) else len(ins)
        blocks.append((s0, e))
        for i in range(s0, e):
            block_of[i] = b
    succ = [set() for _ in blocks]
    for b, (s0, e) in enumerate(blocks):
        t = ins[e - 1][1]
        o = op(t).split('.')[0]
        if o in BRANCHES:
            tgt = target(t)
            if tgt is not None and tgt in index:
                succ[b].add(block_of[index[tgt]])
            if conditional(t) and e < len(ins):
                succ[b].add(block_of[e])
        elif e < len(ins):
            succ[b].add(block_of[e])
    pred = [set() for _ in blocks]
    for b, ss in enumerate(succ):
        for c in ss:
            pred[c].add(b)
    # Dominators (iterative, in address order; block 0 is the entry) over the blocks reached
    # from it (an indirect branch's targets, BRX, are not followed).
    n = len(blocks)
    reached, stack = {0}, [0]
    while stack:
        for c in succ[stack.pop()]:
            if c not in reached:
                reached.add(c)
                stack.append(c)
    pred = [p & reached for p in pred]
    dom = [set(reached) for _ in range(n)]
    dom[0] = {0}
    changed = True
    while changed:
        changed = False
        for b in sorted(reached - {0}):
            ps = [dom[p] for p in pred[b]]
            new = (set.intersection(*ps) if ps else set()) | {b}
            if new != dom[b]:
                dom[b], changed = new, True
    # Natural loops by header: every back edge b -> h (h dominates b) adds the blocks that
    # reach b without passing h.
    body = {}
    for b in reached:
        for h in succ[b]:
            if h in dom[b]:
                seen = body.setdefault(h, {h})
                stack = [b]
                while stack:
                    x = stack.pop()
                    if x not in seen:
                        seen.add(x)
                        stack.extend(pred[x])
    out = []
    for h, bs in body.items():
        idx = [i for b in bs for i in range(*blocks[b])]
        counts = {}
        for i in idx:
            o = op(ins[i][1])
            key = COUNTED.get(o.split('.')[0])
            if key:
                counts[key] = counts.get(key, 0) + 1
        depth = sum(1 for h2, b2 in body.items() if h2 != h and bs < b2)
        out.append((ins[blocks[h][0]][0], min(ins[i][0] for i in idx),
                    max(ins[i][0] for i in idx), depth, len(idx), counts))
    return sorted(out, key=lambda x: (x[1], x[3]))


def main():
    ap = argparse.ArgumentParser(description=__doc__.split('\n')[0])
    ap.add_argument('source', help='a file of kernels/, by its path there, e.g. bfs/bfs.cu')
    ap.add_argument('--only', default='', help='kernels whose name contains this')
    ap.add_argument('-D', dest='defines', action='append', default=[], help='NAME[=VALUE]')
    ap.add_argument('--sass', metavar='KERNEL', help='print this kernel\'s SASS instead')
    ap.add_argument('--loops', metavar='KERNEL',
                    help='list this kernel\'s loops (natural loops of its SASS): nesting, '
                         'instructions and their spills, memory operations and barriers')
    a = ap.parse_args()
    if not os.path.exists(os.path.join(ROOT, 'kernels', a.source)):
        sys.exit(f'no kernels/{a.source}; name a file of kernels/ by its path there, e.g. bfs/bfs.cu')
    install()
    with tempfile.TemporaryDirectory() as d:
        p, cubin = os.path.join(d, 'k.ptx'), os.path.join(d, 'k.cubin')
        open(p, 'wb').write(ptx(a.source, a.defines))
        out = subprocess.run([os.path.join(BIN, 'ptxas'), '-v', '-arch=sm_90', p, '-o', cubin],
                             capture_output=True, text=True)
        if out.returncode != 0:
            sys.exit(out.stderr)
        env = dict(os.environ, PATH=BIN + os.pathsep + os.environ.get('PATH', ''))
        if a.sass:
            sys.exit(subprocess.run([os.path.join(BIN, 'cuobjdump'), '-sass', '-fun', a.sass,
                                     cubin], env=env).returncode)
        if a.loops:
            sass = subprocess.run([os.path.join(BIN, 'cuobjdump'), '-sass', '-fun', a.loops,
                                   cubin], env=env, capture_output=True, text=True)
            found = loops(sass.stdout)
            if sass.returncode != 0 or not re.search(r'/\*[0-9a-f]{4,}\*/', sass.stdout):
                sys.exit(f'no kernel {a.loops} in kernels/{a.source} (the names are those this '
                         f'tool lists without --loops) {sass.stderr.strip()}')
            for head, first, last, depth, size, counts in found:
                what = ' '.join(f'{k} {v}' for k, v in sorted(counts.items()))
                print(f"{'  ' * depth}loop at {head:#07x} [{first:#07x}, {last:#07x}]: "
                      f"{size} instructions; {what}")
            return
        kernel = None
        for line in out.stderr.splitlines():
            # Properties follow each entry and each function it calls (peer_idle is not
            # inlined): name the lines by the function they describe.
            m = re.search(r"Compiling entry function '(\w+)'|Function properties for (\w+)", line)
            if m:
                kernel = m.group(1) or m.group(2)
                continue
            if kernel and a.only in kernel and ('spill' in line or 'registers' in line):
                print(f"{kernel}: {line.split('info    : ')[-1].strip()}")


if __name__ == '__main__':
    main()
