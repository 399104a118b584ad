import { spawn } from 'node:child_process';
import type { ChildProcess } from 'node:child_process';
import { waitFor } from './wait';

export interface StartProcessOptions {
  name: string;
  /** Path of the JavaScript entry point, run with the current node. */
  script: string;
  args?: string[];
  env: Record<string, string>;
  /** Polled with GET until it answers 200. */
  readyUrl?: string;
  readyTimeoutMs?: number;
}

export interface RunningProcess {
  readonly name: string;
  readonly pid: number;
  /** Everything the process wrote to stdout and stderr so far. */
  logs(): string;
  /** Sends the signal to this process only and waits for it to exit. */
  stop(signal?: NodeJS.Signals): Promise<void>;
  readonly child: ChildProcess;
}

/** How much of a process's output is shown when it exits on its own. */
const UNEXPECTED_EXIT_TAIL_CHARS = 8_000;

/**
 * Starts a service as a separate process with exactly the given environment (plus PATH),
 * captures its output, and waits until its readiness URL answers.
 */
export async function startProcess(options: StartProcessOptions): Promise<RunningProcess> {
  const child = spawn(process.execPath, [options.script, ...(options.args ?? [])], {
    env: { PATH: process.env.PATH ?? '', ...options.env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  const chunks: string[] = [];
  child.stdout?.on('data', (data: Buffer) => chunks.push(data.toString('utf8')));
  child.stderr?.on('data', (data: Buffer) => chunks.push(data.toString('utf8')));
  let exited = false;
  let stopping = false;
  const exitPromise = new Promise<void>((resolve) => {
    child.once('exit', (code, signal) => {
      exited = true;
      // A service that exits on its own mid-test (an exit code, not a signal: tests kill
      // processes on purpose with signals) says so, with its last output, so a CI log names
      // the process and its error instead of only the ECONNREFUSED that follows.
      if (!stopping && code !== null) {
        const output = chunks.join('');
        process.stderr.write(`\n${options.name} (pid ${child.pid ?? '?'}) exited on its own: code ${String(code)}, signal ${String(signal)}\n`
          + `--- last output of ${options.name} ---\n${output.slice(-UNEXPECTED_EXIT_TAIL_CHARS)}\n`);
      }
      resolve();
    });
  });
  if (child.pid === undefined) throw new Error(`${options.name} did not start`);
  const running: RunningProcess = {
    name: options.name,
    pid: child.pid,
    child,
    logs: () => chunks.join(''),
    async stop(signal: NodeJS.Signals = 'SIGTERM') {
      if (exited) return;
      stopping = true;
      child.kill(signal);
      const timer = setTimeout(() => {
        if (!exited) child.kill('SIGKILL');
      }, 10_000);
      await exitPromise;
      clearTimeout(timer);
    },
  };
  if (options.readyUrl !== undefined) {
    const readyUrl = options.readyUrl;
    try {
      await waitFor(
        `${options.name} at ${readyUrl}`,
        async () => {
          if (exited) throw new Error(`${options.name} exited:\n${running.logs()}`);
          const response = await fetch(readyUrl).catch(() => undefined);
          return response?.status === 200 ? true : undefined;
        },
        { timeoutMs: options.readyTimeoutMs ?? 30_000, intervalMs: 100 },
      );
    } catch (error) {
      await running.stop('SIGKILL');
      throw new Error(`${(error as Error).message}\n--- ${options.name} output ---\n${running.logs()}`, { cause: error });
    }
  }
  return running;
}
