/**
 * The GPT's hyper-parameters, with defaults sized for a 2-core CPU (docs/design.md B, D).
 *
 * The model is deliberately tiny: the study is about the *format* of tool calls collapsing under RL, which a
 * small model trained on a closed, templated vocabulary reproduces; what matters is that rollouts and training
 * steps are fast enough to run hundreds of GRPO steps on wasm.
 */

export interface GPTConfig {
  /** Number of token ids; set by the tokenizer (lib/format), never defaulted. */
  vocabSize: number;
  /**
   * Longest sequence (number of learned positional embeddings). Default 1024: long_context evaluation
   * (docs/design.md A.1) needs long sequences; training only pays for the actual padded length, so a large table
   * costs parameters but no compute.
   */
  blockSize: number;
  /** Transformer blocks. Default 2: measured fast enough on wasm (docs/design.md D "small model"). */
  nLayer: number;
  /** Attention heads. Default 2 (head size 32 at d64). */
  nHead: number;
  /** Residual stream width. Default 64 (docs/design.md D "small model": d64, 2 layers). */
  nEmbd: number;
  /** Std of the normal weight init. Default 0.02, as in GPT-2 (residual projections get 0.02/sqrt(2*nLayer)). */
  initStd: number;
}

/** The default configuration for a vocabulary of `vocabSize` tokens. */
export function defaultGPTConfig(vocabSize: number, overrides: Partial<GPTConfig> = {}): GPTConfig {
  const cfg: GPTConfig = {
    vocabSize,
    blockSize: 1024,
    nLayer: 2,
    nHead: 2,
    nEmbd: 64,
    initStd: 0.02,
    ...overrides,
  };
  validateGPTConfig(cfg);
  return cfg;
}

function checkInt(name: string, v: unknown, min: number): void {
  if (typeof v !== 'number' || !Number.isInteger(v) || v < min) {
    throw new Error(`GPTConfig.${name} must be an integer >= ${min}, got ${JSON.stringify(v)}`);
  }
}

/** Throws an Error naming the offending field and value when `cfg` is not a usable configuration. */
export function validateGPTConfig(cfg: GPTConfig): void {
  if (cfg == null ||
    typeof cfg !== 'object') throw new Error(`GPTConfig must be an object, got ${JSON.stringify(cfg)}`);
  checkInt('vocabSize', cfg.vocabSize, 2);
  checkInt('blockSize', cfg.blockSize, 1);
  checkInt('nLayer', cfg.nLayer, 1);
  checkInt('nHead', cfg.nHead, 1);
  checkInt('nEmbd', cfg.nEmbd, 1);
  if (cfg.nEmbd % cfg.nHead !== 0) {
    throw new Error(`GPTConfig.nEmbd (${cfg.nEmbd}) must be divisible by GPTConfig.nHead (${cfg.nHead})`);
  }
  if (typeof cfg.initStd !== 'number' || !(cfg.initStd > 0) || !Number.isFinite(cfg.initStd)) {
    throw new Error(`GPTConfig.initStd must be a positive finite number, got ${JSON.stringify(cfg.initStd)}`);
  }
}
