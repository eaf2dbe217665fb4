import type { JSX } from 'preact';
import { useEffect, useState } from 'preact/hooks';
import type { Api } from './api.ts';
import { ErrorBox } from './error-box.tsx';

/** Image artifacts shown on the task's page, by extension (the type the blob is given, whatever the server said). */
const IMAGE_TYPES: Readonly<Record<string, string>> = {
  svg: 'image/svg+xml',
  png: 'image/png',
  jpg: 'image/jpeg',
  jpeg: 'image/jpeg',
  gif: 'image/gif',
};
/** Larger images are only offered as downloads. */
const MAX_SHOWN_BYTES = 5 * 1024 * 1024;

/** The image type an artifact is shown as, or null when it is not shown inline. */
export function shownImageType(name: string, size: number): string | null {
  if (size > MAX_SHOWN_BYTES) return null;
  const ext = /\.([A-Za-z0-9]+)$/.exec(name)?.[1]?.toLowerCase();
  return ext === undefined ? null : (IMAGE_TYPES[ext] ?? null);
}

/**
 * An image artifact inline. The bytes are fetched with the key (an <img> pointing at the API could not send it)
 * and shown from a blob URL through <img>, never inserted as markup: an SVG shown as an image runs no script and
 * loads nothing else, and the console's CSP allows images from blob: only.
 */
export function ArtifactImage(props: { api: Api; taskId: string; name: string; type: string }): JSX.Element {
  const { api, taskId, name, type } = props;
  const [url, setUrl] = useState<string | null>(null);
  const [error, setError] = useState<unknown>(null);
  useEffect(() => {
    let live = true;
    let made: string | null = null;
    api
      .artifact(taskId, name)
      .then(async (blob) => {
        if (!live) return;
        made = URL.createObjectURL(new Blob([await blob.arrayBuffer()], { type }));
        setUrl(made);
      })
      .catch((err: unknown) => {
        if (live) setError(err);
      });
    return () => {
      live = false;
      if (made !== null) URL.revokeObjectURL(made);
    };
  }, [api, taskId, name, type]);
  if (error !== null) return <ErrorBox error={error} />;
  if (url === null) return <p class="muted">Loading {name}...</p>;
  return (
    <figure class="artifact-image">
      <img src={url} alt={name} data-testid="artifact-image" data-name={name} />
      <figcaption class="muted">{name}</figcaption>
    </figure>
  );
}
