/**
 * The figures a benchmark reports: a value with its unit and, when an issue sets one, a target
 * (`>=` or `<=`) it passes or misses.
 */
export type TargetOp = '>=' | '<=';

export interface Figure {
  /** Which benchmark (e.g. `1. add_rooms 1,000`). */
  benchmark: string;
  metric: string;
  value: number;
  unit: string;
  target?: { op: TargetOp; value: number };
  /** Set when there is a target. */
  pass?: boolean;
  note?: string;
}

export interface BenchOutcome {
  name: string;
  figures: Figure[];
  /** How it was measured: layout, runs, method. */
  notes: string[];
  durationMs: number;
  /** Set when the benchmark could not complete; its figures may be partial. */
  error?: string;
}

export function figure(benchmark: string, metric: string, value: number, unit: string, extra: { target?: { op: TargetOp; value: number }; note?: string } = {}): Figure {
  const f: Figure = { benchmark, metric, value: round(value), unit };
  if (extra.target) {
    f.target = extra.target;
    f.pass = extra.target.op === '>=' ? value >= extra.target.value : value <= extra.target.value;
  }
  if (extra.note) f.note = extra.note;
  return f;
}

function round(v: number): number {
  if (!Number.isFinite(v)) return v;
  const abs = Math.abs(v);
  const digits = abs >= 100 ? 1 : abs >= 1 ? 2 : 5;
  return Number(v.toFixed(digits));
}

function cell(f: Figure): [string, string, string, string] {
  const target = f.target ? `${f.target.op} ${f.target.value} ${f.unit}` : '';
  const verdict = f.pass === undefined ? '' : f.pass ? 'PASS' : 'MISS';
  return [`${f.benchmark}: ${f.metric}`, `${f.value} ${f.unit}`, target, verdict];
}

/** A fixed-width table for the terminal. */
export function textTable(figures: readonly Figure[]): string {
  const rows = [['Figure', 'Value', 'Target', 'Result', 'Note'], ...figures.map((f) => [...cell(f), f.note ?? ''])];
  const widths = [0, 1, 2, 3, 4].map((i) => Math.max(...rows.map((r) => (r[i] ?? '').length)));
  const line = (r: readonly string[]) => r.map((c, i) => c.padEnd(widths[i] ?? 0)).join('  ').trimEnd();
  return [line(rows[0]!), widths.map((w) => '-'.repeat(w)).join('  '), ...rows.slice(1).map(line)].join('\n');
}

/** The same table in Markdown. */
export function markdownTable(figures: readonly Figure[]): string {
  const esc = (s: string) => s.replace(/\|/g, '\\|');
  return [
    '| Figure | Value | Target | Result | Note |',
    '|---|---|---|---|---|',
    ...figures.map((f) => {
      const [a, b, c, d] = cell(f);
      return `| ${esc(a)} | ${esc(b)} | ${esc(c)} | ${d === 'MISS' ? '**MISS**' : d} | ${esc(f.note ?? '')} |`;
    }),
  ].join('\n');
}
