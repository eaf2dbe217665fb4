/** Listeners by task id, plus '*' for every task; a listener's failure is its own. */
export class EventHub<E extends { readonly taskId: string }> {
  private readonly listeners = new Map<string, Set<(event: E) => void>>();

  subscribe(taskId: string, listener: (event: E) => void): () => void {
    let set = this.listeners.get(taskId);
    if (!set) this.listeners.set(taskId, (set = new Set()));
    set.add(listener);
    return () => {
      set.delete(listener);
      if (set.size === 0 && this.listeners.get(taskId) === set) this.listeners.delete(taskId);
    };
  }

  emit(event: E): void {
    for (const key of [event.taskId, '*']) {
      for (const listener of this.listeners.get(key) ?? []) {
        try {
          listener(event);
        } catch {
          // A subscriber's failure is its own.
        }
      }
    }
  }
}
