import { useEffect, useState } from 'preact/hooks';

/** The hash route: `#/tasks`, `#/tasks/<id>`, `#/approvals`, `#/submit`, `#/dashboard`, split into its parts. */
export function useRoute(): string[] {
  const read = (): string[] =>
    window.location.hash
      .replace(/^#\/?/, '')
      .split('/')
      .filter((p) => p !== '')
      .map((p) => {
        try {
          return decodeURIComponent(p);
        } catch {
          return p; // a hand-typed `%` that is not an escape
        }
      });
  const [route, setRoute] = useState(read);
  useEffect(() => {
    const on = (): void => setRoute(read());
    window.addEventListener('hashchange', on);
    return () => window.removeEventListener('hashchange', on);
  }, []);
  return route;
}

export const go = (path: string): void => {
  window.location.hash = `#/${path}`;
};

export const taskHref = (id: string): string => `#/tasks/${encodeURIComponent(id)}`;
