#!/usr/bin/env python3
"""The reference column of the README's Backends table: `toolrl bench`'s model and shapes in PyTorch (CPU).

Same GPT as lib/model/gpt.ts (pre-LN blocks, fused QKV, 4x GELU-tanh MLP, learned positions, untied head,
same parameter count) and the same shapes: training B16 x T256 forward + backward + AdamW; sampling batch 64,
100-token prefill, 100 one-token decode steps through a KV cache, a token drawn per row each step. Prints the
JSON keys of `toolrl bench` that it measures. Optional: nothing in `npm test` needs it.

    pip install torch                           # CPU wheel
    python3 scripts/bench-torch.py --model 64x2x2 --threads 2 [--runs 5]
"""
import argparse
import json
import math
import statistics
import time

import torch
import torch.nn as nn
import torch.nn.functional as F


class Block(nn.Module):
    def __init__(self, C, H):
        super().__init__()
        self.H = H
        self.ln_1, self.ln_2 = nn.LayerNorm(C), nn.LayerNorm(C)
        self.c_attn, self.c_proj = nn.Linear(C, 3 * C), nn.Linear(C, C)
        self.c_fc, self.mlp_proj = nn.Linear(C, 4 * C), nn.Linear(4 * C, C)

    def forward(self, x, cache=None):
        B, T, C = x.shape
        q, k, v = self.c_attn(self.ln_1(x)).split(C, dim=2)
        heads = lambda t: t.view(B, T, self.H, C // self.H).transpose(1, 2)  # [B, H, T, hd]
        q, k, v = heads(q), heads(k), heads(v)
        if cache is None:  # whole sequences, causal
            y = F.scaled_dot_product_attention(q, k, v, is_causal=True)
        else:  # append to the cache; new tokens see every cached slot and the earlier new ones
            if cache.get('k') is not None:
                k, v = torch.cat([cache['k'], k], 2), torch.cat([cache['v'], v], 2)
            cache['k'], cache['v'] = k, v
            S = k.shape[2]
            mask = torch.ones(T, S, dtype=torch.bool).tril(S - T)
            y = F.scaled_dot_product_attention(q, k, v, attn_mask=mask)
        x = x + self.c_proj(y.transpose(1, 2).reshape(B, T, C))
        return x + self.mlp_proj(F.gelu(self.c_fc(self.ln_2(x)), approximate='tanh'))


class GPT(nn.Module):
    def __init__(self, V, C, L, H, block_size):
        super().__init__()
        self.wte, self.wpe = nn.Embedding(V, C), nn.Embedding(block_size, C)
        self.h = nn.ModuleList(Block(C, H) for _ in range(L))
        self.ln_f = nn.LayerNorm(C)
        self.lm_head = nn.Linear(C, V, bias=False)

    def forward(self, ids, caches=None, start=0):
        T = ids.shape[1]
        x = self.wte(ids) + self.wpe(torch.arange(start, start + T))
        for i, blk in enumerate(self.h):
            x = blk(x, None if caches is None else caches[i])
        return self.lm_head(self.ln_f(x))


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument('--model', default='64x2x2', help='DxLxH, as `toolrl bench --model`')
    ap.add_argument('--vocab', type=int, default=1235)
    ap.add_argument('--threads', type=int, default=2)
    ap.add_argument('--runs', type=int, default=3)
    a = ap.parse_args()
    torch.set_num_threads(a.threads)
    torch.manual_seed(0)
    C, L, H = (int(x) for x in a.model.split('x'))
    m = GPT(a.vocab, C, L, H, 1024)
    n_params = sum(p.numel() for p in m.parameters())

    # ---- training: B16 x T256, forward + backward + AdamW ----
    B, T = 16, 256
    ids = torch.randint(0, a.vocab, (B, T))
    tgt = torch.randint(0, a.vocab, (B, T))
    opt = torch.optim.AdamW(m.parameters(), lr=1e-4, weight_decay=0.01)
    step_ms = []
    for i in range(1 + a.runs):
        t0 = time.perf_counter()
        loss = F.cross_entropy(m(ids).view(-1, a.vocab), tgt.view(-1))
        opt.zero_grad(set_to_none=True)
        loss.backward()
        torch.nn.utils.clip_grad_norm_(m.parameters(), 1.0)
        opt.step()
        loss.item()
        if i > 0:
            step_ms.append((time.perf_counter() - t0) * 1000)
    ms = statistics.median(step_ms)

    # ---- sampling: batch 64, prefill 100, 100 one-token steps ----
    SB, P, D = 64, 100, 100
    decode = []
    with torch.no_grad():
        for r in range(1 + a.runs):
            caches = [{} for _ in range(L)]
            logits = m(torch.randint(0, a.vocab, (SB, P)), caches, 0)[:, -1]
            nxt = torch.multinomial(F.softmax(logits, -1), 1)
            t0 = time.perf_counter()
            for s in range(D):
                logits = m(nxt, caches, P + s)[:, -1]
                nxt = torch.multinomial(F.softmax(logits, -1), 1)
            if r > 0:
                decode.append(time.perf_counter() - t0)
    dec = statistics.median(decode)
    print(json.dumps({
        'backend': f'pytorch {torch.__version__} cpu, {a.threads} threads',
        'train_tokens_per_s': round(B * T / ms * 1000),
        'sample_tokens_per_s': round(SB * D / dec),
        'train_ms_per_step': round(ms),
        'model': {'vocabSize': a.vocab, 'nLayer': L, 'nHead': H, 'nEmbd': C, 'numParams': n_params},
        'runs': a.runs,
    }, indent=2))


if __name__ == '__main__':
    main()
