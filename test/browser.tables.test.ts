// Tables as a notebook draws them, measured in a real browser rather than estimated: every report table of the
// committed stores (both regimes and the pipeline study), as showReportTable's HTML (lib/report/notebook/views.ts),
// in headless Chromium inside a box as wide as the notebook's output area (OUTPUT_WIDTH_PX). No part may need
// its horizontal scroll bar. The split decision rests on a width estimate from the text (rows.ts); the test also
// draws each table whole and prints how far the estimate is from the drawn width.
//
// Skipped when /usr/bin/chromium is absent (Debian: apt-get install -y chromium).

import { test } from "node:test";
import assert from "node:assert/strict";
import * as fs from "node:fs";
import * as path from "node:path";
import { chromium } from "playwright-core";
import { CHROMIUM, CHROMIUM_ARGS } from "../scripts/lab-driver";
import { loadPipelineStore, loadRegimeStores, storeTables } from "../lib/report/docs";
import { reportTableHtml, tableRows } from "../lib/report/notebook/views";
import { OUTPUT_WIDTH_PX, estimateTableWidth, fitColumns, tableHtml } from "../lib/report/render/rows";

const ROOT = path.resolve(__dirname, "..");
const RESULTS = path.join(ROOT, "data", "results");
const skip = fs.existsSync(CHROMIUM) ? false : `${CHROMIUM} not found (apt-get install -y chromium)`;

test("every report table drawn as a notebook draws it fits the output area", { skip, timeout: 120_000 }, async () => {
  const stores = [...loadRegimeStores(RESULTS).map((r) => r.store), loadPipelineStore(RESULTS)];
  const tables = stores.flatMap((s) => storeTables(s).map((t) => ({ name: `${s.preset}/${t.id}`, table: t })));
  assert.ok(tables.length >= 20, `only ${tables.length} tables in the committed stores`);
  const browser = await chromium.launch({ executablePath: CHROMIUM, args: CHROMIUM_ARGS });
  try {
    const page = await browser.newPage({ viewport: { width: 1600, height: 1200 } });
    const fitted = tables.map((t, i) => `<div id="fit-${i}" style="width:${OUTPUT_WIDTH_PX}px">` +
      `${reportTableHtml(t.table)}</div>`);
    // the same tables whole, in a box wide enough never to squeeze them, to compare with the estimate
    const rowsOf = (i: number) => tableRows(fitColumns(tables[i].table));
    const whole = tables.map((_, i) => `<div id="whole-${i}" style="width:20000px">${tableHtml(rowsOf(i))}</div>`);
    await page.setContent(`<!doctype html><html><body>${fitted.join("\n")}${whole.join("\n")}</body></html>`);

    // a string, not a function: the page's DOM types are not in this project's compiler settings
    const measured = (await page.evaluate(`Array.from({ length: ${tables.length} }, (_, i) => ({
      overflow: Array.from(document.querySelectorAll('#fit-' + i + ' div.toolrl-scroll'))
        .map((b) => b.scrollWidth - b.clientWidth),
      parts: document.querySelectorAll('#fit-' + i + ' div.toolrl-scroll').length,
      whole: document.querySelector('#whole-' + i + ' table').getBoundingClientRect().width }))`)) as
      { overflow: number[]; parts: number; whole: number }[];

    const wide = measured.flatMap((m, i) => m.overflow.map((o, p) => ({ name: tables[i].name, part: p + 1, o })))
      .filter((x) => x.o > 1);
    const ratios = measured.flatMap((m, i) => (rowsOf(i).length ? [m.whole / estimateTableWidth(rowsOf(i))] : []))
      .sort((a, b) => a - b);
    const split = measured.filter((m) => m.parts > 1).length;
    console.log(`${tables.length} tables (${split} drawn in parts); drawn width / estimated width over ` +
      `${ratios.length} with rows: min ${ratios[0].toFixed(2)}, median ${ratios[ratios.length >> 1].toFixed(2)}, ` +
      `max ${ratios[ratios.length - 1].toFixed(2)}`);
    assert.deepEqual(wide, [], `parts wider than the ${OUTPUT_WIDTH_PX}-px output area:\n` +
      wide.map((x) => `${x.name} part ${x.part}: ${x.o} px too wide`).join("\n"));
    await page.close();
  } finally {
    await browser.close();
  }
});
