import type { StoreOptions } from './task-store.ts';
import type { WorkspaceFile } from './sandbox.ts';

/** A file a task's program left in its working directory, as listed (the bytes are read apart). */
export interface ArtifactInfo {
  readonly name: string;
  readonly size: number;
  /** Hex SHA-256 of the bytes. */
  readonly sha256: string;
  readonly createdAt: string;
}

/** Where a store keeps tasks' artifacts; a task's last run replaces what earlier runs left. */
export interface ArtifactStore {
  /** Replaces the task's artifacts, fenced by the runner's lease (FENCED when it was lost). */
  putArtifacts(
    taskId: string,
    files: readonly WorkspaceFile[],
    options: StoreOptions & { fencingToken: number; now?: number },
  ): Promise<void>;
  listArtifacts(taskId: string, options?: StoreOptions): Promise<ArtifactInfo[]>;
  /** The bytes, or null when the task has no artifact of that name. */
  readArtifact(taskId: string, name: string, options?: StoreOptions): Promise<Uint8Array | null>;
}

export function isArtifactStore(store: object): store is ArtifactStore {
  return typeof (store as Partial<ArtifactStore>).putArtifacts === 'function';
}
