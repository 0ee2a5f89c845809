#!/usr/bin/python3
"""Write gpumux device profiles (traces/devices/<name>.json) from the sourced values below.

Every number carries its source in the profile's "sources" object (key = dotted path). Labels used
in the source strings:
  [DS]                        datasheet / vendor specification (URL given; this offline session
                              could not re-open the URLs, so a URL marked "as recalled" should be
                              re-checked once)
  [third-party measurement]   measured by others; who, on what, and where it is published is given
  [published]                 stated in a public page, paper or issue thread (named)
  [our measurement]           measured on the project's CPU machine (2-core AMD EPYC VM, Python
                              3.11.2); the scripts are not in the repository
  [our GPU measurement]       measured on a GPU lent to the project (docs/results/gpu-*;
                              hopper_measured.py)
  [source code]               read in public source code (repository and file given)
  [derived]                   derived here, formula given
  [FIT]                       calibrated by traces/tools/calibrate_devices.py against a public
                              third-party measurement
  [recalled, unchecked]       recollection of a public source that could not be re-checked: a lead
  assumption: <why>           no source; the reason is given

Usage: /usr/bin/python3 traces/tools/make_device_profiles.py [--check]
  --check  do not write; exit 1 if a file on disk differs from what would be written
Stdlib only.
"""
import json
import os
import sys

import hopper_measured

HERE = os.path.dirname(os.path.abspath(__file__))
REPO = os.path.dirname(os.path.dirname(HERE))
OUT = os.path.join(REPO, 'traces', 'devices')
GIB = 1 << 30

# --------------------------------------------------------------------------------------------------
# Calibrated and shared values (see traces/devices/README.md for the derivations)
# --------------------------------------------------------------------------------------------------
# fp32 conv efficiency of V100, fitted to NGC ResNet-50 v1.5 FP32 training, V100 16GB, 367 img/s
EFF_V100 = 0.69
# fp32 conv efficiency of T4, fitted to NGC ResNet-50 v1.5 FP32 inference (PyTorch eager), batch 32, 77.6 ms
EFF_T4 = 0.54
# GEMM output tile, fitted to V100 TensorRT FP32 ResNet-50 batch-1/8 latency
TILE = 64

SRC_EFF_V100 = ('[FIT] fraction of the fp32 peak that makes the cost model reproduce ResNet-50 v1.5 FP32 '
                'training at 367 img/s on a V100 16GB (NGC pytorch-21.03 [third-party measurement], '
                'https://github.com/NVIDIA/DeepLearningExamples PyTorch/Classification/ConvNets/resnet50v1.5/'
                'README.md), batch 112 (NGC\'s FP32 batch on 16 GB cards [recalled, unchecked]); the fit is 0.69 '
                'at batch 112-256, and 0.71 from the independent V100-SXM2 FP32 batch-128 342 ms/iteration point '
                '(sandeepkumar-skb/pytorch_experiments torchvision_exp/README.md)')
SRC_EFF_T4 = ('[FIT] fraction of the fp32 peak that makes the cost model reproduce ResNet-50 v1.5 FP32 '
              'inference (PyTorch eager, NGC pytorch-21.03) at batch 32 = 77.6 ms on a T4 ([third-party '
              'measurement], NVIDIA/DeepLearningExamples PyTorch/Classification/ConvNets/resnet50v1.5/'
              'README.md), with a framework overhead of 15 us per launch (our estimate of PyTorch eager\'s 10-20 '
              'us per op: NGC\'s batch-1 eager latency is 10-13 ms on every GPU); 0.52 with none. '
              'Below V100 because the 70 W T4 does not hold its boost clock under load')
SRC_TILE = ('[FIT] the power-of-two tile (32/64/128 tried) whose occupancy estimate best reproduces V100 '
            'TensorRT FP32 ResNet-50 latency at batch 1 and 8 (2.68 / 8.28 ms; model 3.34 / 8.13 ms with 64; '
            '1.67 / 7.84 with 32; 8.68 / 14.19 with 128), [third-party measurement, TensorRT 4, CUDA 9.0] '
            'https://gist.github.com/1duo/efd3be1dc8eb2c45863b75f20a76f8b2')
SRC_TILE_OTHER = ('assumption: the V100-fitted tile (64 x 64 reproduces V100 TensorRT FP32 ResNet-50 latency at '
                  'batch 1 and 8, https://gist.github.com/1duo/efd3be1dc8eb2c45863b75f20a76f8b2; see '
                  'traces/devices/README.md); no batch-1 measurement for this device')


def gemm_eff(conv, src_conv):
    """efficiency dict + sources for GPUs/CPUs: conv fitted/transferred, linear = conv, attention = half."""
    eff = {'conv': conv, 'linear': conv, 'attention': round(conv / 2, 3), 'norm': 1.0, 'pool': 1.0,
           'embedding': 1.0, 'elementwise': 1.0}
    mem_kind = ('assumption: memory-bound kind; its FLOPs are a few per element, so its time comes from the '
                'memory term and 1.0 means no extra derating of the (negligible) compute term')
    src = {
        'compute.efficiency.conv': src_conv,
        'compute.efficiency.linear': ('assumption: equal to the conv value (a dense layer is one cuBLAS/MKL GEMM, '
                                      'at least as efficient as an implicit-GEMM convolution); no public '
                                      'third-party dense-layer throughput found'),
        'compute.efficiency.attention': ('assumption: half the linear value; unfused attention runs per-head '
                                         'batched GEMMs with k = 64 plus a softmax, which reach a lower '
                                         'fraction of peak than large GEMMs; no public measurement found'),
        'compute.efficiency.norm': mem_kind, 'compute.efficiency.pool': mem_kind,
        'compute.efficiency.embedding': mem_kind, 'compute.efficiency.elementwise': mem_kind,
    }
    return eff, src


def kernels(launch_ns, src_launch):
    per = {'conv': 1, 'linear': 1, 'norm': 1, 'pool': 1, 'embedding': 1, 'attention': 3, 'elementwise': 1}
    one = ('assumption: one kernel per zoo layer; activation functions and residual adds are folded into the '
           'zoo layer that precedes them, as a fusing runtime would run them (an eager framework launches '
           'more: use the framework-overhead knob, README)')
    src = {'kernels.launch_ns': src_launch}
    for k in per:
        src['kernels.per_layer.' + k] = one
    src['kernels.per_layer.attention'] = ('assumption: 3 kernels for an unfused attention core: Q.K^T batched '
                                          'GEMM, softmax, attn.V batched GEMM')
    return {'launch_ns': launch_ns, 'per_layer': per}, src


GPU_LAUNCH = (5000, '[third-party measurement] 4-6 us per kernel launch, RTX 5070 Ti, CUDA 13 / driver 580 '
                    '(https://susun-blog.com/blog/pegainfer-3-cuda-graph); midpoint. This is the bare CUDA '
                    'launch cost; PyTorch eager adds 10-20 us of framework overhead per op (our estimate from '
                    'NGC\'s batch-1 eager latencies), modelled by the experiment-config knob '
                    'framework_overhead_ns, not here')

GPU_RUNTIME = {
    'context_create_ns': (84300000,
                          '[derived] 15.8 ms context creation (NVIDIA developer forum, "CUDA setup times: create '
                          'context, malloc, destroy context", 2010) + 68.5 ms cuModuleLoadDataEx in one nsys '
                          'profile (eunomia-bpf/bpftime#506), both [third-party measurement]; with lazy module '
                          'loading (the default of recent CUDA) expect tens of ms, without it hundreds '
                          '[recalled, unchecked: order of magnitude only]'),
    'stream_create_ns': (5000, 'assumption: no public measurement found; a driver call of the same order as '
                               'a kernel launch (4-6 us, kernels.launch_ns)'),
    'malloc_base_ns': (50000, '[third-party measurement] cudaMalloc is about 50 us flat from 4 KB to 512 KB '
                              '(https://www.cs.virginia.edu/~mwb7w/cuda_support/memory_management_overhead.html); '
                              'an nsys profile shows 10.6-481 us per call (eunomia-bpf/bpftime#506)'),
    'malloc_per_gib_ns': (1000000,
                          'assumption: order-of-magnitude placeholder (1 ms per GiB of page mapping); the '
                          'memory_management_overhead.html curve rises above 512 KB but gives no per-GiB number; '
                          'to be measured. gpumux policies that pre-allocate (PipeSwitch, Salus) never pay it on '
                          'the switch path'),
    'free_ns': (14000, '[third-party measurement] direct cudaFree of a small array about 14 us (GTX 1660 SUPER '
                       '/ RTX 2080 Ti, Cytnx-dev/Cytnx PR 850); cudaFree also synchronises the device'),
    'event_ns': (4000, '[derived] midpoint of 2-6 us for event record + host sync (assumption: no clean '
                       'measurement found; same order as cudaDeviceSynchronize 5.4 us under an interposer, '
                       'eunomia-bpf/bpftime#506 [third-party measurement])'),
    'pin_per_gib_ns': (1073741824, '[derived] page-locking runs at about 1 GB/s, i.e. ~1 ms per MB (4 x 128 MiB '
                                   'of cudaHostAlloc in 503 ms, kekzl/imp#1653; "~1-2 GB/s", openvm-org/'
                                   'stark-backend PR 384) => 2^30 B / 1e9 B/s = 1.074 s per GiB'),
}

# Process start (D10): a cold worker = interpreter + framework import + first-kernel library init + CUDA
# context (context_create_ns); building a model adds construction (base + per 10^6 parameters) and the weight read.
PROCESS_START = {
    'interpreter_start_ns': (59000000, '[our measurement] a bare Python child started with multiprocessing (spawn) '
                                       'sends its first message after 59 ms, CPython 3.11, 2-core VM'),
    'framework_import_ns': (1000000000, '[published + our measurement] import torch: 0.75 s (PyTorch CI, '
                                        'pytorch/pytorch#56041), 1.12 s (2022 workstation, furiosa-models#108), '
                                        '1.91-1.93 s (PyTorch 1.13, 2-core VM, ours); 1.0 s taken (range 0.75-1.9 s)'),
    'construct_base_ns': (100000000, '[derived] fixed part of t_construct = 0.1 s + 15 ms x params/10^6, fitted '
                                     'by us to torchvision 0.14 random-init construction on the 2-core VM [our '
                                     'measurement]: ResNet-50 0.44-0.45 s, ResNet-101 0.70-0.78 s, ResNet-152 '
                                     '0.89-1.02 s, VGG-16 2.04-2.11 s'),
    'construct_per_mparam_ns': (15000000, '[derived] 15 ms per 10^6 parameters (about 60 M parameters/s of default '
                                          'initialisation; the fit gives 15-18 ms), same fit and measurements as '
                                          'construct_base_ns'),
    'weight_read_gbps': (1.3, '[our measurement] torch.load of a state dict from a warm page cache on the 2-core '
                              'VM: VGG-16 553 MB in 430 ms = 1.29 GB/s, ResNets 70-120 ms; the slower, '
                              'larger-model rate. The stop-and-start baseline loads pretrained weights '
                              '(torch.hub.load(..., pretrained=True), netx-repo/PipeSwitch '
                              'kill_restart/kill_restart.py)'),
}
GPU_PROCESS = {
    'library_init_ns': (1000000000, '[published] the first kernel of a process initialises cuDNN/cuBLAS and loads '
                                    'modules: the first cuML handle took 3,822 ms including the context, later '
                                    'handles 5.4-5.7 ms (NVIDIA/cuml#1473); a fresh ONNX Runtime CUDA session\'s '
                                    'first inference 1.3-3.0 s (microsoft/onnxruntime#17711, #9667); 1 s taken. '
                                    'Context creation itself is context_create_ns'),
    'process_reap_ns': (300000000, '[published + recalled, unchecked] SIGKILL returns at once (0.01 s) while the '
                                   'process\'s device memory stays allocated until it is reaped and its '
                                   '/dev/nvidia* files close (sgl-project/sglang#36589, #32829, #37485; tens of '
                                   'seconds to minutes in bad cases with large pinned buffers); 0.1-1 s assumed for '
                                   'a typical teardown [recalled, unchecked]: 0.3 s, the geometric middle of that '
                                   'range'),
}

SHARING_GPU = {
    'timeslice_ns': (1024000, '[source code] Volta+ default TSG timeslice 128 << 3 = 1024 us, '
                              'NVIDIA/open-gpu-kernel-modules src/nvidia/src/kernel/gpu/fifo/arch/volta/'
                              'kernel_fifo_gv100.c, kfifoChannelGroupGetDefaultTimeslice_GV100'),
    'context_switch_ns': (50000, 'assumption from the literature ranges: context save/restore between time '
                                 'slices costs tens of us (GPreempt, USENIX ATC\'25: <= 40 us end-to-end '
                                 'preemption; Pascal graphics preemption < 100 us, NVIDIA\'s GTX 1080 launch '
                                 'material); 50 us taken'),
    'mps_efficiency': (0.9, 'assumption: 10% aggregate loss when MPS clients co-run (cache/bandwidth '
                            'interference); MPS results of the reproduced papers are held out for validation, '
                            'so this is deliberately not fitted to them. Gavel\'s space-sharing pairs '
                            '(simulation_throughputs.json) give V100 ResNet-50 x ResNet-50 normalised '
                            'aggregate throughputs of 0.63-1.0, a possible future fit'),
    'concurrent_efficiency': (0.95, 'assumption: streams of one context share one address space and L2 '
                                    'without context-switch cost; a smaller loss than MPS clients'),
}


def link(h2d, d2h, lat, pageable, peer):
    vals = {'h2d_gbps': h2d[0], 'd2h_gbps': d2h[0], 'h2d_latency_ns': lat[0], 'd2h_latency_ns': lat[0],
            'pageable_factor': pageable[0], 'peer_gbps': peer[0]}
    src = {'link.h2d_gbps': h2d[1], 'link.d2h_gbps': d2h[1], 'link.h2d_latency_ns': lat[1],
           'link.d2h_latency_ns': lat[1], 'link.pageable_factor': pageable[1], 'link.peer_gbps': peer[1]}
    return vals, src


PAGEABLE = (0.45, '[third-party measurement] pageable = 0.4-0.5 x pinned on PCIe 3 (5-6 vs 11-12 GB/s, '
                  'rapidsai/dask-cuda PR 98); midpoint')
LAT_GEN3 = (8500, '[derived] midpoint of t0 = 7-10 us per cudaMemcpyAsync on V100 / PCIe 3 (our estimate '
                  'between the 10 us constant overhead of the GTX 280 curve, https://www.cs.virginia.edu/~mwb7w/'
                  'cuda_support/memory_transfer_overhead.html, and 5-7 us on recent drivers, DualPath, arXiv '
                  '2602.21548 §5.2)')
BARE_GEN3 = ('[third-party measurement] pinned large copies on bare-metal PCIe 3.0 x16 run at 11-12 GB/s '
             '(rapidsai/dask-cuda PR 98; Titan X 11 GB/s in the NVIDIA developer forum thread "How to optimize '
             'data transfers in CUDA C/C++"; V100 ingress 12 GB/s, ZaidQureshi/bam#54); midpoint')


def profile_gpu(name, display, mem, sm, peaks, bw, mem_eff, eff, eff_src, lnk, extra_src, tile_src=SRC_TILE_OTHER):
    p = {
        'name': name, 'display_name': display, 'kind': 'gpu', 'memory_bytes': mem[0], 'sm_count': sm[0],
        'compute': {
            'fp32_tflops': peaks['fp32'][0], 'tf32_tflops': peaks['tf32'][0], 'fp16_tflops': peaks['fp16'][0],
            'bf16_tflops': peaks['bf16'][0], 'mem_bandwidth_gbps': bw[0], 'efficiency': None,
            'memory_efficiency': mem_eff[0], 'tile_m': TILE, 'tile_n': TILE},
        'kernels': None, 'link': None, 'runtime': {}, 'sharing': {}, 'sources': {}}
    s = p['sources']
    s['memory_bytes'], s['sm_count'] = mem[1], sm[1]
    for k in ('fp32', 'tf32', 'fp16', 'bf16'):
        s['compute.%s_tflops' % k] = peaks[k][1]
    s['compute.mem_bandwidth_gbps'] = bw[1]
    p['compute']['efficiency'], esrc = gemm_eff(eff, eff_src)
    s.update(esrc)
    s['compute.memory_efficiency'] = mem_eff[1]
    s['compute.tile_m'] = s['compute.tile_n'] = tile_src
    p['kernels'], ksrc = kernels(*GPU_LAUNCH)
    s.update(ksrc)
    p['link'], lsrc = lnk
    s.update(lsrc)
    for k, (v, src) in list(GPU_RUNTIME.items()) + list(PROCESS_START.items()) + list(GPU_PROCESS.items()):
        p['runtime'][k] = v
        s['runtime.' + k] = src
    for k, (v, src) in SHARING_GPU.items():
        p['sharing'][k] = v
        s['sharing.' + k] = src
    s.update(extra_src)
    return p


def profile_cpu(name, display, mem, cores, fp32, bw, mem_eff, conv_eff, conv_src, lin_eff, lin_src, launch):
    p = {
        'name': name, 'display_name': display, 'kind': 'cpu', 'memory_bytes': mem[0], 'sm_count': cores[0],
        'compute': {'fp32_tflops': fp32[0], 'tf32_tflops': 0, 'fp16_tflops': 0, 'bf16_tflops': 0,
                    'mem_bandwidth_gbps': bw[0], 'efficiency': None, 'memory_efficiency': mem_eff[0],
                    'tile_m': TILE, 'tile_n': TILE},
        'kernels': None,
        'link': {'h2d_gbps': 0, 'd2h_gbps': 0, 'h2d_latency_ns': 0, 'd2h_latency_ns': 0, 'pageable_factor': 0,
                 'peer_gbps': 0},
        'runtime': {'context_create_ns': 0, 'stream_create_ns': 0,
                    'malloc_base_ns': 0, 'malloc_per_gib_ns': 0, 'free_ns': 0, 'event_ns': 0,
                    'pin_per_gib_ns': 0, 'library_init_ns': 0, 'process_reap_ns': 0},
        'sharing': {'timeslice_ns': 0, 'context_switch_ns': 0, 'mps_efficiency': 1.0,
                    'concurrent_efficiency': 1.0},
        'sources': {}}
    s = p['sources']
    s['memory_bytes'], s['sm_count'] = mem[1], cores[1]
    s['compute.fp32_tflops'] = fp32[1]
    for k in ('tf32', 'fp16', 'bf16'):
        s['compute.%s_tflops' % k] = 'unsupported on this CPU (0 by the schema convention)'
    s['compute.mem_bandwidth_gbps'] = bw[1]
    eff, esrc = gemm_eff(conv_eff, conv_src)
    eff['linear'] = lin_eff
    eff['attention'] = round(lin_eff / 2, 3)
    esrc['compute.efficiency.linear'] = lin_src
    p['compute']['efficiency'] = eff
    s.update(esrc)
    s['compute.memory_efficiency'] = mem_eff[1]
    s['compute.tile_m'] = s['compute.tile_n'] = (
        'assumption: 64 x 64 output blocks per core (the GPU tile; oneDNN/MKL partition GEMMs into '
        'register-blocked panels per thread); occupancy = blocks / cores only matters for tiny layers')
    p['kernels'], ksrc = kernels(*launch)
    s.update(ksrc)
    na = 'not applicable to a CPU device (0 by the schema convention)'
    for k in p['link']:
        s['link.' + k] = na
    for k in p['runtime']:
        s['runtime.' + k] = na
    s['runtime.library_init_ns'] = na + ': no CUDA libraries; MKL/oneDNN initialisation is assumed negligible'
    s['runtime.process_reap_ns'] = na + ': gpumux tracks no host memory, so nothing waits for the reap'
    for k, (v, src) in PROCESS_START.items():  # a CPU worker starts and builds its model like a GPU one
        p['runtime'][k] = v
        s['runtime.' + k] = src
    s['sharing.timeslice_ns'] = 'no GPU time slicing on a CPU device (0 by the schema convention)'
    s['sharing.context_switch_ns'] = na
    s['sharing.mps_efficiency'] = na + ' (1.0 = no derating)'
    s['sharing.concurrent_efficiency'] = ('assumption: 1.0; co-running CPU ops are modelled by dividing the '
                                          'core pool, not by a derating factor')
    return p


# --------------------------------------------------------------------------------------------------
# Device data
# --------------------------------------------------------------------------------------------------
V100_DS = ('[DS] NVIDIA Tesla V100 datasheet, V100 SXM2 column '
           '(https://images.nvidia.com/content/technologies/volta/pdf/tesla-volta-v100-datasheet-letter-fnl-web.pdf, '
           'as recalled)')
T4_DS = ('[DS] NVIDIA T4 datasheet '
         '(https://www.nvidia.com/content/dam/en-zz/Solutions/Data-Center/tesla-t4/t4-tensor-core-datasheet-951643.pdf, '
         'as recalled)')
TURING_WP = ('NVIDIA Turing architecture whitepaper (https://images.nvidia.com/aem-dam/en-zz/Solutions/'
             'design-visualization/technologies/turing-architecture/NVIDIA-Turing-Architecture-Whitepaper.pdf, '
             'as recalled)')
H100_DS = ('[datasheet] H100 SXM specifications (https://glennklockwood.com/garden/processors/h100; '
           'https://archive-lib.hpctech.co.jp/gpuproduct/nvidia-h100.html)')
P100_DS = ('[DS] NVIDIA Tesla P100 PCIe datasheet '
           '(https://images.nvidia.com/content/tesla/pdf/nvidia-tesla-p100-PCIe-datasheet.pdf, as recalled)')
GTX1080TI = ('[DS] NVIDIA GeForce GTX 1080 Ti specifications '
             '(https://www.nvidia.com/en-us/geforce/graphics-cards/geforce-gtx-1080-ti/specifications/, as recalled)')
RTX2080TI = ('[DS] NVIDIA GeForce RTX 2080 Ti specifications '
             '(https://www.nvidia.com/en-us/geforce/graphics-cards/rtx-2080-ti/, as recalled)')
NO_TF32 = 'unsupported on this architecture (TF32 arrived with Ampere); 0 by the schema convention'
NO_BF16 = 'unsupported on this architecture (BF16 tensor cores arrived with Ampere); 0 by the schema convention'
MEM_EFF_GUESS = (0.79, 'assumption: mean of the measured D2D/peak ratios of V100 (739.8/900 = 0.82) and T4 '
                       '(239.6/320 = 0.75) in the router-gao/cuda-demo bandwidthTest runs; no bandwidth '
                       'measurement of this GPU available')
SWITCHFLOW_A = ('SwitchFlow server A (SwitchFlow, Middleware\'21, evaluation setup [published]): GTX 1080 Ti + '
                'RTX 2080 Ti, 11 GB each')
PASCAL_SLICE = ('assumption: the Volta+ default (1024 us, [source code] NVIDIA/open-gpu-kernel-modules '
                'kernel_fifo_gv100.c) also for Pascal, whose driver code is not in the open kernel modules; Tegra '
                'nvgpu uses the same 1024 us default (OE4T/linux-tegra-5.10 drivers/gpu/nvgpu/include/nvgpu/tsg.h)')

A100_DS = ('[DS] NVIDIA A100 Tensor Core GPU datasheet, A100 40GB SXM column '
           '(https://www.nvidia.com/content/dam/en-zz/Solutions/Data-Center/a100/pdf/nvidia-a100-datasheet.pdf, '
           'as recalled)')
AMPERE_WP = ('NVIDIA A100 Tensor Core GPU architecture whitepaper (https://images.nvidia.com/aem-dam/en-zz/Solutions/'
             'data-center/nvidia-ampere-architecture-whitepaper.pdf, as recalled)')
DGX_A100_BW = ('bandwidthTest (cuda-samples v11.4, pinned) on a DGX A100 (A100-SXM4-80GB, PCIe 4.0 host link), public '
               'notes by gengwg')
GCP_A2_GEN3 = ('CAVEAT [recalled, unchecked]: GCP A2 VMs are recalled to run on Intel Cascade Lake hosts, whose '
               'root ports are PCIe 3.0; if so, the a2-highgpu-1g host link is Gen3-limited like the A100-SXM4-40GB '
               'cloud VM of router-gao/cuda-demo (bandwidthTest H2D 12.3 / D2H 13.2 GB/s [third-party '
               'measurement]); re-check on the VM')


def devices():
    out = []
    # ---------------- V100 (p3.2xlarge) ----------------
    out.append(profile_gpu(
        'v100-pcie3x16', 'NVIDIA V100-SXM2 16GB, PCIe 3.0 x16 host link (AWS p3.2xlarge)',
        (16 * GIB, V100_DS + ': 16 GB HBM2, taken as 16 GiB (four 4 GiB HBM2 stacks); the driver and ECC '
                   'reserve part of it, not modelled'),
        (80, '[DS] Volta architecture whitepaper: Tesla V100 has 80 SMs (https://images.nvidia.com/content/'
             'volta-architecture/pdf/volta-architecture-whitepaper.pdf, as recalled); p3.2xlarge = 1 x V100 16 GB '
             '(netx-repo/PipeSwitch README.md)'),
        {'fp32': (15.7, V100_DS + ': single precision 15.7 TFLOPS (5120 cores x 2 x 1.53 GHz)'),
         'tf32': (0, NO_TF32),
         'fp16': (125, V100_DS + ': tensor performance 125 TFLOPS (640 tensor cores)'),
         'bf16': (0, NO_BF16)},
        (900, V100_DS + ': memory bandwidth 900 GB/s'),
        (0.82, '[derived] bandwidthTest device-to-device 739.8 GB/s on a V100-SXM2-16GB cloud VM [third-party '
               'measurement] (router-gao/cuda-demo cuda-samples/02-cuda-bandwidth.md; bandwidthTest counts read + '
               'write) / 900 GB/s peak = 0.82'),
        EFF_V100, SRC_EFF_V100,
        link((9.6, '[third-party measurement] bandwidthTest H2D pinned 32 MB on a V100-SXM2-16GB cloud VM: 9.6 '
                   'GB/s (router-gao/cuda-demo cuda-samples/02-cuda-bandwidth.md); p3.2xlarge is such a cloud VM '
                   '(bare metal reaches 11-12)'),
             (11.4, '[third-party measurement] same bandwidthTest run, D2H 11.4 GB/s (router-gao/cuda-demo)'),
             LAT_GEN3, PAGEABLE,
             (9.6, 'assumption: p3.2xlarge has a single GPU; a GPU-to-GPU copy would be staged through host '
                   'memory, bounded by the slower direction, min(h2d, d2h)')),
        {}, tile_src=SRC_TILE))
    # ---------------- T4 (g4dn.2xlarge) ----------------
    out.append(profile_gpu(
        't4-pcie3x8', 'NVIDIA T4 16GB, PCIe 3.0 x8 host link (AWS g4dn.2xlarge)',
        (16 * GIB, T4_DS + ': 16 GB GDDR6, taken as 16 GiB'),
        (40, '[DS] ' + TURING_WP + ': Tesla T4 has 40 SMs (2560 CUDA cores, 320 tensor cores)'),
        {'fp32': (8.1, T4_DS + ': single precision 8.1 TFLOPS'),
         'tf32': (0, NO_TF32),
         'fp16': (65, T4_DS + ': mixed precision (FP16/FP32) 65 TFLOPS'),
         'bf16': (0, NO_BF16)},
        (320, T4_DS + ': GDDR6 320 GB/s (256-bit x 10 Gbps / 8)'),
        (0.75, '[derived] bandwidthTest device-to-device 239.6 GB/s on a T4 cloud VM [third-party measurement] '
               '(router-gao/cuda-demo cuda-samples/02-cuda-bandwidth.md) / 320 GB/s = 0.75'),
        EFF_T4, SRC_EFF_T4,
        link((4.85, '[derived] PCIe 3.0 x8 raw ceiling 7.88 GB/s (8 GT/s x 8 lanes x 128/130 / 8) x the H2D '
                    'efficiency a T4 reaches on a x16 cloud VM, 9.7 / 15.75 [third-party measurement, '
                    'bandwidthTest, router-gao/cuda-demo]: 7.88 x 0.616 = 4.85 GB/s. A rougher estimate, half '
                    'the x16 pinned rate, gives ~5.5-6 GB/s for x8 [derived]'),
             (5.55, '[derived] 7.88 GB/s x the D2H efficiency on x16, 11.1 / 15.75 [third-party measurement, '
                    'router-gao/cuda-demo]: 5.55 GB/s'),
             LAT_GEN3, PAGEABLE,
             (4.85, 'assumption: g4dn.2xlarge has a single GPU; staged through host, min(h2d, d2h)')),
        {}))
    # ---------------- H100 SXM ----------------
    out.append(profile_gpu(
        'h100-sxm', 'NVIDIA H100 80GB HBM3 (SXM5), PCIe Gen5 x16 host link',
        (80 * GIB, H100_DS + ': 80 GB HBM3, taken as 80 GiB (five 16 GiB stacks); the project\'s VM reports '
                   'about 78 GiB usable'),
        (132, H100_DS + ': 132 SMs (confirmed on the project\'s GPU, docs/results/gpu-2026-11-25/README.md)'),
        {'fp32': (66.9, H100_DS + ': FP32 66.9 TFLOPS'),
         'tf32': (494.7, H100_DS + ': TF32 tensor 494.7 TFLOPS dense'),
         'fp16': (989, H100_DS + ': FP16 tensor 989 TFLOPS dense (1979 with 2:4 sparsity)'),
         'bf16': (989, H100_DS + ': BF16 tensor 989 TFLOPS dense')},
        (3350, H100_DS + ': HBM3 3.35 TB/s'),
        (0.90, '[derived] D2D copy about 3.0 TB/s (read + write counted) measured on the project\'s H100 before '
               'the recorded GPU sessions (not under docs/results) / 3.35 TB/s = 0.90'),
        EFF_V100,
        ('assumption: the V100 fp32 fit (' + SRC_EFF_V100[6:] + ') transferred: no public third-party H100 '
         'ResNet-50 throughput was available offline. For tensor-core precisions the fits are much lower '
         '(README: A100 NGC TF32 0.18, AMP 0.26 of tensor peak for convolution) while a large bf16 GEMM (8192^3) '
         'reaches 798/989 = 0.81 on the project\'s H100 (measured before the recorded GPU sessions)'),
        link((55.0, '[third-party measurement] nvbandwidth v0.10 host_to_device_memcpy_ce 55.33-55.37 GB/s on 8 x '
                    'H100 80GB HBM3 (HGX, Xeon Platinum 8462Y+, CUDA 13.2, driver 595.71), a public benchmark log '
                    'found by code search whose repository was not identified; to check inside the project\'s '
                    'Firecracker VM'),
             (55.0, '[third-party measurement] nvbandwidth device_to_host_memcpy_ce 55.18-55.26 GB/s, same log'),
             (6000, '[third-party measurement] 5-7 us per cudaMemcpyAsync call (DualPath, arXiv 2602.21548 §5.2); '
                    'midpoint'),
             (0.45, 'assumption: no H100 pageable measurement found; the PCIe 3 ratio 0.4-0.5 x pinned is kept'),
             (365.0, '[third-party measurement] NVLink P2P unidirectional 365-394 GB/s (p2pBandwidthLatencyTest on '
                     'the same 8 x H100 HGX node, same log); lower end. Applies to an HGX node; the project\'s VM '
                     'has one GPU')),
        {}))
    # ---------------- A100-SXM4-40GB (GCP a2-highgpu-1g) ----------------
    p = profile_gpu(
        'a100-sxm4-40gb', 'NVIDIA A100-SXM4-40GB, PCIe 4.0 x16 host link (GCP a2-highgpu-1g)',
        (40 * GIB, A100_DS + ': 40 GB HBM2, taken as 40 GiB (HBM2 stacks come in binary sizes); the driver and ECC '
                   'reserve part of it, not modelled. a2-highgpu-1g = 1 x A100-SXM4-40GB (tally-project/tally-bench '
                   'README.md)'),
        (108, '[DS] ' + AMPERE_WP + ': A100 has 108 SMs (6912 FP32 cores, 432 tensor cores); ' + A100_DS[5:]),
        {'fp32': (19.5, A100_DS + ': FP32 19.5 TFLOPS (6912 cores x 2 x 1.41 GHz boost)'),
         'tf32': (156, A100_DS + ': TF32 tensor 156 TFLOPS dense (312 with 2:4 sparsity)'),
         'fp16': (312, A100_DS + ': FP16 tensor 312 TFLOPS dense (624 with 2:4 sparsity)'),
         'bf16': (312, A100_DS + ': BF16 tensor 312 TFLOPS dense (624 with 2:4 sparsity)')},
        (1555, A100_DS + ': HBM2 1,555 GB/s (the 80 GB HBM2e part has 2,039 GB/s)'),
        MEM_EFF_GUESS,
        EFF_V100,
        ('assumption: the V100 fp32 fit transferred, as for the h100-sxm profile (' + SRC_EFF_V100[6:] + '). '
         'No public FP32 ResNet-50 or BERT measurement of an A100 was found: the public A100 numbers are NGC '
         'ResNet-50 training on an A100 80GB (HBM2e, 2,039 GB/s) at TF32 938 / AMP 2,470 img/s (NVIDIA/DeepLearningExamples PyTorch/Classification/ConvNets/resnet50v1.5/README.md) and '
         'Triton client-observed latencies of an A100 80GB (NVIDIA/DeepLearningExamples '
         'PyTorch/Classification/ConvNets/triton/resnet50/README.md), i.e. another memory system and tensor-core '
         'precisions, which '
         'this fp32-calibrated value cannot take (the TF32 938 img/s would need 1.61 > 1 of the fp32 peak; against '
         'the tensor peaks they fit 0.18 TF32 / 0.26 FP16, README). Not fitted to Tally\'s A100-40GB BERT-base '
         'results (tally-project/tally-bench): held out for validation'),
        link((25.7, '[third-party measurement] H2D 25.7 GB/s, ' + DGX_A100_BW + '; cross-checks: nvbandwidth '
                    'host_to_device_memcpy_sm 25.13 GB/s on an A100-SXM4-40GB (NVIDIA/nvbandwidth#42) and BaM "peak '
                    'x16 PCIe Gen4 is 25GBps" on A100 (ZaidQureshi/bam#54). ' + GCP_A2_GEN3),
             (25.8, '[third-party measurement] D2H 25.8 GB/s, ' + DGX_A100_BW + '. ' + GCP_A2_GEN3),
             (6000, '[third-party measurement] 5-7 us per cudaMemcpyAsync call on recent drivers (DualPath, arXiv '
                    '2602.21548 §5.2); midpoint, as in h100-sxm; no A100-specific per-copy number'),
             (0.40, '[derived] pageable / pinned in the same DGX A100 bandwidthTest: H2D 10.0 / 25.7 = 0.389, D2H 10.8 '
                    '/ 25.8 = 0.419 [third-party measurement] (the same gengwg notes); mean 0.40 (a Dell A100 80GB '
                    'PCIe host in those notes gives 0.19 / 0.35: 0.2-0.4 for PCIe 4 hosts)'),
             (25.7, 'assumption: a2-highgpu-1g has a single GPU; a GPU-to-GPU copy would be staged through host '
                    'memory, bounded by the slower direction, min(h2d, d2h)')),
        {})
    p['sources']['sharing.timeslice_ns'] += ('; the GV100 HAL is used for every chip except T234D/T264D, so the '
                                             'default also holds for Ampere ([source code] the HAL table '
                                             'generated in NVIDIA/open-gpu-kernel-modules)')
    p['sources']['sharing.context_switch_ns'] += ('; the same 50 us for A100 (range 20-200 us; unmeasured on '
                                                  'A100 too)')
    out.append(p)
    # ---------------- GTX 1080 Ti (SwitchFlow server A) ----------------
    p = profile_gpu(
        'gtx1080ti', 'NVIDIA GeForce GTX 1080 Ti 11GB, PCIe 3.0 x16 host link (SwitchFlow server A)',
        (11 * GIB, GTX1080TI + ': 11 GB GDDR5X, taken as 11 GiB; ' + SWITCHFLOW_A),
        (28, '[derived] 3584 CUDA cores (spec page) / 128 cores per Pascal GP102 SM = 28 SMs'),
        {'fp32': (11.34, '[derived] 3584 cores x 2 FLOP x 1.582 GHz boost clock (%s) = 11.34 TFLOPS' % GTX1080TI),
         'tf32': (0, NO_TF32),
         'fp16': (0, 'no tensor cores (Pascal GP102; its FP16 arithmetic runs at 1/64 of FP32), 0 by the '
                     'schema convention'),
         'bf16': (0, NO_BF16)},
        (484, GTX1080TI + ': 11 Gbps GDDR5X x 352-bit / 8 = 484 GB/s'),
        MEM_EFF_GUESS,
        EFF_V100,
        'assumption: the V100 fp32 fit transferred (same cuDNN CUDA-core fp32 kernels class); ' + SRC_EFF_V100[6:],
        link((11.5, BARE_GEN3), (11.5, BARE_GEN3), LAT_GEN3, PAGEABLE,
             (11.5, 'assumption: GeForce cards of different generations cannot use P2P; a GPU-to-GPU copy is '
                    'staged through host memory, bounded by min(h2d, d2h)')),
        {})
    p['sharing']['timeslice_ns'] = 1024000
    p['sources']['sharing.timeslice_ns'] = PASCAL_SLICE
    out.append(p)
    # ---------------- RTX 2080 Ti (SwitchFlow server A) ----------------
    out.append(profile_gpu(
        'rtx2080ti', 'NVIDIA GeForce RTX 2080 Ti 11GB, PCIe 3.0 x16 host link (SwitchFlow server A)',
        (11 * GIB, RTX2080TI + ': 11 GB GDDR6, taken as 11 GiB; ' + SWITCHFLOW_A),
        (68, '[DS] ' + TURING_WP + ': RTX 2080 Ti (TU102) has 68 SMs, 4352 CUDA cores, 544 tensor cores'),
        {'fp32': (13.45, '[derived] 4352 cores x 2 FLOP x 1.545 GHz reference boost clock (%s) = 13.45 TFLOPS '
                         '(the Founders Edition boosts to 1.635 GHz, 14.2 TFLOPS); SwitchFlow does not name the '
                         'board' % RTX2080TI),
         'tf32': (0, NO_TF32),
         'fp16': (53.8, '[recalled, unchecked] ' + TURING_WP + ', appendix: RTX 2080 Ti peak FP16 tensor TFLOPS with FP32 '
                        'accumulate 53.8 at the reference clock (GeForce runs FP32-accumulate at half the '
                        'FP16-accumulate rate, 107.6)'),
         'bf16': (0, NO_BF16)},
        (616, RTX2080TI + ': 14 Gbps GDDR6 x 352-bit / 8 = 616 GB/s'),
        MEM_EFF_GUESS,
        EFF_V100,
        'assumption: the V100 fp32 fit transferred (same cuDNN CUDA-core fp32 kernels class); ' + SRC_EFF_V100[6:],
        link((11.5, BARE_GEN3), (11.5, BARE_GEN3), LAT_GEN3, PAGEABLE,
             (11.5, 'assumption: no P2P between a GTX 1080 Ti and an RTX 2080 Ti without an NVLink bridge; a copy '
                    'is staged through host memory, bounded by min(h2d, d2h)')),
        {}))
    # ---------------- P100 (Salus) ----------------
    p = profile_gpu(
        'p100-pcie3x16', 'NVIDIA Tesla P100 PCIe 16GB, PCIe 3.0 x16 host link (Salus\' likely GPU)',
        (16 * GIB, P100_DS + ': 16 GB CoWoS HBM2, taken as 16 GiB; Salus\' GPU is 16 GB class (its experiments cap '
                   'memory at 14 GiB, SymbioticLab/Salus --phymem), P100 [recalled, unchecked]'),
        (56, '[derived] 3584 FP32 cores / 64 cores per GP100 SM = 56 SMs (P100 datasheet / Pascal whitepaper)'),
        {'fp32': (9.3, P100_DS + ': single precision 9.3 TFLOPS'),
         'tf32': (0, NO_TF32),
         'fp16': (18.7, P100_DS + ': half precision 18.7 TFLOPS. NOTE: P100 has no tensor cores; this is its '
                        'packed-FP16 (half2) CUDA-core rate, kept because it is the rate an FP16 model would run at'),
         'bf16': (0, NO_BF16)},
        (732, P100_DS + ': 732 GB/s for the 16 GB board (549 GB/s for 12 GB)'),
        MEM_EFF_GUESS,
        EFF_V100,
        'assumption: the V100 fp32 fit transferred (same cuDNN CUDA-core fp32 kernels class); ' + SRC_EFF_V100[6:],
        link((11.5, BARE_GEN3), (11.5, BARE_GEN3), LAT_GEN3, PAGEABLE,
             (11.5, 'assumption: staged through host memory or PCIe P2P under one switch, both bounded by the '
                    'PCIe 3.0 x16 rate; min(h2d, d2h) taken')),
        {})
    p['sources']['sharing.timeslice_ns'] = PASCAL_SLICE
    out.append(p)
    # ---------------- CPUs ----------------
    cpu_conv_src = ('assumption informed by [recalled, unchecked] public oneDNN/MKL-DNN results: direct fp32 convolutions of '
                    'ResNet-50 reach roughly 70-80% of the AVX-512 peak on Skylake-SP (Georganas et al., '
                    '"Anatomy of High-Performance Deep Learning Convolutions on SIMD Architectures", SC 2018); '
                    'discounted to 0.6 because fp32_tflops here uses the base clock and AVX-heavy code runs at '
                    'a lower licence frequency, and framework integration adds reorders')
    cpu_lin_src = ('assumption informed by [recalled, unchecked] Intel MKL SGEMM benchmark pages: large fp32 GEMMs reach roughly '
                   '80-90% of peak; discounted to 0.7 for the same clock reason as conv')
    cpu_launch = (2000, 'assumption: per-op cost of an OpenMP parallel region fork/join on tens of threads is '
                        'order 1-10 us [recalled, unchecked: EPCC OpenMP micro-benchmarks]; 2 us taken. Eager-framework dispatch '
                        'is the separate framework_overhead_ns knob')
    out.append(profile_cpu(
        'xeon-2x18', 'Dual 18-core Intel Xeon, AVX-512 + MKL-DNN class (SwitchFlow servers), modelled as 2 x '
                     'Xeon Gold 6140 (Skylake-SP, 2.3 GHz)',
        (256 * GIB, 'assumption: SwitchFlow reports > 250 GB RAM (SwitchFlow, Middleware\'21, evaluation setup); '
                    '256 GiB, the nearest standard size, all of it usable for models'),
        (36, '[published] dual 18-core Xeon (SwitchFlow, Middleware\'21, evaluation setup): 36 cores '
             '(hyper-threads not counted: they share the FMA units)'),
        (5.2992, '[derived] 36 cores x 2.3 GHz x 64 fp32 FLOP/cycle (AVX-512: 16 fp32 lanes x 2 FLOP per FMA x 2 FMA '
                 'units on Xeon Gold 6100/Platinum) = 5.30 TFLOPS. The CPU model is an assumption (SwitchFlow '
                 'names only "dual 18-core Xeon"); Gold 6140 = 18 cores, 2.3 GHz base, 2 AVX-512 FMA units '
                 '[datasheet: Intel ARK, as recalled]'),
        (255.9, '[derived] 2 sockets x 6 DDR4-2666 channels x 8 B x 2.666 GT/s = 255.9 GB/s (Skylake-SP memory '
                'configuration, Intel ARK, as recalled)'),
        (0.75, 'assumption: STREAM triad on Skylake-SP reaches about 75-80% of the theoretical DRAM bandwidth '
               '[recalled, unchecked]'),
        0.6, cpu_conv_src, 0.7, cpu_lin_src, cpu_launch))
    out.append(profile_cpu(
        'xeon-e5-2686v4-8vcpu', 'Intel Xeon E5-2686 v4 (Broadwell, AVX2), 8 vCPUs = 4 cores (AWS p3.2xlarge host)',
        (61 * GIB, '[DS] AWS EC2 P3 instance table: p3.2xlarge has 61 GiB memory and 8 vCPUs (https://aws.amazon.com/'
                   'ec2/instance-types/p3/, as recalled; netx-repo/PipeSwitch README.md); all of it usable for models '
                   '(assumption)'),
        (4, '[derived] 8 vCPUs = 4 physical cores x 2 hyper-threads (EC2 exposes 2 vCPUs per core on Intel instances); '
            'hyper-threads share the FMA units, so 4 cores count for compute'),
        (0.2944, '[derived] 4 cores x 2.3 GHz base x 32 fp32 FLOP/cycle (AVX2: 8 fp32 lanes x 2 FLOP per FMA x 2 FMA '
                 'units on Broadwell) = 0.294 TFLOPS; 2.3 GHz base / 2.7 GHz all-core turbo per the AWS P3 page '
                 '[datasheet, as recalled]'),
        (76.8, '[derived] Broadwell-EP socket: 4 DDR4-2400 channels x 8 B x 2.4 GT/s = 76.8 GB/s; the VM shares the socket'),
        (0.45, 'assumption: 4 of the socket\'s cores draw about half of its DRAM bandwidth (single Broadwell cores '
               'sustain roughly 10 GB/s each [recalled, unchecked])'),
        0.6, cpu_conv_src.replace('AVX-512 peak on Skylake-SP', 'SIMD peak on Skylake-SP (AVX2 on Broadwell is '
                                  'assumed alike)'),
        0.7, cpu_lin_src, cpu_launch))
    return hopper_measured.apply(out)


# --------------------------------------------------------------------------------------------------
# Schema check (mirrors the strict C++ loader: exact key sets, numbers, one source per number)
# --------------------------------------------------------------------------------------------------
SCHEMA = {
    'name': str, 'display_name': str, 'kind': str, 'memory_bytes': int, 'sm_count': int,
    'compute': {'fp32_tflops': float, 'tf32_tflops': float, 'fp16_tflops': float, 'bf16_tflops': float,
                'mem_bandwidth_gbps': float,
                'efficiency': {k: float for k in ('conv', 'linear', 'attention', 'norm', 'pool', 'embedding',
                                                  'elementwise')},
                'memory_efficiency': float, 'tile_m': int, 'tile_n': int},
    'kernels': {'launch_ns': int, 'per_layer': {k: int for k in ('conv', 'linear', 'norm', 'pool', 'embedding',
                                                                   'attention', 'elementwise')}},
    'link': {'h2d_gbps': float, 'd2h_gbps': float, 'h2d_latency_ns': int, 'd2h_latency_ns': int,
             'pageable_factor': float, 'peer_gbps': float},
    'runtime': dict({k: int for k in ('context_create_ns', 'stream_create_ns', 'malloc_base_ns',
                                      'malloc_per_gib_ns', 'free_ns', 'event_ns', 'pin_per_gib_ns',
                                      'interpreter_start_ns', 'framework_import_ns', 'library_init_ns',
                                      'construct_base_ns', 'construct_per_mparam_ns', 'process_reap_ns')},
                    weight_read_gbps=float),
    'sharing': {'timeslice_ns': int, 'context_switch_ns': int, 'mps_efficiency': float,
                'concurrent_efficiency': float},
    'sources': dict,
}


def check(p):
    errs, numbers = [], []

    def walk(obj, schema, path):
        if set(obj) != set(schema):
            errs.append('%s: keys differ: missing %s, unknown %s' % (path or '.', sorted(set(schema) - set(obj)),
                                                                     sorted(set(obj) - set(schema))))
        for k, t in schema.items():
            if k not in obj:
                continue
            v, sub = obj[k], (path + '.' + k if path else k)
            if isinstance(t, dict):
                walk(v, t, sub)
            elif t is dict:
                if not isinstance(v, dict):
                    errs.append(sub + ': not an object')
            elif t is str:
                if not isinstance(v, str):
                    errs.append(sub + ': not a string')
            else:
                if isinstance(v, bool) or not isinstance(v, (int, float)) or (t is int and not isinstance(v, int)):
                    errs.append('%s: expected %s' % (sub, t.__name__))
                elif v < 0:
                    errs.append(sub + ': negative')
                numbers.append(sub)
    walk(p, SCHEMA, '')
    for n in numbers:
        if not p['sources'].get(n):
            errs.append('sources: no source for ' + n)
    for k in p['sources']:
        if k not in numbers:
            errs.append('sources: %s is not a number of the profile' % k)
    if p['kind'] not in ('gpu', 'cpu'):
        errs.append('kind: must be gpu or cpu')
    for k, v in p['compute']['efficiency'].items():
        if not 0 < v <= 1:
            errs.append('compute.efficiency.%s: must be in (0, 1]' % k)
    return errs


def render(p):
    return json.dumps(p, indent=1, ensure_ascii=True) + '\n'


def main(argv):
    check_only = '--check' in argv
    rc = 0
    os.makedirs(OUT, exist_ok=True)
    for p in devices():
        # JSON numbers: keep integers as integers, floats as floats
        errs = check(p)
        if errs:
            for e in errs:
                print('error: %s: %s' % (p['name'], e), file=sys.stderr)
            rc = 1
            continue
        path = os.path.join(OUT, p['name'] + '.json')
        text = render(p)
        if check_only:
            old = open(path).read() if os.path.exists(path) else None
            if old != text:
                print('differs: %s' % path)
                rc = 1
        else:
            with open(path, 'w') as f:
                f.write(text)
            print('wrote %s (%d sourced numbers)' % (path, len(p['sources'])))
    return rc


if __name__ == '__main__':
    # --help prints the docstring and exits before any file is read or written.
    if any(a in ("-h", "--help") for a in sys.argv[1:]):
        print(__doc__.strip())
        sys.exit(0)
    sys.exit(main(sys.argv[1:]))
