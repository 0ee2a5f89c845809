#!/usr/bin/python3
"""Analytic per-layer time model of gpumux (the reference implementation of the cost model that
traces/devices/README.md and traces/formats.md describe), for checking device profiles against
public measurements.

Usage:
  /usr/bin/python3 traces/tools/predict_layer_times.py MODEL DEVICE [options]
    MODEL   zoo name (traces/models/MODEL.json) or a path to a model JSON
    DEVICE  profile name (traces/devices/DEVICE.json) or a path to a profile JSON
  options:
    --batches 1,8,32            batch sizes (default 1,8,32)
    --precision fp32|tf32|fp16|bf16
                                fp32 (default): every layer at fp32_tflops;
                                tf32: GEMM layers (conv, linear, attention) at tf32_tflops;
                                fp16/bf16: GEMM layers at fp16/bf16_tflops and every byte count halved
                                (activations and weights stored in 16 bits; a simplification of AMP)
    --framework-overhead-ns N   host cost added per kernel launch on top of launch_ns (default 0;
                                PyTorch eager is 10-20 us per op, our estimate: traces/devices/README.md)
    --optimizer sgd|momentum|adam   optimizer for the training step (default momentum)
    --layers                    also print the per-layer forward table for the first batch size
    --json                      machine-readable output

Cost model: traces/devices/README.md, "Cost model" (forward and backward per layer: the larger of
the compute and memory terms, plus launches). The optimizer update is this script's assumption: a
memory-bound pass of 3 / 5 / 7 x weight_bytes (sgd / momentum / adam) plus one launch (+ framework
overhead) per layer with weights, small at large batch (ResNet-50 on V100: 0.7 ms of a ~350 ms
step). A training step = sum(forward) + sum(backward) + update.
Inference skips layers marked "aux" (Inception-v3's auxiliary head); training includes them.
Stdlib only.
"""
import json
import math
import os
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
REPO = os.path.dirname(os.path.dirname(HERE))
GEMM_KINDS = ('conv', 'linear', 'attention')
UPDATE_PASSES = {'sgd': 3, 'momentum': 5, 'adam': 7}


def load_json(name, folder):
    path = name if os.path.sep in name or name.endswith('.json') else os.path.join(REPO, 'traces', folder,
                                                                                   name + '.json')
    with open(path) as f:
        return json.load(f)


def peak_flops_per_ns(dev, kind, precision):
    c = dev['compute']
    if kind in GEMM_KINDS and precision != 'fp32':
        key = precision + '_tflops'
        if not c.get(key):
            raise SystemExit('error: device %s has no %s peak' % (dev['name'], precision))
        return c[key] * 1e3
    return c['fp32_tflops'] * 1e3


def layer_times(layer, dev, b, precision='fp32', fw_ns=0.0):
    """Return (forward_ns, backward_ns, details) for one layer at batch b."""
    c, k = dev['compute'], dev['kernels']
    kind = layer['kind']
    byte_scale = 0.5 if precision in ('fp16', 'bf16') else 1.0
    peak = peak_flops_per_ns(dev, kind, precision)
    eff = c['efficiency'][kind]
    tiles = 0
    for g in layer.get('gemms', []):
        tiles += math.ceil(b * g['m'] / c['tile_m']) * math.ceil(g['n'] / c['tile_n']) * g['count']
    occ = min(1.0, tiles / dev['sm_count']) if layer.get('gemms') else 1.0
    bw = c['mem_bandwidth_gbps'] * c['memory_efficiency']  # GB/s == bytes/ns
    fwd_c = layer['fwd_flops'] * b / (peak * eff * occ) if layer['fwd_flops'] else 0.0
    bwd_c = layer['bwd_flops'] * b / (peak * eff * occ) if layer['bwd_flops'] else 0.0
    mem = (layer['weight_bytes'] + (layer['input_bytes'] + layer['output_bytes']) * b) * byte_scale / bw
    launch = k['per_layer'][kind] * (k['launch_ns'] + fw_ns)
    fwd = max(fwd_c, mem) + launch
    bwd = max(bwd_c, 2 * mem) + 2 * launch
    return fwd, bwd, {'tiles': tiles, 'occupancy': occ, 'compute_ns': fwd_c, 'memory_ns': mem,
                      'launch_ns': launch, 'bound': 'compute' if fwd_c >= mem else 'memory'}


def predict(model, dev, b, precision='fp32', fw_ns=0.0, optimizer='momentum'):
    fwd_inf = fwd_all = bwd_all = 0.0
    for layer in model['layers']:
        f, bw_, _ = layer_times(layer, dev, b, precision, fw_ns)
        fwd_all += f
        bwd_all += bw_
        if not layer.get('aux'):
            fwd_inf += f
    byte_scale = 0.5 if precision in ('fp16', 'bf16') else 1.0
    c, k = dev['compute'], dev['kernels']
    wbytes = sum(l['weight_bytes'] for l in model['layers']) * byte_scale
    nweighted = sum(1 for l in model['layers'] if l['params'] > 0)
    update = UPDATE_PASSES[optimizer] * wbytes / (c['mem_bandwidth_gbps'] * c['memory_efficiency']) \
        + nweighted * (k['launch_ns'] + fw_ns)
    step = fwd_all + bwd_all + update
    return {'batch': b, 'forward_ms': fwd_inf / 1e6, 'train_step_ms': step / 1e6,
            'train_fwd_ms': fwd_all / 1e6, 'train_bwd_ms': bwd_all / 1e6, 'update_ms': update / 1e6,
            'infer_samples_per_s': b / (fwd_inf / 1e9), 'train_samples_per_s': b / (step / 1e9)}


def main(argv):
    if len(argv) < 2 or argv[0] in ('-h', '--help'):
        print(__doc__)
        return 0 if argv and argv[0] in ('-h', '--help') else 2
    model = load_json(argv[0], 'models')
    dev = load_json(argv[1], 'devices')
    batches, precision, fw, opt, show_layers, as_json = [1, 8, 32], 'fp32', 0.0, 'momentum', False, False
    it = iter(argv[2:])
    for a in it:
        if a == '--batches':
            batches = [int(x) for x in next(it).split(',')]
        elif a == '--precision':
            precision = next(it)
        elif a == '--framework-overhead-ns':
            fw = float(next(it))
        elif a == '--optimizer':
            opt = next(it)
        elif a == '--layers':
            show_layers = True
        elif a == '--json':
            as_json = True
        else:
            raise SystemExit('error: unknown option %s' % a)
    res = [predict(model, dev, b, precision, fw, opt) for b in batches]
    if as_json:
        print(json.dumps({'model': model['name'], 'device': dev['name'], 'precision': precision,
                          'framework_overhead_ns': fw, 'optimizer': opt, 'results': res}, indent=1))
        return 0
    print('model %s on %s, precision %s, framework overhead %.0f ns/launch, optimizer %s'
          % (model['name'], dev['name'], precision, fw, opt))
    print('%6s %12s %14s %12s %14s %14s' % ('batch', 'forward_ms', 'infer_samp/s', 'train_ms',
                                            'train_samp/s', '(update_ms)'))
    for r in res:
        print('%6d %12.3f %14.1f %12.3f %14.1f %14.3f' % (r['batch'], r['forward_ms'], r['infer_samples_per_s'],
                                                         r['train_step_ms'], r['train_samples_per_s'],
                                                         r['update_ms']))
    if show_layers:
        b = batches[0]
        print('\nper-layer forward at batch %d:' % b)
        print('%-45s %-10s %8s %6s %12s %12s %10s %8s' % ('layer', 'kind', 'tiles', 'occ', 'compute_us',
                                                        'memory_us', 'total_us', 'bound'))
        for layer in model['layers']:
            f, _, d = layer_times(layer, dev, b, precision, fw)
            print('%-45s %-10s %8d %6.2f %12.2f %12.2f %10.2f %8s' % (
                layer['name'][:45], layer['kind'], d['tiles'], d['occupancy'], d['compute_ns'] / 1e3,
                d['memory_ns'] / 1e3, f / 1e3, d['bound']))
    return 0


if __name__ == '__main__':
    sys.exit(main(sys.argv[1:]))
