/**
 * our_numbers drawn from the sandbox's sequence ahead of need, so that a create knows its charges'
 * numbers (their barcodes and BR Codes are built from them) before its one statement, and that statement
 * draws as many again for the next create. Every number comes from the one sequence, so each still names
 * one charge sandbox-wide; numbers held when the process stops are skipped, as a number is skipped when
 * a race for an Idempotency-Key loses. Numbers are handed out smallest first.
 */
export class OurNumberPool {
  private numbers: number[] = [];

  /** Numbers held: what a create may take without drawing first. */
  get size(): number {
    return this.numbers.length;
  }

  /** Takes `count` numbers, smallest first; throws when fewer are held (draw first). */
  take(count: number): number[] {
    if (count > this.numbers.length)
      throw new RangeError(`${count} our_numbers asked for, ${this.numbers.length} held`);
    return this.numbers.splice(0, count);
  }

  /** Numbers the sequence gave: kept in order, whatever order concurrent draws came back in. */
  add(values: readonly number[]): void {
    if (values.length === 0) return;
    this.numbers = [...this.numbers, ...values].sort((a, b) => a - b);
  }
}
