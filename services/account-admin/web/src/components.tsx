import { useCallback, useEffect, useId, useRef, useState } from 'react';
import type { FormEvent, ReactNode } from 'react';
import { ApiError } from './api';

/** Loads once (and again on reload()); keeps the last error to show the API's message. */
export function useLoad<T>(load: () => Promise<T>, deps: readonly unknown[]): { data: T | null; error: ApiError | null; loading: boolean; reload: () => void } {
  const [state, setState] = useState<{ data: T | null; error: ApiError | null; loading: boolean }>({ data: null, error: null, loading: true });
  const [tick, setTick] = useState(0);
  useEffect(() => {
    let live = true;
    setState((s) => ({ ...s, loading: true }));
    load().then(
      (data) => { if (live) setState({ data, error: null, loading: false }); },
      (error: unknown) => { if (live) setState({ data: null, error: asApiError(error), loading: false }); },
    );
    return () => { live = false; };
  }, [...deps, tick]);
  const reload = useCallback(() => setTick((t) => t + 1), []);
  return { ...state, reload };
}

/**
 * While `waiting` (back from Stripe, whose webhook lands a moment later), calls `reload` once a
 * second, at most 30 times. Returns how many times it has (30: still waiting, taking long).
 */
export function usePollWhile(waiting: boolean, reload: () => void): number {
  const [polls, setPolls] = useState(0);
  useEffect(() => {
    if (!waiting || polls >= 30) return;
    const timer = window.setTimeout(() => { setPolls((n) => n + 1); reload(); }, 1000);
    return () => window.clearTimeout(timer);
  }, [waiting, polls, reload]);
  return polls;
}

export function asApiError(error: unknown): ApiError {
  if (error instanceof ApiError) return error;
  return new ApiError(0, 'client', error instanceof Error ? error.message : String(error), null);
}

export function Loading({ what }: { what: string }): ReactNode {
  return <p className="state" role="status" aria-live="polite"><span className="spinner" aria-hidden="true" />Loading {what}…</p>;
}

export function ErrorNote({ error, onRetry }: { error: ApiError; onRetry?: () => void }): ReactNode {
  return (
    <div className="note error" role="alert">
      <p><strong>{error.status === 0 ? 'Something went wrong' : `Error ${error.status}`}</strong> ({error.code}): {error.message}</p>
      {error.requestId !== null && <p className="muted small">Request id: <code>{error.requestId}</code></p>}
      {onRetry !== undefined && <button type="button" className="secondary" onClick={onRetry}>Try again</button>}
    </div>
  );
}

export function Empty({ children }: { children: ReactNode }): ReactNode {
  return <div className="state empty">{children}</div>;
}

/** A modal dialog (native <dialog>: focus moves in, Escape closes, focus returns). */
export function Dialog({ title, open, onClose, children }: { title: string; open: boolean; onClose: () => void; children: ReactNode }): ReactNode {
  const ref = useRef<HTMLDialogElement>(null);
  const titleId = useId();
  useEffect(() => {
    const dialog = ref.current;
    if (dialog === null) return;
    if (open && !dialog.open) {
      dialog.showModal();
      // The form's first field (or the safe choice of a confirmation) rather than the close button.
      dialog.querySelector<HTMLElement>('[data-autofocus]')?.focus();
    }
    if (!open && dialog.open) dialog.close();
  }, [open]);
  return (
    <dialog ref={ref} aria-labelledby={titleId} onClose={onClose} onCancel={onClose}>
      <div className="dialog-head">
        <h2 id={titleId}>{title}</h2>
        <button type="button" className="icon" aria-label="Close" onClick={onClose}>×</button>
      </div>
      {open && children}
    </dialog>
  );
}

export function Switch({ checked, label, onChange, disabled }: { checked: boolean; label: string; onChange: (next: boolean) => void; disabled?: boolean }): ReactNode {
  return (
    <button type="button" role="switch" aria-checked={checked} aria-label={label} className="switch" disabled={disabled} onClick={() => onChange(!checked)}>
      <span className="track" aria-hidden="true"><span className="thumb" /></span>
      <span className="switch-text">{checked ? 'On' : 'Off'}</span>
    </button>
  );
}

export function UsageBar({ used, limit, label }: { used: number; limit: number; label: string }): ReactNode {
  const ratio = limit <= 0 ? 0 : Math.min(1, used / limit);
  const percent = Math.round(ratio * 100);
  return (
    <div className="usagebar">
      <progress max={100} value={percent} aria-label={label} className={ratio >= 0.9 ? 'high' : ''} />
    </div>
  );
}

export function CopyButton({ text, label = 'Copy' }: { text: string; label?: string }): ReactNode {
  const [done, setDone] = useState<'idle' | 'copied' | 'failed'>('idle');
  const copy = (): void => {
    navigator.clipboard.writeText(text).then(() => setDone('copied'), () => setDone('failed'));
  };
  return (
    <>
      <button type="button" onClick={copy}>{label}</button>
      <span role="status" className="small muted copy-status">{done === 'copied' ? 'Copied to the clipboard.' : done === 'failed' ? 'Copy failed: select the text and copy it.' : ''}</span>
    </>
  );
}

/** The secret of a new key: shown once, with a copy button. */
export function SecretOnce({ secret, onDone }: { secret: string; onDone: () => void }): ReactNode {
  const id = useId();
  return (
    <div className="secret-once">
      <p className="note warn">Copy this secret now. It is shown only once and cannot be recovered; if you lose it, create a new key.</p>
      <label htmlFor={id}>Secret</label>
      <textarea id={id} className="mono secret" readOnly rows={2} value={secret} spellCheck={false} onFocus={(e) => e.currentTarget.select()} />
      <div className="actions">
        <CopyButton text={secret} label="Copy secret" />
        <button type="button" className="primary" onClick={onDone}>Done</button>
      </div>
    </div>
  );
}

/** A field with its label and an optional hint. */
export function Field({ label, hint, children, id }: { label: string; hint?: string; children: ReactNode; id: string }): ReactNode {
  return (
    <div className="field">
      <label htmlFor={id}>{label}</label>
      {children}
      {hint !== undefined && <p className="hint" id={`${id}-hint`}>{hint}</p>}
    </div>
  );
}

/**
 * A table in a region the keyboard can focus and scroll sideways (on a narrow screen):
 * `label` names the region, `head` is the header row, `foot` an optional footer row, and the
 * children are the body's rows.
 */
export function RegionTable({ label, className = 'stack', head, foot, children }: {
  label: string;
  className?: string;
  head: ReactNode;
  foot?: ReactNode;
  children: ReactNode;
}): ReactNode {
  return (
    <div className="table-wrap" role="region" aria-label={label} tabIndex={0}>
      <table className={className}>
        <thead>{head}</thead>
        <tbody>{children}</tbody>
        {foot !== undefined && <tfoot>{foot}</tfoot>}
      </table>
    </div>
  );
}

/** A form's Cancel and submit buttons: the submit button says `busyLabel` and is disabled while `busy` (and whenever `disabled`). */
export function FormActions({ onCancel, busy, label, busyLabel = 'Saving…', disabled = false }: {
  onCancel: () => void;
  busy: boolean;
  label: string;
  busyLabel?: string;
  disabled?: boolean;
}): ReactNode {
  return (
    <div className="actions">
      <button type="button" className="secondary" onClick={onCancel}>Cancel</button>
      <button type="submit" className="primary" disabled={busy || disabled}>{busy ? busyLabel : label}</button>
    </div>
  );
}

export interface Submit {
  busy: boolean;
  error: ApiError | null;
  /** Runs `work` (after preventDefault on a form's submit event): busy until it ends, its error shown after. */
  submit: (event: FormEvent | null, work: () => Promise<unknown>, options?: { stayBusy?: boolean }) => void;
  clearError: () => void;
}

/**
 * The submit logic every form shares: busy while the work runs (the button says so and is
 * disabled), the previous error cleared, the new one kept for an ErrorNote. With `stayBusy`
 * a success leaves the button busy (the page is about to change).
 */
export function useSubmit(): Submit {
  const [busy, setBusy] = useState(false);
  const [error, setError] = useState<ApiError | null>(null);
  const submit = (event: FormEvent | null, work: () => Promise<unknown>, options: { stayBusy?: boolean } = {}): void => {
    event?.preventDefault();
    setBusy(true);
    setError(null);
    let running: Promise<unknown>;
    try {
      running = work();
    } catch (e) {
      running = Promise.reject(e);
    }
    running.then(() => { if (options.stayBusy !== true) setBusy(false); }, (e: unknown) => { setBusy(false); setError(asApiError(e)); });
  };
  return { busy, error, submit, clearError: useCallback(() => setError(null), []) };
}

export function ConfirmDialog({ title, message, confirmLabel, open, onCancel, onConfirm }: {
  title: string; message: ReactNode; confirmLabel: string; open: boolean; onCancel: () => void; onConfirm: () => Promise<void>;
}): ReactNode {
  const action = useSubmit();
  const { clearError } = action;
  useEffect(() => { if (open) clearError(); }, [open, clearError]);
  return (
    <Dialog title={title} open={open} onClose={onCancel}>
      <div>{message}</div>
      {action.error !== null && <ErrorNote error={action.error} />}
      <div className="actions">
        <button type="button" className="secondary" onClick={onCancel} data-autofocus="true">Cancel</button>
        <button type="button" className="danger" onClick={() => action.submit(null, onConfirm)} disabled={action.busy}>{action.busy ? 'Working…' : confirmLabel}</button>
      </div>
    </Dialog>
  );
}
