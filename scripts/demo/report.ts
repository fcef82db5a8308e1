/** What a step hands on, and the facts printed on its line. */
export interface StepResult<T> {
  value: T;
  facts: string;
}

/** A step that threw: the demo exits non-zero naming it. */
export class StepFailure extends Error {
  constructor(
    readonly step: number,
    readonly title: string,
    readonly reason: string,
  ) {
    super(`step ${step} (${title}) failed: ${reason}`);
  }
}

const TITLE_WIDTH = 34;

/** Runs the steps in order, one printed line each: number, title, time taken, key facts. */
export class Reporter {
  private count = 0;
  private readonly startedAt = Date.now();

  constructor(private readonly print: (line: string) => void) {}

  async step<T>(title: string, run: () => Promise<StepResult<T>>): Promise<T> {
    const n = ++this.count;
    const start = performance.now();
    try {
      const { value, facts } = await run();
      this.print(`${String(n).padStart(2)}. ${title.padEnd(TITLE_WIDTH)} ${elapsed(start)}  ${facts}`);
      return value;
    } catch (err) {
      const reason = err instanceof Error ? err.message : String(err);
      this.print(`${String(n).padStart(2)}. ${title.padEnd(TITLE_WIDTH)} ${elapsed(start)}  FAILED`);
      throw new StepFailure(n, title, reason);
    }
  }

  get steps(): number {
    return this.count;
  }

  get totalMs(): number {
    return Date.now() - this.startedAt;
  }
}

function elapsed(start: number): string {
  return `${Math.round(performance.now() - start)} ms`.padStart(8);
}
