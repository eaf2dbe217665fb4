import { useState } from 'preact/hooks';

/**
 * One button's (or form's) request at a time: `busy` while it runs, and the error it ended with (cleared at
 * the next run), never thrown.
 */
export function useAction(): {
  busy: boolean;
  error: unknown;
  run: (work: () => Promise<void>) => Promise<void>;
} {
  const [busy, setBusy] = useState(false);
  const [error, setError] = useState<unknown>(null);
  const run = async (work: () => Promise<void>): Promise<void> => {
    setBusy(true);
    setError(null);
    try {
      await work();
    } catch (e) {
      setError(e);
    } finally {
      setBusy(false);
    }
  };
  return { busy, error, run };
}
