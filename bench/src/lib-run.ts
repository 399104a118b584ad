/** What a benchmark starts and stops again (test-kit's processes and stacks). */
export interface Stoppable {
  stop(): Promise<void>;
}

/**
 * Runs a benchmark's `main` with the list it adds what it starts to: whatever main's outcome,
 * they are stopped, last first. An error is printed and ends the process with status 1.
 */
export function runBench(main: (started: Stoppable[]) => Promise<void>): void {
  const started: Stoppable[] = [];
  const run = async (): Promise<void> => {
    try {
      await main(started);
    } finally {
      for (const p of started.reverse()) await p.stop();
    }
  };
  run().catch((error: unknown) => {
    console.error(error);
    process.exit(1);
  });
}
