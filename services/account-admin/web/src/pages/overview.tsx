import { useMemo } from 'react';
import type { ReactNode } from 'react';
import { api, qs } from '../api';
import type { Credits, DailySpend, Usage } from '../api';
import { BarChart } from '../chart';
import type { Series } from '../chart';
import { Empty, ErrorNote, Loading, useLoad } from '../components';
import { dayRange, daysBefore, usd, utcDay } from '../format';
import { Link } from '../router';

/** Below this balance (the smallest purchase) the overview warns. */
export const LOW_BALANCE_USD = 5;

export function OverviewPage(): ReactNode {
  const today = new Date();
  const to = utcDay(today);
  const from = utcDay(daysBefore(today, 29));
  const monthStart = `${to.slice(0, 8)}01`;
  const credits = useLoad(() => api<Credits>('GET', '/credits'), []);
  const month = useLoad(() => api<Usage>('GET', `/usage${qs({ from: monthStart, to, group_by: 'day' })}`), [monthStart, to]);
  const daily = useLoad(() => api<DailySpend>('GET', `/usage/daily-by-model${qs({ from, to })}`), [from, to]);

  const chart = useMemo(() => {
    if (daily.data === null) return null;
    const days = dayRange(daily.data.from, daily.data.to);
    const models = [...new Set(daily.data.data.map((r) => r.model))].sort();
    const series: Series[] = models.map((model) => ({
      label: model,
      values: days.map((day) => daily.data?.data.filter((r) => r.date === day && r.model === model).reduce((sum, r) => sum + r.cost_usd, 0) ?? 0),
    }));
    const total = daily.data.data.reduce((sum, r) => sum + r.cost_usd, 0);
    return { labels: days.map((d) => d.slice(5)), series, total, models };
  }, [daily.data]);

  return (
    <>
      {credits.data !== null && credits.data.balance_usd < LOW_BALANCE_USD && (
        <div className="note warn banner" role="alert">
          <p><strong>Your balance is low ({usd(credits.data.balance_usd)}).</strong> Searches stop when it runs out. <Link to="/credits">Buy credits</Link></p>
        </div>
      )}
      <div className="tiles">
        <div className="tile">
          <h2>Balance</h2>
          {credits.loading && credits.data === null ? <Loading what="balance" /> : credits.error !== null ? <ErrorNote error={credits.error} onRetry={credits.reload} /> : (
            <>
              <p className="big" data-testid="balance">{usd(credits.data?.balance_usd)}</p>
              <p className="muted small">{usd(credits.data?.reserved_usd)} reserved by searches in progress</p>
            </>
          )}
        </div>
        <div className="tile">
          <h2>Spend this month</h2>
          {month.loading && month.data === null ? <Loading what="spend" /> : month.error !== null ? <ErrorNote error={month.error} onRetry={month.reload} /> : (
            <>
              <p className="big" data-testid="month-spend">{usd(month.data?.total.cost_usd, { precise: true })}</p>
              <p className="muted small">{month.data?.total.searches ?? 0} searches since {monthStart} (UTC)</p>
            </>
          )}
        </div>
      </div>
      <section className="panel" aria-labelledby="daily-title">
        <h2 id="daily-title">Spend per day, last 30 days</h2>
        {daily.loading && daily.data === null ? <Loading what="spend per day" /> : daily.error !== null ? <ErrorNote error={daily.error} onRetry={daily.reload} /> : chart === null || chart.series.length === 0 ? (
          <Empty><p>No searches in the last 30 days. Create an <Link to="/keys">API key</Link> and make a search to see your spend here.</p></Empty>
        ) : (
          <>
            <BarChart
              labels={chart.labels}
              series={chart.series}
              summary={`Spend per day from ${from} to ${to}, stacked by model: ${usd(chart.total, { precise: true })} in total across ${chart.models.join(', ')}.`}
            />
            <p className="muted small" data-testid="chart-models">Models: {chart.models.join(', ')} · total {usd(chart.total, { precise: true })}</p>
          </>
        )}
      </section>
    </>
  );
}
