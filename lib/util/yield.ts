/**
 * Give the event loop a turn. The training loops await this between steps, so that whatever else the process
 * serves gets to run mid-training: a Jupyter kernel sends the display updates of a live chart or a progress
 * bar (tslab only flushes outputs when the loop is free), a CLI run answers SIGINT. Costs microseconds.
 */
export function yieldToEventLoop(): Promise<void> {
  return new Promise((resolve) => setImmediate(resolve));
}
