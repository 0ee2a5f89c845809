#!/usr/bin/env python3
"""Write traces/dynamic/*input_length*.json: input-length histograms for bert_base, stdlib only.

Usage:
  make_input_lengths.py sst2  VOCAB_TXT SST2_DEV_TSV OUT_JSON   # GLUE SST-2 dev, BERT WordPiece tokens
  make_input_lengths.py azure AZURE_CSV OUT_JSON                # context_tokens column, truncated at 512

Every input gives one length n in tokens:
  sst2  : n = 2 + WordPiece tokens of the sentence (bert_wordpiece.py, cased vocab), the 2 being
          [CLS] and [SEP] as BERT's single-sentence classification input;
  azure : n = context_tokens of traces/arrivals/azure_llm_2023_conv.csv (LLM prompt tokens, not BERT
          tokens), truncated to 512 (BERT's position limit), as a BERT service would truncate.
n is then put in the bin whose upper edge is 16 * ceil(n / 16) (bin "32" holds 17..32 tokens), and
each non-empty bin is written with its integer count as "weight". Empty bins are left out.
Provenance and the exact inputs: traces/dynamic/SOURCE.txt. Units: tokens. Single-threaded script.
"""
import csv
import json
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import bert_wordpiece  # noqa: E402

BUCKET = 16
MAX_TOKENS = 512


def histogram(lengths):
    counts = {}
    for n in lengths:
        edge = min(MAX_TOKENS, BUCKET * ((n + BUCKET - 1) // BUCKET))
        counts[edge] = counts.get(edge, 0) + 1
    return [{"tokens": e, "weight": counts[e]} for e in sorted(counts)]


def sst2_lengths(vocab_path, tsv_path):
    vocab = bert_wordpiece.load_vocab(vocab_path)
    with open(tsv_path, encoding="utf-8", newline="") as f:
        rows = list(csv.reader(f, delimiter="\t", quoting=csv.QUOTE_NONE))
    if rows[0] != ["sentence", "label"]:
        sys.exit(f"{tsv_path}: unexpected header {rows[0]}")
    lengths = []
    for row in rows[1:]:
        n = 2 + len(bert_wordpiece.encode(row[0], vocab))
        if n > MAX_TOKENS:
            sys.exit(f"{tsv_path}: a sentence of {n} tokens exceeds {MAX_TOKENS}")
        lengths.append(n)
    return lengths


def azure_lengths(csv_path):
    with open(csv_path, encoding="utf-8", newline="") as f:
        return [min(MAX_TOKENS, int(r["context_tokens"])) for r in csv.DictReader(f)]


def write(out_path, header, lengths):
    doc = dict(header)
    doc.update({"bucket": BUCKET, "max_tokens": MAX_TOKENS, "lengths": histogram(lengths)})
    with open(out_path, "w", encoding="utf-8") as f:
        f.write("{\n")
        keys = list(doc)
        for i, k in enumerate(keys):
            sep = "," if i + 1 < len(keys) else ""
            if k == "lengths":
                items = ",\n  ".join(json.dumps(x) for x in doc[k])
                f.write(f' "lengths": [\n  {items}\n ]{sep}\n')
            else:
                f.write(f" {json.dumps(k)}: {json.dumps(doc[k], ensure_ascii=False)}{sep}\n")
        f.write("}\n")
    n = len(lengths)
    print(f"{out_path}: {n} inputs, mean {sum(lengths) / n:.2f}, min {min(lengths)}, "
          f"max {max(lengths)}, equal to {MAX_TOKENS} after truncation: {sum(1 for x in lengths if x >= MAX_TOKENS)}")


SST2_HEADER = {
    "kind": "input_length",
    "model": "bert_base",
    "source": ("GLUE SST-2 dev set (872 sentences; Wang et al., ICLR 2019; Socher et al., EMNLP 2013) as checked "
               "into github.com/forest-snow/alps at commit 3c7ef2c98249fc975a897b27f275695f97d5b7a9, file "
               "data/SST-2/test.tsv (ALPS uses GLUE dev as its test split); tokenized with the bert-base-cased "
               "vocab.txt (28,996 entries) from github.com/robertknight/rten at commit "
               "c7f7bad90d1d14dce8080e243c3f2a6b6e9872cd, rten-text/test-data/reftests/models/bert-base-cased/"
               "vocab.txt, by traces/tools/bert_wordpiece.py; length = WordPiece tokens + [CLS] + [SEP]. "
               "Computed by traces/tools/make_input_lengths.py; see traces/dynamic/SOURCE.txt"),
    "licence": ("histogram derived from SST-2 (Stanford Sentiment Treebank, distributed with GLUE for research; "
                "no licence file in its GLUE copy) as redistributed in forest-snow/alps (MIT); vocab.txt from "
                "Google's BERT release (Apache-2.0), redistributed in robertknight/rten (MIT/Apache-2.0)"),
    "note": ("Measured from data: 872 single sentences, 4..61 tokens, mean 26.45; none reaches 512, so no "
             "truncation. Short movie-review sentences: a short-input BERT workload. Weights are counts."),
}

AZURE_HEADER = {
    "kind": "input_length",
    "model": "bert_base",
    "source": ("context_tokens column of traces/arrivals/azure_llm_2023_conv.csv (Azure LLM inference trace "
               "2023, conversation service, 19,366 requests; github.com/Azure/AzurePublicDataset commit "
               "b469a113cedca53ddc3bdea71a143dc4b7d8700c, data/AzureLLMInferenceTrace_conv.csv; see "
               "traces/arrivals/SOURCE.txt), each value truncated to 512. Computed by "
               "traces/tools/make_input_lengths.py; see traces/dynamic/SOURCE.txt"),
    "licence": ("CC-BY 4.0 (Azure Public Dataset). Attribution: Patel et al., 'Splitwise: Efficient generative "
                "LLM inference using phase splitting', ISCA 2024. Changed: truncated at 512 and binned"),
    "note": ("APPROXIMATION: these are LLM prompt lengths in the LLM's own tokenizer, not BERT WordPiece "
             "tokens, and not BERT inputs; 11,723 of 19,366 requests (60.5%) exceed 512 and are truncated "
             "to 512, so the last bin (497..512) holds 11,731. Use as a long-input stress distribution. Weights are counts."),
}


def main(argv):
    if len(argv) == 5 and argv[1] == "sst2":
        write(argv[4], SST2_HEADER, sst2_lengths(argv[2], argv[3]))
    elif len(argv) == 4 and argv[1] == "azure":
        write(argv[3], AZURE_HEADER, azure_lengths(argv[2]))
    else:
        print(__doc__)
        return 2
    return 0


if __name__ == "__main__":
    # --help prints the docstring and exits before any file is read or written.
    if any(a in ("-h", "--help") for a in sys.argv[1:]):
        print(__doc__.strip())
        sys.exit(0)
    sys.exit(main(sys.argv))
