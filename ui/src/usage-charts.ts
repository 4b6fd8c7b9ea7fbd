/** Stacked bar charts of usage per bucket, one dataset per model or per key (chart.js). */
import { BarController, BarElement, CategoryScale, Chart, Legend, LinearScale, Tooltip } from 'chart.js';
import type { Series, SeriesEntry } from './dashboard-data.js';
import { bucketLabel, formatInt, formatUsd } from './format.js';

Chart.register(BarController, BarElement, CategoryScale, LinearScale, Legend, Tooltip);
Chart.defaults.font.family = 'system-ui, -apple-system, "Segoe UI", Roboto, sans-serif';
Chart.defaults.color = '#667085';

export type Metric = 'total_tokens' | 'requests' | 'cost_usd';
export type Dimension = 'by_model' | 'by_key';

const palette = ['#2f5bea', '#17a398', '#f59f00', '#e8590c', '#ae3ec9', '#1c7ed6', '#d6336c', '#5c940d', '#495057'];

/** The value axis, stacked from zero; its ticks depend on the metric. */
const yAxis = { type: 'linear', stacked: true, beginAtZero: true, grid: { color: '#eef0f3' } } as const;

export interface ChartDataset {
  label: string;
  data: number[];
}

/** Turns the series into one dataset per group, the biggest first. */
export function datasetsFor(series: Series, dimension: Dimension, metric: Metric, labelFor: (group: string | null) => string): ChartDataset[] {
  const totals = new Map<string | null, number>();
  for (const bucket of series.buckets) for (const entry of bucket[dimension]) totals.set(entry.group, (totals.get(entry.group) ?? 0) + entry[metric]);
  const groups = [...totals.entries()].sort((a, b) => b[1] - a[1]).map(([group]) => group);
  return groups.map((group) => ({
    label: labelFor(group),
    data: series.buckets.map((bucket) => bucket[dimension].find((entry: SeriesEntry) => entry.group === group)?.[metric] ?? 0),
  }));
}

export function createUsageChart(canvas: HTMLCanvasElement): Chart<'bar'> {
  return new Chart(canvas, {
    type: 'bar',
    data: { labels: [], datasets: [] },
    options: {
      responsive: true,
      maintainAspectRatio: false,
      animation: { duration: 250 },
      interaction: { mode: 'index', intersect: false },
      scales: {
        x: { stacked: true, grid: { display: false } },
        y: { ...yAxis, ticks: { precision: 0 } },
      },
      plugins: {
        legend: { position: 'bottom', labels: { boxWidth: 12, boxHeight: 12 } },
        tooltip: { callbacks: { label: (item) => `${item.dataset.label}: ${formatInt(item.parsed.y)}` } },
      },
    },
  });
}

export function updateUsageChart(chart: Chart<'bar'>, series: Series, datasets: ChartDataset[], metric: Metric): void {
  // Dollars in the tooltips and on the axis; counts as whole numbers.
  const format = metric === 'cost_usd' ? formatUsd : formatInt;
  const options = chart.options;
  if (options.plugins?.tooltip?.callbacks) options.plugins.tooltip.callbacks.label = (item) => `${item.dataset.label}: ${format(item.parsed.y)}`;
  options.scales = {
    ...options.scales,
    y: { ...yAxis, ticks: metric === 'cost_usd' ? { callback: (value) => formatUsd(Number(value)) } : { precision: 0 } },
  };
  chart.data.labels = series.buckets.map((bucket) => bucketLabel(bucket.start, series.bucket));
  chart.data.datasets = datasets.map((dataset, index) => ({
    ...dataset,
    backgroundColor: palette[index % palette.length],
    borderRadius: 3,
    maxBarThickness: 36,
  }));
  chart.update();
}
