#!/usr/bin/env python3
"""Registers, spills and SASS of the project's kernels, on a machine without a GPU.

    python3 tools/kernel-sass.py bfs.cu                      # every kernel of kernels/bfs.cu
    python3 tools/kernel-sass.py sssp.cu --only _cluster     # kernels whose name contains it
    python3 tools/kernel-sass.py bfs.cu -D GROUTE_TRACE_LEVEL=900
    python3 tools/kernel-sass.py bfs.cu --sass bfs_fused_peer_cluster > peer.sass

Compiles as the runtime does (NVRTC 13.0, the pinned version of .ci/nvrtc.sh, to PTX for
compute_90 with --std=c++17), then assembles for sm_90 with ptxas -v, which reports each
kernel's registers, stack frame and spill bytes; --sass disassembles one kernel (cuobjdump,
nvdisasm). The driver's JIT on the GPU machine may allocate slightly differently, but this
is how session 17 found and removed the member kernels' spills without device time.
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


def main():
    ap = argparse.ArgumentParser(description=__doc__.split('\n')[0])
    ap.add_argument('source', help='a file of kernels/, e.g. bfs.cu')
    ap.add_argument('--only', default='', help='kernels whose name contains this')
    ap.add_argument('-D', dest='defines', action='append', default=[], help='NAME[=VALUE]')
    ap.add_argument('--sass', metavar='KERNEL', help='print this kernel\'s SASS instead')
    a = ap.parse_args()
    if not os.path.exists(os.path.join(ROOT, 'kernels', a.source)):
        sys.exit(f'no kernels/{a.source}; name a file of kernels/, e.g. bfs.cu')
    install()
    with tempfile.TemporaryDirectory() as d:
        p, cubin = os.path.join(d, 'k.ptx'), os.path.join(d, 'k.cubin')
        open(p, 'wb').write(ptx(a.source, a.defines))
        out = subprocess.run([os.path.join(BIN, 'ptxas'), '-v', '-arch=sm_90', p, '-o', cubin],
                             capture_output=True, text=True)
        if out.returncode != 0:
            sys.exit(out.stderr)
        if a.sass:
            env = dict(os.environ, PATH=BIN + os.pathsep + os.environ.get('PATH', ''))
            sys.exit(subprocess.run([os.path.join(BIN, 'cuobjdump'), '-sass', '-fun', a.sass,
                                     cubin], env=env).returncode)
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
