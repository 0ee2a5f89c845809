#!/usr/bin/env python3
"""Count BERT WordPiece tokens of a text, stdlib only (used by make_input_lengths.py).

A re-implementation of the tokenizer of the original BERT release (Devlin et al., NAACL 2019):
google-research/bert, tokenization.py (BasicTokenizer + WordpieceTokenizer), as also implemented by
HuggingFace transformers BertTokenizer. Written here from that published algorithm; no code copied.
For a *cased* vocabulary (bert-base-cased, the config of traces/models/bert_base.json) nothing is
lower-cased and accents are kept:

  1. clean: drop U+0000, U+FFFD and control characters (Unicode category C*, except tab, LF, CR);
     map whitespace (space, tab, LF, CR, category Zs) to a space;
  2. put spaces around CJK ideographs; split on whitespace;
  3. split every punctuation character (ASCII 33-47, 58-64, 91-96, 123-126, or category P*) off
     as a token of its own;
  4. WordPiece: greedy longest-match-first against the vocabulary, continuation pieces prefixed
     "##"; a word longer than 100 characters, or one that cannot be covered, is one [UNK].

`--selftest VOCAB TEXT REF_JSON` compares the token ids with a reference tokenization made with the
HuggingFace tokenizer (robertknight/rten, rten-text/test-data/reftests/, see traces/dynamic/SOURCE.txt)
and exits 1 on any difference. Units: tokens. Single-threaded script.
"""
import json
import sys
import unicodedata

MAX_CHARS_PER_WORD = 100


def load_vocab(path):
    """Return {token: id} from a vocab.txt (one token per line, id = 0-based line number)."""
    with open(path, encoding="utf-8") as f:
        return {line.rstrip("\n"): i for i, line in enumerate(f)}


def _is_whitespace(ch):
    return ch in " \t\n\r" or unicodedata.category(ch) == "Zs"


def _is_control(ch):
    return ch not in "\t\n\r" and unicodedata.category(ch).startswith("C")


def _is_punctuation(ch):
    cp = ord(ch)
    if 33 <= cp <= 47 or 58 <= cp <= 64 or 91 <= cp <= 96 or 123 <= cp <= 126:
        return True
    return unicodedata.category(ch).startswith("P")


def _is_cjk(cp):
    return (0x4E00 <= cp <= 0x9FFF or 0x3400 <= cp <= 0x4DBF or 0x20000 <= cp <= 0x2A6DF
            or 0x2A700 <= cp <= 0x2B73F or 0x2B740 <= cp <= 0x2B81F or 0x2B820 <= cp <= 0x2CEAF
            or 0xF900 <= cp <= 0xFAFF or 0x2F800 <= cp <= 0x2FA1F)


def basic_tokens(text):
    """Steps 1-3 (cased): a list of words and punctuation marks."""
    out = []
    for ch in text:
        cp = ord(ch)
        if cp == 0 or cp == 0xFFFD or _is_control(ch):
            continue
        if _is_whitespace(ch):
            out.append(" ")
        elif _is_cjk(cp):
            out.append(" " + ch + " ")
        else:
            out.append(ch)
    tokens = []
    for word in "".join(out).split():
        cur = ""
        for ch in word:
            if _is_punctuation(ch):
                if cur:
                    tokens.append(cur)
                    cur = ""
                tokens.append(ch)
            else:
                cur += ch
        if cur:
            tokens.append(cur)
    return tokens


def wordpiece_ids(word, vocab):
    """Step 4 for one word: the list of token ids."""
    if len(word) > MAX_CHARS_PER_WORD:
        return [vocab["[UNK]"]]
    ids = []
    start = 0
    while start < len(word):
        end = len(word)
        found = None
        while start < end:
            piece = word[start:end] if start == 0 else "##" + word[start:end]
            if piece in vocab:
                found = vocab[piece]
                break
            end -= 1
        if found is None:
            return [vocab["[UNK]"]]
        ids.append(found)
        start = end
    return ids


def encode(text, vocab):
    """Token ids of `text` without [CLS]/[SEP]."""
    ids = []
    for word in basic_tokens(text):
        ids.extend(wordpiece_ids(word, vocab))
    return ids


def selftest(vocab_path, text_path, ref_path):
    vocab = load_vocab(vocab_path)
    with open(text_path, encoding="utf-8") as f:
        text = f.read()
    with open(ref_path, encoding="utf-8") as f:
        ref = json.load(f)["token_ids"]
    ids = [vocab["[CLS]"]] + encode(text, vocab) + [vocab["[SEP]"]]
    if ids != ref:
        first = next((i for i, (a, b) in enumerate(zip(ids, ref)) if a != b), min(len(ids), len(ref)))
        print(f"MISMATCH: {len(ids)} vs {len(ref)} ids, first difference at index {first}")
        return 1
    print(f"selftest OK: {len(ids)} token ids identical to the reference")
    return 0


if __name__ == "__main__":
    # --help prints the docstring and exits before any file is read or written.
    if any(a in ("-h", "--help") for a in sys.argv[1:]):
        print(__doc__.strip())
        sys.exit(0)
    if len(sys.argv) == 5 and sys.argv[1] == "--selftest":
        sys.exit(selftest(*sys.argv[2:5]))
    print(__doc__)
    sys.exit(2)
