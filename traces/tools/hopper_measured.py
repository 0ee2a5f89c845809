"""The lent Hopper cards' measured values, applied to the generated profiles (make_device_profiles.py).

On 2026-11-26 the project's GPU session measured, on one H100 80GB HBM3 and one H200 (driver
580.159.04, Firecracker VMs), how two contexts share the GPU (experiments/gpu/sharing_probe.cu,
docs/fidelity.md "How the GPU shares itself", D55). Each profile takes only its own card's numbers.
h200-sxm is derived from h100-sxm: the same processor and host link, the H200's memory.
Stdlib only; no file is read or written here.
"""
import copy

RESULTS = 'docs/results/gpu-2026-11-26'

# card -> (slice ns, switch ns, run median ms, gap median ms, the calls that measured it). Medians
# over both processes and both repeats (40 runs, 36 gaps; each process's first and last gap are
# left out, the other process's start or end can cut them short); switch = (gap - run) / 2.
SHARING = {
    'h100-sxm': (2048000, 231000, 2.048, 2.509, 'calls 5 and 6 (call5-h100-sharing_probe*, call6-h100-sharing*)'),
    'h200-sxm': (2054000, 222000, 2.054, 2.498, 'call 4, two runs (call4-sharing_probe-run1/2*)'),
}


def _set_sharing(p):
    slice_ns, switch_ns, run_ms, gap_ms, calls = SHARING[p['name']]
    p['sharing']['timeslice_ns'] = slice_ns
    p['sharing']['context_switch_ns'] = switch_ns
    where = '%s, %s' % (RESULTS, calls)
    p['sources']['sharing.timeslice_ns'] = (
        '[our GPU measurement] experiments/gpu/sharing_probe.cu on the lent card, 2026-11-26 (%s): two processes '
        '(contexts, no MPS) each running one wave of 50 ms blocks alternate on the GPU in runs of %.3f ms '
        '(median of 40), read off %%globaltimer jumps; a 1-block kernel from a second process waited for the '
        'rest of the running context\'s slice (counted from its start), or one switch once it had expired, '
        'as the device model\'s round robin does (sim_device.cpp). The driver source\'s Volta+ default is '
        '1024 us (open-gpu-kernel-modules kernel_fifo_gv100.c); this card, in this VM with this driver, '
        'slices at about twice that' % (where, run_ms))
    p['sources']['sharing.context_switch_ns'] = (
        '[our GPU measurement] experiments/gpu/sharing_probe.cu on the lent card, 2026-11-26 (%s): a context\'s gap '
        'between its runs is %.3f ms (median of 36) against the other context\'s %.3f ms run, so each of the '
        'two switches in a gap costs (gap - run) / 2 with every SM holding 2 blocks of 1024 spinning '
        'threads (their state saved and restored). Was 50 us, an assumption from the literature ranges '
        '(GPreempt <= 40 us, Pascal graphics preemption < 100 us)' % (where, gap_ms, run_ms))


def _h200_from(h100):
    p = copy.deepcopy(h100)
    p['name'] = 'h200-sxm'
    p['display_name'] = 'NVIDIA H200 141GB HBM3e (SXM), PCIe Gen5 x16 host link'
    same = (' [H200: the H100\'s processor and host link, so the H100 value is kept (NVIDIA H200 Tensor Core '
            'GPU datasheet: the H100\'s compute rates, PCIe Gen5 128 GB/s)]')
    for k in p['sources']:
        p['sources'][k] += same
    p['memory_bytes'] = 143771 * (1 << 20)
    p['sources']['memory_bytes'] = (
        '[our GPU measurement] nvidia-smi on the lent H200: 143771 MiB total (%s/call1-build.log, first line); the '
        'datasheet\'s 141 GB HBM3e' % RESULTS)
    p['compute']['mem_bandwidth_gbps'] = 4800
    p['sources']['compute.mem_bandwidth_gbps'] = '[DS] NVIDIA H200 Tensor Core GPU datasheet: HBM3e 4.8 TB/s'
    return p


def apply(profiles):
    """Sets the measured sharing of h100-sxm and appends h200-sxm after it; returns the list."""
    out = []
    for p in profiles:
        if p['name'] == 'h100-sxm':
            h200 = _h200_from(p)  # from the datasheet-only H100 profile, before its measurements
            _set_sharing(p)
            _set_sharing(h200)
            out += [p, h200]
        else:
            out.append(p)
    return out


if __name__ == '__main__':
    # A module of make_device_profiles.py: run alone (or with --help) it only prints what it holds.
    print(__doc__.strip())
    print('\nUsage: imported by traces/tools/make_device_profiles.py; nothing to run.\n')
    for card, (slice_ns, switch_ns, run_ms, gap_ms, calls) in SHARING.items():
        print('%s: timeslice_ns %d, context_switch_ns %d (run %.3f ms, gap %.3f ms; %s)'
              % (card, slice_ns, switch_ns, run_ms, gap_ms, calls))
