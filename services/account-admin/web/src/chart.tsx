import { BarController, BarElement, CategoryScale, Chart, Legend, LinearScale, Tooltip } from 'chart.js';
import { useEffect, useRef } from 'react';
import type { ReactNode } from 'react';
import { usd } from './format';

Chart.register(BarController, BarElement, CategoryScale, LinearScale, Tooltip, Legend);

/** Distinct colours with enough contrast on white (each series also named in the legend and table). */
const PALETTE = ['#2563eb', '#d97706', '#059669', '#db2777', '#7c3aed', '#0891b2', '#65a30d', '#dc2626', '#4b5563'];

export interface Series {
  label: string;
  values: number[];
}

/** A bar chart of USD amounts; several series are stacked. The canvas has a text summary for screen readers. */
export function BarChart({ labels, series, summary, stacked = true }: { labels: string[]; series: Series[]; summary: string; stacked?: boolean }): ReactNode {
  const canvas = useRef<HTMLCanvasElement>(null);
  useEffect(() => {
    const element = canvas.current;
    if (element === null) return;
    const chart = new Chart(element, {
      type: 'bar',
      data: {
        labels,
        datasets: series.map((s, i) => ({ label: s.label, data: s.values, backgroundColor: PALETTE[i % PALETTE.length], borderWidth: 0, maxBarThickness: 56 })),
      },
      options: {
        responsive: true,
        maintainAspectRatio: false,
        animation: false,
        scales: {
          x: { stacked, ticks: { maxRotation: 0, autoSkip: true, autoSkipPadding: 8 }, grid: { display: false } },
          y: { stacked, beginAtZero: true, ticks: { callback: (value) => usd(Number(value), { precise: true }) } },
        },
        plugins: {
          legend: { display: series.length > 1, position: 'bottom' },
          tooltip: { callbacks: { label: (item) => `${item.dataset.label ?? ''}: ${usd(Number(item.raw), { precise: true })}` } },
        },
      },
    });
    return () => chart.destroy();
  }, [labels, series, stacked]);
  return (
    <div className="chart">
      <canvas ref={canvas} role="img" aria-label={summary} />
    </div>
  );
}
