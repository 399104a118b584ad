import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { repoRoot } from '@svc/test-kit';

const folder = join(repoRoot(), 'docs/decisions');

/** A decision's title: its first heading without the number (`# 12. Title` or `# 0012: Title`). */
function titleOf(file: string): string {
  const heading = readFileSync(join(folder, file), 'utf8').split('\n')[0] ?? '';
  return heading.replace(/^#\s*(\d+[.:]|\d{4}:)\s*/, '').trim();
}

/** The index's rows: `| [0012](0012-....md) | Title |`, as file and title. */
function indexRows(): Map<string, string> {
  const rows = new Map<string, string>();
  for (const line of readFileSync(join(folder, 'README.md'), 'utf8').split('\n')) {
    const match = /^\| \[(\d{4})\]\(([^)]+)\) \| (.*) \|$/.exec(line);
    if (match !== null) rows.set(match[2] as string, (match[3] as string).trim());
  }
  return rows;
}

describe('docs/decisions/README.md, the index of the design decisions', () => {
  const files = readdirSync(folder).filter((f) => /^\d{4}-.+\.md$/.test(f)).sort();

  it('lists every decision file once, with the title of its first heading, in number order', () => {
    const rows = indexRows();
    expect([...rows.keys()]).toEqual(files);
    for (const file of files) expect([file, rows.get(file)]).toEqual([file, titleOf(file)]);
  });

  it('each decision file starts with a numbered heading matching its file name', () => {
    for (const file of files) {
      const heading = readFileSync(join(folder, file), 'utf8').split('\n')[0] ?? '';
      const number = Number(/^#\s*(\d+)/.exec(heading)?.[1]);
      expect([file, number]).toEqual([file, Number(file.slice(0, 4))]);
    }
  });
});
