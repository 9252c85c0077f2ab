import { runTransfers } from '/work/wt/i9b/bench/support/transfer-run.js';
const scenarios = [
  { label: 'none', faults: undefined },
  { label: '10% HTTP 500', faults: { http500Rate: 0.1 } },
  { label: 'dead endpoint of two', faults: { deadPrimary: true } },
];
for (let run = 0; run < 2; run++) {
  for (const s of scenarios) {
    const r = await runTransfers({ deposits: 100, drive: 'timers', pollIntervalMs: 1000, timing: 'production', budgetMs: 120_000, signal: new AbortController().signal, ...(s.faults ? { faults: s.faults } : {}) });
    console.log(JSON.stringify({ label: s.label, cleanedUpS: r.cleanedUpMs / 1000, settledS: r.settledMs / 1000, counters: r.counters, problems: r.problems }));
  }
}
