"""Shared plumbing for the figure scripts: running sweeps through the gpumux CLI, reading
their summaries, and saving figures (PNG + PDF) with their data (CSV) beside them.

Every figure script is a module `plots/fig_<name>.py` defining:
  FIGURE   the output file stem (plots/out/<FIGURE>.png/.pdf/.csv)
  SWEEPS   the sweep files it needs (experiments/sweeps/*.json)
  plot(fig) where `fig` is a FigureContext: fig.results(sweep) -> {label: summary dict}
"""
import csv
import json
import os
import subprocess
import sys

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def sweep_name(sweep_file):
    with open(os.path.join(ROOT, sweep_file)) as f:
        return json.load(f)["name"]


class FigureContext:
    def __init__(self, module, results_root, out_dir, quick):
        self.module = module
        self.results_root = results_root
        self.out_dir = out_dir
        self.quick = quick

    def sweep_dir(self, sweep_file):
        return os.path.join(self.results_root, sweep_name(sweep_file))

    def results(self, sweep_file):
        """{label: summary.json as dict} for every complete point of a sweep, in label order."""
        d = self.sweep_dir(sweep_file)
        out = {}
        if not os.path.isdir(d):
            return out
        for label in sorted(os.listdir(d)):
            s = os.path.join(d, label, "summary.json")
            if os.path.exists(os.path.join(d, label, "run.json")) and os.path.exists(s):
                with open(s) as f:
                    out[label] = json.load(f)
        return out

    def points(self, sweep_file):
        """[(label, resolved config, summary)] for every complete point of a sweep: the config
        (config.resolved.json) says what the point is, whatever its label."""
        d = self.sweep_dir(sweep_file)
        out = []
        for label, summary in self.results(sweep_file).items():
            with open(os.path.join(d, label, "config.resolved.json")) as f:
                out.append((label, json.load(f), summary))
        return out

    def events(self, sweep_file, label):
        """The events of one point (events.jsonl), one dict per line. Read fields by key: each
        kind's keys are listed in core/api/include/gpumux/api/event_fields.hpp (kEventLayouts)."""
        with open(os.path.join(self.sweep_dir(sweep_file), label, "events.jsonl")) as f:
            for line in f:
                yield json.loads(line)

    def first_run(self, sweep_file):
        """run.json of a sweep's first complete point (labels in order), or {} if none."""
        d = self.sweep_dir(sweep_file)
        for label in sorted(os.listdir(d)) if os.path.isdir(d) else []:
            run = os.path.join(d, label, "run.json")
            if os.path.exists(run):
                with open(run) as f:
                    return json.load(f)
        return {}

    def platform_word(self, sweep_file):
        """How a sweep's runs were made, for titles: "simulated", "emulated" or, on a real
        GPU, "measured on NVIDIA H100 ..."."""
        platform = self.first_run(sweep_file).get("platform", "sim")
        gpu = platform_gpu(platform)
        if gpu:
            return "measured on " + gpu
        return "emulated" if platform.startswith("emulated") else "simulated"

    def device_label(self, sweep_file):
        """The device profile(s) of a sweep's first complete run, for titles; on a real GPU
        also the GPU it ran on ("v100-pcie3x16 on NVIDIA H100 80GB HBM3")."""
        info = self.first_run(sweep_file)
        if not info:
            return "?"
        profiles = ", ".join(x["profile"] for x in info.get("devices", []))
        gpu = platform_gpu(info.get("platform", "sim"))
        return f"{profiles} on {gpu}" if gpu else profiles

    def write_csv(self, header, rows):
        path = os.path.join(self.out_dir, self.module.FIGURE + ".csv")
        with open(path, "w", newline="") as f:
            w = csv.writer(f)
            w.writerow(header)
            for r in rows:
                w.writerow([f"{x:.6g}" if isinstance(x, float) else x for x in r])
        return path

    def save(self, figure):
        stem = os.path.join(self.out_dir, self.module.FIGURE)
        figure.tight_layout()
        figure.savefig(stem + ".png", dpi=120)
        figure.savefig(stem + ".pdf")
        plt.close(figure)


def run_sweep(gpumux, sweep_file, results_root, quick, jobs, force=False, events=True,
              sets=()):
    """Runs one sweep; False if any of its points failed (the complete ones stay usable).
    `sets` are extra "key=value" overrides applied to every point (e.g. platform=cuda)."""
    out = os.path.join(results_root, sweep_name(sweep_file))
    cmd = [gpumux, "sweep", os.path.join(ROOT, sweep_file), "-j", str(jobs), "--out", out]
    if quick:
        cmd.append("--quick")
    if force:
        cmd.append("--force")
    if not events:
        cmd += ["--set", "events=false"]  # summaries need no events file on disk
    for s in sets:
        cmd += ["--set", s]
    print("+ " + " ".join(os.path.relpath(c, ROOT) if c.startswith(ROOT) else c for c in cmd),
          file=sys.stderr, flush=True)
    return subprocess.run(cmd, cwd=ROOT, stdout=subprocess.DEVNULL).returncode == 0


def platform_gpu(description):
    """The GPU name in a run.json "platform" line of platform cuda
    ("cuda (GPU 0: NVIDIA H100 80GB HBM3 (132 SMs, ...") ; None for sim and emulated."""
    marker = "GPU 0: "
    if not description.startswith("cuda") or marker not in description:
        return None
    return description.split(marker, 1)[1].split(" (", 1)[0]


def get(cfg, path, default=None):
    """cfg["a"]["b"][0]... for a dotted path "a.b.0"; default when absent."""
    for k in path.split("."):
        if isinstance(cfg, list):
            if not k.isdigit() or int(k) >= len(cfg):
                return default
            cfg = cfg[int(k)]
        elif isinstance(cfg, dict) and k in cfg:
            cfg = cfg[k]
        else:
            return default
    return cfg


def job(summary, name):
    """The jobs[] row of the job called `name`."""
    return next(j for j in summary["jobs"] if j["name"] == name)


def job_rows(summary, kind=None):
    return [j for j in summary["jobs"] if kind is None or j["kind"] == kind]


def percentile_ms(summary, key="p99_ms"):
    inf = summary["inference"]
    return inf[key] if inf["count"] else float("nan")


MODEL_NAMES = {
    "resnet18": "ResNet-18", "resnet50": "ResNet-50", "resnet101": "ResNet-101",
    "resnet152": "ResNet-152", "vgg11": "VGG-11", "vgg16": "VGG-16", "vgg19": "VGG-19",
    "densenet121": "DenseNet-121", "densenet169": "DenseNet-169", "inception_v3": "Inception-v3",
    "inception_v4": "Inception-v4", "mobilenet_v2": "MobileNetV2", "googlenet": "GoogLeNet",
    "alexnet": "AlexNet", "overfeat": "OverFeat", "bert_base": "BERT-base",
    "bert_base_seq251": "BERT-base\n(seq 251)", "vae": "VAE", "superres": "SuperRes",
    "seq2seq": "Seq2Seq", "speech": "Speech",
}


def model_name(m):
    return MODEL_NAMES.get(m, m)


def bars(ax, groups, series, value, colors=None, labels=None, width=0.8, **kw):
    """Grouped bars: one group per entry of `groups`, one bar per entry of `series`;
    value(group, series) -> height (None or NaN: no bar). Returns the bar containers."""
    n = len(series)
    w = width / max(n, 1)
    out = []
    for i, s in enumerate(series):
        xs, hs = [], []
        for g, grp in enumerate(groups):
            v = value(grp, s)
            if v is not None and v == v:
                xs.append(g - width / 2 + (i + 0.5) * w)
                hs.append(v)
        color = (colors or {}).get(s)
        out.append(ax.bar(xs, hs, w, label=(labels or {}).get(s, s), color=color, **kw))
    ax.set_xticks(range(len(groups)))
    return out


def pipeswitch_ablation(fig, sweep, variant_of, variants, labels, title, log=False):
    """PipeSwitch Figs. 7-9: mean latency of the Fig. 5 request per (device, model, variant);
    one panel per device profile, one group per model, one bar per variant. `variant_of(cfg)`
    names a point's variant. Writes the CSV and saves the figure."""
    lat = {}
    for _, cfg, s in fig.points(sweep):
        key = (get(cfg, "devices.0.profile"), get(cfg, "workload.jobs.1.model"), variant_of(cfg))
        lat[key] = job(s, "infer")["latency"]
    devices = sorted({k[0] for k in lat}, key=lambda d: not d.startswith("v100"))
    models = [m for m in ["resnet152", "inception_v3", "bert_base_seq251"]
              if any(k[1] == m for k in lat)]
    rows = [[d, m, v, lat[(d, m, v)]["count"], lat[(d, m, v)]["mean_ms"],
             lat[(d, m, v)]["min_ms"], lat[(d, m, v)]["max_ms"]]
            for d in devices for m in models for v in variants if (d, m, v) in lat]
    fig.write_csv(["device", "model", "variant", "requests", "mean_ms", "min_ms", "max_ms"], rows)
    cmap = plt.get_cmap("tab10")
    colors = {v: cmap(i) for i, v in enumerate(variants)}
    f, axes = plt.subplots(1, len(devices), figsize=(5.5 * len(devices), 4.2), squeeze=False)
    for ax, d in zip(axes[0], devices):
        bars(ax, models, variants,
             lambda m, v: lat[(d, m, v)]["mean_ms"] if (d, m, v) in lat else None, colors, labels)
        ax.set_xticklabels([model_name(m) for m in models])
        ax.set_ylabel("inference latency (ms%s)" % (", log" if log else ""))
        if log:
            ax.set_yscale("log")
        lo, hi = ax.get_ylim()
        ax.set_ylim(lo, hi * (8 if log else 1.3))  # room for the legend
        ax.set_title(d, fontsize=10)
        ax.grid(True, axis="y", alpha=0.3)
    axes[0][0].legend(fontsize=8, loc="upper left")
    f.suptitle(f"{title} ({fig.platform_word(sweep)})", fontsize=10)
    fig.save(f)
    return rows
