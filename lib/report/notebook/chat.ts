// Display-only helpers for the lecture notebooks: chat transcripts and token strips.
//
//   showChatML(text, {title})                 a rendered ChatML string, control tokens highlighted
//   showConversation(messages, {notes})       one block per message (system prompt folded), optional
//                                             note per assistant message (e.g. its structural state)
//   showTokens(tokenizer, text, {title})      the text cut into tokens, each with its id
//
// Like display.ts: rich HTML inside the project's tslab kernel, plain text anywhere else, never a throw.
// Nothing here decides anything about the study; it only lays out what lib/ computed.

import type { Message } from "../../format/types";
import type { Tokenizer } from "../../format/tokenizer";
import { CONTROL_TOKENS, JSON_OPEN } from "../../format/tokens";
import { inTslabKernel as inKernel, showHtml } from "./display";
import { escapeHtml } from "../figures/plotly";


const CSS =
  "<style>" +
  ".toolrl-chat{font-family:ui-monospace,SFMono-Regular,Menlo,monospace;font-size:12.5px;max-width:980px}" +
  ".toolrl-chat .title{font-family:system-ui,sans-serif;font-weight:600;margin:.3em 0}" +
  ".toolrl-chat pre{white-space:pre-wrap;word-break:break-word;margin:0;padding:6px 8px;background:#fafafa;" +
  "border:1px solid #e4e4e4;border-radius:4px;line-height:1.35}" +
  ".toolrl-chat .ctl{color:#b3261e;background:#fdecea;border-radius:3px;padding:0 2px;font-weight:600}" +
  ".toolrl-chat .msg{margin:4px 0;border-left:4px solid #ccc;padding-left:6px}" +
  ".toolrl-chat .msg.system{border-color:#9e9e9e}.toolrl-chat .msg.user{border-color:#1e88e5}" +
  ".toolrl-chat .msg.assistant{border-color:#43a047}" +
  ".toolrl-chat .role{font-family:system-ui,sans-serif;font-size:12px;color:#555;margin-bottom:2px}" +
  ".toolrl-chat .note{display:inline-block;margin-left:8px;padding:0 " +
    "6px;border-radius:8px;background:#eee;font-size:11.5px}" +
  ".toolrl-chat .note.healthyCall,.toolrl-chat .note.healthyResponse{background:#e3f4e4;color:#1b5e20}" +
  ".toolrl-chat .note.pollution{background:#fff4d6;color:#8a5a00}" +
  ".toolrl-chat .note.fullCollapse{background:#fdecea;color:#b3261e}" +
  ".toolrl-chat .tok{display:inline-block;margin:2px 2px;padding:1px 3px;border:1px solid #d0d0d0;border-radius:3px;" +
  "background:#fff;white-space:pre;vertical-align:top;text-align:center}" +
  ".toolrl-chat .tok sub{display:block;color:#888;font-size:10px}" +
  ".toolrl-chat .tok.special{border-color:#b3261e;background:#fdecea}" +
  "</style>";

// One capturing group: split() then alternates plain text (even indices) and tags (odd indices).
const CTL_SPLIT = new RegExp(`(${CONTROL_TOKENS.map((t) => t.replace(/[.*+?^${}()|[\]\\]/g, "\\$&")).join("|")})`);

/** Escape text for HTML and wrap every control tag in a highlight span. */
function highlight(text: string): string {
  return text
    .split(CTL_SPLIT)
    .map((part, i) => (i % 2 === 1 ? `<span class="ctl">${escapeHtml(part)}</span>` : escapeHtml(part)))
    .join("");
}

function titleHtml(title?: string): string {
  return title ? `<div class="title">${escapeHtml(title)}</div>` : "";
}

/** A ChatML (or any) string as a preformatted block, with the control tags highlighted. */
export function showChatML(text: string, opts: { title?: string } = {}): void {
  if (!inKernel()) {
    console.log((opts.title ? `== ${opts.title} ==\n` : "") + text);
    return;
  }
  showHtml(`${CSS}<div class="toolrl-chat">${titleHtml(opts.title)}<pre>${highlight(text)}</pre></div>`);
}

export interface ConversationView {
  title?: string;
  /** One label per ASSISTANT message, in order (e.g. its structural state); shown as a badge. */
  notes?: (string | undefined)[];
  /** Fold the system prompt into a <details> element (default true). */
  foldSystem?: boolean;
}

/** A conversation as one block per message; assistant messages may carry a note (badge). */
export function showConversation(messages: Message[], opts: ConversationView = {}): void {
  const notes = opts.notes ?? [];
  let k = 0;
  const labelled = messages.map((m) => ({ m, note: m.role === "assistant" ? notes[k++] : undefined }));
  if (!inKernel()) {
    const lines = opts.title ? [`== ${opts.title} ==`] : [];
    for (const { m, note } of labelled) lines.push(`[${m.role}${note ? ` | ${note}` : ""}]`, m.content);
    console.log(lines.join("\n"));
    return;
  }
  const blocks = labelled.map(({ m, note }) => {
    const badge = note ? `<span class="note ${escapeHtml(note)}">${escapeHtml(note)}</span>` : "";
    const body = `<pre>${m.content.length ? highlight(m.content) : "<i>(empty message)</i>"}</pre>`;
    if (m.role === "system" && opts.foldSystem !== false) {
      return `<div class="msg system"><details><summary class="role">system (tools and call format; click to ` +
        `open)</summary>${body}</details></div>`;
    }
    return `<div class="msg ${escapeHtml(m.role)}"><div class="role">${escapeHtml(m.role)}${badge}</div>${body}</div>`;
  });
  showHtml(`${CSS}<div class="toolrl-chat">${titleHtml(opts.title)}${blocks.join("")}</div>`);
}

/** `text` cut into tokens by `tokenizer`, each shown with its id (control tokens and `{"` highlighted). */
export function showTokens(tokenizer: Tokenizer, text: string, opts: { title?: string } = {}): void {
  const ids = tokenizer.encode(text);
  const pieces = ids.map((id) => tokenizer.piece(id));
  if (!inKernel()) {
    console.log((opts.title ? `== ${opts.title} ==\n` : "") +
      pieces.map((p, i) => `${JSON.stringify(p)}:${ids[i]}`).join(" "));
    return;
  }
  const special = new Set<string>([...CONTROL_TOKENS, JSON_OPEN]);
  const boxes = pieces.map((p, i) => {
    const shown = p === "\n" ? "\\n" : p;
    return `<span class="tok${special.has(p) ? " special" : ""}">${escapeHtml(shown)}<sub>${ids[i]}</sub></span>`;
  });
  const head = titleHtml(`${opts.title ? opts.title + ": " : ""}${ids.length} tokens for ${text.length} characters`);
  showHtml(`${CSS}<div class="toolrl-chat">${head}<div>${boxes.join("")}</div></div>`);
}
