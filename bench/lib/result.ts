import type { BarChart, LineChart } from './svg.js';
import type { Machine } from './machine.js';

export type Cell = string | number | boolean | null;

export interface Column {
  readonly key: string;
  readonly label: string;
  /** Significant digits for numbers (default 3). */
  readonly digits?: number;
}

export interface Table {
  readonly title?: string;
  readonly columns: readonly Column[];
  readonly rows: readonly Record<string, Cell>[];
}

export type Chart =
  | { readonly id: string; readonly kind: 'line'; readonly spec: LineChart }
  | { readonly id: string; readonly kind: 'bar'; readonly spec: BarChart };

/** One goal of the project measured against its target. */
export interface Goal {
  readonly goal: string;
  readonly target: string;
  readonly measured: string;
  /** null: not measured in this run. */
  readonly met: boolean | null;
  /** By how much it is missed and what bounds it, from measurements in the same run. */
  readonly note?: string;
}

export interface ScenarioOutput {
  readonly settings: Readonly<Record<string, unknown>>;
  readonly tables: readonly Table[];
  readonly charts?: readonly Chart[];
  readonly goals?: readonly Goal[];
  readonly notes?: readonly string[];
  /** Raw measurements behind the tables, kept in the results file. */
  readonly raw?: unknown;
}

export interface ScenarioResult extends ScenarioOutput {
  readonly name: string;
  readonly title: string;
  readonly command: string;
  readonly seconds: number;
  readonly error?: string;
}

export interface BenchResults {
  readonly date: string;
  readonly size: string;
  readonly command: string;
  readonly machine: Machine;
  readonly systems: readonly string[];
  readonly seconds: number;
  /** 1/5/15-minute load averages before and after: other work on the machine competes for its cores. */
  readonly loadAverage: { readonly before: readonly number[]; readonly after: readonly number[] };
  /** Scenarios selected but not (yet) run: a partial run's results file lists them. */
  readonly notRun: readonly string[];
  readonly scenarios: readonly ScenarioResult[];
}
