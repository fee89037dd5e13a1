import { FetchBudget } from '../../../../lambda/payment/fetch-budget';

const ABANDON_AFTER_MS = 2_500;

describe('FetchBudget', () => {
  let now: number;
  let budget: FetchBudget;

  beforeEach(() => {
    now = 1_000_000;
    budget = new FetchBudget({ now: () => now });
  });

  it('lets every fetch start at once while nothing has failed (a cold environment reads each shard it needs)', () => {
    const waits: number[] = [];
    for (let shard = 0; shard < 64; shard++) {
      waits.push(budget.waitMs());
      budget.start(ABANDON_AFTER_MS).settled(true);
    }

    expect(waits.every((wait) => wait === 0)).toBe(true);
  });

  it('spaces starts 500 ms apart across all shards once the last fetch to end failed, until one succeeds', () => {
    // Arrange: a fetch fails.
    budget.start(ABANDON_AFTER_MS).settled(false);

    // Act / Assert: another shard's first fetch starts (nothing was spaced yet); the next must wait 500 ms.
    expect(budget.waitMs()).toBe(0);
    budget.start(ABANDON_AFTER_MS).settled(false);
    now += 100;
    expect(budget.waitMs()).toBe(400);
    now += 400;
    expect(budget.waitMs()).toBe(0);
    budget.start(ABANDON_AFTER_MS).settled(true);

    // A success ends the suspicion: starts are free again.
    expect(budget.waitMs()).toBe(0);
    budget.start(ABANDON_AFTER_MS).settled(true);
    expect(budget.waitMs()).toBe(0);
  });

  it('suspects a fault when a fetch has gone unanswered past 250 ms, and stops once its cache abandons it', () => {
    const hanging = budget.start(ABANDON_AFTER_MS);
    now += 250;
    expect(budget.waitMs()).toBe(0);
    budget.start(ABANDON_AFTER_MS).settled(true);
    now += 1;
    // Overdue: this start is spaced, and the one after it waits.
    budget.start(ABANDON_AFTER_MS).settled(true);
    expect(budget.waitMs()).toBe(500);

    now += ABANDON_AFTER_MS;
    expect(budget.waitMs()).toBe(0);
    hanging.settled(true);
  });

  it('ignores a second report of the same fetch', () => {
    const ticket = budget.start(ABANDON_AFTER_MS);
    ticket.settled(true);
    budget.start(ABANDON_AFTER_MS).settled(true);
    ticket.settled(false);

    expect(budget.waitMs()).toBe(0);
  });

  it('allows at most 2 spaced starts in any second under a flood while every fetch fails', () => {
    const starts: number[] = [];
    budget.start(ABANDON_AFTER_MS).settled(false);
    for (let step = 0; step < 10_000; step++) {
      now += 7;
      if (budget.waitMs() === 0) {
        starts.push(now);
        budget.start(ABANDON_AFTER_MS).settled(false);
      }
    }

    const mostInOneSecond = Math.max(
      ...starts.map((start) => starts.filter((other) => other >= start && other < start + 1_000).length),
    );
    expect(starts.length).toBeGreaterThan(100);
    expect(mostInOneSecond).toBe(2);
  });
});
