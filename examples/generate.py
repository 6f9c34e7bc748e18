"""Greedy generation with a GPT-2 through flash, beside Hugging Face's generate.

One GPT-2 (Hugging Face's GPT2LMHeadModel, random weights from a fixed seed,
or a real checkpoint with --weights; nothing is downloaded) runs twice on the
same batch of prompts of different lengths:

- flash: this file's loop over the same modules' weights. Prefill runs each
  prompt through flash_attn_func (causal) and writes its keys and values into
  a paged KV cache that this file owns: pages of --page-size tokens from one
  pool, handed to a sequence as it grows (a page table row per sequence).
  Then each decode step runs the whole batch through flash_attn_with_kvcache,
  which appends the new token's K and V into the pages at cache_seqlens
  before attending. The decode step (embedding, every layer, the LM head,
  argmax, cache_seqlens += 1) is captured once in a CUDA graph and replayed.
- Hugging Face: model.generate(attn_implementation="sdpa"), the batch left
  padded, timed in the same run; and each prompt on its own (no padding) for
  the reference tokens.

Everything but the attention (layer norms, projections, MLP, LM head) is the
Hugging Face modules themselves, so the two differ only in attention and
cache. Reports TTFT (prefill of the batch to its first tokens), TBT (mean time
between tokens after the first) and tokens/s (batch x new tokens over the
whole generation), and checks that flash's greedy tokens equal Hugging
Face's. In fp16 two correct attentions may round a near-tie (two top logits
within a few units in the last place) differently, after which the sequences
legitimately part; the check reports the first difference with Hugging
Face's margin there and fails only when the margin was clear.

    python3 examples/generate.py                                   # GPT-2 small shape, random weights
    python3 examples/generate.py --weights gpt2/model.safetensors  # a real GPT-2 checkpoint
    python3 examples/generate.py --layers 2 --width 256 --heads 4 --vocab 512 --new-tokens 32 --check
"""

import argparse
import json
import os
import sys
import time

import torch

try:
    from flash_ladder import flash_attn_func, flash_attn_with_kvcache
except ImportError:  # not installed: this checkout's package (FLASH_LADDER_LIBRARY names the library)
    sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "python"))
    from flash_ladder import flash_attn_func, flash_attn_with_kvcache

# A near-tie: the two top logits of the reference within this many units in
# the last place of fp16 at the top logit's magnitude.
NEAR_TIE_ULPS = 8


def build_model(args):
    from transformers import GPT2Config, GPT2LMHeadModel

    if args.weights:
        from safetensors.torch import load_file

        state = load_file(args.weights)
        state = {k if k.startswith(("transformer.", "lm_head.")) else "transformer." + k: v for k, v in state.items()}
        wte, wpe = state["transformer.wte.weight"], state["transformer.wpe.weight"]
        layers = 1 + max(int(k.split(".")[2]) for k in state if k.startswith("transformer.h."))
        width = wte.shape[1]
        config = GPT2Config(vocab_size=wte.shape[0], n_positions=wpe.shape[0], n_embd=width, n_layer=layers,
                            n_head=args.heads if args.heads else width // 64)
        model = GPT2LMHeadModel(config)
        missing, unexpected = model.load_state_dict(state, strict=False)
        missing = [k for k in missing if k != "lm_head.weight" and not k.endswith(".attn.bias")]
        if missing:
            raise SystemExit(f"{args.weights}: missing weights {missing[:5]}")
        model.tie_weights()
    else:
        config = GPT2Config(vocab_size=args.vocab, n_positions=args.positions, n_embd=args.width,
                            n_layer=args.layers, n_head=args.heads or args.width // 64,
                            initializer_range=args.init_std, bos_token_id=0, eos_token_id=0)
        torch.manual_seed(args.seed)
        model = GPT2LMHeadModel(config)
    model.generation_config.eos_token_id = None  # generate exactly --new-tokens, as the flash loop does
    model.generation_config.pad_token_id = 0
    return model.to(device=args.device, dtype=getattr(torch, args.dtype)).eval()


class PagedCache:
    """K and V pages for every layer, (layers, num_pages, page_size, heads,
    head_dim) each, and an int32 page table (batch, max_pages_per_seq). Pages
    come from a free list as sequences grow; host-side lengths say when."""

    def __init__(self, layers, num_pages, page_size, heads, head_dim, batch, max_len, dtype, device):
        self.page_size = page_size
        self.k = torch.empty(layers, num_pages, page_size, heads, head_dim, dtype=dtype, device=device)
        self.v = torch.empty_like(self.k)
        self.free = list(range(num_pages))
        self.page_table = torch.zeros(batch, -(-max_len // page_size), dtype=torch.int32, device=device)
        self.host_table = torch.zeros_like(self.page_table, device="cpu")
        self.pages = [[] for _ in range(batch)]  # the pages each sequence holds

    def reserve(self, b, length):
        """Gives sequence b pages until it can hold `length` tokens; True when the table changed."""
        changed = False
        while len(self.pages[b]) * self.page_size < length:
            if not self.free:
                raise RuntimeError("the page pool is exhausted")
            page = self.free.pop(0)
            self.host_table[b, len(self.pages[b])] = page
            self.pages[b].append(page)
            changed = True
        return changed

    def upload(self):
        """Copies the table to the device without waiting: from a fresh pinned
        copy, which torch's host allocator keeps until the copy has run, so
        the host may change host_table at once."""
        staged = self.host_table.pin_memory() if self.page_table.is_cuda else self.host_table
        self.page_table.copy_(staged, non_blocking=True)

    def slots(self, b, length):
        """Flat row indices (page * page_size + offset) of sequence b's first `length` tokens."""
        pos = torch.arange(length)
        pages = torch.tensor(self.pages[b])[pos // self.page_size]
        return (pages * self.page_size + pos % self.page_size).to(self.k.device)


class FlashGPT2:
    """GPT-2's forward over the Hugging Face model's own modules, with flash
    attention and the paged cache above."""

    def __init__(self, hf):
        self.t = hf.transformer
        self.lm_head = hf.lm_head
        self.heads = hf.config.n_head
        self.width = hf.config.n_embd

    def _qkv(self, block, x):
        b, s, _ = x.shape
        q, k, v = block.attn.c_attn(block.ln_1(x)).split(self.width, dim=2)
        shape = (b, s, self.heads, self.width // self.heads)
        return q.view(shape), k.view(shape), v.view(shape)

    def _finish(self, block, x, o):
        x = x + block.attn.c_proj(o.reshape(*x.shape[:2], -1))
        return x + block.mlp(block.ln_2(x))

    def prefill(self, ids, cache, b):
        """One prompt (1, length): causal flash attention; writes its K/V into sequence b's pages.
        Returns the logits of its last position."""
        length = ids.shape[1]
        x = self.t.wte(ids) + self.t.wpe(torch.arange(length, device=ids.device))[None]
        slots = cache.slots(b, length)
        for layer, block in enumerate(self.t.h):
            q, k, v = self._qkv(block, x)
            cache.k[layer].view(-1, *k.shape[2:])[slots] = k[0]
            cache.v[layer].view(-1, *v.shape[2:])[slots] = v[0]
            x = self._finish(block, x, flash_attn_func(q, k, v, causal=True))
        return self.lm_head(self.t.ln_f(x[:, -1:]))[:, 0]

    def decode_step(self, tokens, cache_seqlens, cache):
        """One token per sequence at position cache_seqlens; appends its K/V
        in every layer, writes the next tokens into `tokens` and advances
        cache_seqlens. Only device work: capturable in a CUDA graph."""
        x = self.t.wte(tokens[:, None]) + self.t.wpe(cache_seqlens.long()[:, None])
        for layer, block in enumerate(self.t.h):
            q, k, v = self._qkv(block, x)
            o = flash_attn_with_kvcache(q, cache.k[layer], cache.v[layer], k=k, v=v, cache_seqlens=cache_seqlens,
                                        page_table=cache.page_table, causal=True)
            x = self._finish(block, x, o)
        logits = self.lm_head(self.t.ln_f(x))[:, 0]
        tokens.copy_(logits.argmax(dim=-1))
        cache_seqlens.add_(1)


def sync(device):
    if device.startswith("cuda"):
        torch.cuda.synchronize()


@torch.inference_mode()
def generate_flash(model, prompts, args, profile=False):
    """(tokens (batch, new_tokens) on the CPU, {"ttft_s", "tbt_s", "total_s"}).
    profile: the decode steps run under torch.profiler, and the times gain
    "decode_gpu" (decode_breakdown's split of the steps' GPU time)."""
    flash = FlashGPT2(model)
    cfg = model.config
    batch, new = len(prompts), args.new_tokens
    lengths = [len(p) for p in prompts]
    max_len = max(lengths) + new
    num_pages = sum(-(-(n + new) // args.page_size) for n in lengths)
    cache = PagedCache(cfg.n_layer, num_pages, args.page_size, cfg.n_head, cfg.n_embd // cfg.n_head, batch, max_len,
                       model.dtype, args.device)
    tokens = torch.zeros(batch, dtype=torch.long, device=args.device)
    cache_seqlens = torch.zeros(batch, dtype=torch.int32, device=args.device)

    # Capture the decode step once. The warm-up and the capture run on
    # scratch state (every sequence at length 0 on page 0), which the prefill
    # then overwrites: nothing a later step reads comes from them.
    graph = None
    if args.graph:
        stream = torch.cuda.Stream()
        stream.wait_stream(torch.cuda.current_stream())
        with torch.cuda.stream(stream):
            for _ in range(2):
                cache_seqlens.zero_()
                flash.decode_step(tokens, cache_seqlens, cache)
        torch.cuda.current_stream().wait_stream(stream)
        cache_seqlens.zero_()
        graph = torch.cuda.CUDAGraph()
        with torch.cuda.graph(graph):
            flash.decode_step(tokens, cache_seqlens, cache)
        sync(args.device)

    out = torch.empty(batch, new, dtype=torch.long, device=args.device)
    t0 = time.perf_counter()
    for b, ids in enumerate(prompts):
        cache.reserve(b, lengths[b])
        out[b, 0] = flash.prefill(torch.tensor([ids], device=args.device), cache, b).argmax(dim=-1)[0]
    cache.upload()
    cache_seqlens.copy_(torch.tensor(lengths, dtype=torch.int32))
    tokens.copy_(out[:, 0])
    sync(args.device)
    t1 = time.perf_counter()
    prof = None
    if profile:
        prof = torch.profiler.profile(activities=[torch.profiler.ProfilerActivity.CPU,
                                                  torch.profiler.ProfilerActivity.CUDA])
        prof.__enter__()
    for step in range(1, new):
        # The step appends the token at position lengths[b] + step - 1; pages
        # are handed out when a sequence crosses into a new one (host-side
        # lengths: no sync).
        if any([cache.reserve(b, lengths[b] + step) for b in range(batch)]):
            cache.upload()
        if graph is not None:
            graph.replay()
        else:
            flash.decode_step(tokens, cache_seqlens, cache)
        out[:, step] = tokens
    sync(args.device)
    t2 = time.perf_counter()
    times = {"ttft_s": t1 - t0, "tbt_s": (t2 - t1) / max(1, new - 1), "total_s": t2 - t0}
    if prof is not None:
        prof.__exit__(None, None, None)
        times["decode_gpu"] = decode_breakdown(prof, max(1, new - 1))
    return out.cpu(), times


def device_us(event):
    """A profiler event's own GPU time in microseconds (the attribute's name
    differs between torch versions)."""
    us = getattr(event, "self_device_time_total", None)
    return getattr(event, "self_cuda_time_total", 0.0) if us is None else us


def left_padded(prompts, device):
    """The prompts as one left-padded batch: (input ids, attention mask)."""
    width = max(len(p) for p in prompts)
    ids = torch.zeros(len(prompts), width, dtype=torch.long)
    mask = torch.zeros_like(ids)
    for b, p in enumerate(prompts):
        ids[b, width - len(p):] = torch.tensor(p)
        mask[b, width - len(p):] = 1
    return ids.to(device), mask.to(device)


def decode_breakdown(prof, steps):
    """Where a decode step's GPU time goes: the library's kernels (flash's
    attention: the split-KV kernel, the K/V append, the metadata check; all in
    namespace flash::detail) against the rest of the model (projections, MLP,
    layer norms, LM head, argmax), in microseconds per step, from the kernels'
    own device times (a CUDA graph's kernels are traced one by one)."""
    attention, rest, kernels = 0.0, 0.0, {}
    for e in prof.key_averages():
        us = device_us(e)
        if us <= 0:
            continue
        if "flash::detail" in e.key:
            attention += us
        else:
            rest += us
        kernels[e.key[:90]] = kernels.get(e.key[:90], 0.0) + us
    top = sorted(kernels.items(), key=lambda kv: -kv[1])[:8]
    return {"attention_us": attention / steps, "rest_us": rest / steps,
            "top_kernels_us": [(name, us / steps) for name, us in top]}


@torch.inference_mode()
def generate_hf(model, prompts, new_tokens, device, timed=True):
    """Hugging Face's batched generate (left padding): (tokens, times)."""
    width = max(len(p) for p in prompts)
    ids, mask = left_padded(prompts, device)

    def run(n):
        sync(device)
        t = time.perf_counter()
        seq = model.generate(input_ids=ids, attention_mask=mask, max_new_tokens=n, do_sample=False)
        sync(device)
        return seq[:, width:].cpu(), time.perf_counter() - t

    run(2)  # warm-up
    _, first = run(1)
    seq, total = run(new_tokens)
    return seq, {"ttft_s": first, "tbt_s": (total - first) / max(1, new_tokens - 1), "total_s": total}


@torch.inference_mode()
def hf_decode_step(model, prompts, device, steps=16):
    """One of Hugging Face's decode steps outside generate(): the left-padded
    batch prefilled once, then `steps` calls of model(next token, past_key_values)
    timed wall to wall, and the GPU time of one such step summed over its kernels
    (torch.profiler). Wall much above GPU time means the step is bound by the
    host (Python and kernel launches), not by the GPU."""
    ids, mask = left_padded(prompts, device)
    out = model(input_ids=ids, attention_mask=mask, use_cache=True)
    cache, nxt = out.past_key_values, out.logits[:, -1:].argmax(-1)

    def step():
        nonlocal cache, nxt, mask
        mask = torch.cat([mask, mask.new_ones(mask.shape[0], 1)], dim=1)
        o = model(input_ids=nxt, attention_mask=mask, past_key_values=cache, use_cache=True)
        cache, nxt = o.past_key_values, o.logits[:, -1:].argmax(-1)

    for _ in range(3):
        step()
    sync(device)
    t = time.perf_counter()
    for _ in range(steps):
        step()
    sync(device)
    wall = (time.perf_counter() - t) / steps
    with torch.profiler.profile(activities=[torch.profiler.ProfilerActivity.CUDA]) as prof:
        step()
        sync(device)
    gpu_us = sum(max(device_us(e), 0.0) for e in prof.key_averages())
    return {"wall_s": wall, "gpu_us": gpu_us}


@torch.inference_mode()
def reference_tokens(model, prompts, new_tokens, device):
    """Each prompt on its own (no padding): tokens and the top-two logit margins."""
    tokens, margins = [], []
    for p in prompts:
        out = model.generate(input_ids=torch.tensor([p], device=device), max_new_tokens=new_tokens,
                             do_sample=False, output_logits=True,
                             return_dict_in_generate=True)
        tokens.append(out.sequences[0, len(p):].cpu())
        logits = torch.stack(out.logits, dim=1)[0].float()  # (new_tokens, vocab)
        top = logits.topk(2, dim=-1).values
        margins.append(torch.stack([top[:, 0] - top[:, 1], top[:, 0].abs()], dim=-1).cpu())
    return torch.stack(tokens), torch.stack(margins)


def compare(flash_tokens, ref_tokens, margins):
    """Per sequence, the first step where flash's token differs from the
    reference, and whether the reference's top-two margin there was a near-tie.
    {"equal", "compared" (tokens equal before each sequence's first difference),
    "first_difference" (the first clear one, else the first one, else None),
    "clear_mismatch"}."""
    def ulp(x):  # fp16 spacing at magnitude x
        return 2.0 ** (float(torch.floor(torch.log2(torch.clamp(x, min=2.0**-14)))) - 10)

    differences, compared = [], 0
    for b in range(ref_tokens.shape[0]):
        diff = (flash_tokens[b] != ref_tokens[b]).nonzero().flatten()
        if len(diff) == 0:
            compared += ref_tokens.shape[1]
            continue
        s = int(diff[0])
        compared += s
        margin, top = margins[b, s, 0], margins[b, s, 1]
        differences.append({"sequence": b, "step": s, "flash": int(flash_tokens[b, s]),
                            "reference": int(ref_tokens[b, s]), "margin": float(margin), "top_logit": float(top),
                            "near_tie": bool(margin <= NEAR_TIE_ULPS * ulp(top))})
    clear = [d for d in differences if not d["near_tie"]]
    return {"equal": not differences, "compared": compared, "clear_mismatch": bool(clear),
            "first_difference": (clear or differences or [None])[0]}


def main():
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--weights", help="a GPT-2 model.safetensors (its shapes set the model size)")
    p.add_argument("--layers", type=int, default=12)
    p.add_argument("--width", type=int, default=768)
    p.add_argument("--heads", type=int, default=0, help="default: width / 64")
    p.add_argument("--vocab", type=int, default=50257)
    p.add_argument("--positions", type=int, default=1024)
    p.add_argument("--init-std", type=float, default=0.02)
    p.add_argument("--prompt-lengths", default="17,64,200,511", help="comma-separated; one prompt each")
    p.add_argument("--new-tokens", type=int, default=128)
    p.add_argument("--page-size", type=int, default=16)
    p.add_argument("--dtype", default="float16", choices=["float16", "bfloat16"])
    p.add_argument("--device", default="cuda")
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--no-graph", dest="graph", action="store_false", help="run the decode step eagerly")
    p.add_argument("--check", action="store_true",
                   help="exit 1 unless flash's tokens equal Hugging Face's (up to a first difference at a near-tie)")
    p.add_argument("--profile", action="store_true",
                   help="also split a decode step's GPU time into attention and the rest (torch.profiler, one more run)")
    p.add_argument("--json", help="write the results here")
    args = p.parse_args()
    if not args.device.startswith("cuda"):
        raise SystemExit("generate.py needs a CUDA device (flash's kernels)")

    model = build_model(args)
    g = torch.Generator().manual_seed(args.seed + 1)
    prompts = [torch.randint(0, model.config.vocab_size, (int(n),), generator=g).tolist()
               for n in args.prompt_lengths.split(",")]
    cfg = model.config
    print(f"GPT-2 {'from ' + args.weights if args.weights else 'random weights (seed %d)' % args.seed}: "
          f"{cfg.n_layer} layers, width {cfg.n_embd}, {cfg.n_head} heads, vocab {cfg.vocab_size}, {args.dtype}; "
          f"prompts {[len(p) for p in prompts]}, {args.new_tokens} new tokens each, page size {args.page_size}, "
          f"decode step {'in a CUDA graph' if args.graph else 'eager'}")

    generate_flash(model, prompts, args)  # warm-up (library load, kernels, allocator)
    flash_tokens, flash_times = generate_flash(model, prompts, args)
    hf_tokens, hf_times = generate_hf(model, prompts, args.new_tokens, args.device)
    ref, margins = reference_tokens(model, prompts, args.new_tokens, args.device)
    result = compare(flash_tokens, ref, margins)
    batched_equal = bool(torch.equal(hf_tokens, ref))

    total_tokens = len(prompts) * args.new_tokens
    rows = [("flash (paged cache, CUDA graph)" if args.graph else "flash (paged cache, eager)", flash_times),
            ("Hugging Face generate, sdpa", hf_times)]
    print(f"\n| {'':34s} | TTFT ms | TBT ms | tokens/s |")
    print(f"|{'-' * 36}|---------|--------|----------|")
    for name, t in rows:
        print(f"| {name:34s} | {t['ttft_s'] * 1e3:7.2f} | {t['tbt_s'] * 1e3:6.3f} | {total_tokens / t['total_s']:8.0f} |")
    print(f"\nspeed-up: TTFT x{hf_times['ttft_s'] / flash_times['ttft_s']:.2f}, "
          f"TBT x{hf_times['tbt_s'] / flash_times['tbt_s']:.2f}")
    if result["equal"]:
        print(f"tokens: flash equals Hugging Face's greedy tokens ({total_tokens} of {total_tokens}; each prompt alone)")
    else:
        d = result["first_difference"]
        print(f"tokens: {result['compared']} of {total_tokens} equal before the first difference; sequence "
              f"{d['sequence']} step {d['step']}: flash {d['flash']}, Hugging Face {d['reference']}, whose top-two "
              f"margin there is {d['margin']:.5f} at |logit| {d['top_logit']:.3f} "
              f"({'a near-tie in fp16' if d['near_tie'] else 'CLEAR: a real mismatch'})")
    print(f"Hugging Face batched (left padded) equals Hugging Face one prompt at a time: {batched_equal}")
    breakdown = None
    if args.profile:
        _, profiled = generate_flash(model, prompts, args, profile=True)
        breakdown = profiled["decode_gpu"]
        gpu = breakdown["attention_us"] + breakdown["rest_us"]
        print(f"\ndecode step, GPU time per step (torch.profiler, a separate run): {gpu:.1f} us = attention "
              f"{breakdown['attention_us']:.1f} us ({100 * breakdown['attention_us'] / max(gpu, 1e-9):.0f}%) + rest of "
              f"the model {breakdown['rest_us']:.1f} us; wall TBT of the timed run {flash_times['tbt_s'] * 1e6:.1f} us")
        for name, us in breakdown["top_kernels_us"]:
            print(f"  {us:8.1f} us  {name}")
        hf_step = hf_decode_step(model, prompts, args.device)
        breakdown["hf_step"] = hf_step
        print(f"Hugging Face decode step outside generate(): wall {hf_step['wall_s'] * 1e3:.2f} ms, GPU time "
              f"{hf_step['gpu_us'] / 1e3:.2f} ms (the rest is the host: Python and launches); generate()'s TBT "
              f"{hf_times['tbt_s'] * 1e3:.2f} ms")
    if args.json:
        with open(args.json, "w") as f:
            json.dump({"flash": flash_times, "hf": hf_times, "decode_gpu": breakdown, "compare": result,
                       "batched_equal": batched_equal,
                       "prompt_lengths": [len(p) for p in prompts], "new_tokens": args.new_tokens}, f, indent=1)
    if args.check and result["clear_mismatch"]:
        sys.exit(1)


if __name__ == "__main__":
    main()
