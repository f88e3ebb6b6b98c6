// One colour per meaning, for every chart of the lab.
//
// The notebooks ask the reader to compare charts ("p({") falls here as it did in notebook 02"), so a colour must mean
// the same thing everywhere: each probed token, each structural state, each learning rate and each method family has
// its colour here and nowhere else. Series with no meaning of their own (a branch and its parent, levels) take the
// figure's next free colour from PALETTE.

import { defaultGRPOConfig } from '../../train/grpo/config';

/**
 * The fallback palette, in order: ten well-separated hues (the Tableau 10 order), then two darker ones. Every fixed
 * colour below is one of these.
 */
export const PALETTE = ['#1f77b4', '#ff7f0e', '#2ca02c', '#d62728', '#9467bd', '#8c564b', '#e377c2', '#7f7f7f',
  '#bcbd22', '#17becf', '#393b79', '#637939'];

const [BLUE, ORANGE, GREEN, RED, PURPLE, BROWN, PINK, GREY, OLIVE, CYAN] = PALETTE;
const NAVY = PALETTE[10];
const DARK_OLIVE = PALETTE[11];

/**
 * The tokens the probe reads after `<|im_start|>assistant\n<tool_call>\n` (docs/design.md A.5): the healthy `{"`
 * green, the paper's collapse token `<|im_end|>` red, a repeated `<tool_call>` purple, the runner-up in our
 * collapses `</tool_call>` brown, any other token grey.
 */
export const TOKEN_COLOURS = {
  jsonOpen: GREEN, imEnd: RED, toolCall: PURPLE, toolCallClose: BROWN, other: GREY,
} as const;

/** The paper's four structural states of a message (docs/design.md A.5), healthy green to collapsed red. */
export const STATE_COLOURS = {
  healthyCall: GREEN, healthyResponse: BLUE, pollution: ORANGE, fullCollapse: RED,
} as const;

/** Run-level quantities drawn beside the probe or the states. */
export const QUANTITY_COLOURS = { valAccuracy: '#222222', reward: CYAN } as const;

/**
 * Learning rates of the sweeps, cool to hot as the rate grows: the main rate 3e-4 blue, the collapse rate 1e-3
 * orange, 3e-3 red. Rates not listed take the next free colour.
 */
const LR_COLOURS: [number, string][] = [[1e-4, NAVY], [3e-4, BLUE], [1e-3, ORANGE], [3e-3, RED], [1e-2, PURPLE]];

/**
 * Method families: a config's name without its `-lr<rate>` suffix and without a variant suffix listed in
 * VARIANTS (those keep the family's colour and change the dash). Vanilla GRPO is grey: the reference every
 * signal is compared with.
 */
const FAMILY_COLOURS: Record<string, string> = {
  'vanilla-rl': GREY, 'ops': BLUE, 'hbg': GREEN, 'sync-sft': PURPLE, 'ets': ORANGE, 'prs': PINK, 'guard': BROWN,
  'fcl-sft': OLIVE, 'fcl-sft-rl': DARK_OLIVE, 'ace-sft': CYAN, 'ace-sft-rl': NAVY, 'base': '#222222',
};
/** Variants drawn as their family, dashed (ops-luffy: OPS with LUFFY's shaping; ets-difflr: ETS, its own SFT rate). */
const VARIANTS = ['-luffy', '-difflr', '-lowlr', '-8x', '-5x', '-wide'];

/** The colour of a probe field (pJsonOpen, pImEnd, pToolCall, pTopOther) or a gradient-split field, if it has one. */
export function fieldColour(field: string): string | undefined {
  if (/JsonOpen$/.test(field)) return TOKEN_COLOURS.jsonOpen;
  if (/ImEnd$/.test(field)) return TOKEN_COLOURS.imEnd;
  if (/ToolCallClose$/.test(field)) return TOKEN_COLOURS.toolCallClose;
  if (/ToolCall$/.test(field)) return TOKEN_COLOURS.toolCall;
  if (field === 'pTopOther') return TOKEN_COLOURS.other;
  if (field in STATE_COLOURS) return STATE_COLOURS[field as keyof typeof STATE_COLOURS];
  if (field in QUANTITY_COLOURS) return QUANTITY_COLOURS[field as keyof typeof QUANTITY_COLOURS];
  return undefined;
}

/** The colour of a learning rate, if it has one (compared at 2 significant digits: 0.001 and 1e-3 are one rate). */
export function lrColour(lr: number): string | undefined {
  return LR_COLOURS.find(([r]) => Math.abs(r - lr) <= r * 0.01)?.[1];
}

/** `vanilla-rl-lr1e-3` -> { family: 'vanilla-rl', variant: '', lr: 0.001 }; `ops-luffy` -> ops, -luffy, no rate. */
export function parseConfigName(name: string): { family: string; variant: string; lr?: number } {
  const m = /^(.*?)-lr(\d+(?:\.\d+)?e-?\d+)$/.exec(name);
  const stem = m ? m[1] : name;
  const lr = m ? Number(m[2]) : undefined;
  if (stem in FAMILY_COLOURS) return { family: stem, variant: '', lr };
  const variant = VARIANTS.find((v) => stem.endsWith(v)) ?? '';
  return { family: variant ? stem.slice(0, -variant.length) : stem, variant, lr };
}

/** A series' colour and dash. */
export interface SeriesStyle { color: string; dash: string }

/**
 * Styles for the configs drawn in one figure, in order. When every config is one family at several rates (an lr
 * sweep), each gets its rate's colour; otherwise each its family's colour, and configs that share a colour (a
 * variant, or one family at two rates beside other families) are told apart by dash. Unknown families take the
 * figure's next free colour.
 */
export function configStyles(names: readonly string[]): SeriesStyle[] {
  const parsed = names.map(parseConfigName);
  const oneFamily = new Set(parsed.map((p) => p.family)).size === 1 && names.length > 1;
  // in an lr sweep a config without a rate suffix runs at the main rate (the GRPO config's default)
  const fixed = parsed.map((p) => (oneFamily ? lrColour(p.lr ?? defaultGRPOConfig.lr) : FAMILY_COLOURS[p.family]));
  return withFallbacks(fixed);
}

/** Styles for an lr sweep whose series are named by their rate only. */
export function lrStyles(lrs: readonly number[]): SeriesStyle[] {
  return withFallbacks(lrs.map(lrColour));
}

const DASHES = ['solid', 'dash', 'dot', 'dashdot'];

/**
 * Fill the gaps (undefined) with PALETTE colours that no fixed series of the figure uses, in PALETTE order; a colour
 * that two series share gets a new dash for each repeat, so no two series of a figure look alike.
 */
export function withFallbacks(colours: readonly (string | undefined)[]): SeriesStyle[] {
  const used = new Set(colours.filter((c): c is string => c !== undefined));
  const spare = PALETTE.filter((c) => !used.has(c));
  let next = 0;
  const seen = new Map<string, number>();
  return colours.map((c) => {
    const color = c ?? (spare.length ? spare[next++ % spare.length] : PALETTE[next++ % PALETTE.length]);
    const repeat = seen.get(color) ?? 0;
    seen.set(color, repeat + 1);
    return { color, dash: DASHES[repeat % DASHES.length] };
  });
}
